import Foundation
import GraphStore
import Testing

/// A derived copy (`Note.itemName`, `item.name`) is filled by the store's triggers whatever order one save inserts
/// the rows in.
@Suite struct DerivedCopyTests {
    @Test func copiesOfRowsInsertedLaterAreFilled() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let note = context.insert("Note")
        let item = context.insert("Item")
        item.setValue("Groceries", forKey: "name")
        note.setObject(item, forKey: "item")
        try context.save()
        #expect(try fixture.reader().existingObject(with: note.objectID).value(forKey: "itemName") as? String == "Groceries")
        #expect(try StoreIntegrityCheck.run(path: fixture.path).violations.isEmpty)
    }
}
