import Foundation
import Glibc
import Testing

/// Reading a store without writing it: `check` reads one state of a store another process writes, and no read-only
/// command leaves a file behind, in a folder this process may write or not, on a file it may write or not, on a
/// read-only mount.
@Suite(.serialized) struct ReadOnlyLookTests {
    /// The commands that only read a store, `{store}` standing for its path. (`trace` without `--read-only` only
    /// reads when its script saves nothing: it is one where the store cannot be written.)
    static let readers: [[String]] = [
        ["check", "{store}"],
        ["trace", "{store}", "--read-only", "--size", "120x30"],
        ["delete", "{store}", "--chat", "1", "--dry-run"],
        ["trace", "{store}", "--read-only", "--size", "120x30", "--sql-debug", "4"],
        ["delete", "{store}", "--chat", "1", "--dry-run", "--sql-debug", "2"],
    ]

    /// Readers where the store cannot be written: there plain `trace` reads too.
    static let readersOfAnUnwritableStore: [[String]] = readers + [
        ["trace", "{store}", "--size", "120x30"],
        ["trace", "{store}", "--size", "120x30", "--sql-debug", "1"],
    ]

    static func expand(_ arguments: [String], store: String) -> [String] {
        arguments.map { $0 == "{store}" ? store : $0 }
    }

    /// A chat store of 12 chats, copied into `folder` as `chat.sqlite`; with `leavingWAL`, a write is left in its
    /// -wal (with the -shm beside it), as a writer that was killed, or a copy taken from a device, leaves it.
    static func makeStore(in folder: String, leavingWAL: Bool) throws -> String {
        let path = folder + "/chat.sqlite"
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        if leavingWAL {
            try runSQLite(path, [".dbconfig no_ckpt_on_close on", "UPDATE ZMESSAGE SET ZTEXT = ZTEXT || ' (edited)' WHERE Z_PK < 20;"])
            guard let wal = FileManager.default.contents(atPath: path + "-wal"), !wal.isEmpty,
                  FileManager.default.fileExists(atPath: path + "-shm") else {
                throw Failure("sqlite3 left no -wal and -shm beside \(path)")
            }
        }
        return path
    }

