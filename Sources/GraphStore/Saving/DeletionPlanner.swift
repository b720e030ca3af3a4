import Foundation

/// Works out a delete set-based: the closure of Cascade rules as sets of keys per table, then Deny blockers and
/// Nullify counts with one query per entity and relationship, and the statements that carry it out. Keys travel as
/// one JSON text per set (`IN (SELECT value FROM json_each(?))`), so a cascade of 100,000 messages is still a
/// handful of statements with one bound value each.
struct DeletionPlanner {
    typealias Query = (_ sql: String, _ arguments: [AttributeValue], _ row: (borrowing RowView) throws -> Void) throws -> Void

    /// A change to surviving rows: foreign keys set to NULL, or join-table links removed.
    struct Step {
        /// The name the plan counts it under; nil for links that no surviving relationship shows.
        let key: String?
        /// Counts the references surviving objects lose.
        let countSQL: String
        /// Makes the change. An UPDATE returns the IDs of the rows it changed (`RETURNING Z_PK, Z_ENT`), and takes
        /// one more argument before `arguments`: the keys of the rows of its table that earlier steps changed.
        let applySQL: String
        let arguments: [AttributeValue]
        /// The table root whose rows an UPDATE changes (their cached rows go stale); nil for a join table.
        let updatedRoot: Int?
        /// The to-one whose key an UPDATE clears, and the entity whose table holds it.
        var clears: (mapping: EntityMapping, toOne: EntityMapping.ToOne)? = nil
    }

    typealias Execute = (_ sql: String, _ arguments: [AttributeValue]) throws -> Int

    let coordinator: PersistentStoreCoordinator
    let query: Query
    /// Runs a statement that changes rows and returns how many it changed (a save's runner); nil for a preview.
    let execute: Execute?
    /// Rows to delete: table (by its root entity's number) → primary key → the row's entity number.
    private(set) var doomed: [Int: [Int64: Int]] = [:]
    /// `doomed`'s keys per table as JSON, made once the closure is complete (every step binds them).
    var doomedJSON: [Int: AttributeValue] = [:]
    /// Links the store still holds that unsaved changes removed (`noteUnlinked`): Cascade and Deny rules do not
    /// follow them, so a delete follows the relationships as the context has them, not as they were saved.
    var unlinked: Set<Link> = []
    /// Links unsaved changes made from stored rows (`noteLinked`), by source: Deny rules count them too.
    var linked: [RowKey: [(relationship: String, destination: ObjectID)]] = [:]

    struct RowKey: Hashable {
        let root: Int
        let key: Int64
    }

    /// A relationship from one row to another, by table root and key.
    struct Link: Hashable {
        let sourceRoot: Int
        let source: Int64
        let relationship: String
        let destinationRoot: Int
        let destination: Int64
    }

    /// A planner whose statements run on `runner`: with `writes`, a save's, which carries the delete out.
    init(runner: StatementRunner, writes: Bool) {
        self.coordinator = runner.coordinator
        self.query = { sql, arguments, row in try runner.query(SQLStatement(sql, arguments), row: row) }
        self.execute = writes ? { sql, arguments in try runner.execute(SQLStatement(sql, arguments)) } : nil
    }

    static let inKeys = MappingSQL.inKeys

    static func json(_ keys: some Sequence<Int64>) -> AttributeValue {
        MappingSQL.json(Array(keys))
    }

    /// Records that `source`'s relationship `relationship` no longer holds `destination`, though the store still
    /// links them.
    mutating func noteUnlinked(_ source: ObjectID, _ relationship: String, _ destination: ObjectID) {
        unlinked.insert(link(source, relationship, destination))
    }

    /// Records that unsaved changes put `destination` in `source`'s relationship `relationship`.
    mutating func noteLinked(_ source: ObjectID, _ relationship: String, _ destination: ObjectID) {
        linked[rowKey(source), default: []].append((relationship, destination))
    }

    func rowKey(_ id: ObjectID) -> RowKey {
        RowKey(root: coordinator.mapping(forEntityNumber: id.entityNumber).rootNumber, key: id.primaryKey)
    }

    func link(_ source: ObjectID, _ relationship: String, _ destination: ObjectID) -> Link {
        Link(sourceRoot: coordinator.mapping(forEntityNumber: source.entityNumber).rootNumber, source: source.primaryKey,
             relationship: relationship,
             destinationRoot: coordinator.mapping(forEntityNumber: destination.entityNumber).rootNumber, destination: destination.primaryKey)
    }

