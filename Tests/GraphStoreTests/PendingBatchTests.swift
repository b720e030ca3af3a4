import ChatFixture
import Foundation
import GraphStore
import Testing

/// A batched fetch in a context with unsaved deletions stays batched: the store leaves the deleted rows out, and no
/// statement reads more than a batch. Unsaved changes that can move objects (inserts, changes to a key the
/// predicate or the sort reads) still merge in memory. Each result is checked against the same fetch unbatched.
@Suite struct PendingBatchTests {
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
        // The statements that select apply the predicate, its OR kept together, and leave the deleted chat out
        // (faithful batches then load their rows by key); none reads more than a batch of rows.
        let expected: [String] = switch mode {
        case .windowed: [
                "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?) ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 1",
                "SELECT COUNT(*) FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?)",
            ]
        case .faithful: [
                "SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?) ORDER BY t0.ZTITLE",
                "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE t0.Z_PK IN (?)",
            ]
        }
        #expect(sql.map(\.sql) == expected)
        #expect(sql.map(\.rows) == [1, 1])
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
        #expect(sql.map(\.sql) == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK NOT IN (SELECT value FROM json_each(?)) ORDER BY t0.ZSENTAT DESC, t0.Z_PK LIMIT 10",
            "SELECT COUNT(*) FROM ZMESSAGE t0 WHERE t0.Z_PK NOT IN (SELECT value FROM json_each(?))",
            "SELECT t0.Z_PK FROM ZMESSAGE t0 WHERE t0.Z_PK NOT IN (SELECT value FROM json_each(?)) ORDER BY t0.ZSENTAT DESC, t0.Z_PK LIMIT 31 OFFSET 10",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 WHERE t0.Z_PK IN (?)",
        ])
        // The 70 deleted keys are one argument, bound as a JSON array.
        #expect(sql.map(\.arguments.count) == [1, 1, 1, 10, 10, 10, 1])
    }

    @Test func aChangeToAKeyTheSortReadsIsPlacedByACount() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chats = try context.fetch(chatRequest(batch: 0))
        let boats = try #require(chats.first { $0.value(forKey: "title") as? String == "Boats" })
        boats.setValue("Abacus boats", forKey: "title")
        let budget = try #require(chats.first { $0.value(forKey: "title") as? String == "Budget" })
        budget.setValue("Bzz budget", forKey: "title")
        var result: [String] = []
        let sql = try store.statements { result = titles(try context.fetch(chatRequest(batch: 1))) }
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        // "Abacus boats" no longer begins with a b: the in-memory judgement leaves it out; "Bzz budget" moves last.
        #expect(!result.contains("Abacus boats") && !result.contains("Boats") && result.last == "Bzz budget", "\(result)")
        #expect(sql.map(\.sql) == [
            "SELECT COUNT(*) FROM ZCHAT t0 WHERE (((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?, ?)) AND (((t0.ZTITLE IS NULL OR t0.ZTITLE < ?)) OR (t0.ZTITLE IS ? AND (t0.Z_PK IS NULL OR t0.Z_PK < ?)))",
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?, ?) ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 1",
        ])
        // One count places the one that still matches; the stored rows left hold no other match.
        #expect(sql.map(\.rows) == [1, 0])
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
        #expect(sql.map(\.sql) == [
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?) ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 1",
            "SELECT COUNT(*) FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND t0.Z_PK NOT IN (?)",
        ])
    }

    @Test func anInsertIsPlacedByACount() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = context.insert("GroupChat")
        chat.setValue("Bananas", forKey: "title")
        chat.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "createdAt")
        var result: [String] = []
        let sql = try store.statements { result = titles(try context.fetch(chatRequest(batch: 1))) }
        #expect(result == titles(try context.fetch(chatRequest(batch: 0))))
        #expect(result.contains("Bananas"))
        #expect(sql.map(\.sql) == [
            "SELECT COUNT(*) FROM ZCHAT t0 WHERE ((GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)) AND (((t0.ZTITLE IS NULL OR t0.ZTITLE < ?)) OR (t0.ZTITLE IS ? AND (t0.Z_PK IS NULL OR t0.Z_PK < ?)))",
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE (GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?) ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 1",
            "SELECT COUNT(*) FROM ZCHAT t0 WHERE (GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?)",
            "SELECT t0.Z_PK FROM ZCHAT t0 WHERE (GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1) OR t0.ZISPINNED = ?) ORDER BY t0.ZTITLE, t0.Z_PK LIMIT 1 OFFSET 1",
            "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZCREATEDAT, t0.ZLASTMESSAGEAT, t0.ZISPINNED, t0.ZISMUTED, t0.ZMEMBERSCOUNT, t0.ZMESSAGESCOUNT, t0.ZLASTMESSAGE, t0.ZTOPIC, t0.ZOWNER FROM ZCHAT t0 WHERE t0.Z_PK IN (?)",
        ])
        #expect(sql.map(\.rows) == [1, 1, 1, 1, 1], "batched")
    }

    /// Random unsaved deletes, inserts and changes of the sort's and the predicate's keys: the batched result,
    /// in both modes and several batch sizes, is the unbatched one, read index by index in a random order.
    @Test(arguments: 1...12)
    func randomChangesGiveTheUnbatchedResult(run: Int) throws {
        var random = SeededRandom(seed: UInt64(run) &* 0x9E37_79B9_7F4A_7C15)
        let store = try ChatStore()
        let context = store.fixture.context()
        // Total orders (ties broken by SELF): objects that tie in every key have no order to compare.
        let sorts: [[FetchRequest.SortDescriptor]] = [
            [.init("isPinned", ascending: false), .init("title"), .init("SELF")],
            [.init("lastMessageAt", ascending: false), .init("SELF")],
            [.init("title", ascending: false), .init("SELF", ascending: false)],
        ]
        let words = ["Apple", "banana", "Boats", "cherry", "Dune", "bzz", "Ant", "zed"]
        for _ in 0..<(1 + random.below(6)) {
            let chats = try context.fetch(FetchRequest(entityName: "Chat"))
            guard !chats.isEmpty else { break }
            let chat = chats[random.below(chats.count)]
            switch random.below(5) {
            case 0: context.delete(chat)
            case 1:
                let new = context.insert(random.below(2) == 0 ? "GroupChat" : "DirectChat")
                new.setValue(words[random.below(words.count)] + " \(random.below(100))", forKey: "title")
                new.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(random.below(1_000))), forKey: "createdAt")
                if random.below(2) == 0 { new.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(random.below(1_000))), forKey: "lastMessageAt") }
                new.setValue(random.below(3) == 0, forKey: "isPinned")
            case 2: chat.setValue(words[random.below(words.count)] + " \(random.below(100))", forKey: "title")
            case 3: chat.setValue(random.below(2) == 0, forKey: "isPinned")
            default: chat.setValue(random.below(2) == 0 ? nil : Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(random.below(1_000))),
                                   forKey: "lastMessageAt")
            }
            context.processPendingChanges()
        }
        for sort in sorts {
            for predicate in [nil, try GraphStore.Predicate(format: "title BEGINSWITH[c] %@ OR isPinned == YES", "b")] {
                var plain = FetchRequest(entityName: "Chat", sortDescriptors: sort)
                plain.predicate = predicate
                let expected = try context.fetch(plain).map(\.objectID)
                for mode in [FetchRequest.BatchingMode.windowed, .faithful] {
                    for batch in [1, 2, 5] {
                        var request = plain
                        request.fetchBatchSize = batch
                        request.batchingMode = mode
                        let result = try context.fetch(request)
                        #expect(result.count == expected.count, "\(sort) \(mode) \(batch)")
                        var order = Array(0..<result.count)
                        order.shuffle(using: &random)
                        var read = Array(repeating: ObjectID(entityNumber: 0, primaryKey: 0), count: result.count)
                        for index in order { read[index] = result[index].objectID }
                        #expect(read == expected, "\(sort.map(\.keyPath)) \(mode) batch \(batch)")
                    }
                }
            }
        }
    }
}
