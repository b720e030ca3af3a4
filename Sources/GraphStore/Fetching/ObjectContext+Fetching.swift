import Foundation

/// Fetch requests: objects (all at once or in batches), object IDs, dictionaries and counts.
extension ObjectContext {
    /// The objects matching `request`, in its order. Their rows go to the row cache (faults on them are hits), the
    /// prefetched relationships are loaded, and unsaved changes are applied unless `includesPendingChanges` is off.
    /// With `fetchBatchSize` > 0 the result loads its batches as they are touched.
    public func fetch(_ request: FetchRequest) throws(ContextError) -> FetchedObjects {
        try fetch(request, firstReading: 0)
    }

    /// Like `fetch(_:)`, for a caller that reads index `firstIndex` first (a screen that stays where it was after
    /// fetching again): a windowed batched result reads the batch holding it in its first statement, instead of
    /// the first batch. Other results are as `fetch(_:)` makes them.
    public func fetch(_ request: FetchRequest, firstReading firstIndex: Int) throws(ContextError) -> FetchedObjects {
        // Windowed batches read the order in pieces, so ties are broken by primary key (`breakTiesByPrimaryKey`).
        let windowed = request.fetchBatchSize > 0 && request.batchingMode == .windowed
        var plan = try coordinator.planCache.plan(for: request, readsObjects: true, breaksTies: windowed, coordinator: coordinator)
        var pending = request.includesPendingChanges ? pendingObjects(for: plan) : nil
        if request.fetchBatchSize > 0, let unsaved = pending {
            let moved = unsaved.moved(by: request)
            if moved.isEmpty {
                // Only deletions change the result: the store leaves the deleted rows out, and the result stays batched.
                plan.excludePrimaryKeys(unsaved.deleted.map(\.primaryKey).sorted())
                pending = nil
            } else if moved.count <= Self.placedObjectsLimit, !request.sortDescriptors.isEmpty, request.fetchLimit == 0, request.fetchOffset == 0 {
                // A few objects whose place may have changed: the store leaves them out too, and each goes where
                // a count of the rows before it says; the result stays batched.
                return try fetchPlacing(moved, plan: plan, deleted: unsaved.deleted)
            }
        }
        if request.fetchBatchSize > 0, pending == nil {
            return FetchedObjects(batches: try BatchedFetch(context: self, plan: plan, startingAt: firstIndex))
        }
        let start = ContinuousClock.now
        // Pending changes can move objects across the window, so the window is then applied after merging.
        var loaded = try loadObjects(plan, limit: pending == nil ? request.fetchLimit : 0, offset: pending == nil ? request.fetchOffset : 0)
        if let pending {
            loaded.objects = try merge(loaded.objects, with: pending, plan: plan)
        }
        coordinator.events.emit(.fetch(FetchEvent(entity: plan.mapping.name, rows: loaded.objects.count, duration: ContinuousClock.now - start)), context: id)
        return FetchedObjects(loaded.objects, retaining: loaded.retained)
    }

