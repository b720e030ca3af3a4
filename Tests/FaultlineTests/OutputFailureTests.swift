import Foundation
import Testing

/// Every command with an output it cannot write: stdout closed, stdout on `/dev/full`, stdout a pipe whose reader is
/// gone, and stderr closed or full. Failing to write the output is an error (one `error:` line, a non-zero exit),
/// never a crash and never a success; a stderr that cannot be written loses its lines and nothing else.
@Suite struct OutputFailureTests {
    /// What stdout or stderr is for the child.
    enum Sink: CustomStringConvertible {
        /// The descriptor closed (`>&-`).
        case closed
        /// `/dev/full`: every write fails with ENOSPC.
        case full
        /// A pipe whose reading end was closed before the child started: every write fails with EPIPE.
        case brokenPipe

        var description: String {
            switch self {
            case .closed: "closed"
            case .full: "/dev/full"
            case .brokenPipe: "a broken pipe"
            }
        }
    }

    struct Outcome {
        let status: Int32
        let reason: Process.TerminationReason
        /// What the other stream received (stderr when stdout was the sink, stdout when stderr was).
        let other: String
    }

    /// Runs the binary with `stream` (1 or 2) going to `sink`; the other stream is read.
    static func run(_ arguments: [String], stream: Int32, to sink: Sink) throws -> Outcome {
        let process = Process()
        let capture = Pipe()
        var brokenPipe: Pipe?
        switch sink {
        case .closed, .full:
            // The shell sets up the descriptor, then becomes the binary (exec), so its exit is the binary's.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let redirection = sink == .closed ? "\(stream)>&-" : "\(stream)>/dev/full"
            process.arguments = ["-c", "exec \"$0\" \"$@\" \(redirection)", FaultlineBinary.url.path] + arguments
        case .brokenPipe:
            process.executableURL = FaultlineBinary.url
            process.arguments = arguments
            let pipe = Pipe()
            try pipe.fileHandleForReading.close()
            brokenPipe = pipe
        }
        if stream == 1 {
            if let brokenPipe { process.standardOutput = brokenPipe }
            process.standardError = capture
        } else {
            if let brokenPipe { process.standardError = brokenPipe }
            process.standardOutput = capture
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = capture.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, reason: process.terminationReason, other: String(decoding: data, as: UTF8.self))
    }

    /// A small chat store, generated once.
    static let store = FaultlineBinary.smallStore("output-failure", users: 20, chats: 5, messages: 100)

    static let model = testModels.appendingPathComponent("Students.xcdatamodel").path

    /// Each command, in each of its output forms, as a test names it.
    static func commands(out: String) -> [(name: String, arguments: [String])] {
        [
            ("model", ["model", model]),
            ("model --json", ["model", model, "--json"]),
            ("model --ddl", ["model", model, "--ddl"]),
            ("fixture generate", ["fixture", "generate", "--out", out, "--force", "--users", "10", "--chats", "3", "--messages", "30"]),
            ("fixture generate --json", ["fixture", "generate", "--out", out, "--force", "--users", "10", "--chats", "3", "--messages", "30", "--json"]),
            ("check", ["check", store]),
            ("check --json", ["check", store, "--json"]),
            ("delete --dry-run", ["delete", store, "--chat", "1", "--dry-run"]),
            ("delete --dry-run --json", ["delete", store, "--chat", "1", "--dry-run", "--json"]),
            ("scenario", ["scenario", "students"]),
            ("scenario --json", ["scenario", "associates", "--json"]),
            ("trace", ["trace", store, "--script", "down; open"]),
            ("trace --json", ["trace", store, "--json", "--script", "down"]),
            ("simulate", ["simulate", store, "--count", "2", "--rate", "0"]),
            ("--help", ["--help"]),
            ("--version", ["--version"]),
            ("help delete", ["help", "delete"]),
            ("trace --help", ["trace", "--help"]),
        ]
    }

