import CNcursesw
import Glibc
import Synchronization
import TerminalText

/// The real terminal, driven through ncurses: takes over the screen, draws `Frame`s, reads keys, and gives the
/// terminal back as it found it, also after Ctrl-C, a `kill` or a crash. One screen at a time.
///
/// ```swift
/// let screen = try TerminalScreen.open()
/// defer { screen.close() }
/// screen.draw(frame)
/// if let key = screen.readKey(timeoutMilliseconds: 100) { … }
/// if let signal = screen.pendingSignal { screen.close(); exit(128 + signal) }
/// ```
public final class TerminalScreen {
    /// How much colour this terminal gets.
    public let colorMode: ColorMode
    let palette: RolePalette
    /// The ncurses screen; nil once closed.
    private var screen: OpaquePointer?
    /// Where the terminal's size is asked after a SIGWINCH.
    let outputDescriptor: Int32
    /// The screen's main window, which frames are drawn into; nil once closed.
    var window: UnsafeMutablePointer<WINDOW>?
    /// The lines the last `draw` left on screen, one per row, and the width they were drawn at; nil when the next
    /// draw must draw every line (after opening, a resize or `invalidate()`).
    var drawnLines: [StyledLine]?
    var drawnWidth = 0
    /// A sequence after an Esc that the last `readKey` stopped reading before its end (it reads a bounded number
    /// of characters per call); the next one goes on with it.
    var unfinishedEscape: EscapeSequence?

    /// Takes over the terminal on standard input and output: full screen, keys one at a time without echo, no
    /// cursor, clicks and the wheel as keys, colours as far as the terminal and `NO_COLOR` allow.
    ///
    /// ```swift
    /// let screen = try TerminalScreen.open()   // throws .notATerminal when piped
    /// ```
    public static func open() throws(TerminalError) -> TerminalScreen {
        let type = try terminalType(
            streamsAreTerminals: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1,
            term: getenv("TERM").map { String(cString: $0) })
        return try open(type: type, output: faultline_stdout(), input: faultline_stdin())
    }

    /// Throws what `open()` would throw for the terminal, without setting up a screen: the browser asks before it
    /// opens anything else, so that a terminal it cannot use is reported with every file left alone.
    public static func checkUsable() throws(TerminalError) {
        let type = try terminalType(
            streamsAreTerminals: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1,
            term: getenv("TERM").map { String(cString: $0) })
        // Reads the terminal's description only (no output); `newterm` later sets up its own.
        var status: Int32 = 0
        guard setupterm(type, STDOUT_FILENO, &status) == OK, canAddressCursor() else { throw .unknownTerm(type) }
    }

    /// The terminal type to open, when standard input and output are terminals and `TERM` names one.
    static func terminalType(streamsAreTerminals: Bool, term: String?) throws(TerminalError) -> String {
        guard streamsAreTerminals else { throw .notATerminal }
        guard let term, !term.isEmpty else { throw .noTerm }
        return term
    }

    /// Sets up a screen of terminal type `type` that writes to `output` and reads keys from `input`; `open()` uses
    /// standard output and input, tests a file and a pipe.
    static func open(
        type: String, output: UnsafeMutablePointer<FILE>, input: UnsafeMutablePointer<FILE>
    ) throws(TerminalError) -> TerminalScreen {
        // Before newterm, for every screen (a test's on a pipe too): ncurses reads the character locale as it starts.
        TerminalLocale.ensureUTF8()
        // Before newterm: ncurses installs its own handlers only where it finds the default action.
        TerminalSignals.install()
        // Not initscr, which ends the process when the terminal type is unusable.
        guard let screen = newterm(type, output, input) else {
            TerminalSignals.restore()
            throw .unknownTerm(type)
        }
        // newterm also accepts types that cannot move the cursor (`dumb`), where a full screen is unreadable.
        guard canAddressCursor() else {
            endwin()
            delscreen(screen)
            TerminalSignals.restore()
            throw .unknownTerm(type)
        }
        return TerminalScreen(screen: screen, outputDescriptor: fileno(output))
    }

    /// Whether the terminal type just set up has cursor addressing (terminfo's `cup`).
    private static func canAddressCursor() -> Bool {
        guard let cursorAddress = tigetstr("cup") else { return false }
        // tigetstr answers -1 for a name that is not a string capability.
        return Int(bitPattern: cursorAddress) != -1
    }

    private init(screen: OpaquePointer, outputDescriptor: Int32) {
        self.screen = screen
        self.outputDescriptor = outputDescriptor
        let window = faultline_stdscr()
        self.window = window
        keypad(window, true)
        noecho()
        // Not raw(): under cbreak Ctrl-C still raises SIGINT, which the main loop sees as `pendingSignal`.
        cbreak()
        curs_set(0)
        set_escdelay(25)
        // Every button event, though only presses become keys: ncurses answers an event left out of the mask by
        // waiting, without a timeout, for more input, which would stall the main loop after each release.
        mousemask(faultline_all_mouse_events(), nil)
        // Report presses at once instead of waiting to see whether they become clicks.
        mouseinterval(0)
        // Clicks at any column, also where ncurses would ask for X10 reports (which stop at column 223).
        SGRMouseMode.turnOnIfNeeded(output: outputDescriptor)
        colorMode = Self.startColors()
        palette = RolePalette(mode: colorMode)
        TerminalSignals.screenIsOpen.store(true, ordering: .releasing)
    }

    deinit { close() }

    /// Columns and rows of the terminal now; (0, 0) once closed.
    public var size: (width: Int, height: Int) {
        guard let window else { return (0, 0) }
        return (Int(getmaxx(window)), Int(getmaxy(window)))
    }

    /// The signal that asks the browser to end (SIGINT from Ctrl-C, SIGTERM, SIGHUP), once one has arrived. Check
    /// it after each `readKey`; exit with 128 plus it after `close()`.
    public var pendingSignal: Int32? {
        let signal = TerminalSignals.pendingEnding.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// The pending ending signal, taken: a second one must arrive to show again (the browser asks before a Ctrl-C
    /// loses unsaved changes, and goes on if told to stay).
    public func takePendingSignal() -> Int32? {
        let signal = TerminalSignals.pendingEnding.exchange(0, ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// Makes the next `draw` draw every line and repaint the whole terminal, for when something else wrote to it.
    public func invalidate() {
        drawnLines = nil
        if let window { clearok(window, true) }
    }

    /// Gives the terminal back: normal mode, the cursor, the previous signal handlers. Safe to call again.
    public func close() {
        guard let screen else { return }
        TerminalSignals.screenIsOpen.store(false, ordering: .releasing)
        endwin()
        SGRMouseMode.turnOff()
        delscreen(screen)
        self.screen = nil
        window = nil
        drawnLines = nil
        TerminalSignals.restore()
    }
}
