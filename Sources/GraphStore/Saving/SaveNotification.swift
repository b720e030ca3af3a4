import Synchronization

/// What one save changed in the store, as other contexts need it to catch up: the IDs of the rows inserted,
/// updated and deleted, the committed values of inserted and updated rows, and the rows the store changed on its own
/// (derived counts its triggers keep, keys a delete cleared) whose new values it does not carry.
///
/// A coordinator hands one to each save observer after every successful save (`addSaveObserver`); another context
/// brings it in with `mergeChanges(fromContextDidSave:)`. It holds IDs and immutable snapshots only, so it may
/// cross threads and actors. `PersistentStoreCoordinator.changesFromOtherConnections()` makes one for what other
/// processes wrote (its `source` is nil).
public struct SaveNotification: Sendable {
    /// The saving context; nil for changes another connection (usually another process) made.
    public let source: ContextID?
    /// The store the changes are in (its `Z_UUID`): a context of another store ignores them.
    public let storeUUID: String
    public internal(set) var inserted: [ObjectID] = []
    public internal(set) var updated: [ObjectID] = []
    public internal(set) var deleted: [ObjectID] = []
    /// Rows whose values changed without the saver knowing them: re-read on next access.
    public internal(set) var refreshed: [ObjectID] = []
    /// Committed rows of `inserted` and `updated` objects, by ID (an updated row may be missing: then refreshed).
    public internal(set) var values: [ObjectID: RowSnapshot] = [:]
    /// The attributes and to-ones each updated object changed, by name.
    public internal(set) var changedKeys: [ObjectID: [String]] = [:]
    /// Objects whose to-many members may have changed (they gained or lost a member, or members moved): their
    /// relationship faults are re-read on next access.
    public internal(set) var relationshipOwners: Set<ObjectID> = []
    /// Set when the save rewrote rows wholesale (writing back undone saved steps): every object is refreshed.
    public internal(set) var refreshesEverything = false

    public init(source: ContextID?, storeUUID: String) {
        self.source = source
        self.storeUUID = storeUUID
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && relationshipOwners.isEmpty && !refreshesEverything
    }

    /// Every object the notification names, whatever happened to it.
    public var changedIDs: Set<ObjectID> {
        Set(inserted).union(updated).union(deleted).union(refreshed).union(relationshipOwners)
    }

    /// The entity numbers (`Z_ENT`) of every object named.
    public var entityNumbers: Set<Int> {
        Set(changedIDs.map(\.entityNumber))
    }
}

/// The callbacks a coordinator runs after each save.
final class SaveObservers: Sendable {
    typealias Observer = @Sendable (SaveNotification) -> Void

    private let observers = Mutex<[(token: EventHub.ObserverToken, call: Observer)]>([])
    private let count = Atomic<Int>(0)
    private let nextToken = Atomic<Int>(1)

    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

    func add(_ observer: @escaping Observer) -> EventHub.ObserverToken {
        let token = EventHub.ObserverToken(saveObserver: nextToken.add(1, ordering: .relaxed).oldValue)
        observers.withLock { list in
            list.append((token, observer))
            count.store(list.count, ordering: .releasing)
        }
        return token
    }

    func remove(_ token: EventHub.ObserverToken) {
        observers.withLock { list in
            list.removeAll { $0.token == token }
            count.store(list.count, ordering: .releasing)
        }
    }

    /// Calls every observer on this thread, outside the lock.
    func post(_ notification: SaveNotification) {
        let calls = observers.withLock { $0.map(\.call) }
        for call in calls { call(notification) }
    }
}

/// Collects the save notifications of a coordinator for a context that merges them when it chooses (a UI's main
/// loop between frames, an actor between jobs): saves on other threads only append here.
///
/// ```swift
/// let inbox = SaveInbox(coordinator: coordinator, excluding: main.id)
/// // … later, on the main context's thread:
/// for note in inbox.take() { main.mergeChanges(fromContextDidSave: note) }
/// ```
public final class SaveInbox: Sendable {
    /// The queue, in a class of its own so that the observer can hold it without holding the inbox.
    private final class Queue: Sendable {
        let notes = Mutex<[SaveNotification]>([])
    }

    private let queue = Queue()
    private let coordinator: PersistentStoreCoordinator
    private let token = Mutex<EventHub.ObserverToken?>(nil)

    /// Starts collecting every save of `coordinator` except those of the context `excluded` (its own), and, unless
    /// `includesOtherConnections` is false, the changes `changesFromOtherConnections()` finds.
    public init(coordinator: PersistentStoreCoordinator, excluding excluded: ContextID? = nil, includesOtherConnections: Bool = true) {
        self.coordinator = coordinator
        let added = coordinator.addSaveObserver { [queue] note in
            if note.source == nil {
                guard includesOtherConnections else { return }
            } else if note.source == excluded {
                return
            }
            queue.notes.withLock { $0.append(note) }
        }
        token.withLock { $0 = added }
    }

    deinit {
        if let token = token.withLock({ $0 }) { coordinator.removeSaveObserver(token) }
    }

    /// Adds a notification made elsewhere (changes found in another process's writes, say).
    public func append(_ notification: SaveNotification) {
        queue.notes.withLock { $0.append(notification) }
    }

    /// The notifications collected since the last call, oldest first.
    public func take() -> [SaveNotification] {
        queue.notes.withLock { notes in
            defer { notes.removeAll() }
            return notes
        }
    }

    /// Whether any notification waits.
    public var isEmpty: Bool { queue.notes.withLock { $0.isEmpty } }
}

/// How a save settles a conflict: a row it changes or deletes whose version (`Z_OPT`) moved since this context
/// read it, because another context or process saved it. The policy is applied inside the save's transaction,
/// against the row as it is then.
public enum MergePolicy: String, Sendable, CaseIterable {
    /// The save fails, writing nothing, and lists the conflicting objects (`ContextError.optimisticLockingConflict`).
    case error
    /// The store's row wins whole: the object's own changes (or its delete) are dropped, and it takes the row.
    case rollback
    /// The object wins whole: every stored property as this context holds it is written over the row, the
    /// other writer's changes to properties this context did not touch included.
    case overwrite
    /// Property by property, the store wins: changes to properties the other writer also changed are dropped,
    /// the rest are written.
    case storeTrump
    /// Property by property, the object wins: this context's changes are written, the other writer's changes to
    /// other properties stay.
    case objectTrump
}
