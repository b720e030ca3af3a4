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
        var plan = try FetchPlan(request, coordinator: coordinator)
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
            if request.batchingMode == .windowed { plan.breakTiesByPrimaryKey() }
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

    /// The IDs of the objects matching `request`, in its order: `SELECT Z_ENT, Z_PK …`, no rows read. With pending
    /// changes applied, inserted objects appear with their temporary IDs.
    public func fetchObjectIDs(_ request: FetchRequest) throws(ContextError) -> [ObjectID] {
        let plan = try FetchPlan(request, coordinator: coordinator)
        if request.includesPendingChanges, pendingObjects(for: plan) != nil {
            return try fetch(request).map(\.objectID)
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
        let plan = try FetchPlan(request, coordinator: coordinator)
        if request.includesPendingChanges, pendingObjects(for: plan) != nil {
            return try fetch(request).count
        }
        var count = 0
        try runQuery(plan.countSQL, plan.arguments, cause: .fetch(entity: plan.mapping.name)) { handle in
            count = Int(SQLiteValues.int64(handle, 0))
        }
        return count
    }

    /// Chosen properties of the matching rows, straight from the store (unsaved changes are not seen): one
    /// dictionary per row keyed by the key paths of `propertiesToFetch` (every stored attribute when empty). A
    /// to-one gives its destination's primary key; nil values are left out, as Core Data leaves them out.
    public func fetchDictionaries(_ request: FetchRequest) throws(ContextError) -> [[String: AttributeValue]] {
        var plan = try FetchPlan(request, coordinator: coordinator)
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
                let value = SQLiteValues.value(handle, Int32(position), as: column.type)
                if !value.isNull { row[column.key] = value }
            }
            rows.append(row)
        }
        coordinator.events.emit(.fetch(FetchEvent(entity: plan.mapping.name, rows: rows.count, duration: ContinuousClock.now - start)), context: id)
        return rows
    }

    // MARK: loading rows

    /// Objects read by one statement, with the prefetched objects their result keeps alive.
    struct LoadedObjects {
        var objects: [ManagedObject]
        var retained: [ManagedObject]
        /// The number of matching rows, when the statement counted them (`counting`).
        var total: Int? = nil
    }

    /// Runs the plan's statement (window applied) and everything its request prefetches. With `counting`, the
    /// statement also counts every matching row (the request's own window applied), in a scalar subquery SQLite
    /// evaluates once: the count a windowed batch needs comes with its rows.
    func loadObjects(_ plan: FetchPlan, limit: Int, offset: Int, counting: Bool = false) throws(ContextError) -> LoadedObjects {
        let request = plan.request
        guard request.includesPropertyValues else {
            var ids: [ObjectID] = []
            try runQuery(plan.select(plan.idSelectList, limit: limit, offset: offset), plan.arguments,
                         cause: .fetch(entity: plan.mapping.name)) { handle in
                ids.append(plan.objectID(handle))
            }
            recordFaultGroup(ids, size: faultBatchSize)
            return LoadedObjects(objects: ids.map { object(with: $0) }, retained: [])
        }
        let joined = JoinedPrefetch.make(for: plan, coordinator: coordinator)
        // The count's arguments come first: its subquery is in the select list, before the FROM and WHERE.
        let count = counting ? ", (\(plan.countSQL)) AS _count" : ""
        let sql = plan.selectWindowThenJoin(plan.rowPlan.selectList + joined.selectList + count, joins: joined.joins, limit: limit, offset: offset)
        return try loadRows(sql: sql, arguments: counting ? plan.arguments + plan.arguments : plan.arguments, rowPlan: plan.rowPlan,
                            joined: joined, request: request, cause: .fetch(entity: plan.mapping.name),
                            countColumn: counting ? joined.endColumn : nil)
    }

    /// Reads full rows (and the joined prefetch's rows beside them), caches them, makes the objects, fills the
    /// to-many a joined prefetch read, and runs the separate prefetch statements for them. `countColumn`, if any,
    /// holds a count the statement took, the same on every row.
    func loadRows(
        sql: String, arguments: [AttributeValue], rowPlan: RowReadPlan, joined: JoinedPrefetch, request: FetchRequest, cause: StatementCause,
        countColumn: Int32? = nil
    ) throws(ContextError) -> LoadedObjects {
        var rows: [RowSnapshot] = []
        var found = JoinedPrefetch.Rows()
        var total: Int?
        // With a joined to-many a row comes once per member: it is read the first time only.
        var seen = Set<ObjectID>()
        let repeatsRows = joined.repeatsRows
        let readsJoins = !joined.nodes.isEmpty
        try runQuery(sql, arguments, cause: cause) { handle in
            if !repeatsRows || seen.insert(rowPlan.objectID(handle, offset: 0)).inserted {
                rows.append(SQLiteValues.snapshot(handle, plan: rowPlan))
            }
            if readsJoins { joined.read(handle, into: &found) }
            if let countColumn, total == nil { total = Int(SQLiteValues.int64(handle, countColumn)) }
        }
        coordinator.rowCache.insert(contentsOf: rows)
        var retained: [ManagedObject] = []
        if !found.rows.isEmpty {
            coordinator.rowCache.insert(contentsOf: found.rows.values.map(\.row))
            for (keyPath, group) in Dictionary(grouping: found.rows.values, by: \.keyPath) {
                retained += materialize(group.map(\.row), prefetchedFor: keyPath)
            }
        }
        if let toMany = joined.toMany {
            for ownerID in found.owners {
                let owner = object(with: ownerID)
                if case .toMany(let index)? = owner.mapping.slot(forKey: toMany.relationship), owner.toManyStates[index]?.members == nil {
                    fulfillToMany(owner, index: index, storedMembers: found.members[ownerID] ?? [])
                }
                retained.append(owner)
            }
        }
        recordToOneFaultGroups(rows)
        let objects = rows.map { snapshot -> ManagedObject in
            let object = object(with: snapshot.objectID)
            if !request.returnsObjectsAsFaults, object.snapshot == nil, !object.isInserted { object.snapshot = snapshot }
            return object
        }
        try prefetch(PrefetchNode.tree(joined.remainingKeyPaths), rows: rows, prefix: "", retained: &retained)
        return LoadedObjects(objects: objects, retained: retained, total: total)
    }

    /// Objects for rows just read, filled with them (a prefetched object is not a fault). With `keyPath`, the rows
    /// came from prefetching it: the objects this fills are remembered, untouched, for `takePrefetchUse()`.
    func materialize(_ rows: [RowSnapshot], prefetchedFor keyPath: String? = nil) -> [ManagedObject] {
        rows.map { row in
            let object = object(with: row.objectID)
            if object.snapshot == nil, !object.isInserted {
                object.snapshot = row
                if let keyPath, tracksPrefetchUse {
                    object.isUntouchedPrefetch = true
                    prefetchedObjects[keyPath, default: []].append(row.objectID)
                    untouchedPrefetches.insert(row.objectID)
                }
            }
            return object
        }
    }

    /// What each prefetched key path brought in since the last call, and how much of it nobody has read since:
    /// objects a prefetch filled whose attributes and to-ones were never read. Forgets them as it reports them.
    /// Empty unless `tracksPrefetchUse` is on.
    ///
    /// ```swift
    /// let chats = try context.fetch(request)          // 100 chats, lastMessage.sender prefetched
    /// _ = chats[0..<30].map { $0.value(forKey: "title") }
    /// context.takePrefetchUse()                        // [PrefetchUse(keyPath: "lastMessage", entity: "Message",
    ///                                                  //   prefetched: 100, untouched: 70), …]
    /// ```
    public func takePrefetchUse() -> [PrefetchUse] {
        defer {
            prefetchedObjects = [:]
            untouchedPrefetches = []
        }
        return prefetchedObjects.sorted { $0.key < $1.key }.map { keyPath, ids in
            let untouched = ids.filter { untouchedPrefetches.contains($0) }
            // Objects still alive keep their flag no longer: what they were prefetched for has been reported.
            for id in untouched { registry[id]?.object.isUntouchedPrefetch = false }
            let entity = ids.first.map { coordinator.mapping(forEntityNumber: $0.entityNumber).name } ?? ""
            return PrefetchUse(keyPath: keyPath, entity: entity, prefetched: ids.count, untouched: untouched.count)
        }
    }

    /// Runs a read statement for this context, mapping store errors to `ContextError`.
    func runQuery(_ sql: String, _ arguments: [AttributeValue], cause: StatementCause, row: (OpaquePointer) throws -> Void) throws(ContextError) {
        do {
            _ = try coordinator.read { db in
                try coordinator.query(db, sql: sql, arguments: arguments, cause: cause, context: id, row: row)
            }
        } catch {
            throw .store(PersistentStore.sqliteMessage(error))
        }
    }

    // MARK: prefetching (one statement per key path and level)

    /// Loads the relationships of `nodes` for `rows` (objects of one table), then their children from the rows
    /// loaded. To-ones skip destinations already in the row cache; to-manys fill their owners' relationship faults.
    func prefetch(_ nodes: [PrefetchNode], rows: [RowSnapshot], prefix: String, retained: inout [ManagedObject]) throws(ContextError) {
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
                destinations += try prefetchToOne(toOneIDs, keyPath: keyPath, retained: &retained)
            }
            for group in toManyOwners {
                destinations += try prefetchToMany(group.mapping, index: group.index, owners: group.owners, keyPath: keyPath, retained: &retained)
            }
            try prefetch(node.children, rows: destinations, prefix: keyPath, retained: &retained)
        }
    }

    /// `SELECT … FROM <DEST> t0 WHERE t0.Z_PK IN (…)` for the destinations not cached yet; returns every destination row.
    private func prefetchToOne(_ ids: [ObjectID], keyPath: String, retained: inout [ManagedObject]) throws(ContextError) -> [RowSnapshot] {
        let cached = coordinator.rowCache.cachedSnapshots(for: ids)
        var rows = ids.compactMap { cached[$0] }
        let missing = ids.filter { cached[$0] == nil }
        if !missing.isEmpty {
            let mapping = coordinator.mapping(forEntityNumber: missing[0].entityNumber)
            let plan = rowPlan(forTableOf: mapping)
            var loaded: [RowSnapshot] = []
            for chunk in KeyList.chunks(missing) {
                let list = KeyList(chunk.map(\.primaryKey))
                try runQuery("SELECT \(plan.selectList) FROM \(mapping.table) t0 WHERE t0.Z_PK IN \(list.sql)", list.arguments,
                             cause: .prefetch(keyPath: keyPath)) { handle in
                    loaded.append(SQLiteValues.snapshot(handle, plan: plan))
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
        _ mapping: EntityMapping, index: Int, owners: [ObjectID], keyPath: String, retained: inout [ManagedObject]
    ) throws(ContextError) -> [RowSnapshot] {
        let toMany = mapping.toManys[index]
        let destination = coordinator.mapping(forEntityNumber: toMany.destinationNumber)
        let plan = rowPlan(forTableOf: destination)
        var rows: [RowSnapshot] = []
        var members: [Int64: [ObjectID]] = [:]
        for chunk in KeyList.chunks(owners) {
            let list = KeyList(chunk.map(\.primaryKey))
            let sql: String
            switch toMany.storage {
            case .inverseForeignKey(let table, let column, let orderColumn):
                sql = "SELECT t0.\(column), \(plan.selectList) FROM \(table) t0 WHERE t0.\(column) IN \(list.sql) ORDER BY t0.\(column)"
                    + (orderColumn.map { ", t0.\($0)" } ?? "")
            case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn, _):
                sql = "SELECT t1.\(sourceColumn), \(plan.selectList) FROM \(table) t1 JOIN \(toMany.destinationTable) t0 ON t0.Z_PK = t1.\(destinationColumn)"
                    + " WHERE t1.\(sourceColumn) IN \(list.sql) ORDER BY t1.\(sourceColumn)" + (orderColumn.map { ", t1.\($0)" } ?? "")
            case .foreignKey, .transient:
                return []
            }
            try runQuery(sql, list.arguments, cause: .prefetch(keyPath: keyPath)) { handle in
                let row = SQLiteValues.snapshot(handle, plan: plan, offset: 1)
                members[SQLiteValues.int64(handle, 0), default: []].append(row.objectID)
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

    /// How to read rows of `mapping`'s table: its root entity and every sub-entity.
    func rowPlan(forTableOf mapping: EntityMapping) -> RowReadPlan {
        PlanCache.rowPlan(forTableOf: mapping, coordinator: coordinator)
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
        let inserted = insertedList.filter { !$0.isDeletedFlag && numbers.contains($0.objectID.entityNumber) }
        var changed: [ManagedObject] = []
        var deleted = Set<ObjectID>()
        for object in changedObjects.values where numbers.contains(object.objectID.entityNumber) {
            if object.isDeletedFlag { deleted.insert(object.objectID) } else { changed.append(object) }
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
                throw .invalidFetch("\(plan.mapping.name): \(error.description)")
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
                rows = Int(SQLiteValues.int64(handle, 0))
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
                throw .invalidFetch("\(plan.mapping.name): \(error.description)")
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

/// A list of primary keys for `IN`, bound as parameters: one `?` each.
struct KeyList {
    let sql: String
    let arguments: [AttributeValue]

    /// Keys per statement: well under SQLite's limit on bound parameters.
    static let chunkSize = 30_000

    init(_ keys: [Int64]) {
        sql = "(" + FetchPlan.placeholders(keys.count) + ")"
        arguments = keys.map { .integer($0) }
    }

    static func chunks<T>(_ items: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: items.count, by: chunkSize).map { items[$0..<min($0 + chunkSize, items.count)] }
    }
}

/// What one prefetched key path brought into a context, and how many of those objects were never read.
public struct PrefetchUse: Equatable, Sendable {
    /// The key path as the request named it (`lastMessage.sender`).
    public let keyPath: String
    /// The entity of the objects it brought (of the first, when a key path reaches several).
    public let entity: String
    /// Objects the prefetch filled (objects already filled before it are not counted).
    public let prefetched: Int
    /// Of those, the ones whose attributes and to-ones nobody read.
    public let untouched: Int
}
