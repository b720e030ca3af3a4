import ChatFixture
import Foundation
import GraphStore
import Testing

/// A batched fetch in a context with unsaved deletions stays batched: the store leaves the deleted rows out, and no
/// statement reads more than a batch. Unsaved changes that can move objects (inserts, changes to a key the
/// predicate or the sort reads) still merge in memory. Each result is checked against the same fetch unbatched.
@Suite struct PendingBatchTests {
    typealias ChatStore = FetchRequestTests.ChatStore

    private func titles(_ objects: some Sequence<ManagedObject>) -> [String] {
        objects.map { $0.value(forKey: "title") as? String ?? "?" }
    }

    /// The chats by title whose titles start with a "b" or that are pinned: an OR, so the leaving-out must not
    /// bind to its second half only.
    private func chatRequest(batch: Int) -> FetchRequest {
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.predicate = try? GraphStore.Predicate(format: "title BEGINSWITH[c] %@ OR isPinned == YES", "b")
        request.fetchBatchSize = batch
        return request
    }

    @Test(arguments: [FetchRequest.BatchingMode.windowed, .faithful])
    func deletedObjectsAreLeftOutBatched(mode: FetchRequest.BatchingMode) throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let before = titles(try context.fetch(chatRequest(batch: 0)))
        #expect(before.contains("Boats"), "\(before)")
        let listed = try context.fetch(chatRequest(batch: 0))
        let boats = try #require(listed.first { $0.value(forKey: "title") as? String == "Boats" })
        context.delete(boats)
        context.processPendingChanges()
        var request = chatRequest(batch: 1)
        request.batchingMode = mode
        var result: [String] = []
        let sql = try store.statements { result = titles(try context.fetch(request)) }
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        #expect(!result.contains("Boats"))
        #expect(result.count == before.count - 1)
        #expect(sql.allSatisfy { $0.rows <= 1 || $0.sql.hasPrefix("SELECT COUNT(*)") || $0.sql.contains("t0.Z_PK FROM") },
                "no statement reads more than a batch of rows: \(sql.map(\.sql))")
        // Every statement but the loads of batches by key applies the predicate.
        let selects = sql.filter { !$0.sql.contains("t0.Z_PK IN (") }
        #expect(!selects.isEmpty)
        #expect(selects.allSatisfy { $0.sql.contains("(t0.ZTITLE") && $0.sql.contains(") AND t0.Z_PK NOT IN (?)") },
                "the predicate's OR stays together: \(selects.map(\.sql))")
    }

    @Test func manyDeletedObjectsGoAsOneBoundArray() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = try context.existingObject(with: store.chats[0])
        for number in 0..<80 {
            let message = context.insert("Message")
            message.setValue("extra \(number)", forKey: "text")
            message.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(number)), forKey: "sentAt")
            message.setObject(chat, forKey: "chat")
        }
        try context.save()
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt", ascending: false)])
        let all = try context.fetch(request).map(\.objectID)
        let doomed = all.prefix(70)
        for id in doomed { context.delete(try context.existingObject(with: id)) }
        request.fetchBatchSize = 10
        var result: [ObjectID] = []
        let sql = try store.statements { result = try context.fetch(request).map(\.objectID) }
        #expect(result == Array(all.dropFirst(70)))
        #expect(sql.contains { $0.sql.contains("t0.Z_PK NOT IN (SELECT value FROM json_each(?))") })
        #expect(sql.allSatisfy { $0.arguments.count <= 12 }, "a key list stays one argument")
    }

    @Test func aChangeToAKeyTheSortReadsMergesInMemory() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chats = try context.fetch(chatRequest(batch: 0))
        let boats = try #require(chats.first { $0.value(forKey: "title") as? String == "Boats" })
        boats.setValue("Abacus boats", forKey: "title")
        var result: [String] = []
        let sql = try store.statements { result = titles(try context.fetch(chatRequest(batch: 1))) }
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        // "Abacus boats" no longer begins with a b: the in-memory judgement leaves it out.
        #expect(!result.contains("Abacus boats") && !result.contains("Boats"))
        #expect(!sql.contains { $0.sql.contains("NOT IN") }, "merged in memory, not left out in SQL")
    }

    @Test func aChangeToAnotherKeyStaysBatched() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chats = try context.fetch(chatRequest(batch: 0))
        let boats = try #require(chats.first { $0.value(forKey: "title") as? String == "Boats" })
        boats.setValue(true, forKey: "isMuted")
        let budget = try #require(chats.first { $0.value(forKey: "title") as? String == "Budget" })
        context.delete(budget)
        context.processPendingChanges()
        var result: [String] = []
        let sql = try store.statements { result = titles(try context.fetch(chatRequest(batch: 1))) }
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        #expect(result.contains("Boats") && !result.contains("Budget"))
        #expect(sql.contains { $0.sql.contains("NOT IN") })
    }

    @Test func anInsertMergesInMemory() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = context.insert("GroupChat")
        chat.setValue("Bananas", forKey: "title")
        chat.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "createdAt")
        let result = titles(try context.fetch(chatRequest(batch: 1)))
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        #expect(result.contains("Bananas"))
    }
}
