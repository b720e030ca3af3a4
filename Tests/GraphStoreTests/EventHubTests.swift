import GraphStore
import Synchronization
import Testing

@Suite struct EventHubTests {
    typealias Totals = GraphCounters.Totals

    /// Person is entity 1, Chat 2, Message 3.
    static let entityNames = ["Person", "Chat", "Message"]
    static let person = ObjectID(entityNumber: 1, primaryKey: 7)
    static let chat = ObjectID(entityNumber: 2, primaryKey: 3)
    static let message = ObjectID(entityNumber: 3, primaryKey: 11)

    static func fault(_ id: ObjectID, _ entity: String, hit: Bool) -> GraphEvent {
        .objectFault(ObjectFaultEvent(entity: entity, objectID: id, key: "name", isCacheHit: hit, duration: .nanoseconds(300)))
    }

    static func statement(rows: Int, ms: Int, cause: StatementCause) -> GraphEvent {
        .statement(StatementEvent(sql: "SELECT 1", arguments: [], rows: rows, duration: .milliseconds(ms), cause: cause))
    }

    /// A fetch of chats, faults on a person and two messages, a relationship fault, bookkeeping and a save.
    static func emitScript(into hub: EventHub, context: ContextID? = nil) {
        hub.emit(statement(rows: 4, ms: 2, cause: .fetch(entity: "Chat")), context: context)
        hub.emit(.fetch(FetchEvent(entity: "Chat", rows: 4, duration: .milliseconds(3))), context: context)
        hub.emit(statement(rows: 1, ms: 1, cause: .objectFault(entity: "Person", key: "name")), context: context)
        hub.emit(fault(person, "Person", hit: false), context: context)
        hub.emit(fault(person, "Person", hit: true), context: context)
        hub.emit(fault(message, "Message", hit: true), context: context)
        hub.emit(fault(message, "Message", hit: true), context: context)
        hub.emit(statement(rows: 5, ms: 4, cause: .relationshipFault(entity: "Chat", key: "messages")), context: context)
        hub.emit(
            .relationshipFault(RelationshipFaultEvent(entity: "Chat", objectID: chat, key: "messages", rows: 5, duration: .milliseconds(4))),
            context: context)
        hub.emit(statement(rows: 2, ms: 1, cause: .prefetch(keyPath: "messages.sender")), context: context)
        hub.emit(statement(rows: 1, ms: 1, cause: .other("Z_MAX")), context: context)
        hub.emit(statement(rows: 3, ms: 2, cause: .save), context: context)
        hub.emit(
            .save(SaveEvent(inserted: 1, updated: 2, deleted: 0, statements: 3, duration: .milliseconds(5), succeeded: true)),
            context: context)
        hub.emit(
            .save(SaveEvent(inserted: 4, updated: 4, deleted: 4, statements: 1, duration: .milliseconds(1), succeeded: false)),
            context: context)
    }

    static let scriptCounters = GraphCounters(
        total: Totals(
            objectFaults: 4, cacheHits: 3, cacheMisses: 1,
            relationshipFaults: 1, relationshipFaultRows: 5,
            fetches: 1, fetchedRows: 4,
            statements: 6, statementRows: 16, sqlTime: .milliseconds(11),
            saves: 1, savedInserts: 1, savedUpdates: 2, savedDeletes: 0),
        byEntity: [
            "Chat": Totals(
                relationshipFaults: 1, relationshipFaultRows: 5, fetches: 1, fetchedRows: 4,
                statements: 2, statementRows: 9, sqlTime: .milliseconds(6)),
            "Person": Totals(objectFaults: 2, cacheHits: 1, cacheMisses: 1, statements: 1, statementRows: 1, sqlTime: .milliseconds(1)),
            "Message": Totals(objectFaults: 2, cacheHits: 2),
        ])

    // MARK: - Counting

