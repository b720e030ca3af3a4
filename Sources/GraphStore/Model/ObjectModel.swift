/// A validated model: entities with their numbers, inheritance resolved, inverses checked.
///
/// ```swift
/// let model = try ObjectModel {
///     EntityDescription("Student") {
///         Attribute("name", .string)
///         Relationship.toOne("address", "Address", inverse: "student")
///     }
///     EntityDescription("Address") {
///         Attribute("street", .string)
///         Relationship.toOne("student", "Student", inverse: "address")
///     }
/// }
/// ```
public struct ObjectModel: Hashable, Sendable {
    /// Entities in entity-number order (number 1 first).
    public let entities: [Entity]
    /// Likely mistakes that do not stop the model from working.
    public let warnings: [ModelWarning]
    private let indexByName: [String: Int]

    /// Builds a model from declarations, in any order. Throws a `ModelError` listing every problem found.
    public init(_ declarations: [EntityDescription]) throws(ModelError) {
        var resolver = ModelResolver(declarations)
        let resolved = try resolver.resolve()
        self.entities = resolved.entities
        self.warnings = resolved.warnings
        self.indexByName = Dictionary(uniqueKeysWithValues: resolved.entities.enumerated().map { ($1.name, $0) })
        // The resolver refuses names that differ only in case; this catches any generated name it did not foresee
        // before a store's DDL could fail halfway through.
        let collisions = StoreSchema(model: self).nameCollisions()
        if !collisions.isEmpty { throw ModelError(problems: collisions) }
    }

    /// The declarations this model was built from, in entity-number order.
    public var declarations: [EntityDescription] { entities.map(\.declaration) }

    public func entity(named name: String) -> Entity? {
        indexByName[name].map { entities[$0] }
    }

    /// The entity with the given `Z_ENT` number.
    public func entity(number: Int) -> Entity? {
        (1...entities.count).contains(number) ? entities[number - 1] : nil
    }

    /// The entity, then its parent, up to its root.
    public func lineage(of entity: Entity) -> [Entity] {
        var chain = [entity]
        while let parent = chain.last!.parentName.flatMap(self.entity(named:)) { chain.append(parent) }  // cannot fail: never empty
        return chain
    }

    /// The root of an entity's inheritance chain (itself when it has no parent).
    public func root(of entity: Entity) -> Entity {
        self.entity(named: entity.rootName)!  // cannot fail: the resolver sets rootName to an entity of the model
    }

    /// The relationship on the destination that points back, if the relationship has an inverse.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverse, let destination = entity(named: relationship.destination) else { return nil }
        return destination.relationship(named: name)
    }

    /// Two models are equal when they declare the same entities and properties; the order properties are declared
    /// in does not matter (Xcode writes them sorted by name, code declares them in any order).
    public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
        lhs.entities.map(\.declaration.normalized) == rhs.entities.map(\.declaration.normalized)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(entities.map(\.declaration.normalized)) }
}

/// One entity of a validated model, with what it inherits.
public struct Entity: Hashable, Sendable {
    /// The entity as declared (own properties only).
    public let declaration: EntityDescription
    /// Core Data's `Z_ENT`: roots in alphabetical order, each followed by its sub-entities depth-first.
    public let number: Int
    public let rootName: String
    /// Direct sub-entities, alphabetically.
    public let subentityNames: [String]
    /// Every entity below this one, depth-first in entity-number order.
    public let descendantNames: [String]
    /// Every attribute, inherited ones first.
    public let attributes: [AttributeDescription]
    /// Every relationship, inherited ones first.
    public let relationships: [RelationshipDescription]

    public var name: String { declaration.name }
    public var isAbstract: Bool { declaration.isAbstract }
    public var parentName: String? { declaration.parent }
    public var isRoot: Bool { declaration.parent == nil }
    public var hasSubentities: Bool { !subentityNames.isEmpty }
    /// The `Z_ENT` numbers of this entity and its descendants: entities are numbered depth-first, so a subtree's
    /// numbers are consecutive. A row of this entity, or a key pointing at one, carries one of these.
    public var subtreeNumbers: ClosedRange<Int> { number...(number + descendantNames.count) }

    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// Whether `other` is this entity or one of its sub-entities (at any depth).
    public func includes(_ other: String) -> Bool {
        other == name || descendantNames.contains(other)
    }
}
