import ArgumentParser
import Foundation
import GraphStore

/// `--sql-debug N` and `--sql-log FILE`, shared by every command that opens a store; `FAULTLINE_SQL_DEBUG=N` in the
/// environment does the same as `--sql-debug N` (the option wins when both are given).
struct SQLDebugOptions: ParsableArguments {
    @Option(name: .customLong("sql-debug"), help: ArgumentHelp(
        "Log SQL as Core Data's SQLDebug does: 1 statements and times, 2 bound values, 3 fault annotations, 4 query plans.",
        valueName: "level"))
    var level: Int?

    @Option(name: .customLong("sql-log"), help: ArgumentHelp("Write the SQL log to this file instead of stderr.", valueName: "file"))
    var logFile: String?

    func validate() throws {
        if let level, !(1...4).contains(level) {
            throw ValidationError("--sql-debug must be a level from 1 to 4, not \(level)")
        }
    }

    /// The level in force: the option, else the environment variable; nil when logging is off.
    func effectiveLevel(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) -> Int? {
        if let level { return level }
        switch SQLDebugLog.level(fromEnvironment: environment) {
        case .success(let level): return level
        case .failure(let error): throw CommandFailure(error.description)
        }
    }

    /// Checks, without touching the disk, that the `--sql-log` file could be written when a level is in force: not
    /// empty, not a folder, in a folder that exists and may be written, and none of `stores` (nor their -wal or
    /// -shm), which emptying it for the log would destroy. Commands call it before opening a store, and open the
    /// log only once the store has opened, so a bad store leaves no log file behind.
    func checkLogFile(notOverwriting stores: [String] = []) throws(CommandFailure) {
        guard try effectiveLevel() != nil, let logFile else { return }
        guard !logFile.isEmpty else { throw CommandFailure("--sql-log is empty: give the file to write the SQL log to") }
        var info = stat()
        if stat(logFile, &info) == 0 {
            if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) {
                throw CommandFailure("\(logFile): cannot write the SQL log here (it is a folder)")
            }
            for store in stores {
                for path in [store, store + "-wal", store + "-shm"] {
                    var storeInfo = stat()
                    if stat(path, &storeInfo) == 0, storeInfo.st_dev == info.st_dev, storeInfo.st_ino == info.st_ino {
                        throw CommandFailure("\(logFile): cannot write the SQL log here (it is the store \(path); the log would destroy it)")
                    }
                }
            }
            guard access(logFile, W_OK) == 0 else {
                throw CommandFailure("\(logFile): cannot write the SQL log here (\(String(cString: strerror(errno))))")
            }
            return
        }
        let folder = URL(fileURLWithPath: logFile).deletingLastPathComponent().path
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, folderInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (the folder \(folder) does not exist)")
        }
        guard access(folder, W_OK) == 0 else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (the folder \(folder) is not writable: \(String(cString: strerror(errno))))")
        }
    }

    /// Where the log goes: the `--sql-log` file (created or emptied now, after `checkLogFile`), else stderr.
    func openSink(notOverwriting stores: [String] = []) throws(CommandFailure) -> FileHandle {
        guard let logFile else { return FileHandle.standardError }
        try checkLogFile(notOverwriting: stores)
        // Opened in place, never made anew and renamed over (as `FileManager.createFile` does): a device such as
        // `/dev/null` or a pipe stays what it is, and a regular file keeps its owner and mode.
        let descriptor = open(logFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("\(logFile): cannot write the SQL log here (\(String(cString: strerror(errno))))")
        }
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
        let log = SQLDebugLog(level: level, uri: { [weak coordinator] id in coordinator?.uri(for: id) ?? "" }, write: { line in
            try? sink.write(contentsOf: Data((line + "\n").utf8))  // a full disk or closed stderr drops lines, never crashes
        })
        _ = log.attach(to: coordinator.events)
        return log
    }
}
