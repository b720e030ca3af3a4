import Collections
import Foundation

/// Turns a `SavePlan` into statements in one write transaction, in this order: reversals of undone saved steps,
/// key allocation, the optimistic-locking check of deletes, the set-based delete, inserts, updates (settled by the
/// merge policy), links and orders. Any conflict or failure throws, and the transaction rolls back.
struct SaveExecutor {
    let context: ObjectContext
    var plan: SavePlan
    var outcome = SaveOutcome()
    private var coordinator: PersistentStoreCoordinator { context.coordinator }

    init(context: ObjectContext, plan: SavePlan) {
        self.context = context
        self.plan = plan
    }

    /// Runs the transaction. On failure the rows that conflicted leave the row cache (they changed in the store
    /// since they were cached), a failed save event is reported, and the error is thrown.
    mutating func run(meter: ProgressMeter?) throws(ContextError) {
        let start = ContinuousClock.now
        let journal = coordinator.undoJournal
        do throws(ContextError) {
            if plan.journalStep != nil {
                do { try journal.install(on: coordinator) } catch { throw ContextError.from(error, busyTimeout: coordinator.store.busyTimeout) }
            }
            try coordinator.writing(cause: .save, context: context.id, meter: meter) { runner in
                defer { outcome.statements = runner.count }
                try write(runner)
            }
        } catch {
            for objectID in outcome.conflicts { coordinator.rowCache.remove(objectID) }
            coordinator.events.emit(.save(SaveEvent(inserted: plan.inserted.count, updated: plan.updated.count, deleted: plan.deleted.count,
                                                    statements: outcome.statements, duration: ContinuousClock.now - start, succeeded: false)),
                                    context: context.id)
            throw error
        }
    }

    private mutating func write(_ runner: StatementRunner) throws {
        let journal = coordinator.undoJournal
        if let step = plan.journalStep { try journal.begin(step, runner: runner) }
        // Undone saved steps first: later changes in this save apply on top of what they write back.
        for reversal in plan.reversals {
            let reversed = try journal.reverse(reversal.changes.step, touched: reversal.changes.tables, current: plan.journalStep ?? 0, runner: runner)
            if !reversed.conflicts.isEmpty {
                outcome.conflicts = reversed.conflicts
                throw conflict()
            }
            outcome.reversed.append((reversal, reversed))
        }
        outcome.permanentIDs = try allocateKeys(runner)
        let deleted = try checkDeletes(runner)
        // Deletes first, so that a value a deleted row held (a unique handle, say) is free for the rows this save
        // inserts or updates.
        var doomed = Set<ObjectID>()
        var cleared = Set<ObjectID>()
        if !deleted.isEmpty {
            let deletion = try context.carryOutDeletion(of: deleted, runner: runner)
            if !deletion.late.isEmpty { plan.dropInserted(deletion.late, permanentIDs: &outcome.permanentIDs) }
            outcome.late = deletion.late
            outcome.deletion = (deletion.outcome, deletion.doomed)
            doomed = Set(deletion.doomed)
            cleared = Set(deletion.outcome.clearedRows)
        }
        let resolver = KeyResolver(temporaryIDs: plan.temporaryIDs, permanentIDs: outcome.permanentIDs, doomed: doomed)
        outcome.insertedSnapshots.reserveCapacity(plan.inserted.count)
        for (object, permanentID) in zip(plan.inserted, outcome.permanentIDs) {
            outcome.insertedSnapshots.append(try insertRow(object, id: permanentID, resolver: resolver, runner: runner))
        }
        // Objects whose only changes are to-many links have no column to write (their links and positions are
        // written below): updating their row would only fire their faults. Rows the delete removed are skipped;
        // rows whose keys it cleared, or that a reversal rewrote, are one version further on each.
        let rewritten = outcome.reversed.isEmpty ? [] : Set(outcome.reversed.flatMap(\.1.rewritten))
        let survivors = doomed.isEmpty ? plan.updated : plan.updated.filter { !doomed.contains($0.objectID) }
        let updates = RowUpdates(context: context, policy: plan.mergePolicy, resolver: resolver, runner: runner)
        for object in survivors where !object.attributeChanges.isEmpty || !object.toOneChanges.isEmpty {
            let versionsAhead = (cleared.contains(object.objectID) ? 1 : 0) + (rewritten.contains(object.objectID) ? 1 : 0)
            switch try updates.update(object, versionsAhead: Int64(versionsAhead)) {
            case .written(let snapshot): outcome.updatedSnapshots.append(snapshot)
            case .conflict: outcome.conflicts.append(object.objectID)
            case .vanished: outcome.vanished.append(object)
            }
        }
        if !outcome.conflicts.isEmpty { throw conflict() }
        try writeLinks(resolver: resolver, runner: runner)
        try writeOrder(of: plan.inserted, resolver: resolver, runner: runner)
        try writeOrder(of: survivors, resolver: resolver, runner: runner)
        // What the delete's Nullify rules left, now that the save's own writes are in: Core Data validates the
        // objects they changed and refuses the save.
        if let shortfalls = outcome.deletion?.outcome.shortfalls, !shortfalls.isEmpty {
            let failures = try shortfalls.failures(coordinator: coordinator, runner: runner)
            if !failures.isEmpty { throw ContextError.validation(failures) }
        }
        if let step = plan.journalStep { outcome.touched = try journal.end(step, runner: runner) }
    }