    @Test func countsEachKindPerEntity() {
        let hub = EventHub(entityNames: Self.entityNames)
        #expect(hub.counters == GraphCounters())
        Self.emitScript(into: hub)
        let counters = hub.counters
        #expect(counters.total == Self.scriptCounters.total)
        #expect(counters.byEntity == Self.scriptCounters.byEntity)
        #expect(counters["Nobody"] == .zero)
    }

    @Test func entitiesTheHubWasNotToldOfAreCountedByName() {
        let hub = EventHub(entityNames: ["Person"])
        hub.emit(Self.fault(ObjectID(entityNumber: 9, primaryKey: 1), "Ghost", hit: false), context: nil)
        hub.emit(Self.fault(ObjectID(entityNumber: 9, primaryKey: 2), "Person", hit: true), context: nil)
        hub.emit(Self.statement(rows: 2, ms: 1, cause: .fetch(entity: "Ghost")), context: nil)
        #expect(hub.counters.byEntity == [
            "Ghost": Totals(objectFaults: 1, cacheMisses: 1, statements: 1, statementRows: 2, sqlTime: .milliseconds(1)),
            "Person": Totals(objectFaults: 1, cacheHits: 1),
        ])
    }

    @Test func differenceKeepsWhatChangedSinceEarlierCounters() {
        let hub = EventHub(entityNames: Self.entityNames)
        Self.emitScript(into: hub)
        let before = hub.counters
        hub.emit(Self.fault(Self.message, "Message", hit: false), context: nil)
        hub.emit(Self.statement(rows: 1, ms: 3, cause: .objectFault(entity: "Message", key: "text")), context: nil)
        hub.emit(Self.statement(rows: 1, ms: 1, cause: .save), context: nil)
        let change = hub.counters.difference(since: before)
        #expect(change == GraphCounters(
            total: Totals(objectFaults: 1, cacheMisses: 1, statements: 2, statementRows: 2, sqlTime: .milliseconds(4)),
            byEntity: ["Message": Totals(objectFaults: 1, cacheMisses: 1, statements: 1, statementRows: 1, sqlTime: .milliseconds(3))]))
        #expect(hub.counters.difference(since: hub.counters) == GraphCounters())
        #expect(hub.counters.difference(since: GraphCounters()) == hub.counters)
    }

    @Test func resetCountersStartsFromZero() {
        let hub = EventHub(entityNames: Self.entityNames)
        Self.emitScript(into: hub)
        hub.emit(Self.fault(ObjectID(entityNumber: 42, primaryKey: 1), "Ghost", hit: true), context: nil)
        hub.resetCounters()
        #expect(hub.counters == GraphCounters())
        Self.emitScript(into: hub)
        #expect(hub.counters == Self.scriptCounters)
    }

    // MARK: - Observers

    @Test func observersReceiveRecordsInOrderWithTheirContext() throws {
        let hub = EventHub(entityNames: Self.entityNames)
        let first = SQLRecorder(), second = SQLRecorder()
        hub.addObserver(first.record)
        hub.addObserver(second.record)
        let main = ContextID(rawValue: 1, name: "main")
        let background = ContextID(rawValue: 2, name: "background")
        hub.emit(Self.fault(Self.person, "Person", hit: true), context: main)
        hub.emit(Self.statement(rows: 4, ms: 2, cause: .fetch(entity: "Chat")), context: background)
        hub.emit(.save(SaveEvent(inserted: 1, updated: 0, deleted: 0, statements: 1, duration: .zero, succeeded: true)), context: nil)

        for recorder in [first, second] {
            let records = recorder.records
            try #require(records.count == 3)
            #expect(records.map(\.context) == [main, background, nil])
            guard case .objectFault(let fault) = records[0].event else { Issue.record("not a fault: \(records[0])"); continue }
            #expect(fault.objectID == Self.person && fault.isCacheHit)
            guard case .statement(let statement) = records[1].event else { Issue.record("not a statement: \(records[1])"); continue }
            #expect(statement.cause == .fetch(entity: "Chat"))
            guard case .save(let save) = records[2].event else { Issue.record("not a save: \(records[2])"); continue }
            #expect(save.inserted == 1)
        }
    }

    @Test func removedObserverReceivesNothingMore() {
        let hub = EventHub(entityNames: Self.entityNames)
        let kept = SQLRecorder(), removed = SQLRecorder()
        hub.addObserver(kept.record)
        let token = hub.addObserver(removed.record)
        hub.emit(Self.fault(Self.person, "Person", hit: true), context: nil)
        hub.removeObserver(token)
        hub.emit(Self.fault(Self.person, "Person", hit: true), context: nil)
        hub.removeObserver(token)
        #expect(kept.records.count == 2)
        #expect(removed.records.count == 1)
        // Removal stops delivery, not counting.
        #expect(hub.counters.total.cacheHits == 2)
    }

    @Test func hasObserversFollowsAddingAndRemoving() {
        let hub = EventHub(entityNames: Self.entityNames)
        #expect(!hub.hasObservers)
        let first = hub.addObserver { _ in }
        let second = hub.addObserver { _ in }
        #expect(first != second)
        #expect(hub.hasObservers)
        hub.removeObserver(first)
        #expect(hub.hasObservers)
        hub.removeObserver(second)
        #expect(!hub.hasObservers)
    }

    @Test func observerMayReadTheHubWhileBeingCalled() {
        let hub = EventHub(entityNames: Self.entityNames)
        let seen = Mutex<[Int]>([])
        hub.addObserver { _ in
            let hits = hub.counters.total.cacheHits
            seen.withLock { $0.append(hits) }
        }
        hub.emit(Self.fault(Self.person, "Person", hit: true), context: nil)
        hub.emit(Self.fault(Self.person, "Person", hit: true), context: nil)
        #expect(seen.withLock { $0 } == [1, 2])
    }

    @Test func concurrentEmitsGiveExactTotals() async {
        let hub = EventHub(entityNames: Self.entityNames)
        let delivered = Atomic<Int>(0)
        hub.addObserver { _ in delivered.add(1, ordering: .relaxed) }
        let perTask = 10_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    let id = ObjectID(entityNumber: task % 3 + 1, primaryKey: Int64(task))
                    let entity = Self.entityNames[task % 3]
                    for index in 0..<perTask {
                        switch index % 4 {
                        case 0: hub.emit(Self.fault(id, entity, hit: false), context: nil)
                        case 1, 2: hub.emit(Self.fault(id, entity, hit: true), context: nil)
                        default: hub.emit(Self.statement(rows: 2, ms: 1, cause: .fetch(entity: entity)), context: nil)
                        }
                    }
                }
            }
        }
        let counters = hub.counters
        #expect(delivered.load(ordering: .relaxed) == 4 * perTask)
        #expect(counters.total == Totals(
            objectFaults: 30_000, cacheHits: 20_000, cacheMisses: 10_000,
            statements: 10_000, statementRows: 20_000, sqlTime: .seconds(10)))
        // Tasks 0 and 3 both counted Person.
        #expect(counters["Person"] == Totals(
            objectFaults: 15_000, cacheHits: 10_000, cacheMisses: 5_000,
            statements: 5_000, statementRows: 10_000, sqlTime: .seconds(5)))
        #expect(counters["Chat"].objectFaults == 7_500)
        #expect(counters["Message"].statements == 2_500)
    }

    // MARK: - Query plans

    @Test func wantsQueryPlansToggles() {
        let hub = EventHub(entityNames: Self.entityNames)
        #expect(!hub.wantsQueryPlans)
        hub.setWantsQueryPlans(true)
        #expect(hub.wantsQueryPlans)
        hub.setWantsQueryPlans(false)
        #expect(!hub.wantsQueryPlans)
    }
}
