import ArgumentParser
import Bench
import Foundation
import GraphStore

/// `faultline bench`: times the object graph's hot paths against the raw SQLite C API doing the same work.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time Faultline's reads and writes beside GRDB and the raw SQLite C API doing the same work.",
        discussion: """
            Each case runs its variants once to warm up (checking that their outputs agree), then several times \
            each, interleaved: 5 runs, or 2 with --quick. The variants: faultline (tuned), faultline-coredata \
            (tuned only as Core Data allows), faultline-defaults (Core Data's defaults), grdb (GRDB written for \
            speed: hand-written SQL from its statement cache, rows read by column index), grdb-query-interface \
            (GRDB as its documentation introduces it: Codable records and associations), raw-sqlite (the C API by \
            hand, doing what Faultline does) and raw-sqlite-floor (the least work that gives the same answer); a few \
            cases add peers named for what they do (dictionary, raw-sqlite-keyset, raw-sqlite-subqueries, \
            object-by-object). The \
            report gives each variant's median, minimum and maximum time, its SQL statements, its median over \
            raw-sqlite's and over grdb's, and each case's goals with what was measured; with --json, also the SQL \
            each variant ran on its warm-up run, where it records it.

            Full size: graph cases on 100,000 items; a chat store of 10,000 chats, 20,000 users and 1,000,000 \
            messages, generated once, untimed, for chat-list, chat-list-scroll, open-chat, materialize-messages, \
            add-message and startup; fixture-generate writes 1,000,000 messages; cascade-delete deletes a chat of \
            100,000 messages. --quick uses a tenth or less of each and finishes in under a minute. Stores are built \
            in a temporary folder and removed afterwards. Build with -c release for figures that mean anything; \
            docs/benchmarks.md keeps the goals and the last full run (--markdown docs/benchmarks.md rewrites it).

            Cases: \(BenchmarkCaseName.allCases.map(\.rawValue).joined(separator: ", ")).

            --sweep runs \(BenchmarkRunner.sweepCases.map(\.rawValue).joined(separator: ", ")) on chat stores of \
            10,000, 100,000 and 1,000,000 messages (2,000, 20,000 and 200,000 with --quick; --sizes names others), \
            chats and users in the full store's proportions (a chat per 100 messages, a user per 50), and \
            fault-from-sqlite on an item store of as many items; it reports each variant's median at every size and \
            the largest size's over the smallest's, and checks that the chat list's and the open chat's first screens \
            (faultline) take at most \(SweepReport.growthLimitText)× as long on the largest store as on the smallest.
            """
    )

    @Flag(help: "Fewer rows and runs: a quick look, not a measurement.")
    var quick = false

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(name: .customLong("case"), help: ArgumentHelp("Run only this case (repeatable).", valueName: "name"))
    var cases: [String] = []

    @Option(help: ArgumentHelp(
        "Also write the run as Markdown (machine, date, scale, how to rerun, the table, the goals) into this file, between its lines '\(MarkdownRun.begin)' and '\(MarkdownRun.end)'.",
        valueName: "file"))
    var markdown: String?

    @Flag(help: "Run the sweep's cases on stores of growing size and report how their times grow.")
    var sweep = false

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "With --sweep: the store sizes in messages, ascending, comma-separated (e.g. 2000,20000), from \(SweepSize.smallest) to \(SweepSize.largest).",
        valueName: "list"))
    var sizes: String?

    @OptionGroup var sqlDebug: SQLDebugOptions

    static var build: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    func validate() throws {
        if sizes != nil, !sweep { throw ValidationError("--sizes needs --sweep") }
        _ = try sweepSizes()
    }

    /// The sweep's sizes: --sizes parsed and checked, or the defaults.
    private func sweepSizes() throws(ValidationError) -> [Int] {
        guard let sizes else { return BenchmarkRunner.sweepSizes(quick: quick) }
        var parsed: [Int] = []
        for field in sizes.split(separator: ",", omittingEmptySubsequences: false) {
            let text = field.trimmingCharacters(in: .whitespaces)
            guard let size = Int(text) else {
                throw ValidationError("--sizes: '\(text)' is not a whole number of messages (give e.g. 2000,20000)")
            }
            parsed.append(size)
        }
        if let problem = BenchmarkRunner.sweepSizesProblem(parsed) { throw ValidationError("--sizes: \(problem)") }
        return parsed
    }

    func run() throws {
        let known = sweep ? BenchmarkRunner.sweepCases : BenchmarkCaseName.allCases
        var selected: [BenchmarkCaseName] = []
        for name in cases {
            guard let found = BenchmarkCaseName(rawValue: name), known.contains(found) else {
                let names = known.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure(BenchmarkCaseName(rawValue: name) == nil
                    ? "unknown case '\(name)' (known cases: \(names))"
                    : "--case \(name) is not one of the sweep's cases (\(names))")
            }
            selected.append(found)
        }
        if selected.isEmpty { selected = known }
        // Checked before the run, which can take minutes.
        let page: MarkdownRun?
        if markdown?.isEmpty == true { throw CommandFailure("--markdown is empty: give the Markdown file to write the run into") }
        do {
            page = try markdown.map { path throws(BenchmarkError) in try MarkdownRun(path: path, sweep: sweep) }
        } catch {
            throw CommandFailure(error.description)
        }

        if Self.build == "debug" {
            Self.printError("warning: this is a debug build; its numbers mean little (build with 'swift build -c release')")
        }
        let showProgress = !json
        // The log sees every coordinator the cases open; its cost lands in their times, so say so.
        var logs: [SQLDebugLog] = []
        var sink: FileHandle?
        if try sqlDebug.effectiveLevel() != nil {
            sink = try sqlDebug.openSink()
            Self.printError("warning: the SQL debug log is on; its cost is part of every time below")
        }
        let runner = BenchmarkRunner(quick: quick, executable: Self.executablePath) { [sqlDebug] coordinator in
            // The level and the sink were checked above, so attaching cannot fail here.
            if let sink, let log = try? sqlDebug.attach(to: coordinator, sink: sink) { logs.append(log) }
        }
        let progress = { (line: String) in
            if showProgress { Self.printError(line) }
        }
        // What to write: the report as a table or JSON, and as Markdown for the page.
        let text: String
        let markdownRun: (_ machine: String, _ date: String, _ command: String) -> String
        let sizes = sweep ? try sweepSizes() : []
        do {
            if sweep {
                let report = try runner.sweep(selected, sizes: sizes, build: Self.build, progress: progress)
                text = json ? report.json() + "\n" : report.table()
                markdownRun = { report.markdown(machine: $0, date: $1, command: $2) }
            } else {
                let report = try runner.run(selected, build: Self.build, progress: progress)
                text = json ? report.json() + "\n" : report.table()
                markdownRun = { report.markdown(machine: $0, date: $1, scale: BenchmarkRunner.scale(quick: quick), command: $2) }
            }
        } catch {
            throw CommandFailure(error.description)
        }
        withExtendedLifetime(logs) {}
        if let page {
            var command = "swift build -c release && .build/release/faultline bench"
            if sweep { command += " --sweep" }
            if quick { command += " --quick" }
            if self.sizes != nil { command += " --sizes \(sizes.map(String.init).joined(separator: ","))" }
            for name in cases { command += " --case \(name)" }
            command += " --markdown \(page.path)"
            let date = Date().formatted(.iso8601.year().month().day())
            do {
                try page.write(markdownRun(MarkdownRun.machine(), date, command))
            } catch {
                throw CommandFailure(error.description)
            }
        }
        try Output.write(text)
    }

    /// This program's own file, which `fixture-generate` runs as a child.
    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath
    }

    private static func printError(_ line: String) {
        Output.writeError(line + "\n")
    }
}
