import ChatFixture
import class GRDB.DatabaseQueue
import Foundation
import GraphStore
import Testing

/// Objects fetched with chosen properties (`propertiesToFetch`): the statements name only those columns, the objects
/// are partial, reading a property they lack reads the rest of the row in exactly one statement (a partial fault),
/// and the row cache keeps partial rows knowing what they lack.
@Suite struct PartialRowTests {
    private func messages(_ properties: [String], prefetch: [String] = [], strategy: FetchRequest.PrefetchStrategy = .joined) -> FetchRequest {
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")])
        request.propertiesToFetch = properties
        request.relationshipKeyPathsForPrefetching = prefetch
        request.prefetchStrategy = strategy
        return request
    }

    @Test func theStatementNamesOnlyTheChosenColumns() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var fetched: FetchedObjects?
        let sql = try store.statements { fetched = try context.fetch(messages(["text", "sentAt"])) }
        #expect(sql.map(\.sql) == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT FROM ZMESSAGE t0 ORDER BY t0.Z_PK"])
        let all = Array(try #require(fetched))
        #expect(all.count == 31)
        var texts: [String] = []
        let cost = try store.fixture.measure { texts = all.map { $0.value(forKey: "text") as? String ?? "" } }
        #expect(cost.statements == 0)
        #expect(cost.partialFaults == 0)
        #expect(texts.allSatisfy { $0.hasPrefix("message ") })
        #expect(all.allSatisfy { $0.isPartial && !$0.isFault })
        #expect(all[0].loadedPropertyNames == ["text", "sentAt"])
    }

    @Test func readingAMissingPropertyCostsExactlyOneStatement() throws {
        let store = try ChatStore()
        let referenceContext = store.fixture.context("reference")
        let reference = Array(try referenceContext.fetch(messages([])))
        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        let message = try #require(try context.fetch(messages(["text"])).first)
        #expect(message.isPartial)
        let recorder = SQLRecorder(store.coordinator)
        var sender: ManagedObject?
        let cost = try store.fixture.measure { sender = message.object(forKey: "sender") }
        #expect(cost.statements == 1)
        #expect(cost.objectFaults == 1)
        #expect(cost.partialFaults == 1)
        #expect(cost.cacheMisses == 1)
        #expect(recorder.statements.map(\.sql) == [try #require(store.coordinator.mapping(forEntity: "Message")).selectByPrimaryKey])
        #expect(!message.isPartial && !message.isFault)
        #expect(sender?.objectID == reference[0].object(forKey: "sender")?.objectID)
        // The rest came with it: nothing more to read.
        #expect(try store.fixture.measure { _ = message.value(forKey: "sentAt"); _ = message.value(forKey: "kind") }.statements == 0)
    }

