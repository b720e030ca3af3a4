import Foundation

/// A predicate as SQL over a store's tables: joins for the to-one key paths it reads, a condition with `?`
/// placeholders, and the values bound to them.
public struct PredicateSQL: Sendable, Equatable {
    /// JOIN clauses for to-one key paths, in the order added, e.g. "LEFT JOIN ZUSER t1 ON t0.ZSENDER = t1.Z_PK".
    /// They are left joins, so a nil to-one makes the values behind it NULL instead of dropping the row (`sender ==
    /// nil OR sender.name == "A"` keeps messages without a sender).
    public var joins: [String]
    /// The condition for WHERE, with `?` placeholders; "" for a predicate that is always true.
    public var condition: String
    /// Values bound to the placeholders, in order. Every value is bound, never spliced into SQL text.
    public var arguments: [AttributeValue]

    public init(joins: [String], condition: String, arguments: [AttributeValue]) {
        self.joins = joins
        self.condition = condition
        self.arguments = arguments
    }
}

/// Turns predicates over one entity into SQL for its table, aliased `t0`.
///
/// Shapes, Core Data's where it is known:
/// - `sender.name == ?` → `LEFT JOIN ZUSER t1 ON t0.ZSENDER = t1.Z_PK` and `t1.ZNAME = ?` (one join per distinct
///   to-one path, shared by every predicate and `column(forKeyPath:)` call of the compiler);
/// - `ANY members.role == 1` → `EXISTS (SELECT 1 FROM … WHERE <link to t0> AND t2.ZROLE = ?)`, through the join table
///   of a many-to-many; `ALL` → `NOT EXISTS (… AND NOT (…))`; `NONE` → `NOT EXISTS (…)`. A correlated `EXISTS`
///   rather than a join plus `DISTINCT`, so rows are never repeated and ordering/limits stay simple;
/// - `members.@count` → a correlated `(SELECT COUNT(*) …)`;
/// - `x == nil` → `IS NULL`; `x != v` → `(x <> ? OR x IS NULL)`, as a nil value differs from any value;
/// - string operators, `LIKE`, `MATCHES` and any `[c]`/`[d]` comparison → `GRAPHSTORE_STRING_SEARCH(…)` (see
///   `PredicateFunctions`), which the connection must have installed.
public struct PredicateCompiler: ComparisonBuilder, Sendable {
    public let schema: StoreSchema
    public let entity: String

    /// The top-level scope: `t0`, with the joins added so far.
    private var root: Scope
    private var nextAlias = 1
    private let rootError: PredicateError?

    /// One table in the statement being built: the root, or a to-many's destination inside a subquery.
    struct Scope {
        var entity: Entity
        var alias: String
        var joins: [String] = []
        /// Join aliases by `<alias>.<to-one name>`, so each to-one path is joined once.
        var joined: [String: (alias: String, entity: Entity)] = [:]
        /// SUBQUERY variables that stand for this scope's object.
        var variables: Set<String> = []
    }

    /// A piece of SQL with the values for its placeholders, in order.
    struct Fragment {
        var sql: String
        var arguments: [AttributeValue] = []

        static let alwaysTrue = Fragment(sql: "1")
        static let alwaysFalse = Fragment(sql: "0")
    }

    /// What an expression stands for in SQL.
    enum Operand {
        /// A stored attribute's column.
        case column(sql: String, type: AttributeType, entity: String, key: String)
        /// A row key: a to-one's foreign key column, or `Z_PK` for `SELF`; compared with object IDs.
        case key(sql: String, destination: Entity, entity: String, key: String)
        /// A computed integer, e.g. a correlated count.
        case number(Fragment)
        case value(PredicateArgument)
        case list([Operand])
    }

    /// A compiler for predicates over `entity` (root table alias `t0`).
    public init(schema: StoreSchema, entity: String) {
        self.schema = schema
        self.entity = entity
        if let resolved = schema.model.entity(named: entity) {
            root = Scope(entity: resolved, alias: "t0")
            rootError = nil
        } else {
            // Reported by the first call, so that creating a compiler cannot fail.
            root = Scope(entity: schema.model.entities[0], alias: "t0")
            rootError = PredicateError(.unknownKey, "the model has no entity '\(entity)'")
        }
    }

    /// The joins added so far (by predicates and `column(forKeyPath:)`), in order.
    public var joins: [String] { root.joins }

