/// One persistent or transient value of an entity, as declared in a model.
///
/// Values that Xcode writes as strings (`defaultValueString`, `minValueString`…) are kept as those strings, so
/// that a model read from a file and one declared in code compare equal; typed views are derived from them.
public struct AttributeDescription: Hashable, Codable, Sendable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isTransient: Bool
    /// Xcode's `defaultValueString` (`YES`/`NO` for booleans, a number, a string).
    public var defaultValue: String?
    /// Xcode's `minValueString`: the lowest number, or the shortest length of a string.
    public var minValue: String?
    /// Xcode's `maxValueString`: the highest number, or the longest length of a string.
    public var maxValue: String?
    /// Xcode's `regularExpressionString`, which string values must match.
    public var regularExpression: String?
    /// Xcode's `derivationExpression` for a derived attribute, e.g. `members.@count`.
    public var derivation: String?
    /// Xcode's legacy `indexed="YES"`: a single-column index named `<TABLE>_<COLUMN>_INDEX`.
    public var isIndexed: Bool

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: String? = nil, minValue: String? = nil, maxValue: String? = nil,
        regularExpression: String? = nil, derivation: String? = nil, isIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.regularExpression = regularExpression
        self.derivation = derivation
        self.isIndexed = isIndexed
    }

    /// Whether the attribute's value is computed by the store rather than set by code.
    public var isDerived: Bool { derivation != nil }

    /// Whether the attribute has a column in the store.
    public var isPersistent: Bool { !isTransient }
}

/// A link from one entity to another, as declared in a model.
public struct RelationshipDescription: Hashable, Codable, Sendable {
    public var name: String
    public var destination: String
    /// The name of the relationship on the destination that points back, or nil (one-to-nil, many-to-nil).
    public var inverse: String?
    public var isToMany: Bool
    public var isOrdered: Bool
    public var isOptional: Bool
    public var isTransient: Bool
    public var deleteRule: DeleteRule
    /// The fewest destination objects a to-many may hold (0: no lower bound).
    public var minCount: Int
    /// The most destination objects a to-many may hold (0: no upper bound).
    public var maxCount: Int

    public init(
        name: String, destination: String, inverse: String?, isToMany: Bool, isOrdered: Bool = false,
        isOptional: Bool = true, isTransient: Bool = false, deleteRule: DeleteRule = .nullify,
        minCount: Int = 0, maxCount: Int = 0
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
    }

    public var isToOne: Bool { !isToMany }
    public var isPersistent: Bool { !isTransient }
}

/// A named index over one or more properties (Xcode's `fetchIndex`).
public struct FetchIndexDescription: Hashable, Codable, Sendable {
    public struct Element: Hashable, Codable, Sendable {
        public var property: String
        /// Xcode's element type: `Binary` (an ordinary B-tree index) or `RTree`.
        public var kind: String
        public var isAscending: Bool

        public init(property: String, kind: String = "Binary", isAscending: Bool = true) {
            self.property = property
            self.kind = kind
            self.isAscending = isAscending
        }
    }

    public var name: String
    public var elements: [Element]

    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

/// One entity as declared: its own properties only (inherited ones live on the parent).
public struct EntityDescription: Hashable, Codable, Sendable {
    public var name: String
    public var isAbstract: Bool
    public var parent: String?
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    public var fetchIndexes: [FetchIndexDescription]
    /// Each constraint is a list of property names whose values together must be unique.
    public var uniquenessConstraints: [[String]]

    public init(
        name: String, isAbstract: Bool = false, parent: String? = nil,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        fetchIndexes: [FetchIndexDescription] = [], uniquenessConstraints: [[String]] = []
    ) {
        self.name = name
        self.isAbstract = isAbstract
        self.parent = parent
        self.attributes = attributes
        self.relationships = relationships
        self.fetchIndexes = fetchIndexes
        self.uniquenessConstraints = uniquenessConstraints
    }
}

extension EntityDescription {
    /// The same declaration with attributes, relationships and fetch indexes sorted by name.
    public var normalized: EntityDescription {
        var copy = self
        copy.attributes.sort { $0.name < $1.name }
        copy.relationships.sort { $0.name < $1.name }
        copy.fetchIndexes.sort { $0.name < $1.name }
        return copy
    }
}
