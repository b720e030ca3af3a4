import TerminalText

/// How much colour the screen uses: the 256-colour palette, the 8 basic colours, or attributes only.
///
/// ```swift
/// ColorMode(noColor: nil, colors: 256, colorPairs: 65536)   // .palette256
/// ColorMode(noColor: "1", colors: 256, colorPairs: 65536)   // .monochrome: the user asked for no colour
/// ```
public enum ColorMode: Hashable, Sendable {
    /// Bold, dim, reverse and underline only: `NO_COLOR` is set, or the terminal has no colours.
    case monochrome
    /// The 8 basic colours.
    case eight
    /// The xterm 256-colour palette.
    case palette256

    /// The mode for a terminal with `colors` colours and `colorPairs` pairs (both 0 when it has no colours), given
    /// the value of `NO_COLOR`. Any non-empty `NO_COLOR` means monochrome (no-color.org); a terminal with too few
    /// pairs for one per role is treated as monochrome too.
    init(noColor: String?, colors: Int, colorPairs: Int) {
        if let noColor, !noColor.isEmpty {
            self = .monochrome
        } else if colors < 8 || colorPairs <= Role.allCases.count {
            self = .monochrome
        } else {
            self = colors >= 256 ? .palette256 : .eight
        }
    }
}
