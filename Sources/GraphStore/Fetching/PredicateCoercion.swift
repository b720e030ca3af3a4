import Foundation

// Checks and value conversions that `PredicateCompiler` (SQL) and `PredicateEvaluator` (memory) must apply
// identically, so that a predicate is accepted or rejected the same way, with the same message, whichever of them
// looks at it, and a constant is compared in the same form. Each keeps its own operand type; both describe an
// operand to this file through `PredicateOperand`.

/// One side of a comparison as the shared checks see it.
enum OperandRole<Operand> {
    /// A stored attribute of `type`; `label` names it in messages (`Message.sentAt`).
    case attribute(AttributeType, label: String)
    /// A row key holding objects of `destination`: a to-one, `SELF`, or a SUBQUERY variable.
    case key(destination: Entity, label: String)
    /// A computed integer, such as a correlated count.
    case count
    /// A constant from the format string or the arguments.
    case value(PredicateArgument)
    /// A list written in the predicate, `{a, b}`.
    case list([Operand])
}

/// An operand of a comparison, as built by the compiler or the evaluator.
protocol PredicateOperand {
    /// What the operand holds, as far as the shared checks are concerned.
    var role: OperandRole<Self> { get }
    /// The operand for a constant (an enum case `value(PredicateArgument)` serves).
    static func value(_ argument: PredicateArgument) -> Self
}

extension PredicateOperand {
    /// How messages name the operand: `Message.sentAt`, "a count", the constant as written.
    var label: String {
        switch role {
        case .attribute(_, let label), .key(_, let label): label
        case .count: "a count"
        case .value(let argument): argument.description
        case .list: "a list"
        }
    }

    /// Whether the operand is a constant or a list of them rather than something read from the object.
    var isValue: Bool {
        switch role {
        case .value, .list: true
        case .attribute, .key, .count: false
        }
    }

    var isKey: Bool {
        if case .key = role { return true }
        return false
    }

    /// The items when the operand is a list: written `{a, b}`, or given as one array argument.
    var listItems: [Self]? {
        switch role {
        case .list(let items): items
        case .value(.list(let arguments)): arguments.map(Self.value)
        default: nil
        }
    }

    /// `argument` in the form it is bound or compared in against this operand; a type mismatch when it cannot be.
    func coerced(
        _ argument: PredicateArgument, op: Predicate.Operator, requireString: Bool = false, in schema: StoreSchema
    ) throws(PredicateError) -> AttributeValue {
        switch role {
        case .key(let destination, let label):
            return try PredicateCoercion.primaryKey(argument, destination: destination, label: label, model: schema.model)
        case .count:
            return try PredicateCoercion.countValue(argument, label: label, op: op)
        case .attribute(let type, let label):
            return try PredicateCoercion.columnValue(argument, type: type, label: label, op: op, requireString: requireString)
        case .value, .list:
            guard let value = argument.attributeValue else { throw PredicateCoercion.mismatch(label, argument, op) }
            return value
        }
    }

    /// With this operand on the left of an ordering or equality: the value to bind when `right` is a constant, or
    /// nil when `right` is itself read from the object and may be compared as it is. A list, or a key compared with
    /// something that is not a key, is a type mismatch.
    func boundValue(
        comparedWith right: Self, op: Predicate.Operator, requireString: Bool = false, entity: String, in schema: StoreSchema
    ) throws(PredicateError) -> AttributeValue? {
        switch right.role {
        case .value(let argument):
            return try coerced(argument, op: op, requireString: requireString, in: schema)
        case .key where !isKey:
            throw PredicateError(.typeMismatch, "\(entity): cannot compare \(label) with \(right.label)")
        case .attribute, .key, .count:
            return nil
        case .list:
            throw PredicateError(.typeMismatch, "\(label): cannot compare with a list using '\(op.rawValue)' (use IN or BETWEEN)")
        }
    }

