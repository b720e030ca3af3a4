import Collections
import Foundation
import GRDB

/// Change tracking and save: pending changes become one transaction of statements; the row cache and the objects
/// are updated only after it commits, so a failed save leaves the store and the context as they were.
extension ObjectContext {
    /// Writes every change in one transaction. Throws `ContextError.optimisticLockingConflict` (writing nothing)
    /// when a row changed in the store since this context read it.
    public func save() throws(ContextError) {
        closeUndoGroup()
        // What the delete rules change in memory follows from the steps that deleted: it opens no step of its own
        // (one left open would outlive a save that then finds nothing to write).
        withoutOpeningUndoSteps { processPendingChanges() }
        // New objects deleted while their Deny relationships hold survivors: refused, as the store refuses its own.
        let denied = insertedList.filter(\.isDeletedFlag).flatMap(deniedDelete(of:))
        if !denied.isEmpty { throw .deleteDenied(denied) }
        guard hasChanges else { return }
        try validateForSave()
        let start = ContinuousClock.now
        var inserted = insertedObjects
        var temporaryIDs = inserted.map(\.objectID)
        var deleted = changedObjects.values.filter { $0.isDeleted && !$0.isInserted }
        let updated = changedObjects.values.filter { !$0.isInserted && !$0.isDeleted && $0.hasPersistentChanges }
        var statements = 0
        /// `permanentIDs[i]` is the ID `inserted[i]` gets.
        var permanentIDs: [ObjectID] = []
        var insertedSnapshots: [RowSnapshot] = []
        var updatedSnapshots: [RowSnapshot] = []
        var conflicts: [ObjectID] = []
        let policy = mergePolicy
        /// Objects a merge policy settled against the store: deletes kept back (rollback), changed rows that are gone.
        var keptBack: [ManagedObject] = []
        var allocated: [(root: Int, first: Int64, last: Int64)] = []
        var vanished: [ManagedObject] = []
        var deletion: (outcome: DeletionPlanner.Outcome, doomed: [ObjectID])?
        /// New objects the store's cascade reached through unsaved links: not inserted, deleted once committed.
        var late: [ManagedObject] = []
        // With undo on, the journal records what this save changes, so that undo can reverse it later.
        let records = undoHistory != nil
        let journal = coordinator.undoJournal
        let step = records ? journal.makeStep() : 0
        var touched: [Int] = []
        let reversals = pendingReversals
        let onlyReversals = !reversals.isEmpty && inserted.isEmpty && deleted.isEmpty && linkChanges.isEmpty
            && !changedObjects.values.contains(where: \.hasChanges)
        var reversed: [(PendingReversal, UndoJournal.Reversal)] = []
        let meter = ProgressMeter.make(for: self, onlyReversals ? (reversals.allSatisfy(\.isRedo) ? .redo : .undo) : .save)
        do {
            if records { try journal.install(on: coordinator) }
            try coordinator.write { db in
                meter?.install(on: db)
                defer { meter?.uninstall(from: db) }
                let counted = CountingRunner(coordinator: coordinator, db: db, context: id)
                counted.meter = meter
                if records { try journal.begin(step) { sql, arguments in try counted.execute(sql, arguments) } }
                // Undone saved steps first: later changes in this save apply on top of what they write back.
                for reversal in reversals {
                    let outcome = try journal.reverse(reversal.changes.step, touched: reversal.changes.tables, current: step) { sql, arguments, row in
                        try counted.query(sql, arguments, row: row)
                    }
                    if !outcome.conflicts.isEmpty {
                        conflicts = outcome.conflicts
                        throw ContextError.optimisticLockingConflict(uris: conflicts.map(coordinator.uri(for:)))
                    }
                    reversed.append((reversal, outcome))
                }
                let rewritten = reversed.isEmpty ? [] : Set(reversed.flatMap(\.1.rewritten))
                permanentIDs = try allocateKeys(for: inserted, runner: counted, allocated: &allocated)
                // Rows this save deletes, its cascades included.
                var doomed = Set<ObjectID>()
                /// The key a reference to `id` is written as: a new object's permanent one, or none for an object
                /// with no row after this save (one inserted and deleted again, or one this save deletes — a
                /// reference the delete's pass in memory did not let go of: a one-to-one, a to-one without an
                /// inverse, one set away and back).
                func resolve(_ id: ObjectID?) -> ObjectID? {
                    guard let id else { return nil }
                    if id.isTemporary { return Self.position(of: id, in: temporaryIDs).map { permanentIDs[$0] } }
                    return doomed.isEmpty || !doomed.contains(id) ? id : nil
                }
                let staleDeleted = try staleDeletes(deleted, runner: counted)
                if policy == .error {
                    conflicts += staleDeleted
                } else if policy == .rollback, !staleDeleted.isEmpty {
                    // The store's version wins: the delete is dropped, the object stays.
                    let stale = Set(staleDeleted)
                    keptBack = deleted.filter { stale.contains($0.objectID) }
                    deleted.removeAll { stale.contains($0.objectID) }
                }
                if !conflicts.isEmpty {
                    throw ContextError.optimisticLockingConflict(uris: conflicts.map(coordinator.uri(for:)))
                }
                // Deletes first, so that a value a deleted row held (a unique handle, say) is free for the rows
                // this save inserts or updates.
                var cleared = Set<ObjectID>()
                if !deleted.isEmpty {
                    var planner = DeletionPlanner(coordinator: coordinator, query: { sql, arguments, row in
                        try counted.query(sql, arguments, row: row)
                    }, execute: { sql, arguments in try counted.execute(sql, arguments) })
                    noteUnsavedUnlinks(in: &planner)
                    try planner.close(over: deleted.map(\.objectID))
                    late = try followUnsavedCascades(in: &planner)
                    noteUnsavedDenials(in: &planner, late: late)
                    if !late.isEmpty {
                        // New objects the store's cascade reached through unsaved links: they are not inserted.
                        let gone = Set(late.map(ObjectIdentifier.init))
                        let kept = inserted.indices.filter { !gone.contains(ObjectIdentifier(inserted[$0])) }
                        inserted = kept.map { inserted[$0] }
                        temporaryIDs = kept.map { temporaryIDs[$0] }
                        permanentIDs = kept.map { permanentIDs[$0] }
                    }
                    let outcome = try planner.carryOut()
                    if outcome.plan.isDenied { throw ContextError.deleteDenied(outcome.plan.denied) }
                    deletion = (outcome, planner.doomedIDs)
                    doomed = Set(planner.doomedIDs)
                    cleared = Set(outcome.clearedRows)
                }
                insertedSnapshots.reserveCapacity(inserted.count)
                for (object, permanentID) in zip(inserted, permanentIDs) {
                    insertedSnapshots.append(try insertRow(object, id: permanentID, resolve: resolve, runner: counted))
                }
                // Objects whose only changes are to-many links have no column to write (their links and positions
                // are written below): updating their row would only fire their faults. Rows the delete removed are
                // skipped; rows whose keys it cleared are one version further on.
                let survivors = doomed.isEmpty ? updated : updated.filter { !doomed.contains($0.objectID) }
                for object in survivors where !object.attributeChanges.isEmpty || !object.toOneChanges.isEmpty {
                    let versionsAhead = (cleared.contains(object.objectID) ? 1 : 0) + (rewritten.contains(object.objectID) ? 1 : 0)
                    switch try updateRow(object, versionsAhead: Int64(versionsAhead), policy: policy, resolve: resolve, runner: counted) {
                    case .written(let snapshot): updatedSnapshots.append(snapshot)
                    case .conflict: conflicts.append(object.objectID)
                    case .vanished: vanished.append(object)
                    }
                }
                if !conflicts.isEmpty {
                    throw ContextError.optimisticLockingConflict(uris: conflicts.map(coordinator.uri(for:)))
                }
                try writeLinks(resolve: resolve, runner: counted)
                try writeOrder(of: inserted, resolve: resolve, runner: counted)
                try writeOrder(of: survivors, resolve: resolve, runner: counted)
                if records { touched = try journal.end(step) { sql, arguments, row in try counted.query(sql, arguments, row: row) } }
                statements = counted.count
            }
        } catch {
            // The rows that conflicted changed in the store since they were cached (maybe by another coordinator):
            // drop them, so a refreshed object reads the row as it is now.
            for objectID in conflicts { coordinator.rowCache.remove(objectID) }
            coordinator.events.emit(.save(SaveEvent(inserted: inserted.count, updated: updated.count, deleted: deleted.count,
                                                    statements: statements, duration: ContinuousClock.now - start, succeeded: false)), context: id)
            if let error = error as? ContextError { throw error }
            throw .store(String(describing: (error as? StoreError)?.description ?? PersistentStore.sqliteMessage(error)))
        }
        for range in allocated { coordinator.noteOwnKeys(root: range.root, first: range.first, last: range.last) }
        didDeleteLate(late)
        // Built before `didSave` clears the changes it reads; posted once the context is in its saved state.
        let notification = coordinator.saveObservers.isEmpty ? nil : saveNotification(
            inserted: inserted, insertedSnapshots: insertedSnapshots,
            updated: vanished.isEmpty ? updated : updated.filter { object in !vanished.contains { $0 === object } },
            updatedSnapshots: updatedSnapshots, deleted: deleted + vanished, doomed: deletion?.doomed ?? [], cleared: deletion?.outcome.clearedRows ?? [],
            temporaryIDs: temporaryIDs, permanentIDs: permanentIDs, rewroteSavedSteps: !reversed.isEmpty)
        let written = vanished.isEmpty ? updated : updated.filter { object in !vanished.contains { $0 === object } }
        didSave(inserted: inserted, insertedSnapshots: insertedSnapshots, updated: written, updatedSnapshots: updatedSnapshots,
                deleted: deleted + vanished, temporaryIDs: temporaryIDs, permanentIDs: permanentIDs)
        for object in keptBack {
            // The cache may hold the row as this context read it, not as the other writer left it.
            coordinator.rowCache.remove(object.objectID)
            object.isDeletedFlag = false
            refresh(object, mergeChanges: false)
        }
        for object in vanished {
            object.isDeletedFlag = true
            object.faultError = .objectNotFound(uri: coordinator.uri(for: object.objectID))
        }
        var deletedObjects = records ? deleted : []
        if let deletion {
            let marked = didDelete(deletion.outcome, doomed: deletion.doomed)
            if records { deletedObjects += marked }
            lastDeletion = deletion.outcome.plan
        } else {
            lastDeletion = nil
        }
        let insertedCount = inserted.count
        inserted = []
        registerSavedObjects()
        pendingReversals.removeAll()
        if !reversed.isEmpty { deletedObjects += didReverse(reversed) }
        if records {
            let changes = touched.isEmpty ? nil : SavedChanges(step: step, tables: touched, journal: journal, deletedObjects: deletedObjects)
            recordSave(changes, reversals: reversals, onlyReversals: onlyReversals)
        }
        coordinator.events.emit(.save(SaveEvent(inserted: insertedCount, updated: updated.count, deleted: deleted.count,
                                                statements: statements, duration: ContinuousClock.now - start, succeeded: true)), context: id)
        if let notification { coordinator.saveObservers.post(notification) }
    }