    /// Whether the stored link from the row `source` of `mapping`'s table to `destination` still holds in memory.
    func holds(_ mapping: EntityMapping, _ source: Int64, _ relationship: String, _ destination: ObjectID) -> Bool {
        unlinked.isEmpty || !unlinked.contains(link(ObjectID(entityNumber: mapping.number, primaryKey: source), relationship, destination))
    }

    // MARK: the cascade closure

    /// Adds `roots` and everything their Cascade rules reach, recursively; a row reached twice is visited once, so
    /// reflexive and cyclic cascades end.
    mutating func close(over roots: [ObjectID]) throws {
        var frontier: [ObjectID] = []
        for id in roots where add(id) { frontier.append(id) }
        while !frontier.isEmpty {
            var next: [ObjectID] = []
            for (mapping, keys) in groups(frontier) {
                for reached in try cascadeDestinations(of: mapping, keys) where add(reached) { next.append(reached) }
            }
            frontier = next
        }
    }

    mutating func add(_ id: ObjectID) -> Bool {
        let root = coordinator.mapping(forEntityNumber: id.entityNumber).rootNumber
        return doomed[root, default: [:]].updateValue(id.entityNumber, forKey: id.primaryKey) == nil
    }

    func isDoomed(_ id: ObjectID) -> Bool {
        doomed[coordinator.mapping(forEntityNumber: id.entityNumber).rootNumber]?[id.primaryKey] != nil
    }

    /// IDs grouped by entity, entities in number order, keys sorted.
    func groups(_ ids: [ObjectID]) -> [(EntityMapping, [Int64])] {
        var byEntity: [Int: [Int64]] = [:]
        for id in ids { byEntity[id.entityNumber, default: []].append(id.primaryKey) }
        // cannot fail: keys of the dictionary; entity numbers of IDs are the model's (`ObjectID.stored` checks those read).
        return byEntity.keys.sorted().map { (coordinator.mapping(forEntityNumber: $0), byEntity[$0]!.sorted()) }
    }

    /// Every doomed row, grouped by entity.
    var doomedGroups: [(EntityMapping, [Int64])] {
        var byEntity: [Int: [Int64]] = [:]
        for rows in doomed.values {
            for (key, entity) in rows { byEntity[entity, default: []].append(key) }
        }
        // cannot fail: keys of the dictionary.
        return byEntity.keys.sorted().map { (coordinator.mapping(forEntityNumber: $0), byEntity[$0]!.sorted()) }
    }

    /// The doomed keys of a table, as one JSON value.
    func doomedKeys(root: Int) -> AttributeValue {
        doomedJSON[root] ?? Self.json((doomed[root] ?? [:]).keys.sorted())
    }

    /// Makes each table's key list once, after the closure.
    mutating func freezeKeys() {
        doomedJSON = doomed.mapValues { Self.json($0.keys.sorted()) }
    }

    func cascadeDestinations(of mapping: EntityMapping, _ keys: [Int64]) throws -> [ObjectID] {
        var found: [ObjectID] = []
        for toOne in mapping.toOnes where toOne.description.deleteRule == .cascade {
            try links(ofToOne: toOne, in: mapping, keys) { source, destination in
                if holds(mapping, source, toOne.name, destination) { found.append(destination) }
            }
        }
        for toMany in mapping.toManys where toMany.description.deleteRule == .cascade {
            try links(ofToMany: toMany, keys) { source, destination in
                if holds(mapping, source, toMany.name, destination) { found.append(destination) }
            }
        }
        return found
    }

    /// (source key, destination) for a to-one held in the sources' rows.
    func links(ofToOne toOne: EntityMapping.ToOne, in mapping: EntityMapping, _ keys: [Int64], _ body: (Int64, ObjectID) -> Void) throws {
        let entityTerm = toOne.entityColumn.map { "t0.\($0)" } ?? "NULL"
        let destinations = coordinator.mapping(forEntityNumber: toOne.destinationNumber).entityNumbers
        try query("SELECT t0.Z_PK, t0.\(toOne.column), \(entityTerm) FROM \(mapping.table) t0 WHERE t0.Z_PK \(Self.inKeys) AND t0.\(toOne.column) IS NOT NULL",
                  [Self.json(keys)]) { handle in
            let entity = handle.isNull(2) ? Int64(toOne.destinationNumber) : handle.int64(2)
            body(handle.int64(0), ObjectID.stored(entity: entity, of: destinations, key: handle.int64(1)))
        }
    }

