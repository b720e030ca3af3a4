import Foundation
import GRDBSQLite
import GraphStore
import Synchronization

/// A bare `sqlite3*` connection: the floor every Faultline variant is compared with. No GRDB, no graph, no events;
/// just the C API, used the way a careful hand-written data layer would use it.
final class RawConnection {
    let handle: OpaquePointer
    let path: String

    /// Opens `path` (creating it unless `readOnly`) in multi-thread mode, as GRDB opens its connections.
    init(path: String, readOnly: Bool) throws(BenchmarkError) {
        var connection: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let code = sqlite3_open_v2(path, &connection, access | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(connection)
            throw BenchmarkError("raw SQLite: cannot open \(path): \(message)")
        }
        self.handle = connection
        self.path = path
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// The pragmas a GraphStore writer connection runs with (GRDB's pool settings, and statement journals kept in
    /// memory), so the raw peer writes the same kind of file the same way.
    func configureLikeAPool() throws(BenchmarkError) {
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA temp_store = MEMORY")
    }

    /// Runs one or more statements, discarding any rows.
    func execute(_ sql: String) throws(BenchmarkError) {
        var failure: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &failure)
        guard code == SQLITE_OK else {
            let message = failure.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(failure)
            throw BenchmarkError("raw SQLite: \(message) in: \(sql)")
        }
    }

    func prepare(_ sql: String) throws(BenchmarkError) -> RawStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw BenchmarkError("raw SQLite: cannot prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return RawStatement(handle: statement, connection: self)
    }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs `work`, and with `enabled` also returns the distinct statements it ran on this connection, as SQLite's
    /// own trace saw them start (`SQLITE_TRACE_STMT`, the statement's text as prepared).
    func recording<T>(if enabled: Bool, _ work: () throws -> T) rethrows -> (T, sql: [String]?) {
        guard enabled else { return (try work(), nil) }
        let recorder = SQLRecorder()
        return try withExtendedLifetime(recorder) {
            sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, statement, _ in
                guard let context, let statement, let text = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
                Unmanaged<SQLRecorder>.fromOpaque(context).takeUnretainedValue().record(String(cString: text))
                return 0
            }, Unmanaged.passUnretained(recorder).toOpaque())
            defer { sqlite3_trace_v2(handle, 0, nil, nil) }
            return (try work(), recorder.statements)
        }
    }
}

/// The distinct SQL statements a piece of work ran, in the order each first ran: what a variant reports as its SQL
/// (`RunOutcome.sql`), so that a reader of the report can see what each peer asked SQLite.
final class SQLRecorder: Sendable {
    private let state = Mutex<(list: [String], seen: Set<String>)>(([], []))

    func record(_ sql: String) {
        state.withLock { state in
            if state.seen.insert(sql).inserted { state.list.append(sql) }
        }
    }

    var statements: [String] { state.withLock { $0.list } }

    /// Runs `work`, and with `enabled` also returns the distinct statements `coordinator` ran meanwhile, as its
    /// event hub reported them.
    static func recording<T>(_ coordinator: PersistentStoreCoordinator, if enabled: Bool, _ work: () throws -> T) rethrows -> (T, sql: [String]?) {
        guard enabled else { return (try work(), nil) }
        let recorder = SQLRecorder()
        let token = coordinator.events.addObserver { record in
            if case .statement(let statement) = record.event { recorder.record(statement.sql) }
        }
        defer { coordinator.events.removeObserver(token) }
        return (try work(), recorder.statements)
    }
}

/// A prepared statement, finalized when released.
final class RawStatement {
    let handle: OpaquePointer
    /// Kept so the connection outlives its statements.
    private let connection: RawConnection

    /// SQLite copies the bytes of a value bound with this destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    fileprivate init(handle: OpaquePointer, connection: RawConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func reset() {
        sqlite3_reset(handle)
    }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    func bind(_ value: String, at index: Int32) {
        sqlite3_bind_text(handle, index, value, -1, Self.transient)
    }

    func bind(_ value: Data, at index: Int32) {
        _ = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Steps once: true with a row ready to read, false when done.
    func step() throws(BenchmarkError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let message = connection.lastError
        sqlite3_reset(handle)
        throw BenchmarkError("raw SQLite: step failed (\(code)): \(message)")
    }

    /// Steps to the end, for statements that return no rows.
    func run() throws(BenchmarkError) {
        while try step() {}
    }

    /// Steps from the first row to the last, mixing each into one fingerprint with `mix` (which reads the current
    /// row's columns), then the number of rows; `afterRow` hears each row's count as it is read. Leaves the statement
    /// reset.
    func fingerprintRows(_ mix: (inout FNV1a) -> Void, afterRow: (Int) -> Void = { _ in }) throws(BenchmarkError) -> (checksum: Int64, rows: Int) {
        var hash = FNV1a()
        var rows = 0
        reset()
        defer { reset() }
        while try step() {
            mix(&hash)
            rows += 1
            afterRow(rows)
        }
        hash.mix(Int64(rows))
        return (hash.value, rows)
    }

    // MARK: columns

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }

    /// The storage class of a column of the current row: `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`,
    /// `SQLITE_BLOB` or `SQLITE_NULL`.
    func storageClass(_ column: Int32) -> Int32 {
        sqlite3_column_type(handle, column)
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Mixes a text column into `hash` as `FNV1a.mix(text:)` mixes the string `string(column)` would make (its
    /// UTF-8 length, then its bytes), straight from SQLite's buffer without making the string; NULL as a missing
    /// string, or as an empty one with `nullAsEmpty` (as `string(_:)` reads it).
    func mixText(_ column: Int32, into hash: inout FNV1a, nullAsEmpty: Bool = false) {
        guard let text = sqlite3_column_text(handle, column) else {
            hash.mix(nullAsEmpty ? 0 : -1 as Int64)
            return
        }
        let count = Int(sqlite3_column_bytes(handle, column))
        hash.mix(Int64(count))
        hash.mix(UnsafeBufferPointer(start: text, count: count))
    }

    func data(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

/// One column value as the raw peer keeps it: the same Swift values a Faultline snapshot holds, without the graph.
enum RawValue {
    case null
    case integer(Int64)
    case boolean(Bool)
    case string(String)
    case date(Date)
    case data(Data)
}

/// A running FNV-1a hash, for fingerprints of rows that two variants wrote.
struct FNV1a {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func mix<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            state ^= UInt64(byte)
            state = state &* 0x100_0000_01b3
        }
    }

    mutating func mix(_ number: Int64) {
        withUnsafeBytes(of: number.littleEndian) { mix($0) }
    }

    var value: Int64 { Int64(bitPattern: state) }
}
