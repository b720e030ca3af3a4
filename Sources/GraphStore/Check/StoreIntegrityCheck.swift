import Foundation
import GRDB

/// Checks a GraphStore store file against the model it records in `Z_MODELCACHE`, without changing it.
///
/// ```swift
/// let report = try StoreIntegrityCheck.run(path: "chat.sqlite")
/// for violation in report.violations { print(violation) }
/// ```
/// The file is opened through one connection that only reads (a `StoreLook`: it leaves no file beside the store) and
/// every check reads inside one transaction, so the report describes one state of the store, even while another
/// process writes it. Each check is a handful of set-based statements (joins on primary keys,
/// grouped counts), never a walk over objects: the cost grows with the rows, not with relationships between them.
/// See `docs/check.md` for what each check means.
public enum StoreIntegrityCheck {
    public struct Options: Sendable {
        /// At most this many violations of each kind are listed (all are counted); nil lists every one.
        public var limitPerKind: Int?
        /// How long the check waits for another connection's lock before failing.
        public var busyTimeout: TimeInterval
        /// The model to check against instead of the one in `Z_MODELCACHE` (for a store without one, or to check a
        /// store against its model file).
        public var model: ObjectModel?

        public init(limitPerKind: Int? = 50, busyTimeout: TimeInterval = PersistentStore.standardBusyTimeout, model: ObjectModel? = nil) {
            self.limitPerKind = limitPerKind
            self.busyTimeout = busyTimeout
            self.model = model
        }
    }

    /// Checks the store at `path`. A file that cannot be checked at all (missing, a directory, not SQLite, not a
    /// Faultline store, unreadable) throws the `StoreError` that opening it would; everything wrong inside a store
    /// comes back as violations in the report.
    public static func run(path: String, options: Options = Options()) throws(StoreError) -> IntegrityReport {
        // The whole check is one read transaction on a connection that shares SQLite's locks with any writer, so
        // the report describes one state of the store while another process writes it. Where this process may not
        // make the -wal and -shm that takes, an immutable look reads the file alone; should the file change under it
        // (a writer started meanwhile), the check is run again, by which time the writer's -wal is there to join.
        let file = try StoreFileCheck.inspect(path: path)
        guard case .database = file.state else { throw .noSuchFile(path: path) }
        let busy = "another process kept writing it while it was checked, and this process cannot share the -wal and "
            + "-shm files that would let it read one state of it; check it again later"
        return try StoreLook.read(path: path, file: file, whileChanging: .unreadable(path: path, reason: busy)) { look in
            do {
                return try check(path: path, look: look, options: options).mapError { LookError(storeError: $0) }
            } catch {
                return .failure(LookError(reading: error, path: path, look: look, busyTimeout: options.busyTimeout))
            }
        }.value
    }

    /// The check through one look: the report, or why the file is not a store it can check; SQLite's errors thrown.
    private static func check(path: String, look: StoreLook, options: Options) throws -> Result<IntegrityReport, StoreError> {
        let queue = try look.openQueue(busyTimeout: options.busyTimeout)
        defer { try? queue.close() }
        // Kept as soon as every check has run: on a damaged file, ending the read transaction can fail too (SQLite
        // reports the damage it met again), which must not throw away a report that says so.
        var finished: Result<IntegrityReport, StoreError>?
        do {
            return try queue.read { db -> Result<IntegrityReport, StoreError> in
                switch try StoreRecord.read(db, path: path, model: options.model) {
                case .failure(let error):
                    finished = .failure(error)
                case .success(let record):
                    let checker = IntegrityChecker(path: path, record: record, limit: options.limitPerKind)
                    finished = .success(try checker.run(db))
                }
                return finished ?? .failure(.noSuchFile(path: path))
            }
        } catch {
            guard let finished else { throw error }
            return finished
        }
    }
}

/// What a store says about itself: its identity, recorded model identity and cached model.
struct StoreRecord {
    let storeUUID: String
    let metadataPropertyList: Data?
    let model: ObjectModel
    /// Who wrote the cached model: GraphStore, or Core Data (whose version hashes and trigger names are its own).
    let format: StoredModel.Format

    /// The bookkeeping rows, or why the file is not a store this check can read. With `model`, the store is
    /// checked against it and its `Z_MODELCACHE` is not read.
    static func read(_ db: Database, path: String, model: ObjectModel? = nil) throws -> Result<StoreRecord, StoreError> {
        let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        for required in ["Z_METADATA", "Z_PRIMARYKEY"] + (model == nil ? ["Z_MODELCACHE"] : []) where !tables.contains(required) {
            return .failure(.notAStore(path: path, reason: "it has no \(required) table"))
        }
        guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1"),
              let uuid = row.lenient("Z_UUID", as: String.self) else {
            return .failure(.notAStore(path: path, reason: "Z_METADATA has no store identity"))
        }
        let plist = row.lenient("Z_PLIST", as: Data.self)
        if let model {
            // Who wrote the store: GraphStore records its own model identity beside Core Data's keys.
            let recorded = plist.flatMap { ModelIdentity.read(metadataPropertyList: $0).identity }
            return .success(StoreRecord(storeUUID: uuid, metadataPropertyList: plist, model: model, format: recorded == nil ? .coreData : .graphStore))
        }
        guard let content = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") else {
            return .failure(.notAStore(path: path, reason: "Z_MODELCACHE is empty, so the model it was made for is unknown"))
        }
        let stored: StoredModel
        do {
            stored = try StoredModel.decode(content)
        } catch {
            return .failure(.notAStore(path: path, reason: error.description))
        }
        return .success(StoreRecord(storeUUID: uuid, metadataPropertyList: plist, model: stored.model, format: stored.format))
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

    /// Runs `sql`, a query whose every row is one violation of `kind` (`addGroupedRows`, one violation a row).
    mutating func addRows(_ db: Database, _ kind: Kind, sql: String, describe: (Row) -> Violation) throws {
        try addGroupedRows(db, kind, sql: "SELECT *, 1 AS violations FROM (\(sql))") { [describe($0)] }
    }

    /// Runs `sql`, a query whose every row holds one or more violations of `kind` (`describe` gives them) and whose
    /// column `violations` says how many. Reads only as many rows as the listing has room for; beyond that, SQLite
    /// counts the rest.
    mutating func addGroupedRows(_ db: Database, _ kind: Kind, sql: String, describe: (Row) -> [Violation]) throws {
        let room = room(for: kind)
        let rows = try Row.fetchAll(db, sql: sql + (room.map { " LIMIT \($0)" } ?? ""))
        var added = 0
        for row in rows {
            for violation in describe(row) { add(violation) }
            added += row.lenient("violations") ?? 0
        }
        guard let room, rows.count == room else { return }
        let total = try Int.fetchOne(db, sql: "SELECT SUM(violations) FROM (\(sql))") ?? added
        if total > added { counts[kind, default: 0] += total - added }
    }
}
