import Foundation
import GRDB
import GraphStore
import Synchronization

/// The four object-graph cases. Each compares Faultline with peers doing the same work: Faultline tuned and with
/// Core Data's defaults, GRDB written for speed (`GRDBItemRows.swift`: cached statements, rows decoded by column
/// index), GRDB's query interface with Codable records (`GRDBItemRecords.swift`), the raw SQLite C API, a plain
/// dictionary, or Faultline without an observer.
///
/// The model: `Group` (title) ↔ many `Item`s (name, score, createdAt, payload, flag, and the to-one `group`).
/// Stores live in `folder`; the read cases share one store of `rowCount` items, built on first use.
final class GraphCases {
    let folder: URL
    let quick: Bool
    /// Items in the shared store and in each insert-save run.
    let rowCount: Int
    /// Faults that each miss the row cache in `fault-from-sqlite`, spread evenly over the items.
    let sqliteFaultCount: Int
    let groupCount = 100
    let model: ObjectModel
    /// The items' values, made when a case first needs them (a sweep that skips these cases never does).
    private(set) lazy var rows = ItemRows(count: rowCount, groupCount: groupCount)
    private var shared: SharedStore?
    private var nextFileNumber = 0
    /// Hears every coordinator the cases open.
    let opened: (PersistentStoreCoordinator) -> Void

    /// Cases on `scale.items` items, `fault-from-sqlite` faulting `scale.sqliteFaults` of them.
    init(folder: URL, quick: Bool, scale: BenchmarkScale, opened: @escaping (PersistentStoreCoordinator) -> Void = { _ in }) throws {
        self.folder = folder
        self.quick = quick
        self.opened = opened
        self.rowCount = scale.items
        self.sqliteFaultCount = scale.sqliteFaults
        self.model = try Self.makeModel()
    }

