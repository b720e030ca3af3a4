import Foundation
import Terminal

/// The open chat's messages, newest at the bottom, with day separators, reply quotes and placeholders for
/// stickers, images and files; or its members when toggled.
enum MessagesView {
    static func lines(_ state: BrowserState, width: Int, height: Int) -> [StyledLine] {
        guard let open = state.openChat else {
            return PaneView.block([PaneView.title("Messages", width: width, focused: false),
                                   PaneView.line(" Enter opens the selected chat", width: width, Style(.muted))], width: width, height: height)
        }
        if state.showMembers { return members(open, state: state, width: width, height: height) }
        let focused = state.focus == .messages
        var body: [StyledLine] = []
        for (row, separator) in zip(open.rows, daySeparators(open)) {
            if let day = separator {
                let label = " \(day) "
                let side = max(0, (width - DisplayWidth.of(label)) / 2)
                body.append(PaneView.line(String(repeating: "┄", count: side) + label, width: width, Style(.muted)))
            }
            let selected = row.index == open.selected
            var spans = [Span(" \(TimeText.clock(row.sentAt)) ", Style(.muted)), Span(row.sender, Style(.title, bold: true)), Span(": ")]
            // A quote takes at most a third of the line, so the reply itself stays in view.
            if let quote = row.replyQuote {
                spans.append(Span("↪ " + DisplayWidth.truncate(quote, width: max(8, width / 3)) + " │ ", Style(.muted)))
            }
            spans.append(Span(row.placeholder ?? row.text))
            if !row.reactions.isEmpty { spans.append(Span("  \(row.reactions)", Style(.accent))) }
            if selected {
                spans = spans.map { Span($0.text, Style(focused ? .selection : .accent)) }
            }
            body.append(PaneView.fitted(spans, width: width, fill: selected ? Style(focused ? .selection : .accent) : .plain))
        }
        // Newest at the bottom: keep the last lines when separators made too many.
        let room = max(0, height - 1)
        let shown = Array(body.suffix(room))
        let padding = Array(repeating: StyledLine(String(repeating: " ", count: width)), count: max(0, room - shown.count))
        let title = "\(open.title) · \(ActivityFormat.count(open.messagesCount, "message"))"
        return [PaneView.title(title, width: width, focused: focused)] + padding + shown
    }

    /// For each row, the day separator drawn above it (nil when it is on the same day as the row before).
    private static func daySeparators(_ open: OpenChatState) -> [String?] {
        var lastDay: String?
        return open.rows.map { row in
            let day = TimeText.day(row.sentAt)
            defer { lastDay = day }
            return day == lastDay ? nil : day
        }
    }

    /// The index of the message drawn on `line` of the pane (0 is its title), or nil for a title, separator or
    /// blank line: what a mouse click there selects. Lays the lines out as `lines` does.
    static func messageIndex(_ state: BrowserState, height: Int, line: Int) -> Int? {
        guard let open = state.openChat, !state.showMembers else { return nil }
        var indexes: [Int?] = []
        for (row, separator) in zip(open.rows, daySeparators(open)) {
            if separator != nil { indexes.append(nil) }
            indexes.append(row.index)
        }
        let room = max(0, height - 1)
        let shown = Array(indexes.suffix(room))
        let position = line - 1 - max(0, room - shown.count)
        return shown.indices.contains(position) ? shown[position] : nil
    }

    private static func members(_ open: OpenChatState, state: BrowserState, width: Int, height: Int) -> [StyledLine] {
        let focused = state.focus == .members
        var lines = [PaneView.title("\(open.title) · members", width: width, focused: focused)]
        for (offset, member) in open.members.enumerated() {
            let selected = open.memberTop + offset == open.memberSelected
            let style = selected ? Style(focused ? .selection : .accent) : Style.plain
            lines.append(PaneView.fitted([
                Span(" " + DisplayWidth.fit(member.role, width: 7), selected ? style : Style(.muted)),
                Span(DisplayWidth.fit(member.name, width: max(1, width - 20)), selected ? style : Style(.title)),
                Span(" " + TimeText.short(member.joinedAt, now: .distantFuture), selected ? style : Style(.muted)),
            ], width: width, fill: style))
        }
        return PaneView.block(lines, width: width, height: height)
    }
}
