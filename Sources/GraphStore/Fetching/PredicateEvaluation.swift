import Foundation

extension Predicate {
    /// Whether `object` satisfies the predicate, judged by its values in memory (unsaved changes included).
    ///
    /// The answer is the one the store would give for the object's row if the object's current values were saved:
    /// the predicate is checked against the model exactly as `PredicateCompiler` checks it (so the same predicates
    /// fail, with the same error kinds), then run on the object with SQLite's rules for NULL, type affinity and
    /// ordering. Reading values may fire faults, as reading them by hand would. Variables must be substituted first.
    ///
    /// To test many objects, make a `PredicateEvaluator` once and call it for each.
    public func evaluate(with object: ManagedObject) throws(PredicateError) -> Bool {
        guard let schema = object.context?.coordinator.store.schema else {
            throw PredicateError(.unsupported, "\(object.entityName): the object's context is gone, so its values cannot be read")
        }
        return try PredicateEvaluator(self, entity: object.entityName, schema: schema).evaluate(object)
    }
}

/// A predicate checked against one entity of a schema and turned into a plan that tests objects in memory.
///
/// The plan mirrors the SQL `PredicateCompiler` writes, node for node: the same checks throw the same errors while
/// the plan is built, and running it follows what SQLite does with that SQL. A condition is true, false or unknown
/// (NULL); a row is selected only when its condition is true, so `NOT` of an unknown comparison selects nothing,
/// while `x != v` is written `(x <> v OR x IS NULL)` and so holds for a nil `x`. Values are compared in the form the
/// store keeps them in (a Boolean as 0/1, a date as seconds since 2001, a decimal after SQLite's numeric conversion,
/// strings byte by byte), with the type conversions SQLite applies before comparing a column with a bound value.
///
/// Build one per fetch (for the request's entity) and call `evaluate(_:)` per object; building it is the only step
/// that can fail.
struct PredicateEvaluator: Sendable {
    /// The entity the predicate was checked against.
    let entity: String
    private let plan: EvaluationNode

    init(_ predicate: Predicate, entity: String, schema: StoreSchema) throws(PredicateError) {
        guard let resolved = schema.model.entity(named: entity) else {
            throw PredicateError(.unknownKey, "the model has no entity '\(entity)'")
        }
        self.entity = entity
        let planner = EvaluationPlanner(schema: schema)
        plan = try planner.plan(predicate, in: EvaluationPlanner.Scope(entity: resolved))
    }

    /// Whether the object satisfies the predicate (an unknown result counts as false, as in a WHERE clause).
    func evaluate(_ object: ManagedObject) -> Bool {
        plan.truth(for: object) == true
    }
}

// MARK: - Plan

/// A condition over the object being tested: the in-memory twin of a compiled SQL condition.
private indirect enum EvaluationNode: Sendable {
    case constant(Bool)
    case and([EvaluationNode])
    case or([EvaluationNode])
    case not(EvaluationNode)
    /// `EXISTS (…)`: some destination of the to-many satisfies the condition (never unknown).
    case exists(ToManyStep, EvaluationNode)
    /// `a <op> b` with SQLite's conversions; unknown when either side is NULL.
    case compare(EvaluationTerm, SQLComparison, EvaluationTerm)
    /// `a IS b` / `a IS NOT b`: like `=`, but NULL equals NULL (never unknown).
    case identical(EvaluationTerm, EvaluationTerm, negated: Bool)
    /// `a IS NULL` / `a IS NOT NULL`.
    case isNull(EvaluationTerm, negated: Bool)
    /// The string search function (`PredicateFunctions`): false when either side is NULL (never unknown).
    case search(EvaluationTerm, EvaluationTerm, Predicate.Operator, Predicate.Options)

    var isTrue: Bool { if case .constant(true) = self { true } else { false } }
    var isFalse: Bool { if case .constant(false) = self { true } else { false } }
}

