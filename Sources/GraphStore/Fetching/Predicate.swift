import Foundation

/// A condition on objects of one entity, as a value: the `WHERE` clause of a fetch, or a test applied to objects in
/// memory. Build one from a format string, as written for `NSPredicate`,
///
/// ```swift
/// let recent = try Predicate(format: "sender.name BEGINSWITH[c] %@ AND sentAt > %@", "a", cutoff)
/// ```
///
/// or with the typed builder:
///
/// ```swift
/// let recent = Predicate.key("sender.name").beginsWith("a", options: .caseInsensitive) && .key("sentAt") > cutoff
/// let busy = Predicate.any("members", .key("role") == 1) || .key("members").count > 3
/// ```
///
/// A predicate knows nothing of a model until it is compiled (`PredicateCompiler`) or evaluated against an object,
/// so key paths are checked then.
public indirect enum Predicate: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// Two expressions compared, e.g. `name == "Ann"` or `ANY members.role == 1`.
    case comparison(Comparison)
    /// Every operand holds (an empty list holds).
    case and([Predicate])
    /// At least one operand holds (an empty list does not).
    case or([Predicate])
    case not(Predicate)
    /// A predicate over the destinations of a to-many key path (relative to each destination):
    /// `.quantified(.any, "members", .key("role") == 1)`.
    case quantified(Quantifier, String, Predicate)

    /// Which destinations of a to-many must satisfy a condition.
    public enum Quantifier: String, Sendable, Hashable, CaseIterable {
        /// At least one (`ANY`, also spelled `SOME`).
        case any = "ANY"
        /// Every one; holds for an empty relationship (`ALL`).
        case all = "ALL"
        /// Not one (`NONE`).
        case none = "NONE"
    }

    /// How a comparison relates its two sides.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case lessThan = "<"
        case lessThanOrEqual = "<="
        case greaterThan = ">"
        case greaterThanOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        /// A substring test on strings; on a to-many key path, membership of an object.
        case contains = "CONTAINS"
        /// A pattern with `*` (any run of characters) and `?` (one character), matching the whole string.
        case like = "LIKE"
        /// An ICU regular expression matching the whole string.
        case matches = "MATCHES"
        /// Membership of the left side in a list (or of a value in a to-many key path on the right).
        case `in` = "IN"
        /// `left BETWEEN {low, high}`, both ends included.
        case between = "BETWEEN"

        /// Whether the operator works on strings only.
        public var isStringSearch: Bool {
            switch self {
            case .beginsWith, .endsWith, .contains, .like, .matches: true
            default: false
            }
        }
    }

    /// String comparison options, written `[c]`, `[d]` or `[cd]` after the operator.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `[c]`: letters match whatever their case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: letters match whatever their accents (`é` matches `e`).
        public static let diacriticInsensitive = Options(rawValue: 2)

        /// The options as NSPredicate writes them (`[cd]`), or "" when there are none.
        public var formatSuffix: String {
            guard !isEmpty else { return "" }
            return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
    }

    /// One comparison: `modifier left operator[options] right`.
    public struct Comparison: Sendable, Hashable {
        /// `ANY`, `ALL` or `NONE` in front of a key path that goes through a to-many; nil for a plain comparison.
        public var modifier: Quantifier?
        public var left: Expression
        public var `operator`: Operator
        public var right: Expression
        public var options: Options

        public init(_ left: Expression, _ operator: Operator, _ right: Expression, options: Options = [], modifier: Quantifier? = nil) {
            self.modifier = modifier
            self.left = left
            self.operator = `operator`
            self.right = right
            self.options = options
        }
    }

    /// One side of a comparison.
    public indirect enum Expression: Sendable, Hashable {
        /// A key path from the evaluated object: an attribute, a to-one, or to-ones then an attribute.
        case keyPath(String)
        /// `SELF`: the evaluated object itself (compared with object IDs).
        case evaluatedObject
        /// A value given in the format string or as an argument.
        case constant(PredicateArgument)
        /// `$NAME`, to be replaced with `substituting(_:)` before use.
        case variable(String)
        /// A literal list, `{1, 2, $X}`.
        case list([Expression])
        /// `keyPath.@count`: the number of destinations of a to-many.
        case keyPathCount(String)
        /// `SUBQUERY(collection, $x, predicate).@count`: how many destinations of a to-many satisfy `predicate`,
        /// in which key paths starting with `$x.` are relative to the destination.
        case subqueryCount(collection: String, variable: String, predicate: Predicate)

        /// A key path expression, for the builder: `.key("sender.name")`.
        public static func key(_ keyPath: String) -> Expression { .keyPath(keyPath) }

        /// A constant expression, for the builder.
        public static func value(_ value: some PredicateArgumentConvertible) -> Expression { .constant(value.predicateArgument) }

        /// The number of destinations of this to-many key path (`members.@count`).
        public var count: Expression {
            guard case .keyPath(let path) = self else { return self }
            return .keyPathCount(path)
        }
    }
}

