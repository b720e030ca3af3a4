import Foundation
import Glibc
@testable import Terminal
import TerminalText
import Testing

/// Escape sequences through real ncurses: what it decodes itself, what the screen reads after an Esc, and the SGR
/// mouse mode written to the terminal. Part of `TerminalScreenTests`, which runs one test at a time (one ncurses
/// screen per process).
extension TerminalScreenTests {
    /// Reads until a key comes or `attempts` reads have given nil; returns the nils' count and the key.
    private func nextKey(_ screen: TerminalScreen, attempts: Int = 20) -> (nils: Int, key: Key?) {
        for read in 0..<attempts {
            if let key = screen.readKey(timeoutMilliseconds: 200) { return (read, key) }
        }
        return (attempts, nil)
    }

    @Test func sgrClicksReachAnyColumnWhereNcursesWouldReadX10() throws {
        // tmux's description has ncurses ask for X10 reports (kmous \E[M).
        let headless = try HeadlessScreen(width: 300, height: 60, type: "tmux-256color")
        let screen = headless.screen
        let reports: [(String, Key)] = [
            ("\u{1B}[<0;230;5M", .click(row: 4, column: 229)), ("\u{1B}[<0;300;60M", .click(row: 59, column: 299)),
            ("\u{1B}[<64;224;1M", .wheelUp(row: 0, column: 223)), ("\u{1B}[<65;250;40M", .wheelDown(row: 39, column: 249)),
            // X10 reports still go through ncurses: button 1 at column 10, row 3, each plus 32.
            ("\u{1B}[M *#", .click(row: 2, column: 9)),
        ]
        for (bytes, key) in reports {
            headless.type(bytes)
            #expect(nextKey(screen) == (0, key), "\(bytes.debugDescription)")
        }
        // A release is no key and leaves nothing behind.
        headless.type("\u{1B}[<0;230;5mk")
        #expect(nextKey(screen) == (1, .character("k")))
    }

    @Test func unknownSequencesAndAltKeysAreNeverTakenForKeys() throws {
        for type in ["tmux-256color", "xterm-256color"] {
            let headless = try HeadlessScreen(width: 80, height: 24, type: type)
            let screen = headless.screen
            // Each followed by a `k`: every read before it is nil, then the `k` comes, so no character of the
            // sequence was left behind as a key.
            for sequence in ["\u{1B}[1;5u", "\u{1B}Ox", "\u{1B}[I", "\u{1B}[O", "\u{1B}[200~", "\u{1B}[201~",
                             "\u{1B}[?1;2c", "\u{1B}[12d", "\u{1B}[99;5q", "\u{1B}q", "\u{1B}d", "\u{1B}\r",
                             "\u{1B}[>0;276;0c", "\u{1B}[1;5P"] {
                headless.type(sequence + "k")
                var keys: [Key] = []
                for _ in 0..<20 {
                    guard let key = screen.readKey(timeoutMilliseconds: 200) else { continue }
                    keys.append(key)
                    if key == .character("k") { break }
                }
                // ncurses knows some of these from the terminal's description (Ctrl-F1 as F25 for tmux): a key
                // with no binding is fine, Esc or a character of the sequence is not.
                let taken = keys.dropLast().filter { if case .function = $0 { false } else { true } }
                #expect(taken.isEmpty && keys.last == .character("k"), "\(type) \(sequence.debugDescription): \(keys)")
            }
        }
    }

    @Test func aLoneEscIsEscAndTwoEscsAreTwo() throws {
        let headless = try HeadlessScreen(width: 80, height: 24, type: "tmux-256color")
        let screen = headless.screen
        headless.type("\u{1B}")
        #expect(nextKey(screen) == (0, .escape))
        headless.type("\u{1B}\u{1B}")
        #expect(nextKey(screen) == (0, .escape))
        #expect(nextKey(screen) == (0, .escape))
        #expect(screen.readKey(timeoutMilliseconds: 50) == nil)
    }

    @Test func whatCutsASequenceShortIsReadOnItsOwn() throws {
        let headless = try HeadlessScreen(width: 80, height: 24, type: "tmux-256color")
        let screen = headless.screen
        // A carriage return inside a sequence ends it, as no key; the Enter is read next.
        headless.type("\u{1B}[1\r")
        #expect(nextKey(screen) == (1, .enter))
        // Esc, then a mouse report ncurses decoded: the Esc is the Esc key and the click still comes.
        headless.type("\u{1B}\u{1B}[M *#")
        #expect(nextKey(screen) == (0, .escape))
        #expect(nextKey(screen) == (0, .click(row: 2, column: 9)))
        // Alt with a key ncurses decoded (Esc, then Up) is dropped whole.
        headless.type("\u{1B}\u{1B}OAj")
        #expect(nextKey(screen) == (1, .character("j")))
    }

    @Test func anOverlongSequenceIsReadOverSeveralCallsAndDropped() throws {
        let headless = try HeadlessScreen(width: 80, height: 24, type: "tmux-256color")
        let screen = headless.screen
        let length = TerminalScreen.sequenceCharactersPerRead * 5
        headless.type("\u{1B}[" + String(repeating: "1", count: length) + "~j")
        let (nils, key) = nextKey(screen)
        #expect(key == .character("j"))
        // Each call read a bounded part of it.
        #expect(nils >= 5)
    }

    @Test func theSgrMouseModeIsOnWhileOpenAndOffAfterWhereTheScreenTurnedItOn() throws {
        let on = "\u{1B}[?1006h"
        let off = "\u{1B}[?1006l"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("screen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var headless: HeadlessScreen? = try HeadlessScreen(width: 80, height: 24, type: "tmux-256color", outputPath: path)
        var written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains(on) && !written.contains(off))
        headless?.screen.close()
        written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasSuffix(off), "turned off after everything ncurses wrote: \(written.suffix(40).debugDescription)")
        headless = nil

        // Where ncurses asks for SGR reports itself, the screen adds nothing of its own.
        headless = try HeadlessScreen(width: 80, height: 24, type: "xterm-256color", outputPath: path)
        headless?.screen.close()
        written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!written.contains(on) && !written.contains(off))
        #expect(written.contains("\u{1B}[?1006;1000h"))
        headless = nil
    }
}
