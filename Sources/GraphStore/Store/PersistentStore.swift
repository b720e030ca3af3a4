import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// An SQLite file laid out as Core Data lays out its stores, opened for one model.
///
/// ```swift
/// let store = try PersistentStore.open(path: "chat.sqlite", model: model)
/// print(store.storeUUID)   // appears in object URIs: x-coredata://<UUID>/Chat/p1
/// ```
/// A new file gets the whole schema in one transaction. An existing one is checked before anything is written:
/// a file that is not a whole SQLite database, not a store, or a store made for another model is refused with a
/// `StoreError` and left byte-for-byte as it was.
public final class PersistentStore: Sendable {
    public struct Options: Sendable {
        /// Open read-only even when the file could be written.
        public var readOnly = false
        /// Create the store when the file does not exist (otherwise `StoreError.noSuchFile`).
        public var createIfMissing = true
        /// Refuse, with `StoreError.notWritable`, a file this process could not write (or whose folder it could not
        /// create `-wal` and `-shm` files in), before any connection is made; also when opening read-only for a
        /// look before a write. Without it such a file is opened read-only.
        public var requireWritable = false
        /// The identity of a new store; random when nil (fixtures pass one derived from their seed).
        public var storeUUID: UUID?
        /// How long a statement waits for another connection's lock before failing.
        public var busyTimeout: TimeInterval
        /// Run `PRAGMA quick_check` over the whole file before the first write after opening, and refuse every write
        /// of a store it finds damaged (`StoreError.damaged`). For a tool that opens stores it did not make only to
        /// look, and writes only when asked (the browser); off by default, as Core Data does no such check.
        /// (`requireWritable` checks at open instead.)
        public var checkBeforeFirstWrite: Bool

