/// The storage type of an attribute, spelled as Xcode writes it in a model file (`attributeType="Integer 64"`).
public enum AttributeType: String, Codable, Sendable, CaseIterable, Hashable {
    case integer16 = "Integer 16"
    case integer32 = "Integer 32"
    case integer64 = "Integer 64"
    case decimal = "Decimal"
    case double = "Double"
    case float = "Float"
    case string = "String"
    case boolean = "Boolean"
    case date = "Date"
    case binaryData = "Binary"
    case uuid = "UUID"
    case uri = "URI"
    case transformable = "Transformable"
    case objectID = "ObjectID"

    /// The SQLite column type Core Data declares for this attribute type.
    public var columnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float: "FLOAT"
        case .decimal: "DECIMAL"
        case .string, .uri: "VARCHAR"
        case .date: "TIMESTAMP"
        case .binaryData, .transformable, .uuid: "BLOB"
        case .objectID: "VARCHAR"
        }
    }

    /// Whether values of this type can be compared with `<` and `>` (and so carry min/max validation as numbers).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float: true
        default: false
        }
    }

    /// The inclusive range an integer attribute's values must lie in, or nil for non-integer types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}

/// What happens to the destination of a relationship when its source object is deleted.
public enum DeleteRule: String, Codable, Sendable, CaseIterable, Hashable {
    /// Remove the deleted object from the destination's inverse.
    case nullify = "Nullify"
    /// Delete the destination objects too, each by its own rules.
    case cascade = "Cascade"
    /// Refuse the delete while the relationship is not empty.
    case deny = "Deny"
    /// Leave references to the deleted object as they are.
    case noAction = "No Action"
}
