import GraphStore
import TerminalText

/// One statement of the SQL log in full, for the detail box Enter opens on a log row: the statement wrapped at its
/// clauses, its bound values, what caused it (pane, kind, entity, key), its rows and time, and its query plan.
public struct SQLDetail: Equatable, Sendable {
    public var entry: SQLLogEntry
    /// `EXPLAIN QUERY PLAN`'s lines, asked for when the box opened; nil when the store could not explain it.
    public var queryPlan: [String]?
    /// The first line shown, when the box is taller than the screen.
    public var top = 0

    public init(entry: SQLLogEntry, queryPlan: [String]?) {
        self.entry = entry
        self.queryPlan = queryPlan
    }
}

enum SQLDetailView {
    /// The box's lines, `width` columns inside its border: every line there is, unscrolled.
    static func lines(_ detail: SQLDetail, width: Int) -> [StyledLine] {
        let entry = detail.entry
        let width = max(10, width)
        func heading(_ text: String) -> StyledLine { StyledLine(text, Style(.title, bold: true)) }
        func field(_ name: String, _ value: String) -> [StyledLine] {
            let label = DisplayWidth.fit(name, width: 8)
            return DisplayWidth.wrap(ActivityFormat.oneLine(value), width: max(1, width - 8)).enumerated().map { index, text in
                StyledLine([Span(index == 0 ? label : Repeated.text(" ", count: 8), Style(.muted)), Span(text)])
            }
        }
        var lines = [heading("Statement \(ActivityFormat.count(entry.number))" + (entry.action.map { " · action \($0)" } ?? ""))]
        lines += field("pane", entry.pane ?? "none (the action's own work)")
        lines += field("cause", causeText(entry.cause))
        lines += field("rows", ActivityFormat.count(entry.rows))
        lines += field("time", ActivityFormat.duration(entry.duration))
        lines.append(StyledLine(""))
        lines.append(heading("SQL"))
        for clause in clauses(ActivityFormat.oneLine(entry.sql)) {
            let wrapped = DisplayWidth.wrap(clause, width: max(1, width - 2))
            lines += wrapped.enumerated().map { index, text in StyledLine((index == 0 ? "" : "  ") + text, Style(.plain)) }
        }
        lines.append(StyledLine(""))
        lines.append(heading("Bound values"))
        if entry.arguments.isEmpty {
            lines.append(StyledLine("none", Style(.muted)))
        } else {
            for (index, value) in entry.arguments.enumerated() {
                lines += field("?\(index + 1)", ActivityFormat.argument(value))
            }
        }
        lines.append(StyledLine(""))
        lines.append(heading("Query plan"))
        if let plan = detail.queryPlan, !plan.isEmpty {
            for line in plan {
                lines += DisplayWidth.wrap(ActivityFormat.oneLine(line), width: width).map { StyledLine($0, Style(.muted)) }
            }
        } else {
            lines.append(StyledLine("not available for this statement", Style(.muted)))
        }
        return lines
    }

    /// The box, scrolled to `detail.top`, in `height` lines at most, with its footer.
    static func box(_ detail: SQLDetail, width: Int, height: Int) -> [StyledLine] {
        let all = lines(detail, width: width)
        let room = max(1, height - 2)
        let top = max(0, min(detail.top, all.count - room))
        var shown = Array(all[top..<min(all.count, top + room)])
        shown.append(StyledLine(""))
        let footer = all.count > room ? "j/k ↑↓ PgUp PgDn scroll (\(top + 1)–\(top + shown.count - 1) of \(all.count)) · Esc closes" : "Esc closes"
        shown.append(StyledLine(footer, Style(.muted)))
        return shown
    }

    /// How far the box can scroll: its lines beyond what `height` shows.
    static func lastTop(_ detail: SQLDetail, width: Int, height: Int) -> Int {
        max(0, lines(detail, width: width).count - max(1, height - 2))
    }

    /// The statement split before its main clauses, one per line.
    static func clauses(_ sql: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(sql)
        let keywords = [" FROM ", " LEFT JOIN ", " JOIN ", " WHERE ", " GROUP BY ", " ORDER BY ", " LIMIT ", " VALUES ", " SET "]
        while true {
            // Past the keyword the clause starts with (`LEFT JOIN` is one clause, not `LEFT` and `JOIN`).
            let lead = keywords.filter { rest.hasPrefix($0.dropFirst()) }.map { $0.count - 1 }.max() ?? 0
            let searched = rest.index(rest.startIndex, offsetBy: lead, limitedBy: rest.endIndex) ?? rest.endIndex
            guard let next = keywords.compactMap({ rest.range(of: $0, range: searched..<rest.endIndex) })
                .min(by: { $0.lowerBound < $1.lowerBound }) else { break }
            parts.append(String(rest[..<next.lowerBound]))
            rest = rest[rest.index(after: next.lowerBound)...]
        }
        parts.append(String(rest))
        return parts
    }

    /// What caused a statement, spelled out.
    static func causeText(_ cause: StatementCause) -> String {
        switch cause {
        case .fetch(let entity): "fetch of \(entity) (the pane's fetch request, or one of its batches)"
        case .objectFault(let entity, let key): "object fault: a \(entity) read (\(key)) while its row was not in memory"
        case .relationshipFault(let entity, let key): "relationship fault: \(entity).\(key) read while its members were not loaded"
        case .prefetch(let keyPath): "prefetch of \(keyPath), for the rows the fetch read"
        case .save: "save"
        case .other(let text): text
        }
    }
}