    static func makeModel() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Group") {
                Attribute("title", .string)
                Relationship.toMany("items", "Item", inverse: "group")
            }
            EntityDescription("Item") {
                Attribute("name", .string)
                Attribute("score", .integer64)
                Attribute("createdAt", .date)
                Attribute("payload", .binaryData)
                Attribute("flag", .boolean)
                Relationship.toOne("group", "Group", inverse: "items")
            }
        }
    }

    func prepare(_ name: BenchmarkCaseName) throws -> PreparedCase {
        switch name {
        case .faultFromCache: try faultFromCache()
        case .faultFromSQLite: try faultFromSQLite()
        case .insertSave: try insertSave()
        case .observerOverhead: try observerOverhead()
        case .fixtureGenerate: preconditionFailure("fixture-generate is a FixtureCase")
        case .chatList, .chatListScroll: preconditionFailure("\(name.rawValue) is a ChatListCases case")
        case .cascadeDelete: preconditionFailure("cascade-delete is a CascadeDeleteCase")
        case .renderFrame: preconditionFailure("render-frame is a RenderFrameCase")
        case .openChat, .materializeMessages: preconditionFailure("\(name.rawValue) is a ChatReadCases case")
        case .addMessage: preconditionFailure("add-message is an AddMessageCase")
        case .startup: preconditionFailure("startup is a StartupCase")
        }
    }

    // MARK: cases

    /// Every item once, each a fault fulfilled from the row cache. The peers read the same rows with no cache of
    /// their own: GRDB (both ways) and raw SQLite by one SELECT per key, and a plain dictionary of the rows. The
    /// dictionary is the headline peer: a cache hit is a lookup in memory, and the queries show what the cache saves.
    private func faultFromCache() throws -> PreparedCase {
        let store = try sharedStore()
        try GRDBItemRecords.verify(store.columns)
        try store.fillRowCache()
        let coordinator = store.coordinator
        let ids = store.itemIDs
        let expected = ids.count
        let keys = ids.map(\.primaryKey)
        // Tuned: the objects' siblings are known (an untimed fetch of their IDs recorded them) and the context
        // batches faults; on a hit batching has nothing to do, and this shows it costs nothing either.
        let faultline = BenchmarkVariant(name: VariantName.faultline) { stopwatch in
            let context = try store.contextKnowingSiblings(of: ids, faultBatchSize: Self.tunedFaultBatchSize)
            return try Self.timeCacheHits(ids, in: context, stopwatch)
        }
        let defaults = BenchmarkVariant(name: VariantName.defaults) { stopwatch in
            try Self.timeCacheHits(ids, in: ObjectContext(coordinator: coordinator, name: "bench"), stopwatch)
        }
        let grdb = try store.grdbVariant(keys: keys)
        let queryInterface = try store.grdbQueryInterfaceVariant(keys: keys)
        let raw = try store.rawVariant(keys: keys)
        let table = try store.rawDictionary()
        // A cache hit is a lookup in memory: its fair peer is a dictionary of the same rows, not a query.
        let dictionary = BenchmarkVariant(name: "dictionary") { stopwatch in
            let sum = stopwatch.time { () -> Int64 in
                var sum: Int64 = 0
                for key in keys {
                    if let row = table[key], case .integer(let score) = row[ItemColumns.scoreOffset] { sum &+= score }
                }
                return sum
            }
            return RunOutcome(checksum: sum, statements: 0)
        }
        return PreparedCase(name: BenchmarkCaseName.faultFromCache.rawValue,
                            goals: [.microsecondsPerOperation(VariantName.faultline, atMost: 1, operations: expected, operation: "fault"),
                                    .ratio(VariantName.faultline, over: dictionary.name, atMost: 3)],
                            variants: [faultline, defaults, grdb, queryInterface, raw, dictionary],
                            headlinePeer: dictionary.name)
    }

    /// `sqliteFaultCount` faults (10,000) with an empty row cache, on items spread evenly over the store. Tuned,
    /// Faultline reads each fault's unread siblings with it, 100 rows a statement; with Core Data's defaults each
    /// fault is one SELECT by primary key, the very statement the raw peer steps itself and `grdb` runs from GRDB's
    /// statement cache; `grdb-query-interface` reads each Codable record with `fetchOne(db, key:)`. Each statement runs in SQLite's implicit transaction, as each fault reads its row,
    /// except `grdb-query-interface`'s, which read in one `queue.read` as GRDB's documentation reads.
    private func faultFromSQLite() throws -> PreparedCase {
        let store = try sharedStore()
        try GRDBItemRecords.verify(store.columns)
        let coordinator = store.coordinator
        let stride = max(1, store.itemIDs.count / sqliteFaultCount)
        let ids = Array(Swift.stride(from: 0, to: store.itemIDs.count, by: stride).prefix(sqliteFaultCount).map { store.itemIDs[$0] })
        let expected = ids.count
        let batchSize = Self.tunedFaultBatchSize
        let batches = (expected + batchSize - 1) / batchSize
        let faultline = BenchmarkVariant(name: VariantName.faultline) { stopwatch in
            coordinator.rowCache.removeAll()
            let context = try store.contextKnowingSiblings(of: ids, faultBatchSize: batchSize)
            let before = coordinator.events.counters.total
            let sum = stopwatch.time { Self.sumScores(of: ids, in: context) }
            let cost = coordinator.events.counters.total.difference(since: before)
            guard cost.objectFaults == expected, cost.cacheMisses == batches, cost.cacheHits == expected - batches, cost.statements == batches else {
                throw BenchmarkError("expected \(expected) faults, \(batches) of them misses each reading \(batchSize) rows in one statement; "
                    + "counted \(cost.objectFaults) faults, \(cost.cacheMisses) misses, \(cost.cacheHits) hits, \(cost.statements) statements")
            }
            return RunOutcome(checksum: sum, statements: cost.statements)
        }
        let defaults = BenchmarkVariant(name: VariantName.defaults) { stopwatch in
            coordinator.rowCache.removeAll()
            let context = ObjectContext(coordinator: coordinator, name: "bench")
            let before = coordinator.events.counters.total
            let sum = stopwatch.time { Self.sumScores(of: ids, in: context) }
            let cost = coordinator.events.counters.total.difference(since: before)
            guard cost.objectFaults == expected, cost.cacheMisses == expected, cost.cacheHits == 0, cost.statements == expected else {
                throw BenchmarkError("expected \(expected) faults, each a cache miss running one statement; counted \(cost.objectFaults) faults, "
                    + "\(cost.cacheMisses) misses, \(cost.cacheHits) hits, \(cost.statements) statements")
            }
            return RunOutcome(checksum: sum, statements: cost.statements)
        }
        let keys = ids.map(\.primaryKey)
        let grdb = try store.grdbVariant(keys: keys)
        let queryInterface = try store.grdbQueryInterfaceVariant(keys: keys)
        let raw = try store.rawVariant(keys: keys)
        return PreparedCase(name: BenchmarkCaseName.faultFromSQLite.rawValue,
                            goals: [.ratio(VariantName.defaults, over: VariantName.grdb, atMost: 1.2),
                                    .ratio(VariantName.defaults, over: VariantName.raw, atMost: 1.5),
                                    .fasterThan(VariantName.faultline, than: VariantName.grdb),
                                    .statementsAtMost(VariantName.faultline, than: VariantName.grdb)],
                            variants: [faultline, defaults, grdb, queryInterface, raw])
    }

    /// `rowCount` new objects with every attribute and their group set, saved at once, into a new store each run.
    /// The raw peer runs a prepared INSERT per row in one transaction into a table made by the same DDL; `grdb` runs
    /// the same INSERT from GRDB's statement cache per row in one write transaction into such a table, and
    /// `grdb-query-interface` inserts an `ItemRecord` per row there.
    private func insertSave() throws -> PreparedCase {
        let model = self.model
        let rows = self.rows
        let groupCount = self.groupCount
        let expected = rows.count
        let schema = StoreSchema(model: model)
        let faultline = BenchmarkVariant(name: "faultline") { [self] stopwatch in
            let path = newStorePath("insert-faultline")
            defer { Self.removeStore(at: path) }
            // Run in a function of its own so the coordinator and its connections are gone before the file is removed.
            func insertAndSave() throws -> Int {
                let coordinator = try PersistentStoreCoordinator(path: path, model: model, rowCacheCapacity: expected + groupCount + 1_000)
                opened(coordinator)
                let groupIDs = try Self.insertGroups(groupCount, into: coordinator)
                let before = coordinator.events.counters.total
                let context = ObjectContext(coordinator: coordinator, name: "bench")
                try stopwatch.time {
                    let groups = groupIDs.map { context.object(with: $0) }
                    for index in 0..<expected {
                        let item = context.insert("Item")
                        rows.fill(item, row: index, groups: groups)
                    }
                    try context.save()
                }
                let cost = coordinator.events.counters.total.difference(since: before)
                guard cost.saves == 1, cost.savedInserts == expected, cost.statements == expected + 1 else {
                    throw BenchmarkError("expected one save of \(expected) inserts in \(expected + 1) statements; counted \(cost.saves) saves, "
                        + "\(cost.savedInserts) inserts, \(cost.statements) statements")
                }
                return cost.statements
            }
            let statements = try insertAndSave()
            return RunOutcome(checksum: try ItemColumns.tableChecksum(path: path, model: model), statements: statements)
        }
        let raw = BenchmarkVariant(name: "raw-sqlite") { [self] stopwatch in
            let path = newStorePath("insert-raw")
            defer { Self.removeStore(at: path) }
            let columns = try ItemColumns(model: model)
            func insertRows() throws -> Int {
                let connection = try RawConnection(path: path, readOnly: false)
                try connection.configureLikeAPool()
                try connection.execute(schema.createStatements.joined(separator: ";\n"))
                try connection.execute("BEGIN")
                let groupInsert = try connection.prepare("INSERT INTO \(columns.groupTable) (Z_PK, Z_ENT, Z_OPT, \(columns.groupTitle)) VALUES (?, ?, 1, ?)")
                for group in 0..<groupCount {
                    groupInsert.reset()
                    groupInsert.bind(Int64(group + 1), at: 1)
                    groupInsert.bind(Int64(columns.groupEntityNumber), at: 2)
                    groupInsert.bind(ItemRows.groupTitle(group), at: 3)
                    try groupInsert.run()
                }
                try connection.execute("COMMIT")
                var statements = 0
                try stopwatch.time {
                    try connection.execute("BEGIN")
                    let insert = try connection.prepare(
                        "INSERT INTO \(columns.table) (Z_PK, Z_ENT, Z_OPT, \(columns.name), \(columns.score), \(columns.createdAt), "
                            + "\(columns.payload), \(columns.flag), \(columns.group)) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)")
                    let entity = Int64(columns.itemEntityNumber)
                    for index in 0..<rows.count {
                        insert.reset()
                        insert.bind(Int64(index + 1), at: 1)
                        insert.bind(entity, at: 2)
                        insert.bind(rows.names[index], at: 3)
                        insert.bind(rows.scores[index], at: 4)
                        insert.bind(rows.dates[index].timeIntervalSinceReferenceDate, at: 5)
                        insert.bind(rows.payloads[index], at: 6)
                        insert.bind(Int64(rows.flags[index] ? 1 : 0), at: 7)
                        insert.bind(Int64(rows.groups[index] + 1), at: 8)
                        try insert.run()
                        statements += 1
                    }
                    try connection.execute("COMMIT")
                }
                return statements
            }
            let statements = try insertRows()
            return RunOutcome(checksum: try ItemColumns.tableChecksum(path: path, model: model), statements: statements)
        }
        let columns = try ItemColumns(model: model)
        try GRDBItemRecords.verify(columns)
        let entity = columns.itemEntityNumber
        let insert = GRDBItemRows.insert(columns)
        let grdb = grdbInsertVariant(VariantName.grdb, schema: schema, columns: columns) { db in
            try GRDBItemRows.insertAll(rows, entity: entity, insert: insert, in: db)
        }
        let queryInterface = grdbInsertVariant(VariantName.grdbQueryInterface, schema: schema, columns: columns) { db in
            for index in 0..<rows.count {
                try ItemRecord(row: index, of: rows, entity: entity).insert(db)
            }
        }
        return PreparedCase(name: BenchmarkCaseName.insertSave.rawValue,
                            goals: [.ratio(VariantName.faultline, over: VariantName.grdb, atMost: 1.2),
                                    .ratio(VariantName.faultline, over: VariantName.raw, atMost: 1.5)],
                            variants: [faultline, grdb, queryInterface, raw])
    }

    /// A GRDB variant of `insert-save` named `name`: each run makes a new store with the DDL Faultline runs and
    /// saves the groups (untimed), then times `insertItems` in one write transaction, as the raw peer and a
    /// Faultline save use one. Statements are counted by tracing on the first run (the runner's warm-up, whose time
    /// is not kept); later runs report that count.
    private func grdbInsertVariant(_ name: String, schema: StoreSchema, columns: ItemColumns,
                                   insertItems: @escaping (Database) throws -> Void) -> BenchmarkVariant {
        let model = self.model
        let groupCount = self.groupCount
        var counted: Int?
        return BenchmarkVariant(name: name) { [self] stopwatch in
            let path = newStorePath("insert-\(name)")
            defer { Self.removeStore(at: path) }
            // Run in a function of its own so the queue and its connection are gone before the file is read and removed.
            func insertRows() throws -> Int {
                let queue = try GRDBPeer.queue(path: path, readOnly: false)
                try queue.write { db in
                    try db.execute(sql: schema.createStatements.joined(separator: ";\n"))
                    for group in 0..<groupCount {
                        try GroupRecord(id: Int64(group + 1), entity: Int64(columns.groupEntityNumber), version: 1,
                                        title: ItemRows.groupTitle(group)).insert(db)
                    }
                }
                if let counted {
                    try stopwatch.time { try queue.write(insertItems) }
                    return counted
                }
                let statements = try stopwatch.time { try queue.write { db in try GRDBPeer.counting(db) { try insertItems(db) }.statements } }
                counted = statements
                return statements
            }
            let statements = try insertRows()
            return RunOutcome(checksum: try ItemColumns.tableChecksum(path: path, model: model), statements: statements)
        }
    }

    /// `fault-from-cache`'s Faultline work with an observer on the event hub, against the same work without one.
    private func observerOverhead() throws -> PreparedCase {
        let store = try sharedStore()
        try store.fillRowCache()
        let coordinator = store.coordinator
        let ids = store.itemIDs
        let expected = ids.count
        let observed = BenchmarkVariant(name: "faultline") { stopwatch in
            let tally = EventTally()
            let token = coordinator.events.addObserver { _ in tally.add() }
            defer { coordinator.events.removeObserver(token) }
            let outcome = try Self.timeCacheHits(ids, in: ObjectContext(coordinator: coordinator, name: "bench"), stopwatch)
            guard tally.count == expected else {
                throw BenchmarkError("the observer heard \(tally.count) events, expected \(expected)")
            }
            return outcome
        }
        let unobserved = BenchmarkVariant(name: "faultline-no-observer") { stopwatch in
            guard !coordinator.events.hasObservers else { throw BenchmarkError("an observer was left attached") }
            return try Self.timeCacheHits(ids, in: ObjectContext(coordinator: coordinator, name: "bench"), stopwatch)
        }
        return PreparedCase(name: BenchmarkCaseName.observerOverhead.rawValue,
                            goals: [.ratio(observed.name, over: unobserved.name, atMost: 1.10)], variants: [observed, unobserved])
    }

    // MARK: shared work

    /// The fault batch size of the tuned variants: each fault that misses the row cache reads up to this many rows.
    static let tunedFaultBatchSize = 100

    /// Times `sumScores` in `context`, which has none of the objects yet, and checks every fault was a row-cache
    /// hit with no SQL.
    static func timeCacheHits(_ ids: [ObjectID], in context: ObjectContext, _ stopwatch: Stopwatch) throws -> RunOutcome {
        let coordinator = context.coordinator
        let before = coordinator.events.counters.total
        let sum = stopwatch.time { sumScores(of: ids, in: context) }
        let cost = coordinator.events.counters.total.difference(since: before)
        try expectCacheHits(cost, count: ids.count)
        return RunOutcome(checksum: sum, statements: cost.statements)
    }

    /// Reads `score` through a fault for each ID in a context that has none of them yet, by the typed property (as a
    /// Core Data user reads an `@NSManaged` one); each object is released as soon as it is read, so a run costs
    /// creating, faulting, reading and releasing each one. An object not of the registered class adds nothing, so
    /// the checksum shows it.
    static func sumScores(of ids: [ObjectID], in context: ObjectContext) -> Int64 {
        var sum: Int64 = 0
        for id in ids {
            if let item = context.object(with: id) as? BenchItem { sum &+= item.score }
        }
        return sum
    }

    static func expectCacheHits(_ cost: GraphCounters.Totals, count: Int) throws {
        guard cost.objectFaults == count, cost.cacheHits == count, cost.cacheMisses == 0, cost.statements == 0 else {
            throw BenchmarkError("expected \(count) faults, all row-cache hits with no SQL; counted \(cost.objectFaults) faults, "
                + "\(cost.cacheHits) hits, \(cost.cacheMisses) misses, \(cost.statements) statements")
        }
    }

    /// Inserts and saves the groups; their IDs in order.
    static func insertGroups(_ count: Int, into coordinator: PersistentStoreCoordinator) throws -> [ObjectID] {
        let context = ObjectContext(coordinator: coordinator, name: "groups")
        let groups = (0..<count).map { index -> ManagedObject in
            let group = context.insert("Group")
            group.setAttributeValue(.string(ItemRows.groupTitle(index)), forKey: "title")
            return group
        }
        try context.save()
        return groups.map(\.objectID)
    }

    private func sharedStore() throws -> SharedStore {
        if let shared { return shared }
        let store = try SharedStore(path: newStorePath("shared"), model: model, rows: rows, groupCount: groupCount, opened: opened)
        shared = store
        return store
    }

    private func newStorePath(_ stem: String) -> String {
        nextFileNumber += 1
        return folder.appendingPathComponent("\(stem)-\(nextFileNumber).sqlite").path
    }

    static func removeStore(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

/// `Item` as a typed subclass, which the read cases read through.
final class BenchItem: ManagedObject {
    override class var entityName: String { "Item" }
    @Stored("score") var score: Int64
}

/// The store the read cases share: `rows` saved through Faultline once.
final class SharedStore {
    let path: String
    let coordinator: PersistentStoreCoordinator
    /// Every item, by primary key.
    let itemIDs: [ObjectID]
    let columns: ItemColumns
    /// The peers' connections, opened when a case first needs them.
    private var grdbQueues: [String: DatabaseQueue] = [:]
    private var rawConnection: RawConnection?

    init(path: String, model: ObjectModel, rows: ItemRows, groupCount: Int, opened: (PersistentStoreCoordinator) -> Void) throws {
        self.path = path
        self.coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: [BenchItem.self],
                                                          rowCacheCapacity: rows.count + groupCount + 1_000)
        opened(coordinator)
        self.columns = try ItemColumns(model: model)
        let groupIDs = try GraphCases.insertGroups(groupCount, into: coordinator)
        // Saved 100,000 at a time, each part from a context of its own, so a store of a million items never holds
        // them all as objects at once.
        var itemIDs: [ObjectID] = []
        itemIDs.reserveCapacity(rows.count)
        for start in stride(from: 0, to: rows.count, by: Self.itemsPerSave) {
            let context = ObjectContext(coordinator: coordinator, name: "setup")
            let groups = groupIDs.map { context.object(with: $0) }
            let items = (start..<min(start + Self.itemsPerSave, rows.count)).map { index -> ManagedObject in
                let item = context.insert("Item")
                rows.fill(item, row: index, groups: groups)
                return item
            }
            try context.save()
            itemIDs += items.map(\.objectID)
        }
        self.itemIDs = itemIDs.sorted()
    }

    private static let itemsPerSave = 100_000

    /// Empties the row cache, then fills it with one fetch of every item, as an app's list screen would.
    func fillRowCache() throws {
        coordinator.rowCache.removeAll()
        let context = ObjectContext(coordinator: coordinator, name: "fill")
        let fetched = try context.fetch("Item")
        guard fetched.count == itemIDs.count, coordinator.rowCache.count == itemIDs.count else {
            throw BenchmarkError("fetching every item left \(coordinator.rowCache.count) rows in the row cache, expected \(itemIDs.count)")
        }
    }

    /// A context that batches faults by `faultBatchSize` and knows the objects with `ids` as siblings: an untimed
    /// fetch of their IDs (`includesPropertyValues` off: no rows read, none cached) recorded them as one group. The
    /// fetched objects are let go, so the timed work still creates every object, as the defaults' does; the group
    /// outlives them.
    func contextKnowingSiblings(of ids: [ObjectID], faultBatchSize: Int) throws -> ObjectContext {
        let context = ObjectContext(coordinator: coordinator, name: "bench")
        context.faultBatchSize = faultBatchSize
        var request = GraphStore.FetchRequest(entityName: "Item", predicate: try GraphStore.Predicate(format: "SELF IN %@", ids),
                                              sortDescriptors: [.init("SELF")])
        request.includesPropertyValues = false
        let fetched = try context.fetch(request)
        guard fetched.count == ids.count, zip(fetched, ids).allSatisfy({ $0.objectID == $1 }) else {
            throw BenchmarkError("fetching the IDs of \(ids.count) items returned \(fetched.count), or in another order")
        }
        return context
    }

    /// The `grdb` peer of a read case: the raw peer's SELECT by primary key, taken from GRDB's statement cache once
    /// per run and fetched for each key as an `ItemRow` decoded by column index. The untimed counting
    /// run compiles the statement, as the raw peer prepares its own before timing.
    func grdbVariant(keys: [Int64]) throws -> BenchmarkVariant {
        let select = GRDBItemRows.selectByKey(columns)
        // Each SELECT in SQLite's implicit transaction, as the raw peer steps it (and as each of Faultline's faults
        // reads its row).
        return GRDBReadVariant(queue: try grdbPeerQueue(VariantName.grdb), scope: .asRaw) { db in
            try GRDBItemRows.sumScores(of: keys, select: select, in: db)
        }.variant
    }

    /// The `grdb-query-interface` peer of a read case: `ItemRecord.fetchOne(db, key:)` (Codable) for each key, in
    /// one read, as GRDB's documentation introduces reading a record by key.
    func grdbQueryInterfaceVariant(keys: [Int64]) throws -> BenchmarkVariant {
        let queue = try grdbPeerQueue(VariantName.grdbQueryInterface)
        // GRDB learns the table's primary key on its first request; learned here, the count is the same every run.
        _ = try queue.read { db in try GRDBItemRecords.sumScores(of: Array(keys.prefix(1)), in: db) }
        return GRDBReadVariant(name: VariantName.grdbQueryInterface, queue: queue, scope: .ownTransaction) { db in
            try GRDBItemRecords.sumScores(of: keys, in: db)
        }.variant
    }

    /// The named GRDB peer's read-only queue on the store, opened on its first use. Each peer has its own
    /// connection, as the raw peer has, so that one peer's reads never evict the other's pages from SQLite's cache.
    private func grdbPeerQueue(_ peer: String) throws -> DatabaseQueue {
        if let queue = grdbQueues[peer] { return queue }
        let queue = try GRDBPeer.queue(path: path, readOnly: true)
        grdbQueues[peer] = queue
        return queue
    }

    /// The `raw-sqlite` peer of a read case: the SELECT by primary key a Faultline fault runs (less its constant
    /// entity term), prepared once and stepped for each key.
    func rawVariant(keys: [Int64]) throws -> BenchmarkVariant {
        if rawConnection == nil { rawConnection = try RawConnection(path: path, readOnly: true) }
        guard let connection = rawConnection else { throw BenchmarkError("no raw connection on the shared store") }
        let select = try connection.prepare("SELECT \(columns.selectList) FROM \(columns.table) WHERE Z_PK = ?")
        return BenchmarkVariant(name: VariantName.raw) { stopwatch in
            var statements = 0
            let (sum, sql) = try connection.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    var sum: Int64 = 0
                    for key in keys {
                        select.reset()
                        select.bind(key, at: 1)
                        statements += 1
                        while try select.step() {
                            let row = ItemColumns.read(select)
                            if case .integer(let score) = row[ItemColumns.scoreOffset] { sum &+= score }
                        }
                    }
                    select.reset()
                    return sum
                }
            }
            return RunOutcome(checksum: sum, statements: statements, sql: sql)
        }
    }

    /// Every item row read with the C API into a dictionary by primary key: what the `dictionary` peer of the
    /// cache case looks rows up in.
    func rawDictionary() throws -> [Int64: [RawValue]] {
        let connection = try RawConnection(path: path, readOnly: true)
        let select = try connection.prepare("SELECT \(columns.selectList) FROM \(columns.table)")
        var table: [Int64: [RawValue]] = [:]
        table.reserveCapacity(itemIDs.count)
        while try select.step() {
            let row = ItemColumns.read(select)
            if case .integer(let key) = row[0] { table[key] = row }
        }
        guard table.count == itemIDs.count else {
            throw BenchmarkError("the raw peer read \(table.count) item rows, expected \(itemIDs.count)")
        }
        return table
    }
}

