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

    /// An ID no object has, for places that mark a slot in an ID's own words instead of a separate flag (the empty
    /// and removed slots of `ObjectIDTable`, a row's missing to-one key, `RowKey`): its entity number is one no model
    /// gives (entity numbers are small and positive, and a store's are read into the model's range, `stored`).
    static func marker(_ primaryKey: Int64) -> ObjectID { ObjectID(entityNumber: .min, primaryKey: primaryKey) }

    /// Whether this is a `marker(_:)`.
    @inline(__always) var isMarker: Bool { entityNumber == .min }

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

/// Which stored attributes and to-ones a partial row holds, by slot: one value shared by every row a statement
/// read, so a partial row costs nothing more than a complete one.
public final class LoadedProperties: Sendable, Equatable, CustomStringConvertible {
    /// One flag per stored attribute, in `EntityMapping.attributes`' order.
    public let attributes: [Bool]
    /// One flag per stored to-one, in `EntityMapping.toOnes`' order.
    public let toOnes: [Bool]
    /// The names held, attributes first, in slot order.
    public let names: [String]

    init(attributes: [Bool], toOnes: [Bool], names: [String]) {
        self.attributes = attributes
        self.toOnes = toOnes
        self.names = names
    }

    /// The properties of `mapping` named in `names` (others are ignored); nil when that is all of them.
    static func of(_ mapping: EntityMapping, named names: Set<String>) -> LoadedProperties? {
        let attributes = mapping.attributes.map { names.contains($0.name) }
        let toOnes = mapping.toOnes.map { names.contains($0.name) }
        guard attributes.contains(false) || toOnes.contains(false) else { return nil }
        let held = zip(mapping.attributes, attributes).filter(\.1).map(\.0.name) + zip(mapping.toOnes, toOnes).filter(\.1).map(\.0.name)
        return LoadedProperties(attributes: attributes, toOnes: toOnes, names: held)
    }

    /// Whether every flag is set.
    var isEverything: Bool { !attributes.contains(false) && !toOnes.contains(false) }

    /// Whether this holds everything `other` holds.
    func contains(_ other: LoadedProperties) -> Bool {
        // Rows one statement read share one value.
        if self === other { return true }
        return zip(attributes, other.attributes).allSatisfy { $0 || !$1 } && zip(toOnes, other.toOnes).allSatisfy { $0 || !$1 }
    }

    func union(_ other: LoadedProperties) -> LoadedProperties {
        let attributes = zip(self.attributes, other.attributes).map { $0 || $1 }
        let toOnes = zip(self.toOnes, other.toOnes).map { $0 || $1 }
        return LoadedProperties(attributes: attributes, toOnes: toOnes, names: Array(Set(names).union(other.names)).sorted())
    }

    public static func == (lhs: LoadedProperties, rhs: LoadedProperties) -> Bool {
        lhs.attributes == rhs.attributes && lhs.toOnes == rhs.toOnes
    }

    public var description: String { names.joined(separator: ", ") }
}
