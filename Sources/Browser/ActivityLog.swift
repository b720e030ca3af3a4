import GraphStore
import TerminalText

/// The browser's view of the graph's activity: an `ActivityMonitor` fed action by action from the coordinator's
/// events, and the panel and SQL log drawn from it with their pane titles.
public final class ActivityLog {
    private let recorder = ActivityRecorder()
    public private(set) var monitor: ActivityMonitor
    /// Seconds from a fixed origin, read as each action ends (the sparklines count per whole second).
    private let clock: () -> Double

    /// - Parameter clock: seconds from any fixed origin, read as each action ends; nil for the monotonic clock,
    ///   counted from now. Tests pass a constant so that the sparklines do not depend on how fast they run.
    init(coordinator: PersistentStoreCoordinator, clock: (() -> Double)? = nil, logCapacity: Int = ActivityMonitor.defaultLogCapacity) {
        recorder.attach(to: coordinator.events)
        monitor = ActivityMonitor(model: coordinator.model, recorder: recorder, logCapacity: logCapacity)
        if let clock {
            self.clock = clock
        } else {
            let origin = ContinuousClock.now
            self.clock = {
                let elapsed = (ContinuousClock.now - origin).components
                return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            }
        }
    }

    deinit { recorder.detach() }

    func begin(_ action: String, scope: ActivityScope) {
        monitor.begin(action: action, scope: scope)
    }

    /// What runs from now on in the current action is `scope`'s.
    func enter(_ scope: ActivityScope) {
        monitor.enter(scope)
    }

    func end(prefetchUse: [PrefetchUse], duration: Duration) {
        monitor.end(at: clock(), prefetchUse: prefetchUse, duration: duration)
    }

    func reset() { monitor.resetCounters() }

    /// The SQL log, newest first.
    public var entries: [SQLLogEntry] { monitor.sqlLog }

    func panelLines(width: Int, height: Int) -> [StyledLine] {
        let title = PaneView.title("Graph activity", width: width, focused: false)
        return PaneView.block([title] + ActivityPanelView.lines(monitor: monitor, width: width, height: max(0, height - 1)),
                              width: width, height: height)
    }

    /// The log with `explained` as the selected statement's query plan, when given.
    func logLines(width: Int, height: Int, selected: Int, explained: [String]?, focused: Bool) -> [StyledLine] {
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
