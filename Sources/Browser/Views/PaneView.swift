import TerminalText

/// Pieces every pane uses: its title row, rows cut and padded to the pane's width, and side-by-side composition.
enum PaneView {
    /// The title row: `─ Chats (300) ──────── 12/300 ─`, in the accent colour when the pane has the focus. The
    /// position, when given, sits at the right end of the rule and is kept whole; the title is cut first.
    static func title(_ text: String, width: Int, focused: Bool, position: String? = nil) -> StyledLine {
        let ruleStyle = Style(focused ? .accent : .muted)
        var tail = position.map { " \($0) ─" } ?? ""
        // The position is dropped only when it would leave the title no room at all.
        if DisplayWidth.of(tail) + 6 > width { tail = "" }
        // At least one column of rule between the title and the position, so the two do not run together.
        let room = max(0, width - 1 - DisplayWidth.of(tail) - (tail.isEmpty ? 0 : 1))
        let label = room < 3 ? DisplayWidth.truncate(" \(text)", width: room) : " \(DisplayWidth.truncate(text, width: room - 2)) "
        let rule = Repeated.text("─", count: max(0, width - 1 - DisplayWidth.of(label) - DisplayWidth.of(tail)))
        var spans = [Span("─", ruleStyle), Span(label, Style(focused ? .accent : .title, bold: true)), Span(rule, ruleStyle)]
        if !tail.isEmpty { spans.append(Span(tail, ruleStyle)) }
        return fitted(spans, width: width)
    }

    /// Where the selection is in a list, for a pane's title: `12/300` (1-based, numbers grouped).
    static func position(_ index: Int, of count: Int) -> String {
        "\(ActivityFormat.count(index))/\(ActivityFormat.count(count))"
    }

    /// `text` fitted to exactly `width` columns in one style.
    static func line(_ text: String, width: Int, _ style: Style = .plain) -> StyledLine {
        StyledLine(DisplayWidth.fit(text, width: width), style)
    }

    /// Spans fitted to exactly `width` columns: later spans are cut first, then padding fills the rest.
    static func fitted(_ spans: [Span], width: Int, fill: Style = .plain) -> StyledLine {
        var result: [Span] = []
        var used = 0
        for span in spans where used < width && !span.text.isEmpty {
            let piece = DisplayWidth.truncated(span.text, width: width - used)
            guard !piece.text.isEmpty else { break }
            result.append(Span(piece.text, span.style))
            used += piece.columns
        }
        if used < width { result.append(Span(Repeated.text(" ", count: width - used), fill)) }
        return StyledLine(result)
    }

    /// `lines` as exactly `height` lines of `width` (blank lines added, extra ones dropped).
    static func block(_ lines: [StyledLine], width: Int, height: Int) -> [StyledLine] {
        var result = Array(lines.prefix(height))
        while result.count < height { result.append(StyledLine(Repeated.text(" ", count: width))) }
        return result
    }

    /// Puts `blocks` side by side, each of its width, with a `│` between them.
    static func columns(_ blocks: [[StyledLine]], height: Int) -> [StyledLine] {
        (0..<height).map { row in
            var spans: [Span] = []
            for (index, block) in blocks.enumerated() {
                if index > 0 { spans.append(Span("│", Style(.muted))) }
                spans += block[row].spans
            }
            return StyledLine(spans)
        }
    }
}
