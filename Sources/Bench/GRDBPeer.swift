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
        let count = Mutex(0)
        db.trace(options: .statement) { event in
            if case .statement(let statement) = event, !statement.sql.hasPrefix("--") {
                count.withLock { $0 += 1 }
            }
        }
        defer { db.trace(options: [], nil) }
        let result = try work()
        return (result, count.withLock { $0 })
    }
}

/// A GRDB variant that reads (`grdb` unless named otherwise): each run times `read` in one read transaction on
/// `queue`; the first run also counts its statements, untimed, before the timed one.
final class GRDBReadVariant {
    private let name: String
    private let queue: DatabaseQueue
    private let read: (Database) throws -> Int64
    private var statements: Int?

    init(name: String = VariantName.grdb, queue: DatabaseQueue, read: @escaping (Database) throws -> Int64) {
        self.name = name
        self.queue = queue
        self.read = read
    }

    var variant: BenchmarkVariant {
        BenchmarkVariant(name: name) { [self] stopwatch in
            if statements == nil {
                let (_, counted) = try queue.read { db in try GRDBPeer.counting(db) { try read(db) } }
                statements = counted
            }
            let checksum = try stopwatch.time { try queue.read { db in try read(db) } }
            return RunOutcome(checksum: checksum, statements: statements ?? 0)
        }
    }
}