// MARK: - Arguments

/// A value put into a predicate: an attribute value, an object (by its ID) or a list of them.
public enum PredicateArgument: Sendable, Hashable {
    case value(AttributeValue)
    case objectID(ObjectID)
    case list([PredicateArgument])

    public static let null = PredicateArgument.value(.null)

    /// The object's ID (an unsaved object's temporary ID matches no stored row).
    public static func object(_ object: ManagedObject) -> PredicateArgument { .objectID(object.objectID) }
}

extension PredicateArgument: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral {
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    public init(booleanLiteral value: Bool) { self = .value(.boolean(value)) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: PredicateArgument...) { self = .list(elements) }
}

/// Anything that can be put into a predicate: format arguments, builder operands, substitution values.
public protocol PredicateArgumentConvertible {
    var predicateArgument: PredicateArgument { get }
}

extension PredicateArgument: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { self }
}

extension AttributeValue: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(self) }
}

extension ObjectID: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .objectID(self) }
}

extension ManagedObject: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .objectID(objectID) }
}

extension String: PredicateArgumentConvertible {}
extension Int: PredicateArgumentConvertible {}
extension Int64: PredicateArgumentConvertible {}
extension Int32: PredicateArgumentConvertible {}
extension Int16: PredicateArgumentConvertible {}
extension Double: PredicateArgumentConvertible {}
extension Bool: PredicateArgumentConvertible {}
extension Date: PredicateArgumentConvertible {}
extension Data: PredicateArgumentConvertible {}
extension UUID: PredicateArgumentConvertible {}
extension URL: PredicateArgumentConvertible {}
extension Decimal: PredicateArgumentConvertible {}

extension PredicateArgumentConvertible where Self: AttributeConvertible {
    public var predicateArgument: PredicateArgument { .value(attributeValue) }
}

extension Float: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.double(Double(self))) }
}

extension Optional: PredicateArgumentConvertible where Wrapped: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { self?.predicateArgument ?? .null }
}

extension Array: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}

extension Set: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}

// MARK: - Builder

extension Predicate {
    /// A key path expression to compare: `Predicate.key("name") == "Ann"`.
    public static func key(_ keyPath: String) -> Expression { .keyPath(keyPath) }

    /// `SELF`, to compare the evaluated object with objects or object IDs.
    public static var evaluatedObject: Expression { .evaluatedObject }

    /// `ANY collection…`: at least one destination of the to-many key path satisfies `predicate`.
    public static func any(_ collection: String, _ predicate: Predicate) -> Predicate { .quantified(.any, collection, predicate) }
    /// `ALL collection…`: every destination satisfies `predicate` (true when there are none).
    public static func all(_ collection: String, _ predicate: Predicate) -> Predicate { .quantified(.all, collection, predicate) }
    /// `NONE collection…`: no destination satisfies `predicate`.
    public static func none(_ collection: String, _ predicate: Predicate) -> Predicate { .quantified(.none, collection, predicate) }

    public static func && (lhs: Predicate, rhs: Predicate) -> Predicate {
        switch (lhs, rhs) {
        case (.and(let left), .and(let right)): .and(left + right)
        case (.and(let left), _): .and(left + [rhs])
        case (_, .and(let right)): .and([lhs] + right)
        default: .and([lhs, rhs])
        }
    }

    public static func || (lhs: Predicate, rhs: Predicate) -> Predicate {
        switch (lhs, rhs) {
        case (.or(let left), .or(let right)): .or(left + right)
        case (.or(let left), _): .or(left + [rhs])
        case (_, .or(let right)): .or([lhs] + right)
        default: .or([lhs, rhs])
        }
    }

    public static prefix func ! (operand: Predicate) -> Predicate { .not(operand) }

    /// A comparison of two expressions, for the cases the operators below do not cover (key path against key path).
    public static func compare(_ left: Expression, _ operator: Operator, _ right: Expression, options: Options = []) -> Predicate {
        .comparison(Comparison(left, `operator`, right, options: options))
    }
}

extension Predicate.Expression {
    private func compared(_ operator: Predicate.Operator, _ value: some PredicateArgumentConvertible, options: Predicate.Options = []) -> Predicate {
        .comparison(Predicate.Comparison(self, `operator`, .constant(value.predicateArgument), options: options))
    }

