/// Batched faults (opt-in, `faultBatchSize`): a fault that misses the row cache reads its unfired siblings with it,
/// `… WHERE t0.Z_PK IN (…)`, as Hibernate's batch fetching does. Off by default, so Core Data's counts stay.
extension ObjectContext {
    /// A list of objects surfaced together (a to-many's members, one to-one's destinations among rows read
    /// together) and how many of them one fault may read.
    final class FaultGroup {
        let ids: [ObjectID]
        let size: Int

        init(ids: [ObjectID], size: Int) {
            self.ids = ids
            self.size = size
        }
    }

    /// At most this many objects are remembered as siblings; past it the memory is cleared (batching then starts
    /// again with the next groups recorded).
    static let faultGroupLimit = 200_000

    /// Overrides `faultBatchSize` for one relationship (its members, or its destinations among rows read together);
    /// nil returns it to the context's size, 0 turns batching off for it.
    public func setFaultBatchSize(_ size: Int?, forRelationship relationship: String, of entity: String) {
        relationshipFaultBatchSizes["\(entity).\(relationship)"] = size
    }

    /// The batch size for objects surfaced through `relationship` of `mapping`'s entity (or an ancestor's).
    func faultBatchSize(forRelationship relationship: String, of mapping: EntityMapping) -> Int {
        if !relationshipFaultBatchSizes.isEmpty {
            var entity: Entity? = mapping.entity
            while let current = entity {
                if let size = relationshipFaultBatchSizes["\(current.name).\(relationship)"] { return size }
                entity = current.parentName.flatMap { model.entity(named: $0) }
            }
        }
        return faultBatchSize
    }

    /// Remembers `ids` as siblings of each other, when batching applies to them.
    func recordFaultGroup(_ ids: [ObjectID], size: Int) {
        guard size > 1, ids.count > 1 else { return }
        if faultGroups.count + ids.count > Self.faultGroupLimit { faultGroups.removeAll() }
        let group = FaultGroup(ids: ids, size: size)
        for id in ids { faultGroups[id] = group }
    }

    /// Remembers, per to-one, the destinations of rows read together.
    func recordToOneFaultGroups(_ rows: [RowSnapshot]) {
        guard faultBatchSize > 1 || !relationshipFaultBatchSizes.isEmpty, rows.count > 1 else { return }
        let mapping = coordinator.mapping(forEntityNumber: rows[0].objectID.entityNumber)
        for (index, toOne) in mapping.toOnes.enumerated() {
            let size = faultBatchSize(forRelationship: toOne.name, of: mapping)
            guard size > 1 else { continue }
            var seen = Set<ObjectID>()
            var destinations: [ObjectID] = []
            for row in rows where row.toOneKeys.count > index {
                if let key = row.toOneKeys[index], seen.insert(key).inserted { destinations.append(key) }
            }
            recordFaultGroup(destinations, size: size)
        }
    }

    /// Reads `id`'s row and up to `group.size - 1` siblings not in the row cache with one statement; returns
    /// `id`'s row (nil when it is gone). The rows go to the row cache, and their to-ones become groups in turn.
    func fulfillFaultBatch(for id: ObjectID, in group: FaultGroup, cause: StatementCause) throws(ContextError) -> RowSnapshot? {
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
        for sibling in wanted { faultGroups[sibling] = nil }
        let plan = rowPlan(forTableOf: root)
        let list = KeyList(wanted.map(\.primaryKey))
        var rows: [RowSnapshot] = []
        try coordinator.reading(cause: cause, context: self.id) { runner in
            try runner.query(MappingSQL.rows(plan, of: root.table, keys: list)) { row in rows.append(row.snapshot(plan)) }
        }
        coordinator.rowCache.insert(contentsOf: rows)
        recordToOneFaultGroups(rows)
        return rows.first { $0.objectID.primaryKey == id.primaryKey }
    }
}
