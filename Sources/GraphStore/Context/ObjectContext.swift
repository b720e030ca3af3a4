import Collections
import Foundation

/// A scratch pad of objects on a coordinator: uniquing, faulting, change tracking and saving.
///
/// ```swift
/// let context = ObjectContext(coordinator: coordinator, name: "main")
/// let chat = context.insert("Chat")
/// chat.setValue("Friday plans", forKey: "title")
/// try context.save()
/// ```
/// A context is not `Sendable`: make it on the thread or actor that uses it (a main context for the UI, others
/// for background work), as Core Data's confinement rule asks; the compiler then keeps its objects there too.
public final class ObjectContext {
    public let coordinator: PersistentStoreCoordinator
    public let id: ContextID
    /// How this context's objects reach it (`ManagedObject.context`).
    let handle = ContextHandle()
    /// The coordinator's row cache and event hub, unretained (the context holds the coordinator, which holds them):
    /// every fault calls each once, and a call through a property chain pays a retain and a release around it.
    let rowCacheReference: Unmanaged<RowCache>
    let eventsReference: Unmanaged<EventHub>

    // `registry`, `batchedFaults` and `untouchedPrefetches` are read on every fault and every object made, and
    // `changedObjects`, `insertedList`, `linkChanges` and `undoHistory` on every insert and change: they are
    // `@exclusivity(unchecked)` for the reason `ManagedObject` gives (a context is confined to one thread or actor).

    /// Every registered object, held weakly unless it has changes (so browsing many rows keeps few alive).
    @exclusivity(unchecked) var registry = ObjectIDTable<RegisteredObject>()
    /// Persisted objects with unsaved changes, held strongly until saved or rolled back.
    @exclusivity(unchecked) var changedObjects: OrderedDictionary<ObjectID, ManagedObject> = [:]
    /// Objects inserted since the last save, in insertion order, held strongly. Their temporary keys only grow
    /// (`makeTemporaryID`), so the list is sorted by key and an ID is found by binary search: inserting needs no
    /// hashing. Inserted objects deleted again stay here, flagged, until the save or rollback drops them.
    @exclusivity(unchecked) var insertedList: [ManagedObject] = []
    /// Join-table links to write: a link (in the table's primary-key column order) → true to insert, false to delete.
    @exclusivity(unchecked) var linkChanges: OrderedDictionary<LinkKey, Bool> = [:]

    /// How a save settles rows that changed in the store since this context read them: `.error` (the default)
    /// fails the save and lists them.
    public var mergePolicy = MergePolicy.error
    /// Batched faults, off (0) by default so that statement counts stay Core Data's: when an object fault misses
    /// the row cache, up to this many of its unfired siblings are read with it in one statement. Siblings are the
    /// other members of the to-many whose fault produced the object, the destinations of the same to-one among rows
    /// read together, or the other results of a fetch that returned faults without values.
    public var faultBatchSize: Int {
        get { batchedFaults.size }
        set { batchedFaults.size = newValue }
    }
    /// The batched-fault loader and the sibling groups it knows.
    @exclusivity(unchecked) var batchedFaults = BatchedFaults()
    /// Undo and redo steps, when `undoLevels` > 0.
    @exclusivity(unchecked) var undoHistory: UndoHistory?
    /// Saved steps undone (or redone) whose reverse the next save writes.
    var pendingReversals: [PendingReversal] = []
    /// What the last save deleted and nullified (nil when it deleted nothing).
    public internal(set) var lastDeletion: DeletionPlan?
    /// Hears how far long work has come: saves (their set-based deletes included), the write-back of undo and redo
    /// after a save, and `deletionPlan(for:)`. Called on the working thread, at most once per `progressInterval`,
    /// after a statement or from inside a long one; it must not use this context or its store. Returning false
    /// cancels a delete preview (which then throws `ContextError.cancelled`); saves run to the end. Nil (the
    /// default): nothing is timed or counted.
    public var progressHandler: ((WorkProgress) -> Bool)?
    /// The least time between two calls of `progressHandler` (and before the first).
    public var progressInterval: Duration = .milliseconds(100)
    /// How many doomed objects of an entity `deletionPlan(for:)` lists to count the references to them (see
    /// `DeletionCounter.listingLimit`); tests lower it to check both ways of counting.
    var deletionListingLimit = DeletionCounter.defaultListingLimit
    /// Whether prefetched objects are remembered for `takePrefetchUse()` (off by default: the list is only
    /// emptied by that call). The browser turns it on to warn of prefetches nobody used.
    public var tracksPrefetchUse = false {
        didSet {
            if !tracksPrefetchUse {
                prefetchedObjects = [:]
                untouchedPrefetches = []
            }
        }
    }
    /// Objects prefetches filled since `takePrefetchUse()` last ran, by key path, while `tracksPrefetchUse` is on.
    /// IDs, not objects: holding the objects would keep alive what would otherwise go, and change the faults seen.
    var prefetchedObjects: [String: [ObjectID]] = [:]
    /// Which of those nobody has read yet. An object that went away unread and comes back reads through a fault,
    /// which removes it here too.
    @exclusivity(unchecked) var untouchedPrefetches: Set<ObjectID> = []

