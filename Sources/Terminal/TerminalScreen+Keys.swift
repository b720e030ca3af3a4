import CNcursesw
import Glibc

extension TerminalScreen {
    /// The next key, click, wheel turn or resize, waiting at most `timeoutMilliseconds` (a negative timeout waits
    /// for ever). Nil when the time ran out, a signal cut the wait short (see `pendingSignal`), or the key has no
    /// name in `Key`. After a `.resize` the next `draw` draws every line.
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
        wtimeout(window, Int32(clamping: timeoutMilliseconds))
        var code: wint_t = 0
        var status = wget_wch(window, &code)
        if status == ERR, adoptPendingResize() {
            // A SIGWINCH cut the wait short, and resizeterm has queued KEY_RESIZE.
            wtimeout(window, 0)
            status = wget_wch(window, &code)
        }
        switch status {
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
