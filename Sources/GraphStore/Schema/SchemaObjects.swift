/// A column of a store table.
public struct Column: Hashable, Sendable {
    public let name: String
    /// The declared SQLite type (`INTEGER`, `VARCHAR`, `TIMESTAMP`…).
    public let type: String
}

/// An index of a store table, as `CREATE [UNIQUE] INDEX` will write it.
public struct IndexDefinition: Hashable, Sendable {
    public let name: String
    public let table: String
    /// Indexed terms as written in the statement, e.g. `ZMAKER COLLATE BINARY ASC` or `Z_2BOOKS`.
    public let terms: [String]
    public let isUnique: Bool

    public var createStatement: String {
        "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(terms.joined(separator: ", ")))"
    }
}

/// The table holding every row of one root entity and its sub-entities (`ZCONTACT` for Contact, User, Group).
public struct EntityTable: Hashable, Sendable {
    public let name: String
    public let rootEntity: String
    /// `Z_ENT` numbers of the entities whose rows live here, root first.
    public let entityNumbers: [Int]
    /// `Z_PK`, `Z_ENT`, `Z_OPT`, then the property columns.
    public let columns: [Column]
    public let indexes: [IndexDefinition]

    public var createStatement: String {
        let list = columns.enumerated().map { offset, column in
            offset == 0 ? "\(column.name) \(column.type) PRIMARY KEY" : "\(column.name) \(column.type)"
        }
        return "CREATE TABLE \(name) ( \(list.joined(separator: ", ")) )"
    }
}

/// A table of links for a many-to-many (or, in Faultline, a many-to-nil) relationship.
public struct JoinTable: Hashable, Sendable {
    public let name: String
    /// The two key columns, then an order column per ordered side.
    public let columns: [Column]
    public let primaryKey: [String]
    public let indexes: [IndexDefinition]

    public var createStatement: String {
        let list = columns.map { "\($0.name) \($0.type)" } + ["PRIMARY KEY (\(primaryKey.joined(separator: ", ")))"]
        return "CREATE TABLE \(name) ( \(list.joined(separator: ", ")) )"
    }
}

/// A trigger the store installs (derived attributes).
public struct TriggerDefinition: Hashable, Sendable {
    public let name: String
    public let table: String
    /// The full `CREATE TRIGGER` statement.
    public let createStatement: String
    /// The names earlier versions of GraphStore gave a trigger doing this one's work (stores they made keep them): a
    /// store holding any of them keeps the derived attribute up to date as well.
    public let earlierNames: [String]
    /// Whether Core Data gives its own trigger for this work the same name (checked against stores it wrote): only
    /// such a trigger is looked for in a store Core Data made, whose other triggers are named its own way.
    public let isNamedAsCoreData: Bool

    public init(name: String, table: String, createStatement: String, earlierNames: [String] = [], isNamedAsCoreData: Bool = false) {
        self.name = name
        self.table = table
        self.createStatement = createStatement
        self.earlierNames = earlierNames
        self.isNamedAsCoreData = isNamedAsCoreData
    }

    /// Whether a store whose triggers are `present` has this one, under its name or an earlier one.
    public func isPresent(in present: Set<String>) -> Bool {
        present.contains(name) || earlierNames.contains(where: present.contains)
    }
}

/// Where a relationship's links are kept.
public enum RelationshipStorage: Hashable, Sendable {
    /// A to-one: the destination's `Z_PK` in `column` of the source's table; `entityColumn` holds its `Z_ENT` when
    /// the destination has sub-entities; `orderColumn` holds this row's position in the ordered to-many inverse.
    case foreignKey(column: String, entityColumn: String?, orderColumn: String?)
    /// A to-many whose inverse is a to-one: the destination table's foreign key `column` points back at the source.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A to-many kept in a join table: `sourceColumn` holds the source's `Z_PK`, `destinationColumn` the destination's.
    /// `isSymmetric` for a self-inverse relationship, whose links are stored in both directions.
    case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?, isSymmetric: Bool)
    /// Transient relationships have no storage.
    case transient
}

/// The fixed bookkeeping tables every store has.
public enum BookkeepingTables {
    public static let primaryKey = "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    public static let metadata = "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"
    public static let modelCache = "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)"
    public static let all = [primaryKey, metadata, modelCache]
    public static let names = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
}
