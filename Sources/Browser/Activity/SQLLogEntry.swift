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
    /// The statement as the store reported it.
    public let statement: StatementEvent
    /// The action it ran for; nil when it ran between actions (background work, say).
    public let action: String?
    /// The pane whose reads ran it (`messages`); nil for work that is no pane's (a save) or outside actions.
    public let pane: String?

    public var sql: String { statement.sql }
    public var arguments: [AttributeValue] { statement.arguments }
    /// Rows returned (queries) or changed (writes).
    public var rows: Int { statement.rows }
    public var duration: Duration { statement.duration }
    public var cause: StatementCause { statement.cause }
    /// `EXPLAIN QUERY PLAN` lines, when the store gathered them.
    public var queryPlan: [String]? { statement.queryPlan }

    /// The entry for `statement`, run as entry `number` for `action`.
    public init(number: Int, statement: StatementEvent, action: String?, pane: String? = nil) {
        self.number = number
        self.statement = statement
        self.action = action
        self.pane = pane
    }

    public init(
        number: Int, sql: String, arguments: [AttributeValue], rows: Int, duration: Duration, cause: StatementCause,
        queryPlan: [String]?, action: String?, pane: String? = nil
    ) {
        self.init(number: number, statement: StatementEvent(sql: sql, arguments: arguments, rows: rows, duration: duration,
                                                             cause: cause, queryPlan: queryPlan), action: action, pane: pane)
    }
}
