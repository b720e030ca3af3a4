/// Something the last action did that a change of fetching would avoid, in one line for the activity panel.
///
/// ```swift
/// ActivityWarning(kind: .nPlusOne, message: "N+1: 20 faults of User one by one — prefetch lastMessage.sender")
/// ```
/// `ActivityWarning.detect(in:rootEntity:model:)` finds them in an action's events.
public struct ActivityWarning: Equatable, Sendable {
    /// What kind of waste was seen.
    public enum Kind: Equatable, Sendable {
        /// The same fault statement ran once per object, where one prefetch would have read them all.
        case nPlusOne
        /// A to-many relationship fault fired although a derived count attribute holds its count.
        case countFiredRelationship
        /// A key path was prefetched, and many of the objects it brought were never read by the end of the action.
        case unusedPrefetch
    }

    public let kind: Kind
    public let message: String
    /// The pane whose reads caused it, when the browser said which (`messages`).
    public let pane: String?

    public init(kind: Kind, message: String, pane: String? = nil) {
        self.kind = kind
        self.message = message
        self.pane = pane
    }
}