private enum SQLComparison: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

    init(_ op: Predicate.Operator) {
        switch op {
        case .lessThan: self = .less
        case .lessThanOrEqual: self = .lessOrEqual
        case .greaterThan: self = .greater
        case .greaterThanOrEqual: self = .greaterOrEqual
        case .notEqual: self = .notEqual
        default: self = .equal
        }
    }
}

/// A to-many reached from the tested object through `hops` (to-one names), then `key`.
private struct ToManyStep: Sendable {
    var hops: [String]
    var key: String
}

/// A value in a condition, as SQL would read it.
private indirect enum EvaluationTerm: Sendable {
    /// A stored attribute behind `hops` (to-ones), kept in a column of the given affinity; NULL past a nil to-one.
    case attribute(hops: [String], key: String, affinity: ColumnAffinity)
    /// A to-one's foreign key: the destination's primary key, or NULL.
    case toOneKey(hops: [String], key: String)
    /// The tested object's own primary key (`SELF`, or a SUBQUERY variable).
    case selfKey
    /// A bound value (no affinity).
    case bound(StoredValue)
    /// A correlated `COUNT(*)` of a to-many's destinations, optionally only those satisfying a condition.
    case count(ToManyStep, filter: EvaluationNode?)

    var affinity: ColumnAffinity {
        switch self {
        case .attribute(_, _, let affinity): affinity
        case .toOneKey, .selfKey: .integer
        case .bound, .count: .none
        }
    }
}

// MARK: - Planning (mirrors PredicateCompiler)

private struct EvaluationPlanner: ComparisonBuilder {
    let schema: StoreSchema

    /// The object a part of the predicate is about: the tested object, or a to-many's destination.
    struct Scope {
        var entity: Entity
        /// SUBQUERY variables standing for this scope's object.
        var variables: Set<String> = []
    }

    /// What an expression stands for, with what messages call it.
    enum Operand {
        case column(EvaluationTerm, type: AttributeType, label: String)
        case key(EvaluationTerm, destination: Entity, label: String)
        case number(EvaluationTerm)
        case value(PredicateArgument)
        case list([Operand])

        var term: EvaluationTerm? {
            switch self {
            case .column(let term, _, _), .key(let term, _, _), .number(let term): term
            case .value, .list: nil
            }
        }
    }

    enum Resolved {
        case attribute(hops: [String], type: AttributeType, entity: Entity, key: String)
        case toOne(hops: [String], destination: Entity, entity: Entity, key: String)
        case selfKey(entity: Entity)
        case toMany(hops: [String], ownerEntity: Entity, relationship: RelationshipDescription, rest: [String])
    }

    // MARK: predicates