    struct LinkKey: Hashable {
        let table: String
        let first: ObjectID
        let second: ObjectID
    }

    public init(coordinator: PersistentStoreCoordinator, name: String? = nil) {
        self.coordinator = coordinator
        self.rowCacheReference = .passUnretained(coordinator.rowCache)
        self.eventsReference = .passUnretained(coordinator.events)
        self.id = coordinator.makeContextID(name: name)
        handle.context = self
    }

    deinit {
        // First, before the stored properties go: objects let go of by `changedObjects` and `insertedList` as they
        // are destroyed, and any the caller still holds, find no context from now on.
        handle.context = nil
    }

    public var model: ObjectModel { coordinator.model }

    /// Whether a save would write anything.
    public var hasChanges: Bool {
        insertedList.contains { !$0.state.isDeleted } || changedObjects.values.contains { $0.hasChanges } || !linkChanges.isEmpty
            || !pendingReversals.isEmpty
    }

    public var insertedObjects: [ManagedObject] { insertedList.filter { !$0.state.isDeleted } }
    public var updatedObjects: [ManagedObject] { changedObjects.values.filter(\.isUpdated) }
    public var deletedObjects: [ManagedObject] { changedObjects.values.filter { $0.isDeleted && !$0.isInserted } }

    /// Objects registered now (alive), in no particular order.
    public var registeredObjects: [ManagedObject] { registry.values.map(\.object) + insertedObjects }

    public func uri(for id: ObjectID) -> String { coordinator.uri(for: id) }

    // MARK: objects by ID

    /// A new object of `entity` with a temporary ID, inserted into the context.
    public func insert(_ entity: String) -> ManagedObject {
        guard let mapping = coordinator.mapping(forEntity: entity) else { preconditionFailure("the model has no entity '\(entity)'") }
        return insert(mapping)
    }

    func insert(_ mapping: EntityMapping) -> ManagedObject {
        precondition(!mapping.entity.isAbstract, "cannot insert an object of abstract entity '\(mapping.name)'")
        if undoHistory != nil { noteUndoableChange() }
        let object = mapping.objectClass.init(objectID: coordinator.makeTemporaryID(entityNumber: mapping.number), context: self, mapping: mapping)
        object.state.insert()
        // Shared until first set: copy-on-write gives the object its own row then.
        object.newRow = NewRow(sharing: mapping.defaultRow)
        insertedList.append(object)
        return object
    }

    /// The object for an ID: the registered one, or a new fault. No I/O.
    ///
    /// A temporary ID names an object inserted since the last save, also one deleted again (it keeps its identity
    /// until the save or rollback lets it go). Any other temporary ID — of an object a save or rollback has let
    /// go — gives an unregistered fault whose row is never found: temporary IDs are never registered, so no entry
    /// can outlive its object.
    public func object(with id: ObjectID) -> ManagedObject {
        if id.isTemporary {
            if let object = loadedObject(id) { return object }
            let mapping = coordinator.mapping(forEntityNumber: id.entityNumber)
            let object = mapping.objectClass.init(objectID: id, context: self, mapping: mapping)
            object.state.fail(.objectNotFound(uri: coordinator.uri(for: id)))
            return object
        }
        // One probe of the registry finds the object or places the new one (making it touches no registry).
        let (entry, made) = registry.value(forKey: id) {
            let mapping = coordinator.mapping(forEntityNumber: id.entityNumber)
            return RegisteredObject(retaining: mapping.objectClass.init(objectID: id, context: self, mapping: mapping))
        }
        guard made else { return entry.object }
        // The registry holds its objects unretained: the one retain taken when it was made passes to the caller.
        let object = entry.takeObject()
        object.isRegistered = true
        return object
    }

