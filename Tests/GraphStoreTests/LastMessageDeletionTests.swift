import ChatFixture
import Foundation
import GRDB
import GraphStore
import Testing

/// Deleting a chat's last message hands the chat's preview and time back to the newest message left, in memory at
/// once and in the store once saved; undo brings the deleted one back as the last message.
@Suite struct LastMessageDeletionTests {
    /// A small generated store and a coordinator on it.
    static func store() throws -> GeneratedChatStore {
        try GeneratedChatStore(FixtureOptions(seed: 7, users: 30, chats: 8, messages: 200))
    }
}

extension GeneratedChatStore {
    /// The chat with the most messages, and its messages newest first (as stored).
    func busiestChat(in context: ObjectContext) throws -> (Chat, [Message]) {
        let key = try read { db in
            try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZCHAT ORDER BY ZMESSAGESCOUNT DESC, Z_PK LIMIT 1")
        }
        let chats = try context.fetch(FetchRequest(entityName: "Chat"))
        let chat = try #require((0..<chats.count).compactMap { chats[$0] as? Chat }.first { $0.objectID.primaryKey == key })
        let messages = try context.fetch(FetchRequest(
            entityName: "Message", predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
            sortDescriptors: [.init("sentAt", ascending: false), .init("SELF", ascending: false)]))
        return (chat, (0..<messages.count).compactMap { messages[$0] as? Message })
    }

    /// The chat's row as another connection reads it: its last message's key and its last-message time.
    func stored(_ chat: Chat) throws -> (lastMessage: Int64?, lastMessageAt: Double?) {
        try read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT ZLASTMESSAGE, ZLASTMESSAGEAT FROM ZCHAT WHERE Z_PK = ?",
                                                    arguments: [chat.objectID.primaryKey]))
            return (row["ZLASTMESSAGE"], row["ZLASTMESSAGEAT"])
        }
    }
}

extension LastMessageDeletionTests {
    @Test func deletingTheLastMessageFallsBackToThePreviousOneInMemoryAndWhenSaved() throws {
        let store = try Self.store()
        let context = ObjectContext(coordinator: store.coordinator, name: "test")
        context.undoLevels = 10
        let (chat, messages) = try store.busiestChat(in: context)
        try #require(messages.count >= 3)
        let newest = messages[0], previous = messages[1]
        try #require(chat.lastMessage === newest)

        context.undoGroup(named: "Delete message") {
            context.delete(newest)
            context.processPendingChanges()
        }
        #expect(chat.lastMessage === previous)
        #expect(chat.lastMessageAt == previous.sentAt)
        #expect(previous.lastMessageOf === chat)

        try context.save()
        let saved = try store.stored(chat)
        #expect(saved.lastMessage == previous.objectID.primaryKey)
        #expect(saved.lastMessageAt == previous.sentAt.timeIntervalSinceReferenceDate)

        // Two in a row: the second delete (of the new last message) falls back past the first.
        context.delete(previous)
        #expect(chat.lastMessage === messages[2])
        #expect(chat.lastMessageAt == messages[2].sentAt)
        context.rollback()
        #expect(chat.lastMessage === previous)
    }

    @Test func undoingTheDeleteMakesTheMessageTheLastAgain() throws {
        let store = try Self.store()
        let context = ObjectContext(coordinator: store.coordinator, name: "test")
        context.undoLevels = 10
        let (chat, messages) = try store.busiestChat(in: context)
        let newest = try #require(messages.first)
        context.undoGroup(named: "Delete message") { context.delete(newest) }
        #expect(chat.lastMessage !== newest)
        context.undo()
        #expect(chat.lastMessage === newest)
        #expect(chat.lastMessageAt == newest.sentAt)
    }

    @Test func deletingAnOlderMessageLeavesTheLastMessageAlone() throws {
        let store = try Self.store()
        let context = ObjectContext(coordinator: store.coordinator, name: "test")
        let (chat, messages) = try store.busiestChat(in: context)
        try #require(messages.count >= 2)
        let statements = store.coordinator.events.counters.total.statements
        context.delete(messages[1])
        #expect(chat.lastMessage === messages[0])
        #expect(store.coordinator.events.counters.total.statements == statements, "nothing to look up for an older message")
    }

    @Test func deletingAChatsOnlyMessageLeavesItWithNoneAndNoTime() throws {
        let store = try Self.store()
        let context = ObjectContext(coordinator: store.coordinator, name: "test")
        let (chat, messages) = try store.busiestChat(in: context)
        for message in messages { context.delete(message) }
        #expect(chat.lastMessage == nil)
        #expect(chat.lastMessageAt == nil)
        try context.save()
        let saved = try store.stored(chat)
        #expect(saved.lastMessage == nil && saved.lastMessageAt == nil)
    }
}