    func plan(_ predicate: Predicate, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        switch predicate {
        case .constant(let value):
            return .constant(value)
        case .and(let operands), .or(let operands):
            let isAnd = if case .and = predicate { true } else { false }
            var parts: [EvaluationNode] = []
            // Every operand is planned, so a bad one fails even when another decides the result.
            for operand in operands { parts.append(try plan(operand, in: scope)) }
            if parts.contains(where: { isAnd ? $0.isFalse : $0.isTrue }) { return .constant(!isAnd) }
            parts.removeAll { isAnd ? $0.isTrue : $0.isFalse }
            if parts.isEmpty { return .constant(isAnd) }
            if parts.count == 1 { return parts[0] }
            return isAnd ? .and(parts) : .or(parts)
        case .not(let operand):
            let inner = try plan(operand, in: scope)
            if case .constant(let value) = inner { return .constant(!value) }
            return .not(inner)
        case .quantified(let quantifier, let collection, let inner):
            guard case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(collection, in: scope), rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) applies to a to-many key path, and '\(collection)' is not one")
            }
            return try quantified(quantifier, hops: hops, ownerEntity: ownerEntity, relationship: relationship, inner)
        case .comparison(let comparison):
            return try plan(comparison, in: scope)
        }
    }

    private func plan(_ comparison: Predicate.Comparison, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        try comparison.left.checkBound(variables: scope.variables, entity: scope.entity.name)
        try comparison.right.checkBound(variables: scope.variables, entity: scope.entity.name)

        if let quantifier = comparison.modifier {
            guard case .keyPath(let keyPath) = comparison.left else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) before '\(comparison.operator.rawValue)' needs a key path through a to-many on the left")
            }
            guard case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(keyPath, in: scope) else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) needs a key path through a to-many, and '\(keyPath)' goes through none")
            }
            var inner = comparison
            inner.modifier = nil
            inner.left = rest.isEmpty ? .evaluatedObject : .keyPath(rest.joined(separator: "."))
            return try quantified(quantifier, hops: hops, ownerEntity: ownerEntity, relationship: relationship, .comparison(inner))
        }

        // `members CONTAINS x` and `x IN members`: some destination is x.
        if comparison.operator == .contains, case .keyPath(let keyPath) = comparison.left,
           case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(keyPath, in: scope), rest.isEmpty {
            let inner = Predicate.compare(.evaluatedObject, .equal, comparison.right)
            return try quantified(.any, hops: hops, ownerEntity: ownerEntity, relationship: relationship, inner)
        }
        if comparison.operator == .in, case .keyPath(let keyPath) = comparison.right,
           case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(keyPath, in: scope), rest.isEmpty {
            let inner = Predicate.compare(.evaluatedObject, .equal, comparison.left)
            return try quantified(.any, hops: hops, ownerEntity: ownerEntity, relationship: relationship, inner)
        }

        var left = try operand(comparison.left, in: scope)
        var right = try operand(comparison.right, in: scope)
        var op = comparison.operator
        // A constant on the left trades places with the key path, as the compiler does (`5 < age` is `age > 5`).
        if case .value = left, !right.isValue, let flipped = op.flipped {
            swap(&left, &right)
            op = flipped
        }
        return try compare(left, op, right, options: comparison.options, in: scope, entity: scope.entity.name)
    }

    private func quantified(
        _ quantifier: Predicate.Quantifier, hops: [String], ownerEntity: Entity, relationship: RelationshipDescription, _ inner: Predicate
    ) throws(PredicateError) -> EvaluationNode {
        let destination = try destinationScope(ownerEntity: ownerEntity, relationship: relationship)
        let condition = try plan(inner, in: destination)
        let step = ToManyStep(hops: hops, key: relationship.name)
        switch quantifier {
        case .any:
            return condition.isFalse ? .constant(false) : .exists(step, condition)
        case .none:
            return condition.isFalse ? .constant(true) : .not(.exists(step, condition))
        case .all:
            // No destination for which the condition is false (one whose condition is unknown does not count).
            if condition.isTrue { return .constant(true) }
            return .not(.exists(step, condition.isFalse ? .constant(true) : .not(condition)))
        }
    }

    /// The scope of a to-many's destinations, when the store keeps the relationship.
    private func destinationScope(ownerEntity: Entity, relationship: RelationshipDescription) throws(PredicateError) -> Scope {
        guard let destination = schema.model.entity(named: relationship.destination), schema.table(for: destination.name) != nil else {
            throw PredicateError(.unknownKey, "\(ownerEntity.name): relationship '\(relationship.name)' has no stored destination")
        }
        switch schema.storage(forRelationship: relationship.name, of: ownerEntity.name) {
        case .inverseForeignKey, .joinTable:
            return Scope(entity: destination)
        default:
            throw PredicateError(.unsupported, "\(ownerEntity.name): to-many '\(relationship.name)' is transient and not kept by the store")
        }
    }

    private func count(
        hops: [String], ownerEntity: Entity, relationship: RelationshipDescription, filter: Predicate? = nil, variable: String? = nil
    ) throws(PredicateError) -> EvaluationTerm {
        let step = ToManyStep(hops: hops, key: relationship.name)
        if filter == nil {
            switch schema.storage(forRelationship: relationship.name, of: ownerEntity.name) {
            case .inverseForeignKey, .joinTable: return .count(step, filter: nil)
            default: break
            }
        }
        var scope = try destinationScope(ownerEntity: ownerEntity, relationship: relationship)
        if let variable { scope.variables = [variable] }
        guard let filter else { return .count(step, filter: nil) }
        let condition = try plan(filter, in: scope)
        return .count(step, filter: condition.isTrue ? nil : condition)
    }

    // MARK: key paths

    /// Follows a key path from the scope's object through to-ones, to its end or its first to-many.
    private func resolve(_ keyPath: String, in scope: Scope) throws(PredicateError) -> Resolved {
        var path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var entity = scope.entity
        if let first = path.first, first.hasPrefix("$") {
            let name = String(first.dropFirst())
            guard scope.variables.contains(name) else {
                throw PredicateError(.unboundVariable, "\(scope.entity.name): '\(keyPath)' uses variable $\(name), which is not bound; bind it with substituting(_:)")
            }
            path.removeFirst()
        }
        if path.isEmpty { return .selfKey(entity: entity) }
        var hops: [String] = []
        for (offset, name) in path.enumerated() {
            let isLast = offset == path.count - 1
            if let attribute = entity.attribute(named: name) {
                guard isLast else {
                    throw PredicateError(.unknownKey, "\(entity.name): '\(keyPath)' continues past attribute '\(name)'")
                }
                guard attribute.isPersistent, schema.column(forAttribute: name, of: entity.name) != nil else {
                    throw PredicateError(.unsupported, "\(entity.name): attribute '\(name)' is transient and not kept by the store")
                }
                return .attribute(hops: hops, type: attribute.type, entity: entity, key: name)
            }
            guard let relationship = entity.relationship(named: name),
                  let destination = schema.model.entity(named: relationship.destination) else {
                throw PredicateError(.unknownKey, "\(entity.name) has no key '\(name)'")
            }
            if relationship.isToMany {
                return .toMany(hops: hops, ownerEntity: entity, relationship: relationship, rest: Array(path[(offset + 1)...]))
            }
            guard case .foreignKey? = schema.storage(forRelationship: name, of: entity.name) else {
                throw PredicateError(.unsupported, "\(entity.name): to-one '\(name)' is transient and not kept by the store")
            }
            if isLast { return .toOne(hops: hops, destination: destination, entity: entity, key: name) }
            guard schema.table(for: destination.name) != nil else {
                throw PredicateError(.unknownKey, "\(entity.name): '\(name)' has no stored destination")
            }
            hops.append(name)
            entity = destination
        }
        preconditionFailure("every key path component either returns or continues")
    }

    private func operand(_ expression: Predicate.Expression, in scope: Scope) throws(PredicateError) -> Operand {
        switch expression {
        case .keyPath(let keyPath):
            switch try resolve(keyPath, in: scope) {
            case .attribute(let hops, let type, let entity, let key):
                return .column(.attribute(hops: hops, key: key, affinity: ColumnAffinity(type)), type: type, label: "\(entity.name).\(key)")
            case .toOne(let hops, let destination, let entity, let key):
                return .key(.toOneKey(hops: hops, key: key), destination: destination, label: "\(entity.name).\(key)")
            case .selfKey(let entity):
                return .key(.selfKey, destination: entity, label: "\(entity.name).SELF")
            case .toMany(_, let ownerEntity, let relationship, _):
                throw PredicateError(.toManyWithoutQuantifier,
                    "\(ownerEntity.name): '\(keyPath)' goes through to-many '\(relationship.name)', so it needs ANY, ALL, NONE or @count")
            }
        case .evaluatedObject:
            return .key(.selfKey, destination: scope.entity, label: "\(scope.entity.name).SELF")
        case .constant(let argument):
            return .value(argument)
        case .list(let items):
            var operands: [Operand] = []
            for item in items { operands.append(try operand(item, in: scope)) }
            return .list(operands)
        case .variable(let name):
            guard scope.variables.contains(name) else { throw PredicateError.unbound(variable: name, entity: scope.entity.name) }
            return .key(.selfKey, destination: scope.entity, label: "\(scope.entity.name).$\(name)")
        case .keyPathCount(let keyPath):
            guard case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(keyPath, in: scope), rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): '\(keyPath).@count' counts a to-many, and '\(keyPath)' is not one")
            }
            return .number(try count(hops: hops, ownerEntity: ownerEntity, relationship: relationship))
        case .subqueryCount(let collection, let variable, let predicate):
            guard case .toMany(let hops, let ownerEntity, let relationship, let rest) = try resolve(collection, in: scope), rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): SUBQUERY runs over a to-many key path, and '\(collection)' is not one")
            }
            return .number(try count(hops: hops, ownerEntity: ownerEntity, relationship: relationship, filter: predicate, variable: variable))
        }
    }

    // MARK: comparisons

    func ordering(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        let (a, b) = try ordered(left, right, op: op, in: scope)
        return .compare(a, SQLComparison(op), b)
    }

    func between(_ left: Operand, low: Operand, high: Operand, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        let (value, lower) = try ordered(left, low, op: .between, in: scope)
        let (_, upper) = try ordered(left, high, op: .between, in: scope)
        // SQLite reads `x BETWEEN a AND b` as `x >= a AND x <= b`.
        return .and([.compare(value, .greaterOrEqual, lower), .compare(value, .lessOrEqual, upper)])
    }

    func equality(_ left: Operand, negated: Bool, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        if case .value(.value(.null)) = right, let term = left.term {
            return .isNull(term, negated: negated)
        }
        if case .column(let term, let type, let label) = left, !options.isEmpty {
            let (_, pattern) = try ordered(left, right, op: .equal, in: scope, requireString: true)
            guard type == .string || type == .uri else {
                throw PredicateError(.typeMismatch, "\(label): [c]/[d] options apply to String attributes only")
            }
            let search = EvaluationNode.search(term, pattern, .equal, options)
            return negated ? .not(search) : search
        }
        switch (left, right) {
        case (.key(let term, _, _), .value(let argument)):
            let key = EvaluationTerm.bound(StoredValue(bound: try left.coerced(argument, op: .equal, in: schema)))
            return negated ? .or([.compare(term, .notEqual, key), .isNull(term, negated: false)]) : .compare(term, .equal, key)
        case (.key(let a, _, _), .key(let b, _, _)):
            return .identical(a, b, negated: negated)
        default:
            let (a, b) = try ordered(left, right, op: .equal, in: scope)
            guard negated else { return .compare(a, .equal, b) }
            if case .column = left { return .or([.compare(a, .notEqual, b), .isNull(a, negated: false)]) }
            return .compare(a, .notEqual, b)
        }
    }

    /// Both sides of a comparison as terms, a constant converted to fit the key path it is compared with.
    private func ordered(
        _ left: Operand, _ right: Operand, op: Predicate.Operator, in scope: Scope, requireString: Bool = false
    ) throws(PredicateError) -> (EvaluationTerm, EvaluationTerm) {
        guard let leftTerm = left.term else {
            // Two constants, compared as they are bound.
            let (a, b) = try Operand.constants(left, right, op: op, entity: scope.entity.name)
            return (.bound(StoredValue(bound: a)), .bound(StoredValue(bound: b)))
        }
        let value = try left.boundValue(comparedWith: right, op: op, requireString: requireString, entity: scope.entity.name, in: schema)
        // cannot fail: `boundValue` is nil only when the right side is a column or a count, which has a term.
        guard let value else { return (leftTerm, right.term!) }
        return (leftTerm, .bound(StoredValue(bound: value)))
    }

    func stringSearch(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        guard case .column(let term, let type, _) = left, type == .string || type == .uri else {
            throw PredicateError(.typeMismatch, "\(left.label): \(op.rawValue) needs a String attribute on its left")
        }
        let (_, pattern) = try ordered(left, right, op: op, in: scope, requireString: true)
        if op == .matches, case .value(.value(.string(let regex))) = right, !PredicateFunctions.isValidRegularExpression(regex) {
            throw PredicateError(.typeMismatch, "\(left.label): MATCHES needs a valid regular expression, and '\(regex)' is not one")
        }
        return .search(term, pattern, op, options)
    }

    func membership(_ left: Operand, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> EvaluationNode {
        let items = try left.membershipItems(right)
        guard let term = left.term else {
            throw PredicateError(.typeMismatch, "\(scope.entity.name): IN takes a key path on its left")
        }
        if items.isEmpty { return .constant(false) }
        if !options.isEmpty {
            var parts: [EvaluationNode] = []
            for item in items { parts.append(try equality(left, negated: false, item, options: options, in: scope)) }
            return parts.count == 1 ? parts[0] : .or(parts)
        }
        // `x IN (a, b)` behaves as `x = a OR x = b`; a nil in the list becomes `OR x IS NULL`.
        let (values, includesNull) = try left.membershipValues(items, in: schema)
        var alternatives: [EvaluationNode] = values.map { .compare(term, .equal, .bound(StoredValue(bound: $0))) }
        if includesNull { alternatives.append(.isNull(term, negated: false)) }
        return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
    }
}

