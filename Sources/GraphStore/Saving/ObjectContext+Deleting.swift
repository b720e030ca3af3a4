/// Delete rules: the preview of a delete, the in-memory side of cascades, and the set-based delete a save runs.
extension ObjectContext {
    /// What deleting `objects` would take with it, from the store as it is, without changing anything: per entity
    /// the objects that go, per relationship the references surviving objects lose, and any Deny blockers. Every
    /// statement counts (`SELECT COUNT(*)` over the doomed rows, described in SQL): no doomed key is read into
    /// memory, whatever the size of the cascade. (Unsaved objects are not in the store and are not counted.)
    /// Reports to `progressHandler` as it goes; when that returns false, throws `ContextError.cancelled`.
    public func deletionPlan(for objects: [ManagedObject]) throws(ContextError) -> DeletionPlan {
        let roots = objects.filter { !$0.isInserted }.map(\.objectID)
        let meter = ProgressMeter.make(for: self, .deletePreview)
        let listingLimit = deletionListingLimit
        do {
            return try coordinator.reading(cause: .other("deletion plan"), context: id) { runner in
                var counter = DeletionCounter(runner: runner)
                counter.listingLimit = listingLimit
                if let meter {
                    counter.finished = { rows in
                        if !meter.finished(rows: rows) { throw WorkCancelled() }
                    }
                }
                guard let meter else { return try counter.preview(roots) }
                return try meter.watching(runner.db) { try counter.preview(roots) }
            }
        } catch {
            if meter?.isCancelled == true { throw .cancelled("delete preview") }
            throw error
        }
    }

    /// The same plan as `deletionPlan(for:)`, by the planner a save carries deletes out with, which reads every
    /// doomed key: kept to check the counting plan against.
    func keyReadingDeletionPlan(for objects: [ManagedObject]) throws(ContextError) -> DeletionPlan {
        let roots = objects.filter { !$0.isInserted }.map(\.objectID)
        return try coordinator.reading(cause: .other("deletion plan"), context: id) { runner in
            var planner = DeletionPlanner(runner: runner, writes: false)
            return try planner.preview(roots)
        }
    }

    /// Carries out a save's delete of `deleted` with set-based statements on the save's `runner`: the closure of
    /// the delete rules over the store, as the context's unsaved links change it. Returns what it did, every row it
    /// deleted, and the new objects its cascade reached through unsaved links (which are then not inserted).
    /// Throws `deleteDenied` when a Deny rule refuses it.
    func carryOutDeletion(of deleted: [ManagedObject], runner: StatementRunner) throws
        -> (outcome: DeletionPlanner.Outcome, doomed: [ObjectID], late: [ManagedObject]) {
        var planner = DeletionPlanner(runner: runner, writes: true)
        noteUnsavedUnlinks(in: &planner)
        try planner.close(over: deleted.map(\.objectID))
        let late = try followUnsavedCascades(in: &planner)
        noteUnsavedDenials(in: &planner, late: late)
        let outcome = try planner.carryOut()
        if outcome.plan.isDenied { throw ContextError.deleteDenied(outcome.plan.denied) }
        return (outcome, planner.doomedIDs, late)
    }

