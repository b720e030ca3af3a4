import Foundation
import GRDB
import GraphStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct StoreFileCheckTests {
    // MARK: - Nothing there yet

    @Test func absentPathInExistingFolderMayBeCreated() throws {
        try withScratchFolder { folder in
            let path = folder + "/new.sqlite"
            let check = try inspectLeavingDiskAlone(path, watching: folder).get()
            #expect(check.path == path)
            #expect(check.state == .absent)
            #expect(check.isReadOnly == false)
        }
    }

    @Test func missingFolderIsReported() throws {
        try withScratchFolder { folder in
            let path = folder + "/nowhere/new.sqlite"
            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            #expect(error == .directoryMissing(path: path))
            #expect(error.description == "\(path): the folder \(folder)/nowhere does not exist")
        }
    }

    @Test func folderThatIsAFileIsReportedMissing() throws {
        try withScratchFolder { folder in
            try write("hello\n", to: folder + "/notes")
            let path = folder + "/notes/new.sqlite"
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure == .directoryMissing(path: path))
        }
    }

    @Test func emptyPathIsRefused() {
        // SQLite would take "" as a private temporary database and keep nothing.
        #expect(throws: StoreError.noSuchFile(path: "")) { try StoreFileCheck.inspect(path: "") }
    }

    // MARK: - Things that are not a store

    @Test func directoryIsRejected() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            #expect(error == .isDirectory(path: path))
            #expect(error.description == "\(path): is a directory, not a store file")
        }
    }

    @Test func emptyFileIsRejected() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            try write("", to: path)
            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            #expect(error == .emptyFile(path: path))
            #expect(error.description == "\(path): is empty (0 bytes), not a store")
        }
    }

    @Test(arguments: ["hello\n", twoHundredBytesOfText])
    func textFileIsNotSQLite(text: String) throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            try write(text, to: path)
            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            #expect(error == .notSQLite(path: path))
            #expect(error.description == "\(path): is not an SQLite database")
        }
    }

    @Test func textFileArgumentsHaveTheIntendedSizes() {
        // Guards the arguments above: one short file, and one of 200 bytes (past the 100-byte header).
        #expect("hello\n".utf8.count == 6)
        #expect(twoHundredBytesOfText.utf8.count == 200)
    }

    @Test func fifoIsNotSQLiteAndDoesNotBlock() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            #expect(mkfifo(path, 0o644) == 0)
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure == .notSQLite(path: path))
        }
    }

    @Test(arguments: [0, 2, 256, 511, 1000, 4095, 4097, 65535] as [UInt16])
    func impossiblePageSizeIsNotSQLite(field: UInt16) throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            var bytes = header(pageSizeField: field, pageCount: 1)
            bytes += [UInt8](repeating: 0, count: 4096 - bytes.count)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure == .notSQLite(path: path))
        }
    }

    // MARK: - Damaged SQLite files

    @Test func fileCutInHalfIsTruncated() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path)
            let fullSize = made.pageCount * Int64(made.pageSize)
            #expect(try fileSize(path) == fullSize)
            #expect(truncate(path, off_t(fullSize / 2)) == 0)

            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            #expect(error == .truncated(path: path, expectedBytes: fullSize, actualBytes: fullSize / 2))
            #expect(error.description == "\(path): is truncated (\(fullSize / 2) of \(fullSize) bytes): the file is damaged")
        }
    }

    /// A writer killed while copying its log back into the file (a checkpoint) can leave the header counting a page
    /// the file does not hold yet; the log beside it still does. That is not damage, until the log is gone too.
    @Test func aWALStoreShortOfItsHeadersCountIsWholeWhileItsLogIsThere() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path, wal: true)
            let pageBytes = Int64(made.pageSize)
            let short = (made.pageCount - 1) * pageBytes
            #expect(truncate(path, off_t(short)) == 0)
            try Data(repeating: 1, count: 32).write(to: URL(fileURLWithPath: path + "-wal"))
            #expect(throws: Never.self) { try StoreFileCheck.inspect(path: path) }
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure
                == .truncated(path: path, expectedBytes: made.pageCount * pageBytes, actualBytes: short))
        }
    }

    @Test func fileCutTo150BytesIsTruncated() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path)
            #expect(truncate(path, 150) == 0)

            let error = try #require(inspectLeavingDiskAlone(path, watching: folder).failure)
            let fullSize = made.pageCount * Int64(made.pageSize)
            #expect(error == .truncated(path: path, expectedBytes: fullSize, actualBytes: 150))
            #expect(error.description == "\(path): is truncated (150 of \(fullSize) bytes): the file is damaged")
        }
    }

    @Test func fileCutInsideTheHeaderIsNotSQLite() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            _ = try makeDatabase(at: path)
            #expect(truncate(path, 99) == 0)
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure == .notSQLite(path: path))
        }
    }

    @Test func sizeThatIsNotAWholeNumberOfPagesIsTruncated() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path)
            let pageBytes = Int64(made.pageSize)
            // Ten stray bytes past the end: the header's count still fits, the size does not.
            let size = made.pageCount * pageBytes + 10
            #expect(truncate(path, off_t(size)) == 0)
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure
                == .truncated(path: path, expectedBytes: (made.pageCount + 1) * pageBytes, actualBytes: size))
        }
    }

    // MARK: - Whole SQLite files

    @Test func wholeDatabaseReportsPageSizeAndCount() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path)
            #expect(made.pageCount > 2, "the test database should span several pages")

            let check = try inspectLeavingDiskAlone(path, watching: folder).get()
            #expect(check.state == .database(pageSize: made.pageSize, pageCount: made.pageCount, isWAL: false))
            #expect(check.isReadOnly == false)
        }
    }

    @Test func walDatabaseIsRecognised() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path, wal: true)
            #expect(made.pageCount > 2, "the test database should span several pages")

            let check = try inspectLeavingDiskAlone(path, watching: folder).get()
            #expect(check.state == .database(pageSize: made.pageSize, pageCount: made.pageCount, isWAL: true))
        }
    }

    @Test func pageCountComesFromTheHeaderOnlyWhenItIsCurrent() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            let made = try makeDatabase(at: path)
            // One spare page at the end: a current header count ignores it, a stale one makes the size count.
            let grown = (made.pageCount + 1) * Int64(made.pageSize)
            #expect(truncate(path, off_t(grown)) == 0)
            #expect(try StoreFileCheck.inspect(path: path).state
                == .database(pageSize: made.pageSize, pageCount: made.pageCount, isWAL: false))

            // Change "version-valid-for" (offset 92) so it no longer matches the change counter (offset 24).
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[95] &+= 1
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try inspectLeavingDiskAlone(path, watching: folder).get().state
                == .database(pageSize: made.pageSize, pageCount: made.pageCount + 1, isWAL: false))

            // A stale count does not make a short file look truncated either: only the size is checked.
            let short = (made.pageCount - 1) * Int64(made.pageSize)
            #expect(truncate(path, off_t(short)) == 0)
            #expect(try inspectLeavingDiskAlone(path, watching: folder).get().state
                == .database(pageSize: made.pageSize, pageCount: made.pageCount - 1, isWAL: false))
        }
    }

    @Test func pageSizeFieldOfOneMeans65536() throws {
        try withScratchFolder { folder in
            let path = folder + "/store.sqlite"
            var bytes = header(pageSizeField: 1, pageCount: 2)
            bytes += [UInt8](repeating: 0, count: 2 * 65536 - bytes.count)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try inspectLeavingDiskAlone(path, watching: folder).get().state
                == .database(pageSize: 65536, pageCount: 2, isWAL: false))

            #expect(truncate(path, 65536) == 0)
            #expect(inspectLeavingDiskAlone(path, watching: folder).failure
                == .truncated(path: path, expectedBytes: 2 * 65536, actualBytes: 65536))
        }
    }

    // MARK: - Permissions

    @Test(
        .enabled(if: getuid() != 0, "root ignores file permissions; the root variant runs the check as 'nobody' in a child process")
    )
    func permissionsDecideReadOnlyAndUnreadable() throws {
        try withScratchFolder { base in
            try PermissionScenario.build(in: base)
            #expect(PermissionScenario.report(in: base) == PermissionScenario.expectedReport(in: base))
        }
    }

    @Test(
        .enabled(if: getuid() == 0, "needs root to drop to 'nobody'; without root, permissionsDecideReadOnlyAndUnreadable covers this in-process")
    )
    func permissionsDecideReadOnlyAndUnreadableForAnUnprivilegedUser() async throws {
        // Root may write anything, so the check runs in a child process that first becomes 'nobody'.
        // The folder sits in /tmp so that 'nobody' can reach it whatever TMPDIR says.
        let scratch = try TemporaryDirectory(under: URL(fileURLWithPath: "/tmp"))
        defer { withExtendedLifetime(scratch) {} }
        let base = scratch.path
        try PermissionScenario.build(in: base)

        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [base = base as String] in
            guard let account = getpwnam("nobody") else { exit(3) }
            let uid = account.pointee.pw_uid
            let gid = account.pointee.pw_gid
            guard setgroups(0, nil) == 0, setgid(gid) == 0, setuid(uid) == 0, getuid() == uid, geteuid() == uid,
                  uid != 0
            else { exit(4) }
            let report = PermissionScenario.report(in: base).map { $0 + "\n" }.joined()
            FileHandle.standardOutput.write(Data(("BEGIN REPORT\n" + report + "END REPORT\n").utf8))
        }
        let output = String(decoding: try #require(result).standardOutputContent, as: UTF8.self)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let begin = try #require(lines.firstIndex(of: "BEGIN REPORT"), "the child printed no report")
        let end = try #require(lines.firstIndex(of: "END REPORT"), "the child's report is cut short")
        #expect(Array(lines[(begin + 1)..<end]) == PermissionScenario.expectedReport(in: base))
    }

    // MARK: - Error descriptions

    @Test func everyErrorDescriptionIsOneExactLine() {
        let path = "/data/Contacts.sqlite"
        let cases: [(StoreError, String)] = [
            (.noSuchFile(path: path), "/data/Contacts.sqlite: no such file"),
            (.isDirectory(path: path), "/data/Contacts.sqlite: is a directory, not a store file"),
            (.emptyFile(path: path), "/data/Contacts.sqlite: is empty (0 bytes), not a store"),
            (.notSQLite(path: path), "/data/Contacts.sqlite: is not an SQLite database"),
            (.truncated(path: path, expectedBytes: 8192, actualBytes: 150),
             "/data/Contacts.sqlite: is truncated (150 of 8192 bytes): the file is damaged"),
            (.unreadable(path: path, reason: "Permission denied"), "/data/Contacts.sqlite: cannot be read (Permission denied)"),
            (.directoryMissing(path: path), "/data/Contacts.sqlite: the folder /data does not exist"),
            (.notAStore(path: path, reason: "no Z_METADATA table"),
             "/data/Contacts.sqlite: is an SQLite database but not a Faultline store (no Z_METADATA table)"),
            (.modelMismatch(path: path, differences: ["entity 'Group' is new", "Contact.name: type changed"]),
             "/data/Contacts.sqlite: was made for a different model (entity 'Group' is new; Contact.name: type changed)"),
            (.readOnly(path: path), "/data/Contacts.sqlite: is open read-only; changes cannot be saved"),
            (.sqlite(path: path, message: "database is locked"), "/data/Contacts.sqlite: database is locked"),
            (.sqlite(path: path, message: "near \"x\":\nsyntax error"), "/data/Contacts.sqlite: near \"x\":\\nsyntax error"),
        ]
        for (error, text) in cases {
            #expect(error.description == text)
            #expect(!error.description.contains { $0.isNewline })
        }
    }

    @Test(arguments: [
        ("store.sqlite", "."),
        ("./store.sqlite", "."),
        ("/store.sqlite", "/"),
        ("data/store.sqlite", "data"),
        ("/data//stores/store.sqlite", "/data//stores"),
        ("/data/stores//store.sqlite", "/data/stores"),
        ("/data/stores/", "/data"),
    ])
    func missingFolderIsNamedAsWritten(path: String, folder: String) {
        #expect(StoreError.directoryMissing(path: path).description == "\(path): the folder \(folder) does not exist")
    }
}