extension EvaluationPlanner.Operand: PredicateOperand {
    fileprivate var role: OperandRole<Self> {
        switch self {
        case .column(_, let type, let label): .attribute(type, label: label)
        case .key(_, let destination, let label): .key(destination: destination, label: label)
        case .number: .count
        case .value(let argument): .value(argument)
        case .list(let items): .list(items)
        }
    }
}

// MARK: - Running a plan

extension EvaluationNode {
    /// True, false, or nil for SQL's unknown.
    func truth(for object: ManagedObject) -> Bool? {
        switch self {
        case .constant(let value):
            return value
        case .and(let parts):
            return Self.combine(parts, for: object, decisive: false)
        case .or(let parts):
            return Self.combine(parts, for: object, decisive: true)
        case .not(let inner):
            return inner.truth(for: object).map(!)
        case .exists(let step, let condition):
            // A nil to-one on the way leaves no destinations.
            guard let owner = step.owner(from: object) else { return false }
            if condition.isTrue { return owner.count(forKey: step.key) > 0 }
            return owner.objects(forKey: step.key).contains { condition.truth(for: $0) == true }
        case .compare(let a, let op, let b):
            guard let order = StoredValue.compare(a.value(for: object), a.affinity, b.value(for: object), b.affinity) else { return nil }
            return switch op {
            case .equal: order == 0
            case .notEqual: order != 0
            case .less: order < 0
            case .lessOrEqual: order <= 0
            case .greater: order > 0
            case .greaterOrEqual: order >= 0
            }
        case .identical(let a, let b, let negated):
            let order = StoredValue.compare(a.value(for: object), a.affinity, b.value(for: object), b.affinity, nullsEqual: true)
            return (order == 0) != negated
        case .isNull(let term, let negated):
            return term.value(for: object).isNull != negated
        case .search(let text, let pattern, let op, let options):
            guard let text = text.value(for: object).searchText, let pattern = pattern.value(for: object).searchText else { return false }
            return PredicateFunctions.matches(text, pattern, op, options: options)
        }
    }

