import CNcursesw
import Synchronization

/// Mouse reports in SGR form (xterm's mode 1006: `ESC [ < b ; x ; y M`), which carry any column and row. ncurses
/// asks for them only where the terminal's description says so (`kmous` of `\E[<`, as xterm's has); elsewhere
/// (tmux, screen) it asks for the X10 form, whose coordinates are one byte each and lose every click past column
/// 223. There the screen asks for SGR reports itself and `EscapeSequence` decodes them.
///
/// ```swift
/// SGRMouseMode.turnOnIfNeeded(output: fileno(output))   // after mousemask
/// endwin(); SGRMouseMode.turnOff()                       // on every way out
/// ```
enum SGRMouseMode {
    /// The terminal the mode was turned on for, so that it is turned off there again, once; -1 while off. Read by
    /// the crash and exit hooks too.
    private static let turnedOnFor = Atomic<Int32>(-1)

    /// Turns SGR reports on for the screen just set up, when ncurses reads the mouse but in X10 form.
    static func turnOnIfNeeded(output: Int32) {
        guard output >= 0, has_mouse(), !terminalDescriptionAsksForSGR() else { return }
        faultline_sgr_mouse(output, 1)
        turnedOnFor.store(output, ordering: .releasing)
    }

    /// Turns the mode off if `turnOnIfNeeded` turned it on. Call after `endwin`, so that it follows everything
    /// ncurses wrote. Only a write(2): safe in the crash hook.
    static func turnOff() {
        let output = turnedOnFor.exchange(-1, ordering: .acquiringAndReleasing)
        guard output >= 0 else { return }
        faultline_sgr_mouse(output, 0)
    }

    /// Whether the terminal's description has ncurses read SGR reports itself.
    private static func terminalDescriptionAsksForSGR() -> Bool {
        // tigetstr answers -1 for a name that is not a string capability, nil for one the terminal lacks.
        guard let sequence = tigetstr("kmous"), Int(bitPattern: sequence) != -1 else { return false }
        return String(cString: sequence) == "\u{1B}[<"
    }
}
