import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Owns a store's connections, its row cache and its event stream; any number of object contexts sit on it.
///
/// ```swift
/// let coordinator = try PersistentStoreCoordinator(path: "chat.sqlite", model: model)
/// let context = ObjectContext(coordinator: coordinator, name: "main")
/// ```
/// The coordinator is `Sendable`: contexts on different threads or actors share it. Objects are not: each belongs to
/// the one context that made it.
public final class PersistentStoreCoordinator: Sendable {
    public let store: PersistentStore
    /// Persisted rows by object ID, shared by every context: a fault found here costs no SQL.
    public let rowCache: RowCache
    /// Every statement, fetch, fault and save, with running counters.
    public let events: EventHub
    /// Before-images of the rows recorded saves changed, for undo after a save.
    let undoJournal: UndoJournal
    /// Read plans and joined-prefetch layouts, made once per entity and request shape.
    let planCache = PlanCache()
    /// Who hears of each save (see `addSaveObserver`).
    let saveObservers = SaveObservers()
    /// Where the store stood when other processes' writes were last looked for.
    let externalWatch = ExternalChangeWatch()
    private let mappings: [EntityMapping]
    private let mappingByName: [String: EntityMapping]
    private let mappingByClass: [ObjectIdentifier: EntityMapping]
    /// The bits of each mapping's name (see `KeyBits`), in `mappings`' order.
    private let mappingNameBits: [KeyBits]
    /// One read-only connection for faults and fetches, used without a pool checkout: one-row reads are the hot
    /// path, and checking a reader out of GRDB's pool cost more than the read itself.
    private let reader: DatabaseQueue
    /// Where an object fault that misses the row cache reads its row: a connection of its own with one statement
    /// per entity, prepared once, taken under a lock. A fault through `reader` paid more for the dispatch queue and
    /// the statement cache's lookup by SQL text than SQLite spent on the row. Nil when it could not be opened.
    private let keyReader: PrimaryKeyReader?
    private let nextTemporaryKey = Atomic<Int64>(1)
    private let nextContextNumber = Atomic<Int>(1)

    public var model: ObjectModel { store.model }

    deinit {
        // The read-only connections close before the store's own: the last connection to a store to close folds
        // the write-ahead log into the file and removes it with its index, which a read-only one cannot do.
        try? reader.close()
        keyReader?.close()
    }

    /// - Parameter classes: `ManagedObject` subclasses for the typed API, each used for the entity named by its
    ///   `entityName`; other entities get plain `ManagedObject`s.
    /// Throws when the reading connection cannot be opened on the store's file.
    public init(store: PersistentStore, classes: [ManagedObject.Type] = [], rowCacheCapacity: Int = 100_000) throws(StoreError) {
        self.store = store
        self.rowCache = RowCache(capacity: rowCacheCapacity)
        self.events = EventHub(entityNames: store.model.entities.map(\.name))
        self.undoJournal = UndoJournal(schema: store.schema)
        let classByEntity = Dictionary(classes.map { ($0.entityName, $0) }, uniquingKeysWith: { _, last in last })
        for name in classByEntity.keys {
            precondition(store.model.entity(named: name) != nil, "class for unknown entity '\(name)'")
        }
        self.mappings = store.model.entities.map {
            EntityMapping(entity: $0, schema: store.schema, objectClass: classByEntity[$0.name] ?? ManagedObject.self)
        }
        let mappingByName = Dictionary(uniqueKeysWithValues: mappings.map { ($0.name, $0) })
        self.mappingNameBits = mappings.map { KeyBits($0.name) }
        self.mappingByName = mappingByName
        // cannot fail: the precondition above holds every class's entity to the model.
        self.mappingByClass = Dictionary(classByEntity.map { name, type in (ObjectIdentifier(type), mappingByName[name]!) },
                                         uniquingKeysWith: { first, _ in first })
        // Both read the file as the store's own connection does (see `PersistentStore.readerLocation`), so they
        // make no file beside it either.
        do {
            self.reader = try DatabaseQueue(path: store.readerLocation,
                                            configuration: PersistentStore.configuration(readOnly: true, options: .init(busyTimeout: store.busyTimeout)))
        } catch {
            throw .unreadable(path: store.path, reason: "its reading connection could not be opened: \(PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))")
        }
        self.keyReader = PrimaryKeyReader(path: store.readerLocation, entityCount: mappings.count,
                                          busyTimeout: store.busyTimeout)
    }

