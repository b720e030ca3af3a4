import Foundation
import Glibc
import Testing

/// What the terminal sends after an Esc, seen by the real `faultline browse` in tmux: SGR mouse reports at columns
/// X10 reports cannot carry, and sequences the browser has no key for, which must do nothing at all.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct BrowserEscapeInputTests {
    private let folder = TemporaryFolder()

    private func browse(width: Int, height: Int, environment: [String: String] = [:]) throws -> TmuxSession {
        let path = folder.path("chat-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: BrowserEndToEndTests.fixture, toPath: path)
        return try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(path)'", width: width, height: height,
                               environment: environment)
    }

    @Test func aClickPastColumn223ActsWhereItLands() throws {
        let session = try browse(width: 250, height: 40)
        try session.waitFor("Chats (60)")
        // tmux's terminal description has ncurses ask for X10 reports; the browser asks for SGR ones on top.
        #expect(try session.format("#{mouse_sgr_flag}") == "1")
        let hints = try #require(BrowserEndToEndTests.lines(try session.capture()).last)

        // A press and release of button 1 at column 230, row 30 (1-based): inside the SQL log, bottom right.
        try session.type("\u{1B}[<0;230;30M")
        try session.type("\u{1B}[<0;230;30m")
        let screen = try session.waitFor("last: click 29 229")
        // The log has the focus now: its hints replace the chat list's.
        #expect(BrowserEndToEndTests.lines(screen).last != hints, "\(screen)")
        // The wheel there too.
        try session.type("\u{1B}[<65;240;35M")
        try session.waitFor("last: scroll-down 34 239")

        try session.send(keys: "q")
        #expect(try session.waitForExit() == 0)
        #expect(try session.format("#{mouse_sgr_flag}") == "0")
        #expect(try session.modes() == .restored)
    }

    @Test(arguments: [SIGTERM, SIGSEGV])
    func theSgrModeIsTurnedOffWhenTheBrowserIsKilledOrCrashes(signal: Int32) throws {
        // Swift's backtracer would wait for a key on a terminal before the crash goes on.
        let session = try browse(width: 90, height: 25, environment: ["SWIFT_BACKTRACE": "enable=no"])
        try session.waitFor("Chats (60)")
        #expect(try session.format("#{mouse_sgr_flag}") == "1")
        // The signal to the browser, the shell's only child.
        let child = try #require(BrowserEndToEndTests.children(of: try session.format("#{pane_pid}")).first)
        #expect(kill(child, signal) == 0)
        let status = try session.waitForExit(timeout: .seconds(30))
        #expect(status == 128 + signal)
        #expect(try session.format("#{mouse_sgr_flag}") == "0")
        #expect(try session.modes() == .restored)
    }

    @Test func sequencesWithNoKeyDoNothing() throws {
        let session = try browse(width: 120, height: 40)
        try session.waitFor("Chats (60)")
        try session.send(keys: "Enter")
        let opened = BrowserEndToEndTests.lines(try session.waitFor("last: open"))
        try #require(opened.count == 40)

        // Ctrl-F1, focus in and out, paste markers, a keypad key, Alt-p, Alt-x, Alt-q, and sequences ending in
        // letters the browser binds (d delete, q quit, u undo, c counts). Taken as Esc and characters, they would go
        // back to the list, toggle prefetch, clear the cache, quit…
        for sequence in ["\u{1B}[1;5P", "\u{1B}[I", "\u{1B}[O", "\u{1B}[200~", "\u{1B}[201~", "\u{1B}Ox", "\u{1B}p",
                         "\u{1B}x", "\u{1B}q", "\u{1B}[12d", "\u{1B}[99;5q", "\u{1B}[1;5u", "\u{1B}[?1;2c"] {
            try session.type(sequence)
        }
        // Then a key that moves down the messages, so the screen shows that everything before it was read.
        try session.send(keys: "j")
        let screen = try session.waitFor("last: down")
        let lines = BrowserEndToEndTests.lines(screen)
        try #require(lines.count == 40, "still running:\n\(screen)")
        // Still in the messages (an Esc would have given the list the focus, and the hints with it), the status
        // line as it was (prefetch, batch, nothing unsaved), no dialog.
        #expect(lines[39] == opened[39], "hints: \(lines[39])")
        #expect(lines[38] == opened[38], "status: \(lines[38])")
        #expect(!screen.contains("Delete"), "\(screen)")

        // An Esc on its own still goes back.
        try session.send(keys: "Escape")
        let back = try session.waitFor("last: back")
        #expect(BrowserEndToEndTests.lines(back)[39] != opened[39])
        try session.send(keys: "q")
        #expect(try session.waitForExit() == 0)
    }
}
