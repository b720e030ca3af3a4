import Foundation
import GraphStore
import Testing

/// Undo across saves on the property test's model: a reordering step undoes with the step that made the row, an
/// undone delete brings objects back as saved, and a save left with nothing to write opens no undo step.
@Suite struct UndoAcrossSavesTests {
    /// Saved steps that only rewrote a row's position in an ordered to-many (which leaves its version alone) are
    /// undone together with the step that made the row.
    @Test func stepsThatOnlyReorderARowUndoWithTheStepThatMadeIt() throws {
        let fixture = try GraphFixture(try GraphPropertyTests.model())
        let context = fixture.context()
        context.undoLevels = 10
        let (first, second) = (context.insert("Note"), context.insert("Note"))
        let (item, other) = (context.insert("Item"), context.insert("Item"))
        first.setObject(item, forKey: "item")
        try context.save()
        for owner in [item, other] {
            // Reading the notes first makes the save rewrite the positions of all of them, the first note's too.
            _ = owner.objects(forKey: "notes")
            second.setObject(owner, forKey: "item")
            try context.save()
        }
        for _ in 0..<3 { context.undo() }
        try context.save()
        let reader = try fixture.reader()
        #expect(try reader.fetch("Note").isEmpty && reader.fetch("Item").isEmpty)
    }

    @Test func anUndoneDeleteBringsObjectsBackAsSaved() throws {
        let (_, context) = try GraphFixture.itemGraph()
        context.undoLevels = 10
        let folder = context.insert("Folder")
        folder.setValue("Saved", forKey: "name")
        try context.save()
        context.undoGroup(named: "Rename and delete") {
            folder.setValue("Unsaved", forKey: "name")
            context.delete(folder)
        }
        try context.save()
        context.undo()
        try context.save()
        #expect(!folder.isDeleted)
        #expect(folder.value(forKey: "name") as? String == "Saved")
        #expect(!folder.hasChanges)
    }

    @Test func aSaveLeftWithNothingToWriteOpensNoUndoStep() throws {
        let (_, context) = try GraphFixture.itemGraph()
        context.undoLevels = 10
        let folder = context.insert("Folder")
        try context.save()
        let item = context.undoGroup(named: "Add item") { () -> ManagedObject in
            let item = context.insert("Item")
            folder.add(item, toKey: "items")
            return item
        }
        context.undoGroup(named: "Delete item") { context.delete(item) }
        // The save's pass over deletes lets the folder let go of the item; nothing is left to write.
        try context.save()
        #expect(!context.hasChanges)
        #expect(context.undoActionName == "Delete item")
        context.undo()
        #expect(context.undoActionName == "Add item")
        #expect(folder.objects(forKey: "items") == [item] && !item.isDeleted)
    }
}
