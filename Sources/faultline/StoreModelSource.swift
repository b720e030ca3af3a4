import Foundation
import GraphStore

/// The model of a store given on the command line without `--model`: the one it keeps inside.
enum StoreModelSource {
    /// Whether `path` is a regular file that starts as every SQLite database does (a model file or folder does not).
    static func isSQLiteFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Data("SQLite format 3\u{0}".utf8)
    }

    /// The store's own model, or a `CommandFailure` whose one line says what is wrong and, where a model file
    /// would get past it, `suggestion`.
    static func read(storeAt path: String, suggestion: String) throws(CommandFailure) -> StoredModel {
        do {
            return try StoredModel.read(storeAt: path, busyTimeout: BusyTimeout.seconds)
        } catch {
            throw CommandFailure(error.modelFileWouldHelp ? "\(error.description); \(suggestion)" : error.description)
        }
    }
}
