/// What the last action did in the object graph: its figures, how its save went, and what looked wasteful.
///
/// ```swift
/// monitor.begin(action: "open chat", rootEntity: "Message")
/// // … the browser reads the chat's messages …
/// monitor.end(at: 3.2)
/// monitor.lastAction?.counts.statements   // 7
/// monitor.lastAction?.warnings.first      // N+1: 6 faults of User one by one — prefetch sender
/// ```
public struct ActionSummary: Equatable, Sendable {
    /// The action's name, as the browser passed it to `begin`.
    public let action: String
    /// The entity whose objects the action listed, which key paths in warnings start from.
    public let rootEntity: String?
    public let counts: ActivityCounts
    /// Whether its last save committed; nil when it saved nothing.
    public let saveSucceeded: Bool?
    public let warnings: [ActivityWarning]
    /// Its wall time, from the key to the screen's rows being read (zero when the caller did not measure it).
    public let duration: Duration
    /// The numbers its statements have in the SQL log (`SQLLogEntry.number`), which keeps the newest few hundred.
    public let entryNumbers: Range<Int>

    public init(action: String, rootEntity: String?, counts: ActivityCounts, saveSucceeded: Bool?, warnings: [ActivityWarning],
                duration: Duration = .zero, entryNumbers: Range<Int> = 0..<0) {
        self.action = action
        self.rootEntity = rootEntity
        self.counts = counts
        self.saveSucceeded = saveSucceeded
        self.warnings = warnings
        self.duration = duration
        self.entryNumbers = entryNumbers
    }
}