    /// Typed properties read a held value straight from the row at their resolved slot; everything else a read must
    /// do goes the long way, and still happens: a partial fault for a property the row lacks (one statement), an
    /// unsaved change or a new object's value rather than the row's, and a prefetched object marked as used.
    @Test func typedReadsTakeTheLongWayWhenTheRowIsNotTheAnswer() throws {
        let store = try ChatStore()
        let referenceContext = store.fixture.context("reference")
        let reference = Array(try referenceContext.fetch(messages([])))
        // The same file through the chat model's classes.
        let coordinator = try PersistentStoreCoordinator(path: store.fixture.path, model: store.coordinator.model, classes: ChatModel.classes)
        func measure(_ work: () -> Void) -> GraphCounters.Totals {
            let before = coordinator.events.counters
            work()
            return coordinator.events.counters.difference(since: before).total
        }
        let context = ObjectContext(coordinator: coordinator)
        let message = try #require(try context.fetch(messages(["text"])).first as? ChatFixture.Message)
        #expect(measure { _ = message.text }.statements == 0)
        var sender: User?
        let cost = measure { sender = message.sender }
        #expect(cost.statements == 1 && cost.partialFaults == 1)
        #expect(sender?.objectID == reference[0].object(forKey: "sender")?.objectID)
        #expect(measure { _ = message.isEdited; _ = message.sentAt }.statements == 0)

        // An unsaved change is the answer, not the row; so is a new object's value.
        message.text = "changed"
        #expect(message.text == "changed")
        message.sender = nil
        #expect(message.sender == nil)
        let inserted = context.insert(ChatFixture.Message.self)
        #expect(inserted.text == "")
        inserted.text = "new"
        #expect(inserted.text == "new")
        context.rollback()
        #expect(message.text == reference[0].value(forKey: "text") as? String)

        // A prefetched object read through a typed property counts as used, also once the property's slot is known
        // (read here first in another context).
        let warm = ObjectContext(coordinator: coordinator)
        #expect((try warm.fetch(FetchRequest(entityName: "User")).first as? User)?.name.isEmpty == false)
        let tracked = ObjectContext(coordinator: coordinator)
        tracked.tracksPrefetchUse = true
        let prefetched = try tracked.fetch(messages(["text", "sender", "sender.name"], prefetch: ["sender"]))
        let first = try #require(prefetched.first as? ChatFixture.Message)
        _ = first.sender?.name
        let use = try #require(tracked.takePrefetchUse().first { $0.keyPath == "sender" })
        #expect(use.untouched == use.prefetched - 1, "\(use)")
    }

