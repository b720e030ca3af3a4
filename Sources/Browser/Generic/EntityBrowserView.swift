import Foundation
import TerminalText

/// The entity browser's whole screen from state: the entities, the main pane (a list of objects or one object),
/// the chat browser's activity panel and SQL log, the status line, the hint bar and any overlay. Pure: it reads no
/// objects and runs no SQL.
///
/// ```swift
/// print(EntityBrowserView.frame(browser.state, activity: browser.activity).text)
/// ```
public enum EntityBrowserView {
    public static func frame(_ state: EntityBrowserState, activity: ActivityMonitor) -> Frame {
        let width = state.width
        let height = state.height
        guard !Layout.isTooSmall(width: width, height: height) else {
            return BrowserView.tooSmall(width: width, height: height)
        }
        let layout = EntityLayout(state)
        let entities = EntityListView.lines(state, width: layout.entities.width, height: layout.entities.height)
        let panel = ActivityPanes.panel(activity, width: layout.activity.width, height: layout.activity.height)
        let log = ActivityPanes.log(activity, width: layout.sqlLog.width, height: layout.sqlLog.height, selected: state.sqlSelected,
                                    explained: state.explained, focused: state.focus == .sqlLog)
        var left = [entities]
        if layout.main.width > 0 { left.append(MainPaneView.lines(state, width: layout.main.width, height: layout.main.height)) }
        var body: [StyledLine]
        if layout.activity.row == 0 {
            body = PaneView.columns(left + [panel + log], height: layout.entities.height)
        } else {
            body = PaneView.columns(left, height: layout.entities.height) + PaneView.columns([panel, log], height: layout.activity.height)
        }
        if let box = box(state) {
            OverlayView.overlay(box, on: &body, frameWidth: width, bodyHeight: body.count)
        }
        let status = state.progress.map { ProgressView.line($0, width: width) } ?? statusLine(state, width: width)
        return Frame(width: width, height: height, lines: body + [status, hintBar(state, width: width)])
    }

    /// How many key rows the help shows at once.
    static func helpRowsShown(_ state: EntityBrowserState) -> Int {
        let body = max(0, state.height - 2)
        return max(1, min(EntityKeyTable.helpRows().count, body - 2 - 3))
    }

    private static func box(_ state: EntityBrowserState) -> (lines: [StyledLine], width: Int)? {
        switch state.overlay {
        case .none, .search:
            // The filter field is in the status line, so the list it filters stays in view.
            return nil
        case .help:
            return OverlayView.helpBox(rows: EntityKeyTable.helpRows(), top: state.helpTop, shown: helpRowsShown(state), frameWidth: state.width)
        case .deletePreview(let preview):
            return OverlayView.deletePreviewBox(preview, frameWidth: state.width)
        case .confirmQuit:
            return OverlayView.confirmQuitBox(pending: state.pending, frameWidth: state.width)
        case .sqlDetail(let detail):
            let width = min(state.width - 4, 104)
            return (SQLDetailView.box(detail, width: width - 4, height: max(3, state.height - 4)), width)
        }
    }

    static func statusLine(_ state: EntityBrowserState, width: Int) -> StyledLine {
        if case .search(let text) = state.overlay {
            return PaneView.fitted([Span(" / ", Style(.accent, bold: true)), Span(ControlCharacters.replaced(in: text, by: " ") + "▏", Style(.status))],
                                   width: width, fill: Style(.status))
        }
        let settings = state.settings
        let name = DisplayWidth.truncate(ControlCharacters.replaced(in: state.storeName, by: " "), width: max(12, width / 4))
        var spans = [Span(" \(name) ", Style(.status, bold: true))]
        spans.append(Span(" \(settings.batchingLabel) · prefetch \(settings.prefetch.label) · counts \(settings.derivedCounts ? "on" : "off")",
                          Style(.status)))
        // As in the chat browser, no second "read-only" before a refusal that starts with it.
        if state.isWritable {
            spans.append(Span(" · writable", Style(.warning, bold: true)))
        } else if state.message?.hasPrefix("read-only") != true {
            spans.append(Span(" · read-only", Style(.status)))
        }
        if let pending = state.pending { spans.append(Span(" · unsaved: \(pending)", Style(.warning, bold: true))) }
        if let message = state.message {
            spans.append(Span(" · ", Style(.status)))
            spans.append(Span(ControlCharacters.replaced(in: message, by: " "),
                              Style(state.messageIsError ? .danger : .status, bold: state.messageIsError)))
        }
        return PaneView.fitted(spans, width: width, fill: Style(.status))
    }

