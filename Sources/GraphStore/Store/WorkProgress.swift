import Foundation
import GRDB
import GRDBSQLite

/// How far a long piece of work has come: a save (with its set-based delete), the write-back of an undo or redo
/// after a save, or a delete preview. A context reports it to its `progressHandler` while the work runs.
///
/// ```swift
/// context.progressInterval = .milliseconds(100)
/// context.progressHandler = { progress in
///     print(progress)                 // "saving: 120,000 rows, 0.4 s"
///     return !userPressedEscape       // false cancels a preview; saves run to the end
/// }
/// ```
public struct WorkProgress: Sendable, Equatable, CustomStringConvertible {
    /// What runs.
    public enum Work: String, Sendable, Equatable {
        /// `deletionPlan(for:)`: counting what a delete would take with it. The only work that can be cancelled.
        case deletePreview = "counting"
        /// `save()` writing changes, deletes included.
        case save = "saving"
        /// A save writing back the reverse of a saved step, after `undo()`.
        case undo = "undoing"
        /// A save writing a saved step again, after `redo()`.
        case redo = "redoing"
    }

    public var work: Work
    /// Rows the work's finished statements read or changed (for a preview: the rows counted so far).
    public var rowsSoFar: Int
    /// Statements finished so far.
    public var statementsSoFar: Int
    /// Time since the work began.
    public var elapsed: Duration

    public init(work: Work, rowsSoFar: Int, statementsSoFar: Int, elapsed: Duration) {
        self.work = work
        self.rowsSoFar = rowsSoFar
        self.statementsSoFar = statementsSoFar
        self.elapsed = elapsed
    }

    /// What runs, as a word: `saving`.
    public var what: String { work.rawValue }

    /// The elapsed time in seconds.
    public var seconds: Double {
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `saving: 120,000 rows, 0.4 s`.
    public var description: String {
        "\(what): \(Self.grouped(rowsSoFar)) row\(rowsSoFar == 1 ? "" : "s"), \(String(format: "%.1f", seconds)) s"
    }

    /// `120000` as `120,000`, whatever the locale.
    public static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return number < 0 ? "-" + text : text
    }
}

/// Reports one piece of work's progress to a context's handler: after each statement, and during a long statement
/// from SQLite's progress callback, at most once per `interval`. Returns false (and the statement running is
/// interrupted) once the handler has asked a cancellable work to stop.
final class ProgressMeter {
    let work: WorkProgress.Work
    private let handler: (WorkProgress) -> Bool
    private let interval: Duration
    private let cancellable: Bool
    private let start = ContinuousClock.now
    private var lastReport: ContinuousClock.Instant
    private(set) var rows = 0
    private(set) var statements = 0
    /// Set once the handler returned false for a cancellable work.
    private(set) var isCancelled = false
    /// SQLite virtual-machine steps between two looks at the clock: a few microseconds of work.
    static let stepsPerCheck: Int32 = 1_000

    init(work: WorkProgress.Work, handler: @escaping (WorkProgress) -> Bool, interval: Duration, cancellable: Bool) {
        self.work = work
        self.handler = handler
        self.interval = max(.zero, interval)
        self.cancellable = cancellable
        lastReport = start
    }

    /// A context's meter for `work`, or nil when no one listens (then nothing is counted or timed).
    static func make(for context: ObjectContext, _ work: WorkProgress.Work) -> ProgressMeter? {
        context.progressHandler.map {
            ProgressMeter(work: work, handler: $0, interval: context.progressInterval, cancellable: work == .deletePreview)
        }
    }

    var progress: WorkProgress {
        WorkProgress(work: work, rowsSoFar: rows, statementsSoFar: statements, elapsed: ContinuousClock.now - start)
    }

    /// A statement finished, with the rows it read or changed.
    @discardableResult
    func finished(rows: Int) -> Bool {
        self.rows += rows
        statements += 1
        return check()
    }

    /// Reports when the interval has passed; returns whether the work goes on.
    @discardableResult
    func check() -> Bool {
        guard !isCancelled else { return false }
        let now = ContinuousClock.now
        guard now - lastReport >= interval else { return true }
        lastReport = now
        if !handler(progress), cancellable { isCancelled = true }
        return !isCancelled
    }

    /// Runs `body` with SQLite's progress callback on `db` reporting to this meter (and interrupting the statement
    /// running once cancelled), and removes the callback afterwards.
    func watching<T>(_ db: Database, _ body: () throws -> T) rethrows -> T {
        install(on: db)
        defer { uninstall(from: db) }
        return try withExtendedLifetime(self) { try body() }
    }

    /// Sets SQLite's progress callback on `db` to this meter; the caller keeps the meter alive until `uninstall`.
    func install(on db: Database) {
        sqlite3_progress_handler(db.sqliteConnection, Self.stepsPerCheck, { pointer in
            guard let pointer else { return 0 }
            return Unmanaged<ProgressMeter>.fromOpaque(pointer).takeUnretainedValue().check() ? 0 : 1
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func uninstall(from db: Database) {
        sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil)
    }
}

/// Thrown inside cancelled work, and turned into `ContextError.cancelled` by the context.
struct WorkCancelled: Error {}