    private func conflict() -> ContextError {
        .optimisticLockingConflict(uris: outcome.conflicts.map(coordinator.uri(for:)))
    }

    /// The deletes to carry out once the merge policy has settled those whose rows changed since read: `.error`
    /// fails the save on them, `.rollback` keeps them back.
    private mutating func checkDeletes(_ runner: StatementRunner) throws -> [ManagedObject] {
        var deleted = plan.deleted
        let stale = try staleDeletes(deleted, runner: runner)
        if plan.mergePolicy == .error {
            outcome.conflicts += stale
        } else if plan.mergePolicy == .rollback, !stale.isEmpty {
            let staleIDs = Set(stale)
            outcome.keptBack = deleted.filter { staleIDs.contains($0.objectID) }
            deleted.removeAll { staleIDs.contains($0.objectID) }
        }
        if !outcome.conflicts.isEmpty { throw conflict() }
        return deleted
    }

    /// Objects being deleted whose rows changed (or went) since this context read them: optimistic locking, one
    /// query per table. Objects deleted as faults were never read and are not checked.
    private func staleDeletes(_ deleted: [ManagedObject], runner: StatementRunner) throws -> [ObjectID] {
        var byTable: [Int: [Int64: Int64]] = [:]
        for object in deleted {
            if let snapshot = object.snapshot { byTable[object.mapping.rootNumber, default: [:]][object.objectID.primaryKey] = snapshot.version }
        }
        var stale: [ObjectID] = []
        for (root, versions) in byTable.sorted(by: { $0.key < $1.key }) {
            var expected = versions
            let table = coordinator.mapping(forEntityNumber: root).table
            try runner.query(MappingSQL.versions(of: table, keys: expected.keys.sorted())) { row in
                let key = row.int64(0)
                if expected[key] == row.int64(1) { expected[key] = nil }
            }
            stale += deleted.filter { $0.snapshot != nil && $0.mapping.rootNumber == root && expected[$0.objectID.primaryKey] != nil }.map(\.objectID)
        }
        return stale
    }

    // MARK: keys

    /// Reserves primary keys for new objects, one statement per root entity (`Z_MAX` is kept on roots): the
    /// permanent ID of each inserted object, in the order of `plan.inserted`.
    private mutating func allocateKeys(_ runner: StatementRunner) throws -> [ObjectID] {
        // Positions in `inserted` by root entity, roots in order of first appearance.
        var byRoot: OrderedDictionary<Int, [Int]> = [:]
        for (position, object) in plan.inserted.enumerated() {
            byRoot[object.mapping.rootNumber, default: []].append(position)
        }
        var result = plan.temporaryIDs
        for (root, positions) in byRoot {
            let count = Int64(positions.count)
            guard let maximum = try runner.scalar(MappingSQL.allocateKeys(root: root, count: count)) else {
                throw try keyAllocationFailure(root: root, count: count, runner: runner)
            }
            var next = maximum - count
            outcome.allocated.append((root, next + 1, maximum))
            for position in positions {
                next += 1
                result[position] = ObjectID(entityNumber: plan.temporaryIDs[position].entityNumber, primaryKey: next)
            }
        }
        return result
    }

