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

    public init(action: String, rootEntity: String?, counts: ActivityCounts, saveSucceeded: Bool?, warnings: [ActivityWarning]) {
        self.action = action
        self.rootEntity = rootEntity
        self.counts = counts
        self.saveSucceeded = saveSucceeded
        self.warnings = warnings
    }
}
