import CNcursesw
import Synchronization

/// Mouse reports in SGR form (xterm's mode 1006: `ESC [ < b ; x ; y M`), which carry any column and row. ncurses
/// asks for them only where the terminal's description says so (`kmous` of `\E[<`, as xterm's has); elsewhere
/// (tmux, screen) it asks for the X10 form, whose coordinates are one byte each and lose every click past column
/// 223. There the screen asks for SGR reports itself and `EscapeSequence` decodes them.
///
/// ```swift
/// SGRMouseMode.turnOnIfNeeded()   // after mousemask
/// SGRMouseMode.turnOff()          // before endwin, on every way out
/// ```
enum SGRMouseMode {
    /// Whether the screen turned the mode on, so that it is turned off again, once. Read by the crash and exit
    /// hooks too.
    private static let turnedOn = Atomic<Bool>(false)

    /// Turns SGR reports on for the screen just set up, when ncurses reads the mouse but in X10 form. Goes out
    /// through ncurses's output, with the next frame.
    static func turnOnIfNeeded() {
        guard has_mouse(), !terminalDescriptionAsksForSGR() else { return }
        faultline_sgr_mouse(1)
        turnedOn.store(true, ordering: .releasing)
    }

    /// Turns the mode off if `turnOnIfNeeded` turned it on; call before `endwin`, which sends it out.
    static func turnOff() {
        guard turnedOn.exchange(false, ordering: .acquiringAndReleasing) else { return }
        faultline_sgr_mouse(0)
    }

    /// Whether the terminal's description has ncurses read SGR reports itself.
    private static func terminalDescriptionAsksForSGR() -> Bool {
        // tigetstr answers -1 for a name that is not a string capability, nil for one the terminal lacks.
        guard let sequence = tigetstr("kmous"), Int(bitPattern: sequence) != -1 else { return false }
        return String(cString: sequence) == "\u{1B}[<"
    }
}
