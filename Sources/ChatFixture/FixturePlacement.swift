import Foundation
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Putting a finished store at its path without harming what is there.
///
/// SQLite pairs a database with its `-wal`, `-shm` and `-journal` by name, not by file: a new store renamed over an
/// old one inherits the old one's side files, and a write-ahead log that is replayed into a database it was not
/// written for corrupts it. So a store is only ever put where no side files are left, and never over a store that
/// another process has open (its connections would go on writing the old store's log under the new store's name).
enum FixturePlacement {
    /// `.NAME.PID.partial`: the file a generator builds, beside the target, hidden.
    static func temporaryName(of name: String, process: Int32) -> String { ".\(name).\(process).partial" }

    /// Refuses, before any work, what `place` would refuse at the end: anything at `path` but a regular file that is
    /// empty or an SQLite database (and, without `replacing`, anything at all), a store another process has open,
    /// and (without `replacing`) side files left from an earlier store at this path.
    static func checkTarget(_ path: String, replacing: Bool) throws(FixtureError) {
        try checkNotSideFileName(path)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard replacing else { throw .alreadyExists(path: path) }
            try checkReplaceable(path, info: info)
        }
        if replacing {
            // Left for `place` to remove once the new store is ready; refused now only when in use.
            try checkNotInUse(path)
        } else {
            try checkSideFiles(of: path, removing: false)
        }
    }

    /// Moves the finished store at `temporary` to `path` (see `FixtureGenerator.generate`).
    static func place(_ temporary: String, at path: String, replacing: Bool) throws(FixtureError) {
        // The generator's coordinator has closed, which checkpoints the log into the file and removes it: a log
        // still there would hold part of the store, so the file alone must not be moved.
        for side in StoreUsers.sideFiles(of: temporary) where fileSize(side) > 0 {
            throw .output("\(path): the finished store's \(side.dropFirst(temporary.count)) file was not folded into it; nothing was replaced")
        }
        try checkNotSideFileName(path)
        var info = stat()
        let exists = lstat(path, &info) == 0
        if exists {
            guard replacing else { throw .alreadyExists(path: path) }
            try checkReplaceable(path, info: info)
        }
        try checkSideFiles(of: path, removing: replacing)
        if exists {
            guard rename(temporary, path) == 0 else { throw moveFailure(path) }
            return
        }
        // A hard link cannot replace anything: if another process put a file at `path` since the check, the link
        // fails and that file stays.
        if link(temporary, path) == 0 {
            unlink(temporary)
            return
        }
        let code = errno
        if code == EEXIST { throw .alreadyExists(path: path) }
        // File systems without hard links (EPERM, ENOTSUP): a rename, checked just before.
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EMLINK else { throw moveFailure(path, code: code) }
        guard lstat(path, &info) != 0 else { throw .alreadyExists(path: path) }
        guard rename(temporary, path) == 0 else { throw moveFailure(path) }
    }

    /// Removes what generators killed before they finished left behind for this target: `.NAME.PID.partial` files
    /// (and their side files) whose process no longer runs.
    static func removeAbandonedTemporaries(of path: String) {
        let target = URL(fileURLWithPath: path)
        let prefix = ".\(target.lastPathComponent)."
        let folder = target.deletingLastPathComponent().path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dot = rest.firstIndex(of: "."), rest[dot...].hasPrefix(".partial"),
                  let process = Int32(rest[..<dot]), process > 0, process != getpid() else { continue }
            guard kill(process, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }

    /// Removes the side files at `path` when no file is there and no process has them open (they belong to a store
    /// that is gone); refuses when they are in use.
    static func removeLeftovers(of path: String) throws(FixtureError) {
        var info = stat()
        guard lstat(path, &info) != 0 else { return }
        try checkSideFiles(of: path, removing: true)
    }

    /// Refuses `X-wal`, `X-shm` and `X-journal` while a file `X` exists, with or without `--force`: SQLite would
    /// take a store written there for X's write-ahead log, its index or its rollback journal, and X (a live store,
    /// perhaps) would fail to open or be damaged by it, while the store written there could not be opened either.
    static func checkNotSideFileName(_ path: String) throws(FixtureError) {
        if let (suffix, owner) = StoreUsers.owner(ofSideFile: path) {
            throw .output("\(path): cannot write a store here (SQLite keeps the \(suffix) file of \(owner) under that name)")
        }
    }

    // MARK: -

    private static func checkReplaceable(_ path: String, info: stat) throws(FixtureError) {
        let kind = info.st_mode & mode_t(S_IFMT)
        guard kind == mode_t(S_IFREG) else {
            throw .output("\(path): is \(describe(kind)), not a store file; --force replaces only a regular file")
        }
        guard info.st_size == 0 || startsAsSQLite(path) else {
            throw .output("\(path): is not an SQLite database; --force replaces only a store (or an empty file)")
        }
        try checkNotInUse(path)
    }

    private static func checkNotInUse(_ path: String) throws(FixtureError) {
        if let process = StoreUsers.process(using: path) {
            let holder = process == getpid() ? "this process" : "another process (pid \(process))"
            throw .output("\(path): is open in \(holder); close it there first")
        }
    }

    /// Side files at `path` with no database to go with, or left by a store that is being replaced: removed when
    /// `removing` and nobody has them open, refused otherwise.
    private static func checkSideFiles(of path: String, removing: Bool) throws(FixtureError) {
        let sides = StoreUsers.sideFiles(of: path)
        guard let first = sides.first else { return }
        try checkNotInUse(path)
        guard removing else {
            throw .output("\(first): is left from an earlier store at this path; remove it (or use --force)")
        }
        for side in sides where unlink(side) != 0 && errno != ENOENT {
            throw .output("\(side): cannot remove this leftover of the replaced store (\(String(cString: strerror(errno))))")
        }
    }

    private static func startsAsSQLite(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let magic = Array("SQLite format 3\0".utf8)
        return (try? handle.read(upToCount: magic.count)).map { Array($0) == magic } ?? false
    }

    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    private static func describe(_ kind: mode_t) -> String {
        switch kind {
        case mode_t(S_IFDIR): "a folder"
        case mode_t(S_IFLNK): "a symbolic link"
        case mode_t(S_IFCHR): "a character device"
        case mode_t(S_IFBLK): "a block device"
        case mode_t(S_IFIFO): "a named pipe"
        case mode_t(S_IFSOCK): "a socket"
        default: "not a regular file"
        }
    }

    private static func moveFailure(_ path: String, code: Int32 = errno) -> FixtureError {
        .output("\(path): cannot move the finished store into place (\(String(cString: strerror(code))))")
    }
}