    /// Objects of `entity` (and its sub-entities) whose attributes or to-ones equal the given values (a to-one's
    /// value is its destination's primary key), in primary-key order, as the store holds them: a `FetchRequest`
    /// with those comparisons, sorted by `SELF`, without unsaved changes. The rows fill the row cache; the objects
    /// come back as faults unless `returnsObjectsAsFaults` is false, so reading them later costs no SQL either way.
    public func fetch(_ entity: String, where conditions: [(key: String, value: AttributeValue)] = [], returnsObjectsAsFaults: Bool = true) throws(ContextError) -> [ManagedObject] {
        guard let mapping = coordinator.mapping(forEntity: entity) else { throw .unknownEntity(entity) }
        var comparisons: [Predicate] = []
        for (key, value) in conditions {
            let argument: PredicateArgument
            switch mapping.slot(forKey: key) {
            case .attribute?:
                argument = .value(value)
            case .toOne(let index)?:
                switch value {
                case .null: argument = .value(.null)
                case .integer(let primaryKey): argument = .objectID(ObjectID(entityNumber: mapping.toOnes[index].destinationNumber, primaryKey: primaryKey))
                default: throw .invalidFetch("\(entity): to-one '\(key)' matches a primary key or nil, not \(value)")
                }
            default:
                throw .invalidFetch("\(entity): fetch(_:where:) matches attributes and to-ones only, not '\(key)'")
            }
            comparisons.append(.comparison(.init(.keyPath(key), .equal, .constant(argument))))
        }
        var request = FetchRequest(entityName: entity, predicate: comparisons.isEmpty ? nil : comparisons.count == 1 ? comparisons[0] : .and(comparisons),
                                   sortDescriptors: [.init("SELF")])
        request.includesPendingChanges = false
        request.returnsObjectsAsFaults = returnsObjectsAsFaults
        return Array(try fetch(request))
    }

    /// The IDs of the objects matching `request`, in its order: `SELECT Z_ENT, Z_PK …`, no rows read. With pending
    /// changes applied, inserted objects appear with their temporary IDs.
    public func fetchObjectIDs(_ request: FetchRequest) throws(ContextError) -> [ObjectID] {
        let plan = try coordinator.planCache.plan(for: request, readsObjects: false, coordinator: coordinator)
        if request.includesPendingChanges, pendingObjects(for: plan) != nil {
            return try fetch(request.wholeRows).map(\.objectID)
        }
        let start = ContinuousClock.now
        var ids: [ObjectID] = []
        try runQuery(plan.select(plan.idSelectList, limit: request.fetchLimit, offset: request.fetchOffset), plan.arguments,
                     cause: .fetch(entity: plan.mapping.name)) { handle in
            ids.append(plan.objectID(handle))
        }
        coordinator.events.emit(.fetch(FetchEvent(entity: plan.mapping.name, rows: ids.count, duration: ContinuousClock.now - start)), context: id)
        return ids
    }

    /// The number of objects `request` would return: one `SELECT COUNT(*)`, no rows read (unless unsaved changes
    /// of the fetched entities must be counted in, which takes the objects' IDs).
    public func count(for request: FetchRequest) throws(ContextError) -> Int {
        let plan = try coordinator.planCache.plan(for: request, readsObjects: false, coordinator: coordinator)
        if request.includesPendingChanges, pendingObjects(for: plan) != nil {
            return try fetch(request.wholeRows).count
        }
        var count = 0
        try runQuery(plan.countSQL, plan.arguments, cause: .fetch(entity: plan.mapping.name)) { handle in
            count = Int(handle.int64(0))
        }
        return count
    }

    /// Chosen properties of the matching rows, straight from the store (unsaved changes are not seen): one
    /// dictionary per row keyed by the key paths of `propertiesToFetch` (every stored attribute when empty). A
    /// to-one gives its destination's primary key; nil values are left out, as Core Data leaves them out.
    public func fetchDictionaries(_ request: FetchRequest) throws(ContextError) -> [[String: AttributeValue]] {
        var plan = try coordinator.planCache.plan(for: request, readsObjects: false, coordinator: coordinator)
        let keys = request.propertiesToFetch.isEmpty ? plan.mapping.attributes.map(\.name) : request.propertiesToFetch
        var columns: [(key: String, column: String, type: AttributeType)] = []
        for key in keys {
            let type = try valueType(ofKeyPath: key, from: plan.mapping)
            columns.append((key, try plan.column(forKeyPath: key), type))
        }
        let start = ContinuousClock.now
        var rows: [[String: AttributeValue]] = []
        let sql = plan.select(columns.map(\.column).joined(separator: ", "), limit: request.fetchLimit, offset: request.fetchOffset)
        try runQuery(sql, plan.arguments, cause: .fetch(entity: plan.mapping.name)) { handle in
            var row: [String: AttributeValue] = [:]
            for (position, column) in columns.enumerated() {
                let value = handle.value(Int32(position), as: column.type)
                if !value.isNull { row[column.key] = value }
            }
            rows.append(row)
        }
        coordinator.events.emit(.fetch(FetchEvent(entity: plan.mapping.name, rows: rows.count, duration: ContinuousClock.now - start)), context: id)
        return rows
    }

