/// The reference's side of an `ObjectContext` with undo on: the committed graph (what the store holds), the live
/// graph with its pending deletes, the saved steps queued for reversal, and the undo and redo stacks — kept by the
/// rules `docs/graph-store.md` gives under "Undo and redo":
///
/// - an explicit group is one step; changes outside any group form an implicit step named "Edit" that the next
///   group, undo, redo or save closes;
/// - undoing an unsaved step puts the unsaved changes back as they were before it (redo puts the step back);
/// - a save makes the steps recorded since the previous save one saved step, named after the latest of them;
/// - undoing a saved step queues its reverse, which the next save writes; redo before that save drops it again;
/// - `rollback()` discards the unsaved changes and empties both stacks.
struct ReferenceSession {
    /// A saved step: the committed objects it changed, as they were before it. Undoing it puts them back.
    final class SavedStep {
        let before: [Int: ReferenceGraph.Object?]

        init(before: [Int: ReferenceGraph.Object?]) { self.before = before }
    }

    struct Reversal {
        let step: SavedStep
        let name: String
        let isRedo: Bool
    }

    /// Everything unsaved: the live graph (deleted objects still in it, as a context keeps them until the save),
    /// the objects deleted, and the saved steps whose reverse the next save writes.
    struct Pending {
        var live: ReferenceGraph
        var deleted: Set<Int>
        var reversals: [Reversal]
    }

    enum Action {
        case restore(Pending, saved: SavedStep?)
        case reverse(SavedStep)
    }

    struct Step {
        let name: String
        let action: Action

        var isUnsaved: Bool {
            if case .restore = action { return true }
            return false
        }
    }

    let schema: ReferenceSchema
    let levels: Int
    private(set) var committed = ReferenceGraph()
    private(set) var pending = Pending(live: ReferenceGraph(), deleted: [], reversals: [])
    private(set) var undoSteps: [Step] = []
    private(set) var redoSteps: [Step] = []
    private var open: (name: String, before: Pending)?

    init(schema: ReferenceSchema, levels: Int) {
        self.schema = schema
        self.levels = levels
    }

    var live: ReferenceGraph { pending.live }
    var deleted: Set<Int> { pending.deleted }
    /// The pending deletes with everything their Cascade rules take along.
    var doomed: Set<Int> { pending.live.cascadeClosure(of: pending.deleted, schema: schema) }
    /// The live graph as the next save would leave it (pending reversals aside): doomed objects gone, references
    /// to them cleared.
    var effective: ReferenceGraph { pending.live.removing(doomed) }
    var hasReversals: Bool { !pending.reversals.isEmpty }

    // MARK: what a context shows

    var canUndo: Bool { !undoSteps.isEmpty || open != nil }
    var canRedo: Bool { !redoSteps.isEmpty }
    var undoActionName: String? { open?.name ?? undoSteps.last?.name }
    var redoActionName: String? { redoSteps.last?.name }
    var pendingUndoNames: [String] { pending.reversals.map(\.name) }

    /// Whether a save would change the store.
    var hasNetChanges: Bool { hasReversals || effective != committed }

    /// Whether `handle` was inserted since the last save (an edit of such an object opens no implicit group).
    func isInserted(_ handle: Int) -> Bool { pending.live.objects[handle] != nil && committed.objects[handle] == nil }

    // MARK: changes

    mutating func change(_ body: (inout ReferenceGraph, ReferenceSchema) -> Void) {
        body(&pending.live, schema)
    }

    mutating func delete(_ handle: Int) { pending.deleted.insert(handle) }

    // MARK: groups

    mutating func beginGroup(named name: String) {
        closeGroup()
        open = (name, pending)
        redoSteps.removeAll()
    }

    mutating func endGroup() { closeGroup() }

    /// A change outside any group: opens the implicit "Edit" group when none is open.
    mutating func noteChange() {
        guard open == nil else { return }
        open = ("Edit", pending)
        redoSteps.removeAll()
    }

    mutating func closeGroup() {
        guard let open else { return }
        self.open = nil
        push(Step(name: open.name, action: .restore(open.before, saved: nil)))
    }

    private mutating func push(_ step: Step) {
        undoSteps.append(step)
        if undoSteps.count > levels { undoSteps.removeFirst(undoSteps.count - levels) }
    }

    // MARK: undo, redo, rollback

    mutating func undo() {
        closeGroup()
        guard let step = undoSteps.popLast() else { return }
        redoSteps.append(take(step, isRedo: false))
    }

    mutating func redo() {
        closeGroup()
        guard let step = redoSteps.popLast() else { return }
        push(take(step, isRedo: true))
    }

    private mutating func take(_ step: Step, isRedo: Bool) -> Step {
        let current = pending
        switch step.action {
        case .restore(let state, let saved):
            pending = state
            if let saved { return Step(name: step.name, action: .reverse(saved)) }
            return Step(name: step.name, action: .restore(current, saved: nil))
        case .reverse(let saved):
            pending.reversals.append(Reversal(step: saved, name: step.name, isRedo: isRedo))
            return Step(name: step.name, action: .restore(current, saved: saved))
        }
    }

    mutating func rollback() {
        removeAllUndoActions()
        pending = Pending(live: committed, deleted: [], reversals: [])
    }

    mutating func removeAllUndoActions() {
        open = nil
        undoSteps.removeAll()
        redoSteps.removeAll()
    }

    // MARK: saving

    /// The committed graph a save leaves: the queued reversals written first, then the live changes on top.
    func savedGraph() -> ReferenceGraph {
        var graph = committed
        for reversal in pending.reversals { graph.restore(reversal.step.before) }
        let effective = self.effective
        for (handle, _) in committed.changes(to: effective) { graph.objects[handle] = effective.objects[handle] }
        return graph
    }

    /// Records a save that committed `graph`; `recordsStep` says whether it wrote anything the undo journal keeps
    /// (a save that writes nothing leaves no saved step).
    mutating func didSave(_ graph: ReferenceGraph, recordsStep: Bool) {
        let reversals = pending.reversals
        let onlyReversals = !reversals.isEmpty && pending.live == committed && pending.deleted.isEmpty
        let saved = recordsStep ? SavedStep(before: committed.changes(to: graph)) : nil
        committed = graph
        pending = Pending(live: graph, deleted: [], reversals: [])
        open = nil
        if onlyReversals, let direction = reversals.first?.isRedo, reversals.allSatisfy({ $0.isRedo == direction }) {
            _ = Self.dropUnsaved(&undoSteps)
            _ = Self.dropUnsaved(&redoSteps)
            guard let saved else { return }
            let step = Step(name: reversals.last!.name, action: .reverse(saved))
            if direction { push(step) } else { redoSteps.append(step) }
        } else {
            let name = Self.dropUnsaved(&undoSteps) ?? reversals.last?.name ?? "Edit"
            redoSteps.removeAll()
            if let saved { push(Step(name: name, action: .reverse(saved))) }
        }
    }

    /// Drops the unsaved steps from the top of `steps`; the name of the latest.
    private static func dropUnsaved(_ steps: inout [Step]) -> String? {
        var name: String?
        while let last = steps.last, last.isUnsaved {
            name = name ?? last.name
            steps.removeLast()
        }
        return name
    }
}
