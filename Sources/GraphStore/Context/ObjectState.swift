/// Where an object is in its life, changed only through the named transitions below:
///
/// - a **fault** has no row yet (`snapshot` nil, no error), and fills itself on first access;
/// - **loaded**, it holds its row as last read or saved (`snapshot`);
/// - **partial**, it holds some of its row's values (`partial`, read with a fetch's `propertiesToFetch`): those
///   read without SQL, and anything else (another property, a change, a save) first reads the whole row, a
///   *partial fault*. Everything that needs the row sees `snapshot` nil, as for a fault;
/// - **inserted**, it is new and its row exists only in the context (`isInserted`) until a save gives it one;
/// - **deleted** is a mark on any of those (`isDeleted`), which a save carries out and a rollback or undo takes
///   back;
/// - **gone**, its row was not found or could not be read (`error`): reads give defaults and nil, and
///   `existingObject(with:)` throws the error.
struct ObjectState {
    /// The row held, whole or partial (one field: an object holds one or the other, never both, and every object
    /// made and let go of pays for each reference it carries).
    private var held: RowSnapshot?
    /// The row as last read or saved; nil for a fault, a new object, a gone one and a partial one.
    var snapshot: RowSnapshot? { heldIsPartial ? nil : held }
    /// Some of the row's values, as read by a fetch that named the properties it wanted; nil unless partial.
    var partial: RowSnapshot? { heldIsPartial ? held : nil }
    /// Whether the object holds a partial row (`partial` is set), without copying it out.
    var isPartial: Bool { heldIsPartial }
    /// Whether the object holds its whole row (`snapshot` is set), without copying it out.
    var holdsWholeRow: Bool { held != nil && !heldIsPartial }
    /// Why the row could not be had; nil unless gone.
    var error: ContextError? { failure?.error }
    /// Whether the object is gone (`error` is set), without copying the error out.
    var isGone: Bool { failure != nil }
    /// The error, boxed: a `ContextError` is many words wide, and every object carries this state, copies it on
    /// its hot paths and destroys it, where one nil reference costs nothing.
    private var failure: Failure?
    // The flags come after the row (a block and where the row begins in it) and the failure, together: the state is
    // three words and three bytes, and the object's own flags (`ManagedObject.isRegistered` and its neighbours) fill
    // the word those bytes begin.
    /// Whether `held` is a partial row.
    private var heldIsPartial = false
    private(set) var isInserted = false
    private(set) var isDeleted = false

    /// No row read yet, and none to read for an inserted object.
    var isFault: Bool { held == nil && !isInserted && failure == nil }

    /// The row held, whole or partial.
    var row: RowSnapshot? { held }

    /// The held row's value of the stored attribute at `index`; nil when no row is held or a partial one lacks it.
    /// For the read path: the value is taken where the row lies, without copying the row out first.
    @inline(__always) func heldValue(at index: Int) -> AttributeValue? {
        guard let held, !heldIsPartial || held.holdsAttribute(index) else { return nil }
        return held.value(at: index)
    }

    /// The held row's key of the to-one at `index`: `.some(nil)` for a to-one set to nothing, nil when no row is held
    /// or a partial one lacks it.
    @inline(__always) func heldKey(at index: Int) -> ObjectID?? {
        guard let held, !heldIsPartial || held.holdsToOne(index) else { return nil }
        return .some(held.toOneKey(at: index))
    }

    /// A fault filled, or a row read again (a refresh, a merge, a save's write): the object holds `snapshot`. A
    /// partial row is held as `partial`, and only while the object has no whole one.
    mutating func load(_ snapshot: consuming RowSnapshot) {
        heldIsPartial = !snapshot.isComplete
        held = snapshot
        failure = nil
    }

    /// A row just read, taken if the object is still a fault, or holds a partial row this one adds to: never
    /// over a whole row, which may be one the object's pending changes were made against.
    mutating func offer(_ row: RowSnapshot) {
        guard !holdsWholeRow, !isInserted else { return }
        guard let partial = held else { return load(row) }
        // Never an older row over a newer one; of one version, what either holds.
        if row.version > partial.version || (row.version == partial.version && row.isComplete) {
            load(row)
        } else if row.version == partial.version, !partial.holdsAll(of: row.loaded) {
            load(partial.merged(with: row))
        }
    }

    /// The row is not there (or could not be read): the object is gone, with `error` saying why.
    mutating func fail(_ error: ContextError) {
        failure = Failure(error: error)
    }

    /// Back to a fault: the row is read again on next access.
    mutating func refault() {
        forgetRow()
        failure = nil
    }

    /// The row held is dropped (it is stale): the next access reads it again. A gone object stays gone.
    mutating func forgetRow() {
        held = nil
        heldIsPartial = false
    }

    /// The row is back (an undo restored it): the error goes, and the object reads its row on next access.
    mutating func recover() {
        failure = nil
    }

    /// A new object, inserted into its context.
    mutating func insert() {
        isInserted = true
    }

    /// A save wrote the new object's row: it is loaded with it.
    mutating func didInsert(_ snapshot: RowSnapshot) {
        isInserted = false
        load(snapshot)
    }

    /// Marked deleted (or, with false, the mark taken back).
    mutating func markDeleted(_ deleted: Bool = true) {
        isDeleted = deleted
    }
}

/// An object's error, held by reference (see `ObjectState.failure`).
final class Failure {
    let error: ContextError

    init(error: ContextError) {
        self.error = error
    }
}
