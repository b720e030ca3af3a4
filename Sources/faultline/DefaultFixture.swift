import ChatFixture
import Foundation

/// The default chat store, `fixtures/chat.sqlite` in the package: what every command given no store opens. It is
/// generated on first use (1,000 users, 300 chats, 60,000 messages; a few seconds), announced on stderr.
enum DefaultFixture {
    /// The package's folder, found from this file's path at build time (commands run from the package).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `fixtures/chat.sqlite`, or the file `FAULTLINE_DEFAULT_STORE` names (tests use it to stay out of the package).
    static var path: String {
        if let path = ProcessInfo.processInfo.environment["FAULTLINE_DEFAULT_STORE"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent("fixtures/chat.sqlite").path
    }

    /// The default store's path, generating it first when it does not exist yet.
    static func ensure() throws(CommandFailure) -> String {
        let path = path
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let options = FixtureOptions.defaults
        Output.writeError(
            "faultline: creating the default chat store at \(path) (\(options.users) users, \(options.chats) chats, \(options.messages) messages)\n")
        _ = try FixtureWriting.generate(options, to: path, replacing: false)
        return path
    }
}
