import Synchronization

/// Where a coordinator reports its events: counts each one and hands it to whoever observes.
///
/// One per coordinator, used from any thread. Counting runs on every fault, row-cache hits included, so it stays
/// small: one uncontended lock, counters per entity in an array indexed by `Z_ENT` number, and the observer list
/// kept as an immutable array that `emit` takes under the lock and calls outside it.
public final class EventHub: Sendable {
    public typealias Observer = @Sendable (GraphEventRecord) -> Void

    /// Names the observer an `addObserver` call registered, for `removeObserver`.
    public struct ObserverToken: Hashable, Sendable {
        fileprivate let rawValue: Int

        fileprivate init(rawValue: Int) { self.rawValue = rawValue }

        /// A token of a coordinator's save observers (numbered apart from the hub's: negative).
        init(saveObserver number: Int) { self.rawValue = -number }
    }

    /// Index `i` is entity number `i + 1`.
    private let entityNames: [String]
    /// Entity name to index in `entityNames`.
    private let entityIndexes: [String: Int]
    /// The bits of each of `entityNames` (see `KeyBits`), looked through before hashing a name.
    private let entityNameBits: [KeyBits]
    private let state: Mutex<State>
    /// Mirrors `state.observers.count`, so `hasObservers` needs no lock.
    private let observerCount = Atomic<Int>(0)
    private let queryPlansWanted = Atomic<Bool>(false)

    /// `entityNames[i]` is the entity whose `Z_ENT` number is `i + 1`; the names are distinct, as a model's are.
    public init(entityNames: [String]) {
        self.entityNames = entityNames
        var indexes: [String: Int] = [:]
        for (index, name) in entityNames.enumerated() where indexes[name] == nil {
            indexes[name] = index
        }
        self.entityIndexes = indexes
        self.entityNameBits = entityNames.map(KeyBits.init)
        self.state = Mutex(State(entityCount: entityNames.count))
    }

    // MARK: Observers

    /// Registers `observer`: from now on it receives every emitted event, synchronously on the emitting thread.
    /// It must not take long, and may call back into the hub.
    @discardableResult
    public func addObserver(_ observer: @escaping Observer) -> ObserverToken {
        state.withLock { state in
            let token = ObserverToken(rawValue: state.nextToken)
            state.nextToken += 1
            state.observers.append(Registration(token: token, call: observer))
            observerCount.store(state.observers.count, ordering: .releasing)
            return token
        }
    }

    /// Stops delivery to the observer `token` names. An `emit` already under way on another thread may still
    /// deliver its event to it. Removing twice, or a token of another hub, does nothing.
    public func removeObserver(_ token: ObserverToken) {
        state.withLock { state in
            guard let index = state.observers.firstIndex(where: { $0.token == token }) else { return }
            state.observers.remove(at: index)
            observerCount.store(state.observers.count, ordering: .releasing)
        }
    }

    /// Whether anyone observes: emitters skip building events nobody will see (counting aside).
    public var hasObservers: Bool {
        observerCount.load(ordering: .acquiring) > 0
    }

    // MARK: Events

    /// Counts `event` and hands it to every observer, synchronously on the caller's thread, outside any lock.
    public func emit(_ event: GraphEvent, context: ContextID?) {
        // Finding the entity's slot needs no lock: do it first.
        let observers: [Registration]
        switch event {
        case .objectFault(let fault):
            observers = countObjectFault(of: fault.objectID, entity: fault.entity, hit: fault.isCacheHit, partial: fault.isPartial)
        case .statement(let statement):
            observers = countStatement(entity: statement.cause.countedEntity, rows: statement.rows, duration: statement.duration)
        case .fetch(let fetch):
            let target = slot(forEntity: fetch.entity)
            observers = state.withLock { state in
                state.total.countFetch(fetch)
                state.update(target) { $0.countFetch(fetch) }
                return state.observers
            }
        case .relationshipFault(let fault):
            // Counted under the source entity; its object's entity number usually names it, saving the lookup.
            let number = fault.objectID.entityNumber
            let target: EntitySlot = number >= 1 && number <= entityNames.count && entityNames[number - 1] == fault.entity
                ? .index(number - 1) : slot(forEntity: fault.entity)
            observers = state.withLock { state in
                state.total.countRelationshipFault(fault)
                state.update(target) { $0.countRelationshipFault(fault) }
                return state.observers
            }
        case .save(let save):
            observers = state.withLock { state in
                state.total.countSave(save)
                return state.observers
            }
        case .merge:
            observers = state.withLock { $0.observers }
        }
        deliver(event, context: context, to: observers)
    }

