import Foundation
import Terminal

/// The chat list as a messenger shows it: pin, title, member count, time; under it the last message and its sender.
/// One row per chat: `📌 Ski trip (12)          14:05`, then `  Ana: see you at the lift…` in the next column space.
enum ChatListView {
    static func lines(_ state: BrowserState, width: Int, height: Int, now: Date) -> [StyledLine] {
        let list = state.chatList
        let search = list.search.isEmpty ? "" : " matching '\(list.search)'"
        var lines = [PaneView.title("Chats (\(list.count))\(search)", width: width, focused: state.focus == .chats)]
        if list.count == 0 {
            lines.append(PaneView.line(list.search.isEmpty ? " no chats" : " no chat title contains '\(list.search)'", width: width, Style(.muted)))
        }
        for (offset, row) in list.rows.enumerated() {
            let selected = list.top + offset == list.selected
            lines.append(line(row, width: width, selected: selected, focused: state.focus == .chats, now: now))
        }
        return PaneView.block(lines, width: width, height: height)
    }

    static func line(_ row: ChatRow, width: Int, selected: Bool, focused: Bool, now: Date) -> StyledLine {
        let time = TimeText.short(row.time, now: now)
        let marks = (row.isPinned ? "📌" : "") + (row.isMuted ? "🔕" : "")
        let count = row.isGroup ? " (\(row.membersCount))" : ""
        let right = " " + time
        let titleWidth = max(1, min(width / 2, width - DisplayWidth.of(right) - 2))
        let head = DisplayWidth.truncate(row.title, width: max(1, titleWidth - DisplayWidth.of(count) - DisplayWidth.of(marks) - 1))
        let preview = (row.sender.map { "\($0): " } ?? "") + row.preview
        let left = " \(head)\(count)\(marks.isEmpty ? "" : " " + marks) "
        let previewWidth = max(0, width - DisplayWidth.of(left) - DisplayWidth.of(right))
        let style = selected ? Style(focused ? .selection : .accent) : Style.plain
        return StyledLine([
            Span(left, selected ? style : Style(.title, bold: true)),
            Span(DisplayWidth.fit(preview, width: previewWidth), selected ? style : Style(.muted)),
            Span(right, selected ? style : Style(.muted)),
        ])
    }
}

/// Times as a chat list shows them: the time today, the weekday within a week, else the date.
enum TimeText {
    static func short(_ date: Date?, now: Date) -> String {
        guard let date else { return "" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        if calendar.isDate(date, inSameDayAs: now) {
            formatter.dateFormat = "HH:mm"
        } else if let days = calendar.dateComponents([.day], from: date, to: now).day, days < 7, days >= 0 {
            formatter.dateFormat = "EEE"
        } else {
            formatter.dateFormat = "yyyy-MM-dd"
        }
        return formatter.string(from: date)
    }

    static func clock(_ date: Date) -> String { format(date, "HH:mm") }

    static func day(_ date: Date) -> String { format(date, "EEE d MMM yyyy") }

    private static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}
