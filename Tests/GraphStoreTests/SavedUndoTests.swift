import Foundation
import GRDB
import GraphStore
import Testing

/// Undo and redo across a save: the next save writes the reverse, rows come back with their keys, and the store
/// checks clean after every step.
@Suite struct SavedUndoTests {
    /// Every row of every entity and join table, as text, without `Z_OPT` (a version moves when a row is written back).
    static func dump(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%'
                AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE') ORDER BY name
                """)
            var lines: [String] = []
            for table in tables {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2") {
                    let cells = row.columnNames.filter { $0 != "Z_OPT" }.map { "\($0)=\(row[$0] as DatabaseValue)" }
                    lines.append("\(table) " + cells.joined(separator: " "))
                }
            }
            return lines
        }
    }

    private func check(_ path: String) throws {
        let violations = try StoreIntegrityCheck.run(path: path).violations
        #expect(violations.isEmpty, "\(violations)")
    }

    @Test func aSavedCascadeDeleteComesBackWithItsKeysAndGoesAgainOnRedo() throws {
        let store = try ChatStore()
        let path = store.fixture.path
        let original = try Self.dump(path)
        let context = store.fixture.context()
        context.undoLevels = 10
        let chat = try context.existingObject(with: store.chats[2])
        let title = chat.value(forKey: "title") as? String
        let messages = chat.objects(forKey: "messages").count
        #expect(messages > 0)
        context.undoGroup(named: "Delete chat") { context.delete(chat) }
        try context.save()
        let deleted = try Self.dump(path)
        #expect(deleted.count < original.count)
        try check(path)
        #expect(context.canUndo && context.undoActionName == "Delete chat")

        // Undo queues the reverse; the store is unchanged until the next save writes it.
        context.undo()
        #expect(context.hasChanges && context.pendingUndoNames == ["Delete chat"])
        #expect(try Self.dump(path) == deleted)
        #expect(context.canRedo && context.redoActionName == "Delete chat")
        try context.save()
        #expect(try Self.dump(path) == original)
        try check(path)
        // The same object lives again, reading its row (and its derived count) from the store.
        #expect(!chat.isDeleted)
        #expect(chat.value(forKey: "title") as? String == title)
        #expect(chat.value(forKey: "messagesCount") as? Int64 == Int64(messages))
        #expect(chat.objects(forKey: "messages").count == messages)
        #expect(!context.canUndo && context.canRedo)

        // Redo deletes it again, by the same write-back; undo once more brings it back.
        context.redo()
        try context.save()
        #expect(try Self.dump(path) == deleted)
        #expect(chat.isDeleted)
        try check(path)
        context.undo()
        try context.save()
        #expect(try Self.dump(path) == original)
        try check(path)
        #expect(!chat.isDeleted && chat.objects(forKey: "messages").count == messages)
    }

    @Test func savedEditsInsertsAndLinksAreReversed() throws {
        let store = try ChatStore()
        let path = store.fixture.path
        let original = try Self.dump(path)
        let context = store.fixture.context()
        context.undoLevels = 10
        let chat = try context.existingObject(with: store.chats[0])
        let other = try context.existingObject(with: store.chats[1])
        let moved = try #require(other.objects(forKey: "messages").first)
        let reader = try #require(chat.objects(forKey: "messages").first?.object(forKey: "sender"))
        context.undoGroup(named: "Several things") {
            chat.setValue("Renamed", forKey: "title")
            moved.setObject(chat, forKey: "chat")
            moved.add(reader, toKey: "readBy")
            let message = context.insert("Message")
            message.setValue("new", forKey: "text")
            message.setValue(Date(), forKey: "sentAt")
            message.setObject(chat, forKey: "chat")
            message.setObject(reader, forKey: "sender")
        }
        try context.save()
        #expect(try Self.dump(path) != original)
        try check(path)
        context.undo()
        try context.save()
        #expect(try Self.dump(path) == original)
        try check(path)
        #expect(chat.value(forKey: "title") as? String != "Renamed")
        #expect(moved.object(forKey: "chat") === other)
    }

    @Test func eachSaveIsOneStepAndStepsUndoInTurn() throws {
        let store = try ChatStore()
        let path = store.fixture.path
        let context = store.fixture.context()
        context.undoLevels = 10
        var dumps = [try Self.dump(path)]
        for (index, id) in store.chats.prefix(3).enumerated() {
            let chat = try context.existingObject(with: id)
            context.undoGroup(named: "Step \(index)") {
                if index == 1 { context.delete(chat) } else { chat.setValue("Title \(index)", forKey: "title") }
            }
            try context.save()
            dumps.append(try Self.dump(path))
        }
        for index in (0..<3).reversed() {
            #expect(context.undoActionName == "Step \(index)")
            context.undo()
            try context.save()
            #expect(try Self.dump(path) == dumps[index])
            try check(path)
        }
        #expect(!context.canUndo)
        for index in 0..<3 {
            #expect(context.redoActionName == "Step \(index)")
            context.redo()
            try context.save()
            #expect(try Self.dump(path) == dumps[index + 1])
        }
    }

    @Test func oneRowChangedByTwoSavesUndoesTwiceWithoutAFalseConflict() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        context.undoLevels = 10
        let chat = try context.existingObject(with: store.chats[0])
        let title = chat.value(forKey: "title") as? String
        for name in ["First", "Second"] {
            context.undoGroup(named: name) { chat.setValue(name, forKey: "title") }
            try context.save()
        }
        // The first undo writes the row back (a new version); the second still finds the row as it expects it.
        context.undo()
        try context.save()
        #expect(chat.value(forKey: "title") as? String == "First")
        context.undo()
        try context.save()
        #expect(chat.value(forKey: "title") as? String == title)
        context.redo()
        context.redo()
        try context.save()
        #expect(chat.value(forKey: "title") as? String == "Second")
    }

    /// A chat store whose first chat was renamed in an undo group and saved, with the context (ten undo levels)
    /// that did it.
    private static func renamedAndSaved() throws -> (ChatStore, ObjectContext, ManagedObject) {
        let store = try ChatStore()
        let context = store.fixture.context()
        context.undoLevels = 10
        let chat = try context.existingObject(with: store.chats[0])
        context.undoGroup(named: "Rename") { chat.setValue("Renamed", forKey: "title") }
        try context.save()
        return (store, context, chat)
    }

    @Test func redoBeforeTheSaveDropsTheQueuedReverse() throws {
        let (store, context, _) = try Self.renamedAndSaved()
        let saved = try Self.dump(store.fixture.path)
        context.undo()
        context.redo()
        #expect(!context.hasChanges && context.canUndo && context.undoActionName == "Rename")
        let cost = try store.fixture.measure { try context.save() }
        #expect(cost.statements == 0)
        #expect(try Self.dump(store.fixture.path) == saved)
    }

    @Test func aRowChangedSinceBySomeoneElseStopsTheUndoAndNothingIsWritten() throws {
        let (store, context, _) = try Self.renamedAndSaved()
        // Another coordinator (another process) edits the same row.
        let elsewhere = ObjectContext(coordinator: try store.fixture.reopen())
        try elsewhere.existingObject(with: store.chats[0]).setValue("Theirs", forKey: "title")
        try elsewhere.save()
        let before = try Self.dump(store.fixture.path)
        context.undo()
        #expect(throws: ContextError.self) { try context.save() }
        #expect(try Self.dump(store.fixture.path) == before)
    }

    /// Another program leaves the row with an entity number the model does not have: the undo still stops as a
    /// conflict, naming the row under its table's entity, and writes nothing (an unchecked number would stop the
    /// process when the context looked it up).
    @Test func aRowLeftWithAnUnknownEntityNumberIsAConflictNotACrash() throws {
        let (store, context, chat) = try Self.renamedAndSaved()
        let queue = try DatabaseQueue(path: store.fixture.path)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZCHAT SET Z_ENT = 999, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", arguments: [chat.objectID.primaryKey])
        }
        try queue.close()
        let before = try Self.dump(store.fixture.path)
        context.undo()
        #expect(throws: ContextError.self) { try context.save() }
        #expect(try Self.dump(store.fixture.path) == before)
    }

    /// A user deleted (Nullify: their messages lose the sender and the copied name, friendships and memberships go)
    /// comes back, and so do the copies, though the messages are written back before the user's row returns.
    @Test func copiedAttributesAndSelfInverseLinksComeBack() throws {
        let fixture = try GraphFixture(try CheckModel.make())
        var ids: [String: ObjectID] = [:]
        do {
            let context = fixture.context("setup")
            let chat = context.insert("Chat")
            chat.setValue("general", forKey: "title")
            let users = ["ann", "ben"].map { name -> ManagedObject in
                let user = context.insert("User")
                user.setValue(name, forKey: "name")
                chat.add(user, toKey: "members")
                return user
            }
            users[0].add(users[1], toKey: "friends")
            for (text, sender) in [("hello", users[0]), ("hi", users[1]), ("again", users[0])] {
                let message = context.insert("Message")
                message.setValue(text, forKey: "text")
                message.setObject(chat, forKey: "chat")
                message.setObject(sender, forKey: "sender")
            }
            chat.setObject(context.insert("ChatSettings"), forKey: "settings")
            try context.save()
            ids["ann"] = users[0].objectID
        }
        let original = try Self.dump(fixture.path)
        #expect(original.contains { $0.contains("ZSENDERNAME=\"ann\"") })
        let context = fixture.context()
        context.undoLevels = 3
        context.undoGroup(named: "Delete ann") { context.delete(context.object(with: ids["ann"]!)) }
        try context.save()
        #expect(!(try Self.dump(fixture.path)).contains { $0.contains("ZSENDERNAME=\"ann\"") })
        context.undo()
        try context.save()
        #expect(try Self.dump(fixture.path) == original)
        try check(fixture.path)
    }

    @Test func joinTablesOrderedLinksAndOneToOnesComeBack() throws {
        let store = try DeleteRuleTests.Store { context, named in
            let folder = DeleteRuleTests.make(context, "Folder", "folder", &named)
            let tag = DeleteRuleTests.make(context, "Tag", "red", &named)
            let person = DeleteRuleTests.make(context, "Person", "ann", &named)
            person.setObject(DeleteRuleTests.make(context, "Badge", "gold", &named), forKey: "badge")
            for name in ["a", "b"] {
                let item = DeleteRuleTests.make(context, "Item", name, &named)
                item.setObject(folder, forKey: "folder")
                item.add(tag, toKey: "tags")
            }
            named["a"]!.add(named["b"]!, toKey: "related")
            for name in ["n1", "n2", "n3"] { named["a"]!.add(DeleteRuleTests.make(context, "Note", name, &named), toKey: "notes") }
            named["b"]!.setObject(named["n2"], forKey: "pinnedNote")
            DeleteRuleTests.make(context, "Item", "a1", &named).setObject(named["a"], forKey: "parent")
        }
        let path = store.fixture.path
        let original = try Self.dump(path)
        let context = store.fixture.context()
        context.undoLevels = 5
        let folder = try store.object("folder", in: context)
        let badge = try store.object("gold", in: context)
        context.undoGroup(named: "Delete") {
            context.delete(folder)
            context.delete(badge)
        }
        try context.save()
        #expect(context.lastDeletion?.deleted == ["Folder": 1, "Item": 3, "Note": 3, "Badge": 1])
        context.undo()
        try context.save()
        #expect(try Self.dump(path) == original)
        #expect(try store.violations().isEmpty)
        // Reordering an ordered to-many is undone too.
        let item = try store.object("a", in: context)
        let notes = item.objects(forKey: "notes")
        context.undoGroup(named: "Reorder") { item.setObjects(Array(notes.reversed()), forKey: "notes") }
        try context.save()
        #expect(try Self.dump(path) != original)
        context.undo()
        try context.save()
        #expect(try Self.dump(path) == original)
    }
}
