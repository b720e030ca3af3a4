import Foundation

/// Relationship faults and graph consistency: setting either side of a relationship updates the other in memory,
/// and a to-many that was never faulted in records the change instead of being fetched.
extension ObjectContext {
    /// The members of a to-many, firing the relationship fault on first access (one query for IDs only).
    func members(of object: ManagedObject, toMany index: Int) -> [ObjectID] {
        if let members = object.toManyStates[index]?.members { return members }
        var loaded: [ObjectID] = []
        if !object.isInserted && !object.objectID.isTemporary {
            loaded = fireRelationshipFault(object, toMany: index)
        }
        return fulfillToMany(object, index: index, storedMembers: loaded)
    }

    /// Makes a to-many fault hold `storedMembers` (the store's members, from its fault or a prefetch) with the
    /// unsaved additions and removals applied; returns the members.
    @discardableResult
    func fulfillToMany(_ object: ManagedObject, index: Int, storedMembers: [ObjectID]) -> [ObjectID] {
        var state = object.toManyStates[index] ?? ToManyState()
        var loaded = storedMembers
        if !state.removed.isEmpty { loaded.removeAll { state.removed.contains($0) } }
        if !state.added.isEmpty {
            var present = Set(loaded)
            for id in state.added where present.insert(id).inserted { loaded.append(id) }
        }
        state.members = loaded
        object.toManyStates[index] = state
        return loaded
    }

    /// Sets a to-one; with `maintainInverse`, moves the object between the old and new destinations' inverse.
    func setToOne(_ object: ManagedObject, index: Int, to destination: ManagedObject?, maintainInverse: Bool) {
        // The relationship's fields are read where needed, not copied out whole (its strings and arrays would be
        // retained and released on every link set).
        var old = object.destinationID(ofToOne: index)
        guard old != destination?.objectID else { return }
        if object.isPartial {
            // Changed against its whole row, as any change is: the version read now is the one the save checks.
            fulfillFault(object, trigger: .key(object.mapping.toOnes[index].name))
            old = object.destinationID(ofToOne: index)
            guard old != destination?.objectID else { return }
        }
        willChange(object)
        if object.state.isInserted {
            object.setNewKey(destination?.objectID, at: index)
        } else {
            object.toOneChanges[index] = .some(destination?.objectID)
        }
        guard maintainInverse, let inverseName = object.mapping.toOnes[index].inverse else { return }
        if let old, let oldObject = counterpart(old) {
            updateInverse(of: oldObject, named: inverseName, toward: object, adding: false)
        }
        if let destination {
            updateInverse(of: destination, named: inverseName, toward: object, adding: true)
        }
    }

    /// Adds or removes `member` in a to-many of `owner`, recording join-table links and updating the inverse.
    func link(_ owner: ManagedObject, toMany index: Int, _ member: ManagedObject, adding: Bool, maintainInverse: Bool) {
        let toMany = owner.mapping.toManys[index]
        if let members = owner.toManyStates[index]?.members, members.contains(member.objectID) == adding { return }
        if adding, maintainInverse, let inverseName = toMany.inverse, case .toOne(let inverseIndex)? = member.mapping.slot(forKey: inverseName) {
            // The member's to-one is the stored link: setting it moves the member out of its previous owner and adds
            // it here (once: nothing happens when it already points here).
            setToOne(member, index: inverseIndex, to: owner, maintainInverse: true)
            return
        }
        // Changed in place: copying the state out and back would copy its member lists on every add.
        owner.toManyStates[index, default: ToManyState()].record(
            member.objectID, adding: adding, ordered: toMany.description.isOrdered, mayBeStored: Self.mayBeLinked(owner, member))
        willChange(owner)
        if case .joinTable(let table, _, _, _, let isSymmetric) = toMany.storage {
            // A link removed from members never read may have been in the store: adding or removing it again
            // is written as asked, not cancelled against the removal.
            let cancels = owner.toManyStates[index]?.removed.contains(member.objectID) != true
            recordLink(table: table, storage: toMany.storage, owner: owner.objectID, member: member.objectID, adding: adding, cancels: cancels)
            if isSymmetric {
                recordLink(table: table, storage: toMany.storage, owner: member.objectID, member: owner.objectID, adding: adding, cancels: cancels)
            }
        }
        guard maintainInverse, let inverseName = toMany.inverse else { return }
        guard let slot = member.mapping.slot(forKey: inverseName) else { return }
        switch slot {
        case .toOne(let inverseIndex):
            // The member's to-one is the stored link; setting it moves the member out of its previous owner.
            if adding {
                setToOne(member, index: inverseIndex, to: owner, maintainInverse: true)
            } else if member.destinationID(ofToOne: inverseIndex) == owner.objectID {
                setToOne(member, index: inverseIndex, to: nil, maintainInverse: false)
            }
        case .toMany(let inverseIndex):
            updateToManyInMemory(member, index: inverseIndex, toward: owner, adding: adding)
        default:
            break
        }
    }

