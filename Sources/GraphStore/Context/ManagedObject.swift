import Collections
import Foundation

/// One object of a context: a row of the store, a fault until a persistent value is read.
///
/// ```swift
/// let student = try context.existingObject(with: id)
/// student.isFault                                  // true: nothing read yet
/// student.value(forKey: "name") as? String         // fires the fault: row cache, else one statement by key
/// student.setValue("Ana", forKey: "name")          // recorded; written by the next save
/// ```
/// Objects belong to the context that made them and must stay on its thread or actor.
open class ManagedObject: Hashable, CustomStringConvertible {
    // Unchecked (see below): both are read whenever an object is made, read or let go.
    @exclusivity(unchecked) public final internal(set) var objectID: ObjectID
    /// The context that made the object; nil once that context is gone.
    public final var context: ObjectContext? { handle.context }
    /// The context's handle, shared by all its objects (see `ContextHandle`): a strong reference to it costs what any
    /// retain costs, where a `weak` reference to the context would give it a side table and every object a weak
    /// reference to form, load and destroy.
    private final let handle: ContextHandle
    public final let mapping: EntityMapping

    // The stored properties read on every property access are marked `@exclusivity(unchecked)`: an object never
    // leaves its context's thread or actor (it is not `Sendable`), and nothing here hands out one of them `inout`
    // while calling code that could touch it again, so the runtime check of each access (`swift_beginAccess`, about
    // 80 instructions, several per read) guards against nothing. The compiler still checks what it can see.

    /// Persisted values; nil while the object is a fault (or has never been saved).
    var snapshot: RowSnapshot? { state.snapshot }
    /// What the object changed since its last save, or was given as a new object; nil until the first such change.
    /// Kept apart so that the many objects that are only read (a fetch's, a fault's) carry one reference for all
    /// of it, made and let go of with the object, where six fields cost six.
    @exclusivity(unchecked) private final var edits: ObjectEdits?

    /// Values set since the last save, by attribute slot.
    var attributeChanges: SlotChanges<AttributeValue> {
        _read { if let edits { yield edits.attributeChanges } else { yield SlotChanges() } }
        _modify {
            if let edits {
                yield &edits.attributeChanges
            } else {
                var fresh = SlotChanges<AttributeValue>()
                yield &fresh
                if !fresh.isEmpty { madeEdits().attributeChanges = fresh }
            }
        }
    }
    /// Destinations set since the last save, by to-one slot.
    var toOneChanges: SlotChanges<ObjectID?> {
        _read { if let edits { yield edits.toOneChanges } else { yield SlotChanges() } }
        _modify {
            if let edits {
                yield &edits.toOneChanges
            } else {
                var fresh = SlotChanges<ObjectID?>()
                yield &fresh
                if !fresh.isEmpty { madeEdits().toOneChanges = fresh }
            }
        }
    }
    /// An inserted object's row as it will be saved (`NewRow`): every stored attribute (defaults until set) and
    /// every to-one, in the block that becomes the saved row's snapshot. Nil for a persisted object.
    var newRow: NewRow? {
        get { edits?.newRow }
        set { if edits != nil || newValue != nil { madeEdits().newRow = newValue } }
    }
    /// An inserted object's value at a stored attribute slot.
    @inline(__always) final func newValue(at index: Int) -> AttributeValue {
        edits?.newRow?.value(at: index) ?? mapping.defaultValues[index]
    }
    /// An inserted object's to-one key at a slot.
    @inline(__always) final func newKey(at index: Int) -> ObjectID? {
        edits?.newRow?.key(at: index) ?? nil
    }
    /// Sets an inserted object's value, in place (the row is copied first only while someone else shares it).
    @inline(__always) final func setNewValue(_ value: AttributeValue, at index: Int) {
        madeEdits().newRow?.setValue(value, at: index)
    }
    /// Sets an inserted object's to-one key, in place as `setNewValue` does.
    @inline(__always) final func setNewKey(_ key: ObjectID?, at index: Int) {
        madeEdits().newRow?.setKey(key, at: index)
    }
    /// An inserted object's row as saved under `id`: its own block, handed on with nothing copied.
    final func newRowSnapshot(as id: ObjectID) -> RowSnapshot? {
        edits?.newRow?.snapshot(as: id)
    }
    /// Which attributes of an inserted object were set, one bit per attribute slot (slots past 63 count as set
    /// when their value differs from the default).
    var newValuesSet: UInt64 {
        get { edits?.newValuesSet ?? 0 }
        set { if edits != nil || newValue != 0 { madeEdits().newValuesSet = newValue } }
    }
    var transientValues: [String: AttributeValue] {
        _read { if let edits { yield edits.transientValues } else { yield [:] } }
        _modify {
            if let edits {
                yield &edits.transientValues
            } else {
                var fresh: [String: AttributeValue] = [:]
                yield &fresh
                if !fresh.isEmpty { madeEdits().transientValues = fresh }
            }
        }
    }

