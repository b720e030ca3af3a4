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

    @OptionGroup var sqlDebug: SQLDebugOptions

    static var build: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    func run() throws {
        var selected: [BenchmarkCaseName] = []
        for name in cases {
            guard let known = BenchmarkCaseName(rawValue: name) else {
                let names = BenchmarkCaseName.allCases.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure("unknown case '\(name)' (known cases: \(names))")
            }
            selected.append(known)
        }
        if selected.isEmpty { selected = BenchmarkCaseName.allCases }
        // Checked before the run, which can take minutes.
        let page: MarkdownRun?
        if markdown?.isEmpty == true { throw CommandFailure("--markdown is empty: give the Markdown file to write the run into") }
        do {
            page = try markdown.map { path throws(BenchmarkError) in try MarkdownRun(path: path) }
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
        let report: BenchmarkReport
        do {
            report = try runner.run(selected, build: Self.build) { line in
                if showProgress { Self.printError(line) }
            }
        } catch {
            throw CommandFailure(error.description)
        }
        withExtendedLifetime(logs) {}
        if let page {
            var command = "swift build -c release && .build/release/faultline bench"
            if quick { command += " --quick" }
            for name in cases { command += " --case \(name)" }
            command += " --markdown \(page.path)"
            let date = Date().formatted(.iso8601.year().month().day())
            do {
                try page.write(report.markdown(machine: MarkdownRun.machine(), date: date, scale: BenchmarkRunner.scale(quick: quick),
                                               command: command))
            } catch {
                throw CommandFailure(error.description)
            }
        }
        if json {
            try Output.write(report.json() + "\n")
        } else {
            try Output.write(report.table())
        }
    }

    /// This program's own file, which `fixture-generate` runs as a child.
    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath
    }

    private static func printError(_ line: String) {
        Output.writeError(line + "\n")
    }
}