    /// Opens (or creates) the store at `path` and puts a coordinator on it.
    public convenience init(
        path: String, model: ObjectModel, options: PersistentStore.Options = .init(), classes: [ManagedObject.Type] = [],
        rowCacheCapacity: Int = 100_000
    ) throws(StoreError) {
        try self.init(store: try PersistentStore.open(path: path, model: model, options: options), classes: classes, rowCacheCapacity: rowCacheCapacity)
    }

    /// The mapping of entity `number`, one of the model's (object IDs read from the file carry only those: see
    /// `SQLiteValues.snapshot`).
    public func mapping(forEntityNumber number: Int) -> EntityMapping { mappings[number - 1] }

    public func mapping(forEntity name: String) -> EntityMapping? {
        // A name passed in is usually the literal the model was declared with, whose bits match at once: cheaper
        // than hashing it, which `insert("Item")` would otherwise pay on every new object.
        if mappingNameBits.count <= 32 {
            let bits = KeyBits(name)
            if let index = mappingNameBits.firstIndex(of: bits) { return mappings[index] }
        }
        return mappingByName[name]
    }

    /// The mapping of the entity a class was registered for (no string work: inserts of typed objects are hot).
    func mapping(forClass type: ManagedObject.Type) -> EntityMapping? { mappingByClass[ObjectIdentifier(type)] }

    /// Core Data's URI for an object: `x-coredata://<store UUID>/<Entity>/p<pk>` (`…/t<n>` while temporary).
    public func uri(for id: ObjectID) -> String {
        let entity = mappings[id.entityNumber - 1].name
        return id.isTemporary
            ? "x-coredata:///\(entity)/t\(-id.primaryKey)"
            : "x-coredata://\(store.storeUUID)/\(entity)/p\(id.primaryKey)"
    }

    func makeTemporaryID(entityNumber: Int) -> ObjectID {
        ObjectID(entityNumber: entityNumber, primaryKey: -nextTemporaryKey.add(1, ordering: .relaxed).oldValue)
    }

    func makeContextID(name: String?) -> ContextID {
        let number = nextContextNumber.add(1, ordering: .relaxed).oldValue
        return ContextID(rawValue: number, name: name ?? "context \(number)")
    }

    // MARK: saves

    /// Registers `observer` to receive a `SaveNotification` after every successful save of any context on this
    /// coordinator, synchronously on the saving thread (hand it to the receiving context's thread yourself, or use
    /// a `SaveInbox`). Saves build notifications only while someone observes.
    @discardableResult
    public func addSaveObserver(_ observer: @escaping @Sendable (SaveNotification) -> Void) -> EventHub.ObserverToken {
        saveObservers.add(observer)
    }

    public func removeSaveObserver(_ token: EventHub.ObserverToken) {
        saveObservers.remove(token)
    }

    // MARK: connections