    /// The two values of a comparison with no key path on either side; both must be single constants.
    static func constants(
        _ left: Self, _ right: Self, op: Predicate.Operator, entity: String
    ) throws(PredicateError) -> (AttributeValue, AttributeValue) {
        guard case .value(let leftArgument) = left.role, case .value(let rightArgument) = right.role,
              let a = leftArgument.attributeValue, let b = rightArgument.attributeValue else {
            throw PredicateError(.typeMismatch, "\(entity): cannot compare \(left.label) with \(right.label) using '\(op.rawValue)'")
        }
        return (a, b)
    }

    /// The low and high bounds of `self BETWEEN right`.
    func betweenBounds(_ right: Self, entity: String) throws(PredicateError) -> (low: Self, high: Self) {
        guard let bounds = right.listItems, bounds.count == 2 else {
            throw PredicateError(.typeMismatch, "\(entity): BETWEEN needs a list of two values, {low, high}")
        }
        return (bounds[0], bounds[1])
    }

    /// The items of the list on the right of `self IN right`.
    func membershipItems(_ right: Self) throws(PredicateError) -> [Self] {
        guard let items = right.listItems else {
            throw PredicateError(.typeMismatch, "\(label): IN needs a list ({a, b} or an array argument) or a to-many key path on its right")
        }
        return items
    }

    /// The values a plain `self IN items` looks for, in order and each in the form it is compared in, and whether
    /// nil is among the items (which matches a nil `self`, not a value).
    func membershipValues(_ items: [Self], in schema: StoreSchema) throws(PredicateError) -> (values: [AttributeValue], includesNull: Bool) {
        var values: [AttributeValue] = []
        var includesNull = false
        for item in items {
            switch item.role {
            case .value(.value(.null)):
                includesNull = true
            case .value(let argument):
                values.append(try coerced(argument, op: .in, in: schema))
            default:
                throw PredicateError(.typeMismatch, "\(label): the list after IN may hold only values")
            }
        }
        return (values, includesNull)
    }
}

/// The conversions of a constant to the value it is compared with, one per kind of operand it can meet.
enum PredicateCoercion {
    /// The error for a constant that does not fit the operand it is compared with.
    static func mismatch(_ label: String, _ argument: PredicateArgument, _ op: Predicate.Operator) -> PredicateError {
        PredicateError(.typeMismatch, "\(label): cannot compare it with \(argument) using '\(op.rawValue)'")
    }

    /// The `Z_PK` a to-one or `SELF` is compared with: from an object ID whose entity is `destination` or one of its
    /// sub-entities, or nil.
    static func primaryKey(
        _ argument: PredicateArgument, destination: Entity, label: String, model: ObjectModel
    ) throws(PredicateError) -> AttributeValue {
        switch argument {
        case .objectID(let id):
            guard let entity = model.entity(number: id.entityNumber), destination.includes(entity.name) else {
                throw PredicateError(.typeMismatch, "\(label) holds \(destination.name) objects; cannot compare it with object \(id)")
            }
            return .integer(id.primaryKey)
        case .value(.null):
            return .null
        default:
            throw PredicateError(.typeMismatch, "\(label) holds \(destination.name) objects; compare it with an object or object ID, not \(argument)")
        }
    }

    /// A number a count is compared with. A count has no column type for SQLite to convert bound text by, so a
    /// decimal (bound as text elsewhere) is given as the Double it is.
    static func countValue(_ argument: PredicateArgument, label: String, op: Predicate.Operator) throws(PredicateError) -> AttributeValue {
        switch argument {
        case .value(let value) where value == .null: return value
        case .value(.integer(let number)): return .integer(number)
        case .value(.double(let number)): return .double(number)
        case .value(.decimal(let number)): return .double(NSDecimalNumber(decimal: number).doubleValue)
        default: throw mismatch(label, argument, op)
        }
    }