/// The item table's SQL names, taken from the store schema Faultline uses, and the raw peer's way of reading a row.
struct ItemColumns {
    let table: String
    let name: String
    let score: String
    let createdAt: String
    let payload: String
    let flag: String
    let group: String
    let itemEntityNumber: Int
    let groupTable: String
    let groupTitle: String
    let groupEntityNumber: Int

    /// Where `read` puts each value: Z_PK, Z_OPT, name, score, createdAt, payload, flag, group.
    static let scoreOffset = 3

    init(model: ObjectModel) throws {
        let names = SchemaNames(model)
        let schema = names.schema
        guard let items = schema.table(for: "Item"), let groups = schema.table(for: "Group"),
              let item = model.entity(named: "Item"), let groupEntity = model.entity(named: "Group"),
              case .foreignKey(let groupColumn, _, _)? = schema.storage(forRelationship: "group", of: "Item") else {
            throw BenchmarkError("the benchmark model did not produce the expected tables")
        }
        table = items.name
        name = try names.column("name", of: "Item")
        score = try names.column("score", of: "Item")
        createdAt = try names.column("createdAt", of: "Item")
        payload = try names.column("payload", of: "Item")
        flag = try names.column("flag", of: "Item")
        group = groupColumn
        itemEntityNumber = item.number
        groupTable = groups.name
        groupTitle = try names.column("title", of: "Group")
        groupEntityNumber = groupEntity.number
    }

