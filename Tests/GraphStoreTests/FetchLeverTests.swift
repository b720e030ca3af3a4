import ChatFixture
import Foundation
import GraphStore
import Testing

/// The fetch levers that save statements: a to-many joined into the main statement (`joinsToManyPrefetch`), the
/// count taken by a windowed result's first statement (`countsWithFirstBatch`), and relationship keys read without
/// making objects (`objectIDs(forRelationshipNamed:)`). Each is checked against the same fetch without it.
@Suite struct FetchLeverTests {
    private func titles(_ objects: some Sequence<ManagedObject>) -> [String] {
        objects.map { $0.value(forKey: "title") as? String ?? "?" }
    }

    /// Each object's members of `key`, by ID, read through the relationship.
    private func members(_ objects: some Sequence<ManagedObject>, _ key: String) -> [[ObjectID]] {
        objects.map { $0.objects(forKey: key).map(\.objectID) }
    }

    // MARK: joined to-many

    @Test func aJoinedToManyComesWithTheMainStatement() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        let expectedMembers = members(try reference.fetch(request), "members")
        store.coordinator.rowCache.removeAll()
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender", "members"]
        request.prefetchStrategy = .joined
        request.joinsToManyPrefetch = true
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        let chats = try #require(results)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, p1.Z_PK, p1.Z_OPT, p1.ZTEXT, p1.ZSENTAT, p1.ZKIND, p1.ZISEDITED, p1.ZCHAT, p1.Z2_CHAT, p1.ZSENDER, p1.ZREPLYTO, p1.ZFORWARDEDFROM, p1.ZLASTMESSAGEOF, p1.Z2_LASTMESSAGEOF, p2.Z_PK, p2.Z_OPT, p2.ZNAME, p2.ZHANDLE, p2.ZSTATUSMESSAGE, p2.ZCREATEDAT, p2.ZPROFILE, p3.Z_PK, p3.Z_OPT, p3.ZROLE, p3.ZJOINEDAT, p3.ZLASTREADAT, p3.ZCHAT, p3.Z2_CHAT, p3.ZUSER FROM ZCHAT t0 LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER LEFT JOIN ZCHATMEMBER p3 ON p3.ZCHAT = t0.Z_PK ORDER BY t0.ZTITLE",
        ])
        #expect(chats.count == 8)
        var read: [[ObjectID]] = []
        var senders: [String?] = []
        let reads = try store.fixture.measure {
            read = members(chats, "members")
            senders = chats.map { $0.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name") as? String }
            _ = chats.flatMap { $0.objects(forKey: "members") }.map { $0.value(forKey: "joinedAt") }
        }
        #expect(reads.statements == 0)
        #expect(titles(chats) == expected)
        #expect(read == expectedMembers)
        #expect(senders.allSatisfy { $0 != nil })
    }

    @Test func aJoinedToManyOfAWindowJoinsOnlyTheWindowsRows() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("lastMessageAt", ascending: false), .init("SELF")])
        let reference = store.fixture.context()
        let window = Array(try reference.fetch(request).prefix(3))
        let expected = titles(window)
        let expectedMembers = members(window, "members")
        store.coordinator.rowCache.removeAll()
        request.fetchLimit = 3
        request.relationshipKeyPathsForPrefetching = ["members"]
        request.prefetchStrategy = .joined
        request.joinsToManyPrefetch = true
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        let chats = try #require(results)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, p1.Z_PK, p1.Z_OPT, p1.ZROLE, p1.ZJOINEDAT, p1.ZLASTREADAT, p1.ZCHAT, p1.Z2_CHAT, p1.ZUSER FROM (SELECT t0.* FROM ZCHAT t0 ORDER BY t0.ZLASTMESSAGEAT DESC, t0.Z_PK LIMIT 3) t0 LEFT JOIN ZCHATMEMBER p1 ON p1.ZCHAT = t0.Z_PK ORDER BY t0.ZLASTMESSAGEAT DESC, t0.Z_PK",
        ])
        // Two to four members each: the statement returned more rows than objects.
        #expect(sql[0].rows > 3)
        #expect(titles(chats) == expected)
        var read: [[ObjectID]] = []
        #expect(try store.fixture.measure { read = members(chats, "members") }.statements == 0)
        #expect(read == expectedMembers)
    }

    @Test func aToManyJoinedBehindAToOneFillsEachOwnerOnce() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")])
        let reference = store.fixture.context()
        let expected = try reference.fetch(request).map { $0.object(forKey: "sender")?.objects(forKey: "memberships").map(\.objectID) ?? [] }
        store.coordinator.rowCache.removeAll()
        request.relationshipKeyPathsForPrefetching = ["sender.memberships"]
        request.prefetchStrategy = .joined
        request.joinsToManyPrefetch = true
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        let messages = try #require(results)
        #expect(sql.count == 1)
        #expect(messages.count == expected.count)
        #expect(expected.allSatisfy { !$0.isEmpty })
        var read: [[ObjectID]] = []
        let reads = try store.fixture.measure {
            read = messages.map { $0.object(forKey: "sender")?.objects(forKey: "memberships").map(\.objectID) ?? [] }
        }
        #expect(reads.statements == 0)
        #expect(read == expected)
    }

    @Test func aToManyThatAnotherKeyPathGoesThroughIsNotJoined() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.relationshipKeyPathsForPrefetching = ["members", "members.user"]
        request.prefetchStrategy = .joined
        request.joinsToManyPrefetch = true
        var results: FetchedObjects?
        let sql = try store.statements { results = try store.fixture.context().fetch(request) }
        #expect(sql.count == 3)
        #expect(sql[1].cause == .prefetch(keyPath: "members"))
        #expect(sql[2].cause == .prefetch(keyPath: "members.user"))
        let chats = try #require(results)
        #expect(try store.fixture.measure { _ = chats.map { $0.objects(forKey: "members").map { $0.object(forKey: "user")?.value(forKey: "name") } } }.statements == 0)
    }

    @Test func withoutTheLeverAToManyStaysSeparate() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.relationshipKeyPathsForPrefetching = ["members"]
        request.prefetchStrategy = .joined
        let sql = try store.statements { _ = try store.fixture.context().fetch(request) }
        #expect(sql.count == 2)
        #expect(sql[1].cause == .prefetch(keyPath: "members"))
    }

    // MARK: counting with the first batch

    @Test func aWindowedFirstBatchCanCountInItsOwnStatement() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", predicate: .key("isPinned") == false, sortDescriptors: [.init("title")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        #expect(expected.count == 7)
        store.coordinator.rowCache.removeAll()
        request.fetchBatchSize = 2
        request.countsWithFirstBatch = true
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
        request.prefetchStrategy = .joined
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        let chats = try #require(results)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, p1.Z_OPT, p1.ZTEXT, p1.ZSENTAT, p1.ZKIND, p1.ZISEDITED, p1.ZCHAT, p1.Z2_CHAT, p1.ZSENDER, p1.ZREPLYTO, p1.ZFORWARDEDFROM, p1.ZLASTMESSAGEOF, p1.Z2_LASTMESSAGEOF, p2.Z_OPT, p2.ZNAME, p2.ZHANDLE, p2.ZSTATUSMESSAGE, p2.ZCREATEDAT, p2.ZPROFILE, (SELECT COUNT(*) FROM ZCHAT t0 WHERE t0.ZISPINNED = ?) AS _count FROM (SELECT t0.* FROM ZCHAT t0 WHERE t0.ZISPINNED = ? ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 2) t0 LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER ORDER BY t0.ZTITLE, t0.Z_PK",
        ])
        // The predicate's argument is bound for the count and for the window.
        #expect(sql[0].arguments.count == 2)
        #expect(chats.count == 7)
        #expect(chats.batching?.knownIDs == 2)
        #expect(titles(chats) == expected)
    }

    @Test func aWindowSortedThroughAToOneCarriesThatSortValueAloneUnderAnAlias() throws {
        let store = try ChatStore()
        // Sorted by a value of another table: it rides out of the window as `_s0`; the key that breaks ties is the
        // fetched table's own column and rides under its name, as do the window's other columns.
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("lastMessage.sentAt", ascending: false), .init("SELF")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        #expect(expected.count == 8)
        store.coordinator.rowCache.removeAll()
        request.fetchLimit = 5
        request.relationshipKeyPathsForPrefetching = ["lastMessage"]
        request.prefetchStrategy = .joined
        request.propertiesToFetch = ["title", "lastMessage", "lastMessage.text"]
        let context = store.fixture.context()
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZLASTMESSAGE, p1.Z_OPT, p1.ZTEXT FROM (SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, "
                + "t0.ZLASTMESSAGE, t1.ZSENTAT AS _s0 FROM ZCHAT t0 LEFT JOIN ZMESSAGE t1 ON t0.ZLASTMESSAGE = t1.Z_PK ORDER BY t1.ZSENTAT DESC, t0.Z_PK LIMIT 5) t0 "
                + "LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE ORDER BY t0._s0 DESC, t0.Z_PK",
        ])
        #expect(titles(try #require(results)) == Array(expected.prefix(5)))
    }

    /// A first window whose joins are to-ones is one flat statement when SQLite walks an index in the fetch's order
    /// (the chat list's (isPinned, lastMessageAt) index): nothing to sort, and the plan is looked at, not counted.
    /// With an order no index serves, or a to-many joined (whose rows repeat each chat), the window is chosen
    /// first. All three give the rows an unwindowed fetch gives, in its order.
    @Test func aWindowIsWrittenFlatWhenAnIndexServesItsOrder() throws {
        let store = try ChatStore()
        let listOrder: [FetchRequest.SortDescriptor] = [.init("isPinned", ascending: false), .init("lastMessageAt", ascending: false)]
        func window(_ order: [FetchRequest.SortDescriptor], joining keyPaths: [String], toMany: Bool = false) throws -> (sql: [String], titles: [String], expected: [String]) {
            var request = FetchRequest(entityName: "Chat", sortDescriptors: order + [.init("SELF")])
            let reference = store.fixture.context()
            let expected = titles(try reference.fetch(request))
            store.coordinator.rowCache.removeAll()
            request.fetchLimit = 4
            request.relationshipKeyPathsForPrefetching = keyPaths
            request.prefetchStrategy = .joined
            request.joinsToManyPrefetch = toMany
            let context = store.fixture.context()
            var results: FetchedObjects?
            let sql = try store.statements { results = try context.fetch(request) }
            return (sql.map(\.sql), titles(try #require(results)), Array(expected.prefix(4)))
        }
        let served = try window(listOrder, joining: ["lastMessage"])
        #expect(served.sql.count == 1)
        #expect(served.sql.first?.hasPrefix("SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE,") == true)
        #expect(served.sql.first?.hasSuffix(" FROM ZCHAT t0 LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE "
            + "ORDER BY t0.ZISPINNED DESC, t0.ZLASTMESSAGEAT DESC, t0.Z_PK LIMIT 4") == true)
        #expect(served.titles == served.expected)
        // By title: no index serves it.
        let unserved = try window([.init("title")], joining: ["lastMessage"])
        #expect(unserved.sql.count == 1)
        #expect(unserved.sql.first?.contains(" FROM (SELECT t0.* FROM ZCHAT t0 ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 4) t0 LEFT JOIN ZMESSAGE p1") == true)
        #expect(unserved.titles == unserved.expected)
        // The index serves the order, but members repeat each chat's row: a flat LIMIT would count members.
        let repeated = try window(listOrder, joining: ["members"], toMany: true)
        #expect(repeated.sql.first?.contains(" FROM (SELECT t0.* FROM ZCHAT t0 ORDER BY t0.ZISPINNED DESC, t0.ZLASTMESSAGEAT DESC, t0.Z_PK LIMIT 4) t0 ") == true)
        #expect(repeated.titles == repeated.expected)
    }

    @Test func aCountedFirstBatchThatComesBackShortKeepsItsOwnCount() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", predicate: .key("isPinned") == true)
        request.fetchBatchSize = 5
        request.countsWithFirstBatch = true
        var results: FetchedObjects?
        let sql = try store.statements { results = try store.fixture.context().fetch(request) }
        #expect(sql.count == 1)
        #expect(results?.count == 1)
        // A window past the last row: no row to read the count from, and none to count.
        request.predicate = nil
        request.fetchOffset = 20
        #expect(try store.fixture.context().fetch(request).count == 0)
    }

    // MARK: relationship keys

    @Test func relationshipKeysComeWithoutObjects() throws {
        let store = try ChatStore()
        let reference = store.fixture.context()
        let expected = try reference.fetch(FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")]))
            .map { ($0.object(forKey: "chat")?.objectID, $0.object(forKey: "sender")?.objectID) }
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")])
        request.returnsObjectsAsFaults = false
        let messages = try context.fetch(request)
        let keys = messages.map { ($0.objectIDs(forRelationshipNamed: "chat").first, $0.objectIDs(forRelationshipNamed: "sender").first) }
        #expect(keys.map(\.0) == expected.map(\.0))
        #expect(keys.map(\.1) == expected.map(\.1))
        // No chat or user was made for them.
        #expect(keys.allSatisfy { context.registeredObject(for: $0.0!) == nil && context.registeredObject(for: $0.1!) == nil })
        // The single key of a to-one, without the array: the same keys, read from memory, still no object made.
        let single = store.statements { _ = messages.map { ($0.objectID(forToOneNamed: "chat"), $0.objectID(forToOneNamed: "sender")) } }
        #expect(single.isEmpty)
        #expect(messages.map { $0.objectID(forToOneNamed: "chat") } == expected.map(\.0))
        #expect(messages.map { $0.objectID(forToOneNamed: "sender") } == expected.map(\.1))
        #expect(keys.allSatisfy { context.registeredObject(for: $0.0!) == nil && context.registeredObject(for: $0.1!) == nil })

        let chats = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        let memberIDs = chats.map { $0.objectIDs(forRelationshipNamed: "members") }
        #expect(memberIDs == members(chats, "members"))
        #expect(memberIDs.allSatisfy { $0 == $0.sorted() && !$0.isEmpty })
        // A to-one that points nowhere gives no key.
        let user = context.insert("User")
        #expect(user.objectIDs(forRelationshipNamed: "profile").isEmpty)
        #expect(user.objectID(forToOneNamed: "profile") == nil)
    }
}
