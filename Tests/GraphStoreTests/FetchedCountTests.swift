import ChatFixture
import Foundation
import GraphStore
import Testing

/// `FetchRequest.countsToFetch`: a to-many's size read with its owner's row, so that counting it fires no
/// relationship fault, and stops answering once the context knows more than the count.
@Suite struct FetchedCountTests {
    /// Each chat's member count, read through the relationship fault in a context of its own.
    private func memberCounts(_ store: ChatStore) throws -> [String: Int] {
        let context = store.fixture.context("reference")
        var counts: [String: Int] = [:]
        for chat in try context.fetch(FetchRequest(entityName: "Chat")) {
            counts[chat.value(forKey: "title") as? String ?? "?"] = chat.count(forKey: "members")
        }
        return counts
    }

    private func countedRequest() -> FetchRequest {
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.countsToFetch = ["members"]
        return request
    }

    @Test func aCountComesWithTheRowAndCountingFiresNoFault() throws {
        let store = try ChatStore()
        let expected = try memberCounts(store)
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(countedRequest()) }
        let chats = try #require(results)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, (SELECT COUNT(*) FROM ZCHATMEMBER c0 WHERE c0.ZCHAT = t0.Z_PK) FROM ZCHAT t0 ORDER BY t0.ZTITLE",
        ])
        var counts: [String: Int] = [:]
        let cost = try store.fixture.measure {
            for chat in chats { counts[chat.value(forKey: "title") as? String ?? "?"] = chat.count(forKey: "members") }
        }
        #expect(counts == expected)
        #expect(cost.statements == 0)
        #expect(cost.relationshipFaults == 0)
        // The members themselves are still a fault: reading them is one statement.
        let members = try store.fixture.measure { _ = chats[0].objects(forKey: "members") }
        #expect(members.relationshipFaults == 1)
        #expect(members.statements == 1)
    }

    @Test func aManyToManyIsCountedThroughItsJoinTable() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")])
        let reference = store.fixture.context("reference")
        let expected = try reference.fetch(request).map { $0.count(forKey: "readBy") }
        request.countsToFetch = ["readBy"]
        request.propertiesToFetch = ["text"]
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        #expect(sql.map(\.sql) == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, (SELECT COUNT(*) FROM Z_7READBY c0 JOIN ZUSER c0d ON c0d.Z_PK = c0.Z_9READBY WHERE c0.Z_7READMESSAGES = t0.Z_PK) FROM ZMESSAGE t0 ORDER BY t0.Z_PK",
        ])
        let messages = try #require(results)
        var counts: [Int] = []
        let cost = try store.fixture.measure { counts = messages.map { $0.count(forKey: "readBy") } }
        #expect(counts == expected)
        #expect(counts.allSatisfy { $0 == 1 })
        #expect(cost.statements == 0)
    }

    @Test func laterBatchesCarryTheirCountsToo() throws {
        let store = try ChatStore()
        let expected = try memberCounts(store)
        var plain = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        plain.fetchBatchSize = 3
        var request = countedRequest()
        request.fetchBatchSize = 3
        // The same batched fetch without counts: what its later batches cost, read to the end.
        let baselineContext = store.fixture.context("baseline")
        let baselineChats = try baselineContext.fetch(plain)
        let baseline = try store.fixture.measure { _ = baselineChats.map { $0.value(forKey: "title") } }
        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        let chats = try context.fetch(request)
        var counts: [String: Int] = [:]
        let cost = try store.fixture.measure {
            for chat in chats { counts[chat.value(forKey: "title") as? String ?? "?"] = chat.count(forKey: "members") }
        }
        #expect(counts == expected)
        // Only the batches' own statements (8 chats in batches of 3), no relationship fault.
        #expect(baseline.statements > 0)
        #expect(cost.statements == baseline.statements)
        #expect(cost.relationshipFaults == 0)
    }

    @Test func aMemberAddedInTheContextIsCounted() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = try #require(try context.fetch(countedRequest()).first)
        let before = chat.count(forKey: "members")
        let member = context.insert("ChatMember")
        member.setValue(Date(), forKey: "joinedAt")
        member.setObject(chat, forKey: "chat")
        // The fetched count no longer holds: counting reads the members and adds the new one.
        let cost = try store.fixture.measure { #expect(chat.count(forKey: "members") == before + 1) }
        #expect(cost.relationshipFaults == 1)
        try context.save()
        #expect(chat.count(forKey: "members") == before + 1)
    }

    @Test func aMemberAnotherContextSavedIsCountedAfterTheMerge() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = try #require(try context.fetch(countedRequest()).first)
        let before = chat.count(forKey: "members")
        let other = store.fixture.context("other")
        let inbox = SaveInbox(coordinator: store.coordinator, excluding: context.id)
        let member = other.insert("ChatMember")
        member.setValue(Date(), forKey: "joinedAt")
        member.setObject(try other.existingObject(with: chat.objectID), forKey: "chat")
        try other.save()
        for note in inbox.take() { context.mergeChanges(fromContextDidSave: note) }
        // The merge tells the chat its members changed: the fetched count is forgotten, the members read again.
        let cost = try store.fixture.measure { #expect(chat.count(forKey: "members") == before + 1) }
        #expect(cost.relationshipFaults == 1)
    }

    @Test func aFetchWithoutCountsLeavesCountingToTheFault() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chats = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        let cost = try store.fixture.measure { _ = chats.map { $0.count(forKey: "members") } }
        #expect(cost.relationshipFaults == 8)
    }

    @Test(arguments: ["lastMessage", "title", "nothing"])
    func onlyStoredToManysCanBeCounted(_ name: String) throws {
        let store = try ChatStore()
        var request = countedRequest()
        request.countsToFetch = [name]
        #expect(throws: ContextError.self) { try store.fixture.context().fetch(request) }
    }
}
