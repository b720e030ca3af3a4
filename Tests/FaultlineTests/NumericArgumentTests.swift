import Foundation
import Testing

/// Numbers given on the command line or in a `trace` script, at and past their edges: each out-of-range one is one
/// `error:` line naming the option or the script step, a non-zero exit, and the store left as it was; none crashes,
/// overflows or takes memory without bound.
@Suite(.serialized) struct NumericArgumentTests {
    static let store = FaultlineBinary.smallStore("numeric-arguments", users: 20, chats: 4, messages: 60)

    /// The folder's files and their bytes (so a `-wal` appearing, or any byte changing, shows).
    private static func snapshot() -> [String: Data] {
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return Dictionary(uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: folder.appendingPathComponent($0).path) ?? Data()) })
    }

    private func expectRefused(_ arguments: [String], mentioning expected: [String], status: Int32? = nil) throws {
        let before = Self.snapshot()
        let result = try FaultlineBinary.run(arguments)
        let what = arguments.joined(separator: " ")
        #expect(result.status != 0 && result.status < 128, "\(what): exit \(result.status)")
        if let status { #expect(result.status == status, "\(what): exit \(result.status)") }
        #expect(result.stdout.isEmpty, "\(what): \(result.stdout)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && result.stderr.hasPrefix("error: "), "\(what): \(result.stderr)")
        for text in expected { #expect(result.stderr.contains(text), "\(what): \(result.stderr) lacks \(text)") }
        #expect(Self.snapshot() == before, "\(what) changed the store's folder")
    }

    @Test func traceScriptNumbersAreBounded() throws {
        let cases: [(String, [String])] = [
            ("resize 9223372036854775807x2", ["action 1 'resize 9223372036854775807x2'", "from 1 to 1000"]),
            ("resize 2x9223372036854775807", ["'resize 2x9223372036854775807'", "from 1 to 1000"]),
            ("resize 99999x99999", ["'resize 99999x99999'", "from 1 to 1000"]),
            ("down; resize 1001x40", ["action 2 'resize 1001x40'"]),
            ("resize 80x0", ["'resize 80x0'"]),
            ("resize -80x40", ["'resize -80x40'"]),
            ("resize 80x24x3", ["'resize 80x24x3'"]),
            ("resize 80x", ["'resize 80x'"]),
            ("down 9223372036854775807", ["'down 9223372036854775807'", "from 1 to 10000"]),
            ("down 99999999999999999999999", ["'down 99999999999999999999999'"]),
            ("up -1", ["'up -1'"]),
            ("undo 10001", ["'undo 10001'"]),
            ("batch 9223372036854775807", ["'batch 9223372036854775807'", "from 0 to 1000000"]),
            ("batch 1000001", ["'batch 1000001'"]),
            ("batch -1", ["'batch -1'"]),
        ]
        for (script, expected) in cases {
            try expectRefused(["trace", Self.store, "--script", script], mentioning: ["--script"] + expected)
        }
    }

    @Test func theLargestAllowedSizesWork() throws {
        let folder = TemporaryFolder()
        let copy = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Self.store, toPath: copy)
        let result = try FaultlineBinary.run(["trace", copy, "--size", "1000x1000", "--script", "resize 1x1; resize 1000x1000; batch 1000000; open; bottom"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.filter { $0 == "\n" }.count == 1000, "one line per row of the screen")
    }

    @Test func optionNumbersAreBounded() throws {
        let cases: [([String], [String], Int32?)] = [
            (["trace", Self.store, "--size", "9223372036854775807x2"], ["--size"], 1),
            (["trace", Self.store, "--size", "1001x40"], ["--size", "1000"], 1),
            (["trace", Self.store, "--size", "0x0"], ["--size"], 1),
            (["trace", Self.store, "--batch-size", "9223372036854775807"], ["--batch-size", "1000000"], 64),
            (["trace", Self.store, "--batch-size", "99999999999999999999"], ["--batch-size"], 64),
            (["trace", Self.store, "--batch-size=-1"], ["--batch-size"], 64),
            (["simulate", Self.store, "--rate", "1e-15"], ["--rate", "0.001"], 64),
            (["simulate", Self.store, "--rate", "1e300"], ["--rate"], 64),
            (["simulate", Self.store, "--rate", "nan"], ["--rate"], 64),
            (["simulate", Self.store, "--rate", "inf"], ["--rate"], 64),
            (["simulate", Self.store, "--rate=-1"], ["--rate"], 64),
            (["simulate", Self.store, "--count", "0"], ["--count"], 64),
            (["simulate", Self.store, "--count=-5"], ["--count"], 64),
            (["simulate", Self.store, "--count", "99999999999999999999"], ["--count"], 64),
            (["simulate", Self.store, "--seed", "18446744073709551616"], ["--seed"], 64),
            (["simulate", Self.store, "--seed=-1"], ["--seed"], 64),
            (["browse", Self.store, "--live", "--live-rate", "1e-300"], ["--live-rate", "0.1"], 64),
            (["browse", Self.store, "--live", "--live-rate", "1e300"], ["--live-rate"], 64),
            (["browse", Self.store, "--live", "--live-rate", "nan"], ["--live-rate"], 64),
            (["delete", Self.store, "--message", "9223372036854775808"], ["--message"], 1),
            (["delete", Self.store, "--message=-3"], ["--message"], 1),
            (["delete", Self.store, "--message", "x-coredata://AB/Message/p99999999999999999999"], ["--message"], 1),
            (["check", Self.store, "--limit", "99999999999999999999"], ["--limit"], nil),
            (["check", Self.store, "--limit=-1"], ["--limit"], nil),
        ]
        for (arguments, expected, status) in cases {
            try expectRefused(arguments, mentioning: expected, status: status)
        }
    }

    /// A negative number written after a space (`--batch-size -5`) is the option's value, not taken for an option
    /// (which gave ArgumentParser's misleading `Missing value for '--batch-size <n>'`): the option's own check says
    /// what range it allows.
    @Test func aNegativeNumberAfterASpaceGetsTheOptionsOwnMessage() throws {
        let out = TemporaryFolder()
        let generate = ["fixture", "generate", "--out", out.path("chat.sqlite")]
        let cases: [([String], [String], Int32)] = [
            (["trace", Self.store, "--batch-size", "-5"], ["--batch-size must be 0 or more, at most 1000000, not -5"], 64),
            (["browse", Self.store, "--batch-size", "-5"], ["--batch-size must be 0 or more, at most 1000000, not -5"], 64),
            (["trace", Self.store, "--progress-after", "-1"], ["--progress-after must be 0 or more milliseconds", "not -1"], 64),
            (["trace", Self.store, "--size", "-5x3"], ["--size '-5x3'", "each side from 1 to 1000"], 1),
            (["trace", Self.store, "--sql-debug", "-1"], ["--sql-debug must be a level from 1 to 4, not -1"], 64),
            (["check", Self.store, "--limit", "-1"], ["--limit must be 0 or more, not -1"], 64),
            (["simulate", Self.store, "--rate", "-1"], ["--rate must be 0", "not -1.0"], 64),
            (["simulate", Self.store, "--count", "-5"], ["--count must be at least 1, not -5"], 64),
            (["simulate", Self.store, "--seed", "-1"], ["'-1' is invalid for '--seed <n>'"], 64),
            (["browse", Self.store, "--live", "--live-rate", "-1"], ["--live-rate must be from 0.1 to 1000", "not -1.0"], 64),
            (["delete", Self.store, "--message", "-3"], ["--message '-3'", "give a primary key"], 1),
            (["delete", Self.store, "--chat", "-1"], ["--chat '-1'", "give a primary key"], 1),
            (["delete", Self.store, "--user", "-2"], ["--user '-2'", "give a primary key"], 1),
            (["bench", "--sweep", "--sizes", "-2000,20000"], ["--sizes: each size must be from 2000", "not -2000"], 64),
            (generate + ["--users", "-1"], ["--users must be at least 2", "not -1"], 1),
            (generate + ["--chats", "-1"], ["--chats must be at least 1, not -1"], 1),
            (generate + ["--messages", "-1"], ["--messages", "-1"], 1),
            (generate + ["--seed", "-1"], ["'-1' is invalid for '--seed <seed>'"], 64),
        ]
        for (arguments, expected, status) in cases {
            try expectRefused(arguments, mentioning: expected, status: status)
            #expect(!FileManager.default.fileExists(atPath: out.path("chat.sqlite")))
        }
    }

    /// The rate at its edges is taken: a slow one waits (stopped by --count 1 after the first message, delivered at
    /// once), the fastest runs.
    @Test func simulateRatesAtTheEdgesWork() throws {
        let folder = TemporaryFolder()
        let copy = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Self.store, toPath: copy)
        for rate in ["0.001", "1000000", "0"] {
            let result = try FaultlineBinary.run(["simulate", copy, "--rate", rate, "--count", "1"])
            #expect(result.status == 0, "--rate \(rate): \(result.stderr)")
            #expect(result.stdout.hasPrefix("saved x-coredata://"))
        }
    }
}
