/// Why the terminal screen could not open. The description is one sentence meant to follow `error: `, and each
/// points to `faultline trace`, which needs no terminal.
///
/// ```swift
/// do { screen = try TerminalScreen.open() }
/// catch { print("error: \(error)") }   // error: not a terminal: faultline browse needs one (…)
/// ```
public enum TerminalError: Error, Equatable, CustomStringConvertible {
    /// Standard input or standard output is not a terminal (a pipe, a file, a test runner).
    case notATerminal
    /// `TERM` is unset or empty, so there is no way to know what the terminal understands.
    case noTerm
    /// ncurses could not set up the terminal type `TERM` names: it is not in the terminfo database, or it cannot
    /// move the cursor.
    case unknownTerm(String)

    public var description: String {
        switch self {
        case .notATerminal:
            "not a terminal: faultline browse needs one (try faultline trace for a text screen)"
        case .noTerm:
            "TERM is not set: faultline browse needs to know the terminal type (set TERM, e.g. TERM=xterm-256color, "
                + "or try faultline trace for a text screen)"
        case .unknownTerm(let name):
            "cannot drive terminal type '\(name)' from TERM: it is unknown to terminfo or cannot move the cursor "
                + "(set TERM to a known type such as xterm-256color, or try faultline trace for a text screen)"
        }
    }
}
