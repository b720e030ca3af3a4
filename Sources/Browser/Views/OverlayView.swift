import TerminalText

/// Pop-ups drawn over the panes: help, the delete preview, the quit question and the search field.
enum OverlayView {
    /// The overlay's lines and where its box goes, or nil when there is none.
    static func box(_ state: BrowserState) -> (lines: [StyledLine], width: Int)? {
        switch state.overlay {
        case .none:
            return nil
        case .help:
            return helpBox(rows: KeyTable.helpRows(), top: state.helpTop, shown: helpRowsShown(state), frameWidth: state.width)
        case .deletePreview(let preview):
            return deletePreviewBox(preview, frameWidth: state.width)
        case .confirmQuit:
            return confirmQuitBox(pending: state.pending, frameWidth: state.width)
        case .sqlDetail(let detail):
            let width = min(state.width - 4, 104)
            return (SQLDetailView.box(detail, width: width - 4, height: max(3, state.height - 4)), width)
        case .search:
            // The field is in the status line, so the list it filters stays in view.
            return nil
        }
    }

    /// The help box: key rows from `top` (`shown` of them), then how to scroll or close it. Rows with an empty
    /// meaning are section headings.
    static func helpBox(rows: [(keys: String, help: String)], top requestedTop: Int, shown: Int, frameWidth: Int) -> (lines: [StyledLine], width: Int) {
        let keyWidth = min(24, (rows.map { DisplayWidth.of($0.keys) }.max() ?? 0) + 2)
        let widest = rows.map { keyWidth + DisplayWidth.of($0.help) }.max() ?? 0
        let width = min(frameWidth - 4, max(40, widest + 4))
        let top = max(0, min(requestedTop, rows.count - shown))
        var lines = [StyledLine([Span("Keys", Style(.title, bold: true))])]
        for row in rows[top..<min(rows.count, top + shown)] {
            if row.help.isEmpty {
                lines.append(StyledLine(row.keys, Style(.title, bold: true)))
            } else {
                lines.append(StyledLine([Span(DisplayWidth.fit(row.keys, width: keyWidth), Style(.accent)), Span(row.help)]))
            }
        }
        lines.append(StyledLine(""))
        if shown < rows.count {
            let range = "\(top + 1)–\(top + shown) of \(rows.count)"
            lines.append(StyledLine("↑↓ PgUp PgDn scroll (\(range)) · any other key closes", Style(.muted)))
        } else {
            lines.append(StyledLine("any key closes this help", Style(.muted)))
        }
        return (lines, width)
    }

    /// The delete preview: what goes by Cascade, what references are cleared, or the Deny rules that refuse it.
    static func deletePreviewBox(_ preview: DeletePreview, frameWidth: Int) -> (lines: [StyledLine], width: Int) {
        // The target names the object in full: wrapped, never cut.
        let width = min(frameWidth - 4, 64)
        var lines = DisplayWidth.wrap("Delete \(preview.target)?", width: max(10, width - 4))
            .map { StyledLine($0, Style(.danger, bold: true)) } + [StyledLine("")]
        if !preview.denied.isEmpty || !preview.invalid.isEmpty {
            if !preview.denied.isEmpty {
                lines.append(StyledLine("Refused by Deny rules:", Style(.danger, bold: true)))
                lines += preview.denied.map { StyledLine("  \($0)", Style(.danger)) }
            }
            if !preview.invalid.isEmpty {
                // Survivors the save's validation would refuse: each wrapped, since each names an object in full.
                lines.append(StyledLine("Refused: the save would fail validation", Style(.danger, bold: true)))
                for shortfall in preview.invalid {
                    lines += DisplayWidth.wrap(shortfall, width: max(10, width - 6)).map { StyledLine("  \($0)", Style(.danger)) }
                }
            }
            lines.append(StyledLine(""))
            lines.append(StyledLine("Nothing will change. Esc closes.", Style(.muted)))
            return (lines, width)
        }
        lines.append(StyledLine("goes (Cascade)", Style(.title, bold: true)))
        lines += preview.deleted.map { StyledLine([Span("  " + DisplayWidth.fit($0.0, width: 26)), Span(DisplayWidth.fitRight(ActivityFormat.count($0.1), width: 10), Style(.danger))]) }
        if !preview.nullified.isEmpty {
            lines.append(StyledLine("references cleared (Nullify)", Style(.title, bold: true)))
            lines += preview.nullified.map { StyledLine([Span("  " + DisplayWidth.fit($0.0, width: 26)), Span(DisplayWidth.fitRight(ActivityFormat.count($0.1), width: 10), Style(.warning))]) }
        }
        lines.append(StyledLine(""))
        lines.append(StyledLine([Span("y", Style(.accent, bold: true)), Span("/Enter delete · "), Span("n", Style(.accent, bold: true)), Span("/Esc cancel")]))
        return (lines, width)
    }

