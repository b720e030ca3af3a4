import Foundation
import Synchronization

/// Prints a hub's events as Core Data's `-com.apple.CoreData.SQLDebug N` does.
///
/// - 1: each statement's SQL and timing, and saves;
/// - 2: also the values bound to each statement;
/// - 3: also where each object and relationship fault was fulfilled from;
/// - 4: also each statement's query plan (attaching at this level asks the hub's emitters to gather plans).
///
/// The lines of one event are written together, never interleaved with another event's.
public final class SQLDebugLog: Sendable {
    public let level: Int
    private let uri: @Sendable (ObjectID) -> String
    private let write: @Sendable (String) -> Void
    /// Keeps the lines of one event together when events come from several threads.
    private let writing = Mutex<Void>(())

    /// The environment variable `level(fromEnvironment:)` reads.
    public static let environmentVariable = "FAULTLINE_SQL_DEBUG"

    /// - Parameters:
    ///   - level: 1...4 (values outside are clamped).
    ///   - uri: turns an ObjectID into `x-coredata://<store UUID>/<Entity>/p<pk>`.
    ///   - write: receives each finished line, without a trailing newline. It must not log through this log.
    public init(level: Int, uri: @escaping @Sendable (ObjectID) -> String, write: @escaping @Sendable (String) -> Void) {
        self.level = min(max(level, 1), 4)
        self.uri = uri
        self.write = write
    }

    /// Observes `hub` from now on; at level 4 also turns the hub's `wantsQueryPlans` on.
    @discardableResult
    public func attach(to hub: EventHub) -> EventHub.ObserverToken {
        if level >= 4 { hub.setWantsQueryPlans(true) }
        return hub.addObserver { [self] record in log(record) }
    }

    /// Stops observing `hub` (`token` is what `attach(to:)` returned); at level 4 also turns `wantsQueryPlans` off.
    public func detach(_ token: EventHub.ObserverToken, from hub: EventHub) {
        hub.removeObserver(token)
        if level >= 4 { hub.setWantsQueryPlans(false) }
    }

    /// Writes the lines of `record`'s event (what the observer `attach(to:)` registers calls).
    public func log(_ record: GraphEventRecord) {
        let lines = lines(for: record.event)
        guard !lines.isEmpty else { return }
        writing.withLock { _ in
            for line in lines { write(line) }
        }
    }

    /// The lines of `event` at this log's level, each starting `CoreData: `.
    public func lines(for event: GraphEvent) -> [String] {
        switch event {
        case .statement(let statement):
            return lines(for: statement)
        case .fetch:
            // Its statement already printed everything Core Data prints.
            return []
        case .objectFault(let fault):
            guard level >= 3 else { return [] }
            let origin = fault.isCacheHit ? "row cache" : "database"
            return ["CoreData: annotation: fault fulfilled from \(origin) for : \(uri(fault.objectID))"]
        case .relationshipFault(let fault):
            guard level >= 3 else { return [] }
            return [
                "CoreData: annotation: to-many relationship fault \"\(fault.key)\" for objectID \(uri(fault.objectID))"
                    + " fulfilled from database.  Got \(fault.rows) rows"
            ]
        case .save(let save):
            let verb = save.succeeded ? "save" : "save failed"
            return [
                "CoreData: annotation: \(verb): \(save.inserted) inserted, \(save.updated) updated, \(save.deleted) deleted"
                    + " in \(Self.seconds(save.duration))s (\(save.statements) statements)"
            ]
        case .merge(let merge):
            return [
                "CoreData: annotation: merged changes from \(merge.source ?? "another process"): \(merge.inserted) inserted,"
                    + " \(merge.updated) updated, \(merge.deleted) deleted, \(merge.refreshed) refreshed"
            ]
        }
    }

    private func lines(for statement: StatementEvent) -> [String] {
        var lines = ["CoreData: sql: \(statement.sql)"]
        if level >= 2 {
            for (index, value) in statement.arguments.enumerated() {
                lines.append("CoreData: details: SQLite bind[\(index)] = \(Self.describe(value))")
            }
        }
        if level >= 4, let plan = statement.queryPlan {
            for step in plan {
                lines.append("CoreData: details: SQLite: \(step)")
            }
        }
        let time = Self.seconds(statement.duration)
        switch StatementKind(sql: statement.sql) {
        case .count:
            lines.append("CoreData: annotation: total count request execution time: \(time)s for count of \(statement.rows).")
        case .read:
            lines.append("CoreData: annotation: sql connection fetch time: \(time)s")
            lines.append("CoreData: annotation: total fetch execution time: \(time)s for \(statement.rows) rows.")
        case .write:
            lines.append("CoreData: annotation: sql execution time: \(time)s, \(statement.rows) rows changed.")
        }
        return lines
    }

    // MARK: Level from the environment

    /// Reads `FAULTLINE_SQL_DEBUG` from `environment`: nil when unset, empty or 0; the level when 1...4; an error
    /// naming the variable and the value otherwise.
    public static func level(fromEnvironment environment: [String: String]) -> Result<Int?, SQLDebugLevelError> {
        guard let text = environment[environmentVariable] else { return .success(nil) }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return .success(nil) }
        switch Int(trimmed) {
        case 0: return .success(nil)
        case let level? where (1...4).contains(level): return .success(level)
        default:
            return .failure(SQLDebugLevelError(description: "\(environmentVariable) must be a level from 1 to 4, not '\(text)'"))
        }
    }

    // MARK: Formatting

    /// A bound value as Core Data prints it: numbers bare, strings quoted, null as `nil`, data by its size,
    /// dates as seconds since 2001.
    static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let number): String(number)
        case .double(let number): describe(number)
        case .decimal(let number): number.description
        case .string(let text): "\"\(text)\""
        case .boolean(let flag): flag ? "1" : "0"
        case .date(let date): describe(date.timeIntervalSinceReferenceDate)
        case .data(let data): "<\(data.count) bytes>"
        case .uuid(let uuid): uuid.uuidString
        case .uri(let url): "\"\(url.absoluteString)\""
        }
    }

    /// Whole numbers without a fractional part, as `NSNumber` prints them.
    private static func describe(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(.towardZero), abs(number) < 1e15 {
            return String(Int64(number))
        }
        return number.description
    }

    /// `duration` in seconds with 4 decimals (`0.0004`), rounded half up, in integer arithmetic.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return "-" + Self.seconds(.zero - duration) }
        // One ten-thousandth of a second is 10^14 attoseconds.
        let tenThousandths = attoseconds / 100_000_000_000_000 + (attoseconds % 100_000_000_000_000 >= 50_000_000_000_000 ? 1 : 0)
        let whole = seconds + tenThousandths / 10_000
        let fraction = String(tenThousandths % 10_000)
        return "\(whole)." + String(repeating: "0", count: 4 - fraction.count) + fraction
    }
}

/// How the SQL debug log annotates a statement.
private enum StatementKind {
    case count, read, write

    init(sql: String) {
        let words = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" }).prefix(2).map { $0.uppercased() }
        switch words.first {
        case "SELECT": self = words.dropFirst().first == "COUNT" ? .count : .read
        default: self = .write
        }
    }
}

/// `FAULTLINE_SQL_DEBUG` holds something other than a level.
public struct SQLDebugLevelError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