    static func hintBar(_ state: EntityBrowserState, width: Int) -> StyledLine {
        if let progress = state.progress {
            return BrowserView.hintLine(progress.work == .deletePreview ? ["Esc cancel"] : [], kept: [], width: width)
        }
        let mode: KeyMode = switch state.overlay {
        case .none: .normal
        case .help: .help
        case .deletePreview: .deletePreview
        case .confirmQuit: .confirmQuit
        case .search: .search
        case .sqlDetail: .sqlDetail
        }
        if let keys = KeyTable.keys(for: mode) {
            let hints = keys.typesText ? ["type a predicate: name BEGINSWITH 'A'"] + keys.hints : keys.hints
            return BrowserView.hintLine(hints, kept: [], width: width)
        }
        var prefetchUseless = false
        if state.focus == .objects, case .list(let list) = state.main {
            prefetchUseless = !list.columns.contains { $0.kind == .toOne }
        }
        return BrowserView.hintLine(EntityKeyTable.hints(for: state.focus, writable: state.isWritable, prefetchUseless: prefetchUseless),
                                    kept: KeyTable.keptHints, width: width)
    }
}

/// The entities pane: each entity with its count, sub-entities indented under their parents.
enum EntityListView {
    static func lines(_ state: EntityBrowserState, width: Int, height: Int) -> [StyledLine] {
        let list = state.entities
        let focused = state.focus == .entities
        let position = list.rows.isEmpty ? nil : PaneView.position(list.selected + 1, of: list.rows.count)
        var lines = [PaneView.title("Entities (\(ActivityFormat.count(list.rows.count)))", width: width, focused: focused, position: position)]
        if list.rows.isEmpty { lines.append(PaneView.line(" the model has no entities", width: width, Style(.muted))) }
        for (index, row) in list.rows.enumerated().dropFirst(list.top).prefix(max(0, height - 1)) {
            let selected = index == list.selected
            let highlight: Style? = selected ? Style(focused ? .selection : .accent) : nil
            let count = row.count.map { " " + ActivityFormat.count($0) + " " } ?? " "
            let indent = Repeated.text("  ", count: row.depth)
            let nameWidth = max(1, width - 1 - DisplayWidth.of(count))
            let name = DisplayWidth.fit(indent + row.name + (row.isAbstract ? " (abstract)" : ""), width: nameWidth)
            lines.append(PaneView.fitted([
                Span(" " + name, highlight ?? Style(row.depth == 0 ? .title : .plain, bold: row.depth == 0)),
                Span(count, highlight ?? Style(.muted)),
            ], width: width, fill: highlight ?? .plain))
        }
        return PaneView.block(lines, width: width, height: height)
    }
}

/// The main pane: a list of objects with its column headings, or one object's attributes and relationships; both
/// under the breadcrumb of the path that led there.
enum MainPaneView {
    static func lines(_ state: EntityBrowserState, width: Int, height: Int) -> [StyledLine] {
        switch state.main {
        case .list(let list): return listLines(list, state: state, width: width, height: height)
        case .object(let detail): return objectLines(detail, state: state, width: width, height: height)
        case nil: return PaneView.block([], width: width, height: height)
        }
    }

