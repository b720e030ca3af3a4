import CNcursesw
import Glibc
import Synchronization
import TerminalText

extension TerminalScreen {
    /// The next key, click, wheel turn or resize, waiting at most `timeoutMilliseconds` (a negative timeout waits
    /// for ever). Nil when the time ran out, a signal cut the wait short (see `pendingSignal`), or the key has no
    /// name in `Key`. After a `.resize` the next `draw` draws every line.
    ///
    /// An Esc followed at once by more characters starts a sequence ncurses did not recognise: it is read to its
    /// end and decoded by `EscapeSequence` (SGR mouse reports become clicks and wheel turns; Alt with a key and
    /// sequences Faultline has no name for give nil), so neither the Esc nor the characters act as keys. An Esc
    /// alone is `.escape`.
    ///
    /// ```swift
    /// switch screen.readKey(timeoutMilliseconds: 250) {
    /// case .character("q"): quit()
    /// case .resize(let width, let height): layout(width, height)
    /// default: break
    /// }
    /// ```
    public func readKey(timeoutMilliseconds: Int) -> Key? {
        guard let window else { return nil }
        adoptPendingResize()
        if let sequence = unfinishedEscape {
            unfinishedEscape = nil
            return readEscapeSequence(continuing: sequence, in: window)
        }
        wtimeout(window, Int32(clamping: timeoutMilliseconds))
        var code: wint_t = 0
        var status = wget_wch(window, &code)
        if status == ERR, adoptPendingResize() {
            // A SIGWINCH cut the wait short, and resizeterm has queued KEY_RESIZE.
            wtimeout(window, 0)
            status = wget_wch(window, &code)
        }
        switch status {
        case OK where code == Self.escapeCode:
            return readEscapeSequence(continuing: EscapeSequence(), in: window)
        case OK:
            return Key(ncursesCode: code, isKeyCode: false)
        case KEY_CODE_YES where code == KEY_RESIZE:
            drawnLines = nil
            let (width, height) = size
            return .resize(width: width, height: height)
        case KEY_CODE_YES where code == KEY_MOUSE:
            var event = MEVENT()
            guard getmouse(&event) == OK else { return nil }
            return Key(mouseButtons: event.bstate, row: Int(event.y), column: Int(event.x))
        case KEY_CODE_YES:
            return Key(ncursesCode: code, isKeyCode: true)
        default:
            return nil
        }
    }

    private static let escapeCode: wint_t = 0x1B
    /// At most this many characters of a sequence are read per `readKey`, so that a flood of input cannot hold the
    /// caller; a longer sequence is read on by the next calls.
    static let sequenceCharactersPerRead = 64
    /// How long a sequence may pause between two of its characters (as long as ncurses waits after an Esc).
    static let sequencePauseMilliseconds: Int32 = 25

    /// Reads the characters after an Esc into `sequence` until it is whole, and returns its key (nil for one
    /// Faultline does not bind or drops). A character that cannot belong to the sequence ends it and is put back,
    /// to be read on its own.
    private func readEscapeSequence(continuing sequence: EscapeSequence, in window: UnsafeMutablePointer<WINDOW>)
        -> Key?
    {
        var sequence = sequence
        // Right after the Esc, ncurses has already waited its escape delay: what follows at once is in its buffer.
        wtimeout(window, sequence.isAtStart ? 0 : Self.sequencePauseMilliseconds)
        for _ in 0..<Self.sequenceCharactersPerRead {
            var code: wint_t = 0
            let status = wget_wch(window, &code)
            let input: EscapeSequence.Input = switch status {
            case OK: .character(code)
            case KEY_CODE_YES where code == KEY_RESIZE || code == KEY_MOUSE: .event
            case KEY_CODE_YES: .keyCode
            default: .nothing
            }
            switch sequence.read(input) {
            case .needsMore:
                wtimeout(window, Self.sequencePauseMilliseconds)
            case .finished(let key):
                return key
            case .finishedBefore(let key):
                if status == OK {
                    unget_wch(wchar_t(bitPattern: code))
                } else if status == KEY_CODE_YES {
                    ungetch(Int32(bitPattern: code))
                }
                return key
            }
        }
        unfinishedEscape = sequence
        return nil
    }

    /// Acts on a SIGWINCH, if one came: tells ncurses the terminal's new size, which queues KEY_RESIZE when it
    /// changed. (Our handler replaces ncurses's own, which would otherwise do this.) Returns whether one came.
    @discardableResult
    private func adoptPendingResize() -> Bool {
        guard TerminalSignals.resizePending.exchange(false, ordering: .relaxed) else { return false }
        var windowSize = winsize()
        if ioctl(outputDescriptor, UInt(TIOCGWINSZ), &windowSize) == 0, windowSize.ws_row > 0, windowSize.ws_col > 0 {
            resizeterm(Int32(windowSize.ws_row), Int32(windowSize.ws_col))
        }
        return true
    }
}