    /// Applies Cascade and Nullify rules to what the context holds in memory: objects known to be in a deleted
    /// object's cascading relationships are marked deleted too (so `isDeleted` is true before the save, as in Core
    /// Data), and unsaved objects that point at a deleted one through a Nullify relationship let go of it. The
    /// store's side — rows never loaded — is planned and deleted set-based by the save.
    public func processPendingChanges() {
        var queue = insertedList.filter(\.state.isDeleted) + changedObjects.values.filter(\.state.isDeleted)
        var seen = Set(queue.map(ObjectIdentifier.init))
        func enqueue(_ object: ManagedObject) {
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            if !object.state.isDeleted { markDeleted(object) }
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
                        guard !other.state.isDeleted, case .toOne(let inverseIndex)? = other.mapping.slot(forKey: inverse),
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
        // One whose Deny rule a surviving object blocks keeps its links: the save refuses the delete and names it.
        letGo(of: insertedList.filter { $0.state.isDeleted && deniedDelete(of: $0).isEmpty })
    }

    /// What blocks deleting a new object by its Deny rules: per Deny relationship, the objects it holds that are not
    /// deleted too (in memory: a new object's relationships are nowhere else). Empty when nothing does.
    func deniedDelete(of object: ManagedObject) -> [DeletionPlan.Blocker] {
        let mapping = object.mapping
        guard mapping.hasDenyRules else { return [] }
        func survives(_ id: ObjectID) -> Bool { !(loadedObject(id)?.state.isDeleted ?? false) }
        var blockers: [DeletionPlan.Blocker] = []
        func block(_ relationship: String, _ count: Int) {
            guard count > 0 else { return }
            blockers.append(.init(object: coordinator.uri(for: object.objectID), entity: mapping.name, relationship: relationship, count: count))
        }
        for (index, toOne) in mapping.toOnes.enumerated() where toOne.description.deleteRule == .deny {
            block(toOne.name, object.destinationID(ofToOne: index).map(survives) == true ? 1 : 0)
        }
        for (index, toMany) in mapping.toManys.enumerated() where toMany.description.deleteRule == .deny {
            guard let state = object.toManyStates[index] else { continue }
            block(toMany.name, (state.members ?? state.addedOnce).filter(survives).count)
        }
        return blockers.sorted { $0.relationship < $1.relationship }
    }

    /// Objects inserted and deleted again since the last save never reach the store: the objects in memory that
    /// relate to them let go of them (loaded and recorded to-many members, to-ones back), and their pending
    /// join-table links are dropped, so that nothing lists them or saves their temporary keys. Each object changed is
    /// tracked as changed first, so that undo puts it back. Linear in the links: each partner's lists are filtered
    /// once, whatever number of gone objects they held.
    func letGo(of gone: [ManagedObject]) {
        guard !gone.isEmpty else { return }
        let ids = Set(gone.map(\.objectID))
        /// Partners whose to-many (by slot) held gone objects.
        var toManyPartners: [ObjectIdentifier: (partner: ManagedObject, slots: Set<Int>)] = [:]
        func note(_ partnerID: ObjectID, _ key: String, from object: ManagedObject) {
            guard let partner = loadedObject(partnerID), !partner.state.isDeleted else { return }
            switch partner.mapping.slot(forKey: key) {
            case .toMany(let index)?:
                toManyPartners[ObjectIdentifier(partner), default: (partner, [])].slots.insert(index)
            case .toOne(let index)?:
                if partner.destinationID(ofToOne: index) == object.objectID { setToOne(partner, index: index, to: nil, maintainInverse: false) }
            default:
                break
            }
        }
        for object in gone {
            let mapping = object.mapping
            for (index, toOne) in mapping.toOnes.enumerated() {
                guard let inverse = toOne.inverse, let destination = object.destinationID(ofToOne: index) else { continue }
                note(destination, inverse, from: object)
            }
            for (index, toMany) in mapping.toManys.enumerated() {
                guard let inverse = toMany.inverse, let state = object.toManyStates[index] else { continue }
                for member in state.members ?? state.addedOnce { note(member, inverse, from: object) }
            }
        }
        for (partner, slots) in toManyPartners.values {
            for index in slots {
                guard let state = partner.toManyStates[index],
                      state.added.contains(where: ids.contains) || state.members?.contains(where: ids.contains) == true else { continue }
                willChange(partner)
                partner.toManyStates[index]?.added.removeAll { ids.contains($0) }
                partner.toManyStates[index]?.members?.removeAll { ids.contains($0) }
            }
        }
        guard !linkChanges.isEmpty else { return }
        linkChanges.removeAll { ids.contains($0.key.first) || ids.contains($0.key.second) }
    }

    /// An object this context holds with state of its own (inserted, or registered), without making a fault.
    func loadedObject(_ id: ObjectID) -> ManagedObject? {
        if id.isTemporary { return Self.position(of: id, in: insertedList).map { insertedList[$0] } }
        return registry[id]?.object
    }

    /// Tells the planner which stored links the unsaved changes removed, both ways: a to-one set to another
    /// object (or none) lets go of the one it saved, and a to-many lets go of the members it removed (and did not
    /// add again). Only stored rows count; new objects have no stored links.
    func noteUnsavedUnlinks(in planner: inout DeletionPlanner) {
        for object in changedObjects.values where !object.state.isInserted && object.hasPersistentChanges {
            let mapping = object.mapping
            // The stored key is what a changed to-one lets go of: a change kept through a refresh has no row read.
            if object.snapshot == nil, !object.toOneChanges.isEmpty { fulfillFault(object, trigger: .save) }
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

    /// Links the unsaved changes made (a to-one set, a member added) through relationships whose delete rule is
    /// `rule`, from objects not deleted in memory (or from deleted ones too, with `fromDeleted`).
    func unsavedLinks(rule: DeleteRule, fromDeleted: Bool = false) -> [(source: ObjectID, relationship: String, destination: ObjectID)] {
        var links: [(source: ObjectID, relationship: String, destination: ObjectID)] = []
        for object in insertedList + Array(changedObjects.values) where fromDeleted || !object.state.isDeleted {
            let mapping = object.mapping
            for (index, toOne) in mapping.toOnes.enumerated() where toOne.description.deleteRule == rule {
                let destination = object.state.isInserted ? object.newKey(at: index) : object.toOneChanges[index] ?? nil
                if let destination { links.append((object.objectID, toOne.name, destination)) }
            }
            for (index, state) in object.toManyStates where !state.added.isEmpty && mapping.toManys[index].description.deleteRule == rule {
                for member in state.addedOnce { links.append((object.objectID, mapping.toManys[index].name, member)) }
            }
        }
        return links
    }

    /// Follows Cascade rules through links the unsaved changes made from rows the store's cascade reached: their
    /// stored destinations join the delete, and new objects among them are returned (the save does not insert
    /// them, and lets go of them once it has committed), until nothing more is reached. The in-memory pass of
    /// `processPendingChanges()` covers objects deleted in memory; this covers those only the store knew to delete.
    /// Nothing in memory changes here, so a save that fails leaves the context as it was.
    func followUnsavedCascades(in planner: inout DeletionPlanner) throws -> [ManagedObject] {
        let links = unsavedLinks(rule: .cascade)
        guard !links.isEmpty else { return [] }
        var late: [ManagedObject] = []
        var lateIDs = Set<ObjectID>()
        var reached = true
        while reached {
            reached = false
            var more: [ObjectID] = []
            for (source, _, destination) in links {
                guard source.isTemporary ? lateIDs.contains(source) : planner.isDoomed(source) else { continue }
                if destination.isTemporary {
                    guard !lateIDs.contains(destination), let index = Self.position(of: destination, in: insertedList),
                          !insertedList[index].state.isDeleted else { continue }
                    lateIDs.insert(destination)
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
        return late
    }

    /// Tells the planner of Deny relationships that unsaved changes filled: a doomed row's Deny relationship blocks
    /// the delete also for the objects added to it since the last save (unless they go too).
    func noteUnsavedDenials(in planner: inout DeletionPlanner, late: [ManagedObject]) {
        let lateIDs = Set(late.map(\.objectID))
        for (source, relationship, destination) in unsavedLinks(rule: .deny, fromDeleted: true) where !source.isTemporary {
            if destination.isTemporary {
                guard !lateIDs.contains(destination), let index = Self.position(of: destination, in: insertedList),
                      !insertedList[index].state.isDeleted else { continue }
            }
            planner.noteLinked(source, relationship, destination)
        }
    }

    /// After commit: new objects the store's cascade reached through unsaved links are deleted, and the objects that
    /// relate to them let go of them. Like the rest of the save's pass over deletes, this opens no undo step.
    func didDeleteLate(_ late: [ManagedObject]) {
        guard !late.isEmpty else { return }
        for object in late { object.state.markDeleted() }
        withoutOpeningUndoSteps { letGo(of: late) }
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
            object.state.markDeleted()
            unregister(id)
            marked.append(object)
        }
        for id in outcome.clearedRows {
            guard let object = registry[id]?.object, !object.hasChanges else { continue }
            object.state.forgetRow()
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
                object.state.markDeleted()
                unregister(id)
                removed.append(object)
            }
            let restored = Set(outcome.restored)
            for object in reversal.changes.deletedObjects where restored.contains(object.objectID) {
                // Back as its row is: changes it had when deleted were never saved.
                object.state.markDeleted(false)
                object.state.recover()
                object.attributeChanges.removeAll()
                object.toOneChanges.removeAll()
                stopTrackingChanges(of: object)
                if registry[object.objectID] == nil { register(object) }
            }
        }
        coordinator.rowCache.removeAll()
        for entry in registry.values {
            entry.object.state.forgetRow()
            entry.object.toManyStates.removeAll()
        }
        return removed
    }
}