        public init(readOnly: Bool = false, createIfMissing: Bool = true, requireWritable: Bool = false, storeUUID: UUID? = nil,
                    busyTimeout: TimeInterval = PersistentStore.standardBusyTimeout, checkBeforeFirstWrite: Bool = false) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing
            self.requireWritable = requireWritable
            self.storeUUID = storeUUID
            self.busyTimeout = busyTimeout
            self.checkBeforeFirstWrite = checkBeforeFirstWrite
        }
    }

    /// The busy timeout of an `Options` made without one: 5 seconds. (The command line passes its
    /// `FAULTLINE_BUSY_TIMEOUT` to every store it opens.)
    public static let standardBusyTimeout: TimeInterval = 5

    public let path: String
    public let schema: StoreSchema
    /// `Z_METADATA.Z_UUID`: the store's identity, as it appears in object URIs.
    public let storeUUID: String
    public let isReadOnly: Bool
    /// Why the store is read-only (`opened read-only`, or why the file cannot be written); nil when it is writable.
    public let readOnlyReason: String?
    /// Whether the store was created by this `open`.
    public let wasCreated: Bool
    /// How long its connections wait for another connection's lock (`Options.busyTimeout`).
    public let busyTimeout: TimeInterval
    /// The store's connection: writable unless the store was opened read-only (a look's queue that only reads).
    public let database: any DatabaseReader
    private let writer: (any DatabaseWriter)?

    public var model: ObjectModel { schema.model }

    /// How the read-only connection reaches the file; nil for a writable store.
    let look: StoreLook?
    /// What further reading connections open (the coordinator's): the look's URI when it has options SQLite must
    /// honour on every connection (immutable, a read-only `-shm`); otherwise the path, whose `-wal` and `-shm`, when
    /// the look made them, they share.
    var readerLocation: String {
        guard let look, look.kind != .queryOnly else { return path }
        return look.location
    }

    /// Whether the whole file has passed `quick_check` since the store was opened, which the first write waits for (see
    /// `checkedWriter()`); nil until it has run.
    private let writeCheck: Mutex<Result<Void, StoreError>?>

    private init(path: String, schema: StoreSchema, storeUUID: String, database: any DatabaseReader, writer: (any DatabaseWriter)?,
                 look: StoreLook?, busyTimeout: TimeInterval, readOnlyReason: String? = nil, wasCreated: Bool, checked: Bool = false) {
        self.busyTimeout = busyTimeout
        self.writeCheck = Mutex(checked || wasCreated ? .success(()) : nil)
        self.path = path
        self.look = look
        self.schema = schema
        self.storeUUID = storeUUID
        self.database = database
        self.writer = writer
        self.isReadOnly = writer == nil
        self.readOnlyReason = writer == nil ? readOnlyReason ?? "opened read-only" : nil
        self.wasCreated = wasCreated
    }

    /// The writable connections, or `StoreError.readOnly` for a store opened read-only.
    public func databaseWriter() throws(StoreError) -> any DatabaseWriter {
        guard let writer else { throw .readOnly(path: path) }
        return writer
    }

    /// The writable connections for a write. With `Options.checkBeforeFirstWrite`, the first call after opening runs
    /// `PRAGMA quick_check` over the whole file, unless the open ran it already, and a damaged store gives `StoreError.damaged` to this and every later
    /// write, so nothing is written into a b-tree SQLite finds broken (a write there spreads the damage). A browser
    /// that opens a store only to look pays nothing; the first save pays one read of the whole file.
    public func checkedWriter() throws(StoreError) -> any DatabaseWriter {
        let writer = try databaseWriter()
        let result = writeCheck.withLock { state -> Result<Void, StoreError> in
            if let state { return state }
            let outcome: Result<Void, StoreError>
            do throws(StoreError) {
                try Self.quickCheck(writer, path: path, options: Options())
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            state = outcome
            return outcome
        }
        try result.get()
        return writer
    }

    /// Opens the store at `path` for `model`, creating it when it does not exist.
    ///
    /// An existing file is checked in this order, each check before anything that could change it: its header
    /// (`StoreFileCheck`), then its tables and recorded model through a connection that only reads (a `StoreLook`),
    /// then (with `requireWritable`) whether it could be written; only then are its connections opened. A store
    /// opened read-only keeps that look's connection: reading it makes no file that stays beside it. A lock held by
    /// another connection for the whole busy timeout gives `StoreError.locked`.
    public static func open(path: String, model: ObjectModel, options: Options = Options()) throws(StoreError) -> PersistentStore {
        let schema = StoreSchema(model: model)
        let check = try StoreFileCheck.inspect(path: path)
        switch check.state {
        case .absent:
            guard options.createIfMissing else { throw .noSuchFile(path: path) }
            if let problem = check.writeProblem {
                throw .notWritable(path: path, reason: "\(problem), so the store cannot be created")
            }
            guard !options.readOnly else {
                throw .unreadable(path: path, reason: "the store does not exist, and opening read-only cannot create it")
            }
            return try create(path: path, schema: schema, storeUUID: options.storeUUID ?? UUID(), options: options)
        case .database:
            let readOnly = options.readOnly || check.isReadOnly
            if readOnly {
                // The look the store was verified through is the one it is read through: its connection is kept,
                // unless the caller is about to write a file it cannot.
                let refused = options.requireWritable ? check.writeProblem : nil
                let (storeUUID, look, queue) = try verifyWithRetry(path: path, file: check, schema: schema, options: options,
                                                                   keepOpen: refused == nil)
                if let refused { throw .notWritable(path: path, reason: refused) }
                guard let queue else { throw .sqlite(path: path, message: "the store could not be opened") }
                // A look before a write (a delete's plan): the write will follow on another open.
                if options.requireWritable {
                    do throws(StoreError) {
                        try quickCheck(queue, path: path, options: options, look: look)
                    } catch {
                        try? queue.close()
                        throw error
                    }
                }
                return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: queue, writer: nil, look: look, busyTimeout: options.busyTimeout,
                                       readOnlyReason: options.readOnly ? nil : check.writeProblem, wasCreated: false)
            }
            let (storeUUID, look, queue) = try verifyWithRetry(path: path, file: check, schema: schema, options: options, keepOpen: true)
            defer { try? queue?.close() }
            if options.requireWritable, let problem = check.writeProblem {
                throw .notWritable(path: path, reason: problem)
            }
            // Before anything is written. A -wal no connection has open is a writer's that was interrupted, or one
            // copied beside the file: this open would fold it into the file, so it must belong there. A caller
            // about to write (`requireWritable`) has the whole file checked first, once: writes into a damaged
            // b-tree spread the damage.
            // (`StoreFileCheck` has refused a log of another page size already.)
            let orphanedLog = StoreFileCheck.hasOrphanedLog(path)
            var checked = !options.checkBeforeFirstWrite
            if options.requireWritable || orphanedLog, let queue {
                try quickCheck(queue, path: path, options: options, look: look)
                checked = true
            }
            try? queue?.close()
            return try wrapSQLiteErrors(path: path, options: options) {
                // A queue, not GRDB's pool: opening a pool switches the file to WAL and, when its -wal is absent or
                // empty, commits a table made and dropped at once, so that merely opening a store writable would
                // change it (its schema version, a page) and turn a rollback-journal store into a WAL one. A store
                // stays in the journal mode it has; the coordinator reads through connections of its own.
                let writer = try DatabaseQueue(path: path, configuration: configuration(readOnly: false, options: options))
                return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: writer, writer: writer, look: nil,
                                       busyTimeout: options.busyTimeout, wasCreated: false, checked: checked)
            }
        }
    }

    static func configuration(readOnly: Bool, options: Options) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(options.busyTimeout)
        configuration.label = "GraphStore"
        configuration.prepareDatabase { db in
            // Predicates' string operators (BEGINSWITH, LIKE, MATCHES, [c], [d]) run as this SQL function.
            PredicateFunctions.install(on: db)
            CoreDataFunctions.install(on: db)
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // A writer to a WAL-mode file syncs at checkpoints, not at every commit, as SQLite advises for WAL (a
            // commit survives a crash of the process, and a power loss can take back only the last ones). A
            // rollback-journal file keeps SQLite's default, FULL: NORMAL there could corrupt it on a power loss.
            if !readOnly, try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" {
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        }
        return configuration
    }

    /// Creates the schema and bookkeeping rows in one transaction; a failure removes the new file.
    private static func create(path: String, schema: StoreSchema, storeUUID: UUID, options: Options) throws(StoreError) -> PersistentStore {
        do {
            // A new store is a WAL store, as Core Data makes them.
            var walConfiguration = configuration(readOnly: false, options: options)
            walConfiguration.journalMode = .wal
            let writer = try DatabaseQueue(path: path, configuration: walConfiguration)
            let uuidText = storeUUID.uuidString
            try writer.write { db in
                for statement in schema.createStatements {
                    try db.execute(sql: statement)
                }
                for entity in schema.model.entities {
                    let parentNumber = entity.parentName.flatMap(schema.model.entity(named:))?.number ?? 0
                    try db.execute(
                        sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                        arguments: [entity.number, entity.name, parentNumber])
                }
                try db.execute(
                    sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                    arguments: [uuidText, ModelIdentity(model: schema.model).metadataPropertyList()])
                try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [ModelCache.encode(schema.model)])
            }
            return PersistentStore(path: path, schema: schema, storeUUID: uuidText, database: writer, writer: writer, look: nil,
                                   busyTimeout: options.busyTimeout, wasCreated: true)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
            throw storeError(error, path: path, options: options)
        }
    }

    /// Checks, through a look at the file (`StoreLook`: a connection that only reads and makes no file that stays),
    /// that it is a store for `schema`; returns its UUID, the look, and with `keepOpen` the connection. A look that
    /// may have read a changing file, or met a writer closing the store, is taken again (`StoreLook.read`).
    private static func verifyWithRetry(path: String, file: StoreFileCheck, schema: StoreSchema, options: Options, keepOpen: Bool)
        throws(StoreError) -> (uuid: String, look: StoreLook, queue: DatabaseQueue?) {
        let reading = try StoreLook.read(path: path, file: file, forWriting: !options.readOnly,
                                         discard: { opened in try? opened.queue?.close() }) { look in
            verify(path: path, look: look, schema: schema, options: options, keepOpen: keepOpen)
        }
        return (reading.value.uuid, reading.look, reading.value.queue)
    }

    private static func verify(path: String, look: StoreLook, schema: StoreSchema, options: Options, keepOpen: Bool)
        -> Result<(uuid: String, queue: DatabaseQueue?), LookError> {
        do {
            switch try verifyOnce(path: path, look: look, schema: schema, options: options, keepOpen: keepOpen) {
            case .success(let opened): return .success(opened)
            case .failure(let refusal): return .failure(LookError(storeError: refusal, sqliteError: nil))
            }
        } catch {
            return .failure(LookError(storeError: storeError(error, path: path, options: options, look: look), sqliteError: error))
        }
    }

    private static func verifyOnce(path: String, look: StoreLook, schema: StoreSchema, options: Options, keepOpen: Bool) throws
        -> Result<(uuid: String, queue: DatabaseQueue?), StoreError> {
        try {
            let queue = try look.openQueue(busyTimeout: options.busyTimeout)
            var keep = false
            defer { if !keep { try? queue.close() } }
            let found = try queue.read { db -> Result<String, StoreError> in
                let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                for required in ["Z_METADATA", "Z_PRIMARYKEY"] where !tables.contains(required) {
                    return .failure(.notAStore(path: path, reason: "it has no \(required) table"))
                }
                guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1"),
                      let uuid = row.lenient("Z_UUID", as: String.self) else {
                    return .failure(.notAStore(path: path, reason: "Z_METADATA has no store identity"))
                }
                let plist = row.lenient("Z_PLIST", as: Data.self) ?? Data()
                let (isPropertyList, recorded) = ModelIdentity.read(metadataPropertyList: plist)
                guard isPropertyList else {
                    return .failure(.notAStore(path: path, reason: "Z_METADATA.Z_PLIST is not a property list"))
                }
                let differences: [String]
                if let recorded {
                    differences = ModelIdentity(model: schema.model).differences(fromRecorded: recorded)
                } else {
                    // A store written by Core Data itself: its hashes are Apple's, so compare the layout instead
                    // (the model's tables, columns and indexes; a table or index of the app's own beside them is
                    // not the model's business, as a GraphStore store's recorded hashes ignore it too). Where the
                    // layout agrees, the entity numbers must too: rows are told apart by Z_ENT.
                    let layout = StoreCatalog(schema: schema).differences(from: try StoreCatalog.read(db), ignoringCoreDataBookkeeping: true,
                                                                          ignoringExtras: true)
                    differences = !layout.isEmpty ? layout
                        : StoreCatalog.entityNumberDifferences(model: schema.model, recorded: try StoreCatalog.readEntityNumbers(db))
                }
                guard differences.isEmpty else { return .failure(.modelMismatch(path: path, differences: differences)) }
                // The model matches, so every table it lays out must be there: a store missing one would read as
                // empty where it has lost data. (SQLite compares table names without case.)
                let present = Set(tables.map { $0.uppercased() })
                let missing = (schema.tables.map(\.name) + schema.joinTables.map(\.name)).filter { !present.contains($0.uppercased()) }
                if !missing.isEmpty {
                    let names = missing.joined(separator: ", ")
                    return .failure(.damaged(path: path, reason: "its table\(missing.count == 1 ? "" : "s") \(names) \(missing.count == 1 ? "is" : "are") missing"))
                }
                return .success(uuid)
            }
            switch found {
            case .failure(let error):
                return .failure(error)
            case .success(let uuid):
                keep = keepOpen
                return .success((uuid, keepOpen ? queue : nil))
            }
        }()
    }

    /// `PRAGMA quick_check` through the look's connection: the b-tree pages of every table and index are well
    /// formed (not that indexes match their tables, which `integrity_check` adds). About a second for a store of a
    /// million messages, so it runs only where a write is about to follow.
    private static func quickCheck(_ reader: any DatabaseReader, path: String, options: Options, look: StoreLook? = nil) throws(StoreError) {
        let result: Result<String?, StoreError> = wrapSQLiteErrorsAsResult(path: path, options: options, look: look) {
            .success(try reader.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") })
        }
        switch result {
        case .success(let answer):
            guard let answer, answer != "ok" else { return }
            // e.g. "*** in database main ***\nPage 901: btreeInitPage() returns error code 11"
            let lines = answer.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("***") }
            throw .damaged(path: path, reason: "SQLite's quick_check: \(lines.joined(separator: "; "))")
        case .failure(.sqlite(_, let message)):
            throw .damaged(path: path, reason: message)
        case .failure(let error):
            throw error
        }
    }

    private static func wrapSQLiteErrors<T>(path: String, options: Options, _ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw storeError(error, path: path, options: options)
        }
    }

    private static func wrapSQLiteErrorsAsResult<T>(path: String, options: Options, look: StoreLook? = nil,
                                                     _ body: () throws -> Result<T, StoreError>) -> Result<T, StoreError> {
        do {
            return try body()
        } catch {
            return .failure(storeError(error, path: path, options: options, look: look))
        }
    }

    /// An error from opening or reading the file as a `StoreError`: `locked` when another connection held its lock
    /// for the whole busy timeout, else SQLite's words.
    private static func storeError(_ error: any Error, path: String, options: Options, look: StoreLook? = nil) -> StoreError {
        if let error = error as? DatabaseError, isBusy(error) {
            return .locked(path: path, seconds: options.busyTimeout)
        }
        if let reason = lookFailure(error, path: path, look: look) {
            return .unreadable(path: path, reason: reason)
        }
        return .sqlite(path: path, message: sqliteMessage(error, busyTimeout: options.busyTimeout))
    }

    /// What SQLite's `attempt to write a readonly database` or `unable to open database file` means when a
    /// connection that only reads meets a file it could read only by changing it; nil for any other error.
    static func lookFailure(_ error: any Error, path: String, look: StoreLook?) -> String? {
        guard let error = error as? DatabaseError else { return nil }
        let name = (path as NSString).lastPathComponent
        if error.extendedResultCode == .SQLITE_READONLY_ROLLBACK {
            return "it has a hot journal, \(name)-journal, left by a write that was interrupted; SQLite must roll that "
                + "write back before the store can be read, which a read-only connection cannot do: open the store once "
                + "with write access to it and its folder, which rolls the write back"
        }
        if error.resultCode == .SQLITE_PROTOCOL, let look, look.kind == .shared, look.indexReadOnly {
            return "its index of the write-ahead log, \(name)-shm, is out of date after a write that was interrupted, "
                + "and reading without write access cannot rebuild it: open the store once with write access to it "
                + "and its folder, which rebuilds it"
        }
        if error.resultCode == .SQLITE_CANTOPEN, look?.kind == .shared,
           FileManager.default.fileExists(atPath: path + "-wal"), !FileManager.default.fileExists(atPath: path + "-shm") {
            return "it has a write-ahead log, \(name)-wal, but not the \(name)-shm index that goes with it, and reading "
                + "without write access cannot make one: open the store once with write access to it and its folder, "
                + "which folds the log into the file"
        }
        return nil
    }

    private static func isBusy(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// SQLite's own words for an error, without GRDB's SQL and argument decoration; for a lock another connection
    /// held past the connection's `busyTimeout`, `the database is locked by another connection (still busy after
    /// 5 s)`.
    static func sqliteMessage(_ error: any Error, busyTimeout: TimeInterval) -> String {
        guard let error = error as? DatabaseError else { return String(describing: error) }
        return SQLiteError(error, busyTimeout: busyTimeout).summary
    }
}

/// The model a store was made for, kept in `Z_MODELCACHE` so tools can read a store without its model file.
public enum ModelCache {
    public static func encode(_ model: ObjectModel) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try! encoder.encode(model.declarations)  // cannot fail: strings, integers and booleans only (no Double)
    }

    public static func decode(_ data: Data) throws -> ObjectModel {
        try ObjectModel(JSONDecoder().decode([EntityDescription].self, from: data))
    }
}
