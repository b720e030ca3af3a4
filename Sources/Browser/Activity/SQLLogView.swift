import GraphStore
import TerminalText

/// The SQL log: one line per statement, newest first: duration, rows, cause, then the SQL and its arguments.
///
/// ```swift
/// SQLLogView.lines(entries: monitor.sqlLog, selected: 0, expanded: true, width: 80, height: 10).map(\.text)
/// // [" 94µs       1 row fault of User.name SELECT … FROM ZUSER t0 WHERE t0.Z_PK = ? […",
/// //  "    SEARCH t0 USING INTEGER PRIMARY KEY (rowid=?)                               ",
/// //  "1.23s 12,345 rows fetch Chat         SELECT … FROM ZCHAT t0 WHERE t0.ZTITLE = ?…", …]
/// ```
/// The selected entry is highlighted and kept on screen; when `expanded`, its query plan (if the store gathered
/// one) follows it, indented. Narrow logs leave out the cause column (under 40 columns), then the rows column
/// (under 24).
public enum SQLLogView {
    /// The log: exactly `height` lines, each `width` display columns.
    ///
    /// - Parameters:
    ///   - entries: newest first, as `ActivityMonitor.sqlLog` holds them.
    ///   - selected: the index of the highlighted entry, if any.
    ///   - expanded: whether the selected entry shows its query plan.
    public static func lines(entries: [SQLLogEntry], selected: Int?, expanded: Bool = false, width: Int, height: Int) -> [StyledLine] {
        let width = max(0, width)
        let height = max(0, height)
        var lines: [StyledLine] = []
        if entries.isEmpty {
            lines.append(ActivityLine.fit([Span("no statements yet", Style(.muted))], width: width))
        } else {
            let selected = selected.flatMap { entries.indices.contains($0) ? $0 : nil }
            let plan = expanded ? selected.flatMap { entries[$0].queryPlan } ?? [] : []
            // Scrolled just enough for the selected entry and its plan to show (the plan cut when taller than the log).
            let first = selected.map { min($0, max(0, $0 + 1 + plan.count - height)) } ?? 0
            let visible = entries[first..<min(entries.count, first + height)]
            let columns = Columns(entries, visible: visible, width: width)
            for (index, entry) in zip(visible.indices, visible) {
                let isSelected = index == selected
                lines.append(row(entry, columns: columns, selected: isSelected, width: width))
                if isSelected {
                    lines += plan.map { ActivityLine.fit([Span("    " + ActivityFormat.oneLine($0), Style(.muted))], width: width) }
                }
            }
        }
        lines = Array(lines.prefix(height))
        return lines + Array(repeating: ActivityLine.blank(width: width), count: height - lines.count)
    }

    /// Widths of the duration, rows and cause columns (0 when left out). The duration column has a fixed width, so
    /// it does not move with timings; the rows and cause columns are as wide as their widest value in view (the
    /// cause at most a quarter of the line), so a large count or a long cause scrolled out of view leaves no gap.
    private struct Columns {
        /// Every duration `ActivityFormat` writes under 10 s (`999µs`, `9.9ms`, `999ms`, `9.99s`) fits in 5.
        static let durationWidth = 5
        let duration: Int
        let rows: Int
        let cause: Int

        init(_ entries: [SQLLogEntry], visible: ArraySlice<SQLLogEntry>, width: Int) {
            duration = Self.durationWidth
            // The widest "n rows" belongs to the largest n, except that "0 rows" is wider than "1 row".
            let most = visible.lazy.map(\.rows).max() ?? 0
            let widest = most == 1 && visible.contains { $0.rows == 0 } ? 0 : most
            rows = width < 24 ? 0 : DisplayWidth.of(SQLLogView.rowsText(widest))
            cause = width < 40 ? 0 : min(width / 4, visible.map { DisplayWidth.of(SQLLogView.causeText($0)) }.max() ?? 0)
        }
    }

    private static func row(_ entry: SQLLogEntry, columns: Columns, selected: Bool, width: Int) -> StyledLine {
        let highlight = Style(.selection)
        func style(_ role: Role) -> Style { selected ? highlight : Style(role) }
        let duration = ActivityFormat.duration(entry.duration)
        var spans = [Span(DisplayWidth.fitRight(duration, width: max(columns.duration, duration.count)), style(.muted))]
        if columns.rows > 0 {
            spans.append(Span(" " + DisplayWidth.fitRight(rowsText(entry.rows), width: columns.rows), style(.muted)))
        }
        if columns.cause > 0 {
            spans.append(Span(" " + DisplayWidth.fit(causeText(entry), width: columns.cause), style(.accent)))
        }
        let used = max(columns.duration, duration.count) + (columns.rows > 0 ? columns.rows + 1 : 0) + (columns.cause > 0 ? columns.cause + 1 : 0)
        spans.append(Span(" " + shortened(ActivityFormat.oneLine(entry.sql), width: width - used - 1), style(.plain)))
        if !entry.arguments.isEmpty {
            spans.append(Span(" " + ActivityFormat.arguments(entry.arguments), style(.muted)))
        }
        return ActivityLine.fit(spans, width: width, fill: selected ? highlight : .plain)
    }

    /// `sql` as it fits in `width` columns: a SELECT too long keeps its FROM and WHERE in view by eliding its
    /// column list (`SELECT … FROM ZUSER t0 WHERE t0.Z_PK = ?`); the line is cut after that if need be.
    static func shortened(_ sql: String, width: Int) -> String {
        guard DisplayWidth.exceeds(sql, width), sql.hasPrefix("SELECT "), let from = firstFrom(in: sql) else { return sql }
        return "SELECT …" + sql[from...]
    }

    /// Where `sql`'s first " FROM " starts, found in its bytes: the log draws many SELECTs a frame, and Foundation's
    /// `range(of:)` searches a UTF-16 copy.
    private static func firstFrom(in sql: String) -> String.Index? {
        let pattern = Array(" FROM ".utf8)
        var text = sql
        let offset = text.withUTF8 { bytes -> Int? in
            guard bytes.count >= pattern.count else { return nil }
            for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
                if pattern.indices.allSatisfy({ bytes[start + $0] == pattern[$0] }) { return start }
            }
            return nil
        }
        return offset.map { sql.utf8.index(sql.utf8.startIndex, offsetBy: $0) }
    }

    private static func rowsText(_ rows: Int) -> String { ActivityFormat.count(rows, "row") }

    /// The statement's cause, after the pane that ran it when one did: `messages: fault of User.name`.
    static func causeText(_ entry: SQLLogEntry) -> String {
        ActivityFormat.oneLine((entry.pane.map { "\($0): " } ?? "") + entry.cause.description)
    }
}