    /// Discards every unsaved change: inserted objects go, edits and deletions are undone.
    public func rollback() {
        removeAllUndoActions()
        pendingReversals.removeAll()
        for object in insertedList {
            object.isDeletedFlag = true
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        for object in changedObjects.values {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.isDeletedFlag = false
        }
        insertedList.removeAll()
        clearChangedObjects()
        linkChanges.removeAll()
    }

    /// Turns an object back into a fault (dropping its changes), or with `mergeChanges` re-reads its persisted
    /// values on next access while keeping its changes.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard !object.isInserted else { return }
        object.snapshot = nil
        object.faultError = nil
        if !mergeChanges {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.isDeletedFlag = false
            stopTrackingChanges(of: object)
        } else {
            // Keep recorded link changes; reload the members themselves on next access.
            for index in object.toManyStates.keys { object.toManyStates[index]?.members = nil }
        }
    }

    /// Forgets every object and change: the context is as new.
    public func reset() {
        removeAllUndoActions()
        for object in registeredObjects {
            object.snapshot = nil
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        forgetAll()
    }

    /// Marks an object deleted; `processPendingChanges()` (run by the save) follows its delete rules in memory, and
    /// the save deletes its row and what its rules take along, set-based (see `deletionPlan(for:)`).
    public func delete(_ object: ManagedObject) {
        // An inserted object stays in `insertedList`, flagged: the save skips it and lookups no longer find it.
        // One a save or rollback let go of (a fault for its temporary ID) has nothing to delete.
        guard !object.objectID.isTemporary || object.isInsertedFlag else { return }
        // Once per object: the class may first mend what its deletion would leave stale elsewhere.
        if !object.isDeletedFlag { object.prepareForDeletion() }
        markDeleted(object)
    }

    /// Flags an object deleted, as `delete(_:)` does but without `prepareForDeletion()`: for the objects a Cascade
    /// rule takes along with one that was deleted.
    func markDeleted(_ object: ManagedObject) {
        willChange(object)
        object.isDeletedFlag = true
    }

    // MARK: statements of a save

    /// Counts the statements a save runs.
    final class CountingRunner {
        let coordinator: PersistentStoreCoordinator
        let db: Database
        let context: ContextID
        var count = 0
        /// Hears each statement's rows, when the context reports progress.
        var meter: ProgressMeter?
        /// Each entity's INSERT, prepared on first use in this save (index: entity number - 1).
        private var insertStatements: [OpaquePointer?]

        init(coordinator: PersistentStoreCoordinator, db: Database, context: ContextID) {
            self.coordinator = coordinator
            self.db = db
            self.context = context
            self.insertStatements = Array(repeating: nil, count: coordinator.model.entities.count)
        }

        func insert(_ mapping: EntityMapping, id: ObjectID, values: [AttributeValue], keys: [ObjectID?]) throws {
            count += 1
            let statement: OpaquePointer
            if let prepared = insertStatements[mapping.number - 1] {
                statement = prepared
            } else {
                statement = try db.cachedStatement(sql: mapping.insertSQL).sqliteStatement
                insertStatements[mapping.number - 1] = statement
            }
            try coordinator.insert(db, statement: statement, mapping: mapping, id: id, values: values, keys: keys, context: context)
            meter?.finished(rows: 1)
        }

        @discardableResult
        func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
            count += 1
            let changed = try coordinator.execute(db, sql: sql, arguments: arguments, cause: .save, context: context)
            meter?.finished(rows: changed)
            return changed
        }

        func query(_ sql: String, _ arguments: [AttributeValue], row: (OpaquePointer) throws -> Void) throws {
            count += 1
            let rows = try coordinator.query(db, sql: sql, arguments: arguments, cause: .save, context: context, row: row)
            meter?.finished(rows: rows)
        }
    }