    /// Counts an object fault, as `emit` counts an `.objectFault` event, and returns the observers to hand its event
    /// to: none, nearly always, and then the caller need not build the event at all (a fault served by the row
    /// cache is a few hundred instructions, and an event with its strings is a good part of that). `entity` is
    /// read only when the ID's entity number is not one the hub knows.
    func countObjectFault(of objectID: ObjectID, entity: @autoclosure () -> String, hit: Bool, partial: Bool) -> [Registration] {
        let number = objectID.entityNumber
        if number >= 1 && number <= entityNames.count {
            return countObjectFault(entityIndex: number - 1, hit: hit, partial: partial)
        }
        let target = slot(forEntity: entity())
        return state.withLock { state in
            state.total.countObjectFault(hit: hit, partial: partial)
            state.update(target) { $0.countObjectFault(hit: hit, partial: partial) }
            return state.observers
        }
    }

    /// `countObjectFault(of:entity:hit:partial:)` for an object's fault, which has its mapping at hand: every
    /// fault, row-cache hits included; the mapping's name is read only for a number the hub does not know.
    @inline(__always)
    func countObjectFault(of objectID: ObjectID, mapping: EntityMapping, hit: Bool, partial: Bool) -> [Registration] {
        let number = objectID.entityNumber
        guard number >= 1 && number <= entityNames.count else {
            return countObjectFault(of: objectID, entity: mapping.name, hit: hit, partial: partial)
        }
        return countObjectFault(entityIndex: number - 1, hit: hit, partial: partial)
    }

    /// The hot path of both (100,000 row-cache hits in a loop): the entity number is the index, no name lookup. The
    /// observer list comes back only when there is one; an empty one is the shared empty array, which costs no
    /// reference count.
    @inline(__always)
    private func countObjectFault(entityIndex index: Int, hit: Bool, partial: Bool) -> [Registration] {
        state.withLock { state in
            state.total.countObjectFault(hit: hit, partial: partial)
            state.entities[index].countObjectFault(hit: hit, partial: partial)
            return state.observers.isEmpty ? [] : state.observers
        }
    }

    /// Counts a statement, as `emit` counts a `.statement` event, and returns the observers to hand its event to
    /// (as `countObjectFault` does): a save's thousand INSERTs build no event when nobody looks.
    func countStatement(entity: String?, rows: Int, duration: Duration) -> [Registration] {
        let target = entity.map(slot(forEntity:))
        return state.withLock { state in
            state.total.countStatement(rows: rows, duration: duration)
            if let target { state.update(target) { $0.countStatement(rows: rows, duration: duration) } }
            return state.observers
        }
    }

    /// Counts a statement that ran, and builds its event with `event` and hands it over only if someone observes:
    /// the one way a statement is reported, whether a runner ran it or a fault's key reader did.
    func statementRan(rows: Int, duration: Duration, cause: StatementCause, context: ContextID?, event: () -> StatementEvent) {
        let observers = countStatement(entity: cause.countedEntity, rows: rows, duration: duration)
        guard !observers.isEmpty else { return }
        deliver(.statement(event()), context: context, to: observers)
    }

    /// Hands an event already counted (`countObjectFault`, `countStatement`) to `observers`, those its counting returned.
    func deliver(_ event: consuming GraphEvent, context: ContextID?, to observers: [Registration]) {
        guard !observers.isEmpty else { return }
        let record = GraphEventRecord(event: event, context: context)
        for observer in observers {
            observer.call(record)
        }
    }