    /// (source key, destination) for a to-many of the sources.
    func links(ofToMany toMany: EntityMapping.ToMany, _ keys: [Int64], _ body: (Int64, ObjectID) -> Void) throws {
        let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
        let entityTerm = destination.tableHasSubentities ? "t0.Z_ENT" : "\(toMany.destinationNumber)"
        let sql: String
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, _):
            sql = "SELECT t0.\(column), t0.Z_PK, \(entityTerm) FROM \(table) t0 WHERE t0.\(column) \(Self.inKeys)"
        case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
            sql = "SELECT t1.\(sourceColumn), t0.Z_PK, \(entityTerm) FROM \(table) t1 JOIN \(toMany.destinationTable) t0 ON t0.Z_PK = t1.\(destinationColumn)"
                + " WHERE t1.\(sourceColumn) \(Self.inKeys)"
        case .foreignKey, .transient:
            return
        }
        try query(sql, [Self.json(keys)]) { handle in
            body(handle.int64(0),
                 ObjectID.stored(entity: handle.int64(2), of: destination.entityNumbers, key: handle.int64(1)))
        }
    }

    // MARK: Deny

    /// Objects whose Deny relationships hold objects that would survive, in entity, key and relationship order.
    func blockers() throws -> [DeletionPlan.Blocker] {
        var blockers: [DeletionPlan.Blocker] = []
        for (mapping, keys) in doomedGroups {
            /// The surviving objects each source's Deny relationships hold, by table root and key (a link both
            /// stored and added again counts once).
            var holders: [Int64: [String: Set<RowKey>]] = [:]
            func note(_ source: Int64, _ destination: ObjectID, _ relationship: String) {
                if !isDoomed(destination), holds(mapping, source, relationship, destination) {
                    holders[source, default: [:]][relationship, default: []].insert(rowKey(destination))
                }
            }
            for toOne in mapping.toOnes where toOne.description.deleteRule == .deny {
                try links(ofToOne: toOne, in: mapping, keys) { note($0, $1, toOne.name) }
            }
            for toMany in mapping.toManys where toMany.description.deleteRule == .deny {
                try links(ofToMany: toMany, keys) { note($0, $1, toMany.name) }
            }
            if !linked.isEmpty {
                // Added in memory: a new object is never doomed here (the context leaves out those that go).
                for key in keys {
                    for (relationship, destination) in linked[RowKey(root: mapping.rootNumber, key: key)] ?? [] {
                        guard destination.isTemporary || !isDoomed(destination) else { continue }
                        holders[key, default: [:]][relationship, default: []].insert(
                            destination.isTemporary ? RowKey(root: 0, key: destination.primaryKey) : rowKey(destination))
                    }
                }
            }
            for key in holders.keys.sorted() {
                // cannot fail: a key of the dictionary.
                for (relationship, count) in holders[key]!.mapValues(\.count).sorted(by: { $0.key < $1.key }) {
                    let uri = coordinator.uri(for: ObjectID(entityNumber: mapping.number, primaryKey: key))
                    blockers.append(.init(object: uri, entity: mapping.name, relationship: relationship, count: count))
                }
            }
        }
        return blockers
    }

    // MARK: Nullify

    /// What surviving rows lose: for each doomed entity's relationships by their rules, and for relationships of any
    /// entity that point at doomed rows without an inverse (Core Data leaves those dangling; GraphStore clears them,
    /// so the store stays consistent).
    func nullifySteps() -> [Step] {
        var steps: [Step] = []
        let model = coordinator.model
        for (mapping, keys) in doomedGroups {
            let sources = Self.json(keys)
            for toOne in mapping.toOnes where toOne.description.deleteRule == .nullify {
                guard let inverse = toOne.inverse else { continue }
                let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
                let survivors = doomedKeys(root: destination.rootNumber)
                if case .toOne(let index)? = destination.slot(forKey: inverse) {
                    // One-to-one: the destination's row holds a key back, which must go.
                    steps.append(clearing(destination.toOnes[index], of: destination, pointingAt: sources, except: survivors,
                                          key: "\(destination.name).\(inverse)"))
                } else {
                    // The key is in the doomed row itself: nothing to write, only references to count.
                    steps.append(Step(
                        key: "\(toOne.description.destination).\(inverse)",
                        countSQL: "SELECT COUNT(*) FROM \(mapping.table) t0 WHERE t0.Z_PK \(Self.inKeys) AND t0.\(toOne.column) IS NOT NULL"
                            + " AND t0.\(toOne.column) NOT \(Self.inKeys)",
                        applySQL: "", arguments: [sources, survivors], updatedRoot: nil))
                }
            }
            for toMany in mapping.toManys where toMany.description.deleteRule != .noAction {
                let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
                let survivors = doomedKeys(root: destination.rootNumber)
                switch toMany.storage {
                case .inverseForeignKey(_, let column, _) where toMany.description.deleteRule == .nullify:
                    guard let toOne = destination.toOnes.first(where: { $0.column == column }) else { continue }
                    steps.append(clearing(toOne, of: destination, pointingAt: sources, except: survivors,
                                          key: "\(toMany.description.destination).\(toMany.inverse ?? toOne.name)"))
                case .joinTable(let table, let sourceColumn, let destinationColumn, _, let isSymmetric):
                    // Links go whatever the rule (but No Action): a cascade's destinations are deleted too.
                    let countKey = toMany.description.deleteRule == .nullify ? toMany.inverse.map { "\(toMany.description.destination).\($0)" } : nil
                    steps.append(Step(
                        key: countKey,
                        countSQL: "SELECT COUNT(*) FROM \(table) WHERE \(sourceColumn) \(Self.inKeys) AND \(destinationColumn) NOT \(Self.inKeys)",
                        applySQL: "DELETE FROM \(table) WHERE \(sourceColumn) \(Self.inKeys)" + (isSymmetric ? " OR \(destinationColumn) \(Self.inKeys)" : ""),
                        arguments: isSymmetric ? [sources, sources] : [sources, survivors], updatedRoot: nil))
                default:
                    continue
                }
            }
            // References without an inverse, from any entity, to this one (or an entity it descends from).
            for other in model.entities.map({ coordinator.mapping(forEntityNumber: $0.number) }) {
                for toOne in other.toOnes where toOne.inverse == nil && pointsAt(toOne.description.destination, mapping) {
                    guard !Self.inherits(other, toOne.name, model) else { continue }
                    steps.append(clearing(toOne, of: other, pointingAt: sources, except: doomedKeys(root: other.rootNumber),
                                          key: "\(other.name).\(toOne.name)"))
                }
                for toMany in other.toManys where toMany.inverse == nil && pointsAt(toMany.description.destination, mapping) {
                    guard case .joinTable(let table, let sourceColumn, let destinationColumn, _, _) = toMany.storage,
                          !Self.inherits(other, toMany.name, model) else { continue }
                    steps.append(Step(
                        key: "\(other.name).\(toMany.name)",
                        countSQL: "SELECT COUNT(*) FROM \(table) WHERE \(destinationColumn) \(Self.inKeys) AND \(sourceColumn) NOT \(Self.inKeys)",
                        applySQL: "DELETE FROM \(table) WHERE \(destinationColumn) \(Self.inKeys)",
                        arguments: [sources, doomedKeys(root: other.rootNumber)], updatedRoot: nil))
                }
            }
        }
        return steps
    }

    /// Whether a relationship whose destination is `destination` can point at objects of `mapping`'s entity.
    func pointsAt(_ destination: String, _ mapping: EntityMapping) -> Bool {
        coordinator.model.entity(named: destination)?.includes(mapping.name) == true
    }

    /// Whether `mapping`'s relationship `name` is declared by an ancestor (then the ancestor's pass handles it).
    static func inherits(_ mapping: EntityMapping, _ name: String, _ model: ObjectModel) -> Bool {
        guard let parent = mapping.entity.parentName.flatMap({ model.entity(named: $0) }) else { return false }
        return parent.relationships.contains { $0.name == name } || parent.attributes.contains { $0.name == name }
    }

    /// Sets `toOne`'s key (and its entity and order columns) to NULL in the surviving rows of `mapping`'s table that
    /// point at the doomed keys `sources`.
    func clearing(_ toOne: EntityMapping.ToOne, of mapping: EntityMapping, pointingAt sources: AttributeValue,
                          except doomedHere: AttributeValue, key: String) -> Step {
        var assignments = ["\(toOne.column) = NULL"]
        if let entityColumn = toOne.entityColumn { assignments.append("\(entityColumn) = NULL") }
        if let orderColumn = toOne.orderColumn { assignments.append("\(orderColumn) = NULL") }
        let condition = "\(toOne.column) \(Self.inKeys) AND Z_PK NOT \(Self.inKeys)"
        // The version moves on once per delete, also for a row two steps clear (an item losing both its owner and
        // its pinned note): the first parameter lists the rows of the table earlier steps changed (see `carryOut`),
        // and the save, which then writes the row's own changes, expects it exactly one version further on.
        return Step(
            key: key,
            countSQL: "SELECT COUNT(*) FROM \(mapping.table) WHERE \(condition)",
            applySQL: "UPDATE \(mapping.table) SET Z_OPT = Z_OPT + (Z_PK NOT \(Self.inKeys)), \(assignments.joined(separator: ", "))"
                + " WHERE \(condition) RETURNING Z_PK, Z_ENT",
            arguments: [sources, doomedHere], updatedRoot: mapping.rootNumber, clears: (mapping, toOne))
    }
}
