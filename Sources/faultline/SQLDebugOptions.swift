import ArgumentParser
import Foundation
import GraphStore
import Synchronization

/// `--sql-debug N` and `--sql-log FILE`, shared by every command that opens a store; `FAULTLINE_SQL_DEBUG=N` in the
/// environment does the same as `--sql-debug N` (the option wins when both are given). `--sql-log` alone logs at
/// level 1: asking for a log file is asking for a log.
struct SQLDebugOptions: ParsableArguments {
    @Option(name: .customLong("sql-debug"), parsing: .unconditional, help: ArgumentHelp(
        "Log SQL as Core Data's SQLDebug does: 1 statements and times, 2 bound values, 3 fault annotations, 4 query plans.",
        valueName: "level"))
    var level: Int?

    @Option(name: .customLong("sql-log"), help: ArgumentHelp(
        "Write the SQL log to this file instead of stderr (at level 1 unless --sql-debug or FAULTLINE_SQL_DEBUG sets one).",
        valueName: "file"))
    var logFile: String?

    func validate() throws {
        if let level, !(1...4).contains(level) {
            throw ValidationError("--sql-debug must be a level from 1 to 4, not \(level)")
        }
    }

    /// The level in force: the option, else the environment variable, else 1 when a log file is named; nil when
    /// logging is off.
    func effectiveLevel(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) -> Int? {
        if let level { return level }
        switch SQLDebugLog.level(fromEnvironment: environment) {
        case .success(let level): return level ?? (logFile == nil ? nil : 1)
        case .failure(let error): throw CommandFailure(error.description)
        }
    }

