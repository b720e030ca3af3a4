/// Running figures of an object graph's activity, as an `EventHub` counts them from its events.
///
/// A value, not a live view: `EventHub.counters` hands out a copy. Take one before an action and call
/// `difference(since:)` on the one taken after it for "since the last action" figures.
public struct GraphCounters: Sendable, Equatable {
    /// The figures of one entity, or of everything.
    public struct Totals: Sendable, Equatable {
        /// Object faults fired, hits and misses together.
        public var objectFaults: Int
        /// Object faults fulfilled from the row cache (no SQL).
        public var cacheHits: Int
        /// Object faults that had to read their row from SQLite.
        public var cacheMisses: Int
        /// Of the object faults, those of partial objects reading the rest of their row (hits and misses).
        public var partialFaults: Int
        /// To-many relationship faults fired.
        public var relationshipFaults: Int
        /// Destination rows those relationship faults found.
        public var relationshipFaultRows: Int
        /// Fetch requests executed.
        public var fetches: Int
        /// Rows those fetches returned.
        public var fetchedRows: Int
        /// SQL statements run.
        public var statements: Int
        /// Rows those statements returned (queries) or changed (writes).
        public var statementRows: Int
        /// Time spent in those statements.
        public var sqlTime: Duration
        /// Saves committed.
        public var saves: Int
        public var savedInserts: Int
        public var savedUpdates: Int
        public var savedDeletes: Int

        public init(
            objectFaults: Int = 0, cacheHits: Int = 0, cacheMisses: Int = 0, partialFaults: Int = 0,
            relationshipFaults: Int = 0, relationshipFaultRows: Int = 0,
            fetches: Int = 0, fetchedRows: Int = 0,
            statements: Int = 0, statementRows: Int = 0, sqlTime: Duration = .zero,
            saves: Int = 0, savedInserts: Int = 0, savedUpdates: Int = 0, savedDeletes: Int = 0
        ) {
            self.objectFaults = objectFaults
            self.cacheHits = cacheHits
            self.cacheMisses = cacheMisses
            self.partialFaults = partialFaults
            self.relationshipFaults = relationshipFaults
            self.relationshipFaultRows = relationshipFaultRows
            self.fetches = fetches
            self.fetchedRows = fetchedRows
            self.statements = statements
            self.statementRows = statementRows
            self.sqlTime = sqlTime
            self.saves = saves
            self.savedInserts = savedInserts
            self.savedUpdates = savedUpdates
            self.savedDeletes = savedDeletes
        }

        public static let zero = Totals()

        /// True when nothing at all was counted.
        public var isZero: Bool { self == .zero }

        /// Each figure of `self` less the same figure of `earlier`.
        public func difference(since earlier: Totals) -> Totals {
            Totals(
                objectFaults: objectFaults - earlier.objectFaults,
                cacheHits: cacheHits - earlier.cacheHits,
                cacheMisses: cacheMisses - earlier.cacheMisses,
                partialFaults: partialFaults - earlier.partialFaults,
                relationshipFaults: relationshipFaults - earlier.relationshipFaults,
                relationshipFaultRows: relationshipFaultRows - earlier.relationshipFaultRows,
                fetches: fetches - earlier.fetches,
                fetchedRows: fetchedRows - earlier.fetchedRows,
                statements: statements - earlier.statements,
                statementRows: statementRows - earlier.statementRows,
                sqlTime: sqlTime - earlier.sqlTime,
                saves: saves - earlier.saves,
                savedInserts: savedInserts - earlier.savedInserts,
                savedUpdates: savedUpdates - earlier.savedUpdates,
                savedDeletes: savedDeletes - earlier.savedDeletes
            )
        }
    }

    /// Everything, whichever entity it concerned (saves and bookkeeping statements are counted only here).
    public var total: Totals
    /// Per entity name, only the entities that saw some activity.
    public var byEntity: [String: Totals]

    public init(total: Totals = .zero, byEntity: [String: Totals] = [:]) {
        self.total = total
        self.byEntity = byEntity
    }

    /// The figures of `entity` (zero when it saw no activity).
    public subscript(entity: String) -> Totals {
        byEntity[entity] ?? .zero
    }

    /// What happened between `earlier` and `self`: each figure less the same figure of `earlier`, keeping only
    /// the entities whose figures changed.
    ///
    /// Meant for two copies of the same hub's counters, the earlier one first; across a `resetCounters()` the
    /// figures come out negative.
    public func difference(since earlier: GraphCounters) -> GraphCounters {
        var entities: [String: Totals] = [:]
        for name in Set(byEntity.keys).union(earlier.byEntity.keys) {
            let change = self[name].difference(since: earlier[name])
            if !change.isZero { entities[name] = change }
        }
        return GraphCounters(total: total.difference(since: earlier.total), byEntity: entities)
    }
}
