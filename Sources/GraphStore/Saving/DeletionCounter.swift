import Foundation

/// Works out a delete's plan with counting statements, reading no doomed key into memory: the rows a delete takes
/// are described in SQL, one common table expression per table (`d3(k, e)`: key and entity of each doomed row of
/// the table whose root entity is number 3), built from the roots' keys and the Cascade rules into the table.
/// Tables whose Cascade rules form a cycle (a reflexive relationship, or two tables cascading to each other) share
/// one recursive expression whose `UNION` visits a row once, so cycles end and a row reached by two paths is
/// counted once. Every statement is then a `COUNT(*)` over those sets: per table the doomed rows by entity, per
/// Nullify step the references survivors lose, and per Deny relationship the objects that would survive it.
///
/// It gives the plan `DeletionPlanner.preview(_:)` gives (that planner reads the keys, which the save needs to
/// carry a delete out); like it, it plans from the store as it is, not from unsaved changes.
struct DeletionCounter {
    typealias Query = DeletionPlanner.Query

    let coordinator: PersistentStoreCoordinator
    let query: Query
    /// Hears the rows each statement stands for (a count's value, else the rows read), as it finishes.
    var finished: ((Int) throws -> Void)?

    /// A Cascade rule from the rows of one entity (and its sub-entities) to rows of another table.
    struct Edge {
        let sourceRoot: Int
        /// The entity numbers of the source rows it applies to; nil for every row of the source table.
        let sourceEntities: ClosedRange<Int>?
        let destinationRoot: Int
        let kind: Kind

        enum Kind {
            /// The destination's key in `column` of the source row.
            case toOne(column: String)
            /// The source's key in `column` of the destination row.
            case inverseForeignKey(column: String)
            case joinTable(table: String, sourceColumn: String, destinationColumn: String)
        }
    }

    /// One `WITH` term: its name, text, bound values (in text order), and the terms it reads.
    struct Term {
        let name: String
        let sql: String
        let arguments: [AttributeValue]
        let uses: [String]
        /// The column list after the name.
        var columns = "(k, e)"
    }

    /// Terms in an order where each comes after those it reads.
    var terms: [Term] = []
    /// The roots' keys: table (by root entity number) → entity number → keys.
    var rootKeys: [Int: [Int: [Int64]]] = [:]
    /// The Cascade rules into each reachable table from reachable tables.
    var incoming: [Int: [Edge]] = [:]
    /// Tables whose Cascade rules form a cycle (their rows are found by a recursive term).
    var recursive: Set<Int> = []
    /// Per reachable table, the condition on its rows (alias `t`) that lists its doomed rows by the doomed rows of
    /// the tables cascading to it (each read once, as a set).
    var enumerations: [Int: String] = [:]
    /// The reachable tables, each after the tables cascading to it (but within a cycle).
    var order: [Int] = []
    var termIndex: [String: Int] = [:]
    /// The tables (by root number) whose rows the delete can reach.
    private(set) var reachable: Set<Int> = []

    /// Above this many doomed objects of an entity, the references other rows hold to them are counted by reading
    /// those rows' keys and looking each up (a cost that grows with the referring table), not by listing the doomed
    /// objects and looking up what refers to each (a cost that grows with the delete); and above this many doomed
    /// rows in the tables cascading to a table, its rows are read and tested the same way.
    static let defaultListingLimit = 50_000
    var listingLimit = Self.defaultListingLimit

    /// A counter whose statements run on `runner`.
    init(runner: StatementRunner) {
        self.coordinator = runner.coordinator
        self.query = { sql, arguments, row in try runner.query(SQLStatement(sql, arguments), row: row) }
    }

    // MARK: the doomed sets

