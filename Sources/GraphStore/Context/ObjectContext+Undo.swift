import Collections

/// Undo and redo, in groups: one user action (an edit, an insert, a whole cascade delete) is one step. Off by default
/// (`undoLevels` 0), as a Core Data context has no undo manager unless given one.
///
/// ```swift
/// context.undoLevels = 20
/// context.undoGroup(named: "Rename chat") { chat.setValue("Ski trip", forKey: "title") }
/// context.undo()          // the title is back; context.canRedo == true, redoActionName == "Rename chat"
/// ```
/// Changes made outside an explicit group form an implicit one ("Edit") that the next group, undo, redo or save
/// closes. Before a save, undo restores the unsaved changes as they were (a copy of them is taken at the start of each
/// group). A save turns the groups since the previous save into one step kept in the store's undo journal
/// (`UndoJournal`): undoing it queues the reverse changes, which the next save writes — deleted rows come back with
/// their keys, values and links, changed rows get their old values, created rows go. Redo after that works the same
/// way in the other direction.
extension ObjectContext {
    /// Everything unsaved, as it stood at one moment.
    struct PendingState {
        struct ObjectState {
            var attributeChanges: SlotChanges<AttributeValue>
            var toOneChanges: SlotChanges<ObjectID?>
            var toManyStates: ToManyStates
            var transientValues: [String: AttributeValue]
            var isDeleted: Bool
            var newRow: NewRow?
            var newValuesSet: UInt64

            init(_ object: ManagedObject) {
                attributeChanges = object.attributeChanges
                toOneChanges = object.toOneChanges
                toManyStates = object.toManyStates
                transientValues = object.transientValues
                isDeleted = object.state.isDeleted
                newRow = object.newRow
                newValuesSet = object.newValuesSet
            }

            func apply(to object: ManagedObject) {
                object.attributeChanges = attributeChanges
                object.toOneChanges = toOneChanges
                object.toManyStates = toManyStates
                object.transientValues = transientValues
                object.state.markDeleted(isDeleted)
                object.newRow = newRow
                object.newValuesSet = newValuesSet
            }
        }

        var inserted: [ManagedObject]
        var changed: OrderedDictionary<ObjectID, ManagedObject>
        var states: [ObjectIdentifier: ObjectState]
        var links: OrderedDictionary<LinkKey, Bool>
        var reversals: [PendingReversal]
    }

    /// A saved step whose reverse the next save writes.
    struct PendingReversal {
        let changes: SavedChanges
        let name: String
        /// Whether it came from `redo()` (the step is a save of an undo).
        let isRedo: Bool
    }

    /// One step: its name and how to take it back (or put it back).
    struct UndoStep {
        enum Action {
            /// Go back to a state of unsaved changes. `saved`: the saved step whose reversal that state lacks (the
            /// step was made by undoing or redoing a saved one, which going back puts back on the other stack).
            case restore(PendingState, saved: SavedChanges?)
            /// Queue the reverse of a saved step for the next save.
            case reverse(SavedChanges)
        }

        let name: String
        let action: Action

        var isUnsaved: Bool {
            if case .restore = action { return true }
            return false
        }
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

