import GraphStore

/// One statement in the SQL log, with the action it ran for.
///
/// ```swift
/// let entry = monitor.sqlLog[0]              // the newest statement
/// "\(entry.cause)"                           // "fault of User.name"
/// ActivityFormat.duration(entry.duration)    // "94µs"
/// ```
public struct SQLLogEntry: Equatable, Sendable {
    /// Counts up from 1 in the order statements ran: stays the same while newer entries push this one down.
    public let number: Int
    public let sql: String
    public let arguments: [AttributeValue]
    /// Rows returned (queries) or changed (writes).
    public let rows: Int
    public let duration: Duration
    public let cause: StatementCause
    /// `EXPLAIN QUERY PLAN` lines, when the store gathered them.
    public let queryPlan: [String]?
    /// The action it ran for; nil when it ran between actions (background work, say).
    public let action: String?

    public init(
        number: Int, sql: String, arguments: [AttributeValue], rows: Int, duration: Duration, cause: StatementCause,
        queryPlan: [String]?, action: String?
    ) {
        self.number = number
        self.sql = sql
        self.arguments = arguments
        self.rows = rows
        self.duration = duration
        self.cause = cause
        self.queryPlan = queryPlan
        self.action = action
    }

    /// The entry for `statement`, run as entry `number` for `action`.
    public init(number: Int, statement: StatementEvent, action: String?) {
        self.init(
            number: number, sql: statement.sql, arguments: statement.arguments, rows: statement.rows,
            duration: statement.duration, cause: statement.cause, queryPlan: statement.queryPlan, action: action)
    }
}
