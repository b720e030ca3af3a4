import Foundation
import Testing

/// Real Core Data models with the stores Apple's framework made from them: a folder of `<name>/model.xcdatamodel`
/// and `<name>/store.sqlite`, named by the environment variable `FAULTLINE_COREDATA_CORPUS`. The tests that read it
/// are skipped, saying which variable to set, when it names no folder.
///
///     @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
///     func browsesCarsAndPeople() throws {
///         let folder = TemporaryFolder()
///         let (store, model) = try CoreDataCorpus.copy("cars-people", into: folder)
enum CoreDataCorpus {
    static let variable = "FAULTLINE_COREDATA_CORPUS"

    /// The corpus's models that have a store beside them.
    static let names = ["authors-books", "cars-people"]

    /// The folder the variable names, when it is set and names a folder.
    static let folder: URL? = {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else { return nil }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }()

    static var isPresent: Bool { folder != nil }

    /// Why the corpus tests are skipped.
    static var absentReason: Comment {
        let setting = ProcessInfo.processInfo.environment[variable] ?? ""
        let problem = setting.isEmpty ? "\(variable) is not set" : "\(variable) names '\(setting)', which is not a folder"
        return Comment(rawValue: "\(problem): set it to the Core Data corpus folder (its <name>/model.xcdatamodel and <name>/store.sqlite) to run this")
    }

    /// The file at `relativePath` inside the corpus folder.
    static func file(_ relativePath: String) throws -> URL {
        guard let folder else { throw CorpusAbsent(reason: absentReason.rawValue) }
        return folder.appendingPathComponent(relativePath)
    }

    /// A copy of corpus store `name` (its `store.sqlite` with any `-wal` and `-shm`, and its model) in `folder`,
    /// writable there: tests never open the corpus's own files. Returns the store's and the model's paths.
    static func copy(_ name: String, into folder: TemporaryFolder) throws -> (store: String, model: String) {
        let source = try file(name)
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] where manager.fileExists(atPath: source.appendingPathComponent("store.sqlite" + suffix).path) {
            let target = folder.path("store.sqlite" + suffix)
            try manager.copyItem(atPath: source.appendingPathComponent("store.sqlite" + suffix).path, toPath: target)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target)
        }
        let model = folder.path("model.xcdatamodel")
        try manager.createDirectory(atPath: model, withIntermediateDirectories: true)
        try manager.copyItem(atPath: source.appendingPathComponent("model.xcdatamodel/contents").path, toPath: model + "/contents")
        return (folder.path("store.sqlite"), model)
    }

    struct CorpusAbsent: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}