    /// SQL's AND (`decisive` false) or OR (`decisive` true) over parts in order: the decisive value as soon as a part
    /// has it; otherwise unknown when some part was unknown, else the other value.
    private static func combine(_ parts: [EvaluationNode], for object: ManagedObject, decisive: Bool) -> Bool? {
        var unknown = false
        for part in parts {
            guard let truth = part.truth(for: object) else {
                unknown = true
                continue
            }
            if truth == decisive { return decisive }
        }
        return unknown ? nil : !decisive
    }
}

extension ToManyStep {
    /// The object holding the to-many, or nil when a to-one on the way is nil.
    func owner(from object: ManagedObject) -> ManagedObject? {
        follow(hops, from: object)
    }
}

/// The object at the end of a chain of to-ones, or nil when one of them is nil.
private func follow(_ hops: [String], from object: ManagedObject) -> ManagedObject? {
    var current = object
    for hop in hops {
        guard let next = current.object(forKey: hop) else { return nil }
        current = next
    }
    return current
}

extension EvaluationTerm {
    func value(for object: ManagedObject) -> StoredValue {
        switch self {
        case .attribute(let hops, let key, let affinity):
            guard let holder = follow(hops, from: object) else { return .null }
            return StoredValue(bound: holder.attributeValue(forKey: key)).stored(as: affinity)
        case .toOneKey(let hops, let key):
            guard let holder = follow(hops, from: object),
                  case .toOne(let index)? = holder.mapping.slot(forKey: key),
                  let destination = holder.destinationID(ofToOne: index) else { return .null }
            return .integer(destination.primaryKey)
        case .selfKey:
            return .integer(object.objectID.primaryKey)
        case .bound(let value):
            return value
        case .count(let step, let filter):
            guard let owner = step.owner(from: object) else { return .integer(0) }
            guard let filter else { return .integer(Int64(owner.count(forKey: step.key))) }
            return .integer(Int64(owner.objects(forKey: step.key).count(where: { filter.truth(for: $0) == true })))
        }
    }
}

