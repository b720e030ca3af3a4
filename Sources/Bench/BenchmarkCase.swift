import Foundation

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

    func time<T>(_ work: () throws -> T) rethrows -> T {
        precondition(elapsed == nil, "a run times one region only")
        let start = ContinuousClock.now
        let result = try work()
        elapsed = ContinuousClock.now - start
        return result
    }
}

/// What one run of a variant produced besides its time.
struct RunOutcome {
    /// A figure of the work's result (a sum of values read, say) that every variant of a case must agree on.
    var checksum: Int64
    /// SQL statements the timed work ran.
    var statements: Int
    /// The most memory the work held, when it ran in a process of its own.
    var peakResidentBytes: Int? = nil
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
    /// The first variant's median per operation at most `limit` µs; `operations` is how many it did per run.
    case microsecondsPerOperationAtMost(Double, operations: Int)
    /// `ratio` at most `limit`, and the first variant's peak memory (largest over its runs) under `megabytes` MB.
    case ratioAndPeakMemoryAtMost(Double, megabytes: Double)
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
}

/// The cases `faultline bench` knows, in the order they run by default.
public enum BenchmarkCaseName: String, CaseIterable, Sendable {
    case faultFromCache = "fault-from-cache"
    case faultFromSQLite = "fault-from-sqlite"
    case insertSave = "insert-save"
    case observerOverhead = "observer-overhead"
    case fixtureGenerate = "fixture-generate"
}
