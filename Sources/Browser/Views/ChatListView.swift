import Foundation
import TerminalText

/// The chat list as a messenger draws it, two lines per chat:
///
/// ```
///  Ski trip 👥12 📌                        14:05
///    Ana: see you at the lift at nine
/// ```
///
/// The first line holds the title (bold), the marks (`👥12` members of a group, `📌` pinned, `🔕` muted) and the
/// last message's time, right-aligned; the second the last message, by its kind, after its sender: "You:" for the
/// store's own user, the sender's name in a group, nothing for the other person of a direct chat (the title is
/// already their name).
enum ChatListView {
    /// Screen lines each chat takes.
    static let linesPerChat = 2

    static func lines(_ state: BrowserState, width: Int, height: Int, now: Date) -> [StyledLine] {
        let list = state.chatList
        let search = list.search.isEmpty ? "" : " matching '\(list.search)'"
        let position = list.count == 0 ? nil : PaneView.position(list.selected + 1, of: list.count)
        var lines = [PaneView.title("Chats (\(ActivityFormat.count(list.count)))\(search)", width: width,
                                    focused: state.focus == .chats, position: position)]
        if list.count == 0 {
            lines.append(PaneView.line(list.search.isEmpty ? " no chats" : " no chat's title or member matches '\(list.search)'", width: width, Style(.muted)))
        }
        for (offset, row) in list.rows.enumerated() {
            let selected = list.top + offset == list.selected
            lines += self.lines(row, width: width, selected: selected, focused: state.focus == .chats, now: now)
        }
        return PaneView.block(lines, width: width, height: height)
    }

    /// A chat's two lines, each exactly `width` columns.
    static func lines(_ row: ChatRow, width: Int, selected: Bool, focused: Bool, now: Date) -> [StyledLine] {
        let highlight: Style? = selected ? Style(focused ? .selection : .accent) : nil
        let time = " " + TimeText.short(row.time, now: now) + " "
        var marks = markText(row)
        // The title keeps at least a few columns: marks go before the title is cut to nothing.
        if width - DisplayWidth.of(time) - DisplayWidth.of(marks) - 1 < minimumTitleWidth { marks = "" }
        let titleWidth = max(0, width - DisplayWidth.of(time) - DisplayWidth.of(marks) - 1)
        let title = DisplayWidth.truncate(row.title, width: titleWidth)
        let gap = Repeated.text(" ", count: max(0, titleWidth - DisplayWidth.of(title)))
        let first = PaneView.fitted([
            Span(" " + title, highlight ?? Style(.title, bold: true)),
            Span(marks, highlight ?? Style(.muted)),
            Span(gap + time, highlight ?? Style(.muted)),
        ], width: width, fill: highlight ?? .plain)

        var spans = [Span("   ", highlight ?? .plain)]
        if !row.hasMessages {
            spans.append(Span("no messages", highlight ?? Style(.muted)))
        } else {
            // A long name takes at most a third of the line: the message is what the line is for.
            if let who = senderLabel(row) {
                spans.append(Span(DisplayWidth.truncate(who, width: max(4, width / 3)) + ": ", highlight ?? .plain))
            }
            spans.append(Span(row.preview, highlight ?? Style(.muted)))
        }
        let second = PaneView.fitted(spans, width: width, fill: highlight ?? .plain)
        return [first, second]
    }

    /// The marks after a title: ` 👥12 📌 🔕` (members of a group, pinned, muted); "" for none.
    static func markText(_ row: ChatRow) -> String {
        var marks: [String] = []
        if row.isGroup { marks.append("👥\(ActivityFormat.count(row.membersCount))") }
        if row.isPinned { marks.append("📌") }
        if row.isMuted { marks.append("🔕") }
        return marks.isEmpty ? "" : " " + marks.joined(separator: " ")
    }

    /// Who sent the last message, as its line names them: "You", the sender of a group message, or nil for the
    /// other person of a direct chat and for a deleted sender.
    static func senderLabel(_ row: ChatRow) -> String? {
        if row.sentByOwner { return "You" }
        return row.isGroup ? row.sender : nil
    }

    private static let minimumTitleWidth = 6
}

/// Times as the browser shows them, always in UTC (the fixture's times are): the chat list's short form (the time
/// today, the weekday within the last six days, else the date), a message's clock time and a day separator's date.
///
/// A frame shows dozens of times and is drawn on every key, so they are worked out from the seconds since 1970 by
/// arithmetic on whole days rather than through a calendar and a date formatter (which cost about 100× more);
/// `TimeTextTests` checks them against Foundation's formatting.
enum TimeText {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// A moment in UTC split into the parts the browser writes.
    struct Parts: Equatable {
        /// Days since 1970-01-01 (negative before it).
        let dayNumber: Int
        let year: Int
        /// 1–12.
        let month: Int
        /// 1–31.
        let day: Int
        /// 0 for Sunday through 6 for Saturday.
        let weekday: Int
        let hour: Int
        let minute: Int

        init(_ date: Date) {
            // A stored date beyond any calendar (not finite, or past Int) is drawn as the epoch rather than trapping.
            let interval = date.timeIntervalSince1970
            let seconds = interval.isFinite && abs(interval) < 1e15 ? Int(interval.rounded(.down)) : 0
            let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
            dayNumber = secondOfDay < 0 ? days - 1 : days
            let second = secondOfDay < 0 ? secondOfDay + 86_400 : secondOfDay
            hour = second / 3_600
            minute = second % 3_600 / 60
            // 1970-01-01 was a Thursday.
            weekday = ((dayNumber + 4) % 7 + 7) % 7
            // The proleptic Gregorian date of a day number, counted in 400-year eras starting on 1 March 0000.
            let shifted = dayNumber + 719_468
            let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthFromMarch = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
            month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }
    }

    static func short(_ date: Date?, now: Date) -> String {
        guard let date else { return "" }
        let parts = Parts(date)
        let days = Parts(now).dayNumber - parts.dayNumber
        if days == 0 { return clock(parts) }
        if days > 0 && days < 7 { return weekdays[parts.weekday] }
        return "\(parts.year)-\(twoDigits(parts.month))-\(twoDigits(parts.day))"
    }

    static func clock(_ date: Date) -> String { clock(Parts(date)) }

    static func day(_ date: Date) -> String {
        let parts = Parts(date)
        return "\(weekdays[parts.weekday]) \(parts.day) \(months[parts.month - 1]) \(parts.year)"
    }

    private static func clock(_ parts: Parts) -> String { "\(twoDigits(parts.hour)):\(twoDigits(parts.minute))" }

    private static func twoDigits(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
}
