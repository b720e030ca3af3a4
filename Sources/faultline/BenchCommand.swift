import ArgumentParser
import Bench
import Foundation

/// `faultline bench`: times the object graph's hot paths against the raw SQLite C API doing the same work.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time faults, saves and event observers against the raw SQLite C API doing the same work.",
        discussion: """
            Each case runs its variants once to warm up (checking that they agree on the result), then several \
            times each, interleaved: 5 runs, or 2 with --quick (which also uses 10,000 rows instead of 100,000). \
            Stores are built in a temporary folder and removed afterwards. Build with -c release for figures \
            that mean anything.

            Cases: \(BenchmarkCaseName.allCases.map(\.rawValue).joined(separator: ", ")).
            """
    )

    @Flag(help: "Fewer rows and runs: a quick look, not a measurement.")
    var quick = false

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(name: .customLong("case"), help: ArgumentHelp("Run only this case (repeatable).", valueName: "name"))
    var cases: [String] = []

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

        if Self.build == "debug" {
            Self.printError("warning: this is a debug build; its numbers mean little (build with 'swift build -c release')")
        }
        let showProgress = !json
        let report: BenchmarkReport
        do {
            report = try BenchmarkRunner(quick: quick).run(selected, build: Self.build) { line in
                if showProgress { Self.printError(line) }
            }
        } catch {
            throw CommandFailure(error.description)
        }
        if json {
            print(report.json())
        } else {
            print(report.table(), terminator: "")
        }
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
