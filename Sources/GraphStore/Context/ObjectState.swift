/// Where an object is in its life, changed only through the named transitions below:
///
/// - a **fault** has no row yet (`snapshot` nil, no error), and fills itself on first access;
/// - **loaded**, it holds its row as last read or saved (`snapshot`);
/// - **inserted**, it is new and its row exists only in the context (`isInserted`) until a save gives it one;
/// - **deleted** is a mark on any of those (`isDeleted`), which a save carries out and a rollback or undo takes
///   back;
/// - **gone**, its row was not found or could not be read (`error`): reads give defaults and nil, and
///   `existingObject(with:)` throws the error.
struct ObjectState {
    /// The row as last read or saved; nil for a fault, a new object and a gone one.
    private(set) var snapshot: RowSnapshot?
    /// Why the row could not be had; nil unless gone.
    private(set) var error: ContextError?
    private(set) var isInserted = false
    private(set) var isDeleted = false

    /// No row read yet, and none to read for an inserted object.
    var isFault: Bool { snapshot == nil && !isInserted && error == nil }

    /// A fault filled, or a row read again (a refresh, a merge, a save's write): the object holds `snapshot`.
    mutating func load(_ snapshot: RowSnapshot) {
        self.snapshot = snapshot
        error = nil
    }

    /// The row is not there (or could not be read): the object is gone, with `error` saying why.
    mutating func fail(_ error: ContextError) {
        self.error = error
    }

    /// Back to a fault: the row is read again on next access.
    mutating func refault() {
        snapshot = nil
        error = nil
    }

    /// The row held is dropped (it is stale): the next access reads it again. A gone object stays gone.
    mutating func forgetRow() {
        snapshot = nil
    }

    /// The row is back (an undo restored it): the error goes, and the object reads its row on next access.
    mutating func recover() {
        error = nil
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
