import Foundation

/// The default chat store, `fixtures/chat.sqlite` in the package: what every command given no store opens.
enum DefaultFixture {
    /// The package's folder, found from this file's path at build time (commands run from the package).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var path: String { packageRoot.appendingPathComponent("fixtures/chat.sqlite").path }

    /// The default store's path, generating it first (announced on stderr) when it does not exist yet.
    static func ensure() throws(CommandFailure) -> String {
        // Generation lands with the fixture generator; until then a missing store is an error.
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("\(path): the default chat store does not exist yet")
        }
        return path
    }
}
