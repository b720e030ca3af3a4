import Browser
import ChatFixture
import Foundation
import GraphStore
import Testing

/// The activity monitor on a real store: each action's figures equal what the graph did (the hub's own counters
/// agree), warnings name what to prefetch or which derived count to read, and totals, timeline and SQL log add up.
@Suite struct ActivityMonitorTests {
    /// A chat store in a temporary folder: six users; six chats (three direct, three group) with two or three
    /// members and two messages each. The six earliest messages are each chat's first, sent by six different users;
    /// each chat's last message has yet another sender order. The row cache starts empty and a recorder listens.
    final class ActivityStore {
        let folder: URL
        let coordinator: PersistentStoreCoordinator
        let recorder = ActivityRecorder()

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("activity-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            coordinator = try PersistentStoreCoordinator(
                path: folder.appendingPathComponent("chat.sqlite").path, model: try ChatModel.make(), classes: ChatModel.classes)
            try seed()
            coordinator.rowCache.removeAll()
            recorder.attach(to: coordinator.events)
        }

        deinit {
            recorder.detach()
            try? FileManager.default.removeItem(at: folder)
        }

        func context() -> ObjectContext { ObjectContext(coordinator: coordinator, name: "browser") }

        func monitor(logCapacity: Int = ActivityMonitor.defaultLogCapacity) -> ActivityMonitor {
            ActivityMonitor(model: coordinator.model, recorder: recorder, logCapacity: logCapacity)
        }