    /// Reserves primary keys for new objects, one statement per root entity (`Z_MAX` is kept on roots).
    /// The permanent ID of each inserted object, in the order of `inserted`.
    private func allocateKeys(
        for inserted: [ManagedObject], runner: CountingRunner, allocated: inout [(root: Int, first: Int64, last: Int64)]
    ) throws -> [ObjectID] {
        // Positions in `inserted` by root entity, roots in order of first appearance.
        var byRoot: OrderedDictionary<Int, [Int]> = [:]
        for (position, object) in inserted.enumerated() {
            byRoot[object.mapping.rootNumber, default: []].append(position)
        }
        var result = inserted.map(\.objectID)
        for (root, positions) in byRoot {
            let count = Int64(positions.count)
            // Only a Z_MAX that is an integer key with room for `count` more moves on: SQLite would turn text into 0
            // (handing out keys already in use) and an overflowing sum into a REAL.
            var maximum: Int64?
            try runner.query("""
                UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ?1 WHERE Z_ENT = ?2 AND typeof(Z_MAX) = 'integer' \
                AND Z_MAX >= 0 AND Z_MAX <= 9223372036854775807 - ?1 RETURNING Z_MAX
                """, [.integer(count), .integer(Int64(root))]) { maximum = SQLiteValues.int64($0, 0) }
            guard let maximum else { throw try keyAllocationFailure(root: root, count: count, runner: runner) }
            var next = maximum - count
            allocated.append((root, next + 1, maximum))
            for position in positions {
                next += 1
                result[position] = ObjectID(entityNumber: inserted[position].objectID.entityNumber, primaryKey: next)
            }
        }
        return result
    }

