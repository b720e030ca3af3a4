import Collections
import Foundation

/// What a save will do, decided from the context's pending changes before any statement runs: the rows to insert,
/// update and delete, the links and orders to write, the saved steps to reverse, and how conflicts are settled.
/// `SaveExecutor` turns it into statements in one transaction; what the statements find (new keys, the cascade,
/// conflicts a merge policy settled) comes back as a `SaveOutcome`, and the context's bookkeeping after the commit
/// is applied from the two.
struct SavePlan {
    /// New objects, in insertion order.
    var inserted: [ManagedObject]
    /// Their temporary IDs, in the same order (sorted by key: see `ObjectContext.position(of:in:)`).
    var temporaryIDs: [ObjectID]
    /// Persisted objects deleted in this context (the store's cascade adds rows the executor finds).
    let deleted: [ManagedObject]
    /// Persisted objects with changes to write.
    let updated: [ManagedObject]
    /// Join-table links to insert (true) or delete (false), in the order they were made.
    let links: OrderedDictionary<ObjectContext.LinkKey, Bool>
    /// Saved steps undone or redone since the last save, whose reverse is written first.
    let reversals: [ObjectContext.PendingReversal]
    /// Whether the save writes reversals and nothing else (an undo or redo after a save).
    let onlyReversals: Bool
    /// How rows changed in the store since this context read them are settled.
    let mergePolicy: MergePolicy
    /// The undo journal's step that records this save, when undo is on.
    let journalStep: Int64?

    /// What the progress line calls this save.
    var work: WorkProgress.Work {
        onlyReversals ? (reversals.allSatisfy(\.isRedo) ? .redo : .undo) : .save
    }

    /// The plan of `context`'s pending changes after their delete rules are followed in memory and they pass
    /// validation; nil when there is nothing to write.
    init?(preparing context: ObjectContext) throws(ContextError) {
        context.closeUndoGroup()
        // What the delete rules change in memory follows from the steps that deleted: it opens no step of its own
        // (one left open would outlive a save that then finds nothing to write).
        context.withoutOpeningUndoSteps { context.processPendingChanges() }
        // New objects deleted while their Deny relationships hold survivors: refused, as the store refuses its own.
        let denied = context.insertedList.filter(\.state.isDeleted).flatMap(context.deniedDelete(of:))
        if !denied.isEmpty { throw .deleteDenied(denied) }
        guard context.hasChanges else { return nil }
        try context.validateForSave()
        inserted = context.insertedObjects
        temporaryIDs = inserted.map(\.objectID)
        let changed = context.changedObjects.values
        deleted = changed.filter { $0.isDeleted && !$0.isInserted }
        updated = changed.filter { !$0.isInserted && !$0.isDeleted && $0.hasPersistentChanges }
        links = context.linkChanges
        reversals = context.pendingReversals
        onlyReversals = !reversals.isEmpty && inserted.isEmpty && deleted.isEmpty && links.isEmpty && !changed.contains(where: \.hasChanges)
        mergePolicy = context.mergePolicy
        journalStep = context.undoHistory != nil ? context.coordinator.undoJournal.makeStep() : nil
    }

    /// Leaves out new objects the store's cascade reached through unsaved links: they are never inserted.
    mutating func dropInserted(_ gone: [ManagedObject], permanentIDs: inout [ObjectID]) {
        let gone = Set(gone.map(ObjectIdentifier.init))
        let kept = inserted.indices.filter { !gone.contains(ObjectIdentifier(inserted[$0])) }
        inserted = kept.map { inserted[$0] }
        temporaryIDs = kept.map { temporaryIDs[$0] }
        permanentIDs = kept.map { permanentIDs[$0] }
    }
}

/// What a save's statements found and did, for the bookkeeping after its commit.
struct SaveOutcome {
    /// `permanentIDs[i]` is the ID `plan.inserted[i]` gets.
    var permanentIDs: [ObjectID] = []
    var insertedSnapshots: [RowSnapshot] = []
    var updatedSnapshots: [RowSnapshot] = []
    /// Rows that changed in the store since read and that the merge policy does not settle.
    var conflicts: [ObjectID] = []
    /// Deletes a `.rollback` merge policy kept back: the store's version wins and the object stays.
    var keptBack: [ManagedObject] = []
    /// Changed objects whose rows are gone from the store (under a policy other than `.error`).
    var vanished: [ManagedObject] = []
    /// Keys handed out, per root entity.
    var allocated: [(root: Int, first: Int64, last: Int64)] = []
    /// The set-based delete, and every row it deleted.
    var deletion: (outcome: DeletionPlanner.Outcome, doomed: [ObjectID])?
    /// New objects the store's cascade reached through unsaved links: not inserted, deleted once committed.
    var late: [ManagedObject] = []
    /// Saved steps reversed, with what reversing them changed.
    var reversed: [(ObjectContext.PendingReversal, UndoJournal.Reversal)] = []
    /// Tables the journal saw this save change.
    var touched: [Int] = []
    var statements = 0
}

/// What a save would write now, without writing it: counts of the rows and links it would change, and for its
/// deletes, everything the delete rules would take with them (as `deletionPlan(for:)` counts it).
public struct SavePreview: Equatable, Sendable {
    /// New objects per entity.
    public let inserted: [String: Int]
    /// Changed objects per entity.
    public let updated: [String: Int]
    /// Objects deleted in the context per entity (the cascade's further rows are in `deletion`).
    public let deleted: [String: Int]
    /// Join-table links added and removed.
    public let linkWrites: Int
    /// Saved steps undone or redone whose reverse would be written.
    public let reversals: Int
    /// The delete rules' whole effect in the store; nil when nothing is deleted.
    public let deletion: DeletionPlan?
}

extension ObjectContext {
    /// What `save()` would write now, read from the store without changing it or the context: the objects a save
    /// would insert, update and delete, its link writes and reversals, and its deletes' whole effect counted the way
    /// `deletionPlan(for:)` counts it. It does not validate the changes (a save may still refuse them); the
    /// deletion's `shortfalls` say which survivors its delete rules would leave invalid in the store as it is.
    public func savePreview() throws(ContextError) -> SavePreview {
        let inserted = insertedObjects
        let changed = changedObjects.values
        let deleted = changed.filter { $0.isDeleted && !$0.isInserted }
        let updated = changed.filter { !$0.isInserted && !$0.isDeleted && $0.hasPersistentChanges }
        func perEntity(_ objects: [ManagedObject]) -> [String: Int] {
            objects.reduce(into: [:]) { $0[$1.entityName, default: 0] += 1 }
        }
        return SavePreview(inserted: perEntity(inserted), updated: perEntity(updated), deleted: perEntity(deleted),
                           linkWrites: linkChanges.count, reversals: pendingReversals.count,
                           deletion: deleted.isEmpty ? nil : try deletionPlan(for: deleted))
    }
}