    /// The columns a Faultline item fault selects (less its constant entity term), in `read`'s order.
    var selectList: String {
        "Z_PK, Z_OPT, \(name), \(score), \(createdAt), \(payload), \(flag), \(group)"
    }

    /// The current row of a statement selecting `selectList`, as Swift values.
    static func read(_ statement: RawStatement) -> [RawValue] {
        var row: [RawValue] = []
        row.reserveCapacity(8)
        row.append(.integer(statement.int64(0)))
        row.append(.integer(statement.int64(1)))
        row.append(statement.isNull(2) ? .null : .string(statement.string(2)))
        row.append(statement.isNull(3) ? .null : .integer(statement.int64(3)))
        row.append(statement.isNull(4) ? .null : .date(Date(timeIntervalSinceReferenceDate: statement.double(4))))
        row.append(statement.isNull(5) ? .null : .data(statement.data(5)))
        row.append(statement.isNull(6) ? .null : .boolean(statement.int64(6) != 0))
        row.append(statement.isNull(7) ? .null : .integer(statement.int64(7)))
        return row
    }

    /// A fingerprint (FNV-1a) of every item row's stored values in key order, so two stores written by different
    /// variants can be shown to hold the same rows.
    static func tableChecksum(path: String, model: ObjectModel) throws -> Int64 {
        let columns = try ItemColumns(model: model)
        let connection = try RawConnection(path: path, readOnly: true)
        let select = try connection.prepare("SELECT \(columns.selectList) FROM \(columns.table) ORDER BY Z_PK")
        var hash = FNV1a()
        var count: Int64 = 0
        while try select.step() {
            count += 1
            for value in read(select) {
                switch value {
                case .null: hash.mix(0xff as Int64)
                case .integer(let number): hash.mix(number)
                case .boolean(let flag): hash.mix(flag ? 1 : 0)
                case .string(let text): hash.mix(text.utf8)
                case .date(let date): hash.mix(Int64(bitPattern: date.timeIntervalSinceReferenceDate.bitPattern))
                case .data(let data): hash.mix(data)
                }
            }
        }
        hash.mix(count)
        return hash.value
    }
}

