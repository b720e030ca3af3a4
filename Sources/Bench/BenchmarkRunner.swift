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

    /// The sizes a run works at, in one sentence, for the Markdown report.
    public static func scale(quick: Bool) -> String {
        quick
            ? "graph cases on 10,000 items; the chat store 1,000 chats, 2,000 users, 50,000 messages; `fixture-generate` "
                + "20,000 messages; `cascade-delete` a chat of 10,000 messages; 2 timed runs per variant unless a case says otherwise"
            : "graph cases on 100,000 items; the chat store 10,000 chats, 20,000 users, 1,000,000 messages; "
                + "`fixture-generate` 1,000,000 messages; `cascade-delete` a chat of 100,000 messages; 5 timed runs per "
                + "variant unless a case says otherwise"
    }

    /// Runs the named cases (in the order given, each once), building their stores in a temporary folder that is
    /// removed before returning. `progress` hears a line as each case starts.
    public func run(_ names: [BenchmarkCaseName], build: String, progress: (String) -> Void = { _ in }) throws(BenchmarkError) -> BenchmarkReport {
        let folder = try Self.makeFolder("faultline-bench")
        defer { try? FileManager.default.removeItem(at: folder) }
        let results = try runCases(names, folder: folder, scale: .standard(quick: quick), progress: progress)
        return BenchmarkReport(cases: results, build: build, quick: quick)
    }

    /// The cases a sweep runs, in its order: the two screens, a fault that misses the row cache, and a send.
    public static let sweepCases: [BenchmarkCaseName] = [.chatList, .openChat, .faultFromSQLite, .addMessage]

    /// The store sizes of a sweep, in messages: 10,000, 100,000 and 1,000,000, or 2,000, 20,000 and 200,000 with `--quick`.
    public static func sweepSizes(quick: Bool) -> [Int] {
        quick ? [2_000, 20_000, 200_000] : [10_000, 100_000, 1_000_000]
    }

    /// Why `sizes` cannot make a sweep, or nil: at least two sizes, ascending, each from `SweepSize.smallest` to
    /// `SweepSize.largest` messages.
    public static func sweepSizesProblem(_ sizes: [Int]) -> String? {
        if sizes.count < 2 { return "a sweep needs at least two sizes, not \(sizes.count)" }
        for size in sizes where size < SweepSize.smallest || size > SweepSize.largest {
            return "each size must be from \(SweepSize.smallest) to \(SweepSize.largest) messages, not \(size)"
        }
        for (smaller, larger) in zip(sizes, sizes.dropFirst()) where larger <= smaller {
            return "the sizes must grow from one to the next, but \(larger) follows \(smaller)"
        }
        return nil
    }

    /// Runs `names` (by default `sweepCases`) on a chat store of each size in `sizes` (messages; chats and users in
    /// the full store's proportions, `SweepSize`), each size's stores in a folder of their own that is removed before
    /// the next size is built. `fault-from-sqlite` faults the same number of items at every size, on an item store
    /// of as many items as the chat store has messages. `progress` hears a line as each case starts.
    public func sweep(_ names: [BenchmarkCaseName] = BenchmarkRunner.sweepCases, sizes: [Int], build: String,
                      progress: (String) -> Void = { _ in }) throws(BenchmarkError) -> SweepReport {
        if let problem = Self.sweepSizesProblem(sizes) { throw BenchmarkError(problem) }
        let faults = min(BenchmarkScale.sqliteFaults, sizes.min() ?? 0)
        let folder = try Self.makeFolder("faultline-sweep")
        defer { try? FileManager.default.removeItem(at: folder) }
        var runs: [SweepReport.Run] = []
        for messages in sizes {
            let size = SweepSize(messages: messages)
            // Each size's stores go before the next size's are made: the largest take hundreds of MB.
            let sizeFolder = try Self.makeFolder(folder.appendingPathComponent("messages-\(messages)"))
            defer { try? FileManager.default.removeItem(at: sizeFolder) }
            let scale = BenchmarkScale(items: messages, sqliteFaults: faults, chatStore: size.fixtureOptions)
            let results = try runCases(names, folder: sizeFolder, scale: scale) { line in
                progress("\(SweepSize.grouped(messages)) messages: \(line)")
            }
            runs.append(SweepReport.Run(size: size, items: scale.items, faults: faults, cases: results))
        }
        return SweepReport(runs: runs, build: build, quick: quick)
    }

    /// A new, empty temporary folder for a run's stores.
    private static func makeFolder(_ stem: String) throws(BenchmarkError) -> URL {
        try makeFolder(FileManager.default.temporaryDirectory.appendingPathComponent("\(stem)-\(UUID().uuidString)"))
    }

    /// Creates `folder` (and any missing folders above it).
    private static func makeFolder(_ folder: URL) throws(BenchmarkError) -> URL {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw BenchmarkError("cannot create a folder for the stores at \(folder.path): \(error.localizedDescription)")
        }
        return folder
    }

    /// Prepares and measures the named cases (in the order given, each once) at `scale`, their stores in `folder`.
    private func runCases(_ names: [BenchmarkCaseName], folder: URL, scale: BenchmarkScale,
                          progress: (String) -> Void) throws(BenchmarkError) -> [CaseResult] {
        var seen = Set<BenchmarkCaseName>()
        let selected = names.filter { seen.insert($0).inserted }
        var results: [CaseResult] = []
        // Scoped so every store and connection is released before the caller removes the folder.
        do {
            let cases = try Self.describingFailures("setup") {
                try CaseBuilders(folder: folder, quick: quick, scale: scale, executable: executable, opened: opened)
            }
            for name in selected {
                progress("\(name.rawValue): preparing")
                let prepared = try Self.describingFailures(name.rawValue) { try cases.prepare(name) }
                let count = prepared.runs ?? runs
                progress("\(name.rawValue): \(count) run\(count == 1 ? "" : "s") per variant\(prepared.warmUp ? " after a warm-up" : "")")
                results.append(try measure(prepared))
            }
        }
        return results
    }

    private func measure(_ prepared: PreparedCase) throws(BenchmarkError) -> CaseResult {
        let variants = prepared.variants
        precondition(variants.count >= 2, "a case compares at least two variants")
        func runOnce(_ variant: BenchmarkVariant, recordingSQL: Bool = false) throws(BenchmarkError) -> (Duration, RunOutcome) {
            let stopwatch = Stopwatch(recordsSQL: recordingSQL)
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
        var sql: [[String]?] = Array(repeating: nil, count: variants.count)
        if prepared.warmUp {
            let warmUp = try variants.map { variant throws(BenchmarkError) in try runOnce(variant, recordingSQL: true).1 }
            let first = reference ?? warmUp[0].checksum
            for (variant, outcome) in zip(variants, warmUp) where outcome.checksum != first {
                throw BenchmarkError("\(prepared.name): variants disagree: expected \(first), \(variant.name) gave \(outcome.checksum)")
            }
            reference = first
            statements = warmUp.map(\.statements)
            sql = warmUp.map(\.sql)
        }

        var samples = Array(repeating: [Duration](), count: variants.count)
        var peaks: [Int?] = Array(repeating: nil, count: variants.count)
        // Per variant, the run whose resident memory grew most from its first batch to its last.
        var growths: [(first: Int, last: Int)?] = Array(repeating: nil, count: variants.count)
        // Per variant, the most its peak rose above the resident memory before its work, over its runs.
        var peakGrowths: [Int?] = Array(repeating: nil, count: variants.count)
        var checksums: [Int64?] = Array(repeating: nil, count: variants.count)
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
                checksums[index] = outcome.checksum
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
                          peakGrowthMegabytes: peakGrowths[index].map { Double($0) / 1_000_000 }, sql: sql[index],
                          checksum: checksums[index])
        }
        return try Self.verdict(on: figures, of: prepared)
    }

    /// Evaluates the case's goals on its figures.
    static func verdict(on figures: [VariantResult], of prepared: PreparedCase) throws(BenchmarkError) -> CaseResult {
        func variant(_ name: String) -> VariantResult {
            guard let found = figures.first(where: { $0.name == name }) else {
                preconditionFailure("\(prepared.name) has no variant \(name)")
            }
            return found
        }
        func times(_ slower: VariantResult, _ faster: VariantResult) -> Double {
            slower.medianMs / max(faster.medianMs, .leastNonzeroMagnitude)
        }
        var checks: [CheckResult] = []
        var microsecondsPerOperation: Double?
        var operationName: String?
        var speedup: (over: String, times: Double)?
        for goal in prepared.goals {
            let met: Bool
            let measured: String
            switch goal {
            case .ratio(let name, let peer, let limit):
                let ratio = times(variant(name), variant(peer))
                met = ratio <= limit
                measured = String(format: "%.2f×", ratio)
            case .fasterThan(let name, let peer, let factor):
                let ratio = times(variant(peer), variant(name))
                met = ratio >= factor
                measured = String(format: "%.1f× faster", ratio)
                if speedup == nil { speedup = (peer, ratio) }
            case .statementsAtMost(let name, let peer):
                let (own, theirs) = (variant(name).statements, variant(peer).statements)
                met = own <= theirs
                measured = "\(own) vs \(theirs)"
            case .sameStatements(let names):
                let counts = names.map { variant($0).statements }
                met = Set(counts).count <= 1
                measured = counts.map(String.init).joined(separator: " = ")
            case .microsecondsPerOperation(let name, let limit, let operations, let operation):
                let perOperation = variant(name).medianMs * 1000 / Double(max(operations, 1))
                met = perOperation <= limit
                measured = String(format: "%.3f µs", perOperation)
                if microsecondsPerOperation == nil { (microsecondsPerOperation, operationName) = (perOperation, operation) }
            case .peakMemory(let name, let megabytes):
                guard let peak = variant(name).peakMegabytes else {
                    throw BenchmarkError("\(prepared.name): \(name) did not report its peak memory")
                }
                met = peak < megabytes
                measured = String(format: "%.1f MB", peak)
            case .peakGrowth(let name, let megabytes):
                guard let growth = variant(name).peakGrowthMegabytes else {
                    throw BenchmarkError("\(prepared.name): \(name) did not report how far its peak memory rose")
                }
                met = growth < megabytes
                measured = String(format: "%+.1f MB", growth)
            case .peakGrowthRatio(let name, let peer, let limit):
                guard let growth = variant(name).peakGrowthMegabytes, let peerGrowth = variant(peer).peakGrowthMegabytes else {
                    throw BenchmarkError("\(prepared.name): \(name) or \(peer) did not report how far its peak memory rose")
                }
                // A peer that grew by nothing (under a tenth of a megabyte) leaves no ratio: the variant must not grow either.
                met = peerGrowth >= 0.1 ? growth <= limit * peerGrowth : growth < 0.1
                measured = String(format: "%+.1f MB against %+.1f MB", growth, peerGrowth)
            case .batchGrowth(let name, let megabytes):
                guard let first = variant(name).firstBatchMegabytes, let last = variant(name).lastBatchMegabytes else {
                    throw BenchmarkError("\(prepared.name): \(name) did not report its resident memory")
                }
                met = last - first < megabytes
                measured = String(format: "%+.1f MB", last - first)
            }
            checks.append(CheckResult(check: goal.description, measured: measured, met: met))
        }
        // The ratio the case is known by: the first variant against the case's headline peer, else raw SQLite where
        // the case has it, else the second variant.
        let floor = prepared.headlinePeer.map(variant) ?? figures.first { $0.name == VariantName.raw } ?? figures[1]
        let ratio = times(figures[0], floor)
        let grdb = figures.first { $0.name == VariantName.grdb }
        return CaseResult(name: prepared.name, variants: figures, ratio: ratio, ratioOver: floor.name,
                          ratioToGRDB: grdb.map { times(figures[0], $0) }, target: prepared.target, checks: checks,
                          microsecondsPerOperation: microsecondsPerOperation, operation: operationName, rows: prepared.rows,
                          speedupOver: speedup?.over, speedup: speedup?.times, deletion: prepared.deletion, note: prepared.note)
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
    /// The distinct SQL statements the variant ran on its warm-up run, where it records them.
    public let sql: [String]?
    /// What its timed runs gave as the case's checksum (the runner checked that every run gave the same).
    public let checksum: Int64?

    public var medianMs: Double {
        let sorted = samplesMs.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    public var minMs: Double { samplesMs.min() ?? 0 }
    public var maxMs: Double { samplesMs.max() ?? 0 }
}

/// One case's outcome: its variants (measured one first), the ratios of their medians, and each goal's verdict.
public struct CaseResult: Sendable {
    public let name: String
    public let variants: [VariantResult]
    /// First variant's median over `ratioOver`'s: the case's headline peer's, else raw SQLite's where the case has
    /// it, else the second variant's.
    public let ratio: Double
    public let ratioOver: String
    /// First variant's median over GRDB's, for cases with a GRDB variant.
    public let ratioToGRDB: Double?
    public let target: String
    /// Each goal, measured.
    public let checks: [CheckResult]
    /// Whether every goal was met.
    public var met: Bool { checks.allSatisfy(\.met) }
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
    /// A line on what the case did.
    public let note: String?

    /// A variant's median over the named variant's, when the case has it.
    public func ratio(of variant: VariantResult, to name: String) -> Double? {
        guard let other = variants.first(where: { $0.name == name }) else { return nil }
        return variant.medianMs / max(other.medianMs, .leastNonzeroMagnitude)
    }

    /// Rows per second of each variant's median run, for cases that write rows.
    public func rowsPerSecond(_ variant: VariantResult) -> Double? {
        guard let rows, variant.medianMs > 0 else { return nil }
        return Double(rows) / (variant.medianMs / 1000)
    }
}

/// One goal of a case, measured.
public struct CheckResult: Sendable {
    /// The goal in words.
    public let check: String
    /// What was measured, in words ("1.21×", "0.3 µs").
    public let measured: String
    public let met: Bool
}
