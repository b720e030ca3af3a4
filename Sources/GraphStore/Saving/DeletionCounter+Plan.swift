import Foundation

/// The counting plan: what each table loses, what Deny rules block, and what surviving objects lose.
extension DeletionCounter {
    // MARK: the plan

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
        var shortfalls: Shortfalls = [:]
        for (mapping, count) in doomedEntities {
            for reference in referenceCounts(of: mapping, doomed: count) {
                guard let required = reference.required else {
                    let found = try self.count(reference.sql)
                    if found > 0 { plan.nullified[reference.key, default: 0] += found }
                    continue
                }
                // A required to-one: the same count, with the first row it clears.
                try run(reference.sql, rows: { Int($0.int64(0)) }) { handle in
                    let found = Int(handle.int64(0))
                    guard found > 0 else { return }
                    plan.nullified[reference.key, default: 0] += found
                    note(&shortfalls, required.mapping, required.toOne.name, count: found, entity: handle.int64(2), key: handle.int64(1), least: nil)
                }
            }
        }
        try thinnedOwners(into: &shortfalls)
        plan.shortfalls = shortfalls.keys.sorted().compactMap { shortfalls[$0]?.shortfall }
        return plan
    }

    /// Survivors left invalid so far, by `Entity.relationship`, each with the key of the first found.
    private typealias Shortfalls = [String: (shortfall: DeletionPlan.Shortfall, firstKey: Int64)]

    /// Adds `count` survivors of `mapping`'s relationship `name` to the shortfalls, the first of them at `key` (of
    /// entity number `entity`) when it comes before the one noted so far.
    private func note(_ shortfalls: inout Shortfalls, _ mapping: EntityMapping, _ name: String,
                      count: Int, entity: Int64, key: Int64, least: Int?) {
        let uri = coordinator.uri(for: ObjectID.stored(entity: entity, of: coordinator.mapping(forEntityNumber: mapping.rootNumber).entityNumbers, key: key))
        let id = "\(mapping.name).\(name)"
        guard var known = shortfalls[id] else {
            shortfalls[id] = (.init(entity: mapping.name, relationship: name, count: count, first: uri, leastMembers: least), key)
            return
        }
        known.shortfall.count += count
        if key < known.firstKey { known = (.init(entity: mapping.name, relationship: name, count: known.shortfall.count, first: uri, leastMembers: least), key) }
        shortfalls[id] = known
    }

    /// The surviving owners of to-manys that require members (required, or a minimum count) whose doomed members
    /// would leave them too few: per to-many, one statement over the owners of doomed members, each owner's
    /// remaining members counted.
    private func thinnedOwners(into shortfalls: inout Shortfalls) throws {
        let model = coordinator.model
        for entity in model.entities {
            let owner = coordinator.mapping(forEntityNumber: entity.number)
            for toMany in owner.toManys where RelationshipShortfalls.requiresMembers(toMany) {
                guard !DeletionPlanner.inherits(owner, toMany.name, model),
                      let doomed = doomedKeys(root: coordinator.mapping(forEntityNumber: toMany.destinationNumber).rootNumber) else { continue }
                let owners: String
                let remaining: String
                switch toMany.storage {
                case .inverseForeignKey(let table, let column, _):
                    owners = "SELECT m.\(column) FROM \(table) m WHERE m.Z_PK IN \(doomed)"
                    remaining = "SELECT COUNT(*) FROM \(table) m WHERE m.\(column) = o.Z_PK AND m.Z_PK NOT IN \(doomed)"
                case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
                    // A doomed member whose side of the link is No Action keeps its links: the owner loses nothing.
                    let members = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
                    if let inverse = toMany.inverse, case .toMany(let index)? = members.slot(forKey: inverse),
                       members.toManys[index].description.deleteRule == .noAction { continue }
                    owners = "SELECT j.\(sourceColumn) FROM \(table) j WHERE j.\(destinationColumn) IN \(doomed)"
                    remaining = "SELECT COUNT(*) FROM \(table) j WHERE j.\(sourceColumn) = o.Z_PK AND j.\(destinationColumn) NOT IN \(doomed)"
                case .foreignKey, .transient:
                    continue
                }
                // As validation judges a to-many: an optional one may be empty, else it needs `least`.
                let description = toMany.description
                let least = max(description.minCount, description.isOptional ? 0 : 1)
                let short = description.isOptional ? "(\(remaining)) BETWEEN 1 AND \(least - 1)" : "(\(remaining)) < \(least)"
                let survives = doomedKeys(root: owner.rootNumber).map { " AND o.Z_PK NOT IN \($0)" } ?? ""
                let sql = "SELECT COUNT(*), MIN(o.Z_PK), \(entityTerm(owner.rootNumber, "o")) FROM \(owner.table) o"
                    + " WHERE o.Z_PK IN (\(owners))\(entityFilter(owner.rootNumber, "o", owner.entityNumbers))\(survives) AND \(short)"
                try run(sql, rows: { Int($0.int64(0)) }) { handle in
                    let found = Int(handle.int64(0))
                    if found > 0 { note(&shortfalls, owner, toMany.name, count: found, entity: handle.int64(2), key: handle.int64(1), least: least) }
                }
            }
        }
    }

    /// A statement counting the references survivors lose (`key` names them in the plan); for a required to-one,
    /// which one, so that the rows it would leave invalid are noted too.
    private struct ReferenceCount {
        let key: String
        let sql: String
        let required: (mapping: EntityMapping, toOne: EntityMapping.ToOne)?
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
            throw ContextError.damaged("delete preview: no description of the doomed rows of table \(table)")
        }
        var sql = "SELECT \(entityTerm(table, "t")), COUNT(*)" + rules.map { ", COUNT(CASE WHEN \($0.condition) THEN 1 END)" }.joined()
            + " FROM \(root.table) t WHERE \(doomed) GROUP BY 1"
        if rootKeys[table] != nil {
            sql += " UNION ALL SELECT e, COUNT(*)" + String(repeating: ", 0", count: rules.count)
                + " FROM r\(table) WHERE k NOT IN (SELECT Z_PK FROM \(root.table)) GROUP BY e"
        }
        var total = 0
        try run(sql, rows: { handle in (1...(rules.count + 1)).reduce(0) { $0 + Int(handle.int64(Int32($1))) } }) { handle in
            let entity = Int(handle.int64(0))
            counts[entity, default: 0] += Int(handle.int64(1))
            total += Int(handle.int64(1))
            for (index, rule) in rules.enumerated() where rule.entities.contains(entity) {
                let found = Int(handle.int64(Int32(index + 2)))
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
                holders[handle.int64(0), default: [:]][toOne.name] = 1
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
                holders[handle.int64(0), default: [:]][toMany.name] = Int(handle.int64(1))
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
    private func referenceCounts(of mapping: EntityMapping, doomed: Int) -> [ReferenceCount] {
        var counts: [ReferenceCount] = []
        let model = coordinator.model
        let listing = doomed <= listingLimit
        let exact: ClosedRange<Int>? = mapping.tableHasSubentities ? mapping.number...mapping.number : nil
        /// Whether `key` (a term never NULL where used) is the key of one of the doomed objects.
        func isSource(_ key: String) -> String {
            // A table the delete does not reach holds no doomed object: nothing is a source there.
            listing ? "\(key) IN \(sources(mapping))" : memberKey(mapping.rootNumber, key, entities: exact, depth: 1) ?? "0"
        }
        /// Surviving rows of `holder`'s table whose `toOne` points at the doomed objects; for a required to-one, with
        /// the first such row (its key and entity).
        func clearing(_ toOne: EntityMapping.ToOne, of holder: EntityMapping, key: String) {
            let root = holder.rootNumber
            let survives = reachable.contains(root) ? " AND NOT \(memberRow(root, "x", depth: 1))" : ""
            // `>=` the smallest integer: not NULL, as a range its index can read (a value below it names no row).
            let present = listing ? "x.\(toOne.column) IS NOT NULL" : "x.\(toOne.column) >= \(Int64.min)"
            let required = !toOne.description.isOptional
            // With one MIN() in the statement, SQLite takes the entity column from the row with the smallest key.
            let first = required ? ", MIN(x.Z_PK), \(entityTerm(root, "x"))" : ""
            counts.append(ReferenceCount(key: key, sql: "SELECT COUNT(*)\(first) FROM \(holder.table) x WHERE \(present) AND \(isSource("x.\(toOne.column)"))\(survives)",
                                         required: required ? (holder, toOne) : nil))
        }
        /// Links of join table `table` from the doomed objects (in `from`) to rows of `root`'s hierarchy that survive
        /// (in `to`).
        func links(_ table: String, from: String, to: String, root: Int, key: String) {
            let survives = memberKey(root, "j.\(to)", entities: nil, depth: 1).map { " AND NOT \($0)" } ?? ""
            counts.append(ReferenceCount(key: key, sql: "SELECT COUNT(*) FROM \(table) j WHERE \(isSource("j.\(from)"))\(survives)", required: nil))
        }
        for toOne in mapping.toOnes where toOne.description.deleteRule == .nullify {
            guard let inverse = toOne.inverse else { continue }
            let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
            if case .toOne(let index)? = destination.slot(forKey: inverse) {
                clearing(destination.toOnes[index], of: destination, key: "\(destination.name).\(inverse)")
            }
        }
        for toMany in mapping.toManys where toMany.description.deleteRule != .noAction {
            let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
            switch toMany.storage {
            case .inverseForeignKey(_, let column, _) where toMany.description.deleteRule == .nullify:
                guard let toOne = destination.toOnes.first(where: { $0.column == column }) else { continue }
                clearing(toOne, of: destination, key: "\(toMany.description.destination).\(toMany.inverse ?? toOne.name)")
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
                clearing(toOne, of: other, key: "\(other.name).\(toOne.name)")
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
