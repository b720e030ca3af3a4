import Foundation
import GraphStore

/// Why a benchmark case could not give a trustworthy figure: a setup step failed, or the variants did not do the
/// same work (their outputs or their statement counts are not what the case expects).
public struct BenchmarkError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Times the one region of a run that counts; everything else a run does (setup, checks) stays outside it.
final class Stopwatch {
    /// Whether the run should also report the SQL it ran (`RunOutcome.sql`): true on the runner's untimed warm-up
    /// run, so that recording the statements never slows a timed one.
    let recordsSQL: Bool
    private(set) var elapsed: Duration?
    private var excluded = Duration.zero
    private var timing = false

    init(recordsSQL: Bool = false) {
        self.recordsSQL = recordsSQL
    }

    func time<T>(_ work: () throws -> T) rethrows -> T {
        precondition(elapsed == nil, "a run times one region only")
        timing = true
        defer { timing = false }
        let start = ContinuousClock.now
        let result = try work()
        elapsed = ContinuousClock.now - start - excluded
        return result
    }

    /// Runs `work` inside the timed region without counting its time (a measurement taken midway, say).
    func excluding<T>(_ work: () throws -> T) rethrows -> T {
        precondition(timing, "only part of a timed region can be left out of it")
        let start = ContinuousClock.now
        defer { excluded += ContinuousClock.now - start }
        return try work()
    }
}

/// What one run of a variant produced besides its time.
struct RunOutcome {
    /// A figure of the work's result (a sum of values read, say) that every variant of a case must agree on.
    var checksum: Int64
    /// SQL statements the timed work ran.
    var statements: Int
    /// The most memory the work held: a child process's own peak, or (for a case that resets the peak before its
    /// work) this process's peak during the run.
    var peakResidentBytes: Int? = nil
    /// This process's resident memory after the work's first batch and after its last, for a case that walks a
    /// result in batches and must keep memory flat.
    var residentAfterFirstBatch: Int? = nil
    var residentAfterLastBatch: Int? = nil
    /// This process's resident memory just before the timed work, for a case that resets the peak there and reports
    /// how far the work raised it (`peakResidentBytes` minus this).
    var residentBefore: Int? = nil
    /// The distinct SQL statements the work ran, in the order first run, for a variant that records them on a run
    /// whose stopwatch asks for it (`Stopwatch.recordsSQL`); nil where not recorded.
    var sql: [String]? = nil
}

/// One way of doing a case's work. `run` does its untimed setup, calls `stopwatch.time` once around the work that
/// counts, checks what it can (throwing on a surprise) and reports its outcome.
struct BenchmarkVariant {
    let name: String
    let run: (Stopwatch) throws -> RunOutcome
}

/// The variant names cases share, so reports and goals can find the peers of every case.
enum VariantName {
    /// Faultline tuned: the levers a careful app sets (batching, prefetch, derived counts, batched faults).
    static let faultline = "faultline"
    /// Faultline tuned the way Core Data allows (faithful batching, separate prefetch queries).
    static let coreData = "faultline-coredata"
    /// Faultline with Core Data's defaults: no batch size, no prefetch, a fault per object.
    static let defaults = "faultline-defaults"
    /// GRDB as a competent user writes it for speed: hand-written SQL from `cachedStatement`, rows decoded by
    /// column index in `FetchableRecord.init(row:)`, cursors where a scan streams.
    static let grdb = "grdb"
    /// GRDB as its documentation introduces it: `Codable` records, associations, `including(…)`, `annotated(with:)`.
    static let grdbQueryInterface = "grdb-query-interface"
    /// The raw SQLite C API doing what Faultline does (the same statements, the same values kept), by hand.
    static let raw = "raw-sqlite"
    /// The raw SQLite C API doing the least work that gives the same answer.
    static let rawFloor = "raw-sqlite-floor"
}