/// The benchmark's item values, made once so no variant pays for formatting names or building payloads.
struct ItemRows: Sendable {
    let names: [String]
    let scores: [Int64]
    let dates: [Date]
    let payloads: [Data]
    let flags: [Bool]
    /// Index of each item's group, 0-based.
    let groups: [Int]

    var count: Int { names.count }

    init(count: Int, groupCount: Int) {
        names = (0..<count).map { "item \($0)" }
        scores = (0..<count).map { Int64(($0 &* 7_919) % 100_003) }
        let start = Date(timeIntervalSinceReferenceDate: 700_000_000)
        dates = (0..<count).map { start.addingTimeInterval(Double($0) * 1.5) }
        payloads = (0..<count).map { index in
            Data((0..<64).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) })
        }
        flags = (0..<count).map { $0 % 3 == 0 }
        groups = (0..<count).map { $0 % groupCount }
    }

    static func groupTitle(_ index: Int) -> String { "group \(index)" }

    /// Sets every attribute of a new item, and its group, to row `row`'s values.
    func fill(_ item: ManagedObject, row: Int, groups objects: [ManagedObject]) {
        item.setAttributeValue(.string(names[row]), forKey: "name")
        item.setAttributeValue(.integer(scores[row]), forKey: "score")
        item.setAttributeValue(.date(dates[row]), forKey: "createdAt")
        item.setAttributeValue(.data(payloads[row]), forKey: "payload")
        item.setAttributeValue(.boolean(flags[row]), forKey: "flag")
        item.setObject(objects[groups[row]], forKey: "group")
    }
}

/// An observer's count of the events it heard.
private final class EventTally: Sendable {
    private let heard = Atomic<Int>(0)

    func add() {
        heard.add(1, ordering: .relaxed)
    }

    var count: Int { heard.load(ordering: .relaxed) }
}