        /// Drops the steps about unsaved changes from the top of `steps` (a save makes them stale); the name of the
        /// latest one.
        static func dropUnsaved(_ steps: inout [UndoStep]) -> String? {
            var name: String?
            while let last = steps.last, last.isUnsaved {
                name = name ?? last.name
                steps.removeLast()
            }
            return name
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

    /// Takes back the last step. An unsaved one: the unsaved changes return to what they were before it (objects it
    /// inserted are gone again, objects it deleted are back, values and relationships as they were). A saved one:
    /// its reverse is queued, and the next save writes it (`hasChanges` is true until then; objects show the store
    /// as it is until that save).
    public func undo() {
        guard let undoHistory else { return }
        closeUndoGroup()
        guard let step = undoHistory.undoSteps.popLast() else { return }
        undoHistory.redoSteps.append(take(step, isRedo: false))
    }

    /// Puts back the last step `undo()` took back.
    public func redo() {
        guard let undoHistory else { return }
        closeUndoGroup()
        guard let step = undoHistory.redoSteps.popLast() else { return }
        undoHistory.push(take(step, isRedo: true))
    }

    /// The saved steps whose reverse the next save writes, by name, oldest first.
    public var pendingUndoNames: [String] { pendingReversals.map(\.name) }

    /// Carries out a step; returns the step that takes it back.
    private func take(_ step: UndoStep, isRedo: Bool) -> UndoStep {
        let current = capturePendingState()
        switch step.action {
        case .restore(let state, let saved):
            restorePendingState(state)
            if let saved { return UndoStep(name: step.name, action: .reverse(saved)) }
            return UndoStep(name: step.name, action: .restore(current, saved: nil))
        case .reverse(let saved):
            pendingReversals.append(PendingReversal(changes: saved, name: step.name, isRedo: isRedo))
            return UndoStep(name: step.name, action: .restore(current, saved: saved))
        }
    }

    /// After a save: the steps about unsaved changes become one saved step (`changes`, nil when the save wrote
    /// nothing the journal keeps). A save that only wrote the reverse of undone (or redone) saved steps goes on the
    /// other stack, so that redo (or undo) puts them back.
    func recordSave(_ changes: SavedChanges?, reversals: [PendingReversal], onlyReversals: Bool) {
        guard let undoHistory else { return }
        undoHistory.open = nil
        if onlyReversals, let direction = reversals.first?.isRedo, reversals.allSatisfy({ $0.isRedo == direction }) {
            _ = UndoHistory.dropUnsaved(&undoHistory.undoSteps)
            _ = UndoHistory.dropUnsaved(&undoHistory.redoSteps)
            guard let changes else { return }
            let step = UndoStep(name: reversals.last!.name, action: .reverse(changes))  // cannot fail: reversals.first exists
            if direction { undoHistory.push(step) } else { undoHistory.redoSteps.append(step) }
        } else {
            let name = UndoHistory.dropUnsaved(&undoHistory.undoSteps) ?? reversals.last?.name ?? "Edit"
            undoHistory.redoSteps.removeAll()
            if let changes { undoHistory.push(UndoStep(name: name, action: .reverse(changes))) }
        }
    }

    public func removeAllUndoActions() {
        guard let undoHistory else { return }
        undoHistory.open = nil
        undoHistory.undoSteps.removeAll()
        undoHistory.redoSteps.removeAll()
    }

    /// Runs `body`, whose changes follow from steps already taken (the save's pass over deletes), without opening
    /// an undo step for them.
    func withoutOpeningUndoSteps(_ body: () -> Void) {
        guard let undoHistory else { return body() }
        let wasRestoring = undoHistory.isRestoring
        undoHistory.isRestoring = true
        defer { undoHistory.isRestoring = wasRestoring }
        body()
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
        undoHistory.push(UndoStep(name: open.name, action: .restore(open.before, saved: nil)))
    }

    private func capturePendingState() -> PendingState {
        var states: [ObjectIdentifier: PendingState.ObjectState] = [:]
        for object in insertedList { states[ObjectIdentifier(object)] = .init(object) }
        for object in changedObjects.values { states[ObjectIdentifier(object)] = .init(object) }
        return PendingState(inserted: insertedList, changed: changedObjects, states: states, links: linkChanges, reversals: pendingReversals)
    }

    private func restorePendingState(_ state: PendingState) {
        undoHistory?.isRestoring = true
        defer { undoHistory?.isRestoring = false }
        // Objects changed since the state was taken lose those changes; objects inserted since are gone again.
        for object in insertedList where state.states[ObjectIdentifier(object)] == nil {
            object.state.markDeleted()
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        for object in changedObjects.values where state.states[ObjectIdentifier(object)] == nil {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.transientValues.removeAll()
            object.state.markDeleted(false)
        }
        clearChangedObjects()
        for object in state.inserted + Array(state.changed.values) {
            state.states[ObjectIdentifier(object)]?.apply(to: object)
        }
        insertedList = state.inserted
        changedObjects = state.changed
        for object in changedObjects.values { object.isTrackedAsChanged = true }
        linkChanges = state.links
        pendingReversals = state.reversals
    }
}

/// A saved step kept in the undo journal. When the last reference goes (the step fell off the stack, or was undone
/// and written), the journal forgets its rows.
final class SavedChanges {
    let step: Int64
    /// The journal's tables the step touched.
    let tables: [Int]
    private let journal: UndoJournal
    /// Objects in memory the step deleted: undoing it brings these same objects back to life.
    let deletedObjects: [ManagedObject]

    init(step: Int64, tables: [Int], journal: UndoJournal, deletedObjects: [ManagedObject]) {
        self.step = step
        self.tables = tables
        self.journal = journal
        self.deletedObjects = deletedObjects
    }

    deinit { journal.discard(step, tables: tables) }
}
