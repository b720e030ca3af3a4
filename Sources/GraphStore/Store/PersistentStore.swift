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

        public init(readOnly: Bool = false, createIfMissing: Bool = true, requireWritable: Bool = false, storeUUID: UUID? = nil,
                    busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing
            self.requireWritable = requireWritable
            self.storeUUID = storeUUID
            self.busyTimeout = busyTimeout
        }
    }

    /// The busy timeout of every `Options` made without one (and of the coordinator's own reading connections):
    /// 5 seconds unless changed. The command line sets it from `FAULTLINE_BUSY_TIMEOUT`.
    public static var defaultBusyTimeout: TimeInterval {
        get { busyTimeoutDefault.withLock { $0 } }
        set { busyTimeoutDefault.withLock { $0 = newValue } }
    }

    private static let busyTimeoutDefault = Mutex<TimeInterval>(5)

    public let path: String
    public let schema: StoreSchema
    /// `Z_METADATA.Z_UUID`: the store's identity, as it appears in object URIs.
    public let storeUUID: String
    public let isReadOnly: Bool
    /// Why the store is read-only (`opened read-only`, or why the file cannot be written); nil when it is writable.
    public let readOnlyReason: String?
    /// Whether the store was created by this `open`.
    public let wasCreated: Bool
    /// The connections: a WAL pool when writable, a read-only queue otherwise.
    public let database: any DatabaseReader
    private let writer: (any DatabaseWriter)?

    public var model: ObjectModel { schema.model }

    private init(path: String, schema: StoreSchema, storeUUID: String, database: any DatabaseReader, writer: (any DatabaseWriter)?,
                 readOnlyReason: String? = nil, wasCreated: Bool) {
        self.path = path
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

    /// Opens the store at `path` for `model`, creating it when it does not exist.
    ///
    /// An existing file is checked in this order, each check before anything that could change it: its header
    /// (`StoreFileCheck`), then its tables and recorded model through a read-only connection, then (with
    /// `requireWritable`) whether it could be written; only then are its connections opened. A lock held by another
    /// connection for the whole busy timeout gives `StoreError.locked`.
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
        case .database(_, _, let isWAL):
            let storeUUID = try verify(path: path, isWAL: isWAL, schema: schema, options: options)
            if options.requireWritable, let problem = check.writeProblem {
                throw .notWritable(path: path, reason: problem)
            }
            let readOnly = options.readOnly || check.isReadOnly
            return try wrapSQLiteErrors(path: path, options: options) {
                if readOnly {
                    // A read-only connection to a store in WAL mode makes its -wal and -shm and cannot remove them
                    // when it closes. When the file could be written and has no -wal yet, the connection is opened
                    // for writing but refuses every write (`query_only`): closing last, it removes them again, so
                    // a look at the store leaves the folder as it was. (With a -wal there, someone else's changes
                    // may be in it: those are left alone, for their writer to fold in.)
                    let leavesNoLog = options.readOnly && check.writeProblem == nil && isWAL
                        && !FileManager.default.fileExists(atPath: path + "-wal")
                    let queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: true, options: options, queryOnly: leavesNoLog))
                    return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: queue, writer: nil,
                                           readOnlyReason: options.readOnly ? nil : check.writeProblem, wasCreated: false)
                }
                let pool = try DatabasePool(path: path, configuration: configuration(readOnly: false, options: options))
                return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: pool, writer: pool, wasCreated: false)
            }
        }
    }

    /// - Parameter queryOnly: with `readOnly`, open the connection for writing and refuse writes with
    ///   `PRAGMA query_only` instead (see `open`).
    static func configuration(readOnly: Bool, options: Options, queryOnly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly && !queryOnly
        configuration.busyMode = .timeout(options.busyTimeout)
        configuration.label = "GraphStore"
        configuration.prepareDatabase { db in
            // Predicates' string operators (BEGINSWITH, LIKE, MATCHES, [c], [d]) run as this SQL function.
            PredicateFunctions.install(on: db)
            if queryOnly { try db.execute(sql: "PRAGMA query_only = ON") }
            guard !db.configuration.readonly else { return }
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        return configuration
    }

    /// Creates the schema and bookkeeping rows in one transaction; a failure removes the new file.
    private static func create(path: String, schema: StoreSchema, storeUUID: UUID, options: Options) throws(StoreError) -> PersistentStore {
        do {
            let pool = try DatabasePool(path: path, configuration: configuration(readOnly: false, options: options))
            let uuidText = storeUUID.uuidString
            try pool.write { db in
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
            return PersistentStore(path: path, schema: schema, storeUUID: uuidText, database: pool, writer: pool, wasCreated: true)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
            throw storeError(error, path: path, options: options)
        }
    }

    /// Checks, through a read-only connection, that the file is a store for `schema`; returns its UUID.
    ///
    /// A WAL-mode file with no `-wal` beside it is not open anywhere (the last connection to close removes the
    /// `-wal`), and the file alone holds all of it: it is read as immutable, so SQLite takes no lock and creates no
    /// `-wal` or `-shm` file beside a file that may yet be refused. Otherwise (a `-wal` exists: the store is in use)
    /// it is read as any reader would, sharing the other connections' `-wal` and `-shm`.
    private static func verify(path: String, isWAL: Bool, schema: StoreSchema, options: Options) throws(StoreError) -> String {
        let location = inspectionLocation(path: path, isWAL: isWAL)
        let result: Result<String, StoreError> = wrapSQLiteErrorsAsResult(path: path, options: options) {
            let queue = try DatabaseQueue(path: location, configuration: configuration(readOnly: true, options: options))
            defer { try? queue.close() }
            return try queue.read { db -> Result<String, StoreError> in
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
                    // A store written by Core Data itself: its hashes are Apple's, so compare the layout instead.
                    differences = StoreCatalog(schema: schema).differences(from: try StoreCatalog.read(db))
                }
                guard differences.isEmpty else { return .failure(.modelMismatch(path: path, differences: differences)) }
                return .success(uuid)
            }
        }
        return try result.get()
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

    private static func wrapSQLiteErrorsAsResult<T>(path: String, options: Options, _ body: () throws -> Result<T, StoreError>)
        -> Result<T, StoreError> {
        do {
            return try body()
        } catch {
            return .failure(storeError(error, path: path, options: options))
        }
    }

    /// An error from opening or reading the file as a `StoreError`: `locked` when another connection held its lock
    /// for the whole busy timeout, else SQLite's words.
    private static func storeError(_ error: any Error, path: String, options: Options) -> StoreError {
        if let error = error as? DatabaseError, isBusy(error) {
            return .locked(path: path, seconds: options.busyTimeout)
        }
        return .sqlite(path: path, message: sqliteMessage(error))
    }

    private static func isBusy(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// What a short read-only look at the file at `path` (its header read by `StoreFileCheck`) should open: for a
    /// WAL-mode file with no `-wal` beside it, not open anywhere, the immutable URI, so that SQLite creates no `-wal`
    /// or `-shm` beside it; otherwise `path` itself. Not for connections kept open: an immutable one takes no locks
    /// and would not see another process's later writes.
    static func inspectionLocation(path: String, file: StoreFileCheck) -> String {
        guard case .database(_, _, let isWAL) = file.state else { return path }
        return inspectionLocation(path: path, isWAL: isWAL)
    }

    private static func inspectionLocation(path: String, isWAL: Bool) -> String {
        guard isWAL, !FileManager.default.fileExists(atPath: path + "-wal") else { return path }
        return immutableURI(path) ?? path
    }

    /// `file:///…?immutable=1` for `path` (made absolute, every byte a URI could misread escaped); nil when this
    /// SQLite library does not read file names as URIs.
    static func immutableURI(_ path: String) -> String? {
        guard sqlite3_compileoption_used("USE_URI") != 0 else { return nil }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._~-".utf8)
        var escaped = ""
        for byte in absolute.utf8 {
            if plain.contains(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return "file://" + escaped + "?immutable=1"
    }

    /// SQLite's own words for an error, without GRDB's SQL and argument decoration; for a lock another connection
    /// held past the busy timeout, `the database is locked by another connection (still busy after 5 s)` (the
    /// default busy timeout: the connection's own is not known here).
    static func sqliteMessage(_ error: any Error) -> String {
        if let error = error as? DatabaseError, isBusy(error) {
            return StoreError.lockedMessage(seconds: defaultBusyTimeout)
        }
        if let error = error as? DatabaseError {
            return error.message ?? "SQLite error \(error.resultCode.rawValue)"
        }
        return String(describing: error)
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
