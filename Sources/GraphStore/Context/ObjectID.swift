/// Identifies one object of a store: its entity's `Z_ENT` number and its `Z_PK`.
///
/// Inserted objects get a temporary ID (a negative key) until their first save gives them a permanent one.
/// `ObjectContext.uri(for:)` prints an ID as Core Data does: `x-coredata://<store UUID>/<Entity>/p<pk>`.
public struct ObjectID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let entityNumber: Int
    public let primaryKey: Int64

    public init(entityNumber: Int, primaryKey: Int64) {
        self.entityNumber = entityNumber
        self.primaryKey = primaryKey
    }

    public var isTemporary: Bool { primaryKey < 0 }

    /// The ID of a row, or of a key, read from the store. A damaged store can hold any number where an entity
    /// number or a key goes (and SQLite reads text there as 0): an entity number outside `entities` (the numbers
    /// the table or the to-one can hold) is read as `entities.lowerBound`, the entity it was declared for, and a
    /// negative key, which would pass for a temporary ID, as 0, a key no object has. `faultline check` reports both.
    static func stored(entity: Int64, of entities: ClosedRange<Int>, key: Int64) -> ObjectID {
        let number = entity >= Int64(entities.lowerBound) && entity <= Int64(entities.upperBound) ? Int(entity) : entities.lowerBound
        return ObjectID(entityNumber: number, primaryKey: key < 0 ? 0 : key)
    }

    /// One word hashed, not two: IDs are hashed on every registry and change-tracking lookup. Keys stay below
    /// 2^52 (temporary ones are small negatives) and entity numbers below 2^12, so distinct IDs rarely collide.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(bitPattern: primaryKey) ^ (UInt64(truncatingIfNeeded: entityNumber) << 52))
    }

    /// `<entity number>/p<pk>` (or `t<n>` while temporary); use the context's `uri(for:)` for the full URI.
    public var description: String {
        isTemporary ? "\(entityNumber)/t\(-primaryKey)" : "\(entityNumber)/p\(primaryKey)"
    }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entityNumber, lhs.primaryKey) < (rhs.entityNumber, rhs.primaryKey)
    }
}

/// The persisted state of one row, as read from SQLite or written by a save: immutable, shared between contexts
/// through the coordinator's row cache.
public final class RowSnapshot: Sendable {
    public let objectID: ObjectID
    /// `Z_OPT`: the row's version, checked by optimistic locking.
    public let version: Int64
    /// One value per stored attribute, in the order of the entity's stored attributes (`EntityMapping`).
    public let values: [AttributeValue]
    /// One destination per stored to-one relationship, in the order of the entity's stored to-ones.
    public let toOneKeys: [ObjectID?]

    public init(objectID: ObjectID, version: Int64, values: [AttributeValue], toOneKeys: [ObjectID?]) {
        self.objectID = objectID
        self.version = version
        self.values = values
        self.toOneKeys = toOneKeys
    }
}