    @Test func eachPartialObjectFaultsAlone() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        context.faultBatchSize = 16
        let all = Array(try context.fetch(messages(["text"])))
        let cost = try store.fixture.measure { for message in all.prefix(5) { _ = message.value(forKey: "sentAt") } }
        #expect(cost.statements == 5)
        #expect(cost.partialFaults == 5)
        #expect(cost.objectFaults == 5)
    }

    @Test func prefetchedObjectsCanBePartialToo() throws {
        let store = try ChatStore()
        for strategy in FetchRequest.PrefetchStrategy.allCases {
            store.coordinator.rowCache.removeAll()
            let context = store.fixture.context()
            var fetched: FetchedObjects?
            let sql = try store.statements {
                fetched = try context.fetch(messages(["text", "sender.name"], prefetch: ["sender"], strategy: strategy))
            }
            switch strategy {
            case .joined:
                #expect(sql.map(\.sql) == [
                    "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENDER, p1.Z_OPT, p1.ZNAME FROM ZMESSAGE t0 LEFT JOIN ZUSER p1 ON p1.Z_PK = t0.ZSENDER ORDER BY t0.Z_PK",
                ])
            case .separateQueries:
                #expect(sql.count == 2)
                #expect(sql.first?.sql == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENDER FROM ZMESSAGE t0 ORDER BY t0.Z_PK")
                #expect(sql.last?.sql.hasPrefix("SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZUSER t0 WHERE t0.Z_PK IN ") == true)
            }
            let all = Array(try #require(fetched))
            var names: [String] = []
            let cost = try store.fixture.measure {
                names = all.map { $0.object(forKey: "sender")?.value(forKey: "name") as? String ?? "?" }
            }
            #expect(cost.statements == 0, "\(strategy)")
            #expect(Set(names) == ["Ana", "Budi", "Chaiya", "Dewi", "Eun", "Fumiko"])
            #expect(all.allSatisfy { $0.object(forKey: "sender")?.isPartial == true })
        }
    }

    /// A joined row is read without its `Z_PK` (the foreign key the join follows gives it), and its version says
    /// whether the join found a row: a foreign key to no row leaves its object a fault that finds the row gone, and
    /// a row whose version is NULL (no store writes one) is left to a fault that reads it, with its real values.
    @Test func aJoinedRowReadWithoutItsKeyIsTakenOnlyWhenTheJoinFoundIt() throws {
        let store = try ChatStore()
        let messageMapping = try #require(store.coordinator.mapping(forEntity: "Message"))
        let userTable = try #require(store.coordinator.mapping(forEntity: "User")).table
        let senderColumn = try #require(messageMapping.toOnes.first { $0.name == "sender" }).column
        let (dangling, nullVersioned) = try DatabaseQueue(path: store.fixture.path).write { db -> (Int64, Int64) in
            let first = try #require(try Int64.fetchOne(db, sql: "SELECT MIN(Z_PK) FROM \(messageMapping.table)"))
            let firstSender = try Int64.fetchOne(db, sql: "SELECT \(senderColumn) FROM \(messageMapping.table) WHERE Z_PK = ?", arguments: [first])
            try db.execute(sql: "UPDATE \(messageMapping.table) SET \(senderColumn) = 999999 WHERE Z_PK = ?", arguments: [first])
            let other = try #require(try Int64.fetchOne(db, sql: "SELECT MIN(Z_PK) FROM \(userTable) WHERE Z_PK IS NOT ?", arguments: [firstSender]))
            try db.execute(sql: "UPDATE \(userTable) SET Z_OPT = NULL WHERE Z_PK = ?", arguments: [other])
            return (first, other)
        }
        let expectedName = try DatabaseQueue(path: store.fixture.path).read { db in
            try String.fetchOne(db, sql: "SELECT ZNAME FROM \(userTable) WHERE Z_PK = ?", arguments: [nullVersioned])
        }
        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        var fetched: FetchedObjects?
        let sql = try store.statements { fetched = try context.fetch(messages(["text", "sender.name"], prefetch: ["sender"])) }
        #expect(sql.count == 1)
        let all = Array(try #require(fetched))
        let orphan = try #require(all.first { $0.objectID.primaryKey == dangling }?.object(forKey: "sender"))
        #expect(orphan.objectID.primaryKey == 999_999)
        #expect(orphan.isFault)
        let read = try store.fixture.measure { _ = orphan.value(forKey: "name") }
        #expect(read.statements == 1)
        #expect(orphan.faultError != nil)
        let unversioned = all.compactMap { $0.object(forKey: "sender") }.filter { $0.objectID.primaryKey == nullVersioned }
        #expect(!unversioned.isEmpty)
        #expect(unversioned.allSatisfy { $0.isFault })
        let names = try store.fixture.measure {
            #expect(unversioned.allSatisfy { $0.value(forKey: "name") as? String == expectedName })
        }
        #expect(names.statements == 1)
        // Every other sender came with its message: reading their names runs nothing.
        let others = all.compactMap { $0.object(forKey: "sender") }.filter { $0.objectID.primaryKey != nullVersioned && $0 !== orphan }
        #expect(!others.isEmpty)
        let rest = try store.fixture.measure { for user in others { _ = user.value(forKey: "name") } }
        #expect(rest.statements == 0)
    }

    @Test func aWindowedBatchCarriesOnlyTheChosenColumns() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("isPinned", ascending: false), .init("lastMessageAt", ascending: false)])
        request.fetchBatchSize = 3
        request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
        request.prefetchStrategy = .joined
        request.countsWithFirstBatch = true
        request.propertiesToFetch = ["title", "isPinned", "lastMessage.text", "lastMessage.sender.name"]
        var fetched: FetchedObjects?
        let sql = try store.statements { fetched = try context.fetch(request) }
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZISPINNED, t0.ZLASTMESSAGE, p1.Z_OPT, p1.ZTEXT, p1.ZSENDER, p2.Z_OPT, p2.ZNAME, "
                + "(SELECT COUNT(*) FROM ZCHAT t0) AS _count FROM ZCHAT t0 "
                + "LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER "
                + "ORDER BY t0.ZISPINNED DESC, t0.ZLASTMESSAGEAT DESC, t0.Z_PK LIMIT 3",
        ])
        let chats = try #require(fetched)
        #expect(chats.count == 8)
        let first = try store.fixture.measure {
            _ = chats.prefix(3).map { ($0.value(forKey: "title"), $0.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name")) }
        }
        #expect(first.statements == 0)
        // A later batch reads the same columns.
        let later = store.statements { _ = chats[5].value(forKey: "title") }
        #expect(later.last?.sql.hasPrefix("SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZISPINNED, t0.ZLASTMESSAGE, p1.Z_OPT, p1.ZTEXT, p1.ZSENDER, p2.Z_OPT, p2.ZNAME FROM ZCHAT t0 ") == true)
    }

    @Test func theRowCacheKeepsPartialRowsAndKnowsWhatTheyLack() throws {
        let store = try ChatStore()
        _ = Array(try store.fixture.context("fetching").fetch(messages(["text"])))
        let id = try #require(store.coordinator.rowCache.idsByRecency().last)
        let cached = try #require(store.coordinator.rowCache.snapshot(for: id))
        #expect(!cached.isComplete)
        #expect(cached.loaded?.names == ["text"])
        // Another context's fault on a property the row holds is a hit; one it lacks reads the row.
        let other = store.fixture.context("other")
        let hit = try store.fixture.measure { _ = other.object(with: id).value(forKey: "text") }
        #expect(hit.statements == 0 && hit.cacheHits == 1)
        let third = store.fixture.context("third")
        let miss = try store.fixture.measure { _ = third.object(with: id).value(forKey: "sentAt") }
        #expect(miss.statements == 1 && miss.cacheMisses == 1 && miss.partialFaults == 0)
        #expect(store.coordinator.rowCache.snapshot(for: id)?.isComplete == true)
        // A partial row read later does not replace the whole one.
        _ = Array(try store.fixture.context("again").fetch(messages(["text"])))
        #expect(store.coordinator.rowCache.snapshot(for: id)?.isComplete == true)
    }

    /// Two partial rows of one version: one that holds everything the other does is kept as it is (the very row
    /// first read, no copy); two that each hold something the other lacks become one row holding both.
    @Test func partialRowsOfOneVersionAreMergedOnlyWhenEachAddsSomething() throws {
        let store = try ChatStore()
        _ = Array(try store.fixture.context("wide").fetch(messages(["text", "sentAt"])))
        let id = try #require(store.coordinator.rowCache.idsByRecency().last)
        let wide = try #require(store.coordinator.rowCache.snapshot(for: id))
        _ = Array(try store.fixture.context("narrow").fetch(messages(["text"])))
        #expect(store.coordinator.rowCache.snapshot(for: id)?.isIdentical(to: wide) == true)
        _ = Array(try store.fixture.context("other").fetch(messages(["sender"])))
        let merged = try #require(store.coordinator.rowCache.snapshot(for: id))
        #expect(!merged.isIdentical(to: wide))
        #expect(Set(merged.loaded?.names ?? []) == ["text", "sentAt", "sender"])
        // An object holding the wide row keeps it when the narrow one arrives again.
        let context = store.fixture.context("holder")
        let objects = Array(try context.fetch(messages(["text", "sentAt"])))
        let held = try #require(objects.first { $0.objectID == id })
        _ = Array(try context.fetch(messages(["text"])))
        let cost = try store.fixture.measure { _ = held.value(forKey: "sentAt") }
        #expect(cost.statements == 0)
    }

    /// A fault that misses the row cache is one statement by key: counted whether or not anyone observes, and
    /// seen by an observer with its SQL, its argument, its cause and the object it fills.
    @Test func aFaultThatMissesTheCacheIsOneStatementSeenWhole() throws {
        let store = try ChatStore()
        let id = store.chats[0]
        let quiet = store.fixture.context("quiet")
        let unobserved = try store.fixture.measure { _ = quiet.object(with: id).value(forKey: "title") }
        #expect(unobserved.statements == 1 && unobserved.cacheMisses == 1)
        store.coordinator.rowCache.removeAll()
        let watched = store.fixture.context("watched")
        let sql = store.statements { _ = watched.object(with: id).value(forKey: "title") }
        #expect(sql.count == 1)
        #expect(sql.first?.sql.hasSuffix(" FROM ZCHAT t0 WHERE t0.Z_PK = ?") == true)
        #expect(sql.first?.arguments == [.integer(id.primaryKey)])
        #expect(sql.first?.faultedObject == id)
        let entity = watched.object(with: id).entityName
        #expect(sql.first?.cause == .objectFault(entity: entity, key: "title"))
        #expect(sql.first?.rows == 1)
    }

    @Test func changingAPartialObjectKeepsEveryOtherColumn() throws {
        let store = try ChatStore()
        let before = try store.fixture.context("before").fetchDictionaries(messages([]))
        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        let all = Array(try context.fetch(messages(["text"])))
        let cost = try store.fixture.measure { all[0].setValue("changed", forKey: "text") }
        #expect(cost.partialFaults == 1 && cost.statements == 1)
        let otherChat = all[all.count - 1].object(forKey: "chat")
        all[1].setObject(otherChat, forKey: "chat")
        try context.save()
        store.coordinator.rowCache.removeAll()
        let after = try store.fixture.context("after").fetchDictionaries(messages([]))
        #expect(after[0]["text"] == .string("changed"))
        #expect(after[0].filter { $0.key != "text" } == before[0].filter { $0.key != "text" })
        #expect(after[1] == before[1])
        let chatOfSecond = try store.fixture.context("keys").fetchDictionaries(messages(["chat"]))
        #expect(chatOfSecond[1]["chat"] == .integer(try #require(otherChat).objectID.primaryKey))
    }

    @Test func anotherContextsSaveReachesAPartialObject() throws {
        let store = try ChatStore()
        let reader = store.fixture.context("reader")
        let message = try #require(try reader.fetch(messages(["text"])).first)
        let writer = store.fixture.context("writer")
        let inbox = SaveInbox(coordinator: store.coordinator, excluding: reader.id)
        let same = try writer.existingObject(with: message.objectID)
        same.setValue("edited elsewhere", forKey: "text")
        same.setValue(true, forKey: "isEdited")
        try writer.save()
        for note in inbox.take() { reader.mergeChanges(fromContextDidSave: note) }
        #expect(!message.isPartial)
        #expect(message.value(forKey: "text") as? String == "edited elsewhere")
        #expect(message.value(forKey: "isEdited") as? Bool == true)
    }

    @Test func namesThatCannotBeReadAreRefused() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        for (properties, prefetch, words) in [
            (["nope"], [String](), "has no stored attribute or to-one 'nope'"),
            (["reactions"], [], "has no stored attribute or to-one 'reactions'"),
            (["sender.name"], [], "reads through 'sender', which the request does not prefetch"),
            (["sender.nope"], ["sender"], "User has no stored attribute or to-one 'nope'"),
            (["text."], [], "is not a key path"),
        ] {
            #expect {
                _ = try context.fetch(messages(properties, prefetch: prefetch))
            } throws: { error in
                "\(error)".contains(words)
            }
        }
    }
}

extension PartialRowTests {
    @Test func committedValuesOfAPartialObjectAreTheWholeRows() throws {
        let store = try ChatStore()
        let referenceContext = store.fixture.context("reference")
        let whole = try #require(try referenceContext.fetch(messages([])).first).committedValues()
        store.coordinator.rowCache.removeAll()
        let context = store.fixture.context()
        let partial = try #require(try context.fetch(messages(["text"])).first)
        #expect(partial.isPartial)
        #expect(partial.committedValues(forKeys: ["text", "sentAt", "sender"]) == whole.filter { ["text", "sentAt", "sender"].contains($0.key) })
        // A fault that finds only a partial row in the cache reads the rest too.
        store.coordinator.rowCache.removeAll()
        let third = store.fixture.context("third")
        _ = Array(try third.fetch(messages(["text"])))
        #expect(store.coordinator.rowCache.snapshot(for: partial.objectID)?.isComplete == false)
        let other = store.fixture.context("other")
        #expect(other.object(with: partial.objectID).committedValues(forKeys: ["text", "kind"]) == whole.filter { ["text", "kind"].contains($0.key) })
    }
}
