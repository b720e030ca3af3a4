import Foundation
import Synchronization
import Testing

/// Runs the `faultline` binary built beside the test bundle.
enum FaultlineBinary {
    static var url: URL {
        // The test bundle and the package's executables are built into the same folder.
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if folder.lastPathComponent == "MacOS" {
            folder = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return folder.appendingPathComponent("faultline")
    }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        try run(executable: url, arguments, environment: environment)
    }

    /// Runs any program to its end, its standard input empty, both outputs read.
    static func run(executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting so a large output cannot block the child.
        let errData = Data.readAsync(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData.wait(), as: UTF8.self))
    }

    /// `/usr/bin/env ARGUMENTS`: a program found on the path.
    static func runTool(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        try run(executable: URL(fileURLWithPath: "/usr/bin/env"), arguments, environment: environment)
    }

    /// Rows from the sqlite3 shell, columns joined by `|`; a failing query is recorded as an issue.
    static func sqliteRows(_ path: String, _ query: String) throws -> [String] {
        let result = try runTool(["sqlite3", "-bail", "-noheader", path, query])
        #expect(result.status == 0, "sqlite3 \(query): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// A small chat store made once per test run (`fixture generate` into a fresh temporary folder), for suites
    /// that only read it or copy it; a failure to make it stops the run, naming the error.
    static func smallStore(_ name: String, users: Int, chats: Int, messages: Int) -> String {
        let folder = ProcessFolders.make(name)
        let path = folder.appendingPathComponent("chat.sqlite").path
        let made = try? run(["fixture", "generate", "--out", path, "--users", "\(users)", "--chats", "\(chats)", "--messages", "\(messages)"])
        precondition(made?.status == 0, "fixture generate failed: \(made?.stderr ?? "")")
        return path
    }

    /// One query through the sqlite3 shell, its output trimmed, as a user would look at a store.
    static func sqlite3(_ path: String, _ query: String) throws -> String {
        try runTool(["sqlite3", path, query]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension Data {
    /// Reads a handle to its end on another thread.
    final class Pending: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private var data = Data()
        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                semaphore.signal()
            }
        }
        func wait() -> Data {
            semaphore.wait()
            return data
        }
    }

    static func readAsync(_ handle: FileHandle) -> Pending { Pending(handle) }
}

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-cli-\(UUID().uuidString)")
    init() { try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The package's folder, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let testModels = packageRoot.appendingPathComponent("Tests/GraphStoreTests/Models")

/// Folders made once for the whole test process (the stores every test of a suite copies), removed when the process
/// exits, so that a run leaves nothing in the temporary directory.
enum ProcessFolders {
    private static let made = Mutex<[URL]>([])
    private static let removalAtExit: Void = {
        atexit { ProcessFolders.removeAll() }
    }()

    /// A new, empty folder named `prefix-<UUID>` in the temporary directory.
    static func make(_ prefix: String) -> URL {
        _ = removalAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        made.withLock { $0.append(url) }
        return url
    }

    private static func removeAll() {
        for url in made.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
    }
}
