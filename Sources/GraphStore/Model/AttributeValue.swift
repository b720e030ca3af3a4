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

    public var isNull: Bool { self == .null }
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