// MARK: - SQLite values

/// How a column converts what is written to it (SQLite's type affinity); `none` for values with no column.
private enum ColumnAffinity: Sendable {
    case integer, real, numeric, text, none

    init(_ type: AttributeType) {
        switch type.columnType {
        case "INTEGER": self = .integer
        case "FLOAT": self = .real
        case "VARCHAR": self = .text
        case "BLOB": self = .none
        default: self = .numeric  // TIMESTAMP, DECIMAL
        }
    }

    var isNumeric: Bool {
        switch self {
        case .integer, .real, .numeric: true
        case .text, .none: false
        }
    }
}

/// A value as SQLite holds it: one of its five storage classes.
private enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The value as the store binds it (`SQLiteValues.bind`); SQLite turns a NaN into NULL.
    init(bound value: AttributeValue) {
        switch value {
        case .null: self = .null
        case .integer(let number): self = .integer(number)
        case .boolean(let flag): self = .integer(flag ? 1 : 0)
        case .double(let number): self = number.isNaN ? .null : .real(number)
        case .decimal(let number): self = .text(number.description)
        case .string(let text): self = .text(text)
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            self = seconds.isNaN ? .null : .real(seconds)
        case .data(let data): self = .blob(data)
        case .uuid(let uuid): self = .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .uri(let url): self = .text(url.absoluteString)
        }
    }

    var isNull: Bool { self == .null }

    /// The value as a column of `affinity` would keep it.
    func stored(as affinity: ColumnAffinity) -> StoredValue {
        switch affinity {
        case .none: return self
        case .text: return withTextAffinity
        case .numeric, .integer:
            let number = withNumericAffinity
            if case .real(let value) = number, let exact = Self.exactInteger(value) { return .integer(exact) }
            return number
        case .real:
            switch withNumericAffinity {
            case .integer(let value): return .real(Double(value))
            case let other: return other
            }
        }
    }

    /// Text that reads as a number becomes that number (an integer when it is one); anything else stays.
    var withNumericAffinity: StoredValue {
        guard case .text(let text) = self else { return self }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard Self.isNumericLiteral(trimmed) else { return self }
        if let integer = Int64(trimmed) { return .integer(integer) }
        guard let real = Double(trimmed) else { return self }
        return Self.exactInteger(real).map(StoredValue.integer) ?? .real(real)
    }

    /// Numbers become their text; text, blobs and NULL stay.
    var withTextAffinity: StoredValue {
        switch self {
        case .integer(let number): return .text(String(number))
        case .real(let number): return .text(Self.sqliteText(number))
        default: return self
        }
    }

    /// The text the string search function reads from a value (nil for NULL and blobs).
    var searchText: String? {
        switch self {
        case .text(let text): text
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .null, .blob: nil
        }
    }

    /// Orders two values as SQLite does in a comparison: first the conversions it applies when one side has a
    /// numeric or text affinity and the other does not, then NULL < numbers < text (by bytes) < blobs (by bytes).
    /// Nil when either side is NULL (unknown), unless `nullsEqual` (`IS`): then NULL equals NULL only.
    static func compare(_ a: StoredValue, _ aAffinity: ColumnAffinity, _ b: StoredValue, _ bAffinity: ColumnAffinity, nullsEqual: Bool = false) -> Int? {
        var a = a
        var b = b
        if aAffinity.isNumeric && !bAffinity.isNumeric {
            b = b.withNumericAffinity
        } else if bAffinity.isNumeric && !aAffinity.isNumeric {
            a = a.withNumericAffinity
        } else if aAffinity == .text && bAffinity == .none {
            b = b.withTextAffinity
        } else if bAffinity == .text && aAffinity == .none {
            a = a.withTextAffinity
        }
        switch (a, b) {
        case (.null, .null): return nullsEqual ? 0 : nil
        case (.null, _): return nullsEqual ? -1 : nil
        case (_, .null): return nullsEqual ? 1 : nil
        default: return order(a, b)
        }
    }

    private var rank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }

    private static func order(_ a: StoredValue, _ b: StoredValue) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.integer(let x), .real(let y)): return compareMixed(x, y)
        case (.real(let x), .integer(let y)): return -compareMixed(y, x)
        case (.text(let x), .text(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.blob(let x), .blob(let y)): return bytes(Array(x), Array(y))
        default: return a.rank < b.rank ? -1 : (a.rank > b.rank ? 1 : 0)
        }
    }

    /// An integer against a real without losing precision on large integers.
    private static func compareMixed(_ integer: Int64, _ real: Double) -> Int {
        // NaN (never stored: SQLite keeps it as NULL, but an argument may be one) orders after every number.
        if real.isNaN { return -1 }
        if real < -9_223_372_036_854_775_808.0 { return 1 }
        if real >= 9_223_372_036_854_775_808.0 { return -1 }
        let truncated = Int64(real)
        if integer < truncated { return -1 }
        if integer > truncated { return 1 }
        let widened = Double(integer)
        return widened < real ? -1 : (widened > real ? 1 : 0)
    }

    private static func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
    }

    private static func exactInteger(_ value: Double) -> Int64? {
        guard value.rounded() == value, value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0 else { return nil }
        return Int64(value)
    }

    /// Whether text is a decimal number as SQLite reads one: optional sign, digits with an optional point, and an
    /// optional exponent (no hex, no "inf" or "nan").
    private static func isNumericLiteral(_ text: String) -> Bool {
        var characters = Substring(text).utf8[...]
        if let first = characters.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { characters = characters.dropFirst() }
        var digits = 0
        while let c = characters.first, c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") { digits += 1; characters = characters.dropFirst() }
        if characters.first == UInt8(ascii: ".") {
            characters = characters.dropFirst()
            while let c = characters.first, c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") { digits += 1; characters = characters.dropFirst() }
        }
        guard digits > 0 else { return false }
        if let e = characters.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            characters = characters.dropFirst()
            if let sign = characters.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { characters = characters.dropFirst() }
            var exponentDigits = 0
            while let c = characters.first, c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") { exponentDigits += 1; characters = characters.dropFirst() }
            guard exponentDigits > 0 else { return false }
        }
        return characters.isEmpty
    }

    /// A real as SQLite writes it into text: 15 significant digits, always with a point or an exponent.
    private static func sqliteText(_ value: Double) -> String {
        var text = String(format: "%.15g", value)
        guard value.isFinite else { return text }
        if let exponent = text.firstIndex(where: { $0 == "e" }) {
            if !text[..<exponent].contains(".") { text.insert(contentsOf: ".0", at: exponent) }
        } else if !text.contains(".") {
            text += ".0"
        }
        return text
    }
}