    /// Runs `body` on a reading connection, without opening a transaction (as Core Data reads: row by row).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try reader.inDatabase(body)
    }

    /// Runs `body` in one write transaction, once the store has passed its check before a first write
    /// (`PersistentStore.checkedWriter()`).
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try store.checkedWriter().write(body)
    }

    /// Writes a copy of the store, as one consistent state, to a new file at `path` with SQLite's backup, through
    /// the store's own reading connection: a store opened read-only is copied without a file made or changed
    /// beside it. Fails if `path` exists.
    public func copyStore(to path: String) throws(StoreError) {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw .sqlite(path: path, message: "a file is already there")
        }
        do {
            let destination = try DatabaseQueue(path: path)
            try destination.writeWithoutTransaction { target in
                try read { source in try source.backup(to: target) }
            }
            try destination.close()
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            throw .sqlite(path: store.path, message: PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))
        }
    }

    // MARK: statements

    /// Runs `body` with a statement runner on the reading connection, outside any transaction (as Core Data reads:
    /// row by row); every error comes out as a `ContextError`.
    @discardableResult
    func reading<T>(cause: StatementCause, context: ContextID?, faultedObject: ObjectID? = nil,
                    _ body: (StatementRunner) throws -> T) throws(ContextError) -> T {
        do {
            return try read { db in
                let runner = StatementRunner(coordinator: self, db: db, cause: cause, context: context)
                runner.faultedObject = faultedObject
                return try body(runner)
            }
        } catch {
            throw ContextError.from(error, busyTimeout: store.busyTimeout)
        }
    }

    /// Runs `body` with a statement runner in one write transaction (see `write`); every error comes out as a
    /// `ContextError`, and the transaction is rolled back.
    @discardableResult
    func writing<T>(cause: StatementCause, context: ContextID?, meter: ProgressMeter? = nil,
                    _ body: (StatementRunner) throws -> T) throws(ContextError) -> T {
        do {
            return try write { db in
                meter?.install(on: db)
                defer { meter?.uninstall(from: db) }
                let runner = StatementRunner(coordinator: self, db: db, cause: cause, context: context)
                runner.meter = meter
                return try body(runner)
            }
        } catch {
            throw ContextError.from(error, busyTimeout: store.busyTimeout)
        }
    }

    /// `EXPLAIN QUERY PLAN` of a statement, run on the reading connection: one line per step, indented by depth.
    public func explain(_ sql: String, arguments: [AttributeValue] = []) throws(StoreError) -> [String] {
        do {
            return try read { db in queryPlan(db, sql: sql, arguments: arguments) } ?? []
        } catch {
            throw .sqlite(path: store.path, message: PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))
        }
    }

    /// Whether SQLite's planner reads `sql`'s rows in the order its `ORDER BY` asks for as it finds them (an index,
    /// or the table's own key order, serves it), so that no sort waits for every matching row: its
    /// `EXPLAIN QUERY PLAN` has no temporary B-tree for the order. A look at the plan, on the reading connection,
    /// like the plans a level-4 SQL log shows: not a statement of the work, and not counted. False when the plan
    /// cannot be read (the statement itself then reports why).
    func readsInOrder(_ sql: String, arguments: [AttributeValue]) -> Bool {
        guard let lines = (try? read { db in queryPlan(db, sql: sql, arguments: arguments) }) ?? nil, !lines.isEmpty else { return false }
        return !lines.contains { $0.contains("TEMP B-TREE") && $0.contains("ORDER BY") }
    }

    func queryPlan(_ db: Database, sql: String, arguments: [AttributeValue]) -> [String]? {
        guard let statement = try? db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql) else { return nil }
        let handle = statement.sqliteStatement
        SQLiteValues.bind(arguments, to: handle)
        var lines: [String] = []
        while sqlite3_step(handle) == SQLITE_ROW {
            lines.append(SQLiteValues.text(handle, 3))
        }
        return lines
    }

    /// Reads one row by primary key for `id`'s fault, filling the row cache; nil when the row is gone.
    func fetchSnapshot(_ id: ObjectID, cause: StatementCause, context: ContextID?) throws(ContextError) -> RowSnapshot? {
        let mapping = mappings[id.entityNumber - 1]
        var found: RowSnapshot?
        if let keyReader, !events.wantsQueryPlans {
            let start = ContinuousClock.now
            do {
                found = try keyReader.snapshot(of: mapping, primaryKey: id.primaryKey)
            } catch {
                throw ContextError.from(error, busyTimeout: store.busyTimeout)
            }
            let rows = found == nil ? 0 : 1
            let duration = ContinuousClock.now - start
            events.statementRan(rows: rows, duration: duration, cause: cause, context: context) {
                StatementEvent(sql: mapping.selectByPrimaryKey, arguments: [.integer(id.primaryKey)], rows: rows, duration: duration,
                               cause: cause, faultedObject: id)
            }
        } else {
            try reading(cause: cause, context: context, faultedObject: id) { runner in
                try runner.query(SQLStatement(mapping.selectByPrimaryKey, [.integer(id.primaryKey)])) { row in found = row.snapshot(mapping) }
            }
        }
        if let found { rowCache.insert(found) }
        return found
    }
}