    /// Checks, without touching the disk, that the `--sql-log` file could be written when a level is in force: not
    /// empty, not a folder, in a folder that exists and may be written, and none of `stores` (nor their -wal or
    /// -shm), nor any other SQLite database or a side file of one, which emptying it for the log would destroy.
    /// Commands call it before opening a store, and open the log only once the store has opened, so a bad store
    /// leaves no log file behind.
    func checkLogFile(notOverwriting stores: [String] = []) throws(CommandFailure) {
        guard try effectiveLevel() != nil, let logFile else { return }
        guard !logFile.isEmpty else { throw CommandFailure("--sql-log is empty: give the file to write the SQL log to") }
        var info = stat()
        if stat(logFile, &info) == 0 {
            if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) {
                throw CommandFailure("\(logFile): cannot write the SQL log here (it is a folder)")
            }
            for store in stores {
                for path in [store] + StoreUsers.sideFileSuffixes.map({ store + $0 }) {
                    var storeInfo = stat()
                    if stat(path, &storeInfo) == 0, storeInfo.st_dev == info.st_dev, storeInfo.st_ino == info.st_ino {
                        throw CommandFailure("\(logFile): cannot write the SQL log here (it is the store \(path); the log would destroy it)")
                    }
                }
            }
            if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG), StoreModelSource.isSQLiteFile(logFile) {
                throw CommandFailure("\(logFile): cannot write the SQL log here (it is an SQLite database, which the log would overwrite)")
            }
            if let (suffix, database) = Self.databaseOwning(sideFile: logFile) {
                throw CommandFailure("\(logFile): cannot write the SQL log here (it is the \(suffix) file of the SQLite database \(database), which the log would overwrite)")
            }
            guard access(logFile, W_OK) == 0 else {
                throw CommandFailure("\(logFile): cannot write the SQL log here (\(String(cString: strerror(errno))))")
            }
            return
        }
        // Not there yet, but named as one of a store's side files: SQLite would take the log for its journal or log.
        let logURL = URL(fileURLWithPath: logFile)
        let logName = Self.resolvedFolder(of: logURL) + "/" + logURL.lastPathComponent
        for store in stores {
            let storeURL = URL(fileURLWithPath: store)
            for suffix in StoreUsers.sideFileSuffixes
            where logName == Self.resolvedFolder(of: storeURL) + "/" + storeURL.lastPathComponent + suffix {
                throw CommandFailure("\(logFile): cannot write the SQL log here (SQLite keeps the store's \(suffix) file under that name)")
            }
        }
        if let (suffix, database) = Self.databaseOwning(sideFile: logFile) {
            throw CommandFailure("\(logFile): cannot write the SQL log here (SQLite keeps the \(suffix) file of the database \(database) under that name)")
        }
        let folder = logURL.deletingLastPathComponent().path
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, folderInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (the folder \(folder) does not exist)")
        }
        guard access(folder, W_OK) == 0 else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (the folder \(folder) is not writable: \(String(cString: strerror(errno))))")
        }
    }

    /// For `X-wal`, `X-shm` or `X-journal` where X is a regular file that starts as an SQLite database: the suffix
    /// and X. SQLite reads such a file as X's log, index or journal, so a log written there would damage X (or be
    /// taken over by it), and one already there is X's.
    private static func databaseOwning(sideFile path: String) -> (suffix: String, database: String)? {
        guard let (suffix, owner) = StoreUsers.owner(ofSideFile: path), StoreModelSource.isSQLiteFile(owner) else { return nil }
        return (suffix, owner)
    }

    /// Where the log goes: the `--sql-log` file (created or emptied now, after `checkLogFile`), else stderr.
    func openSink(notOverwriting stores: [String] = []) throws(CommandFailure) -> FileHandle {
        guard let logFile else { return FileHandle.standardError }
        try checkLogFile(notOverwriting: stores)
        // Emptied and written in place, never made anew and renamed over (as `FileManager.createFile` does): a device
        // such as `/dev/null` or a pipe stays what it is, and a regular file keeps its owner and mode but not its old
        // text; each run's log starts at the top of the file, as on stderr. (An SQLite database, or a side file of
        // one, was refused by `checkLogFile`.)
        // O_NONBLOCK only while opening: a named pipe nobody reads is refused at once (ENXIO) instead of waiting for
        // ever; the log's writes then block as on any file.
        let descriptor = open(logFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (\(String(cString: strerror(errno))))")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Attaches a log to the coordinator's events when a level is in force, writing to `sink` (by default a new
    /// one from `openSink()`). The returned log must be kept alive.
    func attach(to coordinator: PersistentStoreCoordinator, sink: FileHandle? = nil) throws(CommandFailure) -> SQLDebugLog? {
        guard let level = try effectiveLevel() else { return nil }
        let sink = if let sink { sink } else { try openSink(notOverwriting: [coordinator.store.path]) }
        // The coordinator is held weakly: the log hangs off its events, and a strong hold would keep it, and its
        // connections, alive past the command's end. SQLite removes the -wal and -shm only when the last
        // connection closes, so a kept connection left them behind after every logged command.
        let logFile = self.logFile
        let log = SQLDebugLog(level: level, uri: { [weak coordinator] id in coordinator?.uri(for: id) ?? "" }, write: { line in
            do {
                try sink.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                // A log on stderr that cannot be written is dropped, as every stderr line is; a --sql-log file
                // that cannot is the command's error when it ends (a save in progress is not cut short for it).
                guard let logFile else { return }
                Self.recordFailure("\(logFile): cannot write the SQL log (\(Self.reason(error)))")
            }
        })
        _ = log.attach(to: coordinator.events)
        return log
    }

    /// The first failure to write a `--sql-log` file, if any: `Faultline.main` reports it as the command's error.
    static var logFailure: String? { failure.withLock { $0 } }

    private static let failure = Mutex<String?>(nil)

    private static func recordFailure(_ message: String) {
        failure.withLock { if $0 == nil { $0 = message } }
    }

    /// The system's words for a failed write: the POSIX error under Foundation's, where there is one.
    private static func reason(_ error: any Error) -> String {
        var error = error as NSError
        if error.domain != NSPOSIXErrorDomain, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            error = underlying
        }
        return error.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32(truncatingIfNeeded: error.code))) : error.localizedDescription
    }

    /// The folder of `url` with its links resolved (as written when it cannot be resolved).
    private static func resolvedFolder(of url: URL) -> String {
        url.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
    }
}
