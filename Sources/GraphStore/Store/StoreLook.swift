#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// How a connection that only reads reaches a store file, chosen so that reading creates no file beside it and sees
/// one state of the store even while another process writes.
///
/// SQLite keeps a WAL-mode store's recent commits in `-wal` and their index in `-shm`; a reader must share both with
/// the writers to see a consistent store, and opens them (making them when missing) beside the file. Which way is
/// taken depends on what is there and on what this process may do:
///
/// | the file                                         | the look                                                  |
/// |--------------------------------------------------|-----------------------------------------------------------|
/// | rollback journal (not WAL)                       | `shared`: read-only, SQLite's file locks; nothing is made |
/// | WAL, a `-wal` beside it                          | `shared`: joins the existing `-wal` and `-shm`            |
/// | WAL, no `-wal`, file and folder writable         | `queryOnly`: makes `-wal`/`-shm`, removes them closing last |
/// | WAL, no `-wal`, file or folder not writable      | `immutable`: reads the file alone, takes no lock          |
/// | WAL, a `-wal` and no `-shm` (no process has it)   | `privateCopy`: reads a copy of both in a temporary folder |
/// | WAL, a `-shm` and no `-wal` (no process has it)   | `immutable`: reads the file alone, leaving the `-shm` be    |
///
/// An immutable look sees no writer: should one start meanwhile (the store's owner, say, while another user reads
/// it), pages can change under it. `changedSinceOpened()` tells, from the file's size and times and a `-wal`
/// appearing, whether that may have happened; `check` looks again when it did.
struct StoreLook: Sendable {
    enum Kind: Sendable, Equatable {
        /// A read-only connection (`SQLITE_OPEN_READONLY`). For a WAL-mode file the `-shm` is opened read-only too
        /// (`readonly_shm=1`), so reading changes neither it nor the `-wal`.
        case shared
        /// A read-write connection on which `PRAGMA query_only` refuses every write. It makes the `-wal` and `-shm`
        /// a WAL reader needs and, the last connection to close, removes them again; meanwhile it shares them with
        /// any writer, so its transactions see one state of the store.
        case queryOnly
        /// `immutable=1`: the file is read as if nothing could change it; no lock, no `-wal`, no `-shm`.
        case immutable
        /// A copy of the file and its `-wal` in a private temporary folder, read there (SQLite makes the `-shm` it
        /// needs beside the copy): for a `-wal` that no process has open and that has no `-shm` beside it, which
        /// reading in place would make and leave. Removed when the process ends.
        case privateCopy
    }

    let path: String
    let kind: Kind
    /// The name SQLite is given: `path`, or a `file:` URI with the look's options.
    let location: String
    /// For an immutable look, the file as it was just before it was opened.
    let stamp: FileStamp?
    /// Whether the look opens the `-shm` read-only (`readonly_shm=1`).
    var indexReadOnly = false
    /// Whether this process may write beside the file (and so rebuild an index it opened read-only).
    var mayWriteIndex = false

    /// The URI parameter of a `shared` look on a WAL-mode file: its connections read through `LookFileSystem`,
    /// which never makes a `-wal` (one that went away before the first read is not made again).
    private static var noNewLog: String {
        LookFileSystem.name.map { "&vfs=" + $0 } ?? ""
    }