    /// A constant compared with a column of `type`, converted where the store keeps it differently (a Boolean in an
    /// integer column, an integer in a floating-point one, a UUID written as text). With `requireString` (string
    /// operators and `[c]`/`[d]` options) only text or nil will do.
    static func columnValue(
        _ argument: PredicateArgument, type: AttributeType, label: String, op: Predicate.Operator, requireString: Bool
    ) throws(PredicateError) -> AttributeValue {
        guard case .value(let value) = argument else { throw mismatch(label, argument, op) }
        if value == .null { return .null }
        if requireString {
            guard case .string = value else { throw mismatch(label, argument, op) }
            return value
        }
        switch (type, value) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer),
             (.integer16, .double), (.integer32, .double), (.integer64, .double),
             (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal),
             (.decimal, .integer), (.decimal, .double), (.decimal, .decimal),
             (.double, .double), (.float, .double), (.double, .decimal), (.float, .decimal),
             (.boolean, .boolean), (.boolean, .integer),
             (.string, .string), (.uri, .string), (.uri, .uri), (.objectID, .string),
             (.date, .date), (.uuid, .uuid), (.binaryData, .data), (.transformable, .data):
            return value
        case (.integer16, .boolean(let flag)), (.integer32, .boolean(let flag)), (.integer64, .boolean(let flag)):
            return .integer(flag ? 1 : 0)
        case (.double, .integer(let number)), (.float, .integer(let number)):
            return .double(Double(number))
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch(label, argument, op) }
            return .uuid(uuid)
        default:
            throw mismatch(label, argument, op)
        }
    }
}

extension Predicate.Expression {
    /// Fails for a `$VARIABLE` left unsubstituted, here or inside a list; `variables` are the SUBQUERY variables
    /// bound where the expression stands.
    func checkBound(variables: Set<String>, entity: String) throws(PredicateError) {
        switch self {
        case .variable(let name) where !variables.contains(name):
            throw PredicateError.unbound(variable: name, entity: entity)
        case .list(let items):
            for item in items { try item.checkBound(variables: variables, entity: entity) }
        default:
            break
        }
    }
}

extension PredicateError {
    /// A `$VARIABLE` with no value where it is used.
    static func unbound(variable name: String, entity: String) -> PredicateError {
        PredicateError(.unboundVariable, "\(entity): variable $\(name) is not bound; substitute it with substituting(_:)")
    }
}

extension PredicateArgument {
    /// The single attribute value, or nil for an object ID or a list.
    var attributeValue: AttributeValue? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// The comparisons a backend builds, one requirement per kind of operator. `compare` picks the requirement for a
/// comparison's operator, after the checks that concern the operator alone, so the compiler and the evaluator take
/// the same route for every operator.
protocol ComparisonBuilder {
    associatedtype Operand: PredicateOperand
    /// What the backend makes of a comparison: SQL text, or a node to test objects with.
    associatedtype Condition
    /// Where in the predicate the comparison stands (the object it is about, bound SUBQUERY variables…).
    associatedtype Scope

    func equality(_ left: Operand, negated: Bool, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Condition
    /// `<`, `<=`, `>` or `>=`, which take no options.
    func ordering(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, in scope: Scope) throws(PredicateError) -> Condition
    /// BEGINSWITH, ENDSWITH, CONTAINS, LIKE or MATCHES.
    func stringSearch(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Condition
    /// IN with a list on its right (a to-many on the right is a quantifier, handled before comparisons).
    func membership(_ left: Operand, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Condition
    /// `left BETWEEN {low, high}`.
    func between(_ left: Operand, low: Operand, high: Operand, in scope: Scope) throws(PredicateError) -> Condition
}

extension ComparisonBuilder {
    /// `left <op> right` in a scope of `entity`, the key path (if any) already on the left.
    func compare(
        _ left: Operand, _ op: Predicate.Operator, _ right: Operand, options: Predicate.Options, in scope: Scope, entity: String
    ) throws(PredicateError) -> Condition {
        switch op {
        case .equal, .notEqual:
            return try equality(left, negated: op == .notEqual, right, options: options, in: scope)
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard options.isEmpty else {
                throw PredicateError(.unsupported, "\(entity): options [c]/[d] do not apply to '\(op.rawValue)'")
            }
            return try ordering(left, op, right, in: scope)
        case .beginsWith, .endsWith, .contains, .like, .matches:
            return try stringSearch(left, op, right, options: options, in: scope)
        case .in:
            return try membership(left, right, options: options, in: scope)
        case .between:
            let bounds = try left.betweenBounds(right, entity: entity)
            return try between(left, low: bounds.low, high: bounds.high, in: scope)
        }
    }
}
