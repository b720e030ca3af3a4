import CNcursesw
import Glibc
import TerminalText

extension TerminalScreen {
    /// Starts colour when the terminal has it, picks the mode (see `ColorMode`) and installs one colour pair per
    /// role from `RolePalette`.
    static func startColors() -> ColorMode {
        var colors = 0
        var colorPairs = 0
        var hasDefaultColors = false
        if has_colors() {
            start_color()
            // Lets -1 mean the terminal's own foreground and background, so the browser keeps its theme.
            hasDefaultColors = use_default_colors() == OK
            colors = Int(faultline_colors())
            colorPairs = Int(faultline_color_pairs())
        }
        let mode = ColorMode(
            noColor: getenv("NO_COLOR").map { String(cString: $0) }, colors: colors, colorPairs: colorPairs)
        guard mode != .monochrome else { return mode }
        let palette = RolePalette(mode: mode)
        for role in Role.allCases {
            let look = palette.look(of: role)
            let foreground = look.foreground < 0 && !hasDefaultColors ? Int16(COLOR_WHITE) : look.foreground
            let background = look.background < 0 && !hasDefaultColors ? Int16(COLOR_BLACK) : look.background
            init_pair(palette.pair(of: role), foreground, background)
        }
        return mode
    }
}
