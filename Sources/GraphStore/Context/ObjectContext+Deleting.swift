/// Delete rules: the preview of a delete, the in-memory side of cascades, and the set-based delete a save runs.
extension ObjectContext {
    /// What deleting `objects` would take with it, from the store as it is, without changing anything: per entity
    /// the objects that go, per relationship the references surviving objects lose, and any Deny blockers. The
    /// queries read keys and counts only. (Unsaved objects are not in the store and are not counted.)
    public func deletionPlan(for objects: [ManagedObject]) throws(ContextError) -> DeletionPlan {
        let roots = objects.filter { !$0.isInserted }.map(\.objectID)
        let coordinator = self.coordinator
        let contextID = id
        do {
            return try coordinator.read { db in
                var planner = DeletionPlanner(coordinator: coordinator) { sql, arguments, row in
                    try coordinator.query(db, sql: sql, arguments: arguments, cause: .other("deletion plan"), context: contextID, row: row)
                }
                return try planner.preview(roots)
            }
        } catch {
            throw .store(PersistentStore.sqliteMessage(error))
        }
    }

    /// Applies Cascade and Nullify rules to what the context holds in memory: objects known to be in a deleted
    /// object's cascading relationships are marked deleted too (so `isDeleted` is true before the save, as in Core
    /// Data), and unsaved objects that point at a deleted one through a Nullify relationship let go of it. The
    /// store's side — rows never loaded — is planned and deleted set-based by the save.
    public func processPendingChanges() {
        var queue = insertedList.filter(\.isDeletedFlag) + changedObjects.values.filter(\.isDeletedFlag)
        var seen = Set(queue.map(ObjectIdentifier.init))
        func enqueue(_ object: ManagedObject) {
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            if !object.isDeletedFlag { delete(object) }
            queue.append(object)
        }
        while let object = queue.popLast() {
            let mapping = object.mapping
            for (index, toMany) in mapping.toManys.enumerated() {
                guard let state = object.toManyStates[index] else { continue }
                switch toMany.description.deleteRule {
                case .cascade:
                    for member in state.members ?? state.addedOnce { enqueue(self.object(with: member)) }
                case .nullify:
                    // New members point at the deleted object through their to-one: let go (their rows are written
                    // by this save, so the store never sees the link).
                    guard let inverse = toMany.inverse else { continue }
                    for member in state.addedOnce {
                        let other = self.object(with: member)
                        guard !other.isDeletedFlag, case .toOne(let inverseIndex)? = other.mapping.slot(forKey: inverse),
                              other.destinationID(ofToOne: inverseIndex) == object.objectID else { continue }
                        setToOne(other, index: inverseIndex, to: nil, maintainInverse: false)
                    }
                default:
                    continue
                }
            }
            for (index, toOne) in mapping.toOnes.enumerated() where toOne.description.deleteRule == .cascade {
                if let destination = object.destinationID(ofToOne: index) { enqueue(self.object(with: destination)) }
            }
        }
    }

    /// After a save's set-based delete: every deleted object this context holds is marked deleted and forgotten,
    /// rows whose keys were cleared are read again on next access, and loaded to-manys drop deleted members.
    @discardableResult
    func didDelete(_ outcome: DeletionPlanner.Outcome, doomed: [ObjectID]) -> [ManagedObject] {
        coordinator.rowCache.remove(contentsOf: doomed)
        coordinator.rowCache.remove(contentsOf: outcome.clearedRows)
        let gone = Set(doomed)
        var marked: [ManagedObject] = []
        for id in doomed {
            guard let object = registry[id]?.object else { continue }
            object.isDeletedFlag = true
            unregister(id)
            marked.append(object)
        }
        for id in outcome.clearedRows {
            guard let object = registry[id]?.object, !object.hasChanges else { continue }
            object.snapshot = nil
        }
        for entry in registry.values where !entry.object.toManyStates.isEmpty {
            let object = entry.object
            for index in object.toManyStates.keys {
                if let members = object.toManyStates[index]?.members, members.contains(where: gone.contains) {
                    object.toManyStates[index]?.members = members.filter { !gone.contains($0) }
                }
            }
        }
        return marked
    }

    /// After a save that wrote back undone steps: rows it removed take their objects with them (returned, so that a
    /// redo can bring the same objects back), objects of rows it restored live again, and every object re-reads its
    /// row (the write-back changed rows set-based, and derived values with them; the shared row cache is emptied).
    func didReverse(_ reversed: [(PendingReversal, UndoJournal.Reversal)]) -> [ManagedObject] {
        var removed: [ManagedObject] = []
        for (reversal, outcome) in reversed {
            for id in outcome.removed {
                guard let object = registry[id]?.object else { continue }
                object.isDeletedFlag = true
                unregister(id)
                removed.append(object)
            }
            let restored = Set(outcome.restored)
            for object in reversal.changes.deletedObjects where restored.contains(object.objectID) {
                object.isDeletedFlag = false
                object.faultError = nil
                if registry[object.objectID] == nil { register(object) }
            }
        }
        coordinator.rowCache.removeAll()
        for entry in registry.values {
            entry.object.snapshot = nil
            entry.object.toManyStates.removeAll()
        }
        return removed
    }
}
