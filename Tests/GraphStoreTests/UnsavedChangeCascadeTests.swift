import Foundation
import GraphStore
import Testing

/// A save's Cascade follows the relationships as unsaved changes left them, not as they are stored: an object moved
/// out is kept, one linked in is taken.
@Suite struct UnsavedChangeCascadeTests {
    @Test func aCascadeFollowsTheRelationshipsAsChanged() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let person = context.insert("Person")
        let badge = context.insert("Badge")
        person.setObject(badge, forKey: "badge")
        let folder = context.insert("Folder")
        let other = context.insert("Folder")
        let item = context.insert("Item")
        item.setObject(folder, forKey: "folder")
        try context.save()
        // A one-to-one let go of, and an item moved to another folder, before their owners are deleted.
        person.setObject(nil, forKey: "badge")
        context.delete(person)
        item.setObject(other, forKey: "folder")
        context.delete(folder)
        try context.save()
        #expect(!badge.isDeleted && !item.isDeleted)
        let reader = try fixture.reader()
        #expect(try reader.fetch("Badge").count == 1)
        #expect(try reader.fetch("Item").count == 1)
    }

    @Test func theStoresCascadeFollowsUnsavedLinks() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let tag = context.insert("Tag")
        let item = context.insert("Item")
        let note = context.insert("Note")
        tag.add(item, toKey: "items")
        try context.save()
        // The store alone knows that deleting the tag deletes the item; only memory knows the note is the item's.
        note.setObject(item, forKey: "item")
        let newNote = context.insert("Note")
        newNote.setObject(item, forKey: "item")
        context.delete(tag)
        try context.save()
        #expect(item.isDeleted && note.isDeleted && newNote.isDeleted)
        let reader = try fixture.reader()
        #expect(try reader.fetch("Item").isEmpty)
        #expect(try reader.fetch("Note").isEmpty)
        #expect(try StoreIntegrityCheck.run(path: fixture.path).violations.isEmpty)
    }

    /// A to-one change kept through `refresh(_:mergeChanges: true)` (which drops the row read) still lets go of the
    /// stored destination: a cascade from it does not take the object.
    @Test func anUnlinkKeptThroughARefreshIsFollowed() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let folder = context.insert("Folder")
        let item = context.insert("Item")
        item.setObject(folder, forKey: "folder")
        try context.save()
        item.setObject(nil, forKey: "folder")
        context.refresh(folder, mergeChanges: false)
        context.refresh(item, mergeChanges: true)
        context.delete(folder)
        try context.save()
        #expect(!item.isDeleted)
        #expect(try fixture.reader().fetch("Item").count == 1)
    }
}
