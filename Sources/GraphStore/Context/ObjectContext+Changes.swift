/// Change tracking outside a save: discarding changes, turning objects back into faults, deleting.
extension ObjectContext {
    /// Discards every unsaved change: inserted objects go, edits and deletions are undone.
    public func rollback() {
        removeAllUndoActions()
        pendingReversals.removeAll()
        for object in insertedList {
            object.state.markDeleted()
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        for object in changedObjects.values {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.state.markDeleted(false)
        }
        insertedList.removeAll()
        clearChangedObjects()
        linkChanges.removeAll()
    }

    /// Turns an object back into a fault (dropping its changes), or with `mergeChanges` re-reads its persisted
    /// values on next access while keeping its changes.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard !object.isInserted else { return }
        object.state.refault()
        if !mergeChanges {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.state.markDeleted(false)
            stopTrackingChanges(of: object)
        } else {
            // Keep recorded link changes; reload the members themselves on next access.
            for index in object.toManyStates.keys { object.toManyStates[index]?.forgetMembers() }
        }
    }

    /// Forgets every object and change: the context is as new.
    public func reset() {
        removeAllUndoActions()
        for object in registeredObjects {
            object.state.forgetRow()
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
        guard !object.objectID.isTemporary || object.state.isInserted else { return }
        // Once per object: the class may first mend what its deletion would leave stale elsewhere.
        if !object.state.isDeleted { object.prepareForDeletion() }
        markDeleted(object)
    }

    /// Flags an object deleted, as `delete(_:)` does but without `prepareForDeletion()`: for the objects a Cascade
    /// rule takes along with one that was deleted.
    func markDeleted(_ object: ManagedObject) {
        willChange(object)
        object.state.markDeleted()
    }
}