    /// The question on quitting with unsaved changes.
    static func confirmQuitBox(pending: String?, frameWidth: Int) -> (lines: [StyledLine], width: Int) {
        ([StyledLine("Unsaved changes", Style(.warning, bold: true)), StyledLine(pending ?? ""),
          StyledLine([Span("w", Style(.accent, bold: true)), Span(" save and quit · "),
                      Span("y", Style(.accent, bold: true)), Span(" discard and quit · "), Span("n", Style(.accent, bold: true)), Span(" stay")])],
         min(frameWidth - 4, 50))
    }

    /// How many key rows the help shows at once: all of them when the body has room, else what fits between its
    /// title and its footer inside the border.
    static func helpRowsShown(_ state: BrowserState) -> Int {
        let body = max(0, state.height - 2)
        return max(1, min(KeyTable.helpRows().count, body - 2 - 3))
    }

    /// Draws `box` centred over `lines` (a frame's body), with a border.
    static func overlay(_ box: (lines: [StyledLine], width: Int), on lines: inout [StyledLine], frameWidth: Int, bodyHeight: Int) {
        let inner = max(10, box.width - 4)
        let height = min(bodyHeight, box.lines.count + 2)
        let top = max(0, (bodyHeight - height) / 2)
        let left = max(0, (frameWidth - (inner + 4)) / 2)
        let border = Style(.accent)
        var boxLines = [StyledLine("╭" + Repeated.text("─", count: inner + 2) + "╮", border)]
        for line in box.lines.prefix(height - 2) {
            boxLines.append(StyledLine([Span("│ ", border)] + PaneView.fitted(line.spans, width: inner).spans + [Span(" │", border)]))
        }
        boxLines.append(StyledLine("╰" + Repeated.text("─", count: inner + 2) + "╯", border))
        for (offset, boxLine) in boxLines.enumerated() where top + offset < lines.count {
            lines[top + offset] = splice(boxLine, into: lines[top + offset], at: left, width: frameWidth)
        }
    }

    /// `line` with columns `at ..< at + width(piece)` replaced by `piece` (wide characters cut at the edges become
    /// spaces, so the line keeps its width).
    static func splice(_ piece: StyledLine, into line: StyledLine, at column: Int, width: Int) -> StyledLine {
        let pieceWidth = DisplayWidth.of(piece.text)
        var left: [Span] = []
        var right: [Span] = []
        var position = 0
        for span in line.spans {
            for character in span.text {
                let columns = DisplayWidth.of(String(character))
                let end = position + columns
                if end <= column {
                    left.append(Span(String(character), span.style))
                } else if position >= column + pieceWidth {
                    right.append(Span(String(character), span.style))
                } else if position < column {
                    left.append(Span(Repeated.text(" ", count: column - position), span.style))
                } else if end > column + pieceWidth {
                    right.append(Span(Repeated.text(" ", count: end - column - pieceWidth), span.style))
                }
                position = end
            }
        }
        return StyledLine(merge(left) + piece.spans + merge(right))
    }

    /// Adjacent spans of one style joined.
    private static func merge(_ spans: [Span]) -> [Span] {
        var result: [Span] = []
        for span in spans {
            if let last = result.last, last.style == span.style {
                result[result.count - 1].text += span.text
            } else {
                result.append(span)
            }
        }
        return result
    }
}
