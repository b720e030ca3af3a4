/// What deleting some objects takes with it, worked out from the store with queries that read keys and counts,
/// never objects: per entity how many objects go (the objects themselves and every cascade, recursively), per
/// relationship how many references surviving objects lose, and the Deny rules that refuse the delete.
///
/// ```swift
/// let plan = try context.deletionPlan(for: [chat])
/// plan.deleted         // ["GroupChat": 1, "ChatMember": 12, "Message": 4_812, "Reaction": 903, "Attachment": 77]
/// plan.nullified       // ["User.sentMessages": 4_812, "Message.replyTo": 3, …]
/// plan.denied          // [] — or the objects whose Deny rule refuses it
/// ```
/// The same planning runs inside a save that deletes objects, in its transaction, and drives the set-based
/// statements that carry the delete out.
public struct DeletionPlan: Sendable, Equatable {
    /// An object whose Deny rule refuses the delete: its relationship still holds objects that would survive.
    public struct Blocker: Sendable, Equatable, CustomStringConvertible {
        /// The object's URI (`x-coredata://…/User/p1`).
        public var object: String
        public var entity: String
        public var relationship: String
        /// How many objects in the relationship block the delete.
        public var count: Int

        public init(object: String, entity: String, relationship: String, count: Int) {
            self.object = object
            self.entity = entity
            self.relationship = relationship
            self.count = count
        }

        public var description: String {
            "\(object): \(entity).\(relationship) still holds \(count) object\(count == 1 ? "" : "s") (delete rule Deny)"
        }
    }

    /// Objects deleted, by entity name (sub-entities under their own names).
    public var deleted: [String: Int] = [:]
    /// References that surviving objects lose, by the surviving side's relationship (`"User.sentMessages"`); a
    /// relationship with no inverse is named from the side that held the reference (`"Message.forwardedFrom"`).
    public var nullified: [String: Int] = [:]
    /// Deny rules that refuse the delete, in a stable order; empty when the delete may go ahead.
    public var denied: [Blocker] = []

    public init(deleted: [String: Int] = [:], nullified: [String: Int] = [:], denied: [Blocker] = []) {
        self.deleted = deleted
        self.nullified = nullified
        self.denied = denied
    }

    public var isDenied: Bool { !denied.isEmpty }

    /// The number of objects deleted in all.
    public var deletedCount: Int { deleted.values.reduce(0, +) }
}
