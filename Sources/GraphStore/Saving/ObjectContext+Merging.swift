import Foundation

/// Bringing other contexts' saves into this one, and describing this context's saves for them.
extension ObjectContext {
    /// Brings the changes of another context's save (or of another process's writes) into this context without
    /// fetching anything: registered objects take the committed values, objects whose rows the store changed on its
    /// own (derived counts, cleared keys) and to-manys that gained or lost members become faults again, and
    /// objects of deleted rows are deleted here too. Unsaved changes of this context stay, on top of the new values;
    /// since the objects now hold the rows' current versions, the next save writes them without a conflict.
    ///
    /// A notification of another store, or of this context's own save, changes nothing.
    public func mergeChanges(fromContextDidSave notification: SaveNotification) {
        guard notification.storeUUID == coordinator.store.storeUUID, notification.source != id, !notification.isEmpty else { return }
        let start = ContinuousClock.now
        var touched = 0
        // Rows from another coordinator (another process) may be older in this coordinator's cache.
        coordinator.rowCache.insert(contentsOf: notification.values.values)
        coordinator.rowCache.remove(contentsOf: notification.deleted)
        coordinator.rowCache.remove(contentsOf: notification.refreshed)
        if notification.refreshesEverything {
            coordinator.rowCache.removeAll()
            for object in registry.values.map(\.object) {
                refresh(object, mergeChanges: true)
                touched += 1
            }
        }

        let gone = Set(notification.deleted)
        for id in notification.deleted {
            guard let object = registry[id]?.object else { continue }
            stopTrackingChanges(of: object)
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.state.markDeleted()
            unregister(id)
            touched += 1
        }
        if !gone.isEmpty {
            // Links to rows that are gone would be written dangling: drop them, and clear to-ones set to them.
            linkChanges.removeAll { gone.contains($0.key.first) || gone.contains($0.key.second) }
            for object in changedObjects.values where !object.toOneChanges.isEmpty {
                for (index, destination) in object.toOneChanges.entries where destination.map(gone.contains) == true {
                    object.toOneChanges[index] = .some(nil)
                }
            }
            for entry in registry.values where !entry.object.toManyStates.isEmpty {
                let object = entry.object
                for index in object.toManyStates.keys {
                    if let members = object.toManyStates[index]?.members, members.contains(where: gone.contains) {
                        object.toManyStates[index]?.members = members.filter { !gone.contains($0) }
                    }
                }
            }
        }
        for id in notification.updated {
            // A partial object takes the whole row too: what it held is older.
            guard let object = registry[id]?.object, let current = object.state.row, let snapshot = notification.values[id],
                  snapshot.version >= current.version else { continue }
            object.state.load(snapshot)
            touched += 1
        }
        for id in notification.refreshed {
            guard let object = registry[id]?.object, object.state.row != nil else { continue }
            object.state.refault()
            touched += 1
        }
        for id in notification.relationshipOwners {
            guard let object = registry[id]?.object, !object.toManyStates.isEmpty else { continue }
            // Recorded additions and removals stay; the members themselves are read again on next access.
            for index in object.toManyStates.keys { object.toManyStates[index]?.forgetMembers() }
            touched += 1
        }
        coordinator.events.emit(.merge(MergeEvent(
            source: notification.source?.name, inserted: notification.inserted.count, updated: notification.updated.count,
            deleted: notification.deleted.count, refreshed: notification.refreshed.count, objectsTouched: touched,
            duration: ContinuousClock.now - start)), context: id)
    }

    /// Describes a save that just committed, for other contexts (called before `didSave` clears the changes).
    func saveNotification(
        inserted: [ManagedObject], insertedSnapshots: [RowSnapshot], updated: [ManagedObject], updatedSnapshots: [RowSnapshot],
        deleted: [ManagedObject], doomed: [ObjectID], cleared: [ObjectID], temporaryIDs: [ObjectID], permanentIDs: [ObjectID],
        rewroteSavedSteps: Bool
    ) -> SaveNotification {
        func permanent(_ id: ObjectID) -> ObjectID {
            guard id.isTemporary, let position = Self.position(of: id, in: temporaryIDs) else { return id }
            return permanentIDs[position]
        }
        var note = SaveNotification(source: id, storeUUID: coordinator.store.storeUUID)
        note.refreshesEverything = rewroteSavedSteps
        var owners = Set<ObjectID>()
        var refreshed = Set<ObjectID>()

        note.inserted = insertedSnapshots.map(\.objectID)
        for (object, snapshot) in zip(inserted, insertedSnapshots) {
            note.values[snapshot.objectID] = snapshot
            for key in snapshot.toOneKeys { if let key { owners.insert(key) } }
            if object.mapping.hasDerivedAttributes { refreshed.insert(snapshot.objectID) }
        }
        let written = Dictionary(uniqueKeysWithValues: updatedSnapshots.map { ($0.objectID, $0) })
        let gone = Set(doomed).union(deleted.map(\.objectID))
        for object in updated where !gone.contains(object.objectID) {
            let objectID = object.objectID
            note.updated.append(objectID)
            if let snapshot = written[objectID] { note.values[objectID] = snapshot }
            let mapping = object.mapping
            var keys = object.attributeChanges.entries.map { mapping.attributes[$0.0].name }
            for (index, destination) in object.toOneChanges.entries {
                keys.append(mapping.toOnes[index].name)
                if let old = object.snapshot?.toOneKeys[index] { owners.insert(old) }
                if let destination { owners.insert(permanent(destination)) }
            }
            for (index, state) in object.toManyStates where state.hasChanges {
                keys.append(mapping.toManys[index].name)
                owners.insert(objectID)
            }
            note.changedKeys[objectID] = keys
            if mapping.hasDerivedAttributes { refreshed.insert(objectID) }
        }
        for link in linkChanges.keys {
            owners.insert(permanent(link.first))
            owners.insert(permanent(link.second))
        }
        for object in deleted {
            if let keys = object.snapshot?.toOneKeys { for case let key? in keys { owners.insert(key) } }
        }
        note.deleted = Array(gone).sorted()
        owners.subtract(gone)
        refreshed.formUnion(cleared)
        // The store's triggers keep derived values on the owners' rows: those rows changed too.
        for owner in owners where coordinator.mapping(forEntityNumber: owner.entityNumber).hasDerivedAttributes {
            refreshed.insert(owner)
        }
        refreshed.subtract(gone)
        note.relationshipOwners = owners
        note.refreshed = refreshed.sorted()
        // The saving context refaults its own derived rows; rows of this coordinator it does not hold must not
        // be served old from the cache either.
        coordinator.rowCache.remove(contentsOf: note.refreshed)
        return note
    }
}