    /// How to read rows of `mapping`'s table: its root entity and every sub-entity.
    func rowPlan(forTableOf mapping: EntityMapping, properties: Set<String>? = nil) -> RowReadPlan {
        coordinator.planCache.rowPlan(forTableOf: mapping, properties: properties, coordinator: coordinator)
    }

    // MARK: pending changes

    /// The context's unsaved objects of the fetched entities; nil when there are none.
    struct PendingObjects {
        var inserted: [ManagedObject]
        var changed: [ManagedObject]
        var deleted: Set<ObjectID>

        /// The objects whose place in the result may differ from their stored row's: the inserted ones, and the
        /// changed ones whose changes touch a key the predicate or the sort reads. With none, the store's rows less
        /// the deleted ones are the result in its order.
        func moved(by request: FetchRequest) -> [ManagedObject] {
            var read = request.predicate?.rootKeys ?? []
            for descriptor in request.sortDescriptors { read.insert(String(descriptor.keyPath.prefix { $0 != "." })) }
            return inserted + changed.filter { !$0.changedKeyNames.isDisjoint(with: read) }
        }
    }

    func pendingObjects(for plan: FetchPlan) -> PendingObjects? {
        let numbers = plan.includedNumbers
        let inserted = insertedList.filter { !$0.state.isDeleted && numbers.contains($0.objectID.entityNumber) }
        var changed: [ManagedObject] = []
        var deleted = Set<ObjectID>()
        for object in changedObjects.values where numbers.contains(object.objectID.entityNumber) {
            if object.state.isDeleted { deleted.insert(object.objectID) } else { changed.append(object) }
        }
        return inserted.isEmpty && changed.isEmpty && deleted.isEmpty ? nil : PendingObjects(inserted: inserted, changed: changed, deleted: deleted)
    }

    /// How many moved objects a batched fetch places by counting (one statement each); more are merged in memory.
    static let placedObjectsLimit = 64

    /// A batched result of the store's rows without `deleted` and `moved`, with the moved objects that still
    /// match placed where they sort: for each, one `SELECT COUNT(*)` of the rows before it.
    func fetchPlacing(_ moved: [ManagedObject], plan original: FetchPlan, deleted: Set<ObjectID>) throws(ContextError) -> FetchedObjects {
        var plan = original
        if plan.request.batchingMode == .windowed { plan.breakTiesByPrimaryKey() }
        let stored = moved.map(\.objectID).filter { !$0.isTemporary }
        plan.excludePrimaryKeys((deleted.map(\.primaryKey) + stored.map(\.primaryKey)).sorted())
        var evaluator: PredicateEvaluator?
        if let predicate = plan.request.predicate {
            do {
                evaluator = try PredicateEvaluator(predicate, entity: plan.mapping.name, schema: coordinator.store.schema)
            } catch {
                throw .predicate(entity: plan.mapping.name, error)
            }
        }
        let matching = moved.filter { evaluator?.evaluate($0) ?? true }
        // Each object's sort values, one per ORDER BY term (SELF and the tie-break are its primary key).
        let keyPaths = plan.request.sortDescriptors.map(\.keyPath) + ["SELF"]
        func values(_ object: ManagedObject) -> [AttributeValue] {
            keyPaths.map { InMemorySort.value(of: object, keyPath: $0) }
        }
        var counted: [(rowsBefore: Int, object: ManagedObject)] = []
        for object in matching {
            let before = plan.sortsBefore(values(object))
            var countPlan = plan
            countPlan.addCondition(before.clause, before.arguments)
            var rows = 0
            try runQuery(countPlan.select("COUNT(*)", ordered: false), countPlan.arguments, cause: .fetch(entity: plan.mapping.name)) { handle in
                rows = Int(handle.int64(0))
            }
            counted.append((rows, object))
        }
        // Objects with as many rows before them keep the request's order among themselves.
        let ordered = InMemorySort.sorted(counted.map(\.object), by: plan.request.sortDescriptors)
        let rank = Dictionary(uniqueKeysWithValues: ordered.enumerated().map { (ObjectIdentifier($1), $0) })
        counted.sort { ($0.rowsBefore, rank[ObjectIdentifier($0.object)] ?? 0) < ($1.rowsBefore, rank[ObjectIdentifier($1.object)] ?? 0) }
        let batches = try BatchedFetch(context: self, plan: plan)
        var placed: [(index: Int, object: ManagedObject)] = []
        for (position, entry) in counted.enumerated() {
            // A row count can exceed what the batched statements saw only if another writer committed in between.
            placed.append((min(entry.rowsBefore, batches.count) + position, entry.object))
        }
        return FetchedObjects(batches: batches, placing: placed)
    }