    /// The look for `file` (inspected by `StoreFileCheck`, a `.database`).
    /// - Parameter forWriting: the look comes before a writable open: a hot rollback journal may be rolled back
    ///   (the writable open would do it anyway), so a rollback-journal file is read through a writable connection.
    static func choose(path: String, file: StoreFileCheck, forWriting: Bool = false) -> StoreLook {
        guard case .database(_, _, let isWAL) = file.state else {
            return StoreLook(path: path, kind: .shared, location: path, stamp: nil)
        }
        let mayMakeFiles = file.writeProblem == nil
        if !isWAL {
            if forWriting && mayMakeFiles {
                return StoreLook(path: path, kind: .queryOnly, location: path, stamp: nil)
            }
            // Through `LookFileSystem` too: should another process switch the file to WAL and close it while this
            // look is open (a read-only store keeps it for its life), a later read fails, making no -wal and -shm.
            return StoreLook(path: path, kind: .shared, location: uri(path, query: "mode=ro" + noNewLog) ?? path, stamp: nil)
        }
        let hasIndex = FileManager.default.fileExists(atPath: path + "-shm")
        if walIsInUse(path) {
            // A -wal alone (a writer killed before it made its index, or a store copied with its log only): a
            // look in place would make the -shm and leave it. Also before a write: the look may find the store is
            // not one the caller can write (another model), and then nothing is written to make up for the -shm.
            // Not while any process holds a lock on the file: a connection in exclusive locking mode keeps its
            // index in memory, with no -shm, and may be writing the -wal being copied (the look in place waits
            // for its lock, and says so).
            if !hasIndex, StoreUsers.process(using: path) == nil, let copy = PrivateCopies.make(of: path) {
                return StoreLook(path: path, kind: .privateCopy, location: copy, stamp: nil)
            }
            // The -shm is opened read-only: the first connection to open it for writing rebuilds it (changing its
            // bytes), and one missing would be made. SQLite then reads the -wal through an index of its own. The
            // plain read-only connection of `fallback(after:)` may write the index: to rebuild a stale one, or
            // before a write, never to make one that is missing for a command that only reads (it would stay).
            let location = uri(path, query: "mode=ro&readonly_shm=1" + noNewLog) ?? path
            return StoreLook(path: path, kind: .shared, location: location, stamp: nil, indexReadOnly: location != path,
                             mayWriteIndex: mayMakeFiles && (hasIndex || forWriting))
        }
        // A -shm with no -wal, left by a process that is gone (or copied without its log): the connection that
        // closes last would delete it. The file alone holds the whole store, so it is read alone, the -shm left as
        // it is.
        if hasIndex, StoreUsers.process(using: path) == nil, let location = uri(path, query: "immutable=1") {
            return StoreLook(path: path, kind: .immutable, location: location, stamp: FileStamp(path: path))
        }
        if mayMakeFiles {
            return StoreLook(path: path, kind: .queryOnly, location: path, stamp: nil)
        }
        let stamp = FileStamp(path: path)
        guard let location = uri(path, query: "immutable=1") else {
            return StoreLook(path: path, kind: .shared, location: path, stamp: nil)
        }
        return StoreLook(path: path, kind: .immutable, location: location, stamp: stamp)
    }

    /// Whether a `-wal` lies beside `path`. A writer makes its `-wal` a moment before the `-shm`, and its last
    /// connection, closing, removes the `-shm` a moment before the `-wal`: a `-wal` alone is waited on for up to a
    /// second, until the `-shm` appears or the `-wal` goes. One still alone then was left so (the `-shm` deleted):
    /// the look will say so.
    private static func walIsInUse(_ path: String) -> Bool {
        waitForLogWithIndex(path) ?? true
    }

    /// Waits up to a second for a `-wal` alone beside `path` to go or be joined by its `-shm`: true when both are
    /// there, false when the `-wal` is not, nil when it is still alone.
    private static func waitForLogWithIndex(_ path: String) -> Bool? {
        let manager = FileManager.default
        for _ in 0..<100 {
            guard manager.fileExists(atPath: path + "-wal") else { return false }
            if manager.fileExists(atPath: path + "-shm") { return true }
            usleep(10_000)
        }
        return manager.fileExists(atPath: path + "-wal") ? nil : false
    }

