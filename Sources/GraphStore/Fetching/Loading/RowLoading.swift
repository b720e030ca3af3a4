import Foundation

/// Reading fetched rows into objects: the main statement of a fetch (its joined prefetch read beside it), the
/// row cache filled, the objects made, and what prefetches filled remembered for `takePrefetchUse()`.
extension ObjectContext {

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
            noteSurfaced(.fetchedIDs(ids))
            return LoadedObjects(objects: ids.map { object(with: $0) }, retained: [])
        }
        let joined = JoinedPrefetch.make(for: plan, coordinator: coordinator)
        // The count's arguments come first: its subquery is in the select list, before the FROM and WHERE.
        let arguments = counting ? plan.arguments + plan.arguments : plan.arguments
        let sql = plan.statements.sql(.init(limit: limit, offset: offset, counting: counting)) {
            let count = counting ? ", (\(plan.countSQL)) AS _count" : ""
            return plan.selectWindow(plan.rowPlan.selectList + joined.selectList + plan.countsSelectList + count,
                                     joins: joined.joins, repeatsRows: joined.repeatsRows, limit: limit, offset: offset) {
                coordinator.readsInOrder($0, arguments: arguments)
            }
        }
        return try loadRows(sql: sql, arguments: arguments, rowPlan: plan.rowPlan,
                            joined: joined, request: request, selection: plan.selection, cause: .fetch(entity: plan.mapping.name),
                            counted: plan.counted, countColumn: counting ? joined.endColumn + Int32(plan.counted.count) : nil,
                            expectedRows: limit)
    }

    /// Reads full rows (and the joined prefetch's rows beside them), caches them, makes the objects, fills the
    /// to-many a joined prefetch read, and runs the separate prefetch statements for them. The sizes of `counted`
    /// follow the joined columns (`FetchPlan.countsSelectList`). `countColumn`, if any, holds a count the statement
    /// took, the same on every row.
    func loadRows(
        sql: String, arguments: [AttributeValue], rowPlan: RowReadPlan, joined: JoinedPrefetch, request: FetchRequest,
        selection: PropertySelection, cause: StatementCause,
        counted: [FetchPlan.CountedToMany] = [], countColumn: Int32? = nil, expectedRows: Int = 0
    ) throws(ContextError) -> LoadedObjects {
        var rows: [RowSnapshot] = []
        // Room for the rows the statement can return, when that is a screenful or a batch (not a large limit that
        // few rows may meet), so that the arrays do not grow through every size on the way.
        let room = expectedRows <= 1_024 ? expectedRows : 0
        rows.reserveCapacity(room)
        var found = joined.makeRows()
        var total: Int?
        // With a joined to-many a row comes once per member: it is read the first time only.
        var seen = Set<ObjectID>()
        let repeatsRows = joined.repeatsRows
        let readsJoins = !joined.nodes.isEmpty
        // Per row read, the sizes of `counted`, in order.
        var sizes: [Int] = []
        sizes.reserveCapacity(room * counted.count)
        let countsColumn = joined.endColumn
        try runQuery(sql, arguments, cause: cause) { handle in
            if !repeatsRows || seen.insert(rowPlan.objectID(handle, offset: 0)).inserted {
                rows.append(handle.snapshot(rowPlan))
                for position in counted.indices { sizes.append(handle.int(countsColumn + Int32(position))) }
            }
            if readsJoins { joined.read(handle, into: &found) }
            if let countColumn, total == nil { total = Int(handle.int64(countColumn)) }
        }
        coordinator.rowCache.insert(contentsOf: rows)
        // Every row read may become a new object: the registry grows once, not through each size on the way.
        registry.reserveCapacity(registry.count + rows.count + found.seen.count)
        var retained: [ManagedObject] = []
        if !found.isEmpty {
            for (index, group) in found.byNode.enumerated() where !group.isEmpty {
                coordinator.rowCache.insert(contentsOf: group)
                retained += materialize(group, prefetchedFor: joined.nodes[index].keyPath)
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
        noteSurfaced(.rows(rows))
        let readsPartialRows = !rowPlan.readsWholeRows
        let objects = rows.map { snapshot -> ManagedObject in
            let object = object(with: snapshot.objectID)
            // Objects of chosen properties come back holding them (partial), whatever `returnsObjectsAsFaults` says.
            if !request.returnsObjectsAsFaults || readsPartialRows { object.state.offer(snapshot) }
            return object
        }
        if !counted.isEmpty {
            // The counted to-manys' slots, found by name once per entity met rather than once per row.
            var slots: (mapping: EntityMapping, indices: [Int?])?
            for (row, object) in objects.enumerated() {
                if slots?.mapping !== object.mapping {
                    slots = (object.mapping, counted.map { toMany in
                        if case .toMany(let index)? = object.mapping.slot(forKey: toMany.name) { index } else { nil }
                    })
                }
                for (position, index) in (slots?.indices ?? []).enumerated() {
                    if let index { offer(storedCount: sizes[row * counted.count + position], toMany: index, to: object) }
                }
            }
        }
        try prefetch(PrefetchNode.tree(joined.remainingKeyPaths), rows: rows, prefix: "", selection: selection, retained: &retained)
        return LoadedObjects(objects: objects, retained: retained, total: total)
    }

    /// Gives `object` the store's count of its to-many at `index`, read with its row, unless the context already
    /// holds more: the members read, or changes made to them.
    private func offer(storedCount count: Int, toMany index: Int, to object: ManagedObject) {
        guard !object.isInserted else { return }
        object.toManyStates.offerStoredCount(count, at: index)
    }

    /// Objects for rows just read, filled with them (a prefetched object is not a fault). With `keyPath`, the rows
    /// came from prefetching it: the objects this fills are remembered, untouched, for `takePrefetchUse()`.
    func materialize(_ rows: [RowSnapshot], prefetchedFor keyPath: String? = nil) -> [ManagedObject] {
        rows.map { row in
            let object = object(with: row.objectID)
            if object.state.row == nil, !object.isInserted {
                object.state.load(row)
                if let keyPath, tracksPrefetchUse {
                    object.isUntouchedPrefetch = true
                    prefetchedObjects[keyPath, default: []].append(row.objectID)
                    untouchedPrefetches.insert(row.objectID)
                }
            } else {
                object.state.offer(row)
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
    func runQuery(_ sql: String, _ arguments: [AttributeValue], cause: StatementCause, row: (borrowing RowView) throws -> Void) throws(ContextError) {
        try coordinator.reading(cause: cause, context: id) { runner in
            try runner.query(SQLStatement(sql, arguments), row: row)
        }
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
