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
    private struct Term {
        let name: String
        let sql: String
        let arguments: [AttributeValue]
        let uses: [String]
        /// The column list after the name.
        var columns = "(k, e)"
    }

    /// Terms in an order where each comes after those it reads.
    private var terms: [Term] = []
    /// The roots' keys: table (by root entity number) → entity number → keys.
    private var rootKeys: [Int: [Int: [Int64]]] = [:]
    /// The Cascade rules into each reachable table from reachable tables.
    private var incoming: [Int: [Edge]] = [:]
    /// Tables whose Cascade rules form a cycle (their rows are found by a recursive term).
    private var recursive: Set<Int> = []
    /// Per reachable table, the condition on its rows (alias `t`) that lists its doomed rows by the doomed rows of
    /// the tables cascading to it (each read once, as a set).
    private var enumerations: [Int: String] = [:]
    /// The reachable tables, each after the tables cascading to it (but within a cycle).
    private var order: [Int] = []
    private var termIndex: [String: Int] = [:]
    /// The tables (by root number) whose rows the delete can reach.
    private(set) var reachable: Set<Int> = []

    init(coordinator: PersistentStoreCoordinator, query: @escaping Query) {
        self.coordinator = coordinator
        self.query = query
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

    private func tableName(_ root: Int) -> String { coordinator.mapping(forEntityNumber: root).table }

    /// The entity of a row of `root`'s table, as SQL on alias `alias`: `Z_ENT`, or the one entity the table holds.
    private func entityTerm(_ root: Int, _ alias: String) -> String {
        let mapping = coordinator.mapping(forEntityNumber: root)
        return mapping.tableHasSubentities ? "\(alias).Z_ENT" : "\(root)"
    }

    private static func name(_ root: Int) -> String { "d\(root)" }

    /// `(SELECT k FROM d3 WHERE e BETWEEN 4 AND 5)`: the doomed keys an edge starts from.
    private static func sourceKeys(_ edge: Edge) -> String {
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
    private func entityFilter(_ root: Int, _ alias: String, _ entities: ClosedRange<Int>?) -> String {
        guard let entities, coordinator.mapping(forEntityNumber: root).tableHasSubentities else { return "" }
        return " AND \(alias).Z_ENT BETWEEN \(entities.lowerBound) AND \(entities.upperBound)"
    }

    /// The ways a Cascade rule reaches row `alias` of `table`, each a condition on the row that looks up only the
    /// rows it depends on (no doomed set is made): for testing a few rows, where `enumerations` list them all.
    private func reachedConditions(_ table: Int, _ alias: String, depth: Int) -> [String] {
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
    private func memberRow(_ table: Int, _ alias: String, depth: Int) -> String {
        if recursive.contains(table) { return "\(alias).Z_PK IN (SELECT k FROM \(Self.name(table)))" }
        var parts: [String] = []
        if rootKeys[table] != nil { parts.append("\(alias).Z_PK IN (SELECT k FROM r\(table))") }
        parts += reachedConditions(table, alias, depth: depth)
        return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// Whether the key `key` (an SQL term, never NULL where it is used) names a doomed row of `table` of one of
    /// `entities` (nil: any); nil when the delete reaches no row of the table.
    private func memberKey(_ table: Int, _ key: String, entities: ClosedRange<Int>?, depth: Int) -> String? {
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

    private mutating func add(_ term: Term) {
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
    private func statement(_ sql: String, _ arguments: [AttributeValue] = []) -> (String, [AttributeValue]) {
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
    private static func mentions(_ sql: String, _ name: String) -> Bool {
        var rest = sql[...]
        while let range = rest.range(of: name) {
            let before = range.lowerBound == sql.startIndex ? nil : sql[sql.index(before: range.lowerBound)]
            let after = range.upperBound == sql.endIndex ? nil : sql[range.upperBound]
            if !(before.map(isWordCharacter) ?? false), !(after.map(isWordCharacter) ?? false) { return true }
            rest = sql[range.upperBound...]
        }
        return false
    }

    private static func isWordCharacter(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }

    /// The doomed keys of a table, as an SQL set; nil when the delete reaches none of its rows.
    private func doomedKeys(root: Int) -> String? {
        reachable.contains(root) ? "(SELECT k FROM \(Self.name(root)))" : nil
    }

    /// The doomed keys of rows of exactly `mapping`'s entity.
    private func sources(_ mapping: EntityMapping) -> String {
        let filter = mapping.tableHasSubentities ? " WHERE e = \(mapping.number)" : ""
        return "(SELECT k FROM \(Self.name(mapping.rootNumber))\(filter))"
    }

    /// Runs `sql` after the terms it reads, then tells `finished` the rows it stands for (`rows` of each result
    /// row: one, or the count it holds).
    private func run(_ sql: String, _ arguments: [AttributeValue] = [], rows: (OpaquePointer) -> Int = { _ in 1 },
                     _ row: (OpaquePointer) throws -> Void) throws {
        let (text, values) = statement(sql, arguments)
        var total = 0
        try query(text, values) { handle in
            total += rows(handle)
            try row(handle)
        }
        try finished?(total)
    }

    private func count(_ sql: String, _ arguments: [AttributeValue] = []) throws -> Int {
        var count = 0
        try run(sql, arguments, rows: { Int(SQLiteValues.int64($0, 0)) }) { count = Int(SQLiteValues.int64($0, 0)) }
        return count
    }

    // MARK: the plan

    /// Above this many doomed objects of an entity, the references other rows hold to them are counted by reading
    /// those rows' keys and looking each up (a cost that grows with the referring table), not by listing the doomed
    /// objects and looking up what refers to each (a cost that grows with the delete); and above this many doomed
    /// rows in the tables cascading to a table, its rows are read and tested the same way.
    static let defaultListingLimit = 50_000
    var listingLimit = Self.defaultListingLimit

    /// The plan for deleting `roots`, changing nothing.
    mutating func preview(_ roots: [ObjectID]) throws -> DeletionPlan {
        describe(roots)
        var plan = DeletionPlan()
        var counts: [Int: Int] = [:]
        var tableCounts: [Int: Int] = [:]
        for table in order {
            // Reached from many doomed rows, a table's rows are read and each looked up, rather than found from a
            // list of those many rows.
            let reachedFrom = (incoming[table] ?? []).reduce(0) { $0 + (tableCounts[$1.sourceRoot] ?? 0) }
            tableCounts[table] = try countTable(table, scanning: reachedFrom > listingLimit && !recursive.contains(table),
                                                counts: &counts, into: &plan)
        }
        var doomedEntities: [(EntityMapping, Int)] = []
        for entity in counts.keys.sorted() {
            // cannot fail: a key of the dictionary; a number the model lacks (from a damaged row) is skipped.
            guard let count = counts[entity], count > 0, coordinator.model.entity(number: entity) != nil else { continue }
            let mapping = coordinator.mapping(forEntityNumber: entity)
            plan.deleted[mapping.name, default: 0] += count
            doomedEntities.append((mapping, count))
        }
        for (mapping, _) in doomedEntities { plan.denied += try blockers(of: mapping) }
        for (mapping, count) in doomedEntities {
            for (key, sql) in referenceCounts(of: mapping, doomed: count) {
                let found = try self.count(sql)
                if found > 0 { plan.nullified[key, default: 0] += found }
            }
        }
        return plan
    }

    /// A Nullify rule whose key is in the doomed row itself: the reference its destination loses.
    private struct RowRule {
        let key: String
        let column: String
        let condition: String
        /// The entities whose rows have it.
        var entities: Set<Int>
    }

    /// Whether the only way the delete reaches rows of `table` is through the key in `column`, from doomed rows of
    /// `source`'s table: then that key of every doomed row names a doomed row.
    private func onlyReachedThrough(_ column: String, of table: Int, from source: Int) -> Bool {
        guard rootKeys[table] == nil, !recursive.contains(table), let edges = incoming[table], edges.count == 1,
              let edge = edges.first, edge.sourceRoot == source, case .inverseForeignKey(let reached) = edge.kind else { return false }
        return reached == column
    }

    /// One statement over a table's doomed rows: how many of each entity, and in the same pass, per Nullify rule
    /// whose key the doomed row holds, how many point at survivors (a key that goes with the row: nothing to write,
    /// only the references to count). Roots whose row is gone count too, as the key-reading planner counts them.
    /// Returns the table's doomed rows. `scanning`: every row of the table is read and tested (`memberRow`), rather
    /// than the rows listed from the doomed rows of the tables cascading to it (`enumerations`).
    @discardableResult
    private func countTable(_ table: Int, scanning: Bool, counts: inout [Int: Int], into plan: inout DeletionPlan) throws -> Int {
        let root = coordinator.mapping(forEntityNumber: table)
        var rules: [RowRule] = []
        for number in root.entityNumbers where coordinator.model.entity(number: number) != nil {
            let mapping = coordinator.mapping(forEntityNumber: number)
            for toOne in mapping.toOnes where toOne.description.deleteRule == .nullify {
                guard let inverse = toOne.inverse else { continue }
                let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
                if case .toOne? = destination.slot(forKey: inverse) { continue }
                let key = "\(toOne.description.destination).\(inverse)"
                if let index = rules.firstIndex(where: { $0.key == key && $0.column == toOne.column }) {
                    rules[index].entities.insert(number)
                    continue
                }
                if onlyReachedThrough(toOne.column, of: table, from: destination.rootNumber) {
                    // Every doomed row holds a doomed row's key there: none points at a survivor.
                    rules.append(RowRule(key: key, column: toOne.column, condition: "0", entities: [number]))
                    continue
                }
                let survives = memberKey(destination.rootNumber, "t.\(toOne.column)", entities: nil, depth: 1).map { " AND NOT \($0)" } ?? ""
                rules.append(RowRule(key: key, column: toOne.column, condition: "t.\(toOne.column) IS NOT NULL\(survives)", entities: [number]))
            }
        }
        guard let doomed = scanning ? memberRow(table, "t", depth: 1) : enumerations[table] else {
            // Every table the delete reaches has its enumeration; one without is a planning bug, said as one.
            throw ContextError.store("delete preview: no description of the doomed rows of table \(table)")
        }
        var sql = "SELECT \(entityTerm(table, "t")), COUNT(*)" + rules.map { ", COUNT(CASE WHEN \($0.condition) THEN 1 END)" }.joined()
            + " FROM \(root.table) t WHERE \(doomed) GROUP BY 1"
        if rootKeys[table] != nil {
            sql += " UNION ALL SELECT e, COUNT(*)" + String(repeating: ", 0", count: rules.count)
                + " FROM r\(table) WHERE k NOT IN (SELECT Z_PK FROM \(root.table)) GROUP BY e"
        }
        var total = 0
        try run(sql, rows: { handle in (1...(rules.count + 1)).reduce(0) { $0 + Int(SQLiteValues.int64(handle, Int32($1))) } }) { handle in
            let entity = Int(SQLiteValues.int64(handle, 0))
            counts[entity, default: 0] += Int(SQLiteValues.int64(handle, 1))
            total += Int(SQLiteValues.int64(handle, 1))
            for (index, rule) in rules.enumerated() where rule.entities.contains(entity) {
                let found = Int(SQLiteValues.int64(handle, Int32(index + 2)))
                if found > 0 { plan.nullified[rule.key, default: 0] += found }
            }
        }
        return total
    }

    /// Objects of `mapping`'s entity whose Deny relationships hold objects that would survive, by key, then
    /// relationship name.
    private func blockers(of mapping: EntityMapping) throws -> [DeletionPlan.Blocker] {
        guard mapping.hasDenyRules else { return [] }
        var holders: [Int64: [String: Int]] = [:]
        let sources = sources(mapping)
        for toOne in mapping.toOnes where toOne.description.deleteRule == .deny {
            let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
            let survivor = doomedKeys(root: destination.rootNumber).map { " AND t.\(toOne.column) NOT IN \($0)" } ?? ""
            try run("SELECT t.Z_PK FROM \(mapping.table) t WHERE t.Z_PK IN \(sources) AND t.\(toOne.column) IS NOT NULL\(survivor)") { handle in
                holders[SQLiteValues.int64(handle, 0), default: [:]][toOne.name] = 1
            }
        }
        for toMany in mapping.toManys where toMany.description.deleteRule == .deny {
            let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
            let survivor = doomedKeys(root: destination.rootNumber).map { " AND t.Z_PK NOT IN \($0)" } ?? ""
            let sql: String
            switch toMany.storage {
            case .inverseForeignKey(let table, let column, _):
                sql = "SELECT t.\(column), COUNT(*) FROM \(table) t WHERE t.\(column) IN \(sources)\(survivor) GROUP BY t.\(column)"
            case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
                sql = "SELECT j.\(sourceColumn), COUNT(DISTINCT t.Z_PK) FROM \(table) j JOIN \(toMany.destinationTable) t ON t.Z_PK = j.\(destinationColumn)"
                    + " WHERE j.\(sourceColumn) IN \(sources)\(survivor) GROUP BY j.\(sourceColumn)"
            case .foreignKey, .transient:
                continue
            }
            try run(sql) { handle in
                holders[SQLiteValues.int64(handle, 0), default: [:]][toMany.name] = Int(SQLiteValues.int64(handle, 1))
            }
        }
        var blockers: [DeletionPlan.Blocker] = []
        for (key, relationships) in holders.sorted(by: { $0.key < $1.key }) {
            for (relationship, count) in relationships.sorted(by: { $0.key < $1.key }) {
                let uri = coordinator.uri(for: ObjectID(entityNumber: mapping.number, primaryKey: key))
                blockers.append(.init(object: uri, entity: mapping.name, relationship: relationship, count: count))
            }
        }
        return blockers
    }

    /// The references rows elsewhere hold to `mapping`'s `doomed` doomed objects and lose, as counting statements
    /// under the names the plan counts them by: the steps of `DeletionPlanner.nullifySteps()` but those whose key is
    /// in the doomed row (`countTable` counts them). Up to `listingLimit` doomed objects, a statement lists them and
    /// looks up what refers to each; above, it reads the referring keys and looks each up.
    private func referenceCounts(of mapping: EntityMapping, doomed: Int) -> [(key: String, sql: String)] {
        var counts: [(key: String, sql: String)] = []
        let model = coordinator.model
        let listing = doomed <= listingLimit
        let exact: ClosedRange<Int>? = mapping.tableHasSubentities ? mapping.number...mapping.number : nil
        /// Whether `key` (a term never NULL where used) is the key of one of the doomed objects.
        func isSource(_ key: String) -> String {
            // A table the delete does not reach holds no doomed object: nothing is a source there.
            listing ? "\(key) IN \(sources(mapping))" : memberKey(mapping.rootNumber, key, entities: exact, depth: 1) ?? "0"
        }
        /// Surviving rows of `table` (of `root`'s hierarchy) whose `column` points at the doomed objects.
        func clearing(_ column: String, in table: String, root: Int, key: String) {
            let survives = reachable.contains(root) ? " AND NOT \(memberRow(root, "x", depth: 1))" : ""
            // `>=` the smallest integer: not NULL, as a range its index can read (a value below it names no row).
            let present = listing ? "x.\(column) IS NOT NULL" : "x.\(column) >= \(Int64.min)"
            counts.append((key, "SELECT COUNT(*) FROM \(table) x WHERE \(present) AND \(isSource("x.\(column)"))\(survives)"))
        }
        /// Links of join table `table` from the doomed objects (in `from`) to rows of `root`'s hierarchy that survive
        /// (in `to`).
        func links(_ table: String, from: String, to: String, root: Int, key: String) {
            let survives = memberKey(root, "j.\(to)", entities: nil, depth: 1).map { " AND NOT \($0)" } ?? ""
            counts.append((key, "SELECT COUNT(*) FROM \(table) j WHERE \(isSource("j.\(from)"))\(survives)"))
        }
        for toOne in mapping.toOnes where toOne.description.deleteRule == .nullify {
            guard let inverse = toOne.inverse else { continue }
            let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
            if case .toOne(let index)? = destination.slot(forKey: inverse) {
                clearing(destination.toOnes[index].column, in: destination.table, root: destination.rootNumber, key: "\(destination.name).\(inverse)")
            }
        }
        for toMany in mapping.toManys where toMany.description.deleteRule != .noAction {
            let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
            switch toMany.storage {
            case .inverseForeignKey(_, let column, _) where toMany.description.deleteRule == .nullify:
                guard let toOne = destination.toOnes.first(where: { $0.column == column }) else { continue }
                clearing(toOne.column, in: destination.table, root: destination.rootNumber,
                         key: "\(toMany.description.destination).\(toMany.inverse ?? toOne.name)")
            case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
                guard toMany.description.deleteRule == .nullify, let inverse = toMany.inverse else { continue }
                links(table, from: sourceColumn, to: destinationColumn, root: destination.rootNumber, key: "\(toMany.description.destination).\(inverse)")
            default:
                continue
            }
        }
        // References without an inverse, from any entity, to this one (or an entity it descends from).
        for other in model.entities.map({ coordinator.mapping(forEntityNumber: $0.number) }) {
            for toOne in other.toOnes where toOne.inverse == nil && model.entity(named: toOne.description.destination)?.includes(mapping.name) == true {
                guard !DeletionPlanner.inherits(other, toOne.name, model) else { continue }
                clearing(toOne.column, in: other.table, root: other.rootNumber, key: "\(other.name).\(toOne.name)")
            }
            for toMany in other.toManys where toMany.inverse == nil && model.entity(named: toMany.description.destination)?.includes(mapping.name) == true {
                guard case .joinTable(let table, let sourceColumn, let destinationColumn, _, _) = toMany.storage,
                      !DeletionPlanner.inherits(other, toMany.name, model) else { continue }
                links(table, from: destinationColumn, to: sourceColumn, root: other.rootNumber, key: "\(other.name).\(toMany.name)")
            }
        }
        return counts
    }
}
