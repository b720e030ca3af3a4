import Foundation
import GRDB

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
        /// The identity of a new store; random when nil (fixtures pass one derived from their seed).
        public var storeUUID: UUID?
        /// How long a statement waits for another connection's lock before failing.
        public var busyTimeout: TimeInterval = 5

        public init(readOnly: Bool = false, createIfMissing: Bool = true, storeUUID: UUID? = nil, busyTimeout: TimeInterval = 5) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing
            self.storeUUID = storeUUID
            self.busyTimeout = busyTimeout
        }
    }

    public let path: String
    public let schema: StoreSchema
    /// `Z_METADATA.Z_UUID`: the store's identity, as it appears in object URIs.
    public let storeUUID: String
    public let isReadOnly: Bool
    /// Whether the store was created by this `open`.
    public let wasCreated: Bool
    /// The connections: a WAL pool when writable, a read-only queue otherwise.
    public let database: any DatabaseReader
    private let writer: (any DatabaseWriter)?

    public var model: ObjectModel { schema.model }

    private init(path: String, schema: StoreSchema, storeUUID: String, database: any DatabaseReader, writer: (any DatabaseWriter)?, wasCreated: Bool) {
        self.path = path
        self.schema = schema
        self.storeUUID = storeUUID
        self.database = database
        self.writer = writer
        self.isReadOnly = writer == nil
        self.wasCreated = wasCreated
    }

    /// The writable connections, or `StoreError.readOnly` for a store opened read-only.
    public func databaseWriter() throws(StoreError) -> any DatabaseWriter {
        guard let writer else { throw .readOnly(path: path) }
        return writer
    }

    /// Opens the store at `path` for `model`, creating it when it does not exist.
    public static func open(path: String, model: ObjectModel, options: Options = Options()) throws(StoreError) -> PersistentStore {
        let schema = StoreSchema(model: model)
        let check = try StoreFileCheck.inspect(path: path)
        switch check.state {
        case .absent:
            guard options.createIfMissing else { throw .noSuchFile(path: path) }
            guard !check.isReadOnly, !options.readOnly else {
                throw .unreadable(path: path, reason: "the folder is not writable, so the store cannot be created")
            }
            return try create(path: path, schema: schema, storeUUID: options.storeUUID ?? UUID())
        case .database:
            let storeUUID = try verify(path: path, schema: schema, options: options)
            let readOnly = options.readOnly || check.isReadOnly
            return try wrapSQLiteErrors(path: path) {
                if readOnly {
                    let queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: true, options: options))
                    return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: queue, writer: nil, wasCreated: false)
                }
                let pool = try DatabasePool(path: path, configuration: configuration(readOnly: false, options: options))
                return PersistentStore(path: path, schema: schema, storeUUID: storeUUID, database: pool, writer: pool, wasCreated: false)
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
            guard !db.configuration.readonly else { return }
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        return configuration
    }

    /// Creates the schema and bookkeeping rows in one transaction; a failure removes the new file.
    private static func create(path: String, schema: StoreSchema, storeUUID: UUID) throws(StoreError) -> PersistentStore {
        do {
            let pool = try DatabasePool(path: path, configuration: configuration(readOnly: false, options: Options()))
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
            throw .sqlite(path: path, message: sqliteMessage(error))
        }
    }

    /// Checks, through a read-only connection, that the file is a store for `schema`; returns its UUID.
    private static func verify(path: String, schema: StoreSchema, options: Options) throws(StoreError) -> String {
        let result: Result<String, StoreError> = wrapSQLiteErrorsAsResult(path: path) {
            let queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: true, options: options))
            defer { try? queue.close() }
            return try queue.read { db -> Result<String, StoreError> in
                let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                for required in ["Z_METADATA", "Z_PRIMARYKEY"] where !tables.contains(required) {
                    return .failure(.notAStore(path: path, reason: "it has no \(required) table"))
                }
                guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1"),
                      let uuid = row["Z_UUID"] as String? else {
                    return .failure(.notAStore(path: path, reason: "Z_METADATA has no store identity"))
                }
                let plist = (row["Z_PLIST"] as Data?) ?? Data()
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

    private static func wrapSQLiteErrors<T>(path: String, _ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw .sqlite(path: path, message: sqliteMessage(error))
        }
    }

    private static func wrapSQLiteErrorsAsResult<T>(path: String, _ body: () throws -> Result<T, StoreError>) -> Result<T, StoreError> {
        do {
            return try body()
        } catch {
            return .failure(.sqlite(path: path, message: sqliteMessage(error)))
        }
    }

    /// SQLite's own words for an error, without GRDB's SQL and argument decoration.
    static func sqliteMessage(_ error: any Error) -> String {
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
        // Plain structs of strings, numbers and booleans always encode.
        return try! encoder.encode(model.declarations)
    }

    public static func decode(_ data: Data) throws -> ObjectModel {
        try ObjectModel(JSONDecoder().decode([EntityDescription].self, from: data))
    }
}
