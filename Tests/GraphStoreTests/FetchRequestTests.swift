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
        let mapping = try #require(store.coordinator.mapping(forEntity: "GroupChat"))
        // Every entity of the table is wanted, so no Z_ENT condition and no ORDER BY.
        #expect(sql[0].sql.hasPrefix("SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, "))
        #expect(sql[0].sql.hasSuffix(" FROM \(mapping.table) t0"))
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
        #expect(sql[0].sql.hasSuffix(" FROM \(group.table) t0 WHERE t0.Z_ENT = ?"))
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
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        let message = try #require(store.coordinator.mapping(forEntity: "Message"))
        let column = { (mapping: EntityMapping, key: String) in mapping.attributes.first { $0.name == key }!.column }
        let lastMessage = chat.toOnes.first { $0.name == "lastMessage" }!.column
        var request = FetchRequest(entityName: "Chat", predicate: try GraphStore.Predicate(format: "title BEGINSWITH[c] %@ OR title BEGINSWITH %@", "a", "B"),
                                   sortDescriptors: [.init("lastMessage.sentAt", ascending: false)])
        var results: FetchedObjects?
        let sql = try store.statements { results = try context.fetch(request) }
        #expect(sql[0].sql.contains(" FROM \(chat.table) t0 LEFT JOIN \(message.table) t1 ON t0.\(lastMessage) = t1.Z_PK WHERE "))
        #expect(sql[0].sql.hasSuffix(" ORDER BY t1.\(column(message, "sentAt")) DESC"))
        #expect(sql[0].arguments.contains(.string("a")) && sql[0].arguments.contains(.string("B")))
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
            #expect(statements[0].sql.hasSuffix(" ORDER BY t0.\(column(chat, "title"))\(suffix)"))
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
        #expect(sql.count == 1 && sql[0].sql.hasPrefix("SELECT t0.Z_ENT, t0.Z_PK FROM \(chat.table) t0 WHERE "))
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
        #expect(sql[0].sql.hasPrefix("SELECT COUNT(*) FROM (SELECT 1 FROM \(chat.table) t0 WHERE "))
        #expect(sql[0].sql.hasSuffix(" LIMIT 3 OFFSET 5)"))
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
        let message = try #require(store.coordinator.mapping(forEntity: "Message"))
        let user = try #require(store.coordinator.mapping(forEntity: "User"))
        let member = try #require(store.coordinator.mapping(forEntity: "ChatMember"))
        let chatColumn = member.toOnes.first { $0.name == "chat" }!.column

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
        #expect(sql[1].sql.hasSuffix(" FROM \(message.table) t0 WHERE t0.Z_PK IN (\(Array(repeating: "?", count: 8).joined(separator: ", ")))"))
        #expect(sql[1].cause == .prefetch(keyPath: "lastMessage"))
        #expect(sql[2].cause == .prefetch(keyPath: "lastMessage.sender"))
        #expect(sql[2].sql.hasPrefix("SELECT 0, t0.Z_PK, t0.Z_OPT, ") && sql[2].sql.contains(" FROM \(user.table) t0 WHERE t0.Z_PK IN ("))
        #expect(sql.contains { $0.cause == .prefetch(keyPath: "members") && $0.sql.hasPrefix("SELECT t0.\(chatColumn), ")
            && $0.sql.hasSuffix("ORDER BY t0.\(chatColumn)") })
        #expect(!sql.contains { $0.cause == .prefetch(keyPath: "members.user") })
        #expect(sql.contains { $0.cause == .prefetch(keyPath: "lastMessage.readBy") && $0.sql.contains(" JOIN \(user.table) t0 ON t0.Z_PK = t1.") })
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
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        let message = try #require(store.coordinator.mapping(forEntity: "Message"))
        let user = try #require(store.coordinator.mapping(forEntity: "User"))
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender", "members"]
        request.prefetchStrategy = .joined
        var chats: FetchedObjects?
        let sql = try store.statements { chats = try context.fetch(request) }
        #expect(sql.count == 2)
        let lastMessage = chat.toOnes.first { $0.name == "lastMessage" }!.column
        let sender = message.toOnes.first { $0.name == "sender" }!.column
        #expect(sql[0].sql.contains(" FROM \(chat.table) t0 LEFT JOIN \(message.table) p1 ON p1.Z_PK = t0.\(lastMessage) LEFT JOIN \(user.table) p2 ON p2.Z_PK = p1.\(sender) ORDER BY "))
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
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        let at = chat.attributes.first { $0.name == "lastMessageAt" }!.column
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
        #expect(sql[0].sql.contains(" FROM (SELECT t0.*, t0.\(at) AS _s0, t0.Z_PK AS _s1 FROM \(chat.table) t0 ORDER BY t0.\(at) DESC, t0.Z_PK LIMIT 3) t0 LEFT JOIN "))
        #expect(sql[0].sql.hasSuffix(" ORDER BY t0._s0 DESC, t0._s1"))
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
        #expect(sql.count == 1)
        #expect(sql[0].sql.hasSuffix(" FROM \(chat.table) t0 WHERE t0.Z_PK IN (?, ?, ?)"))
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
        let chat = try #require(store.coordinator.mapping(forEntity: "Chat"))
        let title = chat.attributes.first { $0.name == "title" }!.column
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
        #expect(sql.count == 3)
        #expect(sql[0].sql.hasSuffix(" ORDER BY t0.\(title), t0.Z_PK LIMIT 2"))
        #expect(sql[1].cause == .prefetch(keyPath: "lastMessage"))
        #expect(sql[2].sql == "SELECT COUNT(*) FROM \(chat.table) t0")
        #expect(chats.count == 8)
        #expect(chats.batching?.knownIDs == 2)
        #expect(try store.fixture.measure { _ = titles([chats[0], chats[1]]) }.statements == 0)
        // Batch 1: IDs from position 2 on (several batches' worth), its rows, its prefetch.
        sql = store.statements { _ = chats[2] }
        #expect(sql.count == 3)
        #expect(sql[0].sql.hasSuffix(" ORDER BY t0.\(title), t0.Z_PK LIMIT 6 OFFSET 2"))
        #expect(sql[1].sql.contains(" WHERE t0.Z_PK IN (?, ?)"))
        #expect(chats.batching?.knownIDs == 8)
        // Batch 2: its IDs are known now, so only its rows and prefetch.
        sql = store.statements { _ = chats[5] }
        #expect(sql.count == 2)
        #expect(titles(chats) == expected)
        let reads = try store.fixture.measure { _ = chats.map { $0.object(forKey: "lastMessage")?.value(forKey: "text") } }
        #expect(reads.statements == 0)
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
        #expect(sql[1].sql.hasSuffix("WHERE t0.Z_PK IN (?, ?, ?, ?)"))
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