    /// Why `Z_MAX` of a root entity cannot give out `count` more keys: its row is missing, or it holds no key.
    private func keyAllocationFailure(root: Int, count: Int64, runner: StatementRunner) throws -> ContextError {
        var recorded: String?
        try runner.query(MappingSQL.recordedMaximumKey(root: root)) { row in recorded = row.text(0) }
        let name = coordinator.mapping(forEntityNumber: root).name
        guard let recorded else {
            return .damaged("Z_PRIMARYKEY has no row for entity '\(name)' (\(root)), so no key can be given to a new one: the store is damaged")
        }
        return .damaged("Z_PRIMARYKEY.Z_MAX of entity '\(name)' is \(recorded.prefix(40)), which cannot give out \(count) more "
            + "key\(count == 1 ? "" : "s") (it must be a whole number from 0 with room below 9223372036854775807): the store is damaged")
    }

    // MARK: rows, links, order

    private func insertRow(_ object: ManagedObject, id: ObjectID, resolver: KeyResolver, runner: StatementRunner) throws -> RowSnapshot {
        // The object's own row becomes the snapshot: nothing is copied, unless a key names an object this save
        // inserts. Such keys are made permanent in a copy, so that should the save fail, the object keeps the
        // temporary keys its destinations still have.
        let mapping = object.mapping
        var resolved: NewRow?
        for index in 0..<mapping.toOnes.count {
            guard let key = object.newKey(at: index), case let permanent = resolver.resolve(key), permanent != key else { continue }
            if resolved == nil { resolved = object.newRow }
            resolved?.setKey(permanent, at: index)
        }
        let snapshot: RowSnapshot? = if var resolved { resolved.snapshot(as: id) } else { object.newRowSnapshot(as: id) }
        guard let row = snapshot else { preconditionFailure("an inserted object without its new row") }
        try runner.insert(mapping, id: id, row: row)
        return row
    }

    /// Writes the join-table links recorded; links of rows with no key after the save (deleted by it, or inserted
    /// and deleted again) are not written.
    private func writeLinks(resolver: KeyResolver, runner: StatementRunner) throws {
        for (link, adding) in plan.links {
            guard let table = coordinator.store.schema.joinTables.first(where: { $0.name == link.table }),
                  let first = resolver.resolve(link.first)?.primaryKey, let second = resolver.resolve(link.second)?.primaryKey else { continue }
            try runner.execute(MappingSQL.link(table, first, second, present: adding))
        }
    }

    /// Writes positions of ordered to-manys that changed: all members when loaded, appended ones otherwise.
    private func writeOrder(of objects: [ManagedObject], resolver: KeyResolver, runner: StatementRunner) throws {
        for object in objects where !object.toManyStates.isEmpty {
            for (index, state) in object.toManyStates where state.reordered {
                // Every object here (inserted, or a surviving updated one) has a key after the save.
                guard let owner = resolver.resolve(object.objectID)?.primaryKey else { continue }
                let toMany = object.mapping.toManys[index]
                let appendOnly = state.members == nil
                for (position, member) in (state.members ?? state.addedOnce).enumerated() {
                    guard let memberKey = resolver.resolve(member)?.primaryKey,
                          let statement = MappingSQL.order(of: toMany, owner: owner, member: memberKey, position: appendOnly ? nil : position + 1)
                    else { continue }
                    try runner.execute(statement)
                }
            }
        }
    }
}

/// The key a reference is written as during a save: a new object's permanent one, or none for an object with no
/// row after the save (one inserted and deleted again, or one the save deletes — a reference the delete's pass in
/// memory did not let go of: a one-to-one, a to-one without an inverse, one set away and back).
struct KeyResolver {
    let temporaryIDs: [ObjectID]
    let permanentIDs: [ObjectID]
    let doomed: Set<ObjectID>

    func resolve(_ id: ObjectID?) -> ObjectID? {
        guard let id else { return nil }
        if id.isTemporary { return ObjectContext.position(of: id, in: temporaryIDs).map { permanentIDs[$0] } }
        return doomed.isEmpty || !doomed.contains(id) ? id : nil
    }
}