    public static func == (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.equal, rhs) }
    public static func != (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.notEqual, rhs) }
    public static func < (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.lessThan, rhs) }
    public static func <= (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.lessThanOrEqual, rhs) }
    public static func > (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.greaterThan, rhs) }
    public static func >= (lhs: Self, rhs: some PredicateArgumentConvertible) -> Predicate { lhs.compared(.greaterThanOrEqual, rhs) }

    /// `key == nil`.
    public static func == (lhs: Self, rhs: _OptionalNilComparisonType) -> Predicate { lhs.compared(.equal, PredicateArgument.null) }
    /// `key != nil`.
    public static func != (lhs: Self, rhs: _OptionalNilComparisonType) -> Predicate { lhs.compared(.notEqual, PredicateArgument.null) }

    /// `==` with string options: `.key("name").equals("ann", options: .caseInsensitive)`.
    public func equals(_ value: some PredicateArgumentConvertible, options: Predicate.Options = []) -> Predicate { compared(.equal, value, options: options) }
    public func beginsWith(_ prefix: String, options: Predicate.Options = []) -> Predicate { compared(.beginsWith, prefix, options: options) }
    public func endsWith(_ suffix: String, options: Predicate.Options = []) -> Predicate { compared(.endsWith, suffix, options: options) }
    /// A substring test on a string attribute.
    public func contains(_ substring: String, options: Predicate.Options = []) -> Predicate { compared(.contains, substring, options: options) }
    /// Membership of an object in a to-many key path.
    public func contains(_ object: some PredicateArgumentConvertible) -> Predicate { compared(.contains, object) }
    /// A `*`/`?` wildcard pattern matching the whole string.
    public func like(_ pattern: String, options: Predicate.Options = []) -> Predicate { compared(.like, pattern, options: options) }
    /// A regular expression matching the whole string.
    public func matches(_ pattern: String, options: Predicate.Options = []) -> Predicate { compared(.matches, pattern, options: options) }
    public func isIn(_ values: some Sequence<some PredicateArgumentConvertible>, options: Predicate.Options = []) -> Predicate {
        compared(.in, PredicateArgument.list(values.map(\.predicateArgument)), options: options)
    }
    public func isBetween(_ low: some PredicateArgumentConvertible, and high: some PredicateArgumentConvertible) -> Predicate {
        compared(.between, PredicateArgument.list([low.predicateArgument, high.predicateArgument]))
    }
}

// MARK: - Substitution

extension Predicate {
    /// The predicate with every `$NAME` in `values` replaced by its value; variables not in `values` stay (and make
    /// compiling fail until they are bound).
    public func substituting(_ values: [String: any PredicateArgumentConvertible]) -> Predicate {
        let arguments = values.mapValues(\.predicateArgument)
        return substituting(arguments: arguments)
    }

    func substituting(arguments: [String: PredicateArgument]) -> Predicate {
        switch self {
        case .constant: self
        case .comparison(var comparison):
            {
                comparison.left = comparison.left.substituting(arguments)
                comparison.right = comparison.right.substituting(arguments)
                return .comparison(comparison)
            }()
        case .and(let operands): .and(operands.map { $0.substituting(arguments: arguments) })
        case .or(let operands): .or(operands.map { $0.substituting(arguments: arguments) })
        case .not(let operand): .not(operand.substituting(arguments: arguments))
        case .quantified(let quantifier, let collection, let operand):
            .quantified(quantifier, collection, operand.substituting(arguments: arguments))
        }
    }

    /// The names of the variables still unbound, in order of first appearance.
    public var variables: [String] {
        var names: [String] = []
        func add(_ name: String) { if !names.contains(name) { names.append(name) } }
        func visit(_ expression: Expression, bound: Set<String>) {
            switch expression {
            case .variable(let name) where !bound.contains(name): add(name)
            case .list(let items): items.forEach { visit($0, bound: bound) }
            case .subqueryCount(_, let variable, let predicate): visit(predicate, bound: bound.union([variable]))
            case .keyPath(let path) where path.hasPrefix("$"):
                let name = String(path.dropFirst().prefix { $0 != "." })
                if !bound.contains(name) { add(name) }
            default: break
            }
        }
        func visit(_ predicate: Predicate, bound: Set<String>) {
            switch predicate {
            case .constant: break
            case .comparison(let comparison):
                visit(comparison.left, bound: bound)
                visit(comparison.right, bound: bound)
            case .and(let operands), .or(let operands): operands.forEach { visit($0, bound: bound) }
            case .not(let operand), .quantified(_, _, let operand): visit(operand, bound: bound)
            }
        }
        visit(self, bound: [])
        return names
    }
}