    /// The qualified column for a key path through to-one relationships ("sender.name" → "t1.ZNAME"), adding the
    /// joins it needs (shared with predicates: one join per distinct to-one path). A key path ending at a to-one gives
    /// its foreign key column.
    public mutating func column(forKeyPath keyPath: String) throws(PredicateError) -> String {
        if let rootError { throw rootError }
        var scope = root
        switch try operand(.keyPath(keyPath), in: &scope) {
        case .column(let sql, _, _, _), .key(let sql, _, _, _):
            root = scope
            return sql
        default: throw PredicateError(.unsupported, "\(entity): '\(keyPath)' is not a stored attribute or to-one")
        }
    }

    /// Compiles a predicate; its joins are the compiler's joins so far (including any it added).
    public mutating func compile(_ predicate: Predicate) throws(PredicateError) -> PredicateSQL {
        if let rootError { throw rootError }
        var scope = root
        let fragment = try compile(predicate, in: &scope)
        root = scope
        let condition = fragment.sql == "1" ? "" : fragment.sql
        return PredicateSQL(joins: root.joins, condition: condition, arguments: fragment.arguments)
    }

    // MARK: predicates

    private mutating func compile(_ predicate: Predicate, in scope: inout Scope) throws(PredicateError) -> Fragment {
        switch predicate {
        case .constant(let value):
            return value ? .alwaysTrue : .alwaysFalse
        case .and(let operands), .or(let operands):
            let isAnd = if case .and = predicate { true } else { false }
            var parts: [Fragment] = []
            for operand in operands { parts.append(try compile(operand, in: &scope)) }
            // Constants fold away: `x AND TRUE` is `x`, `x OR TRUE` is `TRUE`.
            let identity = isAnd ? "1" : "0"
            let absorbing = isAnd ? "0" : "1"
            if parts.contains(where: { $0.sql == absorbing }) { return Fragment(sql: absorbing) }
            parts.removeAll { $0.sql == identity }
            if parts.isEmpty { return Fragment(sql: identity) }
            if parts.count == 1 { return parts[0] }
            return Fragment(
                sql: "(" + parts.map(\.sql).joined(separator: isAnd ? " AND " : " OR ") + ")",
                arguments: parts.flatMap(\.arguments))
        case .not(let operand):
            let inner = try compile(operand, in: &scope)
            if inner.sql == "1" { return .alwaysFalse }
            if inner.sql == "0" { return .alwaysTrue }
            return Fragment(sql: "NOT (\(inner.sql))", arguments: inner.arguments)
        case .quantified(let quantifier, let collection, let inner):
            let path = components(collection)
            let resolved = try resolve(path, label: collection, in: &scope)
            guard case .toMany(let owner, let ownerEntity, let relationship, let rest) = resolved, rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) needs a to-many key path; '\(collection)' is not one")
            }
            return try quantified(quantifier, owner: owner, ownerEntity: ownerEntity, relationship: relationship, inner, in: scope)
        case .comparison(let comparison):
            return try compile(comparison, in: &scope)
        }
    }

    private mutating func compile(_ comparison: Predicate.Comparison, in scope: inout Scope) throws(PredicateError) -> Fragment {
        try comparison.left.checkBound(variables: scope.variables, entity: scope.entity.name)
        try comparison.right.checkBound(variables: scope.variables, entity: scope.entity.name)

        if let quantifier = comparison.modifier {
            guard case .keyPath(let keyPath) = comparison.left else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) needs a key path through a to-many on the left of '\(comparison.operator.rawValue)'")
            }
            let resolved = try resolve(components(keyPath), label: keyPath, in: &scope)
            guard case .toMany(let owner, let ownerEntity, let relationship, let rest) = resolved else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): \(quantifier.rawValue) needs a key path through a to-many; '\(keyPath)' has none")
            }
            var inner = comparison
            inner.modifier = nil
            inner.left = rest.isEmpty ? .evaluatedObject : .keyPath(rest.joined(separator: "."))
            return try quantified(quantifier, owner: owner, ownerEntity: ownerEntity, relationship: relationship, .comparison(inner), in: scope)
        }

        // Membership in a to-many: `tags CONTAINS %@`, `%@ IN tags`.
        if comparison.operator == .contains, case .keyPath(let keyPath) = comparison.left,
           case .toMany(let owner, let ownerEntity, let relationship, let rest) = try resolve(components(keyPath), label: keyPath, in: &scope), rest.isEmpty {
            let inner = Predicate.compare(.evaluatedObject, .equal, comparison.right)
            return try quantified(.any, owner: owner, ownerEntity: ownerEntity, relationship: relationship, inner, in: scope)
        }
        if comparison.operator == .in, case .keyPath(let keyPath) = comparison.right,
           case .toMany(let owner, let ownerEntity, let relationship, let rest) = try resolve(components(keyPath), label: keyPath, in: &scope), rest.isEmpty {
            let inner = Predicate.compare(.evaluatedObject, .equal, comparison.left)
            return try quantified(.any, owner: owner, ownerEntity: ownerEntity, relationship: relationship, inner, in: scope)
        }

        var left = try operand(comparison.left, in: &scope)
        var right = try operand(comparison.right, in: &scope)
        var op = comparison.operator
        // Keep the key on the left: `5 < age` is `age > 5`.
        if case .value = left, !(right.isValue), let flipped = op.flipped {
            swap(&left, &right)
            op = flipped
        }
        return try compare(left, op, right, options: comparison.options, in: scope, entity: scope.entity.name)
    }

    private mutating func quantified(
        _ quantifier: Predicate.Quantifier, owner: String, ownerEntity: Entity, relationship: RelationshipDescription,
        _ inner: Predicate, in scope: Scope
    ) throws(PredicateError) -> Fragment {
        var (from, link, destinationScope) = try subquerySource(owner: owner, ownerEntity: ownerEntity, relationship: relationship)
        destinationScope.variables = []
        let condition = try compile(inner, in: &destinationScope)
        let joins = destinationScope.joins.map { " " + $0 }.joined()
        let head = "SELECT 1 FROM \(from)\(joins) WHERE \(link)"
        switch quantifier {
        case .any:
            if condition.sql == "0" { return .alwaysFalse }
            let tail = condition.sql == "1" ? "" : " AND \(condition.sql)"
            return Fragment(sql: "EXISTS (\(head)\(tail))", arguments: condition.arguments)
        case .none:
            if condition.sql == "0" { return .alwaysTrue }
            let tail = condition.sql == "1" ? "" : " AND \(condition.sql)"
            return Fragment(sql: "NOT EXISTS (\(head)\(tail))", arguments: condition.arguments)
        case .all:
            if condition.sql == "1" { return .alwaysTrue }
            let tail = condition.sql == "0" ? "" : " AND NOT (\(condition.sql))"
            return Fragment(sql: "NOT EXISTS (\(head)\(tail))", arguments: condition.arguments)
        }
    }

    /// The FROM clause and link condition that list the destinations of a to-many of the row aliased `owner`.
    private mutating func subquerySource(
        owner: String, ownerEntity: Entity, relationship: RelationshipDescription
    ) throws(PredicateError) -> (from: String, link: String, scope: Scope) {
        guard let destination = schema.model.entity(named: relationship.destination),
              let destinationTable = schema.table(for: destination.name) else {
            throw PredicateError(.unknownKey, "\(ownerEntity.name): relationship '\(relationship.name)' has no stored destination")
        }
        switch schema.storage(forRelationship: relationship.name, of: ownerEntity.name) {
        case .inverseForeignKey(let table, let column, _):
            let alias = newAlias()
            return ("\(table) \(alias)", "\(alias).\(column) = \(owner).Z_PK", Scope(entity: destination, alias: alias))
        case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
            let link = newAlias()
            let alias = newAlias()
            return ("\(table) \(link) JOIN \(destinationTable.name) \(alias) ON \(alias).Z_PK = \(link).\(destinationColumn)",
                    "\(link).\(sourceColumn) = \(owner).Z_PK", Scope(entity: destination, alias: alias))
        default:
            throw PredicateError(.unsupported, "\(ownerEntity.name): to-many '\(relationship.name)' is transient, so the store cannot search it")
        }
    }

    /// A correlated count of a to-many's destinations, optionally only those satisfying `filter`.
    private mutating func count(
        owner: String, ownerEntity: Entity, relationship: RelationshipDescription, filter: Predicate? = nil, variable: String? = nil
    ) throws(PredicateError) -> Fragment {
        if filter == nil {
            switch schema.storage(forRelationship: relationship.name, of: ownerEntity.name) {
            case .inverseForeignKey(let table, let column, _):
                let alias = newAlias()
                return Fragment(sql: "(SELECT COUNT(*) FROM \(table) \(alias) WHERE \(alias).\(column) = \(owner).Z_PK)")
            case .joinTable(let table, let sourceColumn, _, _, _):
                let alias = newAlias()
                return Fragment(sql: "(SELECT COUNT(*) FROM \(table) \(alias) WHERE \(alias).\(sourceColumn) = \(owner).Z_PK)")
            default:
                break
            }
        }
        var (from, link, scope) = try subquerySource(owner: owner, ownerEntity: ownerEntity, relationship: relationship)
        if let variable { scope.variables = [variable] }
        let condition = try filter.map { predicate throws(PredicateError) in try compile(predicate, in: &scope) } ?? .alwaysTrue
        let joins = scope.joins.map { " " + $0 }.joined()
        let tail = condition.sql == "1" ? "" : " AND \(condition.sql)"
        return Fragment(sql: "(SELECT COUNT(*) FROM \(from)\(joins) WHERE \(link)\(tail))", arguments: condition.arguments)
    }

    private mutating func newAlias() -> String {
        defer { nextAlias += 1 }
        return "t\(nextAlias)"
    }

    // MARK: key paths

    private enum Resolved {
        case attribute(sql: String, type: AttributeType, entity: Entity, key: String)
        case toOne(sql: String, destination: Entity, entity: Entity, key: String)
        case primaryKey(sql: String, entity: Entity)
        case toMany(owner: String, ownerEntity: Entity, relationship: RelationshipDescription, rest: [String])
    }

    private func components(_ keyPath: String) -> [String] {
        keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// Walks a key path from the scope's object, joining to-ones on the way, up to its end or its first to-many.
    private mutating func resolve(_ path: [String], label: String, in scope: inout Scope) throws(PredicateError) -> Resolved {
        var alias = scope.alias
        var entity = scope.entity
        var path = path
        // `$x.name` inside SUBQUERY(…, $x, …) starts at the subquery's object.
        if let first = path.first, first.hasPrefix("$") {
            let name = String(first.dropFirst())
            guard scope.variables.contains(name) else {
                throw PredicateError(.unboundVariable, "\(scope.entity.name): variable $\(name) in '\(label)' is not bound; substitute it with substituting(_:)")
            }
            path.removeFirst()
        }
        if path.isEmpty { return .primaryKey(sql: "\(alias).Z_PK", entity: entity) }
        for (offset, name) in path.enumerated() {
            let isLast = offset == path.count - 1
            if let attribute = entity.attribute(named: name) {
                guard isLast else {
                    throw PredicateError(.unknownKey, "\(entity.name): '\(name)' is an attribute, so '\(label)' cannot go on past it")
                }
                guard attribute.isPersistent, let column = schema.column(forAttribute: name, of: entity.name) else {
                    throw PredicateError(.unsupported, "\(entity.name): attribute '\(name)' is transient, so the store cannot search it")
                }
                return .attribute(sql: "\(alias).\(column)", type: attribute.type, entity: entity, key: name)
            }
            guard let relationship = entity.relationship(named: name),
                  let destination = schema.model.entity(named: relationship.destination) else {
                throw PredicateError(.unknownKey, "\(entity.name) has no key '\(name)'")
            }
            if relationship.isToMany {
                return .toMany(owner: alias, ownerEntity: entity, relationship: relationship, rest: Array(path[(offset + 1)...]))
            }
            guard case .foreignKey(let column, _, _)? = schema.storage(forRelationship: name, of: entity.name) else {
                throw PredicateError(.unsupported, "\(entity.name): to-one '\(name)' is transient, so the store cannot search it")
            }
            if isLast { return .toOne(sql: "\(alias).\(column)", destination: destination, entity: entity, key: name) }
            let joinKey = "\(alias).\(name)"
            if let existing = scope.joined[joinKey] {
                alias = existing.alias
            } else {
                guard let table = schema.table(for: destination.name) else {
                    throw PredicateError(.unknownKey, "\(entity.name): '\(name)' has no stored destination")
                }
                let joinAlias = newAlias()
                scope.joins.append("LEFT JOIN \(table.name) \(joinAlias) ON \(alias).\(column) = \(joinAlias).Z_PK")
                scope.joined[joinKey] = (joinAlias, destination)
                alias = joinAlias
            }
            entity = destination
        }
        preconditionFailure("a key path walk ends inside its loop")
    }

    private mutating func operand(_ expression: Predicate.Expression, in scope: inout Scope) throws(PredicateError) -> Operand {
        switch expression {
        case .keyPath(let keyPath):
            switch try resolve(components(keyPath), label: keyPath, in: &scope) {
            case .attribute(let sql, let type, let entity, let key):
                return .column(sql: sql, type: type, entity: entity.name, key: key)
            case .toOne(let sql, let destination, let entity, let key):
                return .key(sql: sql, destination: destination, entity: entity.name, key: key)
            case .primaryKey(let sql, let entity):
                return .key(sql: sql, destination: entity, entity: entity.name, key: "SELF")
            case .toMany(_, let ownerEntity, let relationship, _):
                throw PredicateError(.toManyWithoutQuantifier,
                    "\(ownerEntity.name): to-many '\(relationship.name)' in '\(keyPath)' needs ANY, ALL, NONE or @count")
            }
        case .evaluatedObject:
            return .key(sql: "\(scope.alias).Z_PK", destination: scope.entity, entity: scope.entity.name, key: "SELF")
        case .constant(let argument):
            return .value(argument)
        case .list(let items):
            var operands: [Operand] = []
            for item in items { operands.append(try operand(item, in: &scope)) }
            return .list(operands)
        case .variable(let name):
            if scope.variables.contains(name) {
                return .key(sql: "\(scope.alias).Z_PK", destination: scope.entity, entity: scope.entity.name, key: "$" + name)
            }
            throw PredicateError.unbound(variable: name, entity: scope.entity.name)
        case .keyPathCount(let keyPath):
            guard case .toMany(let owner, let ownerEntity, let relationship, let rest) = try resolve(components(keyPath), label: keyPath, in: &scope),
                  rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): '\(keyPath).@count' needs a to-many key path")
            }
            return .number(try count(owner: owner, ownerEntity: ownerEntity, relationship: relationship))
        case .subqueryCount(let collection, let variable, let predicate):
            guard case .toMany(let owner, let ownerEntity, let relationship, let rest) = try resolve(components(collection), label: collection, in: &scope),
                  rest.isEmpty else {
                throw PredicateError(.typeMismatch, "\(scope.entity.name): SUBQUERY needs a to-many key path; '\(collection)' is not one")
            }
            return .number(try count(owner: owner, ownerEntity: ownerEntity, relationship: relationship, filter: predicate, variable: variable))
        }
    }

    // MARK: comparisons

    func ordering(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, in scope: Scope) throws(PredicateError) -> Fragment {
        let (leftSQL, rightSQL, arguments) = try ordered(left, right, op: op, in: scope)
        return Fragment(sql: "\(leftSQL) \(op.rawValue) \(rightSQL)", arguments: arguments)
    }

    func between(_ left: Operand, low: Operand, high: Operand, in scope: Scope) throws(PredicateError) -> Fragment {
        let lower = try ordered(left, low, op: .between, in: scope)
        let upper = try ordered(left, high, op: .between, in: scope)
        // The left side is written once, so its values (a constant's, a subquery's) are bound once.
        let leftValues = left.sql == nil ? 1 : left.arguments.count
        return Fragment(sql: "\(lower.0) BETWEEN \(lower.1) AND \(upper.1)", arguments: lower.2 + upper.2.dropFirst(leftValues))
    }

    func equality(_ left: Operand, negated: Bool, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Fragment {
        // `x == nil` / `x != nil`.
        if case .value(.value(.null)) = right, let sql = left.sql {
            return Fragment(sql: "\(sql) \(negated ? "IS NOT NULL" : "IS NULL")", arguments: left.arguments)
        }
        if case .column(let sql, let type, _, _) = left, !options.isEmpty {
            let (_, pattern, arguments) = try ordered(left, right, op: .equal, in: scope, requireString: true)
            guard type == .string || type == .uri else {
                throw PredicateError(.typeMismatch, "\(left.label): options [c]/[d] need a String attribute")
            }
            let call = PredicateFunctions.call(text: sql, pattern: pattern, operator: .equal, options: options)
            return Fragment(sql: negated ? "NOT \(call)" : call, arguments: arguments)
        }
        switch (left, right) {
        case (.key(let sql, _, _, _), .value(let argument)):
            let key = try left.coerced(argument, op: .equal, in: schema)
            if negated { return Fragment(sql: "(\(sql) <> ? OR \(sql) IS NULL)", arguments: [key]) }
            return Fragment(sql: "\(sql) = ?", arguments: [key])
        case (.key(let leftSQL, _, _, _), .key(let rightSQL, _, _, _)):
            return Fragment(sql: "\(leftSQL) \(negated ? "IS NOT" : "IS") \(rightSQL)")
        default:
            let (leftSQL, rightSQL, arguments) = try ordered(left, right, op: .equal, in: scope)
            if negated {
                if case .column = left {
                    return Fragment(sql: "(\(leftSQL) <> \(rightSQL) OR \(leftSQL) IS NULL)", arguments: arguments)
                }
                return Fragment(sql: "\(leftSQL) <> \(rightSQL)", arguments: arguments)
            }
            return Fragment(sql: "\(leftSQL) = \(rightSQL)", arguments: arguments)
        }
    }

    /// Both sides of an ordering or equality as SQL, with the value coerced to the column's type.
    private func ordered(
        _ left: Operand, _ right: Operand, op: Predicate.Operator, in scope: Scope, requireString: Bool = false
    ) throws(PredicateError) -> (String, String, [AttributeValue]) {
        guard let leftSQL = left.sql else {
            // Two constants: bind both and let SQLite compare them.
            let (a, b) = try Operand.constants(left, right, op: op, entity: scope.entity.name)
            return ("?", "?", [a, b])
        }
        if let value = try left.boundValue(comparedWith: right, op: op, requireString: requireString, entity: scope.entity.name, in: schema) {
            return (leftSQL, "?", left.arguments + [value])
        }
        // cannot fail: `boundValue` is nil only when the right side is a column or a count, which has SQL.
        return (leftSQL, right.sql!, left.arguments + right.arguments)
    }

    func stringSearch(_ left: Operand, _ op: Predicate.Operator, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Fragment {
        guard case .column(let sql, let type, _, _) = left, type == .string || type == .uri else {
            throw PredicateError(.typeMismatch, "\(left.label): \(op.rawValue) needs a String attribute on its left")
        }
        let (_, pattern, arguments) = try ordered(left, right, op: op, in: scope, requireString: true)
        if op == .matches, case .value(.value(.string(let regex))) = right {
            guard PredicateFunctions.isValidRegularExpression(regex) else {
                throw PredicateError(.typeMismatch, "\(left.label): '\(regex)' is not a valid regular expression for MATCHES")
            }
        }
        return Fragment(sql: PredicateFunctions.call(text: sql, pattern: pattern, operator: op, options: options), arguments: arguments)
    }

    func membership(_ left: Operand, _ right: Operand, options: Predicate.Options, in scope: Scope) throws(PredicateError) -> Fragment {
        let items = try left.membershipItems(right)
        guard let sql = left.sql else {
            throw PredicateError(.typeMismatch, "\(scope.entity.name): IN needs a key path on its left")
        }
        if items.isEmpty { return .alwaysFalse }
        if !options.isEmpty {
            var parts: [Fragment] = []
            for item in items {
                parts.append(try equality(left, negated: false, item, options: options, in: scope))
            }
            return parts.count == 1 ? parts[0] : Fragment(sql: "(" + parts.map(\.sql).joined(separator: " OR ") + ")", arguments: parts.flatMap(\.arguments))
        }
        let (values, includesNull) = try left.membershipValues(items, in: schema)
        let arguments = left.arguments + values
        let test = values.isEmpty ? nil : "\(sql) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))"
        switch (test, includesNull) {
        case (let test?, false): return Fragment(sql: test, arguments: arguments)
        case (let test?, true): return Fragment(sql: "(\(test) OR \(sql) IS NULL)", arguments: arguments + left.arguments)
        default: return Fragment(sql: "\(sql) IS NULL", arguments: left.arguments)
        }
    }
}

extension PredicateCompiler.Operand {
    /// The SQL standing for the operand, when it is not a plain value or list.
    var sql: String? {
        switch self {
        case .column(let sql, _, _, _), .key(let sql, _, _, _): sql
        case .number(let fragment): fragment.sql
        case .value, .list: nil
        }
    }

    /// Values bound inside the operand's own SQL (a count's subquery).
    var arguments: [AttributeValue] {
        if case .number(let fragment) = self { return fragment.arguments }
        return []
    }

}

extension PredicateCompiler.Operand: PredicateOperand {
    /// Columns and keys are named `Entity.key` in messages (`Message.sentAt`).
    var role: OperandRole<Self> {
        switch self {
        case .column(_, let type, let entity, let key): .attribute(type, label: "\(entity).\(key)")
        case .key(_, let destination, let entity, let key): .key(destination: destination, label: "\(entity).\(key)")
        case .number: .count
        case .value(let argument): .value(argument)
        case .list(let items): .list(items)
        }
    }
}

extension Predicate.Operator {
    /// The operator with its sides swapped (`<` for `>`), for operators that have one.
    var flipped: Predicate.Operator? {
        switch self {
        case .equal, .notEqual: self
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        default: nil
        }
    }
}
