import Foundation

/// A fresh folder under the system's temporary directory, removed with all it holds when the value is released.
///
///     let folder = try TemporaryDirectory()
///     let coordinator = try PersistentStoreCoordinator(path: folder.path("store.sqlite"), model: model)
final class TemporaryDirectory {
    let url: URL

    /// A new folder inside `parent` (the system's temporary directory unless given).
    init(under parent: URL = FileManager.default.temporaryDirectory) throws {
        url = parent.appendingPathComponent("graphstore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The folder's own path.
    var path: String { url.path }

    /// The path of `name` inside the folder.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Gives every folder inside its permissions back first, so that what a test locked can be removed.
    deinit {
        func unlock(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else { return }
            _ = chmod(path, 0o755)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                unlock(path + "/" + name)
            }
        }
        unlock(url.path)
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a new temporary folder, removed afterwards.
func withTemporaryDirectory<Value>(_ body: (TemporaryDirectory) throws -> Value) throws -> Value {
    let folder = try TemporaryDirectory()
    return try withExtendedLifetime(folder) { try body(folder) }
}

/// Runs a program and returns its exit status and combined output.
func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let inputPipe = Pipe()
    process.standardInput = inputPipe
    try process.run()
    if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inputPipe.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The bytes of every file in `paths` (nil for a missing one), to prove a refusal changed nothing.
func snapshot(_ paths: [String]) -> [String: Data?] {
    Dictionary(uniqueKeysWithValues: paths.map { ($0, FileManager.default.contents(atPath: $0)) })
}
