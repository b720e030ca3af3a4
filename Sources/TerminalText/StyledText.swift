/// What a piece of text means on screen; the terminal layer picks the colours (256, 8 or none under `NO_COLOR`).
public enum Role: Hashable, Sendable, CaseIterable {
    case plain
    /// Titles of panes and of the chat list's rows.
    case title
    /// Secondary text: times, counts, hints.
    case muted
    /// What to notice: the focused pane's border, highlighted numbers.
    case accent
    /// Warnings (N+1, unused prefetch).
    case warning
    /// Destructive things: delete previews, Deny, errors.
    case danger
    /// Good news: cache hits, a save that succeeded.
    case success
    /// The selected row.
    case selection
    /// The status line and the hint bar.
    case status
}

/// A role plus emphasis.
public struct Style: Hashable, Sendable {
    public var role: Role
    public var bold: Bool
    public var underline: Bool

    public init(_ role: Role = .plain, bold: Bool = false, underline: Bool = false) {
        self.role = role
        self.bold = bold
        self.underline = underline
    }

    public static let plain = Style()
}

/// A run of text in one style.
public struct Span: Hashable, Sendable {
    public var text: String
    public var style: Style

    public init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }
}

/// One screen line: spans drawn left to right from column 0. Views make each line exactly as wide as they were
/// asked to (measured in display columns, see `DisplayWidth`); the terminal draws what it is given.
public struct StyledLine: Hashable, Sendable {
    public var spans: [Span]

    public init(_ spans: [Span] = []) {
        self.spans = spans
    }

    public init(_ text: String, _ style: Style = .plain) {
        self.spans = [Span(text, style)]
    }

    /// The characters without styles.
    public var text: String { spans.map(\.text).joined() }

    public mutating func append(_ text: String, _ style: Style = .plain) {
        spans.append(Span(text, style))
    }
}

/// A whole screen: exactly `height` lines, each `width` display columns wide.
public struct Frame: Hashable, Sendable {
    public var width: Int
    public var height: Int
    public var lines: [StyledLine]

    public init(width: Int, height: Int, lines: [StyledLine]) {
        self.width = width
        self.height = height
        self.lines = lines
    }

    /// The frame as plain text, one line per row, trailing spaces kept (what `capture-pane` would show, wide
    /// characters once each). Control characters are left out, as the terminal's cells leave them out: text from a
    /// store that holds an escape sequence shows as its printable rest, never as the sequence. So are zero-width
    /// joiners (`DisplayWidth.joinerRemoved(from:)`).
    public var text: String {
        // Written span by span into one string of the final size: a frame is handed over every time it is drawn.
        // (A control character lies within one span, so removing them span by span removes the same ones.)
        var size = max(0, lines.count - 1)
        for line in lines { for span in line.spans { size += span.text.utf8.count } }
        var result = ""
        result.reserveCapacity(size)
        for (index, line) in lines.enumerated() {
            if index > 0 { result.append("\n") }
            for span in line.spans { result.append(ControlCharacters.removed(from: DisplayWidth.joinerRemoved(from: span.text))) }
        }
        return result
    }
}
