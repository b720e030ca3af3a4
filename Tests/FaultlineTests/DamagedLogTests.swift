import Foundation
import Glibc
import Testing

/// A store `check` finds damaged is not written to: the commands that write refuse it with one line, before
/// writing anything.
@Suite struct DamagedLogTests {
    /// `sqlite3 -bail path sql…`'s output.
    static func sqlite(_ path: String, _ commands: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.sqlite3Path)
        process.arguments = ["-bail", path] + commands
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure("sqlite3 \(path) \(commands) exited with \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// Refused with one `error:` line holding every fragment, and every file in `folder` left as it was.
    static func expectRefused(_ arguments: [String], folder: String, _ fragments: [String],
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = Snapshot(folder)
        let result = try Ran.run([FaultlineBinary.url.path] + arguments, environment: BadInput.quickBusyTimeout)
        #expect(result.status != 0, "\(arguments) exited 0: \(result.stdout.prefix(300))", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && result.stderr.hasPrefix("error: "), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(result.stderr.contains(fragment), "\(arguments): \(fragment) is not in \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(!result.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
        let after = Snapshot(folder)
        #expect(after == before, "\(arguments): \(after.difference(from: before))", sourceLocation: sourceLocation)
    }

    /// A -wal of another chat store beside the store, as a careless copy leaves it: its frames are laid over the
    /// store's pages. `check` says `malformed`; `trace` opened it writable (folding the log into the file) and
    /// `simulate` wrote into it.
    @Test func aLogFromAnotherStoreIsRefused() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        let other = folder.path("other.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", other, "--seed", "7", "--users", "200", "--chats", "60",
                                            "--messages", "4000"])
        try #require(made.status == 0, "\(made.stderr)")
        _ = try Self.sqlite(other, [".dbconfig no_ckpt_on_close on", "UPDATE ZMESSAGE SET ZTEXT = ZTEXT || ' (edited)' WHERE Z_PK < 2000;"])
        for suffix in ["-wal", "-shm"] {
            try FileManager.default.moveItem(atPath: other + suffix, toPath: path + suffix)
        }
        try FileManager.default.removeItem(atPath: other)
        for arguments in [["trace", path, "--size", "120x30"], ["simulate", path, "--count", "1", "--rate", "0"],
                          ["delete", path, "--chat", "1"]] {
            try Self.expectRefused(arguments, folder: folder.url.path, [path])
        }
    }

    /// A -wal whose pages are of another size than the store's cannot be its log: refused from its header alone.
    @Test func aLogOfAnotherPageSizeIsRefused() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        let other = folder.path("other.sqlite")
        _ = try Self.sqlite(other, ["PRAGMA page_size = 1024;", "PRAGMA journal_mode = WAL;", "CREATE TABLE t (x);",
                                    ".dbconfig no_ckpt_on_close on", "INSERT INTO t VALUES (1);"])
        for suffix in ["-wal", "-shm"] {
            try FileManager.default.moveItem(atPath: other + suffix, toPath: path + suffix)
        }
        try FileManager.default.removeItem(atPath: other)
        for arguments in [["trace", path, "--size", "120x30"], ["simulate", path, "--count", "1", "--rate", "0"]] {
            try Self.expectRefused(arguments, folder: folder.url.path, [path, "is damaged", "1024", "another database"])
        }
    }

    /// A damaged page (the messages table's root, overwritten): `simulate` and `delete`, which are about to write,
    /// have SQLite's `quick_check` read the whole file first, and refuse it.
    @Test func aDamagedPageIsRefusedBeforeAWrite() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        let answer = try Self.sqlite(path, ["SELECT rootpage FROM sqlite_master WHERE name = 'ZMESSAGE';", "PRAGMA page_size;"])
        let numbers = answer.split(separator: "\n").compactMap { Int($0) }
        try #require(numbers.count == 2, "\(answer)")
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64((numbers[0] - 1) * numbers[1]))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 64))
        try handle.close()
        let check = try FaultlineBinary.run(["check", path])
        #expect(check.status != 0, "check finds the damage: \(check.stdout.prefix(300))")
        for arguments in [["simulate", path, "--count", "1", "--rate", "0"], ["delete", path, "--chat", "1"]] {
            try Self.expectRefused(arguments, folder: folder.url.path, [path, "is damaged", "quick_check"])
        }
        // The browser opens a store to look, without checking it, but its first save has the whole file checked
        // and is refused. (Here the profiles' table is damaged, which deleting a chat does not read.)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        let profiles = try Self.sqlite(path, ["SELECT rootpage FROM sqlite_master WHERE name = 'ZUSERPROFILE';"])
        let profilesRoot = try #require(Int(profiles.trimmingCharacters(in: .whitespacesAndNewlines)))
        let damaging = try #require(FileHandle(forUpdatingAtPath: path))
        try damaging.seek(toOffset: UInt64((profilesRoot - 1) * numbers[1]))
        try damaging.write(contentsOf: Data(repeating: 0xFF, count: 64))
        try damaging.close()
        let chats = try Self.sqlite(path, ["SELECT COUNT(*) FROM ZCHAT;"])
        let trace = try FaultlineBinary.run(["trace", path, "--size", "220x30", "--script", "delete; confirm; save"])
        #expect(trace.status == 0, "\(trace.stderr)")
        #expect(trace.stdout.contains("save failed: ") && trace.stdout.contains("is damaged (SQLite's quick_check"), "\(trace.stdout)")
        #expect(try Self.sqlite(path, ["SELECT COUNT(*) FROM ZCHAT;"]) == chats)
    }

    /// A store whose model matches but which lacks one of its tables (dropped by hand, or a damaged schema) is
    /// refused by the commands that open it for the chat model, instead of showing its chats or messages as none.
    @Test func aStoreMissingATableIsRefusedNotShownEmpty() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        _ = try Self.sqlite(path, ["DROP TABLE Z_7READBY;"])
        for arguments in [["trace", path, "--size", "120x30"], ["simulate", path, "--count", "1", "--rate", "0"],
                          ["delete", path, "--chat", "1", "--dry-run"]] {
            try Self.expectRefused(arguments, folder: folder.url.path, [path, "is damaged (its table Z_7READBY is missing)"])
        }
        // `check` reports it among its findings.
        let check = try FaultlineBinary.run(["check", path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("table Z_7READBY is missing"), "\(check.stdout)")
    }
}
