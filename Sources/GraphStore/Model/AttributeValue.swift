import Foundation

/// A value of an attribute, as objects hold it and the store writes it.
public enum AttributeValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case boolean(Bool)
    case date(Date)
    /// Binary Data and Transformable attributes.
    case data(Data)
    case uuid(UUID)
    case uri(URL)

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension AttributeValue {
    /// Two values are equal when the store would call them equal. Text is compared byte for byte, as SQLite compares
    /// it (BINARY): a precomposed `é` and `e` followed by a combining acute are two values to the store, which a
    /// predicate, a unique index or a changed attribute must tell apart. (`String`'s own `==` calls them equal, and
    /// a fetch whose predicate named one then reused the statement made for the other, bound to the other's bytes.)
    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.decimal(let a), .decimal(let b)): a == b
        case (.string(let a), .string(let b)): Self.sameBytes(a, b)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.uri(let a), .uri(let b)): a == b
        default: false
        }
    }

    /// Hashes what `==` compares: a string's bytes, not its characters.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .double(let value): hasher.combine(2); hasher.combine(value)
        case .decimal(let value): hasher.combine(3); hasher.combine(value)
        case .string(let value):
            hasher.combine(4)
            var text = value
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .boolean(let value): hasher.combine(5); hasher.combine(value)
        case .date(let value): hasher.combine(6); hasher.combine(value)
        case .data(let value): hasher.combine(7); hasher.combine(value)
        case .uuid(let value): hasher.combine(8); hasher.combine(value)
        case .uri(let value): hasher.combine(9); hasher.combine(value)
        }
    }

    /// Whether two strings hold the same UTF-8 bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
    }
}

/// Reads the strings Xcode writes for attribute values (`defaultValueString` and friends).
public enum AttributeValueText {
    /// The typed value of `text` for an attribute of `type`, or nil when the text is not a value of that type.
    public static func parse(_ text: String, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            // cannot fail: every integer type has a range.
            guard let number = Int64(text.trimmingCharacters(in: .whitespaces)), type.integerRange!.contains(number) else { return nil }
            return .integer(number)
        case .double, .float:
            return Double(text.trimmingCharacters(in: .whitespaces)).map(AttributeValue.double)
        case .decimal:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard Double(trimmed) != nil, let decimal = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            return .decimal(decimal)
        case .string:
            return .string(text)
        case .boolean:
            switch text.uppercased() {
            case "YES", "TRUE", "1": return .boolean(true)
            case "NO", "FALSE", "0": return .boolean(false)
            default: return nil
            }
        case .date:
            if let seconds = Double(text) { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            return (try? Date(text, strategy: .iso8601)).map(AttributeValue.date)
        case .uuid:
            return UUID(uuidString: text).map(AttributeValue.uuid)
        case .uri:
            return URL(string: text).map(AttributeValue.uri)
        case .binaryData, .transformable, .objectID:
            return nil
        }
    }
}
