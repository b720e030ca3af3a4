import Foundation
import GRDB
import Testing
@testable import GraphStore

/// A read-only look that fails to open a store whose `-wal` lies without its `-shm` looks again only when that was a
/// writer closing the store (its last connection removes the `-shm` a moment before the `-wal`), never for a log left
/// alone for good, and never for another error.
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

    private static func failure(_ code: ResultCode) -> Result<Int, LookError> {
        .failure(LookError(storeError: .noSuchFile(path: "x"), sqliteError: DatabaseError(resultCode: code)))
    }

    @Test func aLogThatGoesWithinTheWaitIsAClosingWriter() throws {
        try Self.withLog(index: false) { path in
            let remover = Thread { usleep(100_000); try? FileManager.default.removeItem(atPath: path + "-wal") }
            remover.start()
            #expect(StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func aLogJoinedByItsIndexAgainIsWorthANewLook() throws {
        try Self.withLog(index: true) { path in
            #expect(StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
        }
    }

    @Test func aLogLeftAloneIsNotAClosingWriter() throws {
        try Self.withLog(index: false) { path in
            let start = ContinuousClock.now
            #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
            // It waited for the writer that never came (a second), then gave up.
            #expect(ContinuousClock.now - start >= .milliseconds(900))
        }
    }

    @Test func otherFailuresAndSuccessesAreNot() throws {
        try Self.withLog(index: true) { path in
            #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CORRUPT)))
            #expect(!StoreLook.metClosingWriter(path: path, after: Result<Int, LookError>.success(1)))
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
        }
    }
}
