import Foundation
import GraphStore
import Testing

/// Deleting an object lets go of its links: objects in memory stop pointing at it, the save writes no key, version
/// or join row for a row it deleted or never made, and a temporary ID finds the object it named.
@Suite struct DeletedObjectLinksTests {
    @Test func aDeletedInsertedObjectKeepsItsIdentity() throws {
        let (_, context) = try GraphFixture.itemGraph()
        let folder = context.insert("Folder")
        let item = context.insert("Item")
        folder.add(item, toKey: "items")
        context.delete(item)
        do {
            // The folder still lists the item (see the next test); the object it hands out is a new fault.
            let members = folder.objects(forKey: "items")
            #expect(members.allSatisfy { $0 === item })
        }
        // That fault is gone now, but its unretained registry entry stays (entries under temporary IDs are never
        // removed): the ID now finds whatever object took the freed memory — a Note, in a debug build on Linux.
        for _ in 0..<100 { _ = context.insert("Note") }
        #expect(context.object(with: item.objectID) === item)
    }

    @Test func insertedThenDeletedObjectsLeaveLoadedToManys() throws {
        let (_, context) = try GraphFixture.itemGraph()
        let folder = context.insert("Folder")
        let item = context.insert("Item")
        folder.add(item, toKey: "items")
        context.delete(item)
        context.processPendingChanges()
        #expect(folder.objectIDs(forRelationshipNamed: "items").isEmpty)
        try context.save()
        #expect(folder.objectIDs(forRelationshipNamed: "items").isEmpty)
    }

    @Test func newObjectsLetGoOfWhatTheSaveDeleted() throws {
        let (_, context) = try GraphFixture.itemGraph()
        let item = context.insert("Item")
        try context.save()
        let folder = context.insert("Folder")
        folder.add(item, toKey: "items")
        #expect(folder.objectIDs(forRelationshipNamed: "items") == [item.objectID])
        context.delete(item)
        try context.save()
        #expect(folder.objectIDs(forRelationshipNamed: "items").isEmpty)
    }

    @Test func linksOfAnInsertedThenDeletedObjectAreNotWritten() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let tag = context.insert("Tag")
        try context.save()
        let item = context.insert("Item")
        tag.add(item, toKey: "items")
        context.delete(item)
        try context.save()
        #expect(try StoreIntegrityCheck.run(path: fixture.path).violations.isEmpty)
        #expect(try fixture.reader().existingObject(with: tag.objectID).objects(forKey: "items").isEmpty)
    }

    @Test func anUnsavedToOneLetsGoOfADeletedObject() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let person = context.insert("Person")
        let badge = context.insert("Badge")
        let item = context.insert("Item")
        let note = context.insert("Note")
        let (owner, other) = (context.insert("Person"), context.insert("Person"))
        let owned = context.insert("Item")
        owned.setObject(owner, forKey: "owner")
        try context.save()
        person.setObject(badge, forKey: "badge")
        item.setObject(note, forKey: "pinnedNote")
        // Away and back: the owner's to-many cancels the removal against the addition, and lists nothing as added.
        _ = owner.objects(forKey: "owned")
        owned.setObject(other, forKey: "owner")
        owned.setObject(owner, forKey: "owner")
        context.delete(badge)
        context.delete(note)
        context.delete(owner)
        try context.save()
        #expect(person.object(forKey: "badge") == nil)
        #expect(item.object(forKey: "pinnedNote") == nil)
        #expect(owned.object(forKey: "owner") == nil)
        let violations = try StoreIntegrityCheck.run(path: fixture.path).violations
        #expect(violations.isEmpty, "\(violations)")
    }

    /// A row two Nullify steps of one delete cleared (an item losing its owner and its pinned note) moved two
    /// versions on, and the save, writing the item's own change after them, reported a conflict with itself.
    @Test func aRowTwoNullifyStepsClearMovesOneVersionOn() throws {
        let fixture = try GraphFixture(try GraphPropertyTests.model())
        let context = fixture.context()
        let (item, owner, note) = (context.insert("Item"), context.insert("Person"), context.insert("Note"))
        item.setObject(owner, forKey: "owner")
        item.setObject(note, forKey: "pinnedNote")
        try context.save()
        item.setValue("renamed", forKey: "name")
        context.delete(owner)
        context.delete(note)
        try context.save()
        let reader = try fixture.reader()
        let stored = try reader.existingObject(with: item.objectID)
        #expect(stored.value(forKey: "name") as? String == "renamed")
        #expect(stored.object(forKey: "owner") == nil && stored.object(forKey: "pinnedNote") == nil)
    }

    /// A fault for the temporary ID of an object a rollback let go of has no row: deleting or changing it writes
    /// nothing.
    @Test func aLetGoTemporaryIDWritesNothing() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let id = context.insert("Item").objectID
        context.rollback()
        let gone = context.object(with: id)
        #expect(gone.faultError != nil && !gone.isInserted)
        gone.setValue("x", forKey: "name")
        context.delete(gone)
        #expect(!context.hasChanges)
        let recorder = SQLRecorder(fixture.coordinator)
        try context.save()
        assertSQL(recorder, [])
    }
}
