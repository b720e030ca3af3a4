import GraphStore

/// Turns the graph's events into what the activity panel and the SQL log show, one browser action at a time.
///
/// ```swift
/// let recorder = ActivityRecorder()
/// recorder.attach(to: coordinator.events)
/// var monitor = ActivityMonitor(model: coordinator.model, recorder: recorder)
/// monitor.begin(action: "open chat", rootEntity: "Message")
/// // … the browser carries the action out …
/// monitor.end(at: secondsSinceStart)
/// monitor.lastAction?.counts.statements   // what the action ran
/// monitor.totals.statements               // what ran since the start
/// ```
/// The recorder collects events on whatever thread emits them; the monitor is used on the browser's thread only,
/// at action boundaries. Events that arrive outside an action count in the totals, the timeline and the SQL log,
/// but not in any action's summary or warnings.
public struct ActivityMonitor: Sendable {
    /// How many statements the SQL log keeps by default.
    public static let defaultLogCapacity = 500

    public let model: ObjectModel
    public let recorder: ActivityRecorder
    /// How many statements `sqlLog` keeps.
    public let logCapacity: Int

    /// The last action that ended.
    public private(set) var lastAction: ActionSummary?
    /// Everything since the monitor was made or since `resetCounters()`.
    public private(set) var totals = ActivityCounts()
    /// Statements and SQL time per second, for the sparklines.
    public private(set) var timeline = ActivityTimeline()
    /// The latest statements, newest first.
    public private(set) var sqlLog: [SQLLogEntry] = []

    private var current: (action: String, scope: ActivityScope)?
    /// The current action's records so far, split where the scope changed (oldest first); the last scope's
    /// records are still in the recorder.
    private var segments: [(scope: ActivityScope, records: [GraphEventRecord])] = []
    /// Records drained when an action began: they came before it, so they are not its own.
    private var outsideRecords: [GraphEventRecord] = []
    private var nextEntryNumber = 1

    public init(model: ObjectModel, recorder: ActivityRecorder, logCapacity: Int = defaultLogCapacity) {
        self.model = model
        self.recorder = recorder
        self.logCapacity = max(0, logCapacity)
    }

    /// Marks the start of `action`: what the recorder holds now happened before it.
    ///
    /// - Parameter rootEntity: the entity whose objects the action lists (`Chat` for the chat list, `Message` for
    ///   an open chat); warnings name key paths to prefetch from it.
    public mutating func begin(action: String, rootEntity: String? = nil) {
        begin(action: action, scope: ActivityScope(rootEntity: rootEntity))
    }

    /// Marks the start of `action`, whose own work (before any `enter`) is `scope`'s.
    public mutating func begin(action: String, scope: ActivityScope) {
        outsideRecords += recorder.drain()
        current = (action, scope)
        segments = []
    }

    /// Within the current action: what ran until now was the previous scope's, what runs next is `scope`'s. The
    /// statements, faults and warnings that follow are attributed to its pane and named from its root entity.
    public mutating func enter(_ scope: ActivityScope) {
        guard let current else { return }
        let records = recorder.drain()
        if !records.isEmpty { segments.append((current.scope, records)) }
        self.current = (current.action, scope)
    }

    /// Marks the end of the action begun last, `time` seconds from any fixed origin (the timeline buckets by
    /// whole seconds of it), and makes its summary `lastAction`. Without an action begun, what was recorded counts
    /// as outside actions and `lastAction` stays.
    ///
    /// - Parameters:
    ///   - prefetchUse: what the action's prefetches brought and what of it stayed unread
    ///     (`ObjectContext.takePrefetchUse()`), for the unused-prefetch warning.
    ///   - duration: the action's wall time, when the caller measured it.
    public mutating func end(at time: Double, prefetchUse: [PrefetchUse] = [], duration: Duration = .zero) {
        let records = recorder.drain()
        let before = outsideRecords
        outsideRecords = []
        guard let current else {
            account(before + records, action: nil, at: time)
            return
        }
        self.current = nil
        if !records.isEmpty { segments.append((current.scope, records)) }
        let parts = segments
        segments = []
        account(before, action: nil, at: time)
        let firstEntry = nextEntryNumber
        var counts = ActivityCounts()
        var saveSucceeded: Bool?
        var warnings: [ActivityWarning] = []
        for part in parts {
            account(part.records, action: current.action, pane: part.scope.pane, at: time)
            for record in part.records {
                counts.count(record.event)
                if case .save(let save) = record.event { saveSucceeded = save.succeeded }
            }
            for warning in ActivityWarning.detect(in: part.records, scope: part.scope, model: model) where !warnings.contains(warning) {
                warnings.append(warning)
            }
        }
        warnings += ActivityWarning.unusedPrefetches(prefetchUse, scopes: parts.map(\.scope) + [current.scope])
        lastAction = ActionSummary(
            action: current.action, rootEntity: current.scope.rootEntity, counts: counts, saveSucceeded: saveSucceeded,
            warnings: warnings, duration: duration, entryNumbers: firstEntry..<nextEntryNumber)
    }

    /// Sets the running totals back to zero and empties the timeline (the sparklines and their maximums start
    /// again); the last action and the SQL log stay.
    public mutating func resetCounters() {
        totals = ActivityCounts()
        timeline = ActivityTimeline()
    }

    /// Adds `records` to the totals, the timeline and the SQL log.
    private mutating func account(_ records: [GraphEventRecord], action: String?, pane: String? = nil, at time: Double) {
        var statements: [StatementEvent] = []
        var sqlTime = Duration.zero
        for record in records {
            totals.count(record.event)
            if case .statement(let statement) = record.event {
                statements.append(statement)
                sqlTime += statement.duration
            }
        }
        timeline.record(statements: statements.count, sqlTime: sqlTime, at: time)
        let firstNumber = nextEntryNumber
        nextEntryNumber += statements.count
        // Only the newest statements can stay in the log: an action that ran 100,000 makes entries for the last few.
        let newest = statements.indices.suffix(logCapacity).reversed().map { index in
            SQLLogEntry(number: firstNumber + index, statement: statements[index], action: action, pane: pane)
        }
        if !newest.isEmpty { sqlLog = Array((newest + sqlLog).prefix(logCapacity)) }
    }
}
