import Foundation

/// Saving: pending changes become a `SavePlan`, the plan one transaction of statements (`SaveExecutor`), and only
/// after it commits are the row cache, the objects and the undo history brought up to date from the plan and what
/// its statements found. A failed save leaves the store and the context as they were.
extension ObjectContext {
    /// Writes every change in one transaction. Throws `ContextError.optimisticLockingConflict` (writing nothing)
    /// when a row changed in the store since this context read it.
    public func save() throws(ContextError) {
        guard let plan = try SavePlan(preparing: self) else { return }
        let start = ContinuousClock.now
        let meter = ProgressMeter.make(for: self, plan.work)
        // The executor holds the only plan from here: the bookkeeping lets go of its new objects before registering them.
        var executor = SaveExecutor(context: self, plan: consume plan)
        try executor.run(meter: meter)
        didCommit(&executor.plan, executor.outcome, since: start)
    }

    /// The bookkeeping after a save commits, in this order: keys noted as this process's own, the save notification
    /// built, objects given their permanent IDs and snapshots, the merge policy's outcomes applied, the delete's
    /// effects marked, saved objects registered, the undo history told, the event reported, the notification posted.
    private func didCommit(_ plan: inout SavePlan, _ outcome: SaveOutcome, since start: ContinuousClock.Instant) {
        for range in outcome.allocated { coordinator.noteOwnKeys(root: range.root, first: range.first, last: range.last) }
        didDeleteLate(outcome.late)
        let vanished = outcome.vanished
        let deleted = plan.deleted.filter { object in !outcome.keptBack.contains { $0 === object } }
        let written = vanished.isEmpty ? plan.updated : plan.updated.filter { object in !vanished.contains { $0 === object } }
        // Built before `didSave` clears the changes it reads; posted once the context is in its saved state.
        let notification = coordinator.saveObservers.isEmpty ? nil : saveNotification(
            inserted: plan.inserted, insertedSnapshots: outcome.insertedSnapshots, updated: written,
            updatedSnapshots: outcome.updatedSnapshots, deleted: deleted + vanished, doomed: outcome.deletion?.doomed ?? [],
            cleared: outcome.deletion?.outcome.clearedRows ?? [], temporaryIDs: plan.temporaryIDs, permanentIDs: outcome.permanentIDs,
            rewroteSavedSteps: !outcome.reversed.isEmpty)
        didSave(plan, outcome, written: written, deleted: deleted + vanished)
        for object in outcome.keptBack {
            // The cache may hold the row as this context read it, not as the other writer left it.
            coordinator.rowCache.remove(object.objectID)
            object.state.markDeleted(false)
            refresh(object, mergeChanges: false)
        }
        for object in vanished {
            object.state.markDeleted()
            object.state.fail(.objectNotFound(uri: coordinator.uri(for: object.objectID)))
        }
        let records = plan.journalStep != nil
        var deletedObjects = records ? deleted : []
        if let deletion = outcome.deletion {
            let marked = didDelete(deletion.outcome, doomed: deletion.doomed)
            if records { deletedObjects += marked }
            lastDeletion = deletion.outcome.plan
        } else {
            lastDeletion = nil
        }
        let insertedCount = plan.inserted.count
        plan.inserted = []
        registerSavedObjects()
        pendingReversals.removeAll()
        if !outcome.reversed.isEmpty { deletedObjects += didReverse(outcome.reversed) }
        if let step = plan.journalStep {
            let changes = outcome.touched.isEmpty ? nil
                : SavedChanges(step: step, tables: outcome.touched, journal: coordinator.undoJournal, deletedObjects: deletedObjects)
            recordSave(changes, reversals: plan.reversals, onlyReversals: plan.onlyReversals)
        }
        coordinator.events.emit(.save(SaveEvent(inserted: insertedCount, updated: plan.updated.count, deleted: deleted.count,
                                                statements: outcome.statements, duration: ContinuousClock.now - start, succeeded: true)), context: id)
        if let notification { coordinator.saveObservers.post(notification) }
    }

    /// After commit: new IDs, fresh snapshots in objects and the row cache, changes cleared; objects whose derived
    /// values the triggers recomputed become faults so they read the new values.
    private func didSave(_ plan: SavePlan, _ outcome: SaveOutcome, written updated: [ManagedObject], deleted: [ManagedObject]) {
        let temporaryIDs = plan.temporaryIDs
        let permanentIDs = outcome.permanentIDs
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
        // One pass over the new objects (they may be many): their own changes live in `newRow`,
        // now handed to their snapshots.
        for (position, object) in plan.inserted.enumerated() {
            if !object.toManyStates.isEmpty { makePermanent(object) }
            object.didInsert(as: outcome.insertedSnapshots[position])
            clearChanges(object)
        }
        let updatedByID = Dictionary(uniqueKeysWithValues: outcome.updatedSnapshots.map { ($0.objectID, $0) })
        for object in updated {
            if let snapshot = updatedByID[object.objectID] { object.state.load(snapshot) }
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            clearChanges(object)
        }
        coordinator.rowCache.insert(contentsOf: outcome.insertedSnapshots)
        coordinator.rowCache.insert(contentsOf: outcome.updatedSnapshots)
        for object in deleted {
            coordinator.rowCache.remove(object.objectID)
            unregister(object.objectID)
        }
        for object in stale {
            coordinator.rowCache.remove(object.objectID)
            object.state.forgetRow()
        }
        clearChangedObjects()
        linkChanges.removeAll()
    }

    /// Moves the objects a save just inserted from `insertedList` to the registry, where they are held weakly like
    /// any unchanged object. One that nothing else references would be released at once, so it is not registered
    /// at all: saving many new objects nobody kept costs no registry traffic. (The plan, which also holds them, is
    /// gone by now, so the test of unique reference sees only references held outside the context.)
    private func registerSavedObjects() {
        for index in insertedList.indices where !insertedList[index].state.isInserted {
            if !isKnownUniquelyReferenced(&insertedList[index]) { register(insertedList[index]) }
        }
        insertedList.removeAll()
    }
}