    private func expectOutputError(_ outcome: Outcome, _ what: String) {
        #expect(outcome.reason == .exit, "\(what): killed by signal \(outcome.status)")
        #expect(outcome.status != 0, "\(what): exit 0 though nothing could be written")
        let lines = outcome.other.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("error: ") }
        #expect(lines.count == 1 && lines.first?.contains("stdout") == true, "\(what): stderr was \(outcome.other)")
        for crash in ["Backtrac", "Fatal error", "runtime failure", "Illegal instruction"] {
            #expect(!outcome.other.contains(crash), "\(what): \(outcome.other)")
        }
    }

    @Test(arguments: [Sink.closed, .full, .brokenPipe])
    func everyCommandReportsAStdoutItCannotWrite(_ sink: Sink) throws {
        let folder = TemporaryFolder()
        for command in Self.commands(out: folder.path("out.sqlite")) {
            let outcome = try Self.run(command.arguments, stream: 1, to: sink)
            expectOutputError(outcome, "\(command.name), stdout \(sink)")
        }
    }

    @Test func aClosedStdoutSaysSo() throws {
        let outcome = try Self.run(["model", Self.model], stream: 1, to: .closed)
        #expect(outcome.other == "error: stdout is closed: cannot write the output\n")
        let full = try Self.run(["model", Self.model], stream: 1, to: .full)
        #expect(full.other == "error: stdout: cannot write the output (No space left on device)\n")
    }

    @Test func aBenchmarkWhoseReportCannotBeWrittenFails() throws {
        let outcome = try Self.run(["bench", "--quick", "--case", "render-frame"], stream: 1, to: .brokenPipe)
        expectOutputError(outcome, "bench, stdout a broken pipe")
        #expect(outcome.other.contains("error: stdout: cannot write the output (Broken pipe)"))
    }

    /// The delete is saved before its report is written: the one error line says so, and the row is gone.
    @Test func aDeleteWhoseReportCannotBeWrittenSaysItWasSaved() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--users", "10", "--chats", "3", "--messages", "30"])
        try #require(made.status == 0, "\(made.stderr)")
        let outcome = try Self.run(["delete", store, "--message", "5"], stream: 1, to: .full)
        expectOutputError(outcome, "delete, stdout /dev/full")
        #expect(outcome.other.contains("; the delete of x-coredata://"), "\(outcome.other)")
        #expect(outcome.other.contains("/Message/p5 was saved"), "\(outcome.other)")
        let again = try FaultlineBinary.run(["delete", store, "--message", "5", "--dry-run"])
        #expect(again.status == 1 && again.stderr.contains("no Message with primary key 5"), "\(again.stderr)")
    }

    /// With --undo, the delete and then its undo are saved before the report: the error line says the object was
    /// deleted and restored, and it is there again.
    @Test func anUndoneDeleteWhoseReportCannotBeWrittenSaysItWasRestored() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--users", "10", "--chats", "3", "--messages", "20"])
        try #require(made.status == 0, "\(made.stderr)")
        let outcome = try Self.run(["delete", store, "--message", "8", "--undo", "--json"], stream: 1, to: .brokenPipe)
        expectOutputError(outcome, "delete --undo, stdout a broken pipe")
        #expect(outcome.other.hasPrefix("error: stdout: cannot write the output (Broken pipe); x-coredata://"), "\(outcome.other)")
        #expect(outcome.other.hasSuffix("/Message/p8 was deleted and then restored (the delete and its undo were both saved)\n"),
                "\(outcome.other)")
        #expect(!outcome.other.contains("the delete of"), "\(outcome.other)")
        let again = try FaultlineBinary.run(["delete", store, "--message", "8", "--dry-run"])
        #expect(again.status == 0, "the message is back: \(again.stderr)")
    }

    /// stderr closed or full: a failing command still fails with its own status (its error line is lost), and one
    /// that succeeds (writing progress or an SQL log to stderr on the way) still succeeds.
    @Test(arguments: [Sink.closed, .full, .brokenPipe])
    func aStderrThatCannotBeWrittenNeitherCrashesNorHidesTheStatus(_ sink: Sink) throws {
        let folder = TemporaryFolder()
        let missing = try Self.run(["check", folder.path("missing.sqlite")], stream: 2, to: sink)
        #expect(missing.reason == .exit && missing.status == 2, "check of a missing file, stderr \(sink): \(missing.status)")

        let usage = try Self.run(["simulate", Self.store, "--rate", "nan"], stream: 2, to: sink)
        #expect(usage.reason == .exit && usage.status == 64, "usage error, stderr \(sink): \(usage.status)")

        let generated = try Self.run(["fixture", "generate", "--out", folder.path("made.sqlite"), "--users", "10", "--chats", "3", "--messages", "30"],
                                     stream: 2, to: sink)
        #expect(generated.reason == .exit && generated.status == 0, "fixture generate, stderr \(sink): \(generated.status)")
        #expect(FileManager.default.fileExists(atPath: folder.path("made.sqlite")))

        let traced = try Self.run(["trace", Self.store, "--sql-debug", "2", "--script", "down"], stream: 2, to: sink)
        #expect(traced.reason == .exit && traced.status == 0, "trace with the SQL log on stderr \(sink): \(traced.status)")
        #expect(traced.other.contains("Chats"), "trace's screen: \(traced.other)")
    }
}