        private func seed() throws {
            let context = ObjectContext(coordinator: coordinator, name: "seed")
            let base = Date(timeIntervalSinceReferenceDate: 760_000_000)
            let users = ["Ana", "Bjørn", "Chen 陈", "Dara", "Eun-ji", "Farid"].map { name in
                let user = context.insert(User.self)
                user.name = name
                user.handle = name.lowercased()
                user.createdAt = base
                return user
            }
            for index in 0..<6 {
                let chat: Chat = index < 3 ? context.insert(DirectChat.self) : context.insert(GroupChat.self)
                chat.title = ["Lunch", "Boats", "Ski trip 🎿", "日本語", "Budget", "Dance"][index]
                chat.createdAt = base
                for offset in 0..<(2 + index % 2) {
                    let member = context.insert(ChatMember.self)
                    member.joinedAt = base
                    member.user = users[(index + offset) % users.count]
                    member.chat = chat
                }
                var last: Message?
                for round in 0..<2 {
                    let message = context.insert(Message.self)
                    message.text = "message \(round) of \(chat.title)"
                    message.sentAt = base.addingTimeInterval(Double(round * 6 + index))
                    message.sender = users[(index + round * 3) % users.count]
                    message.chat = chat
                    last = message
                }
                chat.lastMessage = last
                chat.lastMessageAt = last?.sentAt
            }
            try context.save()
        }
    }

    /// The six earliest messages, as faults (their rows in the row cache).
    private func firstMessages(_ context: ObjectContext, prefetching keyPaths: [String] = []) throws -> FetchedObjects {
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt")])
        request.fetchLimit = 6
        request.relationshipKeyPathsForPrefetching = keyPaths
        return try context.fetch(request)
    }

    /// The action's figures against the hub's own counters over the same stretch.
    private func expectAgreement(_ counts: ActivityCounts, _ hub: GraphCounters.Totals) {
        #expect(counts.statements == hub.statements)
        #expect(counts.rows == hub.statementRows)
        #expect(counts.sqlTime == hub.sqlTime)
        #expect(counts.objectFaults == hub.objectFaults)
        #expect(counts.cacheHits == hub.cacheHits)
        #expect(counts.cacheMisses == hub.cacheMisses)
        #expect(counts.relationshipFaults == hub.relationshipFaults)
        #expect(counts.fetches == hub.fetches)
        #expect(counts.saves == hub.saves)
    }

    // MARK: figures and N+1

    @Test func faultingSendersOneByOneIsAnNPlusOneNamingTheKeyPath() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        let before = store.coordinator.events.counters.total
        monitor.begin(action: "open chat", rootEntity: "Message")
        let names = try firstMessages(context).map { $0.object(forKey: "sender")?.value(forKey: "name") as? String }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)
        let hub = store.coordinator.events.counters.total.difference(since: before)

        #expect(Set(names.compactMap { $0 }).count == 6)
        #expect(summary.action == "open chat")
        #expect(summary.rootEntity == "Message")
        // One fetch, then each sender's row read on its own; the messages themselves come from the row cache.
        #expect(summary.counts.statements == 7)
        #expect(summary.counts.fetches == 1)
        #expect(summary.counts.objectFaults == 12)
        #expect(summary.counts.cacheHits == 6)
        #expect(summary.counts.cacheMisses == 6)
        #expect(summary.counts.relationshipFaults == 0)
        #expect(summary.counts.faultsByEntity == ["Message": 6, "User": 6])
        #expect(summary.saveSucceeded == nil)
        expectAgreement(summary.counts, hub)
        #expect(summary.warnings == [ActivityWarning(kind: .nPlusOne, message: "N+1: 6 faults of User one by one — prefetch sender")])

        #expect(monitor.sqlLog.count == 7)
        #expect(monitor.sqlLog.map(\.number) == [7, 6, 5, 4, 3, 2, 1])
        #expect(monitor.sqlLog.first?.cause == .objectFault(entity: "User", key: "name"))
        #expect(monitor.sqlLog.last?.cause == .fetch(entity: "Message"))
        #expect(Set(monitor.sqlLog.prefix(6).map(\.sql)).count == 1)
        #expect(monitor.sqlLog.allSatisfy { $0.action == "open chat" })
        #expect(monitor.totals == summary.counts)
    }

    @Test func prefetchingTheSendersTurnsTheirFaultsIntoCacheHits() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        let before = store.coordinator.events.counters.total
        monitor.begin(action: "open chat", rootEntity: "Message")
        for message in try firstMessages(context, prefetching: ["sender"]) {
            _ = message.object(forKey: "sender")?.value(forKey: "name")
        }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)

        // The fetch and the prefetch; the prefetched senders arrive with their values, so only the messages fault.
        #expect(summary.counts.statements == 2)
        #expect(summary.counts.objectFaults == 6)
        #expect(summary.counts.cacheHits == 6)
        #expect(summary.counts.cacheMisses == 0)
        #expect(summary.counts.faultsByEntity == ["Message": 6])
        #expect(summary.warnings.isEmpty)
        expectAgreement(summary.counts, store.coordinator.events.counters.total.difference(since: before))
        #expect(monitor.sqlLog.map(\.cause) == [.prefetch(keyPath: "sender"), .fetch(entity: "Message")])
    }

    @Test func batchedFaultsAreNotAnNPlusOne() throws {
        let store = try ActivityStore()
        let context = store.context()
        context.faultBatchSize = 10
        var monitor = store.monitor()
        monitor.begin(action: "open chat", rootEntity: "Message")
        for message in try firstMessages(context) {
            _ = message.object(forKey: "sender")?.value(forKey: "name")
        }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)

        // The first sender's fault reads the other five with it.
        #expect(summary.counts.statements == 2)
        #expect(summary.counts.cacheMisses == 1)
        #expect(summary.counts.cacheHits == 11)
        #expect(summary.warnings.isEmpty)
    }

    @Test func withoutARootTheWarningNamesTheEntityOnly() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "search")
        for message in try firstMessages(context) {
            _ = message.object(forKey: "sender")?.value(forKey: "name")
        }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)
        #expect(summary.warnings.map(\.message) == ["N+1: 6 faults of User one by one — prefetch the relationship that leads to User"])
    }

    @Test func fewerThanFiveFaultsOfOneStatementAreNoWarning() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "open chat", rootEntity: "Message")
        for message in try firstMessages(context).prefix(ActivityWarning.nPlusOneThreshold - 1) {
            _ = message.object(forKey: "sender")?.value(forKey: "name")
        }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)
        #expect(summary.counts.cacheMisses == 4)
        #expect(summary.warnings.isEmpty)
    }

    @Test func theChatListsLastSendersArePrefetchedThroughLastMessage() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        let before = store.coordinator.events.counters.total
        monitor.begin(action: "start", rootEntity: "Chat")
        let chats = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        for chat in chats {
            _ = chat.object(forKey: "lastMessage")?.object(forKey: "sender")?.value(forKey: "name")
        }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)

        // The fetch, each last message's row, each of their (six different) senders' rows.
        #expect(summary.counts.statements == 13)
        #expect(summary.counts.cacheMisses == 12)
        #expect(summary.counts.cacheHits == 6)
        expectAgreement(summary.counts, store.coordinator.events.counters.total.difference(since: before))
        #expect(summary.warnings == [
            ActivityWarning(kind: .nPlusOne, message: "N+1: 6 faults of Message one by one — prefetch lastMessage"),
            ActivityWarning(kind: .nPlusOne, message: "N+1: 6 faults of User one by one — prefetch lastMessage.sender"),
        ])
    }

    // MARK: counts through a to-many

    @Test func countingMembersFiresTheToManyAndPointsAtTheDerivedCount() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        let before = store.coordinator.events.counters.total
        monitor.begin(action: "start", rootEntity: "Chat")
        let counts = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
            .map { $0.objects(forKey: "members").count }
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)

        #expect(counts.reduce(0, +) == 15)
        #expect(summary.counts.statements == 7)
        #expect(summary.counts.relationshipFaults == 6)
        #expect(summary.counts.rows == 6 + 15)
        #expect(summary.counts.faultsByEntity == ["DirectChat": 3, "GroupChat": 3])
        expectAgreement(summary.counts, store.coordinator.events.counters.total.difference(since: before))
        #expect(summary.warnings == [
            ActivityWarning(kind: .nPlusOne, message: "N+1: 6 faults of Chat.members one by one — prefetch members"),
            ActivityWarning(kind: .countFiredRelationship,
                            message: "count of Chat.members fired the relationship (6 faults) — use membersCount (derived count)"),
        ])
    }

    @Test func oneCountThroughAToManyIsWarnedOfAlready() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "open chat", rootEntity: "Message")
        let chat = try #require(context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])).first)
        _ = chat.objects(forKey: "messages").count
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)
        #expect(summary.warnings == [
            ActivityWarning(kind: .countFiredRelationship,
                            message: "count of Chat.messages fired the relationship (1 fault) — use messagesCount (derived count)"),
        ])
    }

    // MARK: saves

    @Test func savesAreCountedWithTheirOutcome() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "rename chat", rootEntity: "Chat")
        let chat = try #require(context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")])).first)
        chat.setValue("Boats and more", forKey: "title")
        try context.save()
        monitor.end(at: 1)
        let saved = try #require(monitor.lastAction)
        #expect(saved.counts.saves == 1)
        #expect(saved.counts.failedSaves == 0)
        #expect(saved.saveSucceeded == true)
        #expect(monitor.sqlLog.first?.cause == .save)

        // Another context renames the same chat first: this one's save then meets a newer row and writes nothing.
        monitor.begin(action: "rename chat", rootEntity: "Chat")
        chat.setValue("Boats, again", forKey: "title")
        let other = store.context()
        let sameChat = other.object(with: chat.objectID)
        sameChat.setValue("Sailing", forKey: "title")
        try other.save()
        #expect(throws: ContextError.self) { try context.save() }
        monitor.end(at: 2)
        let failed = try #require(monitor.lastAction)
        #expect(failed.counts.saves == 1)
        #expect(failed.counts.failedSaves == 1)
        #expect(failed.saveSucceeded == false)
        #expect(monitor.totals.saves == 2)
        #expect(monitor.totals.failedSaves == 1)
    }

    // MARK: totals, outside actions, timeline, log

    @Test func totalsAddUpActionsUntilReset() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "open chat", rootEntity: "Message")
        _ = try firstMessages(context)
        monitor.end(at: 1)
        let first = try #require(monitor.lastAction)
        monitor.begin(action: "start", rootEntity: "Chat")
        _ = try context.fetch(FetchRequest(entityName: "Chat"))
        monitor.end(at: 2)
        let second = try #require(monitor.lastAction)

        #expect(monitor.totals.statements == first.counts.statements + second.counts.statements)
        #expect(monitor.totals.fetches == 2)
        #expect(monitor.totals.sqlTime == first.counts.sqlTime + second.counts.sqlTime)
        #expect(monitor.timeline != ActivityTimeline())
        monitor.resetCounters()
        #expect(monitor.totals == ActivityCounts())
        #expect(monitor.timeline == ActivityTimeline(), "the sparklines and their maximums start again")
        #expect(monitor.lastAction == second)
        #expect(monitor.sqlLog.count == 2)
    }

    @Test func workBetweenActionsCountsInTheTotalsOnly() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        _ = try context.fetch(FetchRequest(entityName: "User"))
        monitor.begin(action: "help")
        monitor.end(at: 1)
        let summary = try #require(monitor.lastAction)
        #expect(summary.counts == ActivityCounts())
        #expect(monitor.totals.statements == 1)
        #expect(monitor.sqlLog.map(\.action) == [nil])

        // Ending with no action begun keeps the last summary.
        _ = try context.fetch(FetchRequest(entityName: "User"))
        monitor.end(at: 2)
        #expect(monitor.lastAction == summary)
        #expect(monitor.totals.statements == 2)
    }

    @Test func theTimelineBucketsStatementsByTheSecondTheActionEnded() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor()
        monitor.begin(action: "open chat", rootEntity: "Message")
        for message in try firstMessages(context) { _ = message.object(forKey: "sender")?.value(forKey: "name") }
        monitor.end(at: 10.4)
        let summary = try #require(monitor.lastAction)
        monitor.begin(action: "down")
        monitor.end(at: 12.9)

        #expect(monitor.timeline.latestSecond == 12)
        #expect(monitor.timeline.statementsPerSecond.count == ActivityTimeline.span)
        #expect(Array(monitor.timeline.statementsPerSecond.suffix(3)) == [7, 0, 0])
        #expect(monitor.timeline.sqlTimePerSecond[ActivityTimeline.span - 3] == summary.counts.sqlTime)
    }

    @Test func theTimelineKeepsOneMinute() {
        var timeline = ActivityTimeline()
        #expect(timeline.statementsPerSecond == Array(repeating: 0, count: 60))
        timeline.record(statements: 3, sqlTime: .milliseconds(2), at: 0.5)
        timeline.record(statements: 2, sqlTime: .milliseconds(1), at: 0.9)
        timeline.record(statements: 1, sqlTime: .microseconds(400), at: 5.2)
        #expect(Array(timeline.statementsPerSecond.suffix(6)) == [5, 0, 0, 0, 0, 1])
        #expect(Array(timeline.sqlTimePerSecond.suffix(6)) == [.milliseconds(3), .zero, .zero, .zero, .zero, .microseconds(400)])
        timeline.record(statements: 4, sqlTime: .zero, at: 60.0)
        // Second 0 has left the window (1...60); second 5 is still in it.
        #expect(timeline.statementsPerSecond.reduce(0, +) == 5)
        #expect(timeline.statementsPerSecond.first == 0)
        timeline.record(statements: 0, sqlTime: .zero, at: 200)
        #expect(timeline.statementsPerSecond.allSatisfy { $0 == 0 })
    }

    @Test func theLogKeepsTheLatestStatementsNewestFirst() throws {
        let store = try ActivityStore()
        let context = store.context()
        var monitor = store.monitor(logCapacity: 3)
        monitor.begin(action: "open chat", rootEntity: "Message")
        for message in try firstMessages(context) { _ = message.object(forKey: "sender")?.value(forKey: "name") }
        monitor.end(at: 1)
        #expect(monitor.sqlLog.map(\.number) == [7, 6, 5])
        #expect(monitor.totals.statements == 7)
    }

    @Test func theRecorderStopsAtDetach() throws {
        let store = try ActivityStore()
        let context = store.context()
        _ = try context.fetch(FetchRequest(entityName: "User"))
        let records = store.recorder.drain()
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.context?.name == "browser" })
        #expect(store.recorder.drain().isEmpty)
        store.recorder.detach()
        _ = try context.fetch(FetchRequest(entityName: "User"))
        #expect(store.recorder.drain().isEmpty)
        #expect(!store.coordinator.events.hasObservers)
    }
}
