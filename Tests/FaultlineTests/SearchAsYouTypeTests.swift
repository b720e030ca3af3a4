import Foundation
import Testing

/// `/` in the real browser: the list narrows as the query is typed, without Enter, and Esc puts it back.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct SearchAsYouTypeTests {
    private let folder = TemporaryFolder()

    /// How many chats the status line says match, once it shows the search field holding `query`.
    private func matches(_ session: TmuxSession, _ query: String) throws -> Int {
        let screen = try session.waitFor("/ \(query)▏ · ")
        let line = try #require(screen.split(separator: "\n").first { $0.contains("/ \(query)▏ · ") })
        // "… · 12 chats match" or "… · 1 chat matches"
        let count = line.components(separatedBy: "▏ · ").last?.split(separator: " ").first.map(String.init) ?? ""
        return try #require(Int(count.replacingOccurrences(of: ",", with: "")), "\(line)")
    }

    @Test func theListNarrowsAsTheQueryIsTyped() throws {
        let store = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: BrowserEndToEndTests.fixture, toPath: store)
        let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(store)'", width: 120, height: 40)
        _ = try session.waitFor("? help")
        try session.type("/")
        var counts: [Int] = []
        var query = ""
        for character in "ana" {
            query.append(character)
            try session.type(String(character))
            counts.append(try matches(session, query))
        }
        #expect(counts[0] < 60, "one letter already narrows the 60 chats: \(counts)")
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 > $1 }, "each letter narrows it further: \(counts)")
        #expect(counts.last ?? 0 > 0, "some chat has 'ana' in its title or a member's name: \(counts)")
        // Esc gives the whole list back.
        try session.send(keys: "Escape")
        _ = try session.waitUntilGone("/ ana▏")
        try session.type("q")
        #expect(try session.waitForExit() == 0)
    }
}
