import TerminalText

/// Makes the activity views' lines exactly as wide as asked.
///
/// ```swift
/// ActivityLine.fit([Span("SQL ", Style(.muted)), Span("4 stmts")], width: 6).text   // "SQL 4…"
/// ```
enum ActivityLine {
    /// `spans` cut at `width` display columns (the cut span ends with `…`) or padded to it with spaces in `fill`.
    static func fit(_ spans: [Span], width: Int, fill: Style = .plain) -> StyledLine {
        var line = StyledLine()
        var used = 0
        for span in spans where !span.text.isEmpty {
            let room = width - used
            guard room > 0 else { break }
            let (text, columns) = DisplayWidth.truncated(span.text, width: room)
            line.append(text, span.style)
            used += columns
            if text != span.text { break }
        }
        if used < width { line.append(Repeated.text(" ", count: width - used), fill) }
        return line
    }

    /// A line of `width` spaces.
    static func blank(width: Int, fill: Style = .plain) -> StyledLine {
        fit([], width: width, fill: fill)
    }
}
