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

    /// Surviving objects the delete's Nullify rules would leave without what one of their relationships requires:
    /// a required to-one cleared, or a to-many left with fewer members than it needs (a required one needs one; its
    /// minimum count more). The save validates them, as Core Data's does, and refuses the delete.
    public struct Shortfall: Sendable, Equatable, CustomStringConvertible {
        /// The entity that declares the relationship, and its name: `Book`, `pages`.
        public var entity: String
        public var relationship: String
        /// How many surviving objects fall short.
        public var count: Int
        /// The URI of the first of them by primary key.
        public var first: String
        /// The members the relationship needs: nil for a to-one (it needs its destination).
        public var leastMembers: Int?

        public init(entity: String, relationship: String, count: Int, first: String, leastMembers: Int?) {
            self.entity = entity
            self.relationship = relationship
            self.count = count
            self.first = first
            self.leastMembers = leastMembers
        }

        /// What the survivors would lack, after the relationship's name: `is required, and would be cleared`.
        public var reason: String {
            guard let least = leastMembers else { return "is required, and would be cleared" }
            return "would keep fewer than \(least) member\(least == 1 ? "" : "s"), at least \(least) required"
        }

        /// `Book.author is required, and would be cleared: 2 objects (first x-coredata://…/Book/p1)`.
        public var description: String {
            "\(entity).\(relationship) \(reason): \(count) object\(count == 1 ? "" : "s") (first \(first))"
        }
    }

    /// Objects deleted, by entity name (sub-entities under their own names).
    public var deleted: [String: Int] = [:]
    /// References that surviving objects lose, by the surviving side's relationship (`"User.sentMessages"`); a
    /// relationship with no inverse is named from the side that held the reference (`"Message.forwardedFrom"`).
    public var nullified: [String: Int] = [:]
    /// Deny rules that refuse the delete, in a stable order; empty when the delete may go ahead.
    public var denied: [Blocker] = []
    /// Survivors the delete would leave invalid, by entity and relationship name; the save refuses a delete with
    /// any (it fails validation). Planned from the store as it is: unsaved inserts that make up for a loss count
    /// only at the save.
    public var shortfalls: [Shortfall] = []

    public init(deleted: [String: Int] = [:], nullified: [String: Int] = [:], denied: [Blocker] = []) {
        self.deleted = deleted
        self.nullified = nullified
        self.denied = denied
    }

    public var isDenied: Bool { !denied.isEmpty }

    /// Whether the save would refuse the delete: a Deny rule, or a survivor left invalid.
    public var isRefused: Bool { isDenied || !shortfalls.isEmpty }

    /// The number of objects deleted in all.
    public var deletedCount: Int { deleted.values.reduce(0, +) }
}