// MARK: - Permission scenario

/// Files and folders whose modes decide `isReadOnly` and `unreadable`. The modes hold both for their
/// owner when that is not root and for an unrelated user such as 'nobody'; only root ignores them.
private enum PermissionScenario {
    /// Paths relative to the scenario folder, each with what `inspect` should say about it.
    static let expectations: [(String, String)] = [
        ("open/writable.sqlite", "database, read-only: false"),
        ("open/readonly.sqlite", "database, read-only: true"),  // file not writable
        ("open/unreadable.sqlite", "error: cannot be read (Permission denied)"),
        ("open/new.sqlite", "absent, read-only: false"),
        ("open/link.sqlite", "database, read-only: true"),  // -wal would go beside the target, in locked/
        ("locked/writable.sqlite", "database, read-only: true"),  // folder not writable: no -wal/-shm
        ("locked/new.sqlite", "absent, read-only: true"),
        ("locked/link.sqlite", "database, read-only: false"),  // the target is in open/
        ("hidden/store.sqlite", "error: cannot be read (Permission denied)"),  // folder cannot be searched
    ]

    static func build(in base: String) throws {
        let manager = FileManager.default
        for name in ["open", "locked", "hidden"] {
            try manager.createDirectory(atPath: "\(base)/\(name)", withIntermediateDirectories: false)
        }
        _ = try makeDatabase(at: "\(base)/open/writable.sqlite")
        for copy in ["open/readonly.sqlite", "open/unreadable.sqlite", "locked/writable.sqlite", "hidden/store.sqlite"] {
            try manager.copyItem(atPath: "\(base)/open/writable.sqlite", toPath: "\(base)/\(copy)")
        }
        try manager.createSymbolicLink(atPath: "\(base)/open/link.sqlite", withDestinationPath: "../locked/writable.sqlite")
        try manager.createSymbolicLink(atPath: "\(base)/locked/link.sqlite", withDestinationPath: "../open/writable.sqlite")

        let modes: [(String, mode_t)] = [
            ("", 0o755),
            ("open/writable.sqlite", 0o666), ("open/readonly.sqlite", 0o444), ("open/unreadable.sqlite", 0o000),
            ("locked/writable.sqlite", 0o666), ("hidden/store.sqlite", 0o666),
            ("open", 0o777), ("locked", 0o555), ("hidden", 0o000),
        ]
        for (name, mode) in modes {
            let path = name.isEmpty ? base : "\(base)/\(name)"
            guard chmod(path, mode) == 0 else { throw ScratchError("chmod \(path): \(String(cString: strerror(errno)))") }
        }
    }

