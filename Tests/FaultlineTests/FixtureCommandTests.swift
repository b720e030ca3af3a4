import Foundation
import Testing

/// `faultline fixture generate`: the same seed gives the same store, another seed another; existing files are kept
/// unless forced; bad sizes and places are one error line.
@Suite struct FixtureCommandTests {
    private let small = ["--users", "60", "--chats", "12", "--messages", "1500"]

    /// `sqlite3 FILE .dump`, as a user would compare two stores.
    private func dump(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", path, ".dump"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
    }

    @Test func theSameSeedGivesIdenticalStoresAndAnotherSeedDifferentOnes() throws {
        let folder = TemporaryFolder()
        var dumps: [String] = []
        for (name, seed) in [("a", "7"), ("b", "7"), ("c", "8")] {
            let result = try FaultlineBinary.run(["fixture", "generate", "--out", folder.path("\(name).sqlite"), "--seed", seed] + small)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("60 users, 12 chats"))
            dumps.append(try dump(folder.path("\(name).sqlite")))
        }
        #expect(dumps[0].contains("INSERT INTO ZMESSAGE"))
        #expect(dumps[0] == dumps[1])
        #expect(dumps[0] != dumps[2])
        // Nothing but the stores is left in the folder: the temporary files are gone.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { !$0.hasSuffix(".sqlite") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The summary line gives each count its noun in the singular or the plural, as the count asks.
    @Test func theSummaryLineSaysOneChatNotOneChats() throws {
        let folder = TemporaryFolder()
        let path = folder.path("one.sqlite")
        let result = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "10", "--chats", "1", "--messages", "20"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("\(path): 10 users, 1 chat (1 group, 10 members), 20 messages, "), "\(result.stdout)")
        #expect(!result.stdout.contains(" 1 chats") && !result.stdout.contains(" 1 groups") && !result.stdout.contains(" 1 attachments"),
                "\(result.stdout)")
    }

    @Test func jsonSummaryCountsWhatTheStoreHolds() throws {
        let folder = TemporaryFolder()
        let path = folder.path("j.sqlite")
        let result = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--json"] + small)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["path"] as? String == path)
        let peak = try #require(object["peakMemoryBytes"] as? Int)
        #expect(peak > 1_000_000 && peak < 1_000_000_000, "peak \(peak)")
        let summary = try #require(object["summary"] as? [String: Int])
        func count(_ table: String) throws -> Int {
            let text = try sqlite(path, "SELECT COUNT(*) FROM \(table)")
            return try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        #expect(summary["users"] == 60)
        #expect(summary["messages"] == 1_500)
        #expect(summary["messages"] == (try count("ZMESSAGE")))
        #expect(summary["members"] == (try count("ZCHATMEMBER")))
        #expect(summary["reactions"] == (try count("ZREACTION")))
        #expect(summary["attachments"] == (try count("ZATTACHMENT")))
        // Every object and link is one INSERT, and each save also moves Z_MAX: more statements than rows.
        let rows = try ["ZUSER", "ZUSERPROFILE", "ZCHAT", "ZCHATMEMBER", "ZMESSAGE", "ZATTACHMENT", "ZREACTION", "ZFOLDER",
                        "Z_7MENTIONS", "Z_7READBY", "Z_9FRIENDS", "Z_2FOLDERS"].reduce(0) { $0 + (try count($1)) }
        let statements = try #require(summary["statements"])
        let saves = try #require(summary["saves"])
        #expect(saves >= 1)
        #expect(statements >= rows + saves, "\(statements) statements for \(rows) rows in \(saves) saves")
    }

    /// Runs one query with the sqlite3 shell; its output.
    private func sqlite(_ path: String, _ query: String) throws -> String {
        try FaultlineBinary.sqlite3(path, query)
    }

    @Test func anExistingStoreIsKeptUnlessForced() throws {
        let folder = TemporaryFolder()
        let path = folder.path("taken.sqlite")
        let first = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--seed", "5"] + small)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let before = try dump(path)
        let refused = try FaultlineBinary.run(["fixture", "generate", "--out", path] + small)
        #expect(refused.status == 1)
        #expect(refused.stderr == "error: \(path): already exists (use --force to replace it)\n")
        #expect(try dump(path) == before)

        let forced = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--force"] + small)
        #expect(forced.status == 0, "stderr: \(forced.stderr)")
        let after = try dump(path)
        #expect(after.contains("CREATE TABLE ZMESSAGE"))
        #expect(after != before)
    }

    @Test func badSizesAndPlacesAreOneErrorLine() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("sub"), withIntermediateDirectories: false)
        let cases: [([String], String)] = [
            (["--out", folder.path("x.sqlite"), "--users", "1"], "error: --users must be at least 2"),
            (["--out", folder.path("x.sqlite"), "--chats", "0"], "error: --chats must be at least 1, not 0"),
            (["--out", folder.path("x.sqlite"), "--messages=-5"], "error: --messages must not be negative, not -5"),
            (["--out", folder.path("missing/x.sqlite")], "error: \(folder.path("missing/x.sqlite")): the folder \(folder.path("missing")) does not exist"),
            (["--out", folder.path("sub")], "error: \(folder.path("sub")): is a folder, not a store file"),
            (["--out", folder.path("x.sqlite"), "--seed", "minus-one"], "error: "),
        ]
        for (arguments, message) in cases {
            let result = try FaultlineBinary.run(["fixture", "generate"] + arguments)
            #expect(result.status != 0, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(lines.first?.hasPrefix(message) == true, "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.sqlite")))
    }

    @Test func anUnwritableFolderLeavesNothingBehind() throws {
        guard getuid() != 0 else { return }  // root writes anywhere: nothing to test
        let folder = TemporaryFolder()
        let locked = folder.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked) }
        let result = try FaultlineBinary.run(["fixture", "generate", "--out", locked + "/x.sqlite"] + small)
        #expect(result.status == 1)
        #expect(result.stderr == "error: \(locked)/x.sqlite: the folder \(locked) is not writable\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: locked).isEmpty)
    }
}

/// The main command with no store: the default one is made on first use, announced once.
@Suite struct DefaultFixtureTests {
    @Test func theFirstRunMakesTheDefaultStoreAndLaterRunsReuseIt() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        let environment = ["FAULTLINE_DEFAULT_STORE": path]
        // Without a terminal the browser refuses at once, before making anything.
        let refused = try FaultlineBinary.run([], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("error: not a terminal"))
        #expect(!FileManager.default.fileExists(atPath: path))
        let first = try FaultlineBinary.run(["trace", "--size", "80x24"], environment: environment)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stderr.hasPrefix("faultline: creating the default chat store at \(path) (1000 users, 300 chats, 60000 messages)\n"))
        #expect(first.stdout.contains("Chats (300)"))
        let second = try FaultlineBinary.run(["trace", "--size", "80x24"], environment: environment)
        #expect(second.status == 0)
        #expect(second.stderr.isEmpty)
        #expect(second.stdout.contains("Chats (300)"))
    }
}
