import Foundation
import GRDB

/// Checks a GraphStore store file against the model it records in `Z_MODELCACHE`, without changing it.
///
/// ```swift
/// let report = try StoreIntegrityCheck.run(path: "chat.sqlite")
/// for violation in report.violations { print(violation) }
/// ```
/// The file is opened through one read-only connection and every check reads inside one transaction, so the report
/// describes one state of the store. Each check is a handful of set-based statements (joins on primary keys,
/// grouped counts), never a walk over objects: the cost grows with the rows, not with relationships between them.
/// See `docs/check.md` for what each check means.
public enum StoreIntegrityCheck {
    public struct Options: Sendable {
        /// At most this many violations of each kind are listed (all are counted); nil lists every one.
        public var limitPerKind: Int?

        public init(limitPerKind: Int? = 50) {
            self.limitPerKind = limitPerKind
        }
    }

    /// Checks the store at `path`. A file that cannot be checked at all (missing, a directory, not SQLite, not a
    /// Faultline store, unreadable) throws the `StoreError` that opening it would; everything wrong inside a store
    /// comes back as violations in the report.
    public static func run(path: String, options: Options = Options()) throws(StoreError) -> IntegrityReport {
        let file = try StoreFileCheck.inspect(path: path)
        guard case .database = file.state else { throw .noSuchFile(path: path) }
        let outcome: Result<IntegrityReport, StoreError>
        do {
            // An idle WAL store is read as immutable, so checking leaves no -wal or -shm behind.
            let queue = try DatabaseQueue(path: PersistentStore.inspectionLocation(path: path, file: file),
                                          configuration: PersistentStore.configuration(readOnly: true, options: .init()))
            defer { try? queue.close() }
            outcome = try queue.read { db -> Result<IntegrityReport, StoreError> in
                switch try StoreRecord.read(db, path: path) {
                case .failure(let error):
                    return .failure(error)
                case .success(let record):
                    let checker = IntegrityChecker(path: path, record: record, limit: options.limitPerKind)
                    return .success(try checker.run(db))
                }
            }
        } catch {
            outcome = .failure(.sqlite(path: path, message: PersistentStore.sqliteMessage(error)))
        }
        return try outcome.get()
    }
}

/// What a store says about itself: its identity, recorded model identity and cached model.
struct StoreRecord {
    let storeUUID: String
    let metadataPropertyList: Data?
    let model: ObjectModel

    /// The bookkeeping rows, or why the file is not a store this check can read.
    static func read(_ db: Database, path: String) throws -> Result<StoreRecord, StoreError> {
        let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        for required in ["Z_METADATA", "Z_PRIMARYKEY", "Z_MODELCACHE"] where !tables.contains(required) {
            return .failure(.notAStore(path: path, reason: "it has no \(required) table"))
        }
        guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1"),
              let uuid = row.lenient("Z_UUID", as: String.self) else {
            return .failure(.notAStore(path: path, reason: "Z_METADATA has no store identity"))
        }
        guard let content = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") else {
            return .failure(.notAStore(path: path, reason: "Z_MODELCACHE is empty, so the model it was made for is unknown"))
        }
        let model: ObjectModel
        do {
            model = try ModelCache.decode(content)
        } catch let error as ModelError {
            return .failure(.notAStore(path: path, reason: "the model in Z_MODELCACHE is not valid: \(error.description)"))
        } catch {
            // Core Data's own stores keep a compiled model here, which only Core Data reads.
            return .failure(.notAStore(path: path, reason: "Z_MODELCACHE does not hold a Faultline model"))
        }
        return .success(StoreRecord(storeUUID: uuid, metadataPropertyList: row.lenient("Z_PLIST", as: Data.self), model: model))
    }
}

/// Keeps the first violations of each kind and counts all of them.
struct ViolationCollector {
    typealias Kind = IntegrityReport.Kind
    typealias Violation = IntegrityReport.Violation

    let limit: Int?
    private(set) var listed: [Violation] = []
    private(set) var counts: [Kind: Int] = [:]
    private var listedPerKind: [Kind: Int] = [:]

    init(limit: Int?) {
        self.limit = limit.map { max(0, $0) }
    }

    /// Room left in the listing of `kind`; nil when unlimited.
    private func room(for kind: Kind) -> Int? {
        limit.map { max(0, $0 - listedPerKind[kind, default: 0]) }
    }

    mutating func add(_ violation: Violation) {
        counts[violation.kind, default: 0] += 1
        if let room = room(for: violation.kind), room == 0 { return }
        listed.append(violation)
        listedPerKind[violation.kind, default: 0] += 1
    }

    /// Runs `sql`, a query whose every row is one violation of `kind`. Reads only as many rows as the listing has
    /// room for; beyond that, SQLite counts the rest.
    mutating func addRows(_ db: Database, _ kind: Kind, sql: String, describe: (Row) -> Violation) throws {
        guard let room = room(for: kind) else {
            for row in try Row.fetchAll(db, sql: sql) { add(describe(row)) }
            return
        }
        var fetched = 0
        if room > 0 {
            let rows = try Row.fetchAll(db, sql: sql + " LIMIT \(room)")
            for row in rows { add(describe(row)) }
            fetched = rows.count
            if fetched < room { return }
        }
        let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(sql))") ?? fetched
        if total > fetched { counts[kind, default: 0] += total - fetched }
    }
}
