import ArgumentParser
import Bench
import Foundation
import GraphStore

/// `faultline bench`: times the object graph's hot paths against the raw SQLite C API doing the same work.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time faults, saves, event observers, chat-list fetches, a cascading delete and the browser's frame against the raw SQLite C API doing the same work.",
        discussion: """
            Each case runs its variants once to warm up (checking that they agree on the result), then several \
            times each, interleaved: 5 runs, or 2 with --quick (which also uses 10,000 rows instead of 100,000). \
            fixture-generate runs this program's `fixture generate` as a child process for 1,000,000 messages \
            (20,000 with --quick), 3 times (2 with --quick) with no warm-up, and reports rows per second and the \
            child's peak memory. chat-list and chat-list-scroll read a chat store generated once, untimed, with \
            10,000 chats, 20,000 users and 1,000,000 messages (1,000 chats, 2,000 users and 50,000 messages with \
            --quick): chat-list times the first 30 rows of the chat list four ways (tuned Faultline, the raw \
            JOIN, Core Data's tuned way, Core Data's defaults), 21 runs each (5 with --quick); chat-list-scroll \
            scrolls the whole list in batches of 20 and reports resident memory after the first and the last \
            batch. cascade-delete deletes a chat of 100,000 messages (10,000 with --quick) with its members, \
            reactions, attachments and links, and saves, three ways (Faultline's delete, Core Data's \
            object-by-object propagation, hand-written SQL), each on a fresh copy of a prepared store, 3 runs (2 with \
            --quick); the stores left must be identical, and it reports how far each variant's peak memory rose. \
            render-frame draws the browser's 200×60 screen from state 1,000 times a run (200 with --quick) on a \
            store of the default fixture's size. \
            Stores are built in a temporary folder and removed afterwards. Build with -c release for figures that \
            mean anything.

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
            print(report.json())
        } else {
            print(report.table(), terminator: "")
        }
    }

    /// This program's own file, which `fixture-generate` runs as a child.
    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