/// One condition a case's figures must meet. Variants are named; a check on a variant the case lacks is a
/// programming error.
enum GoalCheck: Sendable {
    /// `variant`'s median at most `atMost` times `peer`'s.
    case ratio(String, over: String, atMost: Double)
    /// `variant` at least `factor` times faster than `peer` (the peer's median over the variant's ≥ `factor`).
    case fasterThan(String, than: String, factor: Double = 1)
    /// `variant` ran no more SQL statements per run than `peer`.
    case statementsAtMost(String, than: String)
    /// Every named variant ran the same number of statements per run.
    case sameStatements([String])
    /// `variant`'s median per operation at most `atMost` µs; it does `operations` per run, each called `operation`
    /// in the report ("fault", "frame").
    case microsecondsPerOperation(String, atMost: Double, operations: Int, operation: String)
    /// `variant`'s peak memory (largest over its runs) under this many MB.
    case peakMemory(String, underMegabytes: Double)
    /// How far `variant`'s peak rose above its resident memory before its work (largest over its runs) under this
    /// many MB.
    case peakGrowth(String, underMegabytes: Double)
    /// `variant`'s resident memory after its last batch less than this many MB above what it was after its first.
    case batchGrowth(String, underMegabytes: Double)
    /// How far `variant`'s peak rose (as `peakGrowth` measures it) at most `atMost` times how far `peer`'s rose.
    case peakGrowthRatio(String, over: String, atMost: Double)

    /// The check in words, for the report's target column.
    var description: String {
        func short(_ name: String) -> String { name == VariantName.raw ? "raw" : name }
        switch self {
        case .ratio(let variant, let peer, let limit):
            return "\(short(variant)) ≤ \(Self.figure(limit))× \(short(peer))"
        case .fasterThan(let variant, let peer, let factor):
            return factor == 1 ? "\(short(variant)) faster than \(short(peer))"
                : "\(short(variant)) ≥ \(Self.figure(factor))× faster than \(short(peer))"
        case .statementsAtMost(let variant, let peer):
            return "\(short(variant)) statements ≤ \(short(peer))'s"
        case .sameStatements(let variants):
            return "equal statements: \(variants.map(short).joined(separator: ", "))"
        case .microsecondsPerOperation(let variant, let limit, _, let operation):
            return "\(short(variant)) ≤ \(Self.figure(limit)) µs per \(operation)"
        case .peakMemory(let variant, let megabytes):
            return "\(short(variant)) peak < \(Self.figure(megabytes)) MB"
        case .peakGrowth(let variant, let megabytes):
            return "\(short(variant)) peak growth < \(Self.figure(megabytes)) MB"
        case .batchGrowth(let variant, let megabytes):
            return "\(short(variant)) RSS growth first→last batch < \(Self.figure(megabytes)) MB"
        case .peakGrowthRatio(let variant, let peer, let limit):
            return "\(short(variant)) peak growth ≤ \(Self.figure(limit))× \(short(peer))'s"
        }
    }

    /// A limit as people write it: 2, 1.5, 0.5.
    static func figure(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}

/// A case ready to run: its variants (the measured one first) and its goals.
struct PreparedCase {
    let name: String
    /// What the case must show; empty for a case that only reports.
    let goals: [GoalCheck]
    let variants: [BenchmarkVariant]
    /// Whether each variant runs once, untimed, before the timed runs. A case whose runs are long and whose
    /// preparation already did the work once skips it, and gives `expectedChecksum` instead.
    var warmUp = true
    /// Timed runs per variant, when the case needs other than the runner's number.
    var runs: Int? = nil
    /// The checksum every run must give, when known before any run.
    var expectedChecksum: Int64? = nil
    /// Rows each run writes, for a case whose figure of merit is rows per second.
    var rows: Int? = nil
    /// For a case that deletes: what each run's delete takes with it (checked by the case on every run).
    var deletion: DeletionPlan? = nil
    /// A line on what the case did, for the report (the chat's size, say); nil for none.
    var note: String? = nil
    /// The variant the case's headline ratio is taken over, when it is not `raw-sqlite` (a cache hit is compared
    /// with a lookup in memory, say).
    var headlinePeer: String? = nil

    /// The goals in words.
    var target: String { goals.map(\.description).joined(separator: "; ") }
}

/// The cases `faultline bench` knows, in the order they run by default.
public enum BenchmarkCaseName: String, CaseIterable, Sendable {
    case faultFromCache = "fault-from-cache"
    case faultFromSQLite = "fault-from-sqlite"
    case insertSave = "insert-save"
    case observerOverhead = "observer-overhead"
    case fixtureGenerate = "fixture-generate"
    case chatList = "chat-list"
    case chatListScroll = "chat-list-scroll"
    case openChat = "open-chat"
    case materializeMessages = "materialize-messages"
    case addMessage = "add-message"
    case cascadeDelete = "cascade-delete"
    case renderFrame = "render-frame"
    case startup = "startup"
}
