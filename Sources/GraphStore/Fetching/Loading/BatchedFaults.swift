/// Batched faults (opt-in, `faultBatchSize`): a fault that misses the row cache reads its unfired siblings with it,
/// `… WHERE t0.Z_PK IN (…)`, as Hibernate's batch fetching does. Off by default, so Core Data's counts stay.
///
/// The loader owns the sibling groups. Every other loader tells it what it surfaced through one hook,
/// `ObjectContext.noteSurfaced(_:)`; only a fault reads them back.
struct BatchedFaults {
    /// A list of objects surfaced together (a to-many's members, one to-one's destinations among rows read
    /// together) and how many of them one fault may read.
    final class Group {
        let ids: [ObjectID]
        let size: Int

        init(ids: [ObjectID], size: Int) {
            self.ids = ids
            self.size = size
        }
    }

    /// What a loader surfaced.
    enum Surfaced {
        /// The objects of a fetch that read IDs only.
        case fetchedIDs([ObjectID])
        /// The members of `mapping`'s to-many `relationship`, as its relationship fault read them.
        case members([ObjectID], relationship: String, of: EntityMapping)
        /// Rows read together: their to-ones' destinations, per to-one.
        case rows([RowSnapshot])
    }

    /// At most this many objects are remembered as siblings; past it the memory is cleared (batching then starts
    /// again with the next groups recorded).
    static let limit = 200_000

    /// The batch size of objects surfaced through no relationship (fetched IDs); 0 turns batching off.
    var size = 0
    /// Per-relationship overrides of `size`, by "Entity.relationship".
    var sizeByRelationship: [String: Int] = [:]
    private var groups: [ObjectID: Group] = [:]

    /// The group `id` was surfaced in, if it is still unfired there.
    func group(of id: ObjectID) -> Group? {
        groups.isEmpty ? nil : groups[id]
    }

    /// Forgets `ids`: they are about to be read.
    mutating func take(_ ids: [ObjectID]) {
        for id in ids { groups[id] = nil }
    }

    /// The batch size for objects surfaced through `relationship` of `mapping`'s entity (or an ancestor's).
    func size(forRelationship relationship: String, of mapping: EntityMapping, in model: ObjectModel) -> Int {
        if !sizeByRelationship.isEmpty {
            var entity: Entity? = mapping.entity
            while let current = entity {
                if let size = sizeByRelationship["\(current.name).\(relationship)"] { return size }
                entity = current.parentName.flatMap { model.entity(named: $0) }
            }
        }
        return size
    }

    /// Remembers what a loader surfaced as groups of siblings, where batching applies to them.
    mutating func note(_ surfaced: Surfaced, coordinator: PersistentStoreCoordinator) {
        switch surfaced {
        case .fetchedIDs(let ids):
            record(ids, size: size)
        case .members(let ids, let relationship, let mapping):
            record(ids, size: size(forRelationship: relationship, of: mapping, in: coordinator.model))
        case .rows(let rows):
            guard size > 1 || !sizeByRelationship.isEmpty, rows.count > 1 else { return }
            let mapping = coordinator.mapping(forEntityNumber: rows[0].objectID.entityNumber)
            for (index, toOne) in mapping.toOnes.enumerated() {
                let size = size(forRelationship: toOne.name, of: mapping, in: coordinator.model)
                guard size > 1 else { continue }
                var seen = Set<ObjectID>()
                var destinations: [ObjectID] = []
                for row in rows where row.toOneKeys.count > index {
                    if let key = row.toOneKeys[index], seen.insert(key).inserted { destinations.append(key) }
                }
                record(destinations, size: size)
            }
        }
    }

    private mutating func record(_ ids: [ObjectID], size: Int) {
        guard size > 1, ids.count > 1 else { return }
        if groups.count + ids.count > Self.limit { groups.removeAll() }
        let group = Group(ids: ids, size: size)
        for id in ids { groups[id] = group }
    }
}

extension ObjectContext {
    /// Overrides `faultBatchSize` for one relationship (its members, or its destinations among rows read together);
    /// nil returns it to the context's size, 0 turns batching off for it.
    public func setFaultBatchSize(_ size: Int?, forRelationship relationship: String, of entity: String) {
        batchedFaults.sizeByRelationship["\(entity).\(relationship)"] = size
    }

    /// The one hook through which loaders feed batched faults what they surfaced.
    func noteSurfaced(_ surfaced: BatchedFaults.Surfaced) {
        batchedFaults.note(surfaced, coordinator: coordinator)
    }

    /// Reads `id`'s row and up to `group.size - 1` siblings not in the row cache with one statement; returns
    /// `id`'s row (nil when it is gone). The rows go to the row cache, and their to-ones become groups in turn.
    func fulfillFaultBatch(for id: ObjectID, in group: BatchedFaults.Group, cause: StatementCause) throws(ContextError) -> RowSnapshot? {
        let position = group.ids.firstIndex(of: id) ?? 0
        // Siblings after the object first (the order they will likely be touched in), then those before it.
        let candidates = group.ids[(position + 1)...] + group.ids[..<position]
        let root = coordinator.mapping(forEntityNumber: coordinator.mapping(forEntityNumber: id.entityNumber).rootNumber)
        var wanted = [id]
        let cached = coordinator.rowCache.cachedSnapshots(for: candidates.prefix(min(group.size, Int.max / 2) * 2))
        for candidate in candidates where wanted.count < group.size && cached[candidate] == nil {
            guard coordinator.mapping(forEntityNumber: candidate.entityNumber).rootNumber == root.number,
                  registeredObject(for: candidate)?.isFault ?? true else { continue }
            wanted.append(candidate)
        }
        batchedFaults.take(wanted)
        let plan = rowPlan(forTableOf: root)
        let list = KeyList(wanted.map(\.primaryKey))
        var rows: [RowSnapshot] = []
        try coordinator.reading(cause: cause, context: self.id, faultedObject: id) { runner in
            try runner.query(MappingSQL.rows(plan, of: root.table, keys: list)) { row in rows.append(row.snapshot(plan)) }
        }
        coordinator.rowCache.insert(contentsOf: rows)
        noteSurfaced(.rows(rows))
        return rows.first { $0.objectID.primaryKey == id.primaryKey }
    }
}
