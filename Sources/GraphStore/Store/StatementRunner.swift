import Foundation
import GRDB
import GRDBSQLite

/// One SQL statement and the values bound to its parameters, in order.
struct SQLStatement: Sendable, Equatable {
    let sql: String
    let arguments: [AttributeValue]

    init(_ sql: String, _ arguments: [AttributeValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

/// The current result row of a statement that is stepping. It cannot be copied, so it cannot be kept past the
/// closure that receives it: the row's values are only valid until the statement steps again.
struct RowView: ~Copyable {
    private let handle: OpaquePointer
    /// Where the statement's rows are made (`RowArena`), shared by every row of one run of it.
    private let arena: UnsafeMutablePointer<RowArena>

    /// Made by the statement layer only, around a statement that has just returned `SQLITE_ROW`.
    init(stepped handle: OpaquePointer, arena: UnsafeMutablePointer<RowArena>) {
        self.handle = handle
        self.arena = arena
    }

    func isNull(_ column: Int32) -> Bool { SQLiteValues.isNull(handle, column) }
    func int64(_ column: Int32) -> Int64 { SQLiteValues.int64(handle, column) }
    /// A count or position: SQLite's 64-bit integer, clamped to `Int`.
    func int(_ column: Int32) -> Int { Int(clamping: SQLiteValues.int64(handle, column)) }
    func text(_ column: Int32) -> String { SQLiteValues.text(handle, column) }
    func value(_ column: Int32, as type: AttributeType) -> AttributeValue { SQLiteValues.value(handle, column, as: type) }
    /// A row selected with `mapping.selectList`.
    func snapshot(_ mapping: EntityMapping) -> RowSnapshot { SQLiteValues.snapshot(handle, mapping: mapping, arena: arena) }
    /// A row selected with `plan.selectList`, its columns starting at `offset`.
    func snapshot(_ plan: RowReadPlan, offset: Int32 = 0, key: Int64? = nil) -> RowSnapshot {
        SQLiteValues.snapshot(handle, plan: plan, offset: offset, key: key, arena: arena)
    }
    /// A row of the one entity `reader` reads, its columns starting at `offset`.
    func snapshot(_ reader: RowReadPlan.EntityReader, offset: Int32, key: Int64?) -> RowSnapshot {
        SQLiteValues.snapshot(handle, reader: reader, offset: offset, key: key, arena: arena)
    }
}

/// Runs statements on one connection for one piece of work (a fault, a fetch, a save, a preview): the one place
/// statements are prepared (from the connection's cache), bound, stepped, timed, counted and reported as
/// `.statement` events with their cause and context.
final class StatementRunner {
    let coordinator: PersistentStoreCoordinator
    let db: Database
    /// `db`'s SQLite connection, read once: GRDB's property costs a runtime exclusivity check per read.
    private let connection: OpaquePointer?
    /// Why the statements run, unless a call says otherwise.
    let cause: StatementCause
    let context: ContextID?
    /// Statements run so far.
    @exclusivity(unchecked) private(set) var count = 0
    // `meter` and `faultedObject` are read after every statement. Unchecked, as `insertStatements` below: a runner
    // lives inside one database access on one thread, and nothing reaches it re-entrantly.
    /// Hears each statement's rows, when the work reports progress.
    @exclusivity(unchecked) var meter: ProgressMeter?
    /// The object whose fault runs these statements, which their events carry (`StatementEvent.faultedObject`).
    @exclusivity(unchecked) var faultedObject: ObjectID?
    /// Each entity's INSERT, prepared on first use (index: entity number - 1); empty until the first insert, so a
    /// runner for a read allocates nothing for it.
    // Unchecked: a runner lives inside one database access on one thread, and nothing reaches it re-entrantly.
    @exclusivity(unchecked) private var insertStatements: [OpaquePointer?] = []

    init(coordinator: PersistentStoreCoordinator, db: Database, cause: StatementCause, context: ContextID?) {
        self.coordinator = coordinator
        self.db = db
        self.connection = db.sqliteConnection
        self.cause = cause
        self.context = context
    }

    /// Runs a query, calling `row` for each result row. Returns the number of rows.
    @discardableResult
    func query(_ statement: SQLStatement, cause: StatementCause? = nil, row: (borrowing RowView) throws -> Void) throws -> Int {
        let start = ContinuousClock.now
        let handle = try prepare(statement)
        defer { sqlite3_reset(handle) }
        var rows = 0
        var arena = RowArena()
        try withUnsafeMutablePointer(to: &arena) { arena in
            while true {
                let code = sqlite3_step(handle)
                guard code == SQLITE_ROW else {
                    guard code == SQLITE_DONE else { throw failure(code: code, statement) }
                    break
                }
                rows += 1
                try row(RowView(stepped: handle, arena: arena))
            }
        }
        finished(statement.sql, statement.arguments, rows: rows, since: start, cause: cause)
        return rows
    }

    /// The first column of the first row as an integer (a count); nil when there is no row.
    func scalar(_ statement: SQLStatement, cause: StatementCause? = nil) throws -> Int64? {
        var found: Int64?
        try query(statement, cause: cause) { row in if found == nil { found = row.int64(0) } }
        return found
    }

    /// Runs a statement that changes rows. Returns the number of rows changed.
    @discardableResult
    func execute(_ statement: SQLStatement, cause: StatementCause? = nil) throws -> Int {
        let start = ContinuousClock.now
        let handle = try prepare(statement)
        defer { sqlite3_reset(handle) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw failure(code: code, statement) }
        let changes = Int(sqlite3_changes(connection))
        finished(statement.sql, statement.arguments, rows: changes, since: start, cause: cause)
        return changes
    }

    /// Inserts a new object's row with its entity's `insertSQL`, prepared once per runner and bound straight from
    /// the values; the event's arguments are built only when someone observes them.
    func insert(_ mapping: EntityMapping, id: ObjectID, row: RowSnapshot) throws {
        let start = ContinuousClock.now
        let handle: OpaquePointer
        if insertStatements.isEmpty { insertStatements = Array(repeating: nil, count: coordinator.model.entities.count) }
        if let prepared = insertStatements[mapping.number - 1] {
            handle = prepared
        } else {
            handle = try cachedStatement(mapping.insertSQL)
            insertStatements[mapping.number - 1] = handle
        }
        sqlite3_reset(handle)
        sqlite3_bind_int64(handle, 1, id.primaryKey)
        sqlite3_bind_int64(handle, 2, Int64(id.entityNumber))
        sqlite3_bind_int64(handle, 3, 1)
        var position: Int32 = 4
        for index in mapping.insertedAttributeIndexes {
            SQLiteValues.bind(row.value(at: index), at: position, to: handle)
            position += 1
        }
        for index in 0..<mapping.toOnes.count {
            let key = row.toOneKey(at: index)
            if let key { sqlite3_bind_int64(handle, position, key.primaryKey) } else { sqlite3_bind_null(handle, position) }
            position += 1
            if mapping.toOnes[index].entityColumn != nil {
                if let key { sqlite3_bind_int64(handle, position, Int64(key.entityNumber)) } else { sqlite3_bind_null(handle, position) }
                position += 1
            }
        }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw failure(code: code, SQLStatement(mapping.insertSQL)) }
        let changes = Int(sqlite3_changes(connection))
        var arguments: [AttributeValue] = []
        if coordinator.events.hasObservers {
            arguments = [.integer(id.primaryKey), .integer(Int64(id.entityNumber)), .integer(1)]
            arguments += mapping.insertedAttributeIndexes.map { row.value(at: $0) }
            for index in 0..<mapping.toOnes.count {
                let key = row.toOneKey(at: index)
                arguments.append(key.map { .integer($0.primaryKey) } ?? .null)
                if mapping.toOnes[index].entityColumn != nil { arguments.append(key.map { .integer(Int64($0.entityNumber)) } ?? .null) }
            }
        }
        finished(mapping.insertSQL, arguments, rows: changes, since: start, cause: nil)
    }

    // MARK: inside

    private func cachedStatement(_ sql: String) throws -> OpaquePointer {
        do {
            return try db.cachedStatement(sql: sql).sqliteStatement
        } catch let error as DatabaseError {
            throw SQLiteError(error, busyTimeout: coordinator.store.busyTimeout)
        }
    }

    /// A cached statement, reset and bound: steps run on it directly (GRDB keeps the cache).
    private func prepare(_ statement: SQLStatement) throws -> OpaquePointer {
        let handle = try cachedStatement(statement.sql)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        SQLiteValues.bind(statement.arguments, to: handle)
        return handle
    }

    private func failure(code: Int32, _ statement: SQLStatement) -> SQLiteError {
        return SQLiteError(resultCode: code & 0xFF, extendedResultCode: connection.map { sqlite3_extended_errcode($0) } ?? code,
                           message: connection.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite error \(code)",
                           sql: statement.sql, arguments: statement.arguments, busyTimeout: coordinator.store.busyTimeout)
    }

    private func finished(_ sql: String, _ arguments: [AttributeValue], rows: Int, since start: ContinuousClock.Instant, cause: StatementCause?) {
        count += 1
        let duration = ContinuousClock.now - start
        let events = coordinator.events
        let cause = cause ?? self.cause
        defer { meter?.finished(rows: rows) }
        // The event (its SQL, arguments, cause and plan) is built only for observers, if any.
        events.statementRan(rows: rows, duration: duration, cause: cause, context: context) {
            let plan = events.wantsQueryPlans ? coordinator.queryPlan(db, sql: sql, arguments: arguments) : nil
            return StatementEvent(sql: sql, arguments: arguments, rows: rows, duration: duration, cause: cause, queryPlan: plan,
                                  faultedObject: faultedObject)
        }
    }
}

/// An error SQLite reported for a statement: its result codes, its words, and the statement. The arguments are
/// kept for a debugger but left out of the description, which may end up in a log or on a screen.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY` is 5, `SQLITE_CONSTRAINT` 19…).
    public let resultCode: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` is 2067…).
    public let extendedResultCode: Int32
    /// SQLite's own words.
    public let message: String
    /// The statement that failed, when one did.
    public let sql: String?
    public let arguments: [AttributeValue]
    /// The busy timeout of the connection, which a busy error waited out.
    public let busyTimeout: Double

    public init(resultCode: Int32, extendedResultCode: Int32, message: String, sql: String?, arguments: [AttributeValue] = [], busyTimeout: Double) {
        self.resultCode = resultCode
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments
        self.busyTimeout = busyTimeout
    }

    init(_ error: DatabaseError, busyTimeout: Double) {
        self.init(resultCode: error.resultCode.rawValue, extendedResultCode: error.extendedResultCode.rawValue,
                  message: error.message ?? "SQLite error \(error.resultCode.rawValue)", sql: error.sql,
                  arguments: [], busyTimeout: busyTimeout)
    }

    /// Another connection held the database for the whole busy timeout.
    public var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }

    /// One line: what SQLite said (for a busy store, how long it waited), then the statement, without its values.
    public var description: String {
        let words = isBusy ? StoreError.lockedMessage(seconds: busyTimeout) : message
        guard let sql else { return words }
        return "\(words) (SQLite error \(extendedResultCode), in: \(sql.count > 200 ? sql.prefix(200) + "…" : sql))"
    }

    /// The words alone, without the statement: what a person reading a one-line error needs.
    public var summary: String { isBusy ? StoreError.lockedMessage(seconds: busyTimeout) : message }
}

extension ContextError {
    /// Any error from the store's layers as a context error: SQLite's with its codes and statement, the store's as
    /// they are, a context error unchanged, work a progress handler stopped as `cancelled`. Nothing else is thrown
    /// inside a statement runner's work; anything that were would keep its own words.
    static func from(_ error: any Error, busyTimeout: Double) -> ContextError {
        switch error {
        case let error as ContextError: error
        case let error as SQLiteError: .sqlite(error)
        case let error as StoreError: .store(error)
        case let error as DatabaseError: .sqlite(SQLiteError(error, busyTimeout: busyTimeout))
        case is WorkCancelled: .cancelled("work")
        default: .damaged(String(describing: error))
        }
    }
}
