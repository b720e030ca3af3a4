import Synchronization

/// Read plans and joined-prefetch layouts, made once and reused by every fetch that needs the same one.
///
/// Building them took a tenth of a cold 30-row fetch with a joined prefetch (a profile of the `chat-list` bench:
/// each `RowReadPlan` builds dictionaries of columns and positions, each layout several select lists), and they
/// depend on nothing but the entity mappings and the request's prefetch settings. Entries are keyed by the identity
/// of the mapping they start from and keep that mapping alive, so a key can never name another coordinator's
/// mapping; the cache is emptied when it grows past `limit` entries (a process opening many stores, as the tests
/// do, starts it afresh now and then).
enum PlanCache {
    static let limit = 512

    private struct RowPlanKey: Hashable {
        let mapping: ObjectIdentifier
        let includesSubentities: Bool
    }

    private struct JoinedKey: Hashable {
        let mapping: ObjectIdentifier
        let includesSubentities: Bool
        let keyPaths: [String]
        let joinsToMany: Bool
    }

    private static let rowPlans = Mutex<[RowPlanKey: (mapping: EntityMapping, plan: RowReadPlan)]>([:])
    private static let joinedPrefetches = Mutex<[JoinedKey: (mapping: EntityMapping, layout: JoinedPrefetch)]>([:])

    /// How to read rows of `mapping`'s entity, and of its sub-entities when `includesSubentities`.
    static func rowPlan(for mapping: EntityMapping, includesSubentities: Bool, coordinator: PersistentStoreCoordinator) -> RowReadPlan {
        let key = RowPlanKey(mapping: ObjectIdentifier(mapping), includesSubentities: includesSubentities)
        if let found = rowPlans.withLock({ $0[key]?.plan }) { return found }
        let included = includesSubentities
            ? [mapping] + mapping.entity.descendantNames.compactMap { coordinator.mapping(forEntity: $0) }
            : [mapping]
        let plan = RowReadPlan(included)
        rowPlans.withLock { plans in
            if plans.count >= limit { plans.removeAll() }
            plans[key] = (mapping, plan)
        }
        return plan
    }

    /// How to read rows of `mapping`'s table: its root entity and every sub-entity.
    static func rowPlan(forTableOf mapping: EntityMapping, coordinator: PersistentStoreCoordinator) -> RowReadPlan {
        rowPlan(for: coordinator.mapping(forEntityNumber: mapping.rootNumber), includesSubentities: true, coordinator: coordinator)
    }

    /// The joined-prefetch layout of `plan`'s request, made by `make` the first time.
    static func joinedPrefetch(for plan: FetchPlan, make: () -> JoinedPrefetch) -> JoinedPrefetch {
        let request = plan.request
        let key = JoinedKey(mapping: ObjectIdentifier(plan.mapping), includesSubentities: request.includesSubentities,
                            keyPaths: request.relationshipKeyPathsForPrefetching, joinsToMany: request.joinsToManyPrefetch)
        if let found = joinedPrefetches.withLock({ $0[key]?.layout }) { return found }
        let layout = make()
        joinedPrefetches.withLock { layouts in
            if layouts.count >= limit { layouts.removeAll() }
            layouts[key] = (plan.mapping, layout)
        }
        return layout
    }
}
