import ChatFixture
import Foundation
import GraphStore
import Testing

/// Fetch requests on a small chat store: the SQL each option produces, what lands in the row cache, prefetch and
/// batch statement counts, and unsaved changes in results.
@Suite struct FetchRequestTests {
    private func titles(_ objects: some Sequence<ManagedObject>) -> [String] {
        objects.map { $0.value(forKey: "title") as? String ?? "?" }
    }

    // MARK: the main statement

    @Test func aPlainFetchSelectsEveryColumnOnceAndFillsTheRowCache() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var chats: FetchedObjects?
        let sql = try store.statements { chats = try context.fetch(FetchRequest(entityName: "Chat")) }
        #expect(sql.count == 1)
        // Every entity of the table is wanted, so no Z_ENT condition and no ORDER BY.
        #expect(sql[0].sql == "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0")
        let results = try #require(chats)
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0.isFault })
        let reads = try store.fixture.measure { _ = titles(results) }
        #expect(reads.statements == 0)
        #expect(reads.cacheHits == 8)
        #expect(reads.cacheMisses == 0)
    }

    @Test func subEntitiesAreNarrowedByEntityNumber() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let group = try #require(store.coordinator.mapping(forEntity: "GroupChat"))
        var groups: FetchedObjects?
        let sql = try store.statements { groups = try context.fetch(FetchRequest(entityName: "GroupChat")) }
        #expect(sql[0].sql == "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZTOPIC, t0.ZLASTMESSAGE, t0.ZOWNER FROM ZCHAT t0 WHERE t0.Z_ENT = ?")
        #expect(sql[0].arguments == [.integer(Int64(group.number))])
        #expect(groups?.count == 4)
        #expect(groups?.allSatisfy { $0.entityName == "GroupChat" } == true)
        var request = FetchRequest(entityName: "Chat")
        request.includesSubentities = false
        // Chat is abstract: without its sub-entities nothing matches.
        #expect(try context.fetch(request).isEmpty)
    }

    @Test func predicatesAndSortsThroughToOnesAreDoneBySQLite() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", predicate: try GraphStore.Predicate(format: "title BEGINSWITH[c] %@ OR title BEGINSWITH %@", "a", "B"),
                                   sortDescriptors: [.init("lastMessage.sentAt", ascending: false)])
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 LEFT JOIN ZMESSAGE t1 ON t0.ZLASTMESSAGE = t1.Z_PK WHERE (GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 0)) ORDER BY t1.ZSENTAT DESC",
        ])
        #expect(sql[0].arguments == [.string("a"), .string("B")])
        // The same order, worked out by hand from the objects.
        let all = try context.fetch(FetchRequest(entityName: "Chat"))
        let expected = all.filter { chat in
            let title = chat.value(forKey: "title") as! String
            return title.lowercased().hasPrefix("a") || title.hasPrefix("B")
        }.sorted {
            ($0.object(forKey: "lastMessage")!.value(forKey: "sentAt") as! Date) > ($1.object(forKey: "lastMessage")!.value(forKey: "sentAt") as! Date)
        }
        #expect(titles(try #require(results)) == titles(expected))
        #expect(titles(expected).sorted() == ["Boats", "Budget", "alpha", "art club"])

        // A sort by an attribute and a limit and offset, written inline as numbers.
        request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        let everything = titles(try context.fetch(request))
        for (limit, offset, suffix) in [(2, 0, " LIMIT 2"), (3, 2, " LIMIT 3 OFFSET 2"), (0, 5, " LIMIT -1 OFFSET 5")] {
            request.fetchLimit = limit
            request.fetchOffset = offset
            var window: FetchedObjects?
            let statements = try store.statements { window = try context.fetch(request) }
            #expect(statements.map(\.sql) == [
                "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 ORDER BY t0.ZTITLE\(suffix)",
            ])
            let expectedWindow = Array(everything.dropFirst(offset).prefix(limit == 0 ? .max : limit))
            #expect(titles(try #require(window)) == expectedWindow)
        }
    }

    @Test func objectsCanComeFilledOrAsBareIDs() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "User")
        request.returnsObjectsAsFaults = false
        let filled = try context.fetch(request)
        #expect(filled.count == 6 && filled.allSatisfy { !$0.isFault })

        store.coordinator.rowCache.removeAll()
        let other = store.fixture.context()
        request = FetchRequest(entityName: "User")
        request.includesPropertyValues = false
        var bare: FetchedObjects?
        let sql = try store.statements { bare = try other.fetch(request) }
        let user = try #require(store.coordinator.mapping(forEntity: "User"))
        #expect(sql.map(\.sql) == ["SELECT 0, t0.Z_PK FROM \(user.table) t0"])
        // Nothing was cached, so each object read costs its own statement.
        let reads = try store.fixture.measure { _ = try #require(bare).map { $0.value(forKey: "name") } }
        #expect(reads.statements == 6)
        #expect(reads.cacheMisses == 6)
    }

    // MARK: result types

    @Test func objectIDsAndCountsReadNoRows() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        var request = FetchRequest(entityName: "Chat", predicate: .key("isPinned") == false, sortDescriptors: [.init("title")])
        var ids: [ObjectID] = []
        var sql = try store.statements { ids = try context.fetchObjectIDs(request) }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 WHERE t0.ZISPINNED = ? ORDER BY t0.ZTITLE",
        ])
        #expect(ids.count == 7)
        #expect(context.registeredObjects.isEmpty)
        #expect(store.coordinator.rowCache.count == 0)

        var count = 0
        sql = try store.statements { count = try context.count(for: request) }
        #expect(count == 7)
        #expect(sql.map(\.sql) == ["SELECT COUNT(*) FROM \(chat.table) t0 WHERE t0.\(chat.attributes.first { $0.name == "isPinned" }!.column) = ?"])
        request.fetchLimit = 3
        request.fetchOffset = 5
        sql = try store.statements { count = try context.count(for: request) }
        #expect(count == 2)
        #expect(sql.map(\.sql) == [
            "SELECT COUNT(*) FROM (SELECT 1 FROM ZCHAT t0 WHERE t0.ZISPINNED = ? LIMIT 3 OFFSET 5)",
        ])
        #expect(context.registeredObjects.isEmpty)
    }

    @Test func dictionariesCarryChosenPropertiesStraightFromTheStore() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.propertiesToFetch = ["title", "membersCount", "lastMessage.text", "lastMessage.sender.name", "lastMessage"]
        var rows: [[String: AttributeValue]] = []
        let sql = try store.statements { rows = try context.fetchDictionaries(request) }
        #expect(sql.count == 1)
        #expect(sql[0].sql.components(separatedBy: "LEFT JOIN").count == 3)
        #expect(rows.count == 8)
        #expect(rows[0]["title"] == .string("Boats"))
        #expect(rows[0]["membersCount"] == .integer(4))
        #expect(rows[0]["lastMessage.text"] == .string("message 4 of chat 2"))
        #expect(rows[0]["lastMessage.sender.name"] == .string("Ana"))
        if case .integer(let key)? = rows[0]["lastMessage"] { #expect(key > 0) } else { Issue.record("no lastMessage key") }
        #expect(context.registeredObjects.isEmpty)
        request.propertiesToFetch = ["members"]
        #expect(throws: ContextError.self) { try context.fetchDictionaries(request) }
    }

    @Test func derivedCountsSortFilterAndRefreshAfterASave() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let request = FetchRequest(entityName: "Chat", predicate: .key("membersCount") >= 4,
                                   sortDescriptors: [.init("membersCount", ascending: false), .init("title")])
        let busy = try context.fetch(request)
        #expect(titles(busy) == ["Boats", "Budget"])
        // Adding a member: the saved row's derived count is read back into the object.
        let boats = busy[0]
        let member = context.insert("ChatMember")
        member.setValue(Date(), forKey: "joinedAt")
        member.setObject(boats, forKey: "chat")
        try context.save()
        #expect(boats.attributeValue(forKey: "membersCount") == .integer(5))
        let fresh = store.fixture.context()
        #expect(titles(try fresh.fetch(request)) == ["Boats", "Budget"])
        #expect(try fresh.fetch(request)[0].attributeValue(forKey: "membersCount") == .integer(5))
    }

    // MARK: prefetching

    @Test func prefetchingRunsOneStatementPerKeyPathLevel() throws {
        let store = try ChatStore()

        // Without prefetching: each chat's last message and its sender is a fault of its own.
        let plain = store.fixture.context()
        let unprefetched = try store.fixture.measure {
            for chat in try plain.fetch(FetchRequest(entityName: "Chat")) {
                _ = chat.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name")
            }
        }
        #expect(unprefetched.statements == 1 + 8 + 6)

        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat")
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender", "members.user", "lastMessage.readBy"]
        var chats: FetchedObjects?
        let sql = try store.statements { chats = try context.fetch(request) }
        // Main, lastMessage, its sender, members, readBy: one each. The members' users need none: every user was
        // read as some last message's sender, and prefetching skips rows already in the row cache.
        #expect(sql.count == 5)
        #expect(sql.map(\.cause) == [
            .fetch(entity: "Chat"), .prefetch(keyPath: "lastMessage"), .prefetch(keyPath: "lastMessage.sender"),
            .prefetch(keyPath: "lastMessage.readBy"), .prefetch(keyPath: "members"),
        ])
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?, ?, ?, ?, ?, ?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZHANDLE, t0.ZSTATUSMESSAGE, t0.ZCREATEDAT, t0.ZPROFILE FROM ZUSER t0 WHERE t0.Z_PK IN (?, ?, ?, ?, ?, ?)",
            "SELECT t1.Z_7READMESSAGES, 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZHANDLE, t0.ZSTATUSMESSAGE, t0.ZCREATEDAT, t0.ZPROFILE FROM Z_7READBY t1 JOIN ZUSER t0 ON t0.Z_PK = t1.Z_9READBY WHERE t1.Z_7READMESSAGES IN (?, ?, ?, ?, ?, ?, ?, ?) ORDER BY t1.Z_7READMESSAGES",
            "SELECT t0.ZCHAT, 0, t0.Z_PK, t0.Z_OPT, t0.ZROLE, t0.ZJOINEDAT, t0.ZLASTREADAT, t0.ZCHAT, t0.Z2_CHAT, t0.ZUSER FROM ZCHATMEMBER t0 WHERE t0.ZCHAT IN (?, ?, ?, ?, ?, ?, ?, ?) ORDER BY t0.ZCHAT",
        ])
        let reads = try store.fixture.measure {
            for chat in try #require(chats) {
                _ = chat.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name")
                _ = chat.objects(forKey: "members").map { $0.object(forKey: "user")?.value(forKey: "name") }
                _ = chat.object(forKey: "lastMessage")?.objects(forKey: "readBy").count
            }
        }
        #expect(reads.statements == 0)
        #expect(reads.relationshipFaults == 0)
        #expect(try #require(chats).map { $0.objects(forKey: "members").count } == [2, 3, 4, 2, 3, 4, 2, 3])

        // A bad key path names itself.
        request.relationshipKeyPathsForPrefetching = ["lastMessage.nothing"]
        #expect(throws: ContextError.invalidFetch("Message: no relationship 'nothing' to prefetch (key path 'lastMessage.nothing')")) {
            try store.fixture.context().fetch(request)
        }
    }

    @Test func prefetchUseCountsTheObjectsNobodyRead() throws {
        for strategy in [FetchRequest.PrefetchStrategy.separateQueries, .joined] {
            let store = try ChatStore()
            store.coordinator.rowCache.removeAll()
            let context = store.fixture.context()
            #expect(!context.tracksPrefetchUse)
            var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("SELF")])
            request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
            request.prefetchStrategy = strategy
            // Off by default: nothing is remembered, so nothing is reported.
            _ = try context.fetch(request)
            #expect(context.takePrefetchUse().isEmpty)

            let tracked = store.fixture.context()
            tracked.tracksPrefetchUse = true
            let chats = try tracked.fetch(request)
            // Three chats' last messages read; their senders, and the other five messages, not.
            for chat in chats.prefix(3) { _ = chat.object(forKey: "lastMessage")?.value(forKey: "text") }
            let use = tracked.takePrefetchUse()
            let messages = try #require(use.first { $0.keyPath == "lastMessage" }, "\(strategy): \(use)")
            #expect(messages.entity == "Message")
            #expect(messages.prefetched == 8)
            #expect(messages.untouched == 5, "\(strategy)")
            let senders = try #require(use.first { $0.keyPath == "lastMessage.sender" })
            #expect(senders.entity == "User")
            #expect(senders.untouched == senders.prefetched && senders.prefetched > 0)
            // Reported once: the next call starts afresh, and a later read does not count as prefetched again.
            _ = chats[4].object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name")
            #expect(tracked.takePrefetchUse().isEmpty)
            // Objects already filled before a prefetch are not the prefetch's to report.
            let again = try tracked.fetch(request)
            #expect(tracked.takePrefetchUse().isEmpty, "\(strategy)")
            withExtendedLifetime((chats, again)) {}
        }
    }

    @Test func joinedPrefetchReadsToOnePathsInTheMainStatement() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender", "members"]
        request.prefetchStrategy = .joined
        var chats: FetchedObjects?
        let sql = try store.statements { chats = try context.fetch(request) }
        #expect(sql.count == 2)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, p1.Z_OPT, p1.ZTEXT, p1.ZSENTAT, p1.ZKIND, p1.ZISEDITED, p1.ZCHAT, p1.Z2_CHAT, p1.ZSENDER, p1.ZREPLYTO, p1.ZFORWARDEDFROM, p1.ZLASTMESSAGEOF, p1.Z2_LASTMESSAGEOF, p2.Z_OPT, p2.ZNAME, p2.ZHANDLE, p2.ZSTATUSMESSAGE, p2.ZCREATEDAT, p2.ZPROFILE FROM ZCHAT t0 LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER ORDER BY t0.ZTITLE",
            "SELECT t0.ZCHAT, 0, t0.Z_PK, t0.Z_OPT, t0.ZROLE, t0.ZJOINEDAT, t0.ZLASTREADAT, t0.ZCHAT, t0.Z2_CHAT, t0.ZUSER FROM ZCHATMEMBER t0 WHERE t0.ZCHAT IN (?, ?, ?, ?, ?, ?, ?, ?) ORDER BY t0.ZCHAT",
        ])
        #expect(sql[1].cause == .prefetch(keyPath: "members"))
        func senderName(_ chat: ManagedObject) -> String? {
            chat.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name") as? String
        }
        var names: [String?] = []
        let reads = try store.fixture.measure { names = try #require(chats).map { senderName($0) } }
        #expect(reads.statements == 0)
        let plain = store.fixture.context()
        #expect(names == (try plain.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])).map { senderName($0) }))
        #expect(names.allSatisfy { $0 != nil })
    }

    @Test func aJoinedPrefetchOfAWindowJoinsOnlyTheWindowsRows() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("lastMessageAt", ascending: false), .init("SELF")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request)).prefix(3)
        store.coordinator.rowCache.removeAll()
        request.fetchLimit = 3
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
        request.prefetchStrategy = .joined
        let context = store.fixture.context()
        var chats: FetchedObjects?
        let sql = try store.statements { chats = try context.fetch(request) }
        #expect(sql.count == 1)
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER, p1.Z_OPT, p1.ZTEXT, p1.ZSENTAT, p1.ZKIND, p1.ZISEDITED, p1.ZCHAT, p1.Z2_CHAT, p1.ZSENDER, p1.ZREPLYTO, p1.ZFORWARDEDFROM, p1.ZLASTMESSAGEOF, p1.Z2_LASTMESSAGEOF, p2.Z_OPT, p2.ZNAME, p2.ZHANDLE, p2.ZSTATUSMESSAGE, p2.ZCREATEDAT, p2.ZPROFILE FROM (SELECT t0.* FROM ZCHAT t0 ORDER BY t0.ZLASTMESSAGEAT DESC, t0.Z_PK LIMIT 3) t0 LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER ORDER BY t0.ZLASTMESSAGEAT DESC, t0.Z_PK",
        ])
        let results = try #require(chats)
        #expect(titles(results) == Array(expected))
        let reads = try store.fixture.measure { _ = results.map { $0.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name") } }
        #expect(reads.statements == 0)
    }

    // MARK: batches

    @Test func faithfulBatchesReadAllIDsFirstThenOneStatementPerBatch() throws {
        let store = try ChatStore()
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        store.coordinator.rowCache.removeAll()
        request.fetchBatchSize = 3
        request.batchingMode = .faithful
        request.maximumLoadedBatches = 2
        var results: FetchedObjects?
        var sql = try store.statements { results = try context.fetch(request) }
        let chats = try #require(results)
        #expect(sql.map(\.sql) == ["SELECT t0.Z_ENT, t0.Z_PK FROM \(chat.table) t0 ORDER BY t0.\(chat.attributes.first { $0.name == "title" }!.column)"])
        #expect(chats.count == 8)
        #expect(chats.batching == BatchingStatus(batchSize: 3, loadedBatches: [], batchLoads: 0, evictions: 0, knownIDs: 8))
        // Index 4 is in batch 1: one statement for its three rows.
        sql = store.statements { #expect(titles([chats[4]]) == [expected[4]]) }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE t0.Z_PK IN (?, ?, ?)",
        ])
        #expect(try store.fixture.measure { _ = titles([chats[3], chats[5]]) }.statements == 0)
        // Batches 0 and 2 load; batch 1, least recently used, is dropped.
        sql = store.statements { #expect(titles([chats[0], chats[7]]) == [expected[0], expected[7]]) }
        #expect(sql.count == 2)
        #expect(chats.batching?.loadedBatches == [0, 2])
        #expect(chats.batching?.evictions == 1)
        #expect(titles(chats) == expected)
        #expect(chats.batching?.batchLoads == 5)
    }

    @Test func windowedBatchesStartWithRowsAndReadLaterIDsOnDemand() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        store.coordinator.rowCache.removeAll()
        request.fetchBatchSize = 2
        request.relationshipKeyPathsForPrefetching = ["lastMessage"]
        var results: FetchedObjects?
        var sql = try store.statements { results = try context.fetch(request) }
        let chats = try #require(results)
        // The first batch's rows, its prefetch, then the total.
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 2",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?)",
            "SELECT COUNT(*) FROM ZCHAT t0",
        ])
        #expect(sql[1].cause == .prefetch(keyPath: "lastMessage"))
        #expect(chats.count == 8)
        #expect(chats.batching?.knownIDs == 2)
        #expect(chats.knownObjectIDs.count == 2)
        #expect(try store.fixture.measure { _ = titles([chats[0], chats[1]]) }.statements == 0)
        // Batch 1: keys from position 2 on (several batches' worth; keys alone, which the sort's index holds, where
        // each row's Z_ENT would be a lookup in the table), its rows, its prefetch.
        sql = store.statements { _ = chats[2] }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_PK FROM ZCHAT t0 ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 6 OFFSET 2",
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE t0.Z_PK IN (?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?)",
        ])
        #expect(chats.batching?.knownIDs == 8)
        // A chat is a DirectChat or a GroupChat: the IDs are known as far as the batches loaded, which read Z_ENT.
        #expect(chats.knownObjectIDs == [chats[0], chats[1], chats[2], chats[3]].map(\.objectID))
        // Batch 2: its keys are known now, so only its rows and prefetch.
        sql = store.statements { _ = chats[5] }
        #expect(sql.count == 2)
        #expect(chats.knownObjectIDs == (0..<6).map { chats[$0].objectID })
        #expect((0..<6).allSatisfy { ["DirectChat", "GroupChat"].contains(chats[$0].entityName) })
        #expect(titles(chats) == expected)
        let reads = try store.fixture.measure { _ = chats.map { $0.object(forKey: "lastMessage")?.value(forKey: "text") } }
        #expect(reads.statements == 0)
    }

    /// A row deleted after its key was read, before its batch: the result keeps its place with an object that
    /// reports the row gone, the other rows of the batch load, and the known IDs stop before the gone one, whose
    /// entity (a DirectChat or a GroupChat) was never read.
    @Test func aWindowedBatchWhoseRowWentAfterItsKeyWasRead() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        let reference = store.fixture.context()
        let expected = titles(try reference.fetch(request))
        request.fetchBatchSize = 2
        request.batchingMode = .windowed
        let chats = try context.fetch(request)
        _ = chats[2]
        #expect(chats.batching?.knownIDs == 8)
        let writer = store.fixture.context()
        let all = try writer.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        try #require(all.count == 8)
        let doomed = all[5]
        let doomedKey = doomed.objectID.primaryKey
        writer.delete(doomed)
        try writer.save()

        let gone = chats[5]
        #expect(gone.objectID.primaryKey == doomedKey)
        #expect(gone.faultError == .objectNotFound(uri: context.uri(for: gone.objectID)))
        #expect(gone.value(forKey: "title") == nil)
        #expect(chats[4].value(forKey: "title") as? String == expected[4])
        #expect(chats.knownObjectIDs == (0..<5).map { chats[$0].objectID })
        #expect(chats[6].value(forKey: "title") as? String == expected[6])
    }

    /// A batch whose statement fails after its keys were read without their entities: its objects report the error,
    /// named by the fetched entity (no entity has the placeholder a key read alone carries), and the known IDs stop
    /// before them.
    @Test func aWindowedBatchThatCannotBeReadReportsItsRowsReadAsKeys() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.fetchBatchSize = 2
        request.batchingMode = .windowed
        let chats = try context.fetch(request)
        _ = chats[2]
        try store.fixture.coordinator.store.databaseWriter().write { db in try db.execute(sql: "ALTER TABLE ZCHAT DROP COLUMN ZISMUTED") }
        let failed = chats[4]
        #expect(failed.faultError != nil)
        #expect(failed.entityName == "Chat")
        #expect(context.uri(for: failed.objectID).contains("/Chat/p"))
        #expect(chats.knownObjectIDs == (0..<4).map { chats[$0].objectID })
    }

    @Test func aWindowedResultThatFitsInOneBatchNeedsNoCount() throws {
        let store = try ChatStore()
        var request = FetchRequest(entityName: "Chat", predicate: .key("isPinned") == true)
        request.fetchBatchSize = 5
        var results: FetchedObjects?
        let sql = try store.statements { results = try store.fixture.context().fetch(request) }
        #expect(sql.count == 1)
        #expect(results?.count == 1)
    }

    // MARK: unsaved changes

    @Test func resultsIncludeUnsavedChangesUnlessTurnedOff() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let request = FetchRequest(entityName: "Chat", predicate: try GraphStore.Predicate(format: "title BEGINSWITH[c] 'b'"),
                                   sortDescriptors: [.init("title")])
        #expect(titles(try context.fetch(request)) == ["Boats", "Budget"])
        let new = context.insert("GroupChat")
        new.setValue("Bikes", forKey: "title")
        new.setValue(Date(), forKey: "createdAt")
        let unrelated = context.insert("DirectChat")
        unrelated.setValue("Zoo", forKey: "title")
        unrelated.setValue(Date(), forKey: "createdAt")
        let all = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        let boats = try #require(all.first { $0.value(forKey: "title") as? String == "Boats" })
        let coffee = try #require(all.first { $0.value(forKey: "title") as? String == "Coffee" })
        boats.setValue("Ships", forKey: "title")
        coffee.setValue("Beans", forKey: "title")
        let budget = try #require(all.first { $0.value(forKey: "title") as? String == "Budget" })
        context.delete(budget)
        #expect(titles(try context.fetch(request)) == ["Beans", "Bikes"])
        #expect(try context.count(for: request) == 2)
        #expect(try context.fetchObjectIDs(request).contains(new.objectID))
        var windowed = request
        windowed.fetchLimit = 1
        windowed.fetchOffset = 1
        #expect(titles(try context.fetch(windowed)) == ["Bikes"])
        var stored = request
        stored.includesPendingChanges = false
        #expect(titles(try context.fetch(stored)).count == 2)
        #expect(try context.fetchObjectIDs(stored).count == 2)
    }

    // MARK: batched faults

    @Test func batchedFaultsReadSiblingsTogether() throws {
        let store = try ChatStore()
        let chatID = store.chats[0]
        // Core Data's way: the members' fault, then one statement per member and per user.
        let faithful = store.fixture.context()
        let chat = try faithful.existingObject(with: chatID)
        store.coordinator.rowCache.removeAll()
        let one = try store.fixture.measure {
            _ = chat.objects(forKey: "members").map { $0.object(forKey: "user")?.value(forKey: "name") }
        }
        #expect(one.statements == 1 + 4 + 4)

        store.coordinator.rowCache.removeAll()
        let batched = store.fixture.context()
        batched.faultBatchSize = 50
        let sameChat = try batched.existingObject(with: chatID)
        store.coordinator.rowCache.removeAll()
        var sql: [StatementEvent] = []
        let names = try store.fixture.measure {
            sql = store.statements {
                _ = sameChat.objects(forKey: "members").map { $0.object(forKey: "user")?.value(forKey: "name") }
            }
        }
        #expect(names.statements == 3)
        #expect(sql.map(\.sql) == [
            "SELECT 0, t0.Z_PK FROM ZCHATMEMBER t0 WHERE t0.ZCHAT = ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZROLE, t0.ZJOINEDAT, t0.ZLASTREADAT, t0.ZCHAT, t0.Z2_CHAT, t0.ZUSER FROM ZCHATMEMBER t0 WHERE t0.Z_PK IN (?, ?, ?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZHANDLE, t0.ZSTATUSMESSAGE, t0.ZCREATEDAT, t0.ZPROFILE FROM ZUSER t0 WHERE t0.Z_PK IN (?, ?, ?, ?)",
        ])
        #expect(names.cacheMisses == 2)
        #expect(names.cacheHits == 6)

        // Turned off for one relationship: its members are faulted one by one again.
        store.coordinator.rowCache.removeAll()
        let mixed = store.fixture.context()
        mixed.faultBatchSize = 50
        mixed.setFaultBatchSize(0, forRelationship: "members", of: "Chat")
        let again = try mixed.existingObject(with: chatID)
        store.coordinator.rowCache.removeAll()
        let partly = try store.fixture.measure {
            _ = again.objects(forKey: "members").map { $0.object(forKey: "user")?.value(forKey: "name") }
        }
        // The members' fault and four member faults; rows read one at a time have no siblings, so four user faults.
        #expect(partly.statements == 1 + 4 + 4)
    }

    @Test func badRequestsAreNamedErrors() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        #expect(throws: ContextError.unknownEntity("Nope")) { try context.fetch(FetchRequest(entityName: "Nope")) }
        #expect(throws: ContextError.self) {
            try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("members.title")]))
        }
        #expect(throws: ContextError.self) { try context.fetch(FetchRequest(entityName: "Chat", predicate: .key("nothing") == 1)) }
        var negative = FetchRequest(entityName: "Chat")
        negative.fetchLimit = -1
        #expect(throws: ContextError.self) { try context.fetch(negative) }
    }
}
