import Foundation
import GraphStore

/// Runs benchmark cases: one warm-up run per variant (not counted, but its output is compared across variants),
/// then `runs` timed rounds in which every variant runs once, interleaved so that drift in the machine's speed
/// falls on all variants alike.
public struct BenchmarkRunner {
    public let quick: Bool
    /// Timed runs per variant.
    public let runs: Int
    /// Called with every coordinator a case opens (to attach an SQL debug log, say), before it is used.
    public let opened: (PersistentStoreCoordinator) -> Void
    /// The `faultline` executable, for cases that time it as a child process (`fixture-generate`).
    public let executable: String?

    public init(quick: Bool, runs: Int? = nil, executable: String? = nil, opened: @escaping (PersistentStoreCoordinator) -> Void = { _ in }) {
        self.quick = quick
        self.runs = max(1, runs ?? (quick ? 2 : 5))
        self.executable = executable
        self.opened = opened
    }

    /// Runs the named cases (in the order given, each once), building their stores in a temporary folder that is
    /// removed before returning. `progress` hears a line as each case starts.
    public func run(_ names: [BenchmarkCaseName], build: String, progress: (String) -> Void = { _ in }) throws(BenchmarkError) -> BenchmarkReport {
        var seen = Set<BenchmarkCaseName>()
        let selected = names.filter { seen.insert($0).inserted }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-bench-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw BenchmarkError("cannot create a folder for the stores at \(folder.path): \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }

        var results: [CaseResult] = []
        // Scoped so every store and connection is released before the folder goes.
        do {
            let cases = try Self.describingFailures("setup") { try GraphCases(folder: folder, quick: quick, opened: opened) }
            let fixtureCase = FixtureCase(folder: folder, quick: quick, executable: executable)
            let chatList = ChatListCases(folder: folder, quick: quick, opened: opened)
            let cascadeDelete = CascadeDeleteCase(folder: folder, quick: quick, opened: opened)
            let renderFrame = RenderFrameCase(folder: folder, quick: quick, opened: opened)
            for name in selected {
                progress("\(name.rawValue): preparing")
                let prepared = try Self.describingFailures(name.rawValue) {
                    switch name {
                    case .fixtureGenerate: try fixtureCase.prepare()
                    case .chatList, .chatListScroll: try chatList.prepare(name)
                    case .cascadeDelete: try cascadeDelete.prepare()
                    case .renderFrame: try renderFrame.prepare()
                    default: try cases.prepare(name)
                    }
                }
                let count = prepared.runs ?? runs
                progress("\(name.rawValue): \(count) run\(count == 1 ? "" : "s") per variant\(prepared.warmUp ? " after a warm-up" : "")")
                results.append(try measure(prepared))
            }
        }
        return BenchmarkReport(cases: results, build: build, quick: quick)
    }

    private func measure(_ prepared: PreparedCase) throws(BenchmarkError) -> CaseResult {
        let variants = prepared.variants
        precondition(variants.count >= 2, "a case compares at least two variants")
        func runOnce(_ variant: BenchmarkVariant) throws(BenchmarkError) -> (Duration, RunOutcome) {
            let stopwatch = Stopwatch()
            let outcome: RunOutcome
            do {
                outcome = try variant.run(stopwatch)
            } catch let error as BenchmarkError {
                throw BenchmarkError("\(prepared.name) (\(variant.name)): \(error.description)")
            } catch {
                throw BenchmarkError("\(prepared.name) (\(variant.name)): \(error)")
            }
            guard let elapsed = stopwatch.elapsed else {
                preconditionFailure("variant \(variant.name) of \(prepared.name) timed nothing")
            }
            return (elapsed, outcome)
        }

        // Warm-up: also the check that every variant did the same work.
        var reference = prepared.expectedChecksum
        var statements: [Int?] = Array(repeating: nil, count: variants.count)
        if prepared.warmUp {
            let warmUp = try variants.map { variant throws(BenchmarkError) in try runOnce(variant).1 }
            let first = reference ?? warmUp[0].checksum
            for (variant, outcome) in zip(variants, warmUp) where outcome.checksum != first {
                throw BenchmarkError("\(prepared.name): variants disagree: expected \(first), \(variant.name) gave \(outcome.checksum)")
            }
            reference = first
            statements = warmUp.map(\.statements)
        }

        var samples = Array(repeating: [Duration](), count: variants.count)
        var peaks: [Int?] = Array(repeating: nil, count: variants.count)
        // Per variant, the run whose resident memory grew most from its first batch to its last.
        var growths: [(first: Int, last: Int)?] = Array(repeating: nil, count: variants.count)
        // Per variant, the most its peak rose above the resident memory before its work, over its runs.
        var peakGrowths: [Int?] = Array(repeating: nil, count: variants.count)
        for _ in 0..<(prepared.runs ?? runs) {
            for (index, variant) in variants.enumerated() {
                let (elapsed, outcome) = try runOnce(variant)
                if reference == nil { reference = outcome.checksum }
                guard outcome.checksum == reference else {
                    throw BenchmarkError("\(prepared.name): \(variant.name) gave \(outcome.checksum), expected \(reference ?? 0) as on earlier runs")
                }
                if let counted = statements[index], outcome.statements != counted {
                    throw BenchmarkError("\(prepared.name): \(variant.name) ran \(outcome.statements) statements on one run, \(counted) on another")
                }
                statements[index] = outcome.statements
                if let peak = outcome.peakResidentBytes { peaks[index] = max(peaks[index] ?? 0, peak) }
                if let peak = outcome.peakResidentBytes, let before = outcome.residentBefore {
                    peakGrowths[index] = max(peakGrowths[index] ?? .min, peak - before)
                }
                if let first = outcome.residentAfterFirstBatch, let last = outcome.residentAfterLastBatch,
                   growths[index].map({ last - first > $0.last - $0.first }) ?? true {
                    growths[index] = (first, last)
                }
                samples[index].append(elapsed)
            }
        }

        let figures = variants.indices.map { index in
            VariantResult(name: variants[index].name, samplesMs: samples[index].map(Self.milliseconds), statements: statements[index] ?? 0,
                          peakMegabytes: peaks[index].map { Double($0) / 1_000_000 },
                          firstBatchMegabytes: growths[index].map { Double($0.first) / 1_000_000 },
                          lastBatchMegabytes: growths[index].map { Double($0.last) / 1_000_000 },
                          peakGrowthMegabytes: peakGrowths[index].map { Double($0) / 1_000_000 })
        }
        let ratio = figures[0].medianMs / max(figures[1].medianMs, .leastNonzeroMagnitude)
        let met: Bool
        var microsecondsPerOperation: Double?
        var operationName: String?
        var speedup: (over: String, times: Double)?
        switch prepared.goal {
        case .ratioAtMost(let limit):
            met = ratio <= limit
        case .microsecondsPerOperationAtMost(let limit, let operations, let operation):
            let perOperation = figures[0].medianMs * 1000 / Double(operations)
            microsecondsPerOperation = perOperation
            operationName = operation
            met = perOperation <= limit
        case .ratioAndPeakMemoryAtMost(let limit, let megabytes):
            guard let peak = figures[0].peakMegabytes else {
                throw BenchmarkError("\(prepared.name): \(variants[0].name) did not report its peak memory")
            }
            met = ratio <= limit && peak < megabytes
        case .ratioAtMostAndFasterThan(let limit, let name, let factor, let growthLimit):
            guard let slower = figures.first(where: { $0.name == name }) else {
                preconditionFailure("\(prepared.name) has no variant \(name) to compare with")
            }
            let times = slower.medianMs / max(figures[0].medianMs, .leastNonzeroMagnitude)
            speedup = (name, times)
            var grewLittle = true
            if let growthLimit {
                guard let growth = figures[0].peakGrowthMegabytes else {
                    throw BenchmarkError("\(prepared.name): \(variants[0].name) did not report how far its peak memory rose")
                }
                grewLittle = growth < growthLimit
            }
            met = ratio <= limit && times >= factor && grewLittle
        case .ratioAndMemoryGrowthAtMost(let limit, let megabytes):
            guard let first = figures[0].firstBatchMegabytes, let last = figures[0].lastBatchMegabytes else {
                throw BenchmarkError("\(prepared.name): \(variants[0].name) did not report its resident memory")
            }
            met = ratio <= limit && last - first < megabytes
        }
        return CaseResult(name: prepared.name, variants: figures, ratio: ratio, target: prepared.target, met: met,
                          microsecondsPerOperation: microsecondsPerOperation, operation: operationName, rows: prepared.rows,
                          speedupOver: speedup?.over, speedup: speedup?.times, deletion: prepared.deletion)
    }

    /// Runs `work`, turning any failure into a `BenchmarkError` that names `scope`.
    private static func describingFailures<T>(_ scope: String, _ work: () throws -> T) throws(BenchmarkError) -> T {
        do {
            return try work()
        } catch let error as BenchmarkError {
            throw BenchmarkError("\(scope): \(error.description)")
        } catch {
            throw BenchmarkError("\(scope): \(error)")
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

/// The figures of one variant over the timed runs.
public struct VariantResult: Sendable {
    public let name: String
    /// Each timed run, in order.
    public let samplesMs: [Double]
    public let statements: Int
    /// The largest peak resident set size over the runs, in MB (10^6 bytes): a child process's own, or this
    /// process's during the run for a case that resets the peak first.
    public let peakMegabytes: Double?
    /// For a variant that walks a result in batches: this process's resident memory after the first batch and after
    /// the last, in MB, from the run where it grew most.
    public let firstBatchMegabytes: Double?
    public let lastBatchMegabytes: Double?
    /// For a variant that notes its resident memory before its work: how far the peak during a run rose above it,
    /// in MB, the largest over the runs.
    public let peakGrowthMegabytes: Double?

    public var medianMs: Double {
        let sorted = samplesMs.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    public var minMs: Double { samplesMs.min() ?? 0 }
    public var maxMs: Double { samplesMs.max() ?? 0 }
}

/// One case's outcome: its variants (measured one first), the ratio of their medians, and the verdict.
public struct CaseResult: Sendable {
    public let name: String
    public let variants: [VariantResult]
    /// First variant's median over the second's.
    public let ratio: Double
    public let target: String
    public let met: Bool
    /// For cases whose target is a time per operation: the first variant's median per operation, in µs.
    public let microsecondsPerOperation: Double?
    /// What one operation is, for those cases ("fault", "frame").
    public let operation: String?
    /// For cases that write rows: how many each run writes.
    public let rows: Int?
    /// For cases whose target includes beating another variant: that variant, and how many times its median the
    /// first variant's is.
    public let speedupOver: String?
    public let speedup: Double?
    /// For a case that deletes: what each run deleted, per entity, and the references surviving rows lost.
    public let deletion: DeletionPlan?

    /// Rows per second of each variant's median run, for cases that write rows.
    public func rowsPerSecond(_ variant: VariantResult) -> Double? {
        guard let rows, variant.medianMs > 0 else { return nil }
        return Double(rows) / (variant.medianMs / 1000)
    }
}
