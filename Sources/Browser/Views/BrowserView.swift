import Foundation
import TerminalText

/// The whole screen from state: panes laid out for the size, the status line, the hint bar, and any overlay.
/// Pure: it reads no objects and runs no SQL.
///
/// ```swift
/// let frame = BrowserView.frame(model.state, activity: model.activity, now: Date())
/// print(frame.text)
/// ```
public enum BrowserView {
    public static func frame(_ state: BrowserState, activity: ActivityMonitor, now: Date = Date()) -> Frame {
        let width = state.width
        let height = state.height
        guard !Layout.isTooSmall(width: width, height: height) else {
            return tooSmall(width: width, height: height)
        }
        let layout = Layout(state)
        let chats = ChatListView.lines(state, width: layout.chats.width, height: layout.chats.height, now: now)
        let main = MessagesView.lines(state, width: layout.main.width, height: layout.main.height)
        let panel = ActivityPanes.panel(activity, width: layout.activity.width, height: layout.activity.height)
        let log = ActivityPanes.log(activity, width: layout.sqlLog.width, height: layout.sqlLog.height, selected: state.sqlSelected,
                                    explained: state.explained, focused: state.focus == .sqlLog)
        // Until a chat is open the list has the messages pane's room, and that pane is not drawn.
        let left = layout.main.width > 0 ? [chats, main] : [chats]
        var body: [StyledLine]
        if layout.activity.row == 0 {
            // Three columns: the panel over the SQL log on the right.
            let right = panel + log
            body = PaneView.columns(left + [right], height: layout.chats.height)
        } else {
            let top = PaneView.columns(left, height: layout.chats.height)
            let band = PaneView.columns([panel, log], height: layout.activity.height)
            body = top + band
        }
        if let box = OverlayView.box(state) {
            OverlayView.overlay(box, on: &body, frameWidth: width, bodyHeight: body.count)
        }
        let status = state.progress.map { ProgressView.line($0, width: width) } ?? statusLine(state, width: width)
        return Frame(width: width, height: height, lines: body + [status, hintBar(state, width: width)])
    }

    static func statusLine(_ state: BrowserState, width: Int) -> StyledLine {
        if case .search(let text) = state.overlay {
            let count = state.chatList.search == text ? " · " + BrowserModel.matching(state.chatList.count) : ""
            return PaneView.fitted([Span(" / ", Style(.accent, bold: true)), Span(ControlCharacters.replaced(in: text, by: " ") + "▏", Style(.status)),
                                    Span(count, Style(.status))], width: width, fill: Style(.status))
        }
        let settings = state.settings
        // A long file name must not push the settings and the unsaved count off the line.
        let name = DisplayWidth.truncate(state.storeName, width: max(12, width / 4))
        var spans = [Span(" \(name) ", Style(.status, bold: true))]
        let levers = " \(settings.batchingLabel) · prefetch \(settings.prefetch.label) · counts \(settings.derivedCounts ? "derived" : "counted")"
            + (settings.drawnColumnsOnly ? "" : " · whole rows")
        spans.append(Span(levers, Style(.status)))
        // Left out while the message is a refusal that starts by saying so (`read-only: chat.sqlite cannot be…`).
        let messageSaysReadOnly = state.message?.hasPrefix("read-only") == true
        if (settings.readOnly || state.storeIsReadOnly) && !messageSaysReadOnly { spans.append(Span(" · read-only", Style(.status))) }
        if state.live { spans.append(Span(" · live", Style(.accent, bold: true))) }
        if let pending = state.pending { spans.append(Span(" · unsaved: \(pending)", Style(.warning, bold: true))) }
        if let message = state.message {
            spans.append(Span(" · ", Style(.status)))
            spans.append(Span(message, Style(state.messageIsError ? .danger : .status, bold: state.messageIsError)))
        }
        return PaneView.fitted(spans, width: width, fill: Style(.status))
    }

    static func hintBar(_ state: BrowserState, width: Int) -> StyledLine {
        let hints: [String]
        var kept: [String] = []
        if let progress = state.progress {
            // While long work runs, only Esc does something, and only to a delete preview.
            hints = progress.work == .deletePreview ? ["Esc cancel"] : []
        } else if let keys = KeyTable.keys(for: KeyMode(state)) {
            hints = keys.typesText ? ["type a title or a member's name"] + keys.hints : keys.hints
        } else {
            hints = KeyTable.hints(for: state.focus, readOnly: state.settings.readOnly || state.storeIsReadOnly)
            kept = KeyTable.keptHints
        }
        return hintLine(hints, kept: kept, width: width)
    }

    /// The hint bar for `hints`, in order, keeping `kept` whatever the width.
    static func hintLine(_ hints: [String], kept: [String], width: Int) -> StyledLine {
        // Whole hints only, in the table's order, which is their priority: one that does not fit is left out rather
        // than cut to a bare key. The kept ones (help and quit) are counted in first, so they never fall off.
        let columns = { (hint: String) in DisplayWidth.of(hint) + 2 }
        var used = kept.reduce(0) { $0 + columns($1) }
        var shown: Set<String> = Set(kept)
        for hint in hints where !kept.contains(hint) {
            guard used + columns(hint) <= width else { break }
            shown.insert(hint)
            used += columns(hint)
        }
        var spans: [Span] = []
        for hint in hints where shown.contains(hint) {
            let parts = hint.split(separator: " ", maxSplits: 1).map(String.init)
            spans.append(Span(" " + (parts.first ?? ""), Style(.accent, bold: true)))
            if parts.count > 1 { spans.append(Span(" " + parts[1], Style(.muted))) }
            spans.append(Span(" "))
        }
        return PaneView.fitted(spans, width: width)
    }

    /// The notice shown instead of the panes, wrapped to the window (a 20-column one still reads it whole when it
    /// has the lines), with the one key that works.
    static func tooSmall(width: Int, height: Int) -> Frame {
        let message = "window too small: \(width)×\(height), needs \(Layout.minimumWidth)×\(Layout.minimumHeight); q quits"
        var lines = (0..<height).map { _ in StyledLine(Repeated.text(" ", count: width)) }
        let wrapped = DisplayWidth.wrap(message, width: max(1, width - 2))
        let top = max(0, (height - wrapped.count) / 2)
        for (offset, text) in wrapped.enumerated() where top + offset < height {
            lines[top + offset] = StyledLine(DisplayWidth.fit("  " + text, width: width), Style(.warning, bold: true))
        }
        return Frame(width: width, height: height, lines: lines)
    }
}