    /// The object for an ID if it is registered in this context; nil otherwise. No I/O.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        if id.isTemporary { return insertedObject(for: id) }
        return registry[id]?.object
    }

    /// The live inserted object with a temporary ID, by binary search of `insertedList`.
    func insertedObject(for id: ObjectID) -> ManagedObject? {
        guard let index = Self.position(of: id, in: insertedList) else { return nil }
        let object = insertedList[index]
        return object.state.isDeleted ? nil : object
    }

    /// Where the object with temporary `id` sits in `list`, a list of inserted objects in insertion order (keys
    /// allocated later are more negative).
    static func position(of id: ObjectID, in list: [ManagedObject]) -> Int? {
        position(of: id, count: list.count) { list[$0].objectID }
    }

    /// The same search over the objects' IDs.
    static func position(of id: ObjectID, in ids: [ObjectID]) -> Int? {
        position(of: id, count: ids.count) { ids[$0] }
    }

    private static func position(of id: ObjectID, count: Int, idAt: (Int) -> ObjectID) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            let found = idAt(middle)
            if found.primaryKey == id.primaryKey { return found == id ? middle : nil }
            if found.primaryKey > id.primaryKey { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The object for an ID, filled from the row cache or the store; throws when its row does not exist.
    public func existingObject(with id: ObjectID) throws(ContextError) -> ManagedObject {
        let object = object(with: id)
        if object.isInserted { return object }
        if object.isFault { fulfillFault(object, trigger: .existingObject) }
        if let error = object.faultError { throw error }
        return object
    }

    // MARK: registry

    func register(_ object: ManagedObject) {
        object.isRegistered = true
        registry[object.objectID] = RegisteredObject(object)
    }

    /// Called from an object's `deinit`: forget its registry entry (unless the ID now names another object).
    func objectWillDisappear(_ id: ObjectID, address: UnsafeMutableRawPointer) {
        // Inserted objects are never in the registry; otherwise one removal, put back in the rare case that the ID
        // now names another object.
        guard !id.isTemporary, let entry = registry.removeValue(forKey: id) else { return }
        if !entry.refers(to: address) {
            registry[id] = entry
        } else if registry.isEmpty, registry.capacity > Self.registryCapacityKeptWhenEmpty {
            // A dictionary never shrinks: once the last of many objects (a large fetch's) is gone, its storage is
            // given back, and later objects work in a table that fits the cache again.
            registry = [:]
        }
    }

    /// The largest registry storage kept once no object is registered.
    static let registryCapacityKeptWhenEmpty = 1_024

    /// Records that `object` is about to change, holding it strongly until saved.
    func willChange(_ object: ManagedObject) {
        if undoHistory != nil { noteUndoableChange() }
        // An inserted object is held by `insertedList` already; a fault for the temporary ID of one a save or
        // rollback let go of has no row to change.
        guard !object.state.isInserted, !object.isTrackedAsChanged, !object.objectID.isTemporary else { return }
        object.isTrackedAsChanged = true
        changedObjects[object.objectID] = object
    }

    /// Empties `changedObjects`; the only way it is emptied, so the objects' flags stay true to it.
    func clearChangedObjects() {
        for object in changedObjects.values { object.isTrackedAsChanged = false }
        changedObjects.removeAll()
    }

    func stopTrackingChanges(of object: ManagedObject) {
        guard object.isTrackedAsChanged else { return }
        object.isTrackedAsChanged = false
        changedObjects[object.objectID] = nil
    }

    func unregister(_ id: ObjectID) {
        registry[id] = nil
    }

    func forgetAll() {
        registry.removeAll()
        clearChangedObjects()
        insertedList.removeAll()
        linkChanges.removeAll()
        pendingReversals.removeAll()
    }
}

/// The registry's unretained reference: it does not keep an unchanged object alive, and it costs less than `weak`,
/// which would give every object a side table. It never dangles: an object removes its own entry in `deinit`,
/// and every other removal (reset, re-registration) only drops the entry.
struct RegisteredObject {
    private let reference: Unmanaged<ManagedObject>

    init(_ object: ManagedObject) { reference = .passUnretained(object) }

    /// An entry for an object just made, holding one retain of it until `takeObject()` hands that to the caller.
    init(retaining object: ManagedObject) { reference = .passRetained(object) }

    var object: ManagedObject { reference.takeUnretainedValue() }

    /// The object of an entry made with `init(retaining:)`, with the retain it held.
    func takeObject() -> ManagedObject { reference.takeRetainedValue() }

    func refers(to address: UnsafeMutableRawPointer) -> Bool { reference.toOpaque() == address }
}

/// An object's way back to its context, one per context, held strongly by each of its objects: it names the context
/// until the context's `deinit` clears it, so an object that outlives its context finds none, as with `weak`.
///
/// Unretained and unchecked, which is safe because a context and its objects are confined to one thread or actor, so
/// nothing else can tear the context down while one of its objects reads the handle, and the context's `deinit`
/// clears the handle before anything else goes. Only code that runs no caller code calls through it unretained
/// (`unretainedContext`); code that can (observers, SQL) holds the context strongly first, since caller code may let
/// go of the last reference to it.
final class ContextHandle {
    @exclusivity(unchecked) private var reference: Unmanaged<ObjectContext>?

    var context: ObjectContext? {
        get { reference?.takeUnretainedValue() }
        set { reference = newValue.map { .passUnretained($0) } }
    }

    /// The context, unretained, for the calls every object makes (its release, a fault served from the row cache),
    /// where a retain and a release around each would be two atomic operations of the few hundred instructions the
    /// whole call costs: called through `_withUnsafeGuaranteedRef`, only for work that runs no caller code. Work
    /// that can (observers, SQL) runs on `takeUnretainedValue()`, a strong reference held to its end.
    var unretainedContext: Unmanaged<ObjectContext>? { reference }
}

