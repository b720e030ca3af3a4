import Foundation
import Testing

/// The progress line in the real `faultline browse` (tmux): deleting the busiest chat of a store of 60,000
/// messages and saving it with `w`, the status row shows `saving: … rows, … s` while the save runs. With
/// `--progress-after 0` it shows from the first statement; the screen is polled as fast as tmux answers, since the
/// line is up only while the save runs.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct ProgressEndToEndTests {
    /// The default fixture's size: its first chat in the list is the busiest (20,000 messages).
    static let fixture = FaultlineBinary.smallStore("progress-e2e", users: 1_000, chats: 300, messages: 60_000)

    @Test func aSaveOfTheBusiestChatShowsItsProgressLine() throws {
        let busiest = try FaultlineBinary.sqlite3(Self.fixture, "SELECT ZCHAT FROM ZMESSAGE GROUP BY ZCHAT ORDER BY COUNT(*) DESC LIMIT 1")
        let first = try FaultlineBinary.sqlite3(Self.fixture, "SELECT Z_PK FROM ZCHAT ORDER BY ZISPINNED DESC, ZLASTMESSAGEAT DESC, Z_PK LIMIT 1")
        try #require(busiest == first, "the busiest chat (\(busiest)) is not the list's first (\(first))")

        let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(Self.fixture)' --progress-after 0", width: 120, height: 40)
        try session.waitFor("Chats (300)")
        try session.send(keys: "d")
        var screen = try session.waitFor("y/Enter delete")
        #expect(screen.contains("Message"))
        try session.send(keys: "y")
        try session.waitFor("Chats (299)")
        try session.send(keys: "w")
        screen = try session.glimpse("saving: ", timeout: .seconds(60))
        let status = try #require(screen.split(separator: "\n").first { $0.contains("saving: ") }.map(String.init))
        #expect(status.wholeMatch(of: #/ saving: [0-9]{1,3}(,[0-9]{3})* rows?, [0-9]+\.[0-9] s · keys are ignored until it ends */#) != nil, "\(status)")
        screen = try session.waitFor("saved, deleted", timeout: .seconds(120))
        #expect(!screen.contains("saving: "))
        try session.send(keys: "q")
        #expect(try session.waitForExit() == 0)
        #expect(try FaultlineBinary.sqlite3(Self.fixture, "SELECT COUNT(*) FROM ZMESSAGE WHERE ZCHAT = \(busiest)") == "0")
    }
}
