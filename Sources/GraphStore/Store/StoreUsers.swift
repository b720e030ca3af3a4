#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether another process has an SQLite file open, asked of the locks SQLite itself takes, and the side files
/// (`-wal`, `-shm`, `-journal`) that belong to a store's path.
///
/// SQLite's Unix layer uses POSIX advisory locks. Every connection to a WAL-mode database holds a shared lock on the
/// `-shm` file's "DMS" byte (offset 128) for as long as it is open, and takes its read and write slots (offsets
/// 120–127) while it works; a connection to a rollback-mode database holds locks on the database file's lock page
/// (offset 2^30) only while it is in a transaction. `F_GETLK` reports any such lock held by another process, and
/// which process holds it, without taking one: the probe opens the files read-only, never creates one, and holds no
/// lock (so closing its descriptors drops nothing of this process's own).
public enum StoreUsers {
    /// The suffixes of the files SQLite keeps beside a database, named after it.
    public static let sideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// The process ID of some other process that has the database at `path` open, as SQLite's locks show; nil when
    /// none can be seen. A rollback-mode connection outside a transaction holds no lock and cannot be seen, but it
    /// also shares no file by name with a store that replaces this one.
    public static func otherProcess(using path: String) -> Int32? {
        // The -shm's lock slots and its DMS byte: 120 through 128.
        if let holder = lockHolder(of: path + "-shm", start: 120, length: 9) { return holder }
        // The database file's lock page: the pending byte, the reserved byte and the 510 shared bytes.
        return lockHolder(of: path, start: 0x4000_0000, length: 512)
    }

    /// The side files of `path` that exist now (whatever their size), as full paths.
    public static func sideFiles(of path: String) -> [String] {
        sideFileSuffixes.map { path + $0 }.filter { side in
            var info = stat()
            return lstat(side, &info) == 0
        }
    }

    private static func lockHolder(of file: String, start: Int, length: Int) -> Int32? {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return nil }
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        query.l_start = off_t(start)
        query.l_len = off_t(length)
        guard fcntl(descriptor, F_GETLK, &query) == 0, query.l_type != Int16(F_UNLCK) else { return nil }
        return query.l_pid
    }
}
