import Foundation

/// Separate prefetching, Core Data's way: after the main statement, one statement per key path and level.
extension ObjectContext {

    /// Loads the relationships of `nodes` for `rows` (objects of one table), then their children from the rows
    /// loaded. To-ones skip destinations already in the row cache; to-manys fill their owners' relationship faults.
    /// `selection` says what each key path's rows read (whole rows where it names nothing).
    func prefetch(_ nodes: [PrefetchNode], rows: [RowSnapshot], prefix: String, selection: PropertySelection,
                  retained: inout [ManagedObject]) throws(ContextError) {
        guard !nodes.isEmpty, !rows.isEmpty else { return }
        var byEntity: [Int: [RowSnapshot]] = [:]
        for row in rows { byEntity[row.objectID.entityNumber, default: []].append(row) }
        for node in nodes {
            let keyPath = prefix.isEmpty ? node.name : prefix + "." + node.name
            var toOneIDs: [ObjectID] = []
            var seen = Set<ObjectID>()
            var toManyOwners: [(mapping: EntityMapping, index: Int, owners: [ObjectID])] = []
            var found = false
            for (number, entityRows) in byEntity.sorted(by: { $0.key < $1.key }) {
                let mapping = coordinator.mapping(forEntityNumber: number)
                switch mapping.slot(forKey: node.name) {
                case .toOne(let index)?:
                    found = true
                    for row in entityRows { if let key = row.toOneKeys[index], seen.insert(key).inserted { toOneIDs.append(key) } }
                case .toMany(let index)?:
                    found = true
                    if let group = toManyOwners.firstIndex(where: { $0.mapping.table == mapping.table && $0.mapping.toManys[$0.index].storage == mapping.toManys[index].storage }) {
                        toManyOwners[group].owners += entityRows.map(\.objectID)
                    } else {
                        toManyOwners.append((mapping, index, entityRows.map(\.objectID)))
                    }
                default:
                    continue
                }
            }
            guard found else {
                let entity = rows.first.map { coordinator.mapping(forEntityNumber: $0.objectID.entityNumber).name } ?? "?"
                throw .invalidFetch("\(entity): no relationship '\(node.name)' to prefetch (key path '\(keyPath)')")
            }
            var destinations: [RowSnapshot] = []
            if !toOneIDs.isEmpty {
                destinations += try prefetchToOne(toOneIDs, keyPath: keyPath, properties: selection.names(at: keyPath), retained: &retained)
            }
            for group in toManyOwners {
                destinations += try prefetchToMany(group.mapping, index: group.index, owners: group.owners, keyPath: keyPath,
                                                   properties: selection.names(at: keyPath), retained: &retained)
            }
            try prefetch(node.children, rows: destinations, prefix: keyPath, selection: selection, retained: &retained)
        }
    }

    /// `SELECT … FROM <DEST> t0 WHERE t0.Z_PK IN (…)` for the destinations not cached yet (or cached without some
    /// of `properties`); returns every destination row.
    private func prefetchToOne(_ ids: [ObjectID], keyPath: String, properties: Set<String>?, retained: inout [ManagedObject]) throws(ContextError) -> [RowSnapshot] {
        let plan = rowPlan(forTableOf: coordinator.mapping(forEntityNumber: ids[0].entityNumber), properties: properties)
        var cached = coordinator.rowCache.cachedSnapshots(for: ids)
        for (id, row) in cached where !row.holdsAll(of: plan.reader(forEntity: id.entityNumber).loaded) { cached[id] = nil }
        var rows = ids.compactMap { cached[$0] }
        let missing = ids.filter { cached[$0] == nil }
        if !missing.isEmpty {
            let mapping = coordinator.mapping(forEntityNumber: missing[0].entityNumber)
            var loaded: [RowSnapshot] = []
            for chunk in KeyList.chunks(missing) {
                let list = KeyList(chunk.map(\.primaryKey))
                let statement = MappingSQL.rows(plan, of: mapping.table, keys: list)
                try runQuery(statement.sql, statement.arguments, cause: .prefetch(keyPath: keyPath)) { handle in
                    loaded.append(handle.snapshot(plan))
                }
            }
            coordinator.rowCache.insert(contentsOf: loaded)
            rows += loaded
        }
        retained += materialize(rows, prefetchedFor: keyPath)
        return rows
    }

    /// The destinations of a to-many for many owners in one statement (`… WHERE t0.<INVERSE> IN (…) ORDER BY
    /// t0.<INVERSE>`, or through the join table); fills each owner's relationship fault.
    private func prefetchToMany(
        _ mapping: EntityMapping, index: Int, owners: [ObjectID], keyPath: String, properties: Set<String>?, retained: inout [ManagedObject]
    ) throws(ContextError) -> [RowSnapshot] {
        let toMany = mapping.toManys[index]
        let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
        let plan = rowPlan(forTableOf: destination, properties: properties)
        var rows: [RowSnapshot] = []
        var members: [Int64: [ObjectID]] = [:]
        for chunk in KeyList.chunks(owners) {
            let list = KeyList(chunk.map(\.primaryKey))
            guard let statement = MappingSQL.members(of: toMany, plan, owners: list) else { return [] }
            try runQuery(statement.sql, statement.arguments, cause: .prefetch(keyPath: keyPath)) { handle in
                let row = handle.snapshot(plan, offset: 1)
                members[handle.int64(0), default: []].append(row.objectID)
                rows.append(row)
            }
        }
        coordinator.rowCache.insert(contentsOf: rows)
        retained += materialize(rows, prefetchedFor: keyPath)
        for ownerID in owners {
            let owner = object(with: ownerID)
            if owner.toManyStates[index]?.members == nil {
                fulfillToMany(owner, index: index, storedMembers: members[ownerID.primaryKey] ?? [])
            }
            retained.append(owner)
        }
        return rows
    }
}

/// Prefetch key paths as a tree, so a shared prefix (`lastMessage` of `lastMessage.sender` and
/// `lastMessage.reactions`) is loaded once.
struct PrefetchNode: Equatable {
    var name: String
    var children: [PrefetchNode] = []

    static func tree(_ keyPaths: [String]) -> [PrefetchNode] {
        var roots: [PrefetchNode] = []
        for keyPath in keyPaths {
            insert(keyPath.split(separator: ".").map(String.init)[...], into: &roots)
        }
        return roots
    }

    private static func insert(_ components: ArraySlice<String>, into nodes: inout [PrefetchNode]) {
        guard let first = components.first else { return }
        if let index = nodes.firstIndex(where: { $0.name == first }) {
            insert(components.dropFirst(), into: &nodes[index].children)
        } else {
            var node = PrefetchNode(name: first)
            insert(components.dropFirst(), into: &node.children)
            nodes.append(node)
        }
    }
}
