#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether any process has an SQLite file open, asked of the locks SQLite itself takes, and the side files
/// (`-wal`, `-shm`, `-journal`) that belong to a store's path.
///
/// SQLite's Unix layer uses POSIX advisory locks. Every connection to a WAL-mode database holds a shared lock on the
/// `-shm` file's "DMS" byte (offset 128) for as long as it is open, and takes its read and write slots (offsets
/// 120–127) while it works; a connection to a rollback-mode database holds locks on the database file's lock page
/// (offset 2^30) only while it is in a transaction. The kernel lists every such lock, with the process holding it,
/// in `/proc/locks`, which is read rather than the files opened and asked (`F_GETLK`): closing a descriptor of a
/// file drops every POSIX lock this process holds on it, SQLite's own included, and `F_GETLK` does not report this
/// process's own locks. Where that list cannot be read (not Linux), `F_GETLK` is asked instead, which is right
/// for a process that has no connection to the file itself.
public enum StoreUsers {
    /// The suffixes of the files SQLite keeps beside a database, named after it.
    public static let sideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// The ID of a process (this one included) that has the database at `path` open, as SQLite's locks show; nil
    /// when none can be seen. A rollback-mode connection outside a transaction holds no lock and cannot be seen, but
    /// it also shares no file by name with a store that replaces this one.
    public static func process(using path: String) -> Int32? {
        // The -shm's lock slots and its DMS byte: 120 through 128.
        if let holder = lockHolder(of: path + "-shm", range: 120...128) { return holder }
        // The database file's lock page: the pending byte, the reserved byte and the 510 shared bytes.
        return lockHolder(of: path, range: 0x4000_0000...0x4000_01FF)
    }

    /// Whether some connection has the WAL-mode database at `path` open: a lock on its `-shm`'s DMS byte.
    public static func hasConnection(to path: String) -> Bool {
        lockHolder(of: path + "-shm", range: 128...128) != nil
    }

    /// The side files of `path` that exist now (whatever their size), as full paths.
    /// For `X-wal`, `X-shm` or `X-journal` where a file (not a folder) `X` exists: the suffix and `X`. SQLite takes
    /// a file under such a name for X's log, index or journal; nil for any other path.
    public static func owner(ofSideFile path: String) -> (suffix: String, owner: String)? {
        for suffix in sideFileSuffixes where path.hasSuffix(suffix) {
            let owner = String(path.dropLast(suffix.count))
            var info = stat()
            guard !owner.isEmpty, stat(owner, &info) == 0, info.st_mode & mode_t(S_IFMT) != mode_t(S_IFDIR) else { continue }
            return (suffix, owner)
        }
        return nil
    }

    public static func sideFiles(of path: String) -> [String] {
        sideFileSuffixes.map { path + $0 }.filter { side in
            var info = stat()
            return lstat(side, &info) == 0
        }
    }

    /// A process holding a POSIX lock on any byte of `range` of `file`, or nil.
    private static func lockHolder(of file: String, range: ClosedRange<Int64>) -> Int32? {
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return nil }
        guard let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else {
            return askingTheFile(file, range: range)
        }
        let device = UInt64(truncatingIfNeeded: info.st_dev)
        // glibc's encoding of a device number: major in bits 8–19 and 32–63, minor in bits 0–7 and 20–31.
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~UInt64(0xFFF))
        let minor = (device & 0xFF) | ((device >> 12) & ~UInt64(0xFF))
        let inode = UInt64(truncatingIfNeeded: info.st_ino)
        // e.g. "3: POSIX  ADVISORY  READ 4242 08:01:1835059 128 128" (device in hex, inode in decimal; the end may
        // be EOF). Lines of waiting requests ("3: -> POSIX …") are not held locks.
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[1] == "POSIX", let pid = Int32(fields[4]) else { continue }
            let identity = fields[5].split(separator: ":")
            guard identity.count == 3, UInt64(identity[0], radix: 16) == major, UInt64(identity[1], radix: 16) == minor,
                  UInt64(identity[2]) == inode, let start = Int64(fields[6]) else { continue }
            let end = fields[7] == "EOF" ? Int64.max : (Int64(fields[7]) ?? Int64.max)
            if start <= range.upperBound, range.lowerBound <= end { return pid }
        }
        return nil
    }

    /// `F_GETLK` on `file`: a lock another process holds on `range`.
    private static func askingTheFile(_ file: String, range: ClosedRange<Int64>) -> Int32? {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        query.l_start = off_t(range.lowerBound)
        query.l_len = off_t(range.count)
        guard fcntl(descriptor, F_GETLK, &query) == 0, query.l_type != Int16(F_UNLCK) else { return nil }
        return query.l_pid
    }
}
