import TerminalText

/// The graph-activity panel and the SQL log as panes, with their titles, drawn from the monitor's state (a value).
enum ActivityPanes {
    static func panel(_ monitor: ActivityMonitor, width: Int, height: Int) -> [StyledLine] {
        let title = PaneView.title("Graph activity", width: width, focused: false)
        return PaneView.block([title] + ActivityPanelView.lines(monitor: monitor, width: width, height: max(0, height - 1)),
                              width: width, height: height)
    }

    /// The log with `explained` as the selected statement's query plan, when given.
    static func log(_ monitor: ActivityMonitor, width: Int, height: Int, selected: Int, explained: [String]?, focused: Bool) -> [StyledLine] {
        var entries = monitor.sqlLog
        if let explained, entries.indices.contains(selected) {
            let entry = entries[selected]
            let statement = entry.statement
            entries[selected] = SQLLogEntry(number: entry.number, sql: statement.sql, arguments: statement.arguments,
                                            rows: statement.rows, duration: statement.duration, cause: statement.cause,
                                            queryPlan: explained, action: entry.action, pane: entry.pane)
        }
        let title = PaneView.title("SQL log (\(ActivityFormat.count(entries.count)))", width: width, focused: focused)
        let body = SQLLogView.lines(entries: entries, selected: focused ? selected : nil, expanded: explained != nil,
                                    width: width, height: max(0, height - 1))
        return PaneView.block([title] + body, width: width, height: height)
    }
}
