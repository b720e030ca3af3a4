import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What is at a store's path, decided before SQLite ever sees it.
///
/// `inspect(path:)` only calls `stat`, `access` and reads the first 100 bytes through a read-only
/// file descriptor: it never writes, never creates a file, and never opens the path with SQLite
/// (which could create `-wal`, `-shm` or `-journal` files, or roll back a hot journal).
public struct StoreFileCheck: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Nothing at the path, and its folder exists: a new store may be created there.
        case absent
        /// A whole SQLite file. `pageCount` is the header's count when SQLite would trust it,
        /// otherwise the file size divided by the page size.
        case database(pageSize: Int, pageCount: Int64, isWAL: Bool)
    }

    public let path: String
    public let state: State
    /// True when this process may not write the file, or may not create files (-wal/-shm/journal) in its folder.
    public var isReadOnly: Bool { writeProblem != nil }
    /// Why this process could not write the store, as one phrase (`the file is not writable: Permission denied`,
    /// `its folder /data is not writable: Read-only file system`); nil when it could.
    public let writeProblem: String?

    public static func inspect(path: String) throws(StoreError) -> StoreFileCheck {
        // SQLite treats "" as "a private temporary database": nothing would ever reach the disk.
        guard !path.isEmpty else { throw .noSuchFile(path: path) }

        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT || code == ENOTDIR else {
                throw .unreadable(path: path, reason: systemMessage(code))
            }
            let folder = folder(containing: path)
            var folderInfo = stat()
            guard stat(folder, &folderInfo) == 0, kind(of: folderInfo) == mode_t(S_IFDIR) else {
                throw .directoryMissing(path: path)
            }
            return StoreFileCheck(path: path, state: .absent, writeProblem: folderProblem(folder))
        }
        // Look at the type before opening: opening a FIFO for reading could block.
        try checkKind(of: info, path: path)

        let header = try readHeader(path: path, file: info)
        let state = try State.database(header: header.bytes, fileSize: header.size, path: path, hasWAL: Self.hasWriteAheadLog(path))
        // A log of pages of another size cannot be this file's (SQLite would lay its pages over the file's).
        if case .database(let pageSize, _, _) = state, let mismatch = logMismatch(path: path, pageSize: pageSize) {
            throw .damaged(path: path, reason: mismatch)
        }

        // SQLite creates -wal, -shm and -journal beside the real file when the path is a symbolic link.
        let folder = folder(containing: resolvedPath(path) ?? path)
        let fileProblem = access(path, W_OK) == 0 ? nil : "the file is not writable: \(systemMessage(errno))"
        return StoreFileCheck(path: path, state: state, writeProblem: fileProblem ?? folderProblem(folder))
    }

    /// Why files cannot be created in `folder` (SQLite's -wal, -shm and -journal go there), or nil.
    private static func folderProblem(_ folder: String) -> String? {
        guard access(folder, W_OK) != 0 else { return nil }
        return "its folder \(folder) is not writable: \(systemMessage(errno))"
    }

    /// The folder a path lives in, as written: `"."` for a bare name, `"/"` for a top-level entry.
    static func folder(containing path: String) -> String {
        var rest = Substring(path)
        while rest.count > 1, rest.hasSuffix("/") { rest.removeLast() }
        guard let slash = rest.lastIndex(of: "/") else { return "." }
        var folder = rest[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    // MARK: - Reading the file

    private static let headerLength = 100
    private static let magic: [UInt8] = Array("SQLite format 3\0".utf8)

    private static func kind(of info: stat) -> mode_t {
        info.st_mode & mode_t(S_IFMT)
    }

    private static func checkKind(of info: stat, path: String) throws(StoreError) {
        switch kind(of: info) {
        case mode_t(S_IFREG): return
        case mode_t(S_IFDIR): throw .isDirectory(path: path)
        default: throw .notSQLite(path: path)  // FIFO, socket, device
        }
    }

    /// The file's first 100 bytes (fewer if it is shorter) and its size, both taken from one open descriptor.
    ///
    /// When this process has the file open already (another store or coordinator on it, SQLite's descriptor), the
    /// bytes are read through that descriptor, never a new one: closing a descriptor of a file drops every POSIX
    /// lock this process holds on it, while SQLite still counts them held. Among them is the shared lock every
    /// connection to a WAL-mode store keeps, one of the signs another process looks for before it takes itself for
    /// the last connection, and the lock a rollback-mode reader holds for its transaction, without which another
    /// process may rewrite pages under it.
    private static func readHeader(path: String, file: stat) throws(StoreError) -> (bytes: [UInt8], size: Int64) {
        if let shared = openDescriptor(of: file) { return try readHeader(path: path, descriptor: shared) }
        // O_NONBLOCK: should the path have become a FIFO since `stat`, do not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: systemMessage(errno)) }
        defer { close(descriptor) }
        return try readHeader(path: path, descriptor: descriptor)
    }

    /// A descriptor this process already has open on the file `file` describes (same device and inode), found in
    /// `/proc/self/fd`; nil when there is none, or no such list (not Linux).
    private static func openDescriptor(of file: stat) -> Int32? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        for name in names {
            guard let descriptor = Int32(name) else { continue }
            var info = stat()
            // The listing's own descriptor may be gone by now: fstat fails, and it is passed over.
            if fstat(descriptor, &info) == 0, info.st_dev == file.st_dev, info.st_ino == file.st_ino,
               kind(of: info) == mode_t(S_IFREG), fcntl(descriptor, F_GETFL) & O_ACCMODE != O_WRONLY {
                return descriptor
            }
        }
        return nil
    }

    private static func readHeader(path: String, descriptor: Int32) throws(StoreError) -> (bytes: [UInt8], size: Int64) {

        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(path: path, reason: systemMessage(errno)) }
        try checkKind(of: info, path: path)
        let size = Int64(info.st_size)
        if size == 0 { throw .emptyFile(path: path) }
        if size < Int64(headerLength) { throw .notSQLite(path: path) }

        var bytes = [UInt8](repeating: 0, count: headerLength)
        var filled = 0
        while filled < headerLength {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, headerLength - filled, off_t(filled))  // cannot fail: not empty
            }
            if count > 0 {
                filled += count
            } else if count == 0 {
                break  // the file shrank since fstat
            } else if errno != EINTR {
                throw .unreadable(path: path, reason: systemMessage(errno))
            }
        }
        return (Array(bytes[..<filled]), size)
    }

    private static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path-wal` exists and holds anything.
    private static func hasWriteAheadLog(_ path: String) -> Bool {
        var info = stat()
        return stat(path + "-wal", &info) == 0 && info.st_size > 0
    }

    /// Whether `path-wal` holds frames that no connection has open: a writer's that was interrupted, or a log
    /// copied beside the file (no connection holds the `-shm`'s lock that every open one holds: `StoreUsers`).
    public static func hasOrphanedLog(_ path: String) -> Bool {
        hasWriteAheadLog(path) && !StoreUsers.hasConnection(to: path)
    }

    /// Why `path-wal` cannot be this file's log, or nil when it could be: a log SQLite would read (its magic number,
    /// format 3007000) whose pages are of another size than the database's is another database's, and SQLite would
    /// lay its pages over the file's.
    public static func logMismatch(path: String, pageSize: Int) -> String? {
        let name = (path as NSString).lastPathComponent + "-wal"
        let descriptor = open(path + "-wal", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 32)
        let count = header.withUnsafeMutableBytes { buffer in pread(descriptor, buffer.baseAddress, 32, 0) }
        guard count == 32 else { return nil }  // shorter than a header: SQLite ignores it
        func uint32(at offset: Int) -> UInt32 {
            (offset..<offset + 4).reduce(0) { $0 << 8 | UInt32(header[$1]) }
        }
        // A header SQLite does not recognise makes it ignore the log (and reset it at the next write): harmless.
        let magic = uint32(at: 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683, uint32(at: 4) == 3_007_000 else { return nil }
        let logPageSize = Int(uint32(at: 8))
        guard logPageSize == pageSize else {
            return "its write-ahead log \(name) holds pages of \(logPageSize) bytes, the store's are \(pageSize): "
                + "the log is another database's"
        }
        return nil
    }

    private static func systemMessage(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

extension StoreFileCheck.State {
    /// Reads the database header (https://www.sqlite.org/fileformat.html#the_database_header).
    /// - Parameter hasWAL: whether a non-empty `-wal` file lies beside the database. A writer killed while copying
    ///   the log back into the file can leave the header counting pages the file does not hold yet; the log still
    ///   holds them, and SQLite's next checkpoint finishes the copy, so the header's count is not held against
    ///   the file then.
    fileprivate static func database(header: [UInt8], fileSize: Int64, path: String, hasWAL: Bool) throws(StoreError) -> Self {
        guard header.count == 100, header.starts(with: StoreFileCheck.magic) else { throw .notSQLite(path: path) }

        func uint16(at offset: Int) -> UInt16 {
            UInt16(header[offset]) << 8 | UInt16(header[offset + 1])
        }
        func uint32(at offset: Int) -> UInt32 {
            (offset..<offset + 4).reduce(0) { $0 << 8 | UInt32(header[$1]) }
        }

        let rawPageSize = uint16(at: 16)
        let pageSize = rawPageSize == 1 ? 65536 : Int(rawPageSize)
        guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else { throw .notSQLite(path: path) }
        let pageBytes = Int64(pageSize)

        // SQLite trusts the header's page count only when it was written by a version that keeps it
        // up to date: "version-valid-for" (offset 92) equals the change counter (offset 24).
        let headerPageCount = uint32(at: 28)
        let isWAL = header[18] == 2 && header[19] == 2
        let headerCountIsValid = headerPageCount != 0 && uint32(at: 92) == uint32(at: 24)
        if headerCountIsValid, !(isWAL && hasWAL) {
            let expected = Int64(headerPageCount) * pageBytes
            if fileSize < expected {
                throw .truncated(path: path, expectedBytes: expected, actualBytes: fileSize)
            }
        }
        if fileSize % pageBytes != 0 {
            let expected = (fileSize / pageBytes + 1) * pageBytes
            throw .truncated(path: path, expectedBytes: expected, actualBytes: fileSize)
        }

        let pageCount = headerCountIsValid ? Int64(headerPageCount) : fileSize / pageBytes
        return .database(pageSize: pageSize, pageCount: pageCount, isWAL: isWAL)
    }
}