    /// Replaces a to-many's contents with `objects` (their order when ordered).
    func replaceMembers(of owner: ManagedObject, toMany index: Int, with objects: [ManagedObject]) {
        let current = members(of: owner, toMany: index)
        let wanted = Set(objects.map(\.objectID))
        for id in current where !wanted.contains(id) {
            if let member = counterpart(id) {
                link(owner, toMany: index, member, adding: false, maintainInverse: true)
            } else {
                owner.toManyStates[index]?.members?.removeAll { $0 == id }
            }
        }
        for object in objects where !current.contains(object.objectID) {
            link(owner, toMany: index, object, adding: true, maintainInverse: true)
        }
        if owner.mapping.toManys[index].description.isOrdered, var state = owner.toManyStates[index] {
            state.members = objects.map(\.objectID)
            state.reordered = true
            owner.toManyStates[index] = state
            // A new order of the same members is a change too: the save must rewrite the positions.
            willChange(owner)
        }
    }

    /// The object on the other side of a relationship whose inverse needs updating: for a temporary ID the inserted
    /// object (deleted again or not: one whose delete a Deny rule refused still lists its members), none once a save
    /// or rollback let it go.
    private func counterpart(_ id: ObjectID) -> ManagedObject? {
        id.isTemporary ? loadedObject(id) : object(with: id)
    }

    /// Updates the relationship `name` of `target` after `source` moved toward or away from it.
    private func updateInverse(of target: ManagedObject, named name: String, toward source: ManagedObject, adding: Bool) {
        guard let slot = target.mapping.slot(forKey: name) else { return }
        switch slot {
        case .toMany(let index):
            updateToManyInMemory(target, index: index, toward: source, adding: adding)
        case .toOne(let index):
            // One-to-one: the target's old partner loses its link to the target.
            if adding {
                if let previous = target.destinationID(ofToOne: index), previous != source.objectID,
                   let inverse = target.mapping.toOnes[index].inverse, let partner = counterpart(previous),
                   case .toOne(let backIndex)? = partner.mapping.slot(forKey: inverse) {
                    setToOne(partner, index: backIndex, to: nil, maintainInverse: false)
                }
                setToOne(target, index: index, to: source, maintainInverse: false)
            } else if target.destinationID(ofToOne: index) == source.objectID {
                setToOne(target, index: index, to: nil, maintainInverse: false)
            }
        default:
            break
        }
    }

    /// Adds or removes `other` in a to-many of `target` in memory only: a faulted to-many is not fetched, the change
    /// is recorded and merged when (if ever) it fires.
    private func updateToManyInMemory(_ target: ManagedObject, index: Int, toward other: ManagedObject, adding: Bool) {
        let ordered = target.mapping.toManys[index].description.isOrdered
        target.toManyStates[index, default: ToManyState()].record(other.objectID, adding: adding, ordered: ordered, mayBeStored: Self.mayBeLinked(target, other))
        // The target now holds a change: track it so it is kept until saved, cleared by the save and undone by a
        // rollback. Only join-table links and positions are written from this side; a foreign key is written by its
        // row's owner, so a save runs no statement for the target itself.
        willChange(target)
    }

