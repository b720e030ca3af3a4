import Foundation
import GRDBSQLite

/// The SQLite file system a read-only look reads a WAL-mode store through: SQLite's default one, except that it
/// never creates a `-wal`.
///
/// A read-only connection that finds a WAL-mode file with no `-wal` beside it makes one (SQLite lets read-only
/// connections create the `-wal` and `-shm` they need) and then, when its `-shm` is opened read-only, fails with
/// `unable to open database file`, leaving the `-wal` it made. A look is chosen for a `-wal` that is there; it is gone
/// by the time the connection first reads when the writer that had it closed in between (the last connection of a
/// store removes its `-wal` and `-shm`). Through this file system that connection fails without making anything,
/// and the look is taken again (`StoreLook.metClosingWriter`).
enum LookFileSystem {
    /// The name a `vfs=` URI parameter gives; nil when it could not be registered (the look then reads through
    /// SQLite's own, as before).
    static let name: String? = register()

    private static let registeredName = "graphstore-look"

    /// Registers a copy of the default file system whose `xOpen` opens a `-wal` only when it exists. The copy keeps
    /// every other method and field of the default (its `pAppData` included, which its methods read); the default
    /// itself is kept in the word after the copy, where `xOpen` finds it. Neither is ever freed: SQLite keeps a
    /// registered file system for the life of the process.
    private static func register() -> String? {
        guard let base = sqlite3_vfs_find(nil) else { return nil }
        let stride = MemoryLayout<sqlite3_vfs>.stride
        let memory = UnsafeMutableRawPointer.allocate(byteCount: stride + MemoryLayout<UnsafeMutablePointer<sqlite3_vfs>>.stride,
                                                      alignment: MemoryLayout<sqlite3_vfs>.alignment)
        let copy = memory.bindMemory(to: sqlite3_vfs.self, capacity: 1)
        copy.initialize(to: base.pointee)
        (memory + stride).storeBytes(of: base, as: UnsafeMutablePointer<sqlite3_vfs>.self)
        copy.pointee.pNext = nil
        copy.pointee.zName = UnsafePointer(strdup(registeredName))
        copy.pointee.xOpen = { vfs, name, file, flags, outFlags in
            guard let vfs else { return SQLITE_MISUSE }
            let base = UnsafeMutableRawPointer(vfs).load(fromByteOffset: MemoryLayout<sqlite3_vfs>.stride,
                                                         as: UnsafeMutablePointer<sqlite3_vfs>.self)
            guard let open = base.pointee.xOpen else { return SQLITE_MISUSE }
            let opened = flags & SQLITE_OPEN_WAL != 0 ? flags & ~SQLITE_OPEN_CREATE : flags
            return open(base, name, file, opened, outFlags)
        }
        guard sqlite3_vfs_register(copy, 0) == SQLITE_OK else { return nil }
        return registeredName
    }
}
