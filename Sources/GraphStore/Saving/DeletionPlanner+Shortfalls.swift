import Foundation

/// What a delete's Nullify rules can leave invalid in the rows that survive it, checked when the save's writes are
/// done: a required to-one whose key was cleared, and a to-many of a surviving owner that lost members below what
/// it requires (its `minCount`, or one member when it is required). Core Data finds both when it validates the
/// objects the delete changed, and refuses the save; the set-based delete changes rows, not objects, so it asks the
/// store instead, after the save's inserts and updates (which may give the owner new members or the row a new key).
///
/// ```
/// delete Page/p466 (its book's only page; Book.pages is required, min 1)
/// → save fails: x-coredata://…/Book/p5 pages has 0 members, at least 1 required
/// ```
struct RelationshipShortfalls {
    /// Rows whose required to-one the delete cleared.
    struct ClearedToOne {
        let mapping: EntityMapping
        let toOne: EntityMapping.ToOne
        var keys: Set<Int64>
    }

    /// Surviving owners whose to-many lost members, where the to-many requires some.
    struct ThinnedToMany {
        let mapping: EntityMapping
        let toMany: EntityMapping.ToMany
        var keys: Set<Int64>
    }

    var clearedToOnes: [ClearedToOne] = []
    var thinnedToManys: [ThinnedToMany] = []

    var isEmpty: Bool { clearedToOnes.isEmpty && thinnedToManys.isEmpty }

    /// Whether a to-many asks for members: a required one needs one, and `minCount` more.
    static func requiresMembers(_ toMany: EntityMapping.ToMany) -> Bool {
        !toMany.description.isOptional || toMany.description.minCount > 0
    }

    /// The failures the store shows now, objects by entity and key.
    func failures(coordinator: PersistentStoreCoordinator, runner: StatementRunner) throws -> [ValidationFailure] {
        func query(_ sql: String, _ arguments: [AttributeValue], _ row: (borrowing RowView) throws -> Void) throws {
            try runner.query(SQLStatement(sql, arguments), row: row)
        }
        var failures: [ValidationFailure] = []
        func fail(_ mapping: EntityMapping, entity: Int64, key: Int64, _ name: String, _ reason: String) {
            let id = ObjectID.stored(entity: entity, of: mapping.entityNumbers, key: key)
            failures.append(ValidationFailure(entity: coordinator.mapping(forEntityNumber: id.entityNumber).name,
                                              objectURI: coordinator.uri(for: id), key: name, reason: reason))
        }
        let entityTerm = { (mapping: EntityMapping) in mapping.tableHasSubentities ? "t0.Z_ENT" : "\(mapping.number)" }
        for cleared in clearedToOnes {
            let sql = "SELECT t0.Z_PK, \(entityTerm(cleared.mapping)) FROM \(cleared.mapping.table) t0"
                + " WHERE t0.Z_PK \(DeletionPlanner.inKeys) AND t0.\(cleared.toOne.column) IS NULL ORDER BY t0.Z_PK"
            try query(sql, [DeletionPlanner.json(cleared.keys.sorted())]) { handle in
                fail(cleared.mapping, entity: handle.int64(1), key: handle.int64(0), cleared.toOne.name, "is required")
            }
        }
        for thinned in thinnedToManys {
            let members: String
            switch thinned.toMany.storage {
            case .inverseForeignKey(let table, let column, _):
                members = "SELECT COUNT(*) FROM \(table) m WHERE m.\(column) = t0.Z_PK"
            case .joinTable(let table, let sourceColumn, _, _, _):
                members = "SELECT COUNT(*) FROM \(table) m WHERE m.\(sourceColumn) = t0.Z_PK"
            case .foreignKey, .transient:
                continue
            }
            let description = thinned.toMany.description
            let rule = ValidationRules.ToManyRule(index: 0, name: thinned.toMany.name, isRequired: !description.isOptional,
                                                  minCount: description.minCount, maxCount: 0)
            // Owners the save deleted in the end are gone from the table, and so from the answer.
            let sql = "SELECT t0.Z_PK, \(entityTerm(thinned.mapping)), (\(members)) FROM \(thinned.mapping.table) t0"
                + " WHERE t0.Z_PK \(DeletionPlanner.inKeys) ORDER BY t0.Z_PK"
            try query(sql, [DeletionPlanner.json(thinned.keys.sorted())]) { handle in
                if let problem = rule.problem(withCount: Int(handle.int64(2))) {
                    fail(thinned.mapping, entity: handle.int64(1), key: handle.int64(0), thinned.toMany.name, problem)
                }
            }
        }
        return failures
    }
}