    /// The object's edits, made if it has none yet.
    @inline(__always) private final func madeEdits() -> ObjectEdits {
        if let edits { return edits }
        let made = ObjectEdits()
        edits = made
        return made
    }

    /// The change recorded for the attribute at `index`, if any: the read path's look, which makes nothing.
    @inline(__always) final func attributeChange(at index: Int) -> AttributeValue? { edits?.attributeChanges[index] }
    /// The change recorded for the to-one at `index`, if any (`.some(nil)`: set to nil).
    @inline(__always) final func toOneChange(at index: Int) -> ObjectID?? {
        guard let edits else { return nil }
        return edits.toOneChanges[index]
    }

    /// To-many relationship states, by to-many slot (nil: a relationship fault with nothing recorded).
    @exclusivity(unchecked) var toManyStates = ToManyStates()
    /// Where the object is in its life: its row, inserted, deleted, gone (see `ObjectState`). Declared here, after
    /// the other words and before the flags, so that the flags below share the state's last word: the fields are
    /// laid out in this order, and a message (fifteen typed properties) then fits a 240-byte block, not a 256-byte one.
    @exclusivity(unchecked) var state = ObjectState()
    /// Set when a prefetch filled this object (it was a fault until then) while the context tracks prefetch use;
    /// the first read of one of its attributes or to-ones clears it and tells the context. A flag, so that reads of
    /// every other object cost one test.
    @exclusivity(unchecked) var isUntouchedPrefetch = false
    /// Whether the context holds this object in `changedObjects` (spares a hash lookup on every change).
    @exclusivity(unchecked) var isTrackedAsChanged = false
    /// Set once the object enters its context's registry (it may have left it since): only then does its
    /// `deinit` need to look there.
    @exclusivity(unchecked) var isRegistered = false
    /// Why the row behind the object could not be had (it no longer exists, or could not be read); nil otherwise.
    public final var faultError: ContextError? { state.error }

    /// Made by contexts only (`insert`, `object(with:)`, fetches); subclasses inherit it and declare no initializer.
    public required init(objectID: ObjectID, context: borrowing ObjectContext, mapping: EntityMapping) {
        self.objectID = objectID
        self.handle = context.handle
        self.mapping = mapping
    }

    deinit {
        guard isRegistered, let context = handle.unretainedContext else { return }
        let id = objectID
        let address = Unmanaged.passUnretained(self).toOpaque()
        context._withUnsafeGuaranteedRef { $0.objectWillDisappear(id, address: address) }
    }

    public final var entity: Entity { mapping.entity }
    public final var entityName: String { mapping.name }

    /// Whether no persistent value has been read yet (an inserted object is never a fault).
    public final var isFault: Bool { state.isFault }
    /// Whether the object holds only some of its persistent values (fetched with `propertiesToFetch`): reading
    /// any other, changing it or saving it first reads the rest of its row, one statement (a partial fault).
    public final var isPartial: Bool { state.isPartial }
    /// The names of the attributes and to-ones a partial object holds; nil unless `isPartial`.
    public final var loadedPropertyNames: [String]? { state.partial?.loaded?.names }
    public final var isInserted: Bool { state.isInserted }
    public final var isDeleted: Bool { state.isDeleted }
    public final var isUpdated: Bool { !state.isInserted && !state.isDeleted && hasPersistentChanges }

    /// Whether the object has changes its next save would write.
    public final var hasChanges: Bool { state.isInserted || state.isDeleted || hasPersistentChanges }

    var hasPersistentChanges: Bool {
        !attributeChanges.isEmpty || !toOneChanges.isEmpty || toManyStates.values.contains { $0.hasChanges }
    }

