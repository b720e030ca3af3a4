import Foundation
import TerminalText

/// The open chat's messages, newest at the bottom, under day headers (one always tops the pane, so the date of the
/// top message is in view), with reply quotes, edited marks and the kind of non-text messages; or its members when
/// toggled.
enum MessagesView {
    static func lines(_ state: BrowserState, width: Int, height: Int) -> [StyledLine] {
        guard let open = state.openChat else {
            // The layout gives the list this room until a chat is open; a pane this narrow is drawn blank.
            return PaneView.block([], width: width, height: height)
        }
        if state.showMembers { return members(open, state: state, width: width, height: height) }
        let focused = state.focus == .messages
        let room = max(0, height - 1)
        var body: [StyledLine] = []
        if open.messagesCount == 0 {
            body.append(PaneView.line(" no messages in this chat", width: width, Style(.muted)))
        }
        for entry in entries(open) {
            guard let row = entry.row else {
                let label = " \(entry.day) "
                let side = max(0, (width - DisplayWidth.of(label)) / 2)
                body.append(PaneView.line(Repeated.text("┄", count: side) + label, width: width, Style(.muted)))
                continue
            }
            body.append(line(row, width: width, selected: row.index == open.selected, focused: focused))
        }
        // Newest at the bottom: the rows were chosen to fit with their headers; keep the last lines if not.
        let shown = open.messagesCount == 0 ? body : Array(body.suffix(room))
        let padding = open.messagesCount == 0 ? [] : Array(repeating: PaneView.line("", width: width), count: max(0, room - shown.count))
        let title = "\(open.title) · \(ActivityFormat.count(open.messagesCount, "message"))"
        let position = open.messagesCount == 0 ? nil : PaneView.position(open.messagesCount - open.selected, of: open.messagesCount)
        return PaneView.block([PaneView.title(title, width: width, focused: focused, position: position)] + padding + shown,
                              width: width, height: height)
    }

    /// One message: ` 14:05 Ana: ↪ «Bo: the lift?» at nine (edited)  👍2`.
    static func line(_ row: MessageRow, width: Int, selected: Bool, focused: Bool) -> StyledLine {
        var spans = [Span(" \(TimeText.clock(row.sentAt)) ", Style(.muted)), Span(row.sender, Style(.title, bold: true)), Span(": ")]
        // A quote takes at most a third of the line, so the reply itself stays in view. Guillemets, not a bar: a
        // bar would read as a pane border.
        if let quote = row.replyQuote {
            spans.append(Span("↪ «" + DisplayWidth.truncate(quote, width: max(8, width / 3)) + "» ", Style(.muted)))
        }
        spans.append(Span(row.text))
        if row.isEdited { spans.append(Span(" (edited)", Style(.muted))) }
        if !row.reactions.isEmpty { spans.append(Span("  \(row.reactions)", Style(.accent))) }
        let highlight = Style(focused ? .selection : .accent)
        if selected { spans = spans.map { Span($0.text, highlight) } }
        return PaneView.fitted(spans, width: width, fill: selected ? highlight : .plain)
    }

    /// The pane's lines below its title, in order: a day header (`row` nil) above the first row and wherever the
    /// day changes, and each row.
    private static func entries(_ open: OpenChatState) -> [(day: String, row: MessageRow?)] {
        var result: [(day: String, row: MessageRow?)] = []
        var lastDay: String?
        for row in open.rows {
            let day = TimeText.day(row.sentAt)
            if day != lastDay { result.append((day, nil)) }
            lastDay = day
            result.append((day, row))
        }
        return result
    }

    /// The index of the message drawn on `line` of the pane (0 is its title), or nil for a title, header or
    /// blank line: what a mouse click there selects. Lays the lines out as `lines` does.
    static func messageIndex(_ state: BrowserState, height: Int, line: Int) -> Int? {
        guard let open = state.openChat, !state.showMembers, open.messagesCount > 0 else { return nil }
        let indexes = entries(open).map { $0.row?.index }
        let room = max(0, height - 1)
        let shown = Array(indexes.suffix(room))
        let position = line - 1 - max(0, room - shown.count)
        return shown.indices.contains(position) ? shown[position] : nil
    }

    private static func members(_ open: OpenChatState, state: BrowserState, width: Int, height: Int) -> [StyledLine] {
        let focused = state.focus == .members
        let position = memberPosition(open)
        var lines = [PaneView.title("\(open.title) · members", width: width, focused: focused, position: position)]
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

    /// `3/40` for the members pane's title; nil until the members are known.
    private static func memberPosition(_ open: OpenChatState) -> String? {
        open.membersCount > 0 ? PaneView.position(open.memberSelected + 1, of: open.membersCount) : nil
    }
}
