/// A piece of an entity declaration inside an `EntityDescription { … }` block.
public protocol EntityPart {
    func add(to entity: inout EntityDescription)
}

extension AttributeDescription: EntityPart {
    public func add(to entity: inout EntityDescription) { entity.attributes.append(self) }
}

extension RelationshipDescription: EntityPart {
    public func add(to entity: inout EntityDescription) { entity.relationships.append(self) }
}

extension FetchIndexDescription: EntityPart {
    public func add(to entity: inout EntityDescription) { entity.fetchIndexes.append(self) }
}

/// A uniqueness constraint inside an entity block: `Unique("firstName", "lastName")`.
public struct UniquenessConstraint: EntityPart {
    public var properties: [String]
    public init(_ properties: String...) { self.properties = properties }
    public func add(to entity: inout EntityDescription) { entity.uniquenessConstraints.append(properties) }
}

@resultBuilder
public enum EntityBuilder {
    public static func buildExpression<Part: EntityPart>(_ part: Part) -> [any EntityPart] { [part] }
    public static func buildBlock(_ parts: [any EntityPart]...) -> [any EntityPart] { parts.flatMap { $0 } }
    public static func buildOptional(_ parts: [any EntityPart]?) -> [any EntityPart] { parts ?? [] }
    public static func buildEither(first parts: [any EntityPart]) -> [any EntityPart] { parts }
    public static func buildEither(second parts: [any EntityPart]) -> [any EntityPart] { parts }
    public static func buildArray(_ parts: [[any EntityPart]]) -> [any EntityPart] { parts.flatMap { $0 } }
}

@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ entity: EntityDescription) -> [EntityDescription] { [entity] }
    public static func buildBlock(_ entities: [EntityDescription]...) -> [EntityDescription] { entities.flatMap { $0 } }
    public static func buildOptional(_ entities: [EntityDescription]?) -> [EntityDescription] { entities ?? [] }
    public static func buildEither(first entities: [EntityDescription]) -> [EntityDescription] { entities }
    public static func buildEither(second entities: [EntityDescription]) -> [EntityDescription] { entities }
    public static func buildArray(_ entities: [[EntityDescription]]) -> [EntityDescription] { entities.flatMap { $0 } }
}

extension EntityDescription {
    /// Declares an entity from a block of attributes, relationships, indexes and constraints.
    public init(_ name: String, abstract: Bool = false, parent: String? = nil, @EntityBuilder _ parts: () -> [any EntityPart]) {
        self.init(name: name, isAbstract: abstract, parent: parent)
        for part in parts() { part.add(to: &self) }
    }
}

extension ObjectModel {
    /// Builds and validates a model from a block of entity declarations.
    public init(@ModelBuilder _ entities: () -> [EntityDescription]) throws(ModelError) {
        try self.init(entities())
    }
}

/// Short names for use inside `EntityDescription { … }` blocks.
public typealias Attribute = AttributeDescription
public typealias Relationship = RelationshipDescription
public typealias FetchIndex = FetchIndexDescription
public typealias Unique = UniquenessConstraint

extension AttributeDescription {
    /// An attribute, optional unless `.required()` is applied (as Xcode creates them).
    public init(_ name: String, _ type: AttributeType) {
        self.init(name: name, type: type)
    }

    /// A derived attribute kept by the store, e.g. `Attribute.derived("membersCount", "members.@count")`.
    public static func derived(_ name: String, _ expression: String, _ type: AttributeType = .integer64) -> AttributeDescription {
        AttributeDescription(name: name, type: type, derivation: expression)
    }
}

extension RelationshipDescription {
    /// A to-one relationship.
    public static func toOne(
        _ name: String, _ destination: String, inverse: String?, deleteRule: DeleteRule = .nullify
    ) -> RelationshipDescription {
        RelationshipDescription(name: name, destination: destination, inverse: inverse, isToMany: false, deleteRule: deleteRule)
    }

    /// A to-many relationship, unordered unless `ordered` is set.
    public static func toMany(
        _ name: String, _ destination: String, inverse: String?, ordered: Bool = false,
        deleteRule: DeleteRule = .nullify, minCount: Int = 0, maxCount: Int = 0
    ) -> RelationshipDescription {
        RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: true, isOrdered: ordered,
            deleteRule: deleteRule, minCount: minCount, maxCount: maxCount)
    }
}

extension FetchIndexDescription {
    /// A fetch index over properties, ascending: `FetchIndex("byMaker", "maker", "model")`.
    public init(_ name: String, _ properties: String...) {
        self.init(name: name, elements: properties.map { Element(property: $0) })
    }
}

// Modifiers read as Xcode's inspector checkboxes.
extension AttributeDescription {
    public func required() -> Self { with { $0.isOptional = false } }
    public func transient() -> Self { with { $0.isTransient = true } }
    public func indexed() -> Self { with { $0.isIndexed = true } }
    public func defaultValue(_ text: String) -> Self { with { $0.defaultValue = text } }
    public func minimum(_ text: String) -> Self { with { $0.minValue = text } }
    public func maximum(_ text: String) -> Self { with { $0.maxValue = text } }
    public func matching(_ pattern: String) -> Self { with { $0.regularExpression = pattern } }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}

extension RelationshipDescription {
    public func required() -> Self { with { $0.isOptional = false } }
    public func transient() -> Self { with { $0.isTransient = true } }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}