    /// Whether the store may link the two objects: both have rows.
    private static func mayBeLinked(_ owner: ManagedObject, _ member: ManagedObject) -> Bool {
        !owner.objectID.isTemporary && !member.objectID.isTemporary
    }

    /// Records a join-table link to insert (`adding`) or delete; with `cancels`, an insert and a delete of the same
    /// link cancel out (`INSERT OR IGNORE` and a `DELETE` that finds nothing make the other cases safe to write).
    private func recordLink(table: String, storage: RelationshipStorage, owner: ObjectID, member: ObjectID, adding: Bool, cancels: Bool) {
        guard case .joinTable(_, let sourceColumn, _, _, _) = storage else { return }
        let firstIsSource = coordinator.store.schema.joinTables.first { $0.name == table }?.primaryKey.first == sourceColumn
        let key = LinkKey(table: table, first: firstIsSource ? owner : member, second: firstIsSource ? member : owner)
        if let pending = linkChanges[key], pending != adding, cancels {
            linkChanges[key] = nil
        } else {
            linkChanges[key] = adding
        }
    }
}

extension ToManyState {
    /// Adds or removes `id` as `apply` does, except for a member removed since the last save and added again,
    /// of an ordered to-many or of one whose relationship fault has not fired. `apply` would only cancel the
    /// removal: an ordered member then stays at its stored position, where an added member goes to the end, and a
    /// member of unknown members is taken to be stored, which it was not if the removal removed nothing (then it
    /// is missing from the members when they are read, from the store's links, and from the objects a delete's
    /// Nullify rule lets go of). It stays among `removed` (so a stored position or link is dropped) and joins
    /// `added` (so it is appended, and linked).
    mutating func record(_ id: ObjectID, adding: Bool, ordered: Bool, mayBeStored: Bool) {
        guard adding, ordered || members == nil, !removed.isEmpty, removed.contains(id) else {
            apply(id, adding: adding, ordered: ordered, mayBeStored: mayBeStored)
            return
        }
        added.append(id)
        if members != nil {
            // cannot fail: checked just above.
            members!.removeAll { $0 == id }
            members!.append(id)
        }
        if ordered { reordered = true }
    }
}

extension ManagedObject {
    /// The IDs of the objects a relationship points to, without making objects for them (Core Data's
    /// `objectIDs(forRelationshipNamed:)`): a to-one's destination (an empty list when it has none), or a to-many's
    /// members (in order when ordered, by object ID otherwise), firing its relationship fault if it has not fired,
    /// as `objects(forKey:)` does. Reading a to-one fills this object first if it is a fault.
    ///
    /// ```swift
    /// message.objectIDs(forRelationshipNamed: "chat")       // [ObjectID(Chat, 1)]: no Chat object made
    /// ```
    public func objectIDs(forRelationshipNamed name: String) -> [ObjectID] {
        switch slot(name) {
        case .toOne(let index):
            return destinationID(ofToOne: index).map { [$0] } ?? []
        case .toMany(let index):
            guard let context else { return [] }
            var ids = context.members(of: self, toMany: index)
            if !mapping.toManys[index].description.isOrdered { ids.sort() }
            return ids
        default:
            preconditionFailure("'\(name)' is not a relationship of \(entityName)")
        }
    }

    /// The ID of a to-one's destination (nil when it has none), without making an object for it: what
    /// `objectIDs(forRelationshipNamed:)` gives for a to-one, without the array. Fills this object first if it is a
    /// fault.
    ///
    /// ```swift
    /// message.objectID(forToOneNamed: "chat")       // ObjectID(Chat, 1): no Chat object made
    /// ```
    public func objectID(forToOneNamed name: String) -> ObjectID? {
        guard case .toOne(let index) = slot(name) else { preconditionFailure("'\(name)' is not a to-one relationship of \(entityName)") }
        return destinationID(ofToOne: index)
    }
}
