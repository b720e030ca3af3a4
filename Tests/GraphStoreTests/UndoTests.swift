import Foundation
import GraphStore
import Testing

/// Undo and redo of unsaved changes, in named groups.
@Suite struct UndoTests {
    private func store() throws -> (ChatStore, ObjectContext, [ManagedObject]) {
        let store = try ChatStore()
        let context = store.fixture.context()
        context.undoLevels = 10
        let chats = Array(try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])))
        return (store, context, chats)
    }

    @Test func anEditIsUndoneAndRedone() throws {
        let (_, context, chats) = try store()
        let chat = chats[0]
        #expect(!context.canUndo)
        context.undoGroup(named: "Rename") { chat.setValue("Ferries", forKey: "title") }
        #expect(context.canUndo && context.undoActionName == "Rename")
        context.undo()
        #expect(chat.value(forKey: "title") as? String == "Boats")
        #expect(!context.hasChanges)
        #expect(context.canRedo && context.redoActionName == "Rename")
        context.redo()
        #expect(chat.value(forKey: "title") as? String == "Ferries")
        #expect(context.hasChanges)
        #expect(!context.canRedo)
    }

    @Test func anInsertIsTakenBackAndPutBack() throws {
        let (store, context, _) = try store()
        let chat = context.undoGroup(named: "New chat") { () -> ManagedObject in
            let chat = context.insert("GroupChat")
            chat.setValue("Picnic", forKey: "title")
            chat.setValue(Date(), forKey: "createdAt")
            return chat
        }
        context.undo()
        #expect(chat.isDeleted)
        #expect(context.insertedObjects.isEmpty)
        #expect(!context.hasChanges)
        context.redo()
        #expect(!chat.isDeleted && chat.isInserted)
        try context.save()
        let reader = store.fixture.context()
        #expect(try reader.count(for: FetchRequest(entityName: "Chat", predicate: .key("title") == "Picnic")) == 1)
    }

    @Test func aCascadeDeleteIsOneStep() throws {
        let (store, context, chats) = try store()
        let chat = chats[1]
        let members = chat.objects(forKey: "members")
        context.undoGroup(named: "Delete chat") {
            context.delete(chat)
            context.processPendingChanges()
        }
        #expect(chat.isDeleted && members.allSatisfy(\.isDeleted))
        context.undo()
        #expect(!chat.isDeleted && members.allSatisfy { !$0.isDeleted })
        #expect(!context.hasChanges)
        let before = try store.fixture.measure { try context.save() }
        #expect(before.statements == 0)
        #expect(try store.fixture.context().count(for: FetchRequest(entityName: "Chat")) == 8)
    }

    @Test func relationshipChangesComeBackOnBothSides() throws {
        let (_, context, chats) = try store()
        let (from, to) = (chats[0], chats[1])
        let message = try #require(from.objects(forKey: "messages").first)
        let counts = (from.objects(forKey: "messages").count, to.objects(forKey: "messages").count)
        context.undoGroup(named: "Move message") { message.setObject(to, forKey: "chat") }
        #expect(from.objects(forKey: "messages").count == counts.0 - 1)
        #expect(to.objects(forKey: "messages").count == counts.1 + 1)
        context.undo()
        #expect(message.object(forKey: "chat") === from)
        #expect(from.objects(forKey: "messages").count == counts.0)
        #expect(to.objects(forKey: "messages").count == counts.1)
        #expect(!context.hasChanges)
    }

    @Test func groupsNestImplicitGroupsCloseAndLevelsAreBounded() throws {
        let (_, context, chats) = try store()
        context.undoLevels = 2
        context.beginUndoGroup(named: "Outer")
        chats[0].setValue("One", forKey: "title")
        context.undoGroup(named: "Inner") { chats[1].setValue("Two", forKey: "title") }
        context.endUndoGroup()
        #expect(context.undoActionName == "Outer")
        // Outside any group: an implicit "Edit", closed by the next group.
        chats[2].setValue("Three", forKey: "title")
        #expect(context.undoActionName == "Edit")
        context.undoGroup(named: "Last") { chats[3].setValue("Four", forKey: "title") }
        // Three steps recorded, two kept: "Outer" fell off.
        context.undo()
        context.undo()
        #expect(!context.canUndo)
        #expect(chats[0].value(forKey: "title") as? String == "One")
        #expect(chats[2].value(forKey: "title") as? String != "Three")
        #expect(chats[3].value(forKey: "title") as? String != "Four")
    }

    @Test func aSaveMakesTheUnsavedStepsOneAndRollbackClearsThem() throws {
        let (_, context, chats) = try store()
        context.undoGroup(named: "Rename") { chats[0].setValue("Ferries", forKey: "title") }
        context.undoGroup(named: "Rename more") { chats[1].setValue("Rafts", forKey: "title") }
        context.undo()
        #expect(context.canRedo)
        try context.save()
        // One saved step, named after the latest group kept; the redo step described unsaved changes and is gone.
        #expect(context.canUndo && context.undoActionName == "Rename" && !context.canRedo)
        context.undo()
        #expect(context.pendingUndoNames == ["Rename"])
        context.rollback()
        #expect(!context.canUndo && !context.hasChanges)
        #expect(chats[0].value(forKey: "title") as? String == "Ferries")
    }

    @Test func undoIsOffByDefault() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = try #require(try context.fetch(FetchRequest(entityName: "Chat")).first)
        chat.setValue("Changed", forKey: "title")
        #expect(!context.canUndo)
        context.undo()
        #expect(chat.value(forKey: "title") as? String == "Changed")
    }
}
