import ChatFixture
import Foundation
import GRDB
import Testing
@testable import GraphStore

/// A read-only look chosen for a writer's `-wal` that fails because the writer closed the store before the look read
/// it (its last connection removes the `-shm`, then the `-wal`) makes no file and is taken again; a log left alone
/// for good, or another error, is reported.
@Suite struct ClosingWriterTests {
    /// Runs `body` on the path of a store that does not exist, with a `-wal` beside it (and its `-shm` with `index`),
    /// in a folder removed afterwards.
    private static func withLog(index: Bool, _ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("closing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data([1])))
        if index { #expect(FileManager.default.createFile(atPath: path + "-shm", contents: Data([1]))) }
        try body(path)
    }

    private static func shared(_ path: String) -> StoreLook {
        StoreLook(path: path, kind: .shared, location: path, stamp: nil)
    }

    private static func failure(_ code: ResultCode) -> Result<Int, LookError> {
        .failure(LookError(storeError: .noSuchFile(path: "x"), sqliteError: DatabaseError(resultCode: code)))
    }

    @Test func aLogThatGoesWithinTheWaitIsAClosingWriter() throws {
        try Self.withLog(index: false) { path in
            let remover = Thread { usleep(100_000); try? FileManager.default.removeItem(atPath: path + "-wal") }
            remover.start()
            #expect(Self.shared(path).metClosingWriter(after: Self.failure(.SQLITE_CANTOPEN)))
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func aLogJoinedByItsIndexAgainIsWorthANewLook() throws {
        try Self.withLog(index: true) { path in
            #expect(Self.shared(path).metClosingWriter(after: Self.failure(.SQLITE_CANTOPEN)))
        }
    }

    @Test func aLogLeftAloneIsNotAClosingWriter() throws {
        try Self.withLog(index: false) { path in
            let start = ContinuousClock.now
            #expect(!Self.shared(path).metClosingWriter(after: Self.failure(.SQLITE_CANTOPEN)))
            // It waited for the writer that never came (a second), then gave up.
            #expect(ContinuousClock.now - start >= .milliseconds(900))
        }
    }

    @Test func aLogGoneBeforeTheLookReadIsAClosingWriter() throws {
        try Self.withLog(index: true) { path in
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect(Self.shared(path).metClosingWriter(after: Self.failure(.SQLITE_CANTOPEN)))
        }
    }

    @Test func otherFailuresSuccessesAndOtherLooksAreNot() throws {
        try Self.withLog(index: true) { path in
            #expect(!Self.shared(path).metClosingWriter(after: Self.failure(.SQLITE_CORRUPT)))
            #expect(!Self.shared(path).metClosingWriter(after: Result<Int, LookError>.success(1)))
            for kind in [StoreLook.Kind.queryOnly, .immutable, .privateCopy] {
                let look = StoreLook(path: path, kind: kind, location: path, stamp: nil)
                #expect(!look.metClosingWriter(after: Self.failure(.SQLITE_CANTOPEN)), "\(kind)")
            }
        }
    }

    /// A WAL-mode store with a writer connection that has read it (its `-wal` and `-shm` made), in a folder removed
    /// afterwards. `body` gets the store's path and the writer, which it may close.
    private static func withWriter(_ body: (String, DatabaseQueue) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("closing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        do {
            // Made and closed: its last connection removes the -wal and -shm.
            _ = try PersistentStore.open(path: path, model: ChatModel.make())
        }
        #expect(sideFiles(path) == [])
        let writer = try DatabaseQueue(path: path)
        defer { try? writer.close() }
        #expect(try writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        #expect(FileManager.default.fileExists(atPath: path + "-wal") && FileManager.default.fileExists(atPath: path + "-shm"))
        try body(path, writer)
    }

    private static func sideFiles(_ path: String) -> [String] {
        ["-wal", "-shm"].filter { FileManager.default.fileExists(atPath: path + $0) }
    }

    /// The look is chosen while the writer has the store; the writer closes (removing both files) before the look
    /// reads. SQLite would let that read-only connection make a new `-wal` and then fail on the `-shm` it may not
    /// make, leaving the `-wal`: it fails making nothing.
    @Test func aLookWhoseWriterClosedFirstMakesNoLog() throws {
        try Self.withWriter { path, writer in
            let look = StoreLook.choose(path: path, file: try StoreFileCheck.inspect(path: path))
            #expect(look.kind == .shared && look.indexReadOnly)
            try writer.close()
            #expect(Self.sideFiles(path) == [])
            #expect(throws: DatabaseError.self) {
                let queue = try look.openQueue(busyTimeout: 1)
                defer { try? queue.close() }
                _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") }
            }
            #expect(Self.sideFiles(path) == [], "the look made \(Self.sideFiles(path))")
            let fallback = look.fallback(after: LookError(storeError: .noSuchFile(path: path),
                                                          sqliteError: DatabaseError(resultCode: .SQLITE_CANTOPEN)))
            #expect(fallback != nil)
            if let fallback {
                #expect(throws: DatabaseError.self) {
                    let queue = try fallback.openQueue(busyTimeout: 1)
                    defer { try? queue.close() }
                    _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") }
                }
                #expect(Self.sideFiles(path) == [], "the fallback look made \(Self.sideFiles(path))")
            }
        }
    }

    /// A look on a rollback-journal file, kept open (as a read-only store keeps it), while another process switches
    /// the file to WAL, writes and closes it: the look's next read fails, making no -wal or -shm.
    @Test func aJournalModeLookMakesNoLogWhenTheFileTurnsWAL() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("closing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal.sqlite").path
        do {
            let maker = try DatabaseQueue(path: path)
            try maker.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
            try maker.close()
        }
        let look = StoreLook.choose(path: path, file: try StoreFileCheck.inspect(path: path))
        #expect(look.kind == .shared)
        let queue = try look.openQueue(busyTimeout: 1)
        defer { try? queue.close() }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        do {
            let writer = try DatabaseQueue(path: path)
            try writer.writeWithoutTransaction { db in
                #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal")
                try db.execute(sql: "INSERT INTO t VALUES (2)")
            }
            try writer.close()
        }
        #expect(Self.sideFiles(path) == [])
        #expect(throws: DatabaseError.self) {
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        }
        #expect(Self.sideFiles(path) == [], "the look made \(Self.sideFiles(path))")
    }

    /// The same, through `StoreLook.read`: the failed look is taken again, chosen for the store as it is then (no
    /// writer: a look that makes its own `-wal` and `-shm` and removes them), and the read succeeds, leaving nothing.
    @Test func aLookWhoseWriterClosedFirstIsTakenAgain() throws {
        try Self.withWriter { path, writer in
            let entities = try writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Z_PRIMARYKEY") }
            var kinds: [StoreLook.Kind] = []
            let reading = try StoreLook.read(path: path, file: try StoreFileCheck.inspect(path: path)) { look -> Result<Int, LookError> in
                kinds.append(look.kind)
                try? writer.close()
                do {
                    let queue = try look.openQueue(busyTimeout: 1)
                    defer { try? queue.close() }
                    return .success(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Z_PRIMARYKEY") } ?? 0)
                } catch {
                    return .failure(LookError(reading: error, path: path, look: look, busyTimeout: 1))
                }
            }
            #expect(reading.value == entities && entities ?? 0 > 0)
            #expect(kinds.first == .shared && kinds.last == .queryOnly, "\(kinds)")
            #expect(Self.sideFiles(path) == [])
        }
    }
}