    /// The Core Data URI of the object: `x-coredata://<store UUID>/<Entity>/p<pk>`.
    public final var uriRepresentation: String { context?.coordinator.uri(for: objectID) ?? objectID.description }

    /// Called by `ObjectContext.delete(_:)` just before the object is marked deleted, as Core Data's
    /// `prepareForDeletion()` is: a subclass overrides it to keep values other objects copy from it current, for
    /// example a chat's last message. Changes made here belong to the same undo step as the delete. Objects a
    /// Cascade rule takes along are not passed through it: they go with the object that owns them (most of them
    /// never loaded; the save deletes them set-based). Does nothing by default.
    ///
    /// ```swift
    /// override func prepareForDeletion() {
    ///     if let chat = lastMessageOf { chat.lastMessage = previousMessage }
    /// }
    /// ```
    open func prepareForDeletion() {}

    /// The entity a subclass stands for (typed API): its Swift type name unless overridden.
    open class var entityName: String { String(describing: self) }

    open var description: String {
        "<\(entityName) \(uriRepresentation)\(isFault ? " (fault)" : isPartial ? " (partial)" : "")>"
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: key-value access

    /// The value of any key: an attribute as its Swift value (`String`, `Int64`, `Double`, `Bool`, `Date`, `Data`,
    /// `UUID`, `URL`, `Decimal`) or nil; a to-one as `ManagedObject?`; a to-many as `[ManagedObject]` (in order when
    /// ordered, by object ID otherwise).
    public final func value(forKey key: String) -> Any? {
        switch slot(key) {
        case .attribute, .transient:
            return attributeValue(forKey: key).swiftValue
        case .toOne:
            return object(forKey: key)
        case .toMany:
            return objects(forKey: key)
        }
    }

    /// A Swift value as an attribute's value; a value of a type no attribute holds is a programming error, as in
    /// Core Data, rather than a value silently turned into text.
    private static func attributeValue(_ value: Any?, as type: AttributeType, key: String) -> AttributeValue {
        guard let converted = AttributeValue(swiftValue: value, as: type) else {
            preconditionFailure("'\(key)' holds \(type) values; a \(value.map { String(describing: Swift.type(of: $0)) } ?? "nil") cannot be stored in it")
        }
        return converted
    }

    /// Sets any key from a Swift value (see `value(forKey:)`); nil clears an attribute or a to-one.
    public final func setValue(_ value: Any?, forKey key: String) {
        switch slot(key) {
        case .attribute(let index):
            setAttributeValue(Self.attributeValue(value, as: mapping.attributes[index].type, key: key), forKey: key)
        case .transient:
            let type = entity.attribute(named: key)?.type ?? .string
            setAttributeValue(Self.attributeValue(value, as: type, key: key), forKey: key)
        case .toOne:
            setObject(value as? ManagedObject, forKey: key)
        case .toMany:
            setObjects((value as? [ManagedObject]) ?? Array((value as? Set<ManagedObject>) ?? []), forKey: key)
        }
    }

    /// An attribute's value; reading a persistent attribute of a fault fires the fault.
    public final func attributeValue(forKey key: String) -> AttributeValue {
        attributeValue(ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func attributeValue(_ resolved: ResolvedKey) -> AttributeValue {
        let key = resolved.key
        switch resolved.slot {
        case .attribute(let index):
            if state.isInserted { return newValue(at: index) }
            if let changed = attributeChange(at: index) { return changed }
            if let value = state.heldValue(at: index) {
                noteRead()
                return value
            }
            fulfill(key: key)
            return state.row?.value(at: index) ?? .null
        case .transient:
            return transientValues[key] ?? .null
        default:
            preconditionFailure("'\(key)' is a relationship of \(entityName), not an attribute")
        }
    }

    public final func setAttributeValue(_ value: AttributeValue, forKey key: String) {
        setAttributeValue(value, ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func setAttributeValue(_ value: AttributeValue, _ resolved: ResolvedKey) {
        let key = resolved.key
        switch resolved.slot {
        case .attribute(let index):
            // A new object is tracked from its insert on; only a persisted one needs the context's attention.
            if state.isInserted {
                setNewValue(value, at: index)
                if index < 64 { newValuesSet |= 1 << UInt64(index) }
                return
            }
            guard let context else { return }
            // As in Core Data, changing a fault fires it first: the version read now is the one the save checks.
            fulfill(key: key)
            context.willChange(self)
            attributeChanges[index] = value
        case .transient:
            transientValues[key] = value
        default:
            preconditionFailure("'\(key)' is a relationship of \(entityName), not an attribute")
        }
    }

    /// The destination of a to-one, as a fault when not yet registered: no SQL beyond this object's own fault.
    public final func object(forKey key: String) -> ManagedObject? {
        object(ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func object(_ resolved: ResolvedKey) -> ManagedObject? {
        let key = resolved.key
        guard case .toOne(let index) = resolved.slot else { preconditionFailure("'\(key)' is not a to-one relationship of \(entityName)") }
        return destinationID(ofToOne: index).flatMap { context?.object(with: $0) }
    }

    /// Sets a to-one, updating the inverse on both old and new destinations.
    public final func setObject(_ destination: ManagedObject?, forKey key: String) {
        setObject(destination, ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func setObject(_ destination: ManagedObject?, _ resolved: ResolvedKey) {
        let key = resolved.key
        guard case .toOne(let index) = resolved.slot else { preconditionFailure("'\(key)' is not a to-one relationship of \(entityName)") }
        context?.setToOne(self, index: index, to: destination, maintainInverse: true)
    }

    /// The objects of a to-many; the first access fires the relationship fault (one query for IDs only).
    public final func objects(forKey key: String) -> [ManagedObject] {
        objects(ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func objects(_ resolved: ResolvedKey) -> [ManagedObject] {
        let key = resolved.key
        guard case .toMany(let index) = resolved.slot else { preconditionFailure("'\(key)' is not a to-many relationship of \(entityName)") }
        guard let context else { return [] }
        var ids = context.members(of: self, toMany: index)
        // Unordered members come back by object ID, as documented, not in the order they happened to be added.
        if !mapping.toManys[index].description.isOrdered { ids.sort() }
        return ids.map { context.object(with: $0) }
    }

    /// How many objects a to-many holds; fires the relationship fault, as Core Data's `count` does, unless the
    /// fetch that read this object counted the relationship (`FetchRequest.countsToFetch`) and nothing changed it
    /// since.
    public final func count(forKey key: String) -> Int {
        guard case .toMany(let index) = slot(key) else { preconditionFailure("'\(key)' is not a to-many relationship of \(entityName)") }
        if let known = toManyStates[index]?.knownCount { return known }
        return context?.members(of: self, toMany: index).count ?? 0
    }

    /// Adds an object to a to-many (at the end when ordered) without firing the relationship fault.
    public final func add(_ object: ManagedObject, toKey key: String) {
        guard case .toMany(let index) = slot(key) else { preconditionFailure("'\(key)' is not a to-many relationship of \(entityName)") }
        context?.link(self, toMany: index, object, adding: true, maintainInverse: true)
    }

    /// Removes an object from a to-many without firing the relationship fault.
    public final func remove(_ object: ManagedObject, fromKey key: String) {
        guard case .toMany(let index) = slot(key) else { preconditionFailure("'\(key)' is not a to-many relationship of \(entityName)") }
        context?.link(self, toMany: index, object, adding: false, maintainInverse: true)
    }

    /// Replaces a to-many's contents (in this order when ordered).
    public final func setObjects(_ objects: [ManagedObject], forKey key: String) {
        setObjects(objects, ResolvedKey(slot: slot(key), key: key))
    }

    @usableFromInline final func setObjects(_ objects: [ManagedObject], _ resolved: ResolvedKey) {
        let key = resolved.key
        guard case .toMany(let index) = resolved.slot else { preconditionFailure("'\(key)' is not a to-many relationship of \(entityName)") }
        context?.replaceMembers(of: self, toMany: index, with: objects)
    }

    /// Values changed since the last save, by key (to-ones as `ObjectID?`, to-manys as the changed member IDs).
    /// The names of the attributes, to-ones and to-manys changed since the last save (not an inserted object's).
    var changedKeyNames: Set<String> {
        var names = Set<String>()
        for (index, _) in attributeChanges.entries { names.insert(mapping.attributes[index].name) }
        for (index, _) in toOneChanges.entries { names.insert(mapping.toOnes[index].name) }
        for (index, state) in toManyStates where state.hasChanges { names.insert(mapping.toManys[index].name) }
        return names
    }

    public final func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        if state.isInserted {
            // A new object's changes are the attributes set and the to-ones that point somewhere.
            for (index, value) in (newRow?.values ?? []).enumerated()
            where index < 64 ? newValuesSet & (1 << UInt64(index)) != 0 : value != mapping.defaultValues[index] {
                result[mapping.attributes[index].name] = value.swiftValue as Any
            }
            for (index, key) in (newRow?.keys ?? []).enumerated() where key != nil { result[mapping.toOnes[index].name] = key as Any }
        }
        for (index, value) in attributeChanges.entries { result[mapping.attributes[index].name] = value.swiftValue as Any }
        for (index, value) in toOneChanges.entries { result[mapping.toOnes[index].name] = value as Any }
        for (index, state) in toManyStates where state.hasChanges { result[mapping.toManys[index].name] = state.addedOnce }
        return result
    }

    /// The values as last saved (or read), for the given keys (all persistent attributes and to-ones when nil).
    public final func committedValues(forKeys keys: [String]? = nil) -> [String: AttributeValue] {
        if !state.isInserted {
            fulfill(keys?.first.map(FaultTrigger.key) ?? .committedValues)
            // A fault may have found a partial row that holds the first key: the values wanted need the whole row.
            if isPartial { fulfill(.committedValues) }
        }
        var result: [String: AttributeValue] = [:]
        for (index, attribute) in mapping.attributes.enumerated() where keys?.contains(attribute.name) ?? true {
            result[attribute.name] = snapshot?.values[index] ?? .null
        }
        for (index, toOne) in mapping.toOnes.enumerated() where keys?.contains(toOne.name) ?? true {
            result[toOne.name] = snapshot?.toOneKeys[index].map { .integer($0.primaryKey) } ?? .null
        }
        return result
    }

    // MARK: internals

    func slot(_ key: String) -> EntityMapping.Slot {
        guard let slot = mapping.slot(forKey: key) else { preconditionFailure("\(entityName) has no key '\(key)'") }
        return slot
    }

    /// The key and slot a typed property's wrapper stands for. Each entity remembers the answer per wrapper key
    /// (by the address of its text, a constant of the program), so a typed read looks up no name.
    @usableFromInline final func resolve(wrapper key: PropertyKey) -> ResolvedKey {
        if let resolved = mapping.resolvedWrapper(key) { return resolved }
        let name = key.string
        let resolved = ResolvedKey(slot: slot(name), key: name)
        mapping.remember(resolved, forWrapper: key)
        return resolved
    }

    /// A typed attribute's value (`@Stored`). When the object holds the value in its row and has nothing else to
    /// say about it (not inserted, no edits, no prefetch use to note), it is read from the row at the slot the wrapper
    /// resolved to before, with no key text copied; otherwise as `attributeValue(forKey:)` reads it.
    @usableFromInline final func storedValue(wrapper key: PropertyKey) -> AttributeValue {
        if case .attribute(let index)? = mapping.wrapperSlot(key), answersFromRow, let value = state.heldValue(at: index) {
            return value
        }
        return attributeValue(resolve(wrapper: key))
    }

    /// Whether a value the row holds is the answer to a read, with nothing else to do: not inserted, no edits, no
    /// prefetch use to note.
    @inline(__always) private var answersFromRow: Bool { edits == nil && !isUntouchedPrefetch && !state.isInserted }

    /// A typed to-one's destination (`@ToOne`), by the same fast path as `storedValue(wrapper:)` for its key.
    @usableFromInline final func toOneObject(wrapper key: PropertyKey) -> ManagedObject? {
        if case .toOne(let index)? = mapping.wrapperSlot(key), answersFromRow, let held = state.heldKey(at: index) {
            guard let destination = held else { return nil }
            return context?.object(with: destination)
        }
        return object(resolve(wrapper: key))
    }

    /// A save inserted the object's row: it takes its permanent ID and the row, and its own new values go.
    func didInsert(as snapshot: RowSnapshot) {
        objectID = snapshot.objectID
        state.didInsert(snapshot)
        guard let edits else { return }
        // Its own values are the saved row's now. The box goes unless it holds something else: a hundred thousand
        // saved inserts keep no empty boxes.
        if edits.attributeChanges.isEmpty, edits.toOneChanges.isEmpty, edits.transientValues.isEmpty {
            self.edits = nil
        } else {
            edits.newRow = nil
            edits.newValuesSet = 0
        }
    }

    func fulfill(key: String) {
        fulfill(.key(key))
    }

    /// Makes sure the object holds its whole row: a fault reads it, and so does a partial object (a partial
    /// fault), whatever it holds.
    func fulfill(_ trigger: FaultTrigger) {
        noteRead()
        guard !state.holdsWholeRow, !state.isInserted, !state.isGone else { return }
        guard let context = handle.unretainedContext else {
            // Nothing can read the row any more. A fault says why its values read as nothing (`faultError`); a
            // partial object keeps the values it holds.
            if state.isFault { state.fail(.contextReleased(object: "\(entityName) \(objectID)")) }
            return
        }
        // The row cache's part runs no caller code: on the context unretained. The rest (observers, SQL) may let go
        // of the context, so it runs on a strong reference held to its end.
        let cached = context._withUnsafeGuaranteedRef { $0.serveFaultFromCache(self, trigger: trigger) }
        if case .done = cached { return }
        let strong = context.takeUnretainedValue()
        withExtendedLifetime(strong) { strong.finishFault(self, trigger: trigger, after: cached) }
    }

    /// A property of the object is being read: a prefetch that filled it was of use.
    @inline(__always) private func noteRead() {
        if isUntouchedPrefetch {
            isUntouchedPrefetch = false
            context?.untouchedPrefetches.remove(objectID)
        }
    }

    func destinationID(ofToOne index: Int) -> ObjectID? {
        if state.isInserted { return newKey(at: index) }
        if let changed = toOneChange(at: index) { return changed }
        if let key = state.heldKey(at: index) {
            noteRead()
            return key
        }
        fulfill(key: mapping.toOnes[index].name)
        return state.row?.toOneKey(at: index) ?? nil
    }
}
extension AttributeValue {
    /// The plain Swift value (`String`, `Int64`, `Double`, `Bool`, `Date`, `Data`, `UUID`, `URL`, `Decimal`), or nil.
    public var swiftValue: Any? {
        switch self {
        case .null: nil
        case .integer(let value): value
        case .double(let value): value
        case .decimal(let value): value
        case .string(let value): value
        case .boolean(let value): value
        case .date(let value): value
        case .data(let value): value
        case .uuid(let value): value
        case .uri(let value): value
        }
    }

    /// Wraps a Swift value for an attribute of `type` (integers of any width, floats, strings…); nil gives `.null`.
    /// The value for a Swift value of a supported type (nil, `AttributeValue`, integers, floating-point numbers,
    /// `Decimal`, `String`, `Date`, `Data`, `UUID`, `URL`); nil for any other type, which no attribute can hold.
    public init?(swiftValue value: Any?, as type: AttributeType) {
        switch value {
        case nil: self = .null
        case let value as AttributeValue: self = value
        case let value as Bool where type == .boolean: self = .boolean(value)
        case let value as any BinaryInteger:
            // Clamped: a UInt64 above Int64.max must not trap.
            self = type == .boolean ? .boolean(Int64(clamping: value) != 0) : type == .double || type == .float ? .double(Double(value)) : .integer(Int64(clamping: value))
        case let value as Double: self = type == .decimal ? .decimal(Decimal(value)) : .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Decimal: self = .decimal(value)
        case let value as String: self = .string(value)
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let value as UUID: self = .uuid(value)
        case let value as URL: self = .uri(value)
        default: return nil
        }
    }
}

/// An object's unsaved changes and, while it is new, the row it will be saved as (see `ManagedObject.edits`).
final class ObjectEdits {
    // Unchecked for the reason `ManagedObject` gives: an object and its edits never leave their context's thread.
    @exclusivity(unchecked) var attributeChanges = SlotChanges<AttributeValue>()
    @exclusivity(unchecked) var toOneChanges = SlotChanges<ObjectID?>()
    @exclusivity(unchecked) var newRow: NewRow?
    @exclusivity(unchecked) var newValuesSet: UInt64 = 0
    @exclusivity(unchecked) var transientValues: [String: AttributeValue] = [:]
}

