import CNcursesw
import Glibc
import Foundation
@testable import Terminal
import TerminalText
import Testing

/// Opening, drawing frames and reading keys on a real ncurses screen that writes to /dev/null (see
/// `HeadlessScreen`). Serialized: ncurses has one current screen per process.
@Suite(.serialized) struct TerminalScreenTests {
    private func frame(_ lines: [StyledLine], width: Int, height: Int) -> Frame {
        Frame(width: width, height: height, lines: lines)
    }

    @Test func anUnknownTerminalTypeIsReportedByName() throws {
        let output = try #require(fopen("/dev/null", "w"))
        let input = try #require(fopen("/dev/null", "r"))
        defer {
            fclose(output)
            fclose(input)
        }
        #expect(throws: TerminalError.unknownTerm("no-such-terminal")) {
            try TerminalScreen.open(type: "no-such-terminal", output: output, input: input)
        }
        #expect(throws: TerminalError.unknownTerm("dumb")) {
            try TerminalScreen.open(type: "dumb", output: output, input: input)
        }
    }

    @Test func wideCharactersLandInTheColumnsDisplayWidthCounts() throws {
        let headless = try HeadlessScreen(width: 20, height: 3)
        let lines = [StyledLine("日本語|🎿|abc|"), StyledLine("123456|12|abc|")]
        headless.screen.draw(frame(lines, width: 20, height: 3))
        #expect(headless.row(0) == "日本語|🎿|abc|      ")
        for column in [6, 9, 13] {
            #expect(headless.cell(row: 0, column: column).text == "|", "column \(column)")
            #expect(headless.cell(row: 1, column: column).text == "|", "column \(column)")
        }
        #expect(headless.cell(row: 0, column: 7).text == "🎿")
        #expect(headless.row(2) == String(repeating: " ", count: 20))
    }

    /// What reaches the terminal holds no zero-width joiner (a terminal that joins 👨‍👩‍👧 into two columns would put
    /// the rest of the line four columns left of where ncurses thinks it is), and the parts land where counted.
    @Test func aZeroWidthJoinerIsNeverSentToTheTerminal() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("screen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let headless = try HeadlessScreen(width: 20, height: 2, type: "tmux-256color", outputPath: path)
        headless.screen.draw(frame([StyledLine("👨\u{200D}👩\u{200D}👧|x|")], width: 20, height: 2))
        #expect(headless.cell(row: 0, column: 6).text == "|")
        #expect(headless.cell(row: 0, column: 8).text == "|")
        headless.screen.close()
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!written.isEmpty)
        #expect(written.firstRange(of: Data([0xE2, 0x80, 0x8D])) == nil, "a joiner was written to the terminal")
    }

    /// Started with the ending signals blocked (a parent's mask is inherited), the screen unblocks them: a Ctrl-C
    /// or a kill would otherwise stay pending, unseen, and the browser could not be ended.
    @Test func openingUnblocksTheSignalsItHandles() throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&blocked, signal) }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let headless = try HeadlessScreen(width: 10, height: 2)
        var now = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &now)
        for signal in [SIGINT, SIGTERM, SIGHUP] { #expect(sigismember(&now, signal) == 0, "signal \(signal) still blocked") }
        headless.screen.close()
    }

    @Test func longLinesAreCutAndTheBottomRightCellIsFilled() throws {
        let headless = try HeadlessScreen(width: 10, height: 3)
        let lines = [StyledLine("0123456789ABCDEF"), StyledLine("123456789日"), StyledLine("abcdefgh日本")]
        headless.screen.draw(frame(lines, width: 10, height: 3))
        #expect(headless.row(0) == "0123456789")
        // A wide character that would straddle the edge leaves the last column blank rather than wrapping.
        #expect(headless.row(1) == "123456789 ")
        #expect(headless.row(2) == "abcdefgh日")
        #expect(headless.cell(row: 2, column: 9).text == "日")
    }

    @Test func onlyLinesThatChangedAreRedrawn() throws {
        let headless = try HeadlessScreen(width: 10, height: 2)
        let window = try #require(headless.screen.window)
        headless.screen.draw(frame([StyledLine("one"), StyledLine("two")], width: 10, height: 2))
        // Scribble behind the screen's back: a line the next frame does not change keeps the scribble.
        mvwaddstr(window, 0, 0, "XX")
        mvwaddstr(window, 1, 0, "XX")
        headless.screen.draw(frame([StyledLine("one"), StyledLine("TWO")], width: 10, height: 2))
        #expect(headless.row(0) == "XXe       ")
        #expect(headless.row(1) == "TWO       ")

        headless.screen.invalidate()
        headless.screen.draw(frame([StyledLine("one"), StyledLine("TWO")], width: 10, height: 2))
        #expect(headless.row(0) == "one       ")
    }

    @Test func aResizeRedrawsEveryLine() throws {
        let headless = try HeadlessScreen(width: 10, height: 2)
        let window = try #require(headless.screen.window)
        headless.screen.draw(frame([StyledLine("one"), StyledLine("two")], width: 10, height: 2))
        mvwaddstr(window, 0, 0, "XX")
        headless.resize(width: 12, height: 3)
        #expect(headless.screen.readKey(timeoutMilliseconds: 0) == .resize(width: 12, height: 3))
        #expect(headless.screen.size == (12, 3))
        headless.screen.draw(frame([StyledLine("one"), StyledLine("two")], width: 12, height: 3))
        #expect(headless.row(0) == "one         ")
        #expect(headless.row(2) == String(repeating: " ", count: 12))
    }

    @Test func eachCellIsDrawnWithItsStylesAppearance() throws {
        let headless = try HeadlessScreen(width: 12, height: 1)
        var line = StyledLine("sel", Style(.selection))
        line.append("bold", Style(.accent, bold: true))
        line.append("u", Style(.plain, underline: true))
        headless.screen.draw(frame([line], width: 12, height: 1))
        let palette = headless.screen.palette
        let styledColumns = [
            (0, Style(.selection)), (3, Style(.accent, bold: true)), (7, Style(.plain, underline: true)),
        ]
        for (column, style) in styledColumns {
            let cell = headless.cell(row: 0, column: column)
            let expected = palette.appearance(of: style)
            #expect(cell.attributes == expected.attributes, "column \(column)")
            #expect(cell.pair == expected.pair, "column \(column)")
        }
    }

    @Test func keysClicksAndTheWheelAreReadFromTheInput() throws {
        let headless = try HeadlessScreen(width: 40, height: 10)
        let screen = headless.screen
        #expect(screen.readKey(timeoutMilliseconds: 10) == nil)
        let typed: [(String, Key)] = [
            ("\u{1B}OA", .up), ("\u{1B}[6~", .pageDown), ("\u{1B}OQ", .function(2)), ("\u{1B}[Z", .backTab),
            ("\u{1B}[3~", .delete), ("j", .character("j")), ("日", .character("日")), ("\u{12}", .control("r")),
            ("\r", .enter), ("\t", .tab), ("\u{7F}", .backspace),
            // SGR mouse reports (xterm-256color's kmous), 1-based: a press, a wheel turn up and one down.
            ("\u{1B}[<0;6;3M", .click(row: 2, column: 5)), ("\u{1B}[<64;1;1M", .wheelUp(row: 0, column: 0)),
            ("\u{1B}[<65;2;4M", .wheelDown(row: 3, column: 1)),
        ]
        for (bytes, key) in typed {
            headless.type(bytes)
            #expect(screen.readKey(timeoutMilliseconds: 500) == key, "\(bytes.debugDescription)")
        }
        // A release or another button's press is no key, does not hold up the read, and leaves nothing behind.
        for report in ["\u{1B}[<0;6;3m", "\u{1B}[<1;6;3M", "\u{1B}[<1;6;3m"] {
            headless.type(report)
            #expect(screen.readKey(timeoutMilliseconds: 50) == nil, "\(report.debugDescription)")
        }
        headless.type("k")
        #expect(screen.readKey(timeoutMilliseconds: 500) == .character("k"))
        // A lone escape is told from the start of a sequence by a short wait.
        headless.type("\u{1B}")
        #expect(screen.readKey(timeoutMilliseconds: 500) == .escape)
    }

    @Test func anEndingSignalIsPendingUntilTheNextOpen() throws {
        let headless = try HeadlessScreen(width: 10, height: 2)
        #expect(headless.screen.pendingSignal == nil)
        // Test threads may block signals (libdispatch's do); unblocked, a raised signal is handled before raise
        // returns.
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &terminate, &previousMask)
        raise(SIGTERM)
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        #expect(headless.screen.pendingSignal == SIGTERM)
        headless.screen.close()

        let reopened = try HeadlessScreen(width: 10, height: 2)
        #expect(reopened.screen.pendingSignal == nil)
    }

    @Test func closingPutsBackTheSignalHandlersThatWereThere() throws {
        func handlers() -> [UnsafeRawPointer?] {
            [SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGSEGV, SIGABRT].map { signal in
                var action = sigaction()
                sigaction(signal, nil, &action)
                return unsafeBitCast(action.__sigaction_handler.sa_handler, to: UnsafeRawPointer?.self)
            }
        }
        let before = handlers()
        let headless = try HeadlessScreen(width: 10, height: 2)
        #expect(handlers() != before)
        headless.screen.close()
        #expect(handlers() == before)
    }

    @Test func closingTwiceIsHarmlessAndEndsDrawingAndReading() throws {
        let headless = try HeadlessScreen(width: 10, height: 2)
        headless.screen.close()
        headless.screen.close()
        #expect(headless.screen.size == (0, 0))
        #expect(headless.screen.readKey(timeoutMilliseconds: 0) == nil)
        headless.screen.draw(frame([StyledLine("after")], width: 10, height: 2))
    }
}