    /// Why `Z_MAX` of a root entity cannot give out `count` more keys: its row is missing, or it holds no key.
    private func keyAllocationFailure(root: Int, count: Int64, runner: CountingRunner) throws -> ContextError {
        var recorded: String?
        try runner.query("SELECT quote(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(root))]) {
            recorded = SQLiteValues.text($0, 0)
        }
        let name = coordinator.mapping(forEntityNumber: root).name
        guard let recorded else {
            return .store("Z_PRIMARYKEY has no row for entity '\(name)' (\(root)), so no key can be given to a new one: the store is damaged")
        }
        return .store("Z_PRIMARYKEY.Z_MAX of entity '\(name)' is \(recorded.prefix(40)), which cannot give out \(count) more "
            + "key\(count == 1 ? "" : "s") (it must be a whole number from 0 with room below 9223372036854775807): the store is damaged")
    }

    private func insertRow(_ object: ManagedObject, id: ObjectID, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws -> RowSnapshot {
        // The object's own arrays become the snapshot's: nothing is copied unless a key must be made permanent.
        let values = object.newValues
        var keys = object.newKeys
        for index in keys.indices {
            // Assigned only when it changes, so that the array stays shared.
            if let key = keys[index], case let resolved = resolve(key), resolved != key { keys[index] = resolved }
        }
        try runner.insert(object.mapping, id: id, values: values, keys: keys)
        return RowSnapshot(objectID: id, version: 1, values: values, toOneKeys: keys)
    }

    enum UpdateOutcome {
        /// The row as the save left it.
        case written(RowSnapshot)
        /// The row changed since it was read, and the merge policy is `.error`.
        case conflict
        /// The row is gone from the store (and the policy is not `.error`): the object's changes are dropped.
        case vanished
    }

    /// Writes changed columns only, checking `Z_OPT`. When the row changed since it was read, the merge policy
    /// settles it against the row as it is now, read in the same transaction (see `MergePolicy`).
    private func updateRow(
        _ object: ManagedObject, versionsAhead: Int64, policy: MergePolicy, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner
    ) throws -> UpdateOutcome {
        if object.snapshot == nil { fulfillFault(object, key: "save") }
        guard let snapshot = object.snapshot else {
            return policy == .error ? .conflict : try settle(object, ancestor: nil, policy: policy, resolve: resolve, runner: runner)
        }
        // A version near Int64.max comes from a damaged row: writeRow refuses it rather than overflow.
        let (expected, overflow) = snapshot.version.addingReportingOverflow(versionsAhead)
        if overflow { throw versionExhausted(object) }
        if let written = try writeRow(object, over: snapshot, version: expected, resolve: resolve, runner: runner) {
            return .written(written)
        }
        guard policy != .error else { return .conflict }
        return try settle(object, ancestor: snapshot, policy: policy, resolve: resolve, runner: runner)
    }

    /// A conflicting row under a merge policy other than `.error`: reads the row as it is now and writes what the
    /// policy keeps of the object's changes over it.
    private func settle(
        _ object: ManagedObject, ancestor: RowSnapshot?, policy: MergePolicy, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner
    ) throws -> UpdateOutcome {
        let mapping = object.mapping
        var current: RowSnapshot?
        try runner.query(mapping.selectByPrimaryKey, [.integer(object.objectID.primaryKey)]) { handle in
            current = SQLiteValues.snapshot(handle, mapping: mapping)
        }
        guard let current else { return .vanished }
        switch policy {
        case .error:
            return .conflict
        case .rollback:
            // The store's row wins whole: the object's changes go (the save clears them).
            return .written(current)
        case .objectTrump:
            break
        case .storeTrump:
            // Changes to properties the store also changed since the ancestor give way.
            if let ancestor {
                for (index, _) in object.attributeChanges.entries where current.values[index] != ancestor.values[index] {
                    object.attributeChanges[index] = nil
                }
                for (index, _) in object.toOneChanges.entries where current.toOneKeys[index] != ancestor.toOneKeys[index] {
                    object.toOneChanges[index] = nil
                }
            }
        case .overwrite:
            // Every stored property of the object as this context holds it, derived ones aside (triggers keep them).
            let base = ancestor ?? current
            for index in mapping.attributes.indices where object.attributeChanges[index] == nil && !mapping.attributes[index].description.isDerived {
                object.attributeChanges[index] = base.values[index]
            }
            for index in mapping.toOnes.indices where object.toOneChanges[index] == nil {
                object.toOneChanges[index] = .some(base.toOneKeys[index])
            }
        }
        if object.attributeChanges.isEmpty, object.toOneChanges.isEmpty { return .written(current) }
        guard let written = try writeRow(object, over: current, version: current.version, resolve: resolve, runner: runner) else {
            return .conflict
        }
        return .written(written)
    }

    /// `UPDATE … WHERE Z_PK = ? AND Z_OPT = version` of the object's changed columns over `snapshot`; nil when no
    /// row has that version.
    private func writeRow(
        _ object: ManagedObject, over snapshot: RowSnapshot, version: Int64, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner
    ) throws -> RowSnapshot? {
        let mapping = object.mapping
        var assignments: [String] = []
        var arguments: [AttributeValue] = []
        var values = snapshot.values
        var keys = snapshot.toOneKeys
        for (index, value) in object.attributeChanges.entries {
            values[index] = value
            assignments.append("\(mapping.attributes[index].column) = ?")
            arguments.append(value)
        }
        for (index, destination) in object.toOneChanges.entries {
            let resolved = resolve(destination)
            keys[index] = resolved
            let toOne = mapping.toOnes[index]
            assignments.append("\(toOne.column) = ?")
            arguments.append(resolved.map { .integer($0.primaryKey) } ?? .null)
            if let entityColumn = toOne.entityColumn {
                assignments.append("\(entityColumn) = ?")
                arguments.append(resolved.map { .integer(Int64($0.entityNumber)) } ?? .null)
            }
        }
        guard !assignments.isEmpty else { return snapshot }
        // The next version must fit: SQLite would make Z_OPT + 1 a REAL past Int64.max.
        guard version < Int64.max else { throw versionExhausted(object) }
        let sql = "UPDATE \(mapping.table) SET Z_OPT = Z_OPT + 1, \(assignments.joined(separator: ", ")) WHERE Z_PK = ? AND Z_OPT = ?"
        let changed = try runner.execute(sql, arguments + [.integer(object.objectID.primaryKey), .integer(version)])
        guard changed == 1 else { return nil }
        return RowSnapshot(objectID: object.objectID, version: version + 1, values: values, toOneKeys: keys)
    }

    /// A row whose `Z_OPT` is at Int64.max: it has no next version to write, so it cannot be updated.
    private func versionExhausted(_ object: ManagedObject) -> ContextError {
        .store("\(coordinator.uri(for: object.objectID)): Z_OPT is at its largest value (\(Int64.max)), so the row cannot "
            + "be updated: the store is damaged")
    }

    /// Objects being deleted whose rows changed (or went) since this context read them: optimistic locking, one
    /// query per table. Objects deleted as faults were never read and are not checked.
    private func staleDeletes(_ deleted: [ManagedObject], runner: CountingRunner) throws -> [ObjectID] {
        var byTable: [Int: [Int64: Int64]] = [:]
        for object in deleted {
            if let snapshot = object.snapshot { byTable[object.mapping.rootNumber, default: [:]][object.objectID.primaryKey] = snapshot.version }
        }
        var stale: [ObjectID] = []
        for (root, versions) in byTable.sorted(by: { $0.key < $1.key }) {
            var expected = versions
            let table = coordinator.mapping(forEntityNumber: root).table
            try runner.query("SELECT Z_PK, Z_OPT FROM \(table) WHERE Z_PK \(DeletionPlanner.inKeys)", [DeletionPlanner.json(expected.keys.sorted())]) { handle in
                let key = SQLiteValues.int64(handle, 0)
                if expected[key] == SQLiteValues.int64(handle, 1) { expected[key] = nil }
            }
            stale += deleted.filter { $0.snapshot != nil && $0.mapping.rootNumber == root && expected[$0.objectID.primaryKey] != nil }.map(\.objectID)
        }
        return stale
    }

    /// Writes the join-table links recorded; links of rows with no key after the save (deleted by it, or inserted
    /// and deleted again) are not written.
    private func writeLinks(resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws {
        for (link, adding) in linkChanges {
            guard let table = coordinator.store.schema.joinTables.first(where: { $0.name == link.table }),
                  let first = resolve(link.first)?.primaryKey, let second = resolve(link.second)?.primaryKey else { continue }
            let (a, b) = (table.primaryKey[0], table.primaryKey[1])
            if adding {
                try runner.execute("INSERT OR IGNORE INTO \(table.name) (\(a), \(b)) VALUES (?, ?)", [.integer(first), .integer(second)])
            } else {
                try runner.execute("DELETE FROM \(table.name) WHERE \(a) = ? AND \(b) = ?", [.integer(first), .integer(second)])
            }
        }
    }

    /// Writes positions of ordered to-manys that changed: all members when loaded, appended ones otherwise.
    private func writeOrder(of objects: [ManagedObject], resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws {
        for object in objects where !object.toManyStates.isEmpty {
            for (index, state) in object.toManyStates where state.reordered {
                let toMany = object.mapping.toManys[index]
                // cannot fail: `objects` are inserted or surviving updated objects, which all have a key after the save.
                let owner = AttributeValue.integer(resolve(object.objectID)!.primaryKey)
                let ordered = state.members ?? state.addedOnce
                let appendOnly = state.members == nil
                for (position, member) in ordered.enumerated() {
                    guard let resolved = resolve(member) else { continue }
                    let memberKey = AttributeValue.integer(resolved.primaryKey)
                    switch toMany.storage {
                    case .inverseForeignKey(let table, let column, let orderColumn?):
                        if appendOnly {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) WHERE \(column) = ?) WHERE Z_PK = ?", [owner, memberKey])
                        } else {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = ? WHERE Z_PK = ?", [.integer(Int64(position + 1)), memberKey])
                        }
                    case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn?, _):
                        if appendOnly {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) WHERE \(sourceColumn) = ?) WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?", [owner, owner, memberKey])
                        } else {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = ? WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?", [.integer(Int64(position + 1)), owner, memberKey])
                        }
                    default:
                        break
                    }
                }
            }
        }
    }

    /// After commit: new IDs, fresh snapshots in objects and the row cache, changes cleared; objects whose derived
    /// values the triggers recomputed become faults so they read the new values.
    private func didSave(inserted: [ManagedObject], insertedSnapshots: [RowSnapshot], updated: [ManagedObject],
                         updatedSnapshots: [RowSnapshot], deleted: [ManagedObject], temporaryIDs: [ObjectID], permanentIDs: [ObjectID]) {
        // Links to new objects may name their temporary IDs. Only changed objects can hold such links (a link is a
        // change), and every changed object is inserted or in `changedObjects`: make them permanent there.
        func permanent(_ id: ObjectID) -> ObjectID {
            guard id.isTemporary, let position = Self.position(of: id, in: temporaryIDs) else { return id }
            return permanentIDs[position]
        }
        func makePermanent(_ object: ManagedObject) {
            guard !permanentIDs.isEmpty else { return }
            if !object.toOneChanges.isEmpty { object.toOneChanges.updateValues { $0.map(permanent) } }
            // Only loaded members need it: every `added` list is cleared below, the changes being saved.
            for (index, state) in object.toManyStates where state.members != nil {
                object.toManyStates[index]?.members = state.members?.map(permanent)
            }
        }
        var stale: [ManagedObject] = []
        /// Saved changes are no longer changes; derived values come from the store's triggers (a changed link may
        /// have moved a count), so an object that has any re-reads them on next access.
        func clearChanges(_ object: ManagedObject) {
            if object.mapping.hasDerivedAttributes { stale.append(object) }
            if !object.toManyStates.isEmpty, object.toManyStates.values.contains(where: \.hasChanges) {
                for (index, state) in object.toManyStates {
                    object.toManyStates[index] = ToManyState(members: state.members)
                }
            }
        }
        for object in changedObjects.values where !object.toOneChanges.isEmpty || !object.toManyStates.isEmpty {
            makePermanent(object)
        }
        // One pass over the new objects (they may be many): their own changes live in `newValues` and `newKeys`,
        // now handed to their snapshots.
        for (position, object) in inserted.enumerated() {
            if !object.toManyStates.isEmpty { makePermanent(object) }
            object.objectID = insertedSnapshots[position].objectID
            object.isInsertedFlag = false
            object.newValues = []
            object.newKeys = []
            object.newValuesSet = 0
            object.snapshot = insertedSnapshots[position]
            clearChanges(object)
        }
        let updatedByID = Dictionary(uniqueKeysWithValues: updatedSnapshots.map { ($0.objectID, $0) })
        for object in updated {
            if let snapshot = updatedByID[object.objectID] { object.snapshot = snapshot }
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            clearChanges(object)
        }
        coordinator.rowCache.insert(contentsOf: insertedSnapshots)
        coordinator.rowCache.insert(contentsOf: updatedSnapshots)
        for object in deleted {
            coordinator.rowCache.remove(object.objectID)
            unregister(object.objectID)
        }
        for object in stale {
            coordinator.rowCache.remove(object.objectID)
            object.snapshot = nil
        }
        clearChangedObjects()
        linkChanges.removeAll()
    }

    /// Moves the objects a save just inserted from `insertedList` to the registry, where they are held weakly like
    /// any unchanged object. One that nothing else references would be released at once, so it is not registered
    /// at all: saving many new objects nobody kept costs no registry traffic. (The caller drops its own list of
    /// them first, so the test of unique reference sees only references held outside the context.)
    private func registerSavedObjects() {
        for index in insertedList.indices where !insertedList[index].isInsertedFlag {
            if !isKnownUniquelyReferenced(&insertedList[index]) { register(insertedList[index]) }
        }
        insertedList.removeAll()
    }
}