    /// Every Cascade rule of the model, each once (an inherited relationship under the entity that declares it).
    static func cascadeEdges(_ coordinator: PersistentStoreCoordinator) -> [Edge] {
        let model = coordinator.model
        var edges: [Edge] = []
        for entity in model.entities {
            let mapping = coordinator.mapping(forEntityNumber: entity.number)
            let root = coordinator.mapping(forEntityNumber: mapping.rootNumber)
            let sources: ClosedRange<Int>? = mapping.entityNumbers == root.entityNumbers ? nil : mapping.entityNumbers
            for toOne in mapping.toOnes where toOne.description.deleteRule == .cascade {
                guard !DeletionPlanner.inherits(mapping, toOne.name, model) else { continue }
                edges.append(Edge(sourceRoot: mapping.rootNumber, sourceEntities: sources,
                                  destinationRoot: coordinator.mapping(forEntityNumber: toOne.destinationNumber).rootNumber,
                                  kind: .toOne(column: toOne.column)))
            }
            for toMany in mapping.toManys where toMany.description.deleteRule == .cascade {
                guard !DeletionPlanner.inherits(mapping, toMany.name, model) else { continue }
                let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber).rootNumber
                switch toMany.storage {
                case .inverseForeignKey(_, let column, _):
                    edges.append(Edge(sourceRoot: mapping.rootNumber, sourceEntities: sources, destinationRoot: destination,
                                      kind: .inverseForeignKey(column: column)))
                case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
                    edges.append(Edge(sourceRoot: mapping.rootNumber, sourceEntities: sources, destinationRoot: destination,
                                      kind: .joinTable(table: table, sourceColumn: sourceColumn, destinationColumn: destinationColumn)))
                case .foreignKey, .transient:
                    continue
                }
            }
        }
        return edges
    }

    func tableName(_ root: Int) -> String { coordinator.mapping(forEntityNumber: root).table }

    /// The entity of a row of `root`'s table, as SQL on alias `alias`: `Z_ENT`, or the one entity the table holds.
    func entityTerm(_ root: Int, _ alias: String) -> String {
        let mapping = coordinator.mapping(forEntityNumber: root)
        return mapping.tableHasSubentities ? "\(alias).Z_ENT" : "\(root)"
    }

    static func name(_ root: Int) -> String { "d\(root)" }

    /// `(SELECT k FROM d3 WHERE e BETWEEN 4 AND 5)`: the doomed keys an edge starts from.
    static func sourceKeys(_ edge: Edge) -> String {
        let filter = edge.sourceEntities.map { " WHERE e BETWEEN \($0.lowerBound) AND \($0.upperBound)" } ?? ""
        return "(SELECT k FROM \(name(edge.sourceRoot))\(filter))"
    }

    /// Describes the rows deleting `roots` reaches, per table, as `WITH` terms: `r3(k, e)` the roots of a table,
    /// `d3(k, e)` its doomed rows, `c3(r, k, e)` a cycle's.
    mutating func describe(_ roots: [ObjectID]) {
        for id in roots {
            let root = coordinator.mapping(forEntityNumber: id.entityNumber).rootNumber
            rootKeys[root, default: [:]][id.entityNumber, default: []].append(id.primaryKey)
        }
        let edges = Self.cascadeEdges(coordinator)
        // The tables the roots' cascades can reach.
        var frontier = Array(rootKeys.keys)
        reachable = Set(frontier)
        while let table = frontier.popLast() {
            for edge in edges where edge.sourceRoot == table && reachable.insert(edge.destinationRoot).inserted {
                frontier.append(edge.destinationRoot)
            }
        }
        let used = edges.filter { reachable.contains($0.sourceRoot) }
        for edge in used { incoming[edge.destinationRoot, default: []].append(edge) }
        for (table, byEntity) in rootKeys.sorted(by: { $0.key < $1.key }) {
            let entities = byEntity.sorted { $0.key < $1.key }
            add(Term(name: "r\(table)", sql: entities.map { "SELECT value AS k, \($0.key) AS e FROM json_each(?)" }.joined(separator: " UNION ALL "),
                     arguments: entities.map { DeletionPlanner.json(Set($0.value).sorted()) }, uses: []))
        }
        for component in Self.components(of: reachable.sorted(), edges: used) {
            order += component
            let members = Set(component)
            let inside = used.filter { members.contains($0.sourceRoot) && members.contains($0.destinationRoot) }
            /// Each member's rows reached from outside the component: roots, and rules from tables described before.
            func entry(_ table: Int) -> (condition: String, uses: [String])? {
                var conditions: [String] = []
                var uses: [String] = []
                if rootKeys[table] != nil {
                    conditions.append("t.Z_PK IN (SELECT k FROM r\(table))")
                    uses.append("r\(table)")
                }
                for edge in used where edge.destinationRoot == table && !members.contains(edge.sourceRoot) {
                    uses.append(Self.name(edge.sourceRoot))
                    switch edge.kind {
                    case .inverseForeignKey(let column):
                        conditions.append("t.\(column) IN \(Self.sourceKeys(edge))")
                    case .joinTable(let join, let sourceColumn, let destinationColumn):
                        conditions.append("t.Z_PK IN (SELECT j.\(destinationColumn) FROM \(join) j WHERE j.\(sourceColumn) IN \(Self.sourceKeys(edge)))")
                    case .toOne(let column):
                        conditions.append("t.Z_PK IN (SELECT s.\(column) FROM \(tableName(edge.sourceRoot)) s WHERE s.Z_PK IN \(Self.sourceKeys(edge)))")
                    }
                }
                guard !conditions.isEmpty else { return nil }
                return (conditions.joined(separator: " OR "), uses)
            }
            if component.count == 1, inside.isEmpty, let table = component.first, let entry = entry(table) {
                enumerations[table] = entry.condition
                add(Term(name: Self.name(table),
                         sql: "SELECT t.Z_PK AS k, \(entityTerm(table, "t")) AS e FROM \(tableName(table)) t WHERE \(entry.condition)",
                         arguments: [], uses: entry.uses))
                continue
            }
            // A cycle of Cascade rules: one recursive term for the component, whose UNION visits each row once.
            guard let smallest = component.min() else { continue }
            let cycle = "c\(smallest)"
            var parts: [String] = []
            var uses: [String] = []
            for table in component {
                recursive.insert(table)
                enumerations[table] = "t.Z_PK IN (SELECT k FROM \(Self.name(table)))"
                guard let entry = entry(table) else { continue }
                parts.append("SELECT \(table), t.Z_PK, \(entityTerm(table, "t")) FROM \(tableName(table)) t WHERE \(entry.condition)")
                uses += entry.uses
            }
            for edge in inside {
                let destination = edge.destinationRoot
                let filter = edge.sourceEntities.map { " AND d.e BETWEEN \($0.lowerBound) AND \($0.upperBound)" } ?? ""
                let select = "SELECT \(destination), t.Z_PK, \(entityTerm(destination, "t"))"
                switch edge.kind {
                case .inverseForeignKey(let column):
                    parts.append("\(select) FROM \(cycle) d JOIN \(tableName(destination)) t ON t.\(column) = d.k WHERE d.r = \(edge.sourceRoot)\(filter)")
                case .joinTable(let join, let sourceColumn, let destinationColumn):
                    parts.append("\(select) FROM \(cycle) d JOIN \(join) j ON j.\(sourceColumn) = d.k JOIN \(tableName(destination)) t ON t.Z_PK = j.\(destinationColumn)"
                        + " WHERE d.r = \(edge.sourceRoot)\(filter)")
                case .toOne(let column):
                    parts.append("\(select) FROM \(cycle) d JOIN \(tableName(edge.sourceRoot)) s ON s.Z_PK = d.k JOIN \(tableName(destination)) t ON t.Z_PK = s.\(column)"
                        + " WHERE d.r = \(edge.sourceRoot)\(filter)")
                }
            }
            add(Term(name: cycle, sql: parts.joined(separator: " UNION "), arguments: [], uses: uses, columns: "(r, k, e)"))
            for table in component {
                add(Term(name: Self.name(table), sql: "SELECT k, e FROM \(cycle) WHERE r = \(table)", arguments: [], uses: [cycle]))
            }
        }
    }

    // MARK: membership

    /// `entities` as a condition on `alias`'s `Z_ENT`, when `root`'s table holds other entities too.
    func entityFilter(_ root: Int, _ alias: String, _ entities: ClosedRange<Int>?) -> String {
        guard let entities, coordinator.mapping(forEntityNumber: root).tableHasSubentities else { return "" }
        return " AND \(alias).Z_ENT BETWEEN \(entities.lowerBound) AND \(entities.upperBound)"
    }

    /// The ways a Cascade rule reaches row `alias` of `table`, each a condition on the row that looks up only the
    /// rows it depends on (no doomed set is made): for testing a few rows, where `enumerations` list them all.
    func reachedConditions(_ table: Int, _ alias: String, depth: Int) -> [String] {
        (incoming[table] ?? []).compactMap { edge in
            let source = tableName(edge.sourceRoot)
            let s = "s\(depth)"
            let filter = entityFilter(edge.sourceRoot, s, edge.sourceEntities)
            switch edge.kind {
            case .inverseForeignKey(let column):
                return memberKey(edge.sourceRoot, "\(alias).\(column)", entities: edge.sourceEntities, depth: depth + 1)
                    .map { "(\(alias).\(column) IS NOT NULL AND \($0))" }
            case .toOne(let column):
                return "EXISTS (SELECT 1 FROM \(source) \(s) WHERE \(s).\(column) = \(alias).Z_PK\(filter) AND \(memberRow(edge.sourceRoot, s, depth: depth + 1)))"
            case .joinTable(let join, let sourceColumn, let destinationColumn):
                let j = "j\(depth)"
                return "EXISTS (SELECT 1 FROM \(join) \(j) JOIN \(source) \(s) ON \(s).Z_PK = \(j).\(sourceColumn) WHERE \(j).\(destinationColumn) = \(alias).Z_PK"
                    + "\(filter) AND \(memberRow(edge.sourceRoot, s, depth: depth + 1)))"
            }
        }
    }

    /// Whether the existing row `alias` of `table` (a reachable table) is doomed, as SQL.
    func memberRow(_ table: Int, _ alias: String, depth: Int) -> String {
        if recursive.contains(table) { return "\(alias).Z_PK IN (SELECT k FROM \(Self.name(table)))" }
        var parts: [String] = []
        if rootKeys[table] != nil { parts.append("\(alias).Z_PK IN (SELECT k FROM r\(table))") }
        parts += reachedConditions(table, alias, depth: depth)
        return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// Whether the key `key` (an SQL term, never NULL where it is used) names a doomed row of `table` of one of
    /// `entities` (nil: any); nil when the delete reaches no row of the table.
    func memberKey(_ table: Int, _ key: String, entities: ClosedRange<Int>?, depth: Int) -> String? {
        guard reachable.contains(table) else { return nil }
        let rootFilter = entities.map { " WHERE e BETWEEN \($0.lowerBound) AND \($0.upperBound)" } ?? ""
        var parts: [String] = []
        if rootKeys[table] != nil { parts.append("\(key) IN (SELECT k FROM r\(table)\(rootFilter))") }
        if recursive.contains(table) {
            parts.append("\(key) IN (SELECT k FROM \(Self.name(table))\(rootFilter))")
        } else {
            let m = "m\(depth)"
            let reached = reachedConditions(table, m, depth: depth + 1)
            if !reached.isEmpty {
                parts.append("EXISTS (SELECT 1 FROM \(tableName(table)) \(m) WHERE \(m).Z_PK = \(key)\(entityFilter(table, m, entities))"
                    + " AND (\(reached.joined(separator: " OR "))))")
            }
        }
        return parts.isEmpty ? nil : "(" + parts.joined(separator: " OR ") + ")"
    }

    mutating func add(_ term: Term) {
        termIndex[term.name] = terms.count
        terms.append(term)
    }

    /// The strongly connected components of the tables under `edges`, each before the components it cascades to
    /// (Tarjan's algorithm, whose output is in the reverse of that order).
    static func components(of tables: [Int], edges: [Edge]) -> [[Int]] {
        var successors: [Int: [Int]] = [:]
        for edge in edges { successors[edge.sourceRoot, default: []].append(edge.destinationRoot) }
        var index: [Int: Int] = [:]
        var low: [Int: Int] = [:]
        var stack: [Int] = []
        var onStack: Set<Int> = []
        var found: [[Int]] = []
        var counter = 0
        func visit(_ table: Int) {
            index[table] = counter
            low[table] = counter
            counter += 1
            stack.append(table)
            onStack.insert(table)
            for next in (successors[table] ?? []).sorted() {
                if let seen = index[next] {
                    if onStack.contains(next) { low[table] = min(low[table] ?? seen, seen) }
                } else {
                    visit(next)
                    low[table] = min(low[table] ?? 0, low[next] ?? 0)
                }
            }
            guard low[table] == index[table] else { return }
            var component: [Int] = []
            while let top = stack.popLast() {
                onStack.remove(top)
                component.append(top)
                if top == table { break }
            }
            found.append(component.sorted())
        }
        for table in tables where index[table] == nil { visit(table) }
        return found.reversed()
    }

    // MARK: statements

    /// `sql` preceded by the `WITH` terms it reads (found by name in it), with their bound values first.
    func statement(_ sql: String, _ arguments: [AttributeValue] = []) -> (String, [AttributeValue]) {
        var needed = Set<Int>()
        func need(_ name: String) {
            guard let position = termIndex[name], needed.insert(position).inserted else { return }
            for used in terms[position].uses { need(used) }
        }
        for name in termIndex.keys where Self.mentions(sql, name) { need(name) }
        guard !needed.isEmpty else { return (sql, arguments) }
        let used = needed.sorted().map { terms[$0] }
        let with = used.map { "\($0.name)\($0.columns) AS (\($0.sql))" }.joined(separator: ", ")
        let keyword = used.contains { $0.columns == "(r, k, e)" } ? "WITH RECURSIVE" : "WITH"
        return ("\(keyword) \(with) \(sql)", used.flatMap(\.arguments) + arguments)
    }

    /// Whether `sql` names the term `name` as a whole word.
    static func mentions(_ sql: String, _ name: String) -> Bool {
        var rest = sql[...]
        while let range = rest.range(of: name) {
            let before = range.lowerBound == sql.startIndex ? nil : sql[sql.index(before: range.lowerBound)]
            let after = range.upperBound == sql.endIndex ? nil : sql[range.upperBound]
            if !(before.map(isWordCharacter) ?? false), !(after.map(isWordCharacter) ?? false) { return true }
            rest = sql[range.upperBound...]
        }
        return false
    }

    static func isWordCharacter(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }

    /// The doomed keys of a table, as an SQL set; nil when the delete reaches none of its rows.
    func doomedKeys(root: Int) -> String? {
        reachable.contains(root) ? "(SELECT k FROM \(Self.name(root)))" : nil
    }

    /// The doomed keys of rows of exactly `mapping`'s entity.
    func sources(_ mapping: EntityMapping) -> String {
        let filter = mapping.tableHasSubentities ? " WHERE e = \(mapping.number)" : ""
        return "(SELECT k FROM \(Self.name(mapping.rootNumber))\(filter))"
    }

    /// Runs `sql` after the terms it reads, then tells `finished` the rows it stands for (`rows` of each result
    /// row: one, or the count it holds).
    func run(_ sql: String, _ arguments: [AttributeValue] = [], rows: (borrowing RowView) -> Int = { _ in 1 },
                     _ row: (borrowing RowView) throws -> Void) throws {
        let (text, values) = statement(sql, arguments)
        var total = 0
        try query(text, values) { handle in
            total += rows(handle)
            try row(handle)
        }
        try finished?(total)
    }

    func count(_ sql: String, _ arguments: [AttributeValue] = []) throws -> Int {
        var count = 0
        try run(sql, arguments, rows: { Int($0.int64(0)) }) { count = Int($0.int64(0)) }
        return count
    }
}
