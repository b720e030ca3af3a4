/// Why a context operation failed. One line each, naming the objects concerned.
public enum ContextError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The row behind an object ID no longer exists (or never did).
    case objectNotFound(uri: String)
    /// Rows changed by someone else since this context read them: nothing was written.
    case optimisticLockingConflict(uris: [String])
    case unknownEntity(String)
    /// A fetch request that cannot run: a bad predicate, sort key, property or prefetch key path (the message names
    /// the entity and what is wrong).
    case invalidFetch(String)
    /// A predicate that cannot be compiled or evaluated against `entity`: the error says what and, for a parsed
    /// format string, at which character.
    case predicate(entity: String, PredicateError)
    /// A delete refused by Deny rules: nothing was written.
    case deleteDenied([DeletionPlan.Blocker])
    /// A statement SQLite refused or could not finish: its result codes, its words and the statement.
    case sqlite(SQLiteError)
    /// The store cannot be written or read as asked (opened read-only, locked, not writable…).
    case store(StoreError)
    /// The store holds what no store Faultline or Core Data writes can hold (a key counter that cannot count on,
    /// a version at its largest value…): what was found, and where.
    case damaged(String)
    /// Pending changes broke the model's rules: every failure found, in a stable order. Nothing was written and
    /// the context keeps its changes, so they can be fixed and saved again.
    case validation([ValidationFailure])
    /// Work the `progressHandler` asked to stop (a delete preview): nothing was changed.
    case cancelled(String)
    /// A fault fired after its context was released: nothing is left to read the row with (an object does not
    /// keep its context alive). Names the object.
    case contextReleased(object: String)

    public var description: String {
        switch self {
        case .objectNotFound(let uri): "no object for \(uri): its row does not exist"
        case .optimisticLockingConflict(let uris): "optimistic locking conflict: changed in the store since read: \(uris.joined(separator: ", "))"
        case .unknownEntity(let name): "the model has no entity '\(name)'"
        case .invalidFetch(let message): message
        case .predicate(let entity, let error): "\(entity): \(error.description)"
        case .deleteDenied(let blockers): "delete denied: " + blockers.map(\.description).joined(separator: "; ")
        case .sqlite(let error): error.description
        case .store(let error): error.description
        case .damaged(let message): message
        case .validation(let failures): "validation failed: " + failures.map(\.description).joined(separator: "; ")
        case .cancelled(let work): "\(work) cancelled"
        case .contextReleased(let object): "\(object) is a fault whose context was released: keep the context while its objects are read"
        }
    }

}
