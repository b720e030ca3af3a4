import Collections

/// Undo and redo of unsaved changes, in groups: one user action (an edit, an insert, a whole cascade delete) is one
/// step. Off by default (`undoLevels` 0), as a Core Data context has no undo manager unless given one; turning it on
/// costs a copy of the context's pending changes at the start of every group.
///
/// ```swift
/// context.undoLevels = 20
/// context.undoGroup(named: "Rename chat") { chat.setValue("Ski trip", forKey: "title") }
/// context.undo()          // the title is back; context.canRedo == true, redoActionName == "Rename chat"
/// ```
/// Changes made outside an explicit group form an implicit one ("Edit") that the next group, undo, redo or save
/// closes. A save keeps the steps recorded before it only as far as the store allows: for now the stacks are
/// cleared by a save (undo after a save is the next step of this work).
extension ObjectContext {
    /// Everything unsaved, as it stood at one moment.
    struct PendingState {
        struct ObjectState {
            var attributeChanges: SlotChanges<AttributeValue>
            var toOneChanges: SlotChanges<ObjectID?>
            var toManyStates: [Int: ToManyState]
            var transientValues: [String: AttributeValue]
            var isDeleted: Bool
            var newValues: [AttributeValue]
            var newKeys: [ObjectID?]
            var newValuesSet: UInt64

            init(_ object: ManagedObject) {
                attributeChanges = object.attributeChanges
                toOneChanges = object.toOneChanges
                toManyStates = object.toManyStates
                transientValues = object.transientValues
                isDeleted = object.isDeletedFlag
                newValues = object.newValues
                newKeys = object.newKeys
                newValuesSet = object.newValuesSet
            }

            func apply(to object: ManagedObject) {
                object.attributeChanges = attributeChanges
                object.toOneChanges = toOneChanges
                object.toManyStates = toManyStates
                object.transientValues = transientValues
                object.isDeletedFlag = isDeleted
                object.newValues = newValues
                object.newKeys = newKeys
                object.newValuesSet = newValuesSet
            }
        }

        var inserted: [ManagedObject]
        var changed: OrderedDictionary<ObjectID, ManagedObject>
        var states: [ObjectIdentifier: ObjectState]
        var links: OrderedDictionary<LinkKey, Bool>
    }

    /// One undoable step: its name and the state to go back (or forward) to.
    struct UndoStep {
        let name: String
        let state: PendingState
    }

    final class UndoHistory {
        var levels: Int
        var undoSteps: [UndoStep] = []
        var redoSteps: [UndoStep] = []
        /// The group being recorded: its name, the state at its start, whether `beginUndoGroup` opened it, and how
        /// deeply explicit groups are nested.
        var open: (name: String, before: PendingState, explicit: Bool, depth: Int)?
        var isRestoring = false

        init(levels: Int) { self.levels = levels }

        func push(_ step: UndoStep) {
            undoSteps.append(step)
            if undoSteps.count > levels { undoSteps.removeFirst(undoSteps.count - levels) }
        }
    }

    /// How many steps `undo()` can go back (0 turns undo off and forgets every step).
    public var undoLevels: Int {
        get { undoHistory?.levels ?? 0 }
        set {
            if newValue <= 0 {
                undoHistory = nil
            } else if let undoHistory {
                undoHistory.levels = newValue
            } else {
                undoHistory = UndoHistory(levels: newValue)
            }
        }
    }

    public var canUndo: Bool {
        guard let undoHistory else { return false }
        return !undoHistory.undoSteps.isEmpty || undoHistory.open != nil
    }

    public var canRedo: Bool { !(undoHistory?.redoSteps.isEmpty ?? true) }

    /// The name of the step `undo()` would take back, for a menu ("Undo Delete Chat").
    public var undoActionName: String? { undoHistory?.open?.name ?? undoHistory?.undoSteps.last?.name }

    public var redoActionName: String? { undoHistory?.redoSteps.last?.name }

    /// Starts a named group: every change until the matching `endUndoGroup()` is one step. Groups nest; the
    /// outermost names the step.
    public func beginUndoGroup(named name: String) {
        guard let undoHistory else { return }
        if var open = undoHistory.open, open.explicit {
            open.depth += 1
            undoHistory.open = open
            return
        }
        closeUndoGroup()
        undoHistory.open = (name, capturePendingState(), true, 1)
        undoHistory.redoSteps.removeAll()
    }

    public func endUndoGroup() {
        guard let undoHistory, var open = undoHistory.open, open.explicit else { return }
        open.depth -= 1
        undoHistory.open = open
        if open.depth == 0 { closeUndoGroup() }
    }

    /// Runs `body` as one named undo step.
    public func undoGroup<T>(named name: String, _ body: () throws -> T) rethrows -> T {
        beginUndoGroup(named: name)
        defer { endUndoGroup() }
        return try body()
    }

    /// Takes back the last step: the unsaved changes return to what they were before it (objects it inserted are
    /// gone again, objects it deleted are back, values and relationships as they were).
    public func undo() {
        guard let undoHistory else { return }
        closeUndoGroup()
        guard let step = undoHistory.undoSteps.popLast() else { return }
        let current = capturePendingState()
        restorePendingState(step.state)
        undoHistory.redoSteps.append(UndoStep(name: step.name, state: current))
    }

    /// Puts back the last step `undo()` took back.
    public func redo() {
        guard let undoHistory else { return }
        closeUndoGroup()
        guard let step = undoHistory.redoSteps.popLast() else { return }
        let current = capturePendingState()
        restorePendingState(step.state)
        undoHistory.push(UndoStep(name: step.name, state: current))
    }

    public func removeAllUndoActions() {
        guard let undoHistory else { return }
        undoHistory.open = nil
        undoHistory.undoSteps.removeAll()
        undoHistory.redoSteps.removeAll()
    }

    /// Called before every change (from `willChange` and `insert`): opens an implicit group when none is open.
    func noteUndoableChange() {
        guard let undoHistory, !undoHistory.isRestoring, undoHistory.open == nil else { return }
        undoHistory.open = ("Edit", capturePendingState(), false, 0)
        undoHistory.redoSteps.removeAll()
    }

    /// Ends the open group, recording it as a step.
    func closeUndoGroup() {
        guard let undoHistory, let open = undoHistory.open else { return }
        undoHistory.open = nil
        undoHistory.push(UndoStep(name: open.name, state: open.before))
    }

    private func capturePendingState() -> PendingState {
        var states: [ObjectIdentifier: PendingState.ObjectState] = [:]
        for object in insertedList { states[ObjectIdentifier(object)] = .init(object) }
        for object in changedObjects.values { states[ObjectIdentifier(object)] = .init(object) }
        return PendingState(inserted: insertedList, changed: changedObjects, states: states, links: linkChanges)
    }

    private func restorePendingState(_ state: PendingState) {
        undoHistory?.isRestoring = true
        defer { undoHistory?.isRestoring = false }
        // Objects changed since the state was taken lose those changes; objects inserted since are gone again.
        for object in insertedList where state.states[ObjectIdentifier(object)] == nil {
            object.isDeletedFlag = true
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        for object in changedObjects.values where state.states[ObjectIdentifier(object)] == nil {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.transientValues.removeAll()
            object.isDeletedFlag = false
        }
        clearChangedObjects()
        for object in state.inserted + Array(state.changed.values) {
            state.states[ObjectIdentifier(object)]?.apply(to: object)
        }
        insertedList = state.inserted
        changedObjects = state.changed
        for object in changedObjects.values { object.isTrackedAsChanged = true }
        linkChanges = state.links
    }
}