    /// The store's result with unsaved changes applied: deleted objects removed, changed ones judged again by their
    /// values in memory, matching inserted ones added; then sorted in memory and windowed as the request says.
    func merge(_ stored: [ManagedObject], with pending: PendingObjects, plan: FetchPlan) throws(ContextError) -> [ManagedObject] {
        let request = plan.request
        // Checked once for the fetched entity, as the SQL was; then each object is judged without failing.
        var evaluator: PredicateEvaluator?
        if let predicate = request.predicate {
            do {
                evaluator = try PredicateEvaluator(predicate, entity: plan.mapping.name, schema: coordinator.store.schema)
            } catch {
                throw .predicate(entity: plan.mapping.name, error)
            }
        }
        func matches(_ object: ManagedObject) -> Bool { evaluator?.evaluate(object) ?? true }
        let changedIDs = Set(pending.changed.map(\.objectID))
        var result: [ManagedObject] = []
        result.reserveCapacity(stored.count + pending.inserted.count)
        for object in stored where !pending.deleted.contains(object.objectID) {
            if changedIDs.contains(object.objectID), !matches(object) { continue }
            result.append(object)
        }
        var present = Set(result.map(\.objectID))
        for object in pending.changed + pending.inserted where !present.contains(object.objectID) {
            if matches(object) {
                present.insert(object.objectID)
                result.append(object)
            }
        }
        if !request.sortDescriptors.isEmpty {
            result = InMemorySort.sorted(result, by: request.sortDescriptors)
        }
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0, result.count > request.fetchLimit { result = Array(result.prefix(request.fetchLimit)) }
        return result
    }
    // MARK: dictionaries

    /// The type of the value a key path through to-ones ends at: an attribute's, or an integer key for a to-one.
    private func valueType(ofKeyPath keyPath: String, from start: EntityMapping) throws(ContextError) -> AttributeType {
        var mapping = start
        let components = keyPath.split(separator: ".").map(String.init)
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            switch mapping.slot(forKey: component) {
            case .attribute(let index)? where isLast:
                return mapping.attributes[index].type
            case .toOne(let index)?:
                if isLast { return .integer64 }
                mapping = coordinator.mapping(forEntityNumber: mapping.toOnes[index].destinationNumber)
            default:
                throw .invalidFetch("\(start.name): '\(keyPath)' is not a stored attribute or to-one key path")
            }
        }
        throw .invalidFetch("\(start.name): empty property key path")
    }
}

extension FetchRequest {
    /// The request with no properties chosen: for counting or listing IDs through a fetch of objects, where the
    /// properties, chosen for dictionaries perhaps, play no part.
    var wholeRows: FetchRequest {
        var request = self
        request.propertiesToFetch = []
        return request
    }
}
