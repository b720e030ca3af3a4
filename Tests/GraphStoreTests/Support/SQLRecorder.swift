import Foundation
import GraphStore
import Synchronization
import Testing

/// Records what a coordinator reports while the recorder lives: every event in order, and from them the statements
/// (SQL, arguments, cause) and the object faults the row cache served (hits) or SQLite did (misses).
///
///     let recorder = SQLRecorder(fixture.coordinator)
///     _ = context.object(with: studentID).value(forKey: "name")
///     assertSQL(recorder, ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZADDRESS, t0.ZMAILINGADDRESS, t0.ZCLASS FROM ZSTUDENT t0 WHERE t0.Z_PK = ?"])
///     assertCost(recorder, statements: 1, hits: 0, misses: 1)
///
/// `SQLRecorder()` observes nothing by itself: hand its `record(_:)` to an `EventHub`.
final class SQLRecorder: Sendable {
    private struct State {
        var records: [GraphEventRecord] = []
        var token: EventHub.ObserverToken?
    }

    private let state = Mutex(State())
    private let hub: EventHub?

    /// A recorder fed through `record(_:)`.
    init() {
        hub = nil
    }

    /// A recorder of everything `coordinator` reports from now until the recorder is released.
    init(_ coordinator: PersistentStoreCoordinator) {
        let hub = coordinator.events
        self.hub = hub
        let token = hub.addObserver { [weak self] record in self?.record(record) }
        state.withLock { $0.token = token }
    }

    deinit {
        if let hub, let token = state.withLock({ $0.token }) { hub.removeObserver(token) }
    }

    /// Keeps `record`; an `EventHub.Observer`.
    @Sendable func record(_ record: GraphEventRecord) {
        state.withLock { $0.records.append(record) }
    }

    /// Forgets what was recorded so far.
    func reset() {
        state.withLock { $0.records.removeAll() }
    }

    /// Every event recorded, in order, with the context it came from.
    var records: [GraphEventRecord] { state.withLock { $0.records } }

    /// The statements, in the order they ran.
    var statements: [StatementEvent] {
        records.compactMap { record in
            if case .statement(let statement) = record.event { statement } else { nil }
        }
    }

    /// The SQL of `statements`.
    var sql: [String] { statements.map(\.sql) }

    /// The saves, committed or not.
    var saves: [SaveEvent] {
        records.compactMap { record in
            if case .save(let save) = record.event { save } else { nil }
        }
    }

    /// The object faults, hits and misses.
    var objectFaults: [ObjectFaultEvent] {
        records.compactMap { record in
            if case .objectFault(let fault) = record.event { fault } else { nil }
        }
    }

    /// Object faults the row cache served.
    var hits: Int { objectFaults.count(where: \.isCacheHit) }

    /// Object faults that read their row from SQLite.
    var misses: Int { objectFaults.count(where: { !$0.isCacheHit }) }
}

/// Checks that `recorder` holds exactly the statements `expected`, in order. A failure lists the SQL that ran as
/// a Swift array, ready to compare or paste.
func assertSQL(_ recorder: SQLRecorder, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    let sql = recorder.sql
    #expect(sql == expected, "ran:\n\(swiftLiteral(sql))", sourceLocation: sourceLocation)
}

/// Checks that `recorder` holds exactly `statements` statements, `hits` object faults served by the row cache and
/// `misses` read from SQLite.
func assertCost(_ recorder: SQLRecorder, statements: Int, hits: Int, misses: Int,
                sourceLocation: SourceLocation = #_sourceLocation) {
    let sql = recorder.sql
    #expect(sql.count == statements, "ran:\n\(swiftLiteral(sql))", sourceLocation: sourceLocation)
    #expect(recorder.hits == hits, "row-cache hits", sourceLocation: sourceLocation)
    #expect(recorder.misses == misses, "row-cache misses", sourceLocation: sourceLocation)
}

/// `lines` as a Swift array literal, one element a line.
private func swiftLiteral(_ lines: [String]) -> String {
    let elements = lines.map { line in
        "    \"" + line.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\","
    }
    return (["["] + elements + ["]"]).joined(separator: "\n")
}
