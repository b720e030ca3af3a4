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
    private(set) var elapsed: Duration?
    private var excluded = Duration.zero
    private var timing = false

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
}

/// One way of doing a case's work. `run` does its untimed setup, calls `stopwatch.time` once around the work that
/// counts, checks what it can (throwing on a surprise) and reports its outcome.
struct BenchmarkVariant {
    let name: String
    let run: (Stopwatch) throws -> RunOutcome
}

/// How a case turns its variants' figures into a verdict.
enum BenchmarkGoal {
    /// `ratio` (first variant's median over the second's) at most `limit`.
    case ratioAtMost(Double)
    /// The first variant's median per operation at most `limit` µs; `operations` is how many it did per run, and
    /// `operation` names one in the report ("fault", "frame").
    case microsecondsPerOperationAtMost(Double, operations: Int, operation: String = "fault")
    /// `ratio` at most `limit`, and the first variant's peak memory (largest over its runs) under `megabytes` MB.
    case ratioAndPeakMemoryAtMost(Double, megabytes: Double)
    /// `ratio` at most `limit`, and the first variant at least `factor` times faster (by median) than `variant`; with
    /// `peakGrowthMegabytes`, also the first variant's peak memory growth (peak during a run less the resident
    /// memory before it, the largest over its runs) under that many MB.
    case ratioAtMostAndFasterThan(Double, variant: String, factor: Double, peakGrowthMegabytes: Double? = nil)
    /// `ratio` at most `limit`, and the first variant's resident memory after its last batch less than `megabytes`
    /// MB above what it was after its first (the largest growth over its runs).
    case ratioAndMemoryGrowthAtMost(Double, megabytes: Double)
}

/// A case ready to run: its variants (the measured one first, the one it is compared with second) and its target.
struct PreparedCase {
    let name: String
    let target: String
    let goal: BenchmarkGoal
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
    case cascadeDelete = "cascade-delete"
    case renderFrame = "render-frame"
}