    /// Whether a `shared` look failed only because the writer whose `-wal` it was chosen for closed the store before
    /// the look first read it: `unable to open database file`, and the `-wal` gone (its connection, reading through
    /// `LookFileSystem`, made no new one), or going with its `-shm` (seen between the two removals), or joined by its
    /// `-shm` again (another writer) within a second. That is worth a new look. A `-wal` alone for longer was left so,
    /// and the look's error says so.
    func metClosingWriter<Opened>(after result: Result<Opened, LookError>) -> Bool {
        guard kind == .shared, case .failure(let error) = result, let sqlite = error.sqliteError as? DatabaseError,
              sqlite.resultCode == .SQLITE_CANTOPEN else { return false }
        return Self.waitForLogWithIndex(path) != nil
    }

    /// The look to try when this one failed with `error`, or nil. A WAL reader whose `-shm` is opened read-only
    /// cannot bring that index up to date, which a writer killed at the wrong moment can leave stale
    /// (`locking protocol`, or SQLite's `SQLITE_READONLY_RECOVERY` / `_CANTINIT`). Where this process may write the
    /// `-shm`, the plain read-only connection rebuilds it from the `-wal` (the index only: the store and its
    /// `-wal` keep every byte).
    func fallback(after error: LookError) -> StoreLook? {
        guard kind == .shared, indexReadOnly, mayWriteIndex,
              let error = error.sqliteError as? DatabaseError else { return nil }
        switch error.resultCode {
        case .SQLITE_PROTOCOL, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_BUSY:
            let location = Self.uri(path, query: "mode=ro" + Self.noNewLog) ?? path
            return StoreLook(path: path, kind: .shared, location: location, stamp: nil, mayWriteIndex: false)
        default:
            return nil
        }
    }

