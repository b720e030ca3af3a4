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
        letGo(of: insertedList.filter(\.isDeletedFlag))
    }

    /// Objects inserted and deleted again since the last save never reach the store: the objects in memory that
    /// relate to them let go of them (loaded and recorded to-many members, to-ones back), and their pending
    /// join-table links are dropped, so that nothing lists them or saves their temporary keys. Each object changed is
    /// tracked as changed first, so that undo puts it back.
    func letGo(of gone: [ManagedObject]) {
        guard !gone.isEmpty else { return }
        for object in gone {
            let mapping = object.mapping
            for (index, toOne) in mapping.toOnes.enumerated() {
                guard let inverse = toOne.inverse, let destination = object.destinationID(ofToOne: index),
                      let partner = loadedObject(destination) else { continue }
                forget(object.objectID, in: partner, key: inverse)
            }
            for (index, toMany) in mapping.toManys.enumerated() {
                guard let inverse = toMany.inverse, let state = object.toManyStates[index] else { continue }
                for member in state.members ?? state.addedOnce {
                    if let partner = loadedObject(member) { forget(object.objectID, in: partner, key: inverse) }
                }
            }
        }
        guard !linkChanges.isEmpty else { return }
        let ids = Set(gone.map(\.objectID))
        linkChanges.removeAll { ids.contains($0.key.first) || ids.contains($0.key.second) }
    }

    /// An object this context holds with state of its own (inserted, or registered), without making a fault.
    private func loadedObject(_ id: ObjectID) -> ManagedObject? {
        if id.isTemporary { return Self.position(of: id, in: insertedList).map { insertedList[$0] } }
        return registry[id]?.object
    }

    /// Removes `id` from `partner`'s relationship `key`: from its to-many's members and additions, or from its to-one.
    private func forget(_ id: ObjectID, in partner: ManagedObject, key: String) {
        switch partner.mapping.slot(forKey: key) {
        case .toMany(let index)?:
            guard let state = partner.toManyStates[index], state.added.contains(id) || state.members?.contains(id) == true else { return }
            willChange(partner)
            partner.toManyStates[index]!.added.removeAll { $0 == id }
            partner.toManyStates[index]!.members?.removeAll { $0 == id }
        case .toOne(let index)?:
            guard partner.destinationID(ofToOne: index) == id else { return }
            setToOne(partner, index: index, to: nil, maintainInverse: false)
        default:
            break
        }
    }

    /// Tells the planner which stored links the unsaved changes removed, both ways: a to-one set to another
    /// object (or none) lets go of the one it saved, and a to-many lets go of the members it removed (and did not
    /// add again). Only stored rows count; new objects have no stored links.
    func noteUnsavedUnlinks(in planner: inout DeletionPlanner) {
        for object in changedObjects.values where !object.isInsertedFlag && object.hasPersistentChanges {
            let mapping = object.mapping
            for (index, destination) in object.toOneChanges.entries {
                guard let saved = object.snapshot?.toOneKeys[index], saved != destination else { continue }
                let toOne = mapping.toOnes[index]
                planner.noteUnlinked(object.objectID, toOne.name, saved)
                if let inverse = toOne.inverse { planner.noteUnlinked(saved, inverse, object.objectID) }
            }
            for (index, state) in object.toManyStates where !state.removed.isEmpty {
                let toMany = mapping.toManys[index]
                let readded = Set(state.added)
                for member in state.removed where !member.isTemporary && !readded.contains(member) {
                    planner.noteUnlinked(object.objectID, toMany.name, member)
                    if let inverse = toMany.inverse { planner.noteUnlinked(member, inverse, object.objectID) }
                }
            }
        }
    }

    /// Follows Cascade rules through links the unsaved changes made (a to-one set, a member added) from rows the
    /// store's cascade reached: their stored destinations join the delete, and new objects among them are deleted
    /// in memory (returned: the save does not insert them), until nothing more is reached. The in-memory pass of
    /// `processPendingChanges()` covers objects deleted in memory; this covers those only the store knew to delete.
    func followUnsavedCascades(in planner: inout DeletionPlanner) throws -> [ManagedObject] {
        var links: [(source: ObjectID, destination: ObjectID)] = []
        for object in insertedList + Array(changedObjects.values) where !object.isDeletedFlag {
            let mapping = object.mapping
            for (index, toOne) in mapping.toOnes.enumerated() where toOne.description.deleteRule == .cascade {
                let destination = object.isInsertedFlag ? object.newKeys[index] : object.toOneChanges[index] ?? nil
                if let destination { links.append((object.objectID, destination)) }
            }
            for (index, state) in object.toManyStates where !state.added.isEmpty && mapping.toManys[index].description.deleteRule == .cascade {
                for member in state.addedOnce { links.append((object.objectID, member)) }
            }
        }
        guard !links.isEmpty else { return [] }
        var late: [ManagedObject] = []
        var reached = true
        while reached {
            reached = false
            var more: [ObjectID] = []
            for (source, destination) in links {
                let sourceGoes = source.isTemporary ? late.contains { $0.objectID == source } : planner.isDoomed(source)
                guard sourceGoes else { continue }
                if destination.isTemporary {
                    guard let index = Self.position(of: destination, in: insertedList), !insertedList[index].isDeletedFlag else { continue }
                    insertedList[index].isDeletedFlag = true
                    late.append(insertedList[index])
                    reached = true
                } else if !planner.isDoomed(destination) {
                    more.append(destination)
                }
            }
            if !more.isEmpty {
                try planner.close(over: more)
                reached = true
            }
        }
        letGo(of: late)
        return late
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
        // Objects the save inserted are not registered yet: they are walked too.
        for object in registry.values.map(\.object) + insertedList where !object.toManyStates.isEmpty {
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
                // Back as its row is: changes it had when deleted were never saved.
                object.isDeletedFlag = false
                object.faultError = nil
                object.attributeChanges.removeAll()
                object.toOneChanges.removeAll()
                stopTrackingChanges(of: object)
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
