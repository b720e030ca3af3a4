import Foundation
import GRDB
import Synchronization

/// What the `grdb` variants share: a connection opened as a GRDB app opens one, and statement counting.
///
/// Tracing every statement costs time, so a `grdb` variant counts its statements on an untimed run (`counting`)
/// and times its other runs with tracing off; the runner then checks that the count holds by comparing outputs.
enum GRDBPeer {
    /// A database queue on `path`, read-only or not; a writer gets the pragmas a GraphStore writer uses, so write
    /// cases compare like with like.
    static func queue(path: String, readOnly: Bool) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.label = "bench-grdb"
        if !readOnly {
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY")
            }
        }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Runs `work` with every statement it runs counted (statements a trigger runs are not counted, as
    /// GraphStore's counters leave them out), and returns its result with the count.
    static func counting<T>(_ db: Database, _ work: () throws -> T) rethrows -> (T, statements: Int) {
        let (result, statements, _) = try recording(db, work)
        return (result, statements)
    }

    /// Runs `work` as `counting` does, and also returns the distinct statements it ran, in the order first run.
    static func recording<T>(_ db: Database, _ work: () throws -> T) rethrows -> (T, statements: Int, sql: [String]) {
        let count = Mutex(0)
        let recorder = SQLRecorder()
        db.trace(options: .statement) { event in
            if case .statement(let statement) = event, !statement.sql.hasPrefix("--") {
                count.withLock { $0 += 1 }
                recorder.record(statement.sql)
            }
        }
        defer { db.trace(options: [], nil) }
        let result = try work()
        return (result, count.withLock { $0 }, recorder.statements)
    }

    /// Runs `work`, which may run several reads or writes on `queue`, with every statement they run counted and
    /// recorded as `recording` does, except transaction control (`BEGIN`, `COMMIT`, `ROLLBACK`, `SAVEPOINT`,
    /// `RELEASE`): GraphStore's counters leave out the transactions its own reads open, so a count across several
    /// of GRDB's reads leaves out theirs.
    static func recording<T>(_ queue: DatabaseQueue, _ work: () throws -> T) rethrows -> (T, statements: Int, sql: [String]) {
        let count = Mutex(0)
        let recorder = SQLRecorder()
        queue.inDatabase { db in
            db.trace(options: .statement) { event in
                guard case .statement(let statement) = event, !statement.sql.hasPrefix("--"),
                      !isTransactionControl(statement.sql) else { return }
                count.withLock { $0 += 1 }
                recorder.record(statement.sql)
            }
        }
        defer { queue.inDatabase { db in db.trace(options: [], nil) } }
        let result = try work()
        return (result, count.withLock { $0 }, recorder.statements)
    }

    private static func isTransactionControl(_ sql: String) -> Bool {
        let word = sql.prefix { !$0.isWhitespace && $0 != ";" }.uppercased()
        return ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"].contains(word)
    }
}

/// A GRDB variant that reads: each run times `read` on `queue`; the first run also counts its statements and records
/// their SQL, untimed, before the timed one.
///
/// `scope` says how: `.ownTransaction` wraps each run in `queue.read` (a transaction of its own, as GRDB's
/// documentation reads), `.asRaw` runs it in `queue.inDatabase`, each statement in SQLite's implicit transaction,
/// as the raw peer runs its statements, so that the two differ only in the library.
final class GRDBReadVariant {
    enum Scope {
        case ownTransaction
        case asRaw
    }

    private let name: String
    private let queue: DatabaseQueue
    private let scope: Scope
    private let read: (Database) throws -> Int64
    private var counted: (statements: Int, sql: [String])?

    init(name: String = VariantName.grdb, queue: DatabaseQueue, scope: Scope = .ownTransaction, read: @escaping (Database) throws -> Int64) {
        self.name = name
        self.queue = queue
        self.scope = scope
        self.read = read
    }

    private func run<T>(_ work: (Database) throws -> T) throws -> T {
        switch scope {
        case .ownTransaction: try queue.read(work)
        case .asRaw: try queue.inDatabase(work)
        }
    }

    var variant: BenchmarkVariant {
        BenchmarkVariant(name: name) { [self] stopwatch in
            let counted = try self.counted ?? run { db in
                let (_, statements, sql) = try GRDBPeer.recording(db) { try read(db) }
                return (statements, sql)
            }
            self.counted = counted
            let checksum = try stopwatch.time { try run(read) }
            return RunOutcome(checksum: checksum, statements: counted.statements, sql: stopwatch.recordsSQL ? counted.sql : nil)
        }
    }
}
