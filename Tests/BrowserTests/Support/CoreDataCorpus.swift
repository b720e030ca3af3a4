import Foundation
import Testing

/// The real Core Data stores of the folder `FAULTLINE_COREDATA_CORPUS` names (`<name>/store.sqlite`, with
/// `<name>/model.xcdatamodel` where the model exists as a file). Tests that use them are skipped, saying why, when
/// it names no folder. They work on copies (`copy(_:into:)`): the corpus is never opened in place.
enum CoreDataCorpus {
    static let variable = "FAULTLINE_COREDATA_CORPUS"
    /// The stores that come with the model file that made them.
    static let withModelFiles = ["authors-books", "cars-people"]
    /// Every store of the corpus.
    static let stores = ["authors-books", "books-pages", "cars-people"]

    static let folder: URL? = {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else { return nil }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }()

    static var isPresent: Bool { folder != nil }

    static var absentReason: Comment {
        let setting = ProcessInfo.processInfo.environment[variable] ?? ""
        let problem = setting.isEmpty ? "\(variable) is not set" : "\(variable) names '\(setting)', which is not a folder"
        return Comment(rawValue: "\(problem): set it to the Core Data corpus folder to run this")
    }

    struct Absent: Error {}

    /// The model file of a store of the corpus.
    static func modelFile(_ name: String) throws -> String {
        guard let folder else { throw Absent() }
        return folder.appendingPathComponent("\(name)/model.xcdatamodel").path
    }

    /// Copies `name`'s store, with the `-wal` and `-shm` beside it if any, into `folder`; returns the copy's path.
    static func copy(_ name: String, into folder: TemporaryFolder) throws -> String {
        guard let corpus = self.folder else { throw Absent() }
        let copy = folder.path("\(name).sqlite")
        for suffix in ["", "-wal", "-shm"] {
            let source = corpus.appendingPathComponent("\(name)/store.sqlite\(suffix)").path
            if FileManager.default.fileExists(atPath: source) { try FileManager.default.copyItem(atPath: source, toPath: copy + suffix) }
        }
        return copy
    }

    /// The files of `folder` with their bytes, to compare before and after a command.
    static func snapshot(_ folder: TemporaryFolder) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.url.path) {
            files[name] = try Data(contentsOf: folder.url.appendingPathComponent(name))
        }
        return files
    }
}
