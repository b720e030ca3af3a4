/// What `StoreIntegrityCheck` found in a store: row counts, and every rule the rows break.
public struct IntegrityReport: Hashable, Sendable {
    /// Which rule a violation breaks, in the order the checks run.
    public enum Kind: String, CaseIterable, Codable, Hashable, Sendable {
        /// `PRAGMA integrity_check` found damage in the SQLite file itself.
        case integrity
        /// A table, column, index or trigger the model calls for is missing.
        case schema
        /// `Z_METADATA`'s model identity disagrees with the model in `Z_MODELCACHE`.
        case modelIdentity
        /// A row's `Z_ENT` is not a concrete entity of its table.
        case entityNumber
        /// `Z_PRIMARYKEY.Z_MAX` is below keys already in use (or missing).
        case primaryKey
        /// A to-one's key (or its entity column) points at no row, or at a row of an entity it may not hold.
        case foreignKey
        /// A join-table row points at no row, or at a row of an entity the relationship may not hold.
        case joinTable
        /// The two sides of a relationship disagree.
        case inverse
        /// A derived attribute (`x.@count`, `toOne.attribute`) differs from what it is derived from.
        case derived
        /// An attribute's column holds a value its type cannot be read from: text where an integer belongs, a number
        /// out of an Integer 16's range, a UUID that is not 16 bytes.
        case valueType
    }

    public struct Violation: Hashable, Sendable, CustomStringConvertible {
        public let kind: Kind
        /// The entity of the object at fault, when the rule concerns one.
        public let entity: String?
        /// The object's URI, `x-coredata://<store UUID>/<Entity>/p<pk>`, when the rule concerns one row.
        public let object: String?
        /// The relationship, attribute or column concerned.
        public let key: String?
        public let message: String

        public init(kind: Kind, entity: String?, object: String?, key: String?, message: String) {
            self.kind = kind
            self.entity = entity
            self.object = object
            self.key = key
            self.message = message
        }

        /// One line: `foreignKey Message.chat x-coredata://…/Message/p7: <message>`.
        public var description: String {
            var subject: [String] = []
            switch (entity, key) {
            case (let entity?, let key?): subject.append("\(entity).\(key)")
            case (let entity?, nil): subject.append(entity)
            case (nil, let key?): subject.append(key)
            case (nil, nil): break
            }
            if let object { subject.append(object) }
            let head = ([kind.rawValue] + subject).joined(separator: " ")
            return "\(head): \(message)"
        }
    }

    /// Rows of one entity (exactly that `Z_ENT`; a table with one entity counts all its rows), or of one join table.
    public struct RowCount: Hashable, Sendable {
        public let name: String
        public let table: String
        public let rows: Int
    }

    public let path: String
    /// `Z_METADATA.Z_UUID`, as in object URIs.
    public let storeUUID: String
    /// The model recorded in `Z_MODELCACHE`, which the store was checked against.
    public let model: ObjectModel
    /// One entry per entity, in entity-number order.
    public let entities: [RowCount]
    /// One entry per join table, in layout order.
    public let joinTables: [RowCount]
    /// The violations listed, grouped by kind in check order; at most the check's `limitPerKind` of each kind.
    public let violations: [Violation]
    /// How many violations of each kind were found, listed or not.
    public let violationCounts: [Kind: Int]

    public init(
        path: String, storeUUID: String, model: ObjectModel, entities: [RowCount], joinTables: [RowCount],
        violations: [Violation], violationCounts: [Kind: Int]
    ) {
        self.path = path
        self.storeUUID = storeUUID
        self.model = model
        self.entities = entities
        self.joinTables = joinTables
        self.violations = violations
        self.violationCounts = violationCounts
    }

    /// Every violation found, listed or not.
    public var violationCount: Int { violationCounts.values.reduce(0, +) }

    public var isOK: Bool { violationCount == 0 }

    /// Violations of `kind` found but not listed (beyond the limit).
    public func unlistedCount(of kind: Kind) -> Int {
        (violationCounts[kind] ?? 0) - violations.count { $0.kind == kind }
    }

    /// The listed violations of one kind.
    public func violations(of kind: Kind) -> [Violation] {
        violations.filter { $0.kind == kind }
    }
}
