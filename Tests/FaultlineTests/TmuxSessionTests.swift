import Foundation
import Testing

/// The tmux harness itself, on shell commands simple enough to predict.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct TmuxSessionTests {
    @Test func aWideCharacterLineShowsOnTheScreen() throws {
        let session = try TmuxSession(command: "printf '日本語 🎿 wide|\\n'", width: 40, height: 5)
        #expect(try session.waitForExit() == 0)
        let lines = try session.capture().split(separator: "\n")
        #expect(lines.first == "日本語 🎿 wide|")
    }

    @Test func typedTextKeysAndResizesReachTheCommand() throws {
        let session = try TmuxSession(command: "read line; stty size; echo \"got $line\"", width: 40, height: 5)
        try session.resize(width: 50, height: 8)
        try session.type("ski 🎿")
        try session.send(keys: "Enter")
        let screen = try session.waitFor("got ski 🎿")
        #expect(screen.contains("8 50"))
        #expect(try session.waitForExit() == 0)
    }

    @Test func aCommandThatLeavesTheTerminalRawIsSeen() throws {
        let raw = try TmuxSession(command: "stty raw -echo", width: 60, height: 6)
        #expect(try raw.waitForExit() == 0)
        #expect(try raw.lineDisciplineAfterExit() == (canonical: false, echo: false))
        let tidy = try TmuxSession(command: "true", width: 60, height: 6)
        #expect(try tidy.lineDisciplineAfterExit() == (canonical: true, echo: true))
        #expect(try tidy.modes() == .restored)
        // A program that switches to the alternate screen and leaves it on is seen too.
        let left = try TmuxSession(command: "printf '\\033[?1049h'", width: 60, height: 6)
        #expect(try left.waitForExit() == 0)
        #expect(try left.modes().alternateScreen)
    }

    @Test func waitingForTextThatNeverComesTimesOutWithTheScreen() throws {
        let session = try TmuxSession(command: "echo nothing to see", width: 40, height: 5)
        #expect(try session.waitForExit() == 0)
        do {
            try session.waitFor("never shown", timeout: .milliseconds(200))
            Issue.record("waitFor returned for text that is not on screen")
        } catch TmuxSession.Failure.timedOut(_, let screen) {
            #expect(screen.contains("nothing to see"))
        }
    }
}
