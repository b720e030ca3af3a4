/// Identifies the context an event came from (`nil` for work done by the coordinator itself).
public struct ContextID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public let name: String

    public init(rawValue: Int, name: String) {
        self.rawValue = rawValue
        self.name = name
    }

    public var description: String { name }
}

/// Why a statement ran: what the browser's SQL log shows beside it.
public enum StatementCause: Hashable, Sendable, CustomStringConvertible {
    case fetch(entity: String)
    /// An object fault fired by reading `key`.
    case objectFault(entity: String, key: String)
    /// A to-many relationship fault (`Chat.members`).
    case relationshipFault(entity: String, key: String)
    /// A prefetch of a key path after a fetch.
    case prefetch(keyPath: String)
    case save
    /// Bookkeeping: keys, schema, metadata.
    case other(String)

    public var description: String {
        switch self {
        case .fetch(let entity): "fetch \(entity)"
        case .objectFault(let entity, let key): "fault of \(entity).\(key)"
        case .relationshipFault(let entity, let key): "relationship fault \(entity).\(key)"
        case .prefetch(let keyPath): "prefetch of \(keyPath)"
        case .save: "save"
        case .other(let text): text
        }
    }

    /// The entity whose counters the statement goes under, if any (a prefetch, a save and bookkeeping count in
    /// the totals only).
    var countedEntity: String? {
        switch self {
        case .fetch(let entity), .objectFault(let entity, _), .relationshipFault(let entity, _): entity
        case .prefetch, .save, .other: nil
        }
    }
}

/// One SQL statement as it ran.
public struct StatementEvent: Equatable, Sendable {
    /// The SQL text, with `t0`, `t1` aliases as Core Data prints them.
    public let sql: String
    /// Bound values, in order.
    public let arguments: [AttributeValue]
    /// Rows returned (queries) or changed (writes).
    public let rows: Int
    /// Measured with a monotonic clock around preparing-to-finishing the statement.
    public let duration: Duration
    public let cause: StatementCause
    /// `EXPLAIN QUERY PLAN` lines, gathered only while someone asked for them (SQL debug level 4).
    public let queryPlan: [String]?
    /// The object whose fault ran the statement: the object of an object fault (its row, or its batch's rows), the
    /// owner of a relationship fault. The fault's own event follows the statement (it carries the fault's whole
    /// time), so the statement names its cause itself; nil for statements no fault ran.
    public let faultedObject: ObjectID?

    public init(sql: String, arguments: [AttributeValue], rows: Int, duration: Duration, cause: StatementCause, queryPlan: [String]? = nil,
                faultedObject: ObjectID? = nil) {
        self.faultedObject = faultedObject
        self.sql = sql
        self.arguments = arguments
        self.rows = rows
        self.duration = duration
        self.cause = cause
        self.queryPlan = queryPlan
    }
}

/// A fetch request executed (its statements are reported separately).
public struct FetchEvent: Sendable {
    public let entity: String
    public let rows: Int
    public let duration: Duration

    public init(entity: String, rows: Int, duration: Duration) {
        self.entity = entity
        self.rows = rows
        self.duration = duration
    }
}

/// An object fault fired: from the row cache (a hit, no SQL) or from SQLite (a miss, one statement).
public struct ObjectFaultEvent: Sendable {
    public let entity: String
    public let objectID: ObjectID
    /// The key whose access fired the fault.
    public let key: String
    public let isCacheHit: Bool
    /// Whether the object held some of its values already (it was fetched with `propertiesToFetch`) and this
    /// fault read the rest: a partial fault.
    public let isPartial: Bool
    /// How long a miss took, its statement included. Nil for a hit, which is not timed: it reads memory only, and
    /// reading the clock twice would cost a fifth of it. (Nil too for a miss whose first observer came while it ran.)
    public let duration: Duration?

    public init(entity: String, objectID: ObjectID, key: String, isCacheHit: Bool, isPartial: Bool = false, duration: Duration?) {
        self.entity = entity
        self.objectID = objectID
        self.key = key
        self.isCacheHit = isCacheHit
        self.isPartial = isPartial
        self.duration = duration
    }
}

/// A to-many relationship fault fired: one query for the destination IDs.
public struct RelationshipFaultEvent: Sendable {
    public let entity: String
    public let objectID: ObjectID
    public let key: String
    public let rows: Int
    public let duration: Duration

    public init(entity: String, objectID: ObjectID, key: String, rows: Int, duration: Duration) {
        self.entity = entity
        self.objectID = objectID
        self.key = key
        self.rows = rows
        self.duration = duration
    }
}

/// A save committed (or failed, with `succeeded == false`).
public struct SaveEvent: Sendable {
    public let inserted: Int
    public let updated: Int
    public let deleted: Int
    public let statements: Int
    public let duration: Duration
    public let succeeded: Bool

    public init(inserted: Int, updated: Int, deleted: Int, statements: Int, duration: Duration, succeeded: Bool) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.statements = statements
        self.duration = duration
        self.succeeded = succeeded
    }
}

/// A context brought in another context's save or another process's writes (`mergeChanges(fromContextDidSave:)`).
public struct MergeEvent: Sendable {
    /// The saving context's name; nil for another process.
    public let source: String?
    public let inserted: Int
    public let updated: Int
    public let deleted: Int
    /// Rows the store changed on its own (derived counts, cleared keys), re-read on next access.
    public let refreshed: Int
    /// Registered objects of the merging context that took new values, became faults or went.
    public let objectsTouched: Int
    public let duration: Duration

    public init(source: String?, inserted: Int, updated: Int, deleted: Int, refreshed: Int, objectsTouched: Int, duration: Duration) {
        self.source = source
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
        self.objectsTouched = objectsTouched
        self.duration = duration
    }
}

/// One moment of the object graph's life, as the activity panel and the SQL debug log see it.
public enum GraphEvent: Sendable {
    case statement(StatementEvent)
    case fetch(FetchEvent)
    case objectFault(ObjectFaultEvent)
    case relationshipFault(RelationshipFaultEvent)
    case save(SaveEvent)
    case merge(MergeEvent)
}

/// An event with where it came from.
public struct GraphEventRecord: Sendable {
    public let event: GraphEvent
    /// The context whose work caused it.
    public let context: ContextID?

    public init(event: GraphEvent, context: ContextID?) {
        self.event = event
        self.context = context
    }
}
