import Foundation
import ChatFixture
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
        let busyTimeout = try BusyTimeout.seconds()
        do {
            return try StoredModel.read(storeAt: path, busyTimeout: busyTimeout)
        } catch {
            throw CommandFailure(error.modelFileWouldHelp ? "\(error.description); \(suggestion)" : error.description)
        }
    }
}

/// A model file named on the command line: `faultline model PATH` or `--model PATH`.
enum ModelFileArgument {
    /// An empty path would read as the current folder (`URL(fileURLWithPath: "")` is `.`), and the error would be
    /// about a folder nobody named.
    static let emptyPath = "the model path is empty: give a .xcdatamodeld or .xcdatamodel folder or a 'contents' file"

    /// Refuses `--model ''`; commands call it before anything is opened or made (the default store included).
    static func checkOption(_ path: String?, exitCode: Int32 = 1) throws(CommandFailure) {
        if path?.isEmpty == true { throw CommandFailure("--model: \(emptyPath)", exitCode: exitCode) }
    }

    /// The model file at `path`, for `--model`: a store given there is named as one (its XML error would say only
    /// that it is not XML).
    static func loadOption(_ path: String, exitCode: Int32 = 1) throws(CommandFailure) -> ObjectModel {
        try checkOption(path, exitCode: exitCode)
        if StoreModelSource.isSQLiteFile(path) {
            throw CommandFailure("--model: \(path): is an SQLite store, not a model file: give the .xcdatamodeld or .xcdatamodel "
                + "it was made with, or leave out --model to read the model inside the store", exitCode: exitCode)
        }
        do {
            return try load(path)
        } catch {
            throw CommandFailure("--model: \(error.message)", exitCode: exitCode)
        }
    }

    /// The model file at `path`. A file that is neither a model file nor SQLite is named as such, rather than
    /// as XML gone wrong: a damaged store or any other file given in the model's place is the likelier mistake.
    static func load(_ path: String) throws(CommandFailure) -> ObjectModel {
        do {
            return try XcodeModelLoader.load(contentsOf: URL(fileURLWithPath: path))
        } catch {
            var isDirectory: ObjCBool = false
            if error.problems.first?.hasPrefix("is not XML") == true, (path as NSString).lastPathComponent != "contents",
               FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw CommandFailure("\(path): is neither a model file nor an SQLite store (it is not XML, and does not start as an "
                    + "SQLite file does): give a .xcdatamodeld or .xcdatamodel folder, its 'contents' file, or a store")
            }
            throw CommandFailure(error.description)
        }
    }
}

/// The model a command opens a store with: the one given with `--model`, or the one inside the store; and whether
/// it is the chat model (the chat browser and the chat commands) or another (any Core Data store).
struct ChosenModel {
    let model: ObjectModel
    let isChatModel: Bool
    /// Where it came from, for messages: `--model FILE` or `its model cache`.
    let source: String

    static func choose(store: String, modelFile: String?, suggestion: String = "give its model file with --model") throws(CommandFailure) -> ChosenModel {
        let model: ObjectModel
        let source: String
        if let modelFile {
            model = try ModelFileArgument.loadOption(modelFile)
            source = "--model \(modelFile)"
        } else {
            model = try StoreModelSource.read(storeAt: store, suggestion: suggestion).model
            source = "its model cache"
        }
        let chat: ObjectModel
        do {
            chat = try ChatModel.make()
        } catch {
            throw CommandFailure(error)
        }
        return ChosenModel(model: model, isChatModel: model == chat, source: source)
    }

    /// The warning printed before writing to a store that is not a chat store, which `--write` allows.
    static func writeWarning(store: String) -> String {
        "warning: \(store) is not a chat store and --write lets this command change it: changes follow the model's "
            + "delete rules as GraphStore reads them and are not recorded in Core Data's persistent history; work on a copy "
            + "if the store matters"
    }
}