    static func report(in base: String) -> [String] {
        expectations.map { name, _ in
            let line: String
            do throws(StoreError) {
                let check = try StoreFileCheck.inspect(path: "\(base)/\(name)")
                let state = switch check.state {
                case .absent: "absent"
                case .database: "database"
                }
                line = "\(state), read-only: \(check.isReadOnly)"
            } catch {
                let prefix = "\(base)/\(name): "
                let text = error.description
                line = "error: " + (text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text)
            }
            return "\(name): \(line)"
        }
    }

    static func expectedReport(in base: String) -> [String] {
        expectations.map { "\($0): \($1)" }
    }
}

// MARK: - Helpers

/// Plain text, long enough to hold a whole 100-byte header.
private let twoHundredBytesOfText = String(String(repeating: "Not a database, just some text.\n", count: 7).prefix(199)) + "\n"

private struct ScratchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Runs the check and verifies it left `folder` exactly as it was: same entries, same bytes, no -wal/-shm/-journal.
private func inspectLeavingDiskAlone(
    _ path: String, watching folder: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Result<StoreFileCheck, StoreError> {
    let before = snapshot(of: folder)
    let result = Result { () throws(StoreError) in try StoreFileCheck.inspect(path: path) }
    let after = snapshot(of: folder)
    #expect(after == before, "inspect(path:) changed what is on disk", sourceLocation: sourceLocation)
    for suffix in ["-wal", "-shm", "-journal"] {
        #expect(!FileManager.default.fileExists(atPath: path + suffix), "\(suffix) file appeared", sourceLocation: sourceLocation)
    }
    return result
}

/// What is under a folder: each regular file by its bytes, anything else by its type and mode.
private func snapshot(of folder: String) -> [String: String] {
    var entries: [String: String] = [:]
    let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
    for name in names {
        let path = folder + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { entries[name] = "unstattable"; continue }
        if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) {
            let bytes = FileManager.default.contents(atPath: path)
            entries[name] = "file \(info.st_mode) " + (bytes?.base64EncodedString() ?? "unreadable")
        } else {
            entries[name] = "other \(info.st_mode)"
        }
    }
    return entries
}

