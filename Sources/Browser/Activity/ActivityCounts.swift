import GraphStore

/// What a stretch of graph activity added up to: one action's, or everything since the browser started.
///
/// ```swift
/// var counts = ActivityCounts()
/// for record in recorder.drain() { counts.count(record.event) }
/// counts.cacheMisses   // object faults that had to run SQL
/// ```
public struct ActivityCounts: Equatable, Sendable {
    public var statements = 0
    /// Rows the statements returned (queries) or changed (writes).
    public var rows = 0
    public var sqlTime = Duration.zero
    /// Object faults, hits and misses together.
    public var objectFaults = 0
    /// Object faults fulfilled from the row cache, without SQL.
    public var cacheHits = 0
    /// Object faults that read their row from SQLite.
    public var cacheMisses = 0
    /// Of the object faults, those of partial objects reading the rest of their row.
    public var partialFaults = 0
    /// To-many relationship faults.
    public var relationshipFaults = 0
    public var fetches = 0
    /// Saves that committed.
    public var saves = 0
    /// Saves that failed and wrote nothing.
    public var failedSaves = 0
    /// Other contexts' saves (or other processes' writes) merged in.
    public var merges = 0
    /// Object and relationship faults by the entity of the object that fired them (`DirectChat`, not `Chat`).
    public var faultsByEntity: [String: Int] = [:]

    public init(
        statements: Int = 0, rows: Int = 0, sqlTime: Duration = .zero,
        objectFaults: Int = 0, cacheHits: Int = 0, cacheMisses: Int = 0, relationshipFaults: Int = 0,
        fetches: Int = 0, saves: Int = 0, failedSaves: Int = 0, faultsByEntity: [String: Int] = [:]
    ) {
        self.statements = statements
        self.rows = rows
        self.sqlTime = sqlTime
        self.objectFaults = objectFaults
        self.cacheHits = cacheHits
        self.cacheMisses = cacheMisses
        self.relationshipFaults = relationshipFaults
        self.fetches = fetches
        self.saves = saves
        self.failedSaves = failedSaves
        self.faultsByEntity = faultsByEntity
    }

    /// Adds `event` to the figures.
    public mutating func count(_ event: GraphEvent) {
        switch event {
        case .statement(let statement):
            statements += 1
            rows += statement.rows
            sqlTime += statement.duration
        case .fetch:
            fetches += 1
        case .objectFault(let fault):
            objectFaults += 1
            if fault.isCacheHit { cacheHits += 1 } else { cacheMisses += 1 }
            if fault.isPartial { partialFaults += 1 }
            faultsByEntity[fault.entity, default: 0] += 1
        case .relationshipFault(let fault):
            relationshipFaults += 1
            faultsByEntity[fault.entity, default: 0] += 1
        case .save(let save):
            if save.succeeded { saves += 1 } else { failedSaves += 1 }
        case .merge:
            merges += 1
        }
    }

    /// The `limit` entities with the most faults, most first (ties by name).
    public func mostFaultedEntities(_ limit: Int) -> [(entity: String, faults: Int)] {
        faultsByEntity
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(max(0, limit))
            .map { (entity: $0.key, faults: $0.value) }
    }
}