    /// The configuration of a connection of this look.
    func configuration(busyTimeout: TimeInterval) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = kind != .queryOnly
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "GraphStore"
        let queryOnly = kind == .queryOnly
        configuration.prepareDatabase { db in
            PredicateFunctions.install(on: db)
            CoreDataFunctions.install(on: db)
            if queryOnly { try db.execute(sql: "PRAGMA query_only = ON") }
        }
        return configuration
    }

    /// One connection of this look.
    func openQueue(busyTimeout: TimeInterval) throws -> DatabaseQueue {
        try DatabaseQueue(path: location, configuration: configuration(busyTimeout: busyTimeout))
    }

    /// Whether, for an immutable look, the file may have changed since the look was chosen: its size, times or
    /// identity differ, or a `-wal` has appeared beside it (a writer is at work). Always false for the other
    /// looks, which share SQLite's locks with any writer.
    func changedSinceOpened() -> Bool {
        guard kind == .immutable else { return false }
        guard let stamp else { return true }
        return FileStamp(path: path) != stamp
    }

    /// `file:///…?query` for `path` (made absolute, every byte a URI could misread escaped); nil when this SQLite
    /// library does not read file names as URIs.
    static func uri(_ path: String, query: String) -> String? {
        guard sqlite3_compileoption_used("USE_URI") != 0 else { return nil }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._~-".utf8)
        var escaped = ""
        for byte in absolute.utf8 {
            if plain.contains(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return "file://" + escaped + "?" + query
    }
}

extension StoreLook {
    /// What reading a store through looks gave: the value and the look it came through.
    struct Reading<Value> {
        let value: Value
        let look: StoreLook
    }

    /// Reads the store at `path` (inspected as `file`, a `.database`) through a look: the one `choose` gives, then its
    /// `fallback` when that one failed. A look that may have read a changing file (`changedSinceOpened`) or that met
    /// a writer closing the store (`metClosingWriter`) is taken again, chosen anew for the file as it is then, at
    /// most three looks in all; `discard` is given each value thrown away so. A failure of the last look is thrown.
    /// - Parameters:
    ///   - forWriting: a write follows when the file allows it (see `choose`).
    ///   - whileChanging: thrown, whatever the last look gave, when it too may have read a changing file.
    static func read<Value>(path: String, file: StoreFileCheck, forWriting: Bool = false, whileChanging: StoreError? = nil,
                            discard: (Value) -> Void = { _ in },
                            _ body: (StoreLook) -> Result<Value, LookError>) throws(StoreError) -> Reading<Value> {
        var file = file
        var attempt = 1
        while true {
            var look = choose(path: path, file: file, forWriting: forWriting && !file.isReadOnly)
            var result = body(look)
            if case .failure(let error) = result, let fallback = look.fallback(after: error) {
                look = fallback
                result = body(look)
            }
            let changing = look.changedSinceOpened()
            if attempt < 3, changing || look.metClosingWriter(after: result) {
                if case .success(let value) = result { discard(value) }
                attempt += 1
                file = try StoreFileCheck.inspect(path: path)
                guard case .database = file.state else { throw .noSuchFile(path: path) }
                continue
            }
            if changing, let whileChanging {
                if case .success(let value) = result { discard(value) }
                throw whileChanging
            }
            switch result {
            case .success(let value): return Reading(value: value, look: look)
            case .failure(let error): throw error.storeError
            }
        }
    }
}

/// Why a look failed: the `StoreError` to report, and SQLite's own error when it was one.
struct LookError: Error {
    let storeError: StoreError
    let sqliteError: (any Error)?
}

extension LookError {
    init(storeError: StoreError) {
        self.init(storeError: storeError, sqliteError: nil)
    }

    /// SQLite's `error`, met reading through `look`: what it means for a look that only reads
    /// (`PersistentStore.lookFailure`), else SQLite's own words.
    init(reading error: any Error, path: String, look: StoreLook, busyTimeout: TimeInterval) {
        let reported = PersistentStore.lookFailure(error, path: path, look: look).map { StoreError.unreadable(path: path, reason: $0) }
            ?? .sqlite(path: path, message: PersistentStore.sqliteMessage(error, busyTimeout: busyTimeout))
        self.init(storeError: reported, sqliteError: error)
    }
}

/// What `stat` says of a file and whether a `-wal` lies beside it: two stamps differ when a writer may have been
/// at work between them (a checkpoint rewrites pages of the file, which moves its modification time).
struct FileStamp: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: [Int]
    let changed: [Int]
    let hasWAL: Bool

    /// Nil when the file cannot be `stat`ed.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int64(truncatingIfNeeded: info.st_size)
        #if canImport(Darwin)
        modified = [Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec)]
        changed = [Int(info.st_ctimespec.tv_sec), Int(info.st_ctimespec.tv_nsec)]
        #else
        modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        changed = [Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
        #endif
        var walInfo = stat()
        hasWAL = stat(path + "-wal", &walInfo) == 0
    }
}

/// The private copies `StoreLook` reads a lone `-wal` through: each in a folder of its own under the temporary
/// directory, all removed when the process exits normally.
enum PrivateCopies {
    private static let folders = Mutex<[String]>([])

    /// Copies `path` and its `-wal` into a new private folder; the copy's path, or nil when the copy cannot be made
    /// or the files changed while it was made (a writer started: the look in place is taken instead).
    static func make(of path: String) -> String? {
        let manager = FileManager.default
        guard let before = FileStamp(path: path), let logBefore = FileStamp(path: path + "-wal") else { return nil }
        let folder = manager.temporaryDirectory.appendingPathComponent("faultline-look-\(UUID().uuidString)").path
        let copy = folder + "/" + URL(fileURLWithPath: path).lastPathComponent
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try manager.copyItem(atPath: path, toPath: copy)
            try manager.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        } catch {
            try? manager.removeItem(atPath: folder)
            return nil
        }
        guard FileStamp(path: path) == before, FileStamp(path: path + "-wal") == logBefore,
              !manager.fileExists(atPath: path + "-shm") else {
            try? manager.removeItem(atPath: folder)
            return nil
        }
        let first = folders.withLock { list in
            list.append(folder)
            return list.count == 1
        }
        if first { atexit { PrivateCopies.removeAll() } }
        return copy
    }

    private static func removeAll() {
        for folder in folders.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: folder) }
    }
}
