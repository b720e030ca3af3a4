import Foundation

/// The rules of one entity, worked out once per save from its mapping; properties without rules are left out. A
/// class: the save checks every object it writes against its entity's rules, and handing them over should cost one
/// reference, not a copy of three arrays.
final class ValidationRules {
    struct AttributeRule {
        let index: Int
        let name: String
        let type: AttributeType
        let isRequired: Bool
        let minimum: String?
        let maximum: String?
        let pattern: String?

        /// Why `value` breaks the rule, or nil when it does not.
        func problem(with value: AttributeValue) -> String? {
            if case .null = value { return isRequired ? "is required" : nil }
            if let minimum, let order = compare(value, minimum), order == .orderedAscending {
                return boundPhrase("at least", minimum)
            }
            if let maximum, let order = compare(value, maximum), order == .orderedDescending {
                return boundPhrase("at most", maximum)
            }
            if let pattern, case .string(let text) = value, !PredicateFunctions.matches(text, pattern, .matches, options: []) {
                return "must match \(pattern)"
            }
            return nil
        }

        /// How `value` sits against a bound written as Xcode writes it; nil when they do not compare.
        private func compare(_ value: AttributeValue, _ bound: String) -> ComparisonResult? {
            let text = bound.trimmingCharacters(in: .whitespaces)
            func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
                a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
            }
            switch value {
            case .integer(let number):
                if let limit = Int64(text) { return order(number, limit) }
                return Double(text).map { order(Double(number), $0) }
            case .double(let number):
                return Double(text).map { order(number, $0) }
            case .decimal(let number):
                return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { order(number, $0) }
            case .date(let date):
                return Double(text).map { order(date.timeIntervalSinceReferenceDate, $0) }
            case .string(let string):
                return Double(text).map { order(Double(string.utf16.count), $0) }
            case .data(let data) where type == .binaryData:
                return Double(text).map { order(Double(data.count), $0) }
            default:
                return nil
            }
        }

        private func boundPhrase(_ side: String, _ bound: String) -> String {
            let text = bound.trimmingCharacters(in: .whitespaces)
            switch type {
            case .string: return "must have \(side) \(text) characters"
            case .binaryData: return "must have \(side) \(text) bytes"
            case .date:
                let date = Double(text).map { Date(timeIntervalSinceReferenceDate: $0) }
                return "must be \(side == "at least" ? "no earlier than" : "no later than") \(date.map(ValidationRules.iso8601) ?? text)"
            default: return "must be \(side) \(text)"
            }
        }
    }

    struct ToOneRule {
        let index: Int
        let name: String
    }

    struct ToManyRule {
        let index: Int
        let name: String
        let isRequired: Bool
        let minCount: Int
        let maxCount: Int

        func problem(withCount count: Int) -> String? {
            if count == 0 && !isRequired { return nil }
            let least = max(minCount, isRequired ? 1 : 0)
            if count < least { return "has \(Self.members(count)), at least \(least) required" }
            if maxCount > 0 && count > maxCount { return "has \(Self.members(count)), at most \(maxCount) allowed" }
            return nil
        }

        static func members(_ count: Int) -> String { count == 1 ? "1 member" : "\(count) members" }
    }

    let attributes: [AttributeRule]
    let toOnes: [ToOneRule]
    let toManys: [ToManyRule]

    init(_ mapping: EntityMapping) {
        attributes = mapping.attributes.enumerated().compactMap { index, stored in
            let description = stored.description
            guard !description.isDerived, !description.isTransient else { return nil }
            let rule = AttributeRule(index: index, name: stored.name, type: stored.type, isRequired: !description.isOptional,
                                     minimum: description.minValue, maximum: description.maxValue,
                                     pattern: stored.type == .string ? description.regularExpression : nil)
            return rule.isRequired || rule.minimum != nil || rule.maximum != nil || rule.pattern != nil ? rule : nil
        }
        toOnes = mapping.toOnes.enumerated().compactMap { index, toOne in
            toOne.description.isOptional ? nil : ToOneRule(index: index, name: toOne.name)
        }
        toManys = mapping.toManys.enumerated().compactMap { index, toMany in
            let description = toMany.description
            guard !description.isOptional || description.minCount > 0 || description.maxCount > 0 else { return nil }
            return ToManyRule(index: index, name: toMany.name, isRequired: !description.isOptional,
                              minCount: description.minCount, maxCount: description.maxCount)
        }
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// A value as a failure message shows it.
    static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .decimal(let number): number.description
        case .string(let text): "'\(text)'"
        case .boolean(let flag): flag ? "YES" : "NO"
        case .date(let date): iso8601(date)
        case .data(let data): "<\(data.count) bytes>"
        case .uuid(let uuid): uuid.uuidString
        case .uri(let url): url.absoluteString
        }
    }
}