    // MARK: Counters

    /// A copy of the figures counted so far.
    public var counters: GraphCounters {
        let (total, entities, unknown) = state.withLock { state in
            (state.total, state.entities, state.unknownEntities)
        }
        // Names outside `entityNames` only ever land in `unknown`, so the two never share a name.
        var byEntity = unknown
        for (index, totals) in entities.enumerated() where !totals.isZero {
            byEntity[entityNames[index]] = totals
        }
        return GraphCounters(total: total, byEntity: byEntity)
    }

    /// Sets every figure back to zero.
    public func resetCounters() {
        state.withLock { state in
            state.total = .zero
            state.entities = Array(repeating: .zero, count: state.entities.count)
            state.unknownEntities = [:]
        }
    }

    // MARK: Query plans

    /// Set while a SQL debug log at level 4 is attached: statement emitters then gather `EXPLAIN QUERY PLAN` lines.
    public var wantsQueryPlans: Bool {
        queryPlansWanted.load(ordering: .relaxed)
    }

    public func setWantsQueryPlans(_ value: Bool) {
        queryPlansWanted.store(value, ordering: .relaxed)
    }

    // MARK: Private

    private func slot(forEntity name: String) -> EntitySlot {
        // A statement's entity is nearly always the model's own name string (an `EntityMapping`'s), whose bits
        // match at once; hashing it cost more than the rest of counting a statement. Distinct names make the first
        // match the only one.
        if entityNameBits.count <= 32 {
            let bits = KeyBits(name)
            if let index = entityNameBits.firstIndex(of: bits) { return .index(index) }
        }
        return if let index = entityIndexes[name] { .index(index) } else { .unknown(name) }
    }
}

private enum EntitySlot {
    /// Index in the hub's `entityNames`.
    case index(Int)
    /// An entity the hub was not told of, counted by name.
    case unknown(String)
}

/// An observer as the hub keeps it. Its closure lives in a struct, at its own type: an array of bare closures keeps
/// them at the most general one, and each call then went through a thunk that copied the event.
struct Registration: Sendable {
    let token: EventHub.ObserverToken
    let call: EventHub.Observer
}

private struct State: Sendable {
    var total = GraphCounters.Totals.zero
    /// Index `i` is entity number `i + 1`.
    var entities: [GraphCounters.Totals]
    var unknownEntities: [String: GraphCounters.Totals] = [:]
    /// The snapshot `emit` takes under the lock and calls outside it: adding or removing an observer copies it
    /// first while an `emit` still holds it.
    var observers: [Registration] = []
    var nextToken = 0

    init(entityCount: Int) {
        entities = Array(repeating: .zero, count: entityCount)
    }

    mutating func update(_ slot: EntitySlot, _ body: (inout GraphCounters.Totals) -> Void) {
        switch slot {
        case .index(let index): body(&entities[index])
        case .unknown(let name): body(&unknownEntities[name, default: .zero])
        }
    }
}

private extension GraphCounters.Totals {
    mutating func countObjectFault(hit: Bool, partial: Bool) {
        objectFaults += 1
        if hit { cacheHits += 1 } else { cacheMisses += 1 }
        if partial { partialFaults += 1 }
    }

    mutating func countStatement(rows: Int, duration: Duration) {
        statements += 1
        statementRows += rows
        sqlTime += duration
    }

    mutating func countFetch(_ fetch: FetchEvent) {
        fetches += 1
        fetchedRows += fetch.rows
    }

    mutating func countRelationshipFault(_ fault: RelationshipFaultEvent) {
        relationshipFaults += 1
        relationshipFaultRows += fault.rows
    }

    /// Only committed saves count: a failed one saved nothing (its statements were counted as they ran).
    mutating func countSave(_ save: SaveEvent) {
        guard save.succeeded else { return }
        saves += 1
        savedInserts += save.inserted
        savedUpdates += save.updated
        savedDeletes += save.deleted
    }
}