extension Predicate.Expression {
    func substituting(_ arguments: [String: PredicateArgument]) -> Self {
        switch self {
        case .variable(let name): arguments[name].map(Self.constant) ?? self
        case .list(let items): .list(items.map { $0.substituting(arguments) })
        case .subqueryCount(let collection, let variable, let predicate):
            {
                var inner = arguments
                inner[variable] = nil
                return .subqueryCount(collection: collection, variable: variable, predicate: predicate.substituting(arguments: inner))
            }()
        default: self
        }
    }
}

// MARK: - Printing

extension Predicate: CustomStringConvertible {
    /// The predicate in format-string syntax (values shown, not bound), for logs and messages.
    public var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison):
            (comparison.modifier.map { $0.rawValue + " " } ?? "")
                + "\(comparison.left) \(comparison.operator.rawValue)\(comparison.options.formatSuffix) \(comparison.right)"
        case .and(let operands): operands.isEmpty ? "TRUEPREDICATE" : operands.map { $0.parenthesized }.joined(separator: " AND ")
        case .or(let operands): operands.isEmpty ? "FALSEPREDICATE" : operands.map { $0.parenthesized }.joined(separator: " OR ")
        case .not(let operand): "NOT \(operand.parenthesized)"
        case .quantified(let quantifier, let collection, let operand):
            "\(quantifier.rawValue) \(collection) (\(operand))"
        }
    }

    private var parenthesized: String {
        switch self {
        case .and, .or: "(\(description))"
        default: description
        }
    }
}

extension Predicate.Expression: CustomStringConvertible {
    public var description: String {
        switch self {
        case .keyPath(let path): Self.written(path)
        case .evaluatedObject: "SELF"
        case .constant(let argument): argument.description
        case .variable(let name): "$" + name
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .keyPathCount(let path): Self.written(path) + ".@count"
        case .subqueryCount(let collection, let variable, let predicate): "SUBQUERY(\(Self.written(collection)), $\(variable), \(predicate)).@count"
        }
    }

    /// A key path as a format writes it: a first key spelled like a keyword (`#size` is fine, `#AND` needs it)
    /// keeps its `#`, so the description reads back as the same predicate. Keys after a dot are never keywords.
    private static func written(_ path: String) -> String {
        let first = path.prefix { $0 != "." }
        return PredicateParser.reserved.contains(first.uppercased()) ? "#" + path : path
    }
}

extension PredicateArgument: CustomStringConvertible {
    public var description: String {
        switch self {
        case .objectID(let id): "<\(id)>"
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .value(let value):
            switch value {
            case .null: "nil"
            case .string(let text): "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            case .boolean(let flag): flag ? "YES" : "NO"
            case .integer(let number): String(number)
            // A literal too large for a Double (`1e999`) parses as infinity, which prints back as such a literal.
            case .double(let number) where number.isInfinite: number < 0 ? "-1e999" : "1e999"
            case .double(let number): String(number)
            case .decimal(let number): number.description
            case .date(let date): "CAST(\(date.timeIntervalSinceReferenceDate), \"NSDate\")"
            case .data(let data): "<\(data.count) bytes>"
            case .uuid(let uuid): uuid.uuidString
            case .uri(let url): url.absoluteString
            }
        }
    }
}

extension Predicate {
    /// The first component of every key path the predicate reads from the evaluated object (`chat` for
    /// `chat.title == "x"`, `members` for `members.@count > 2`): the keys whose changes can change what it says.
    /// Key paths inside a quantifier or a subquery's own predicate start at the destination, so only the collection
    /// counts for them.
    var rootKeys: Set<String> {
        var keys = Set<String>()
        func first(_ path: String) -> String { String(path.prefix { $0 != "." }) }
        func visit(_ expression: Expression) {
            switch expression {
            case .keyPath(let path), .keyPathCount(let path): keys.insert(first(path))
            case .subqueryCount(let collection, _, _): keys.insert(first(collection))
            case .list(let items): items.forEach(visit)
            case .evaluatedObject, .constant, .variable: break
            }
        }
        func visit(_ predicate: Predicate) {
            switch predicate {
            case .constant: break
            case .comparison(let comparison):
                visit(comparison.left)
                visit(comparison.right)
            case .and(let operands), .or(let operands): operands.forEach(visit)
            case .not(let operand): visit(operand)
            case .quantified(_, let collection, _): keys.insert(first(collection))
            }
        }
        visit(self)
        return keys
    }
}
