import Glibc
@testable import Terminal
import Testing

/// Why a screen cannot open, and how the command line words it. (Opening on an unusable terminal type needs
/// ncurses, so that test is with the other `TerminalScreenTests`.)
@Suite struct TerminalScreenOpeningTests {
    @Test(.enabled(if: isatty(STDIN_FILENO) == 0, "standard input is a terminal here"))
    func openingWithoutATerminalFails() {
        #expect(throws: TerminalError.notATerminal) { try TerminalScreen.open() }
    }

    @Test func theTerminalTypeNeedsTerminalsAndTERM() throws {
        #expect(throws: TerminalError.notATerminal) {
            try TerminalScreen.terminalType(streamsAreTerminals: false, term: "xterm-256color")
        }
        #expect(throws: TerminalError.noTerm) { try TerminalScreen.terminalType(streamsAreTerminals: true, term: nil) }
        #expect(throws: TerminalError.noTerm) { try TerminalScreen.terminalType(streamsAreTerminals: true, term: "") }
        #expect(try TerminalScreen.terminalType(streamsAreTerminals: true, term: "screen") == "screen")
    }

    @Test func eachErrorIsOneSentencePointingToTrace() {
        let errors: [TerminalError] = [.notATerminal, .noTerm, .unknownTerm("vt52x")]
        for error in errors {
            #expect(error.description.contains("faultline trace"), "\(error)")
            #expect(!error.description.contains("\n"), "\(error)")
        }
        #expect(TerminalError.unknownTerm("vt52x").description.contains("'vt52x'"))
    }
}