extension DeletionPlanner {
    /// The surviving owners whose required to-manys lose members to this delete, read before its rows go: for each
    /// doomed row, the owner its to-one points at (a one-to-many's inverse), the owners linked to it through a join
    /// table (a many-to-many's other side), and the owners of to-manys without an inverse that link to it.
    func thinnedToManys() throws -> [RelationshipShortfalls.ThinnedToMany] {
        var found: [String: RelationshipShortfalls.ThinnedToMany] = [:]
        func note(_ owner: EntityMapping, _ toMany: EntityMapping.ToMany, _ key: Int64) {
            guard !isDoomed(ObjectID(entityNumber: owner.number, primaryKey: key)) else { return }
            found["\(owner.number).\(toMany.name)", default: .init(mapping: owner, toMany: toMany, keys: [])].keys.insert(key)
        }
        // The model's many-to-nil to-manys that require members, each under the entity that declares it.
        let manyToNil = coordinator.model.entities.map { coordinator.mapping(forEntityNumber: $0.number) }.flatMap { owner in
            owner.toManys.filter { $0.inverse == nil && RelationshipShortfalls.requiresMembers($0) && !Self.inherits(owner, $0.name, coordinator.model) }
                .map { (owner, $0) }
        }
        for (mapping, keys) in doomedGroups {
            for toOne in mapping.toOnes {
                let owner = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
                guard let inverse = toOne.inverse, case .toMany(let index)? = owner.slot(forKey: inverse),
                      RelationshipShortfalls.requiresMembers(owner.toManys[index]) else { continue }
                try links(ofToOne: toOne, in: mapping, keys) { source, destination in
                    if holds(mapping, source, toOne.name, destination) { note(owner, owner.toManys[index], destination.primaryKey) }
                }
            }
            for toMany in mapping.toManys {
                // No Action keeps the doomed row's links: the owner on the other side loses nothing.
                guard case .joinTable = toMany.storage, let inverse = toMany.inverse, toMany.description.deleteRule != .noAction else { continue }
                let owner = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
                guard case .toMany(let index)? = owner.slot(forKey: inverse), RelationshipShortfalls.requiresMembers(owner.toManys[index]) else { continue }
                try links(ofToMany: toMany, keys) { _, destination in note(owner, owner.toManys[index], destination.primaryKey) }
            }
            // To-manys without an inverse (many-to-nil) that link to the doomed rows: the delete removes those links
            // too, so an owner may lose members it requires.
            for (owner, toMany) in manyToNil where coordinator.model.entity(named: toMany.description.destination)?.includes(mapping.name) == true {
                guard case .joinTable(let table, let sourceColumn, let destinationColumn, _, _) = toMany.storage else { continue }
                try query("SELECT j.\(sourceColumn), j.\(destinationColumn) FROM \(table) j WHERE j.\(destinationColumn) \(Self.inKeys)",
                          [Self.json(keys)]) { handle in
                    let source = handle.int64(0)
                    let member = ObjectID(entityNumber: mapping.number, primaryKey: handle.int64(1))
                    if holds(owner, source, toMany.name, member) { note(owner, toMany, source) }
                }
            }
        }
        return found.keys.sorted().compactMap { found[$0] }
    }
}