/// A read-only SQLite connection for one kind of statement: an entity's row by primary key
/// (`EntityMapping.selectByPrimaryKey`), each entity's statement prepared on first use and kept. Used from any
/// thread, one at a time, under a lock.
final class PrimaryKeyReader: Sendable {
    private let connection: Mutex<Connection>

    /// The open connection and its statements, closed when the reader goes.
    private struct Connection: ~Copyable {
        let handle: OpaquePointer
        /// By entity number less one; nil until first used.
        var statements: [OpaquePointer?]
        var isOpen = true

        mutating func close() {
            guard isOpen else { return }
            isOpen = false
            for statement in statements { sqlite3_finalize(statement) }
            statements = []
            sqlite3_close_v2(handle)
        }

        deinit {
            guard isOpen else { return }
            for statement in statements { sqlite3_finalize(statement) }
            sqlite3_close_v2(handle)
        }
    }

    /// Closes the connection; reads after that fail.
    func close() {
        connection.withLock { $0.close() }
    }

    /// Opens `path` (a file name, or a `file:` URI) read-only and reads from it once, as GRDB opens its readers; nil when SQLite cannot. The read
    /// opens the write-ahead log and its index with the file, so the connection keeps reading what the store holds
    /// even if those files are unlinked while the coordinator lives (a test's temporary folder, say).
    init?(path: String, entityCount: Int, busyTimeout: TimeInterval) {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nil) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            return nil
        }
        sqlite3_extended_result_codes(handle, 1)
        // Any TimeInterval (infinite, NaN or huge from a caller's Options) becomes a valid number of milliseconds.
        let milliseconds = busyTimeout.isNaN ? 0 : min(max(busyTimeout * 1000, 0), Double(Int32.max))
        sqlite3_busy_timeout(handle, Int32(milliseconds))
        guard sqlite3_exec(handle, "SELECT * FROM sqlite_master LIMIT 1", nil, nil, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return nil
        }
        connection = Mutex(Connection(handle: handle, statements: Array(repeating: nil, count: entityCount)))
    }

    /// The row of `mapping`'s entity with `primaryKey`, nil when there is none.
    func snapshot(of mapping: EntityMapping, primaryKey: Int64) throws -> RowSnapshot? {
        try connection.withLock { connection throws(DatabaseError) -> RowSnapshot? in
            let sql = mapping.selectByPrimaryKey
            guard connection.isOpen else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store is closed", sql: sql) }
            let statement: OpaquePointer
            if let prepared = connection.statements[mapping.number - 1] {
                statement = prepared
            } else {
                var made: OpaquePointer?
                let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &made, nil)
                guard code == SQLITE_OK, let made else { throw Self.failure(connection.handle, code: code, sql: sql) }
                connection.statements[mapping.number - 1] = made
                statement = made
            }
            defer { sqlite3_reset(statement) }
            sqlite3_bind_int64(statement, 1, primaryKey)
            var found: RowSnapshot?
            var arena = RowArena()
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW {
                found = SQLiteValues.snapshot(statement, mapping: mapping, arena: &arena)
                code = sqlite3_step(statement)
            }
            guard code == SQLITE_DONE else { throw Self.failure(connection.handle, code: code, sql: sql) }
            return found
        }
    }

    private static func failure(_ handle: OpaquePointer, code: Int32, sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}
