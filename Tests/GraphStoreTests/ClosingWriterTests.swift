import Foundation
import GRDB
import Testing
@testable import GraphStore

/// A read-only look that fails to open a store whose `-wal` lies without its `-shm` looks again only when that was a
/// writer closing the store (its last connection removes the `-shm` a moment before the `-wal`), never for a log left
/// alone for good, and never for another error.
@Suite struct ClosingWriterTests {
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("closing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func failure(_ code: ResultCode) -> Result<Int, LookError> {
        .failure(LookError(storeError: .noSuchFile(path: "x"), sqliteError: DatabaseError(resultCode: code)))
    }

    @Test func aLogThatGoesWithinTheWaitIsAClosingWriter() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data([1])))
        let remover = Thread { usleep(100_000); try? FileManager.default.removeItem(atPath: path + "-wal") }
        remover.start()
        #expect(StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aLogJoinedByItsIndexAgainIsWorthANewLook() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: path + "-shm", contents: Data([1])))
        #expect(StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
    }

    @Test func aLogLeftAloneIsNotAClosingWriter() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data([1])))
        let start = ContinuousClock.now
        #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
        // It waited for the writer that never came (a second), then gave up.
        #expect(ContinuousClock.now - start >= .milliseconds(900))
    }

    @Test func otherFailuresAndSuccessesAreNot() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: path + "-shm", contents: Data([1])))
        #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CORRUPT)))
        #expect(!StoreLook.metClosingWriter(path: path, after: Result<Int, LookError>.success(1)))
        try FileManager.default.removeItem(atPath: path + "-wal")
        #expect(!StoreLook.metClosingWriter(path: path, after: Self.failure(.SQLITE_CANTOPEN)))
    }
}
