import CNcursesw
import TerminalText

/// What each `Role` looks like in a colour mode: the one table of colours and attributes. Each role gets its own
/// ncurses colour pair (numbered from 1 in `Role.allCases` order); monochrome uses pair 0 and attributes only.
///
/// ```swift
/// let palette = RolePalette(mode: .monochrome)
/// palette.appearance(of: Style(.selection)).attributes == faultline_a_reverse() | faultline_a_bold()   // true
/// ```
struct RolePalette {
    /// A role's colours (xterm colour numbers; -1 is the terminal's own) and attributes.
    struct Look: Equatable {
        var foreground: Int16 = -1
        var background: Int16 = -1
        var attributes: attr_t = faultline_a_normal()
    }

    let mode: ColorMode

    /// How `role` looks in this mode. Titles (pane titles, chat titles, senders) keep the terminal's own foreground
    /// and add bold in every mode: a fixed white would vanish on a light background, and the terminal's foreground
    /// is readable on its own background by definition. The other roles use fixed colours, chosen to read on dark
    /// and light backgrounds alike.
    func look(of role: Role) -> Look {
        let bold = faultline_a_bold()
        let dim = faultline_a_dim()
        let reverse = faultline_a_reverse()
        let underline = faultline_a_underline()
        return switch (mode, role) {
        case (.monochrome, .plain), (.monochrome, .success): Look()
        case (.monochrome, .title), (.monochrome, .accent), (.monochrome, .warning): Look(attributes: bold)
        case (.monochrome, .muted): Look(attributes: dim)
        case (.monochrome, .danger): Look(attributes: bold | underline)
        case (.monochrome, .selection): Look(attributes: reverse | bold)
        case (.monochrome, .status): Look(attributes: reverse)

        case (.eight, .plain): Look()
        case (.eight, .title): Look(attributes: bold)
        case (.eight, .muted): Look(attributes: dim)
        case (.eight, .accent): Look(foreground: Int16(COLOR_CYAN))
        case (.eight, .warning): Look(foreground: Int16(COLOR_YELLOW))
        case (.eight, .danger): Look(foreground: Int16(COLOR_RED))
        case (.eight, .success): Look(foreground: Int16(COLOR_GREEN))
        case (.eight, .selection): Look(foreground: Int16(COLOR_BLACK), background: Int16(COLOR_CYAN))
        case (.eight, .status): Look(foreground: Int16(COLOR_BLACK), background: Int16(COLOR_WHITE))

        case (.palette256, .plain): Look()
        case (.palette256, .title): Look(attributes: bold)
        case (.palette256, .muted): Look(foreground: 245)
        case (.palette256, .accent): Look(foreground: 38)
        case (.palette256, .warning): Look(foreground: 214)
        case (.palette256, .danger): Look(foreground: 203)
        case (.palette256, .success): Look(foreground: 114)
        case (.palette256, .selection): Look(foreground: 231, background: 25)
        case (.palette256, .status): Look(foreground: 252, background: 237)
        }
    }

    /// The colour pair `role` is drawn with: its own in colour modes, 0 (the terminal's colours) in monochrome.
    func pair(of role: Role) -> Int16 {
        guard mode != .monochrome, let index = Role.allCases.firstIndex(of: role) else { return 0 }
        return Int16(index + 1)
    }

    /// Attributes and colour pair for a style: its role's look plus the style's own bold and underline.
    func appearance(of style: Style) -> (attributes: attr_t, pair: Int16) {
        var attributes = look(of: style.role).attributes
        if style.bold { attributes |= faultline_a_bold() }
        if style.underline { attributes |= faultline_a_underline() }
        return (attributes, pair(of: style.role))
    }
}