private struct MadeDatabase {
    var pageSize: Int
    var pageCount: Int64
}

/// A real SQLite file of several pages, written by GRDB and closed again; the page size and count as SQLite reports them.
private func makeDatabase(at path: String, wal: Bool = false) throws -> MadeDatabase {
    let fill = { (db: Database) throws -> MadeDatabase in
        try db.execute(sql: "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        for number in 1...300 {
            try db.execute(
                sql: "INSERT INTO person (name) VALUES (?)",
                arguments: ["person \(number) " + String(repeating: "x", count: 60)])
        }
        return MadeDatabase(
            pageSize: try #require(try Int.fetchOne(db, sql: "PRAGMA page_size")),
            pageCount: try #require(try Int64.fetchOne(db, sql: "PRAGMA page_count")))
    }
    let made: MadeDatabase
    if wal {
        let pool = try DatabasePool(path: path)
        made = try pool.write(fill)
        try pool.close()
    } else {
        let queue = try DatabaseQueue(path: path)
        made = try queue.write(fill)
        try queue.close()
    }
    for suffix in ["-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
        throw ScratchError("closing the database left \(path + suffix) behind")
    }
    return made
}

/// The first 100 bytes of an SQLite file, with the fields the check reads.
private func header(pageSizeField: UInt16, pageCount: UInt32, changeCounter: UInt32 = 7, validFor: UInt32 = 7) -> [UInt8] {
    func bigEndian(_ value: UInt32) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
    }
    var bytes = Array("SQLite format 3\0".utf8)
    bytes += [UInt8(pageSizeField >> 8), UInt8(pageSizeField & 0xFF), 1, 1, 0, 64, 32, 32]  // offsets 16...23
    bytes += bigEndian(changeCounter) + bigEndian(pageCount)  // offsets 24 and 28
    bytes += [UInt8](repeating: 0, count: 92 - bytes.count)
    bytes += bigEndian(validFor)  // offset 92
    bytes += bigEndian(3_040_001)  // offset 96: SQLite version number
    return bytes
}

private func write(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

private func fileSize(_ path: String) throws -> Int64 {
    var info = stat()
    guard stat(path, &info) == 0 else { throw ScratchError("stat \(path): \(String(cString: strerror(errno)))") }
    return Int64(info.st_size)
}

/// Runs `body` with the path of a new temporary folder, removed afterwards.
private func withScratchFolder<Value>(_ body: (String) throws -> Value) throws -> Value {
    try withTemporaryDirectory { folder in try body(folder.path) }
}
