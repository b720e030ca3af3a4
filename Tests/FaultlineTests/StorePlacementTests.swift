import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the default store lives, and how a made store is put in place: once across processes, never over a store
/// another process has open, never over anything but a store file, never beside an old store's side files.
@Suite(.serialized) struct StorePlacementTests {
    private let small = ["--users", "30", "--chats", "6", "--messages", "200"]

    private func query(_ path: String, _ sql: String) throws -> String { try FaultlineBinary.sqlite3(path, sql) }

    private func contents(_ folder: TemporaryFolder) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
    }

    /// Starts `faultline ARGUMENTS` and returns it running, its output thrown away.
    private func start(_ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = FaultlineBinary.url
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    private func waitFor(_ condition: () -> Bool, seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    // MARK: - The default store's home

    @Test func theDefaultStoreLivesInTheUsersDataFolder() throws {
        func shown(_ environment: [String: String]) throws -> String {
            let result = try FaultlineBinary.run(["--help"], environment: environment)
            #expect(result.status == 0)
            let flat = result.stdout.split(whereSeparator: \.isNewline).joined(separator: " ")
            guard let start = flat.range(of: "(here: "), let end = flat[start.upperBound...].firstIndex(of: ")") else {
                Issue.record("no default store in --help: \(result.stdout)")
                return ""
            }
            return String(flat[start.upperBound..<end])
        }
        #expect(try shown(["XDG_DATA_HOME": "/data/x", "HOME": "/home/u"]) == "/data/x/faultline/chat.sqlite")
        // A relative XDG_DATA_HOME is to be ignored, by the XDG rules.
        #expect(try shown(["XDG_DATA_HOME": "data", "HOME": "/home/u"]) == "/home/u/.local/share/faultline/chat.sqlite")
        #expect(try shown(["HOME": "/home/u"]) == "/home/u/.local/share/faultline/chat.sqlite")
        #expect(try shown(["FAULTLINE_DEFAULT_STORE": "/x/y.sqlite", "HOME": "/home/u"]) == "/x/y.sqlite")

        let nowhere = try FaultlineBinary.run(["check"], environment: ["HOME": "relative"])
        #expect(nowhere.status == 2)  // check: could not check
        #expect(nowhere.stderr.hasPrefix("error: no place for the default chat store"))
        #expect(nowhere.stderr.filter { $0 == "\n" }.count == 1)
    }

    /// Made in `$XDG_DATA_HOME/faultline` (0700), announced with the path escaped: the folder's name here holds an
    /// escape sequence, which must not reach the terminal.
    @Test func theDefaultStoreIsMadeUnderXDGDataHomeWithItsFolder() throws {
        let folder = TemporaryFolder()
        let data = folder.path("da\u{1B}[2Jta")
        let result = try FaultlineBinary.run(["check"], environment: ["XDG_DATA_HOME": data, "HOME": "/nonexistent"])
        let shown = folder.path("da\\u{1B}[2Jta") + "/faultline/chat.sqlite"
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("faultline: creating the default chat store at \(shown) "), "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(shown): ok"))
        #expect(!(result.stdout + result.stderr).contains("\u{1B}"))
        var info = stat()
        #expect(stat(data + "/faultline", &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data + "/faultline") == ["chat.sqlite"])
    }

    /// The README's flow on a fresh machine: the browser in one terminal, `simulate` in another, both finding no
    /// store. One makes it, the other waits, and every save `simulate` reports is in the one store that results.
    @Test func twoCommandsMakingTheDefaultStoreTogetherShareOneStoreAndLoseNoSave() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        let environment = ["FAULTLINE_DEFAULT_STORE": store]
        let group = DispatchGroup()
        nonisolated(unsafe) var results: [FaultlineBinary.Result?] = [nil, nil]
        let commands = [["trace", "--size", "80x24", "--script", "down 3; open"], ["simulate", "--count", "40", "--rate", "0"]]
        for (index, arguments) in commands.enumerated() {
            group.enter()
            Thread.detachNewThread {
                results[index] = try? FaultlineBinary.run(arguments, environment: environment)
                group.leave()
            }
        }
        group.wait()
        let trace = try #require(results[0])
        let simulate = try #require(results[1])
        #expect(trace.status == 0, "trace: \(trace.stderr)")
        #expect(simulate.status == 0, "simulate: \(simulate.stderr)")
        let announcements = (trace.stderr + simulate.stderr).components(separatedBy: "faultline: creating the default chat store").count - 1
        #expect(announcements == 1, "trace: \(trace.stderr)\nsimulate: \(simulate.stderr)")
        let saved = simulate.stdout.split(separator: "\n").filter { $0.hasPrefix("saved ") }.count
        #expect(saved == 40)
        #expect(try query(store, "SELECT COUNT(*) FROM ZMESSAGE") == "60040")
        let check = try FaultlineBinary.run(["check", store])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(try contents(folder) == ["chat.sqlite"])
    }

    // MARK: - fixture generate --force

    @Test func forceRefusesAStoreAnotherProcessHasOpenAndReplacesItOnceItIsClosed() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        let first = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--seed", "3"] + small)
        #expect(first.status == 0, "\(first.stderr)")
        let writer = try start(["simulate", store, "--count", "1000000", "--rate", "200"])
        defer { if writer.isRunning { kill(writer.processIdentifier, SIGKILL) } }
        #expect(waitFor { (try? query(store, "SELECT COUNT(*) FROM ZMESSAGE")).flatMap { Int($0) }.map { $0 > 210 } ?? false })

        let refused = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--force", "--seed", "4"] + small)
        #expect(refused.status == 1)
        #expect(refused.stderr == "error: \(store): is open in another process (pid \(writer.processIdentifier)); close it there first\n")
        #expect(refused.stdout.isEmpty)

        // Killed mid-run, the writer leaves its -wal and -shm: they belong to the old store and must not be
        // replayed into the new one.
        kill(writer.processIdentifier, SIGKILL)
        writer.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: store + "-wal"))
        let replaced = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--force", "--seed", "4"] + small)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try contents(folder) == ["chat.sqlite"])
        #expect(try query(store, "SELECT COUNT(*) FROM ZMESSAGE") == "200")
        let check = try FaultlineBinary.run(["check", store])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        // The same store as a fresh one of that seed, byte for byte.
        let fresh = try FaultlineBinary.run(["fixture", "generate", "--out", folder.path("fresh.sqlite"), "--seed", "4"] + small)
        #expect(fresh.status == 0)
        #expect(FileManager.default.contents(atPath: store) == FileManager.default.contents(atPath: folder.path("fresh.sqlite")))
    }

    @Test func forceReplacesOnlyARegularFileThatIsEmptyOrAStore() throws {
        let folder = TemporaryFolder()
        try "notes\n".write(toFile: folder.path("notes.txt"), atomically: false, encoding: .utf8)
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", folder.path("real.sqlite")] + small)
        #expect(made.status == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.sqlite"), withDestinationPath: folder.path("real.sqlite"))
        let cases: [(String, String)] = [
            ("/dev/null", "/dev/null: is a character device, not a store file; --force replaces only a regular file"),
            (folder.path("link.sqlite"), "\(folder.path("link.sqlite")): is a symbolic link, not a store file; --force replaces only a regular file"),
            (folder.path("notes.txt"), "\(folder.path("notes.txt")): is not an SQLite database; --force replaces only a store (or an empty file)"),
        ]
        let before = try contents(folder)
        let realBytes = FileManager.default.contents(atPath: folder.path("real.sqlite"))
        for (path, message) in cases {
            let result = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--force"] + small)
            #expect(result.status == 1, "\(path)")
            #expect(result.stderr == "error: \(message)\n")
        }
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFCHR))
        #expect(try contents(folder) == before)
        #expect(try String(contentsOfFile: folder.path("notes.txt"), encoding: .utf8) == "notes\n")
        #expect(FileManager.default.contents(atPath: folder.path("real.sqlite")) == realBytes)

        // An empty file (from mktemp, say) is replaced.
        _ = FileManager.default.createFile(atPath: folder.path("empty.sqlite"), contents: Data())
        let empty = try FaultlineBinary.run(["fixture", "generate", "--out", folder.path("empty.sqlite"), "--force"] + small)
        #expect(empty.status == 0, "\(empty.stderr)")
    }

    /// `--sql-log` alone logs at level 1 (it used to log nothing, silently); a level given by `--sql-debug` or the
    /// environment is kept.
    @Test func aLogFileAloneLogsAtLevelOne() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        #expect(try FaultlineBinary.run(["fixture", "generate", "--out", store] + small).status == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["FAULTLINE_SQL_DEBUG"] = nil
        let log = folder.path("sql.log")
        let alone = try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-log", log], environment: environment)
        #expect(alone.status == 0, "\(alone.stderr)")
        let levelOne = try String(contentsOfFile: log, encoding: .utf8)
        // Level 4's query plans are the marker: a first screen's statements always have one.
        let planLine = "CoreData: details: SQLite: "
        #expect(levelOne.contains("SELECT") && !levelOne.contains(planLine))
        environment["FAULTLINE_SQL_DEBUG"] = "4"
        #expect(try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-log", log], environment: environment).status == 0)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains(planLine))
    }

    /// `--sql-log /dev/null` writes into the device; it used to be replaced by a regular file (as root).
    @Test func theSQLLogIsWrittenInPlaceNeverReplacingWhatIsThere() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        #expect(try FaultlineBinary.run(["fixture", "generate", "--out", store] + small).status == 0)
        let result = try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-debug", "1", "--sql-log", "/dev/null"])
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFCHR))
        // A log file that exists keeps its mode; its old text is gone.
        let log = folder.path("sql.log")
        try "old\n".write(toFile: log, atomically: false, encoding: .utf8)
        chmod(log, 0o600)
        #expect(try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-debug", "1", "--sql-log", log]).status == 0)
        #expect(stat(log, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(!text.hasPrefix("old") && text.contains("SELECT"))

        // A log that cannot be written is the command's error, not a silent loss.
        let full = try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-debug", "1", "--sql-log", "/dev/full"])
        #expect(full.status == 1)
        #expect(full.stderr == "error: /dev/full: cannot write the SQL log (No space left on device)\n")
        // A named pipe nobody reads is refused at once rather than waited on.
        #expect(mkfifo(folder.path("pipe"), 0o600) == 0)
        let pipe = try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-debug", "1", "--sql-log", folder.path("pipe")])
        #expect(pipe.status == 1)
        #expect(pipe.stderr == "error: \(folder.path("pipe")): cannot write the SQL log here (No such device or address)\n")
        // Nor is the log written under a name SQLite keeps for the store's own side files.
        for suffix in ["-journal", "-wal"] {
            let side = try FaultlineBinary.run(["trace", store, "--size", "80x24", "--sql-debug", "1", "--sql-log", store + suffix])
            #expect(side.status == 1)
            #expect(side.stderr.hasPrefix("error: \(store)\(suffix): cannot write the SQL log here ("), "\(side.stderr)")
            #expect(!FileManager.default.fileExists(atPath: store + suffix))
        }
    }

    @Test func sideFilesWithoutTheirStoreAreRefusedWithoutForceAndRemovedWithIt() throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: store + "-wal"))
        let refused = try FaultlineBinary.run(["fixture", "generate", "--out", store] + small)
        #expect(refused.status == 1)
        #expect(refused.stderr == "error: \(store)-wal: is left from an earlier store at this path; remove it (or use --force)\n")
        #expect(try contents(folder) == ["chat.sqlite-wal"])
        let forced = try FaultlineBinary.run(["fixture", "generate", "--out", store, "--force"] + small)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try contents(folder) == ["chat.sqlite"])
    }

    @Test func aTemporaryFileLeftByAKilledGeneratorIsClearedAndNeverNamed() throws {
        let folder = TemporaryFolder()
        // A process ID above the kernel's largest: no such process runs.
        let abandoned = folder.path(".chat.sqlite.2147480000.partial")
        _ = FileManager.default.createFile(atPath: abandoned, contents: Data("half a store".utf8))
        _ = FileManager.default.createFile(atPath: abandoned + "-wal", contents: Data("its log".utf8))
        let result = try FaultlineBinary.run(["fixture", "generate", "--out", folder.path("chat.sqlite")] + small)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try contents(folder) == ["chat.sqlite"])
    }

    /// A disk that fills up mid-way: the error names the store asked for, not the file it was being built in.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a small file system"))
    func aFullDiskIsOneErrorNamingTheStore() throws {
        let folder = TemporaryFolder()
        let mountPoint = folder.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let ran = try FaultlineBinary.runTool(["unshare", "-m", "/bin/sh", "-c",
                                               "mount -t tmpfs -o size=256k tmpfs \"$1\" && shift && exec \"$@\"", "sh", mountPoint,
                                               FaultlineBinary.url.path, "fixture", "generate", "--out", mountPoint + "/chat.sqlite"])
        let stderr = ran.stderr
        try #require(!stderr.contains("mount:") && !stderr.contains("unshare:"), "cannot mount a tmpfs here: \(stderr)")
        #expect(ran.status == 1)
        let lines = stderr.split(separator: "\n").filter { !$0.contains("%") }
        #expect(lines.count == 1, "\(stderr)")
        #expect(lines.first?.hasPrefix("error: \(mountPoint)/chat.sqlite: ") == true, "\(stderr)")
        #expect(!stderr.contains("partial"), "\(stderr)")
    }
}