    /// `Person › p3 Jane Doe › cars`, its first crumbs left out (`… ›`) when it is too long for the pane.
    static func breadcrumb(_ crumbs: [String], width: Int) -> StyledLine {
        let separator = " › "
        var shown = crumbs
        var text = " " + shown.joined(separator: separator)
        while DisplayWidth.of(text) > width, shown.count > 1 {
            shown.removeFirst()
            text = " …" + separator + shown.joined(separator: separator)
        }
        return PaneView.line(text, width: width, Style(.muted))
    }

    private static func listLines(_ list: ObjectListState, state: EntityBrowserState, width: Int, height: Int) -> [StyledLine] {
        let focused = state.focus == .objects
        var title = "\(list.title) · \(list.sortLabel)"
        if !list.filter.isEmpty { title += " · where \(ControlCharacters.replaced(in: list.filter, by: " "))" }
        let position = list.count == 0 ? nil : PaneView.position(list.selected + 1, of: list.count)
        var lines = [PaneView.title(title, width: width, focused: focused, position: position), breadcrumb(state.breadcrumb, width: width)]
        var heading = [Span(" " + DisplayWidth.fit("key", width: list.keyWidth), Style(.muted, bold: true))]
        for column in list.columns {
            heading.append(Span(" " + DisplayWidth.fit(column.key, width: column.width), Style(.muted, bold: true)))
        }
        lines.append(PaneView.fitted(heading, width: width))
        if list.count == 0 {
            lines.append(PaneView.line(list.filter.isEmpty ? " no objects" : " no object matches the filter", width: width, Style(.muted)))
        }
        for (offset, row) in list.rows.enumerated() {
            let selected = list.top + offset == list.selected
            let highlight: Style? = selected ? Style(focused ? .selection : .accent) : nil
            var spans = [Span(" " + DisplayWidth.fit(row.key, width: list.keyWidth), highlight ?? Style(.muted))]
            for (column, cell) in zip(list.columns, row.cells) {
                spans.append(Span(" " + DisplayWidth.fit(cell.text, width: column.width), highlight ?? Style(cell.isNull ? .muted : .plain)))
            }
            lines.append(PaneView.fitted(spans, width: width, fill: highlight ?? .plain))
        }
        return PaneView.block(lines, width: width, height: height)
    }

    private static func objectLines(_ detail: ObjectDetailState, state: EntityBrowserState, width: Int, height: Int) -> [StyledLine] {
        let focused = state.focus == .object
        var lines = [PaneView.title(detail.title, width: width, focused: focused), breadcrumb(state.breadcrumb, width: width)]
        let nameWidth = min(max(4, width / 3), (detail.rows.map { DisplayWidth.of($0.name) }.max() ?? 4) + 1)
        let typeWidth = width >= 60 ? min(22, detail.rows.map { DisplayWidth.of($0.type) }.max() ?? 0) : 0
        let valueWidth = max(1, width - 1 - nameWidth - 1 - (typeWidth > 0 ? typeWidth + 1 : 0))
        let rows = detail.rows.dropFirst(detail.top).prefix(max(0, height - EntityLayout.objectHeaderLines))
        for (offset, row) in rows.enumerated() {
            let selected = detail.top + offset == detail.selected
            let highlight: Style? = selected ? Style(focused ? .selection : .accent) : nil
            let valueStyle: Style = row.value.isNull ? Style(.muted) : row.kind == .attribute ? .plain : Style(.accent)
            var spans = [
                Span(" " + DisplayWidth.fit(row.name, width: nameWidth), highlight ?? Style(.title, bold: row.kind != .attribute)),
                Span(" " + DisplayWidth.fit(row.value.text, width: valueWidth), highlight ?? valueStyle),
            ]
            if typeWidth > 0 { spans.append(Span(" " + DisplayWidth.fitRight(row.type, width: typeWidth), highlight ?? Style(.muted))) }
            lines.append(PaneView.fitted(spans, width: width, fill: highlight ?? .plain))
        }
        return PaneView.block(lines, width: width, height: height)
    }
}