    /// `sqlite3` as a writer sharing the store would run: waiting up to 5 s for a lock (a reader closing last folds
    /// the log in under an exclusive lock) rather than failing at once.
    static func runSQLite(_ path: String, _ commands: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.sqlite3Path)
        process.arguments = ["-bail", "-cmd", ".timeout 5000", path] + commands
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure("sqlite3 \(path) \(commands) exited with \(process.terminationStatus)") }
    }

    /// Runs the browser in a 120×30 terminal (util-linux `script`), types `q` once it has had a moment to draw,
    /// and returns how it ended: its exit status (`script -e`) and what it drew. A browser that cannot open the
    /// store exits non-zero at once, `q` or not.
    static func browseAndQuit(_ commandLine: [String]) throws -> Ran {
        let command = "stty rows 30 cols 120; " + commandLine.map(Ran.quoted).joined(separator: " ")
        let shell = "(sleep 1.5; printf q; sleep 2) | \(Ran.quoted(Tools.script ?? "script")) -qec \(Ran.quoted(command)) /dev/null"
        return try Ran.run(["/bin/sh", "-c", shell], environment: BadInput.quickBusyTimeout)
    }

    // MARK: - check while another process writes

    /// `check` reads one state of the store however a writer changes it meanwhile. Each round starts `check` on a
    /// store no process has open (no -wal beside it), waits until it has the file open, then a writer that starts
    /// only then rewrites messages in many transactions, folding its log into the file as it goes. Reading the file
    /// without sharing the writer's locks, `check` saw pages of different states: `malformed`, index entries
    /// missing, keys pointing nowhere.
    @Test func checkReadsOneStateWhileAnotherProcessWrites() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "300", "--chats", "100", "--messages", "20000"])
        try #require(made.status == 0, "\(made.stderr)")
        var writes = ["PRAGMA wal_autocheckpoint = 50;"]
        for remainder in 0..<10 {
            writes.append("UPDATE ZMESSAGE SET ZTEXT = ZTEXT || 'x' WHERE Z_PK % 10 = \(remainder);")
        }
        for round in 1...20 {
            // Two connections closing at once may each leave the -wal to the other; the next to close last folds it
            // in. Each round starts with none, so that check finds no writer at work.
            for _ in 0..<10 where FileManager.default.fileExists(atPath: path + "-wal") {
                try Self.runSQLite(path, ["SELECT COUNT(*) FROM sqlite_master;"])  // reads the file, so closing last folds the log in
                if FileManager.default.fileExists(atPath: path + "-wal") { usleep(100_000) }
            }
            try #require(!FileManager.default.fileExists(atPath: path + "-wal"), "round \(round): the -wal stays")
            let check = Process()
            check.executableURL = FaultlineBinary.url
            check.arguments = ["check", path]
            let out = Pipe()
            let err = Pipe()
            check.standardOutput = out
            check.standardError = err
            try check.run()
            let errData = Data.readAsync(err.fileHandleForReading)
            let outData = Data.readAsync(out.fileHandleForReading)
            Self.waitUntil(check.processIdentifier, hasOpen: path)
            try Self.runSQLite(path, writes)
            check.waitUntilExit()
            let stdout = String(decoding: outData.wait(), as: UTF8.self)
            let stderr = String(decoding: errData.wait(), as: UTF8.self)
            #expect(check.terminationStatus == 0, "round \(round): exit \(check.terminationStatus)\n\(stdout.prefix(600))\(stderr)")
            #expect(stdout.hasPrefix("\(path): ok"), "round \(round): \(stdout.prefix(600))")
        }
    }

    /// Waits (at most 10 s) until process `pid` has `path` open, from `/proc/<pid>/fd`; without `/proc`, 50 ms.
    static func waitUntil(_ pid: Int32, hasOpen path: String) {
        let folder = "/proc/\(pid)/fd"
        guard FileManager.default.fileExists(atPath: folder) else {
            usleep(50_000)
            return
        }
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if names.contains(where: { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) == target }) {
                return
            }
            // Gone already: nothing to wait for.
            if kill(pid, 0) != 0 { return }
            usleep(200)
        }
    }

    // MARK: - No file left behind

    /// Every reading command, with and without `--sql-debug`, leaves the store's folder as it was, byte for byte:
    /// on a store no process has open and on one with a write left in its -wal. (A reader used to make -wal and -shm
    /// and, with `--sql-debug`, keep its connections open to the end, so that nothing removed them; with a -wal
    /// there, opening the -shm for writing rebuilt it.)
    @Test(arguments: [false, true])
    func readingCommandsLeaveTheFolderAsItWas(leavingWAL: Bool) throws {
        let folder = TemporaryFolder()
        let path = try Self.makeStore(in: folder.url.path, leavingWAL: leavingWAL)
        let before = Snapshot(folder.url.path)
        for arguments in Self.readers {
            let result = try Ran.run([FaultlineBinary.url.path] + Self.expand(arguments, store: path), environment: BadInput.quickBusyTimeout)
            #expect(result.status == 0, "\(arguments): \(result.stderr.prefix(400))")
            let after = Snapshot(folder.url.path)
            #expect(after == before, "\(arguments): \(after.difference(from: before))")
        }
        if Tools.script != nil {
            for extra in [[], ["--sql-debug", "1", "--sql-log", "/dev/null"]] {
                let result = try Self.browseAndQuit([FaultlineBinary.url.path, "browse", path, "--read-only"] + extra)
                #expect(result.status == 0, "browse --read-only \(extra): \(result.stdout.suffix(400))")
                let after = Snapshot(folder.url.path)
                #expect(after == before, "browse --read-only \(extra): \(after.difference(from: before))")
            }
        }
    }

    // MARK: - Another user's store

    /// Where a store cannot be written, and how that is arranged for a user who is not root.
    enum Place: String, CaseIterable, CustomTestStringConvertible {
        /// The store's folder belongs to root, mode 0755.
        case unwritableFolder = "a folder the user cannot write"
        /// The store belongs to root, mode 0644, in a sticky folder anyone may write (as /tmp).
        case unwritableFile = "another user's file in a sticky, world-writable folder"
        /// The store's folder (world-writable, the store mode 0666) is bound read-only onto itself, in a mount
        /// namespace of the command's own.
        case readOnlyMount = "a read-only mount"

        var testDescription: String { rawValue }
    }

    static let nobody: (uid: UInt32, gid: UInt32) = (65534, 65534)

    /// Why the matrix cannot run here, or nil when it can: it needs root (to switch to `nobody`) and `setpriv`.
    static let cannotSwitchUser: String? = {
        if getuid() != 0 { return "not running as root, so the test cannot run a command as another user" }
        guard Tools.executable("setpriv") != nil else { return "setpriv (util-linux) is not installed" }
        return nil
    }()

    /// Why a read-only mount cannot be made here, or nil when it can.
    static let cannotMount: String? = {
        guard cannotSwitchUser == nil else { return cannotSwitchUser }
        guard Tools.executable("unshare") != nil else { return "unshare (util-linux) is not installed" }
        let folder = WorldReadableFolder()
        let probe = folder.path + "/probe"
        guard FileManager.default.createFile(atPath: probe, contents: Data("probe".utf8)),
              let ran = try? Ran.run(mountedReadOnly(folder.path, ["/bin/sh", "-c", "! (echo x >> \"$1\") 2>/dev/null", "sh", probe]),
                                     environment: [:]),
              ran.status == 0, FileManager.default.contents(atPath: probe) == Data("probe".utf8)
        else { return "this process may not make a mount namespace and a read-only bind mount (unshare -m, mount --bind)" }
        return nil
    }()

    /// `commandLine` run as `nobody`.
    static func asNobody(_ commandLine: [String]) -> [String] {
        [Tools.executable("setpriv") ?? "/usr/bin/setpriv", "--reuid=\(nobody.uid)", "--regid=\(nobody.gid)", "--clear-groups", "--"] + commandLine
    }

    /// `commandLine` run with `folder` bound read-only onto itself, in a mount namespace of its own.
    static func mountedReadOnly(_ folder: String, _ commandLine: [String]) -> [String] {
        [Tools.executable("unshare") ?? "/usr/bin/unshare", "-m", "/bin/sh", "-c",
         "mount --make-rprivate / && mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" \"$1\" && shift && exec \"$@\"",
         "sh", folder] + commandLine
    }

    /// A folder under the system's temporary folder that every user may read and enter, holding a copy of the
    /// `faultline` binary (the build folder may not be readable by other users). Removed when released.
    final class WorldReadableFolder {
        let path: String

        init() {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-ro-\(UUID().uuidString)").path
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, 0o755)
        }

        deinit {
            _ = chmod(path, 0o755)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// The reading commands, run as `nobody` on a store it cannot write, in each of three places, on a store no
    /// process has open and on one with a write left in its -wal: each works and leaves every file as it was.
    /// (They failed with `attempt to write a readonly database` where no -wal and -shm could be made, and left
    /// -wal and -shm owned by the reader beside another user's file, which that user could then not write.)
    @Test(.enabled(if: cannotSwitchUser == nil, "\(cannotSwitchUser ?? "")"),
          arguments: Place.allCases, [false, true])
    func readingCommandsWorkAsAnotherUser(place: Place, leavingWAL: Bool) throws {
        if place == .readOnlyMount, let reason = Self.cannotMount {
            print("skipped (\(place.rawValue)): \(reason)")
            return
        }
        let top = WorldReadableFolder()
        let binary = top.path + "/faultline"
        try FileManager.default.copyItem(atPath: FaultlineBinary.url.path, toPath: binary)
        chmod(binary, 0o755)
        let folder = top.path + "/store"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = try Self.makeStore(in: folder, leavingWAL: leavingWAL)
        // On the read-only mount, file modes would let the user write: only the mount stops it.
        for file in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []) {
            chmod(folder + "/" + file, place == .readOnlyMount ? 0o666 : 0o644)
        }
        switch place {
        case .unwritableFolder: chmod(folder, 0o755)
        case .unwritableFile, .readOnlyMount: chmod(folder, 0o1777)
        }
        let before = Snapshot(folder)

        func wrapped(_ commandLine: [String]) -> [String] {
            let user = Self.asNobody(commandLine)
            return place == .readOnlyMount ? Self.mountedReadOnly(folder, user) : user
        }
        for arguments in Self.readersOfAnUnwritableStore {
            let result = try Ran.run(wrapped([binary] + Self.expand(arguments, store: path)), environment: BadInput.quickBusyTimeout)
            #expect(result.status == 0, "\(place.rawValue), -wal \(leavingWAL): \(arguments): \(result.stderr.prefix(400))")
            if arguments.first == "check" { #expect(result.stdout.hasPrefix("\(path): ok"), "\(result.stdout.prefix(400))") }
            if arguments.first == "trace" { #expect(result.stdout.contains("Chats (12)"), "\(arguments): \(result.stdout.prefix(400))") }
            let after = Snapshot(folder)
            #expect(after == before, "\(place.rawValue), -wal \(leavingWAL): \(arguments): \(after.difference(from: before))")
        }
        if Tools.script != nil {
            let result = try Self.browseAndQuit(wrapped([binary, "browse", path, "--read-only"]))
            #expect(result.status == 0, "\(place.rawValue): browse --read-only: \(result.stdout.suffix(400))")
            let after = Snapshot(folder)
            #expect(after == before, "\(place.rawValue): browse --read-only: \(after.difference(from: before))")
        }
        // The owner can still write the store: no file of the reader's stands in the way.
        let write = try Ran.run([binary, "delete", path, "--chat", "1"], environment: BadInput.quickBusyTimeout)
        #expect(write.status == 0, "the owner could not write the store afterwards: \(write.stderr)")
    }

    // MARK: - Hot journal

    /// A store in rollback-journal mode whose last write was interrupted, its hot journal beside it: a read-only
    /// look cannot roll that write back. It is refused with one line that says so, and changes nothing; opening
    /// it writable rolls the write back and reads it.
    @Test func aHotJournalIsNamedNotCalledAReadOnlyDatabase() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        try Self.runSQLite(path, ["PRAGMA journal_mode = DELETE;"])
        // A copy of the file and its journal taken in the middle of a transaction: a writer killed there.
        let hot = folder.path("hot.sqlite")
        try Self.runSQLite(path, ["PRAGMA cache_size = 1;", "BEGIN;", "UPDATE ZMESSAGE SET ZTEXT = ZTEXT || ' (edited)';",
                                  ".system cp \(Ran.quoted(path)) \(Ran.quoted(hot)) && cp \(Ran.quoted(path + "-journal")) \(Ran.quoted(hot + "-journal"))",
                                  "ROLLBACK;"])
        try #require(FileManager.default.fileExists(atPath: hot + "-journal"))
        let before = Snapshot(folder.url.path)
        for arguments in [["check", hot], ["trace", hot, "--read-only"], ["delete", hot, "--chat", "1", "--dry-run"]] {
            let result = try Ran.run([FaultlineBinary.url.path] + arguments, environment: BadInput.quickBusyTimeout)
            #expect(result.status != 0, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && result.stderr.hasPrefix("error: \(hot): "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("hot journal") && result.stderr.contains("interrupted"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("readonly database"), "\(arguments): \(result.stderr)")
            #expect(Snapshot(folder.url.path) == before, "\(arguments) changed a file")
        }
        let writable = try Ran.run([FaultlineBinary.url.path, "trace", hot, "--size", "120x30"], environment: BadInput.quickBusyTimeout)
        #expect(writable.status == 0, "\(writable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: hot + "-journal"), "the interrupted write was rolled back")
        let check = try Ran.run([FaultlineBinary.url.path, "check", hot], environment: BadInput.quickBusyTimeout)
        #expect(check.status == 0, "\(check.stdout.prefix(400))\(check.stderr)")
    }

    /// A `-wal` no process has open and no `-shm` beside it (a writer killed before it made its index, a store copied
    /// with its log only): the reading commands read it, through a private copy, and leave the folder as it was. A
    /// look in place made the `-shm` and left it.
    @Test func aLoneLogIsReadWithoutMakingItsIndex() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        let before = try Ran.run([FaultlineBinary.url.path, "check", path], environment: BadInput.quickBusyTimeout)
        try Self.runSQLite(path, [".dbconfig no_ckpt_on_close on", "DELETE FROM ZREACTION WHERE Z_PK = 1;"])
        try FileManager.default.removeItem(atPath: path + "-shm")
        let snapshot = Snapshot(folder.url.path)
        let check = try Ran.run([FaultlineBinary.url.path, "check", path], environment: BadInput.quickBusyTimeout)
        #expect(check.status == 0, "\(check.stdout.prefix(400))\(check.stderr)")
        // One reaction fewer: the log's commit was read.
        #expect(check.stdout != before.stdout && before.status == 0)
        for arguments in [["trace", path, "--read-only", "--size", "100x30", "--script", "down; open"],
                          ["delete", path, "--chat", "2", "--dry-run"]] {
            let ran = try Ran.run([FaultlineBinary.url.path] + arguments, environment: BadInput.quickBusyTimeout)
            #expect(ran.status == 0, "\(arguments): \(ran.stderr)")
        }
        #expect(Snapshot(folder.url.path) == snapshot, "\(Snapshot(folder.url.path).difference(from: snapshot))")
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))

        // Where no private copy can be made (the temporary directory is not a folder one may write), a command that
        // only reads is refused, saying why, rather than make the index in place and leave it.
        var noTemporary = BadInput.quickBusyTimeout
        noTemporary["TMPDIR"] = "/proc"
        let refused = try Ran.run([FaultlineBinary.url.path, "check", path], environment: noTemporary)
        #expect(refused.status != 0)
        #expect(refused.stderr.hasPrefix("error: \(path): cannot be read (it has a write-ahead log, chat.sqlite-wal, but not"), "\(refused.stderr)")
        #expect(Snapshot(folder.url.path) == snapshot, "\(Snapshot(folder.url.path).difference(from: snapshot))")
    }

    /// A `-shm` with no `-wal` (left by a process that is gone, or copied without its log): reading leaves it as it
    /// is. The connection that closed last deleted it.
    @Test func aLeftoverIndexWithoutItsLogIsLeftAsItIs() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        try Self.runSQLite(path, [".dbconfig no_ckpt_on_close on", "SELECT COUNT(*) FROM ZCHAT;"])
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try #require(FileManager.default.fileExists(atPath: path + "-shm"), "sqlite3 left no -shm")
        let snapshot = Snapshot(folder.url.path)
        for arguments in [["check", path], ["trace", path, "--read-only", "--size", "100x30", "--script", "down; open"],
                          ["delete", path, "--chat", "2", "--dry-run"]] {
            let ran = try Ran.run([FaultlineBinary.url.path] + arguments, environment: BadInput.quickBusyTimeout)
            #expect(ran.status == 0, "\(arguments): \(ran.stderr)")
            #expect(Snapshot(folder.url.path) == snapshot, "\(arguments): \(Snapshot(folder.url.path).difference(from: snapshot))")
        }
    }

    /// A store of another model with a lone `-wal`, given to plain `trace` (which opens a chat store writable): the
    /// look that finds it is not a chat store makes no `-shm` either, and the entity browser reads it read-only.
    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func aForeignStoreWithALoneLogIsLookedAtWithoutMakingItsIndex() throws {
        let folder = TemporaryFolder()
        let path = try CoreDataCorpus.copy("books-pages", into: folder)
        try Self.runSQLite(path, [".dbconfig no_ckpt_on_close on", "UPDATE ZBOOK SET ZTITLE = ZTITLE || ' (2nd edition)' WHERE Z_PK = 1;"])
        try FileManager.default.removeItem(atPath: path + "-shm")
        let snapshot = Snapshot(folder.url.path)
        let ran = try Ran.run([FaultlineBinary.url.path, "trace", path, "--size", "100x30"], environment: BadInput.quickBusyTimeout)
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ran.stdout.contains("read-only"), "\(ran.stdout.prefix(600))")
        #expect(Snapshot(folder.url.path) == snapshot, "\(Snapshot(folder.url.path).difference(from: snapshot))")
    }
}
