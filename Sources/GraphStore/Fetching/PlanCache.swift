import Synchronization

/// Read plans and joined-prefetch layouts of one coordinator, made once and reused by every fetch that needs the
/// same one.
///
/// Building them is a noticeable part of a cold fetch with a joined prefetch (each `RowReadPlan` builds dictionaries
/// of columns and positions, each layout several select lists), and they depend on nothing but the coordinator's
/// entity mappings and the request's prefetch settings. Entries are keyed by entity number; the cache is emptied
/// when it grows past `limit` entries (requests with ever new prefetch key paths).
final class PlanCache: Sendable {
    static let limit = 512

    private struct RowPlanKey: Hashable {
        let entity: Int
        let includesSubentities: Bool
        /// The properties read, for a partial plan.
        let properties: Set<String>?
    }

    private struct JoinedKey: Hashable {
        let entity: Int
        let includesSubentities: Bool
        let keyPaths: [String]
        let joinsToMany: Bool
        /// The request's `propertiesToFetch` when its plan reads partial rows (the selection follows from them, the
        /// entity and the key paths), else empty: cheaper to hash than the selection itself.
        let properties: [String]
    }

    private struct SelectionKey: Hashable {
        let entity: Int
        let properties: [String]
        let keyPaths: [String]
    }

    private struct FetchPlanKey: Hashable {
        let request: FetchRequest
        let readsObjects: Bool
        let breaksTies: Bool
    }

    private let fetchPlans = Mutex<[FetchPlanKey: FetchPlan]>([:])
    private let rowPlans = Mutex<[RowPlanKey: RowReadPlan]>([:])
    private let joinedPrefetches = Mutex<[JoinedKey: JoinedPrefetch]>([:])
    private let selections = Mutex<[SelectionKey: PropertySelection]>([:])

    /// The plan of `request` (`FetchPlan.init`), with its ties broken by primary key when `breaksTies`
    /// (`breakTiesByPrimaryKey()`), made once per request: a screen fetching the same request again (the same
    /// entity, predicate and values, sort, window and prefetches) neither compiles its predicate nor writes its
    /// statements again. A request that cannot be planned throws every time.
    func plan(for request: FetchRequest, readsObjects: Bool, breaksTies: Bool = false, coordinator: PersistentStoreCoordinator) throws(ContextError) -> FetchPlan {
        let key = FetchPlanKey(request: request, readsObjects: readsObjects, breaksTies: breaksTies)
        return try fetchPlans.value(for: key, limit: Self.limit) { () throws(ContextError) in
            var plan = try FetchPlan(request, coordinator: coordinator, readsObjects: readsObjects)
            if breaksTies { plan.breakTiesByPrimaryKey() }
            return plan
        }
    }

    /// What a fetch of objects by `request` reads of each row (`PropertySelection`), checked once per entity,
    /// `propertiesToFetch` and prefetched key paths; a request that names properties the model lacks throws every time.
    func selection(for request: FetchRequest, mapping: EntityMapping, coordinator: PersistentStoreCoordinator) throws(ContextError) -> PropertySelection {
        guard !request.propertiesToFetch.isEmpty else { return .wholeRows }
        let key = SelectionKey(entity: mapping.number, properties: request.propertiesToFetch, keyPaths: request.relationshipKeyPathsForPrefetching)
        return try selections.value(for: key, limit: Self.limit) { () throws(ContextError) in
            try PropertySelection(request, mapping: mapping, coordinator: coordinator)
        }
    }

    /// How to read rows of `mapping`'s entity, and of its sub-entities when `includesSubentities`: whole, or only
    /// `properties` of them.
    func rowPlan(for mapping: EntityMapping, includesSubentities: Bool, properties: Set<String>? = nil,
                 coordinator: PersistentStoreCoordinator) -> RowReadPlan {
        let key = RowPlanKey(entity: mapping.number, includesSubentities: includesSubentities, properties: properties)
        return rowPlans.value(for: key, limit: Self.limit) {
            let included = includesSubentities
                ? [mapping] + mapping.entity.descendantNames.compactMap { coordinator.mapping(forEntity: $0) }
                : [mapping]
            return RowReadPlan(included, properties: properties)
        }
    }

    /// How to read rows of `mapping`'s table: its root entity and every sub-entity.
    func rowPlan(forTableOf mapping: EntityMapping, properties: Set<String>? = nil, coordinator: PersistentStoreCoordinator) -> RowReadPlan {
        rowPlan(for: coordinator.mapping(forEntityNumber: mapping.rootNumber), includesSubentities: true, properties: properties, coordinator: coordinator)
    }

    /// The joined-prefetch layout of `plan`'s request, made by `make` the first time.
    func joinedPrefetch(for plan: FetchPlan, make: () -> JoinedPrefetch) -> JoinedPrefetch {
        let request = plan.request
        let key = JoinedKey(entity: plan.mapping.number, includesSubentities: request.includesSubentities,
                            keyPaths: request.relationshipKeyPathsForPrefetching, joinsToMany: request.joinsToManyPrefetch,
                            properties: plan.selection.isEmpty ? [] : request.propertiesToFetch)
        return joinedPrefetches.value(for: key, limit: Self.limit, make: make)
    }
}

extension Mutex {
    /// The entry for `key` in this table, made by `make` (outside the lock) the first time it is asked for; once
    /// the table holds `limit` entries it is emptied before the next one goes in. `make` failing leaves nothing.
    func value<Key: Hashable & Sendable, Entry: Sendable, Failure: Error>(
        for key: Key, limit: Int, make: () throws(Failure) -> Entry
    ) throws(Failure) -> Entry where Value == [Key: Entry] {
        if let found = withLock({ $0[key] }) { return found }
        let made = try make()
        withLock { table in
            if table.count >= limit { table.removeAll() }
            table[key] = made
        }
        return made
    }
}
