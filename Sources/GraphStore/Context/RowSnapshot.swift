/// The persisted state of one row, as read from SQLite or written by a save: immutable, shared between contexts
/// through the coordinator's row cache.
///
/// A row read with chosen properties only (`FetchRequest.propertiesToFetch`) is *partial*: `loaded` names what it
/// holds, and the values it does not hold are placeholders (`.null`, nil) that must not be read as the row's.
///
/// A row is one allocation: its ID, version, values and to-one keys lie together in one block (`RowStorage`), so
/// reading a hundred thousand rows allocates a hundred thousand blocks, not three times as many.
public struct RowSnapshot: @unchecked Sendable {
    // Sendable by hand: `ManagedBuffer` is not, but the block is written only while it is made.
    let storage: RowStorage

    /// A row of the given values and keys.
    public init(objectID: ObjectID, version: Int64, values: [AttributeValue], toOneKeys: [ObjectID?], loaded: LoadedProperties? = nil) {
        self.init(objectID: objectID, version: version, attributeCount: values.count, toOneCount: toOneKeys.count, loaded: loaded) { valueSlots, keySlots in
            valueSlots.initialize(from: values, count: values.count)
            for (index, key) in toOneKeys.enumerated() { (keySlots + index).initialize(to: RowKey(key)) }
        }
    }

    /// A row over a block already filled (a new object's, at its save).
    init(storage: RowStorage) {
        self.storage = storage
    }

    /// A row whose values and keys `fill` writes in place: it must initialize all `attributeCount` values and all
    /// `toOneCount` keys.
    @inline(__always)
    init(objectID: ObjectID, version: Int64, attributeCount: Int, toOneCount: Int, loaded: LoadedProperties?,
         fill: (UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Void) {
        storage = RowStorage.make(RowStorage.Header(objectID: objectID, version: version, loaded: loaded,
                                                    attributeCount: attributeCount, toOneCount: toOneCount), fill: fill)
    }

    public var objectID: ObjectID { storage.objectID }
    /// `Z_OPT`: the row's version, checked by optimistic locking.
    public var version: Int64 { storage.version }
    /// One value per stored attribute, in the order of the entity's stored attributes (`EntityMapping`).
    public var values: Values { Values(storage: storage) }
    /// One destination per stored to-one relationship, in the order of the entity's stored to-ones.
    public var toOneKeys: Keys { Keys(storage: storage) }
    /// The properties a partial row holds; nil when it holds every stored attribute and to-one.
    public var loaded: LoadedProperties? { storage.loaded }

    /// Whether both are the same row read or written once (not merely equal values): a cache that kept a row hands
    /// back that very one.
    public func isIdentical(to other: RowSnapshot) -> Bool { storage === other.storage }

    /// The value of the stored attribute at `index`.
    @inline(__always) func value(at index: Int) -> AttributeValue { storage.value(at: index) }

    /// The destination of the to-one at `index`.
    @inline(__always) func toOneKey(at index: Int) -> ObjectID? { storage.key(at: index) }

    /// Whether the row holds every stored attribute and to-one.
    @inline(__always) public var isComplete: Bool { storage.isComplete }

    /// Whether the row holds the stored attribute at `index`.
    @inline(__always) func holdsAttribute(_ index: Int) -> Bool { loaded?.attributes[index] ?? true }

    /// Whether the row holds the to-one at `index`.
    @inline(__always) func holdsToOne(_ index: Int) -> Bool { loaded?.toOnes[index] ?? true }

    /// Whether the row holds the value `slot` names (a to-many or transient needs nothing from the row).
    func holds(_ slot: EntityMapping.Slot) -> Bool {
        switch slot {
        case .attribute(let index): holdsAttribute(index)
        case .toOne(let index): holdsToOne(index)
        case .toMany, .transient: true
        }
    }

    /// Whether the row holds everything `other` names (a complete row names everything).
    func holdsAll(of other: LoadedProperties?) -> Bool {
        guard let loaded else { return true }
        guard let other else { return false }
        return loaded.contains(other)
    }

    /// The two rows of one version as one: what either holds. Complete when together they hold everything.
    func merged(with other: RowSnapshot) -> RowSnapshot {
        guard let mine = loaded else { return self }
        guard let theirs = other.loaded else { return other }
        // One holding all the other holds (a message read in a list and again as a reply's quote) is kept as it
        // is: no new row, no new set of names.
        if mine.contains(theirs) { return self }
        if theirs.contains(mine) { return other }
        let union = mine.union(theirs)
        var values = Array(self.values)
        for index in values.indices where !mine.attributes[index] && theirs.attributes[index] { values[index] = other.value(at: index) }
        var keys = Array(toOneKeys)
        for index in keys.indices where !mine.toOnes[index] && theirs.toOnes[index] { keys[index] = other.toOneKey(at: index) }
        return RowSnapshot(objectID: objectID, version: version, values: values, toOneKeys: keys, loaded: union.isEverything ? nil : union)
    }

    /// A row's values, in the order of the entity's stored attributes.
    public struct Values: RandomAccessCollection, @unchecked Sendable {
        let storage: RowStorage
        public var startIndex: Int { 0 }
        public var endIndex: Int { storage.attributeCount }
        public subscript(index: Int) -> AttributeValue { storage.value(at: index) }
    }

    /// A row's to-one destinations, in the order of the entity's stored to-ones.
    public struct Keys: RandomAccessCollection, @unchecked Sendable {
        let storage: RowStorage
        public var startIndex: Int { 0 }
        public var endIndex: Int { storage.toOneCount }
        public subscript(index: Int) -> ObjectID? { storage.key(at: index) }
    }
}

/// A to-one key as a row keeps it: a destination's ID, or none. Sixteen bytes where `ObjectID?` takes twenty-four
/// (its nil flag pads to a word): "none" is `ObjectID.marker(0)`, which no key a row holds can be.
struct RowKey {
    private let raw: ObjectID

    @inline(__always) init(_ id: ObjectID?) {
        guard let id else {
            raw = .marker(0)
            return
        }
        precondition(!id.isMarker, "a to-one key's entity number is a model's")
        raw = id
    }

    @inline(__always) var id: ObjectID? { raw.isMarker ? nil : raw }
}

/// The block behind a `RowSnapshot`: the row's ID, version and counts in the header, then its values, then its
/// to-one keys. Written only while no snapshot holds it (while it is made, or as a new object's `NewRow`, which alone
/// holds it until the save names it and hands it to the snapshot), so the snapshots that share it can cross threads.
///
/// The block is counted in words, not in values: the keys (sixteen bytes each) follow the values (twenty-four) with
/// nothing between them and nothing after, where slots of a value's size would round the keys up to whole values,
/// and a message's row (four values, five keys) would take a 256-byte block instead of a 240-byte one.
final class RowStorage: ManagedBuffer<RowStorage.Header, UInt64> {
    struct Header {
        // Variable only for `NewRow`, which names its block's row at the save, while no snapshot shares it.
        var objectID: ObjectID
        var version: Int64
        let loaded: LoadedProperties?
        private let attributes: Int32
        /// The to-one count, bit-inverted (negative) when `loaded` is set: whether the row is complete is a sign to
        /// test, where testing the reference means copying it out, a retain and a release on every fault served
        /// from the cache; and a separate flag would pad the header by a word.
        private let toOnesAndCompleteness: Int32

        init(objectID: ObjectID, version: Int64, loaded: LoadedProperties?, attributeCount: Int, toOneCount: Int) {
            self.objectID = objectID
            self.version = version
            self.loaded = loaded
            // A model's counts: far below Int32's range (a row of 2^31 values could not be made anyway).
            self.attributes = Int32(attributeCount)
            self.toOnesAndCompleteness = loaded == nil ? Int32(toOneCount) : ~Int32(toOneCount)
        }

        var attributeCount: Int { Int(attributes) }
        var toOneCount: Int { Int(toOnesAndCompleteness >= 0 ? toOnesAndCompleteness : ~toOnesAndCompleteness) }
        /// Whether `loaded` is nil.
        var isComplete: Bool { toOnesAndCompleteness >= 0 }
    }

    /// Words the values and keys take. (Both strides are whole words.)
    private static func words(_ header: Header) -> Int {
        (header.attributeCount * MemoryLayout<AttributeValue>.stride + header.toOneCount * MemoryLayout<RowKey>.stride)
            / MemoryLayout<UInt64>.stride
    }

    @inline(__always)
    static func make(_ header: Header, fill: (UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Void) -> RowStorage {
        let buffer = create(minimumCapacity: words(header)) { _ in header }
        let storage = unsafeDowncast(buffer, to: RowStorage.self)
        storage.withUnsafeMutablePointerToElements { words in
            let values = UnsafeMutableRawPointer(words).bindMemory(to: AttributeValue.self, capacity: header.attributeCount)
            let keys = UnsafeMutableRawPointer(values + header.attributeCount).bindMemory(to: RowKey.self, capacity: header.toOneCount)
            fill(values, keys)
        }
        return storage
    }

    /// The header, and where the values and the keys of an initialized block lie.
    @inline(__always)
    private func withParts<Result>(
        _ body: (UnsafeMutablePointer<Header>, UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Result
    ) -> Result {
        withUnsafeMutablePointers { header, words in
            let values = UnsafeMutableRawPointer(words).assumingMemoryBound(to: AttributeValue.self)
            let keys = UnsafeMutableRawPointer(values + header.pointee.attributeCount).assumingMemoryBound(to: RowKey.self)
            return body(header, values, keys)
        }
    }

    // The header is read through its pointer: `ManagedBuffer.header` is a stored class property, and reading it
    // costs a runtime exclusivity check (`swift_beginAccess`) on every value read. The header is written only by
    // `create`, so no access can conflict.
    @inline(__always) var objectID: ObjectID { withUnsafeMutablePointerToHeader { $0.pointee.objectID } }
    @inline(__always) var version: Int64 { withUnsafeMutablePointerToHeader { $0.pointee.version } }
    @inline(__always) var loaded: LoadedProperties? { withUnsafeMutablePointerToHeader { $0.pointee.loaded } }
    @inline(__always) var isComplete: Bool { withUnsafeMutablePointerToHeader { $0.pointee.isComplete } }
    @inline(__always) var attributeCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.attributeCount } }
    @inline(__always) var toOneCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.toOneCount } }

    @inline(__always)
    func value(at index: Int) -> AttributeValue {
        withParts { header, values, _ in
            precondition(index >= 0 && index < header.pointee.attributeCount, "attribute index out of range")
            return values[index]
        }
    }

    @inline(__always)
    func key(at index: Int) -> ObjectID? {
        withParts { header, _, keys in
            precondition(index >= 0 && index < header.pointee.toOneCount, "to-one index out of range")
            return keys[index].id
        }
    }

    /// A block of its own with the same header, values and keys (for `NewRow`'s copy on write).
    func copy() -> RowStorage {
        withParts { header, values, keys in
            let attributeCount = header.pointee.attributeCount
            let toOneCount = header.pointee.toOneCount
            return RowStorage.make(header.pointee) { newValues, newKeys in
                // Value by value: `initialize(from:count:)` copies through the runtime's generic array copy, a
                // value-witness call per value, several times what the loop's inlined copies cost.
                for index in 0..<attributeCount { (newValues + index).initialize(to: values[index]) }
                newKeys.initialize(from: keys, count: toOneCount)
            }
        }
    }

    /// Writes a value in place. Only `NewRow` calls it, on a block no snapshot shares.
    @inline(__always)
    func setValue(_ value: AttributeValue, at index: Int) {
        withParts { header, values, _ in
            precondition(index >= 0 && index < header.pointee.attributeCount, "attribute index out of range")
            values[index] = value
        }
    }

    /// Writes a to-one key in place. Only `NewRow` calls it, on a block no snapshot shares.
    @inline(__always)
    func setKey(_ key: ObjectID?, at index: Int) {
        withParts { header, _, keys in
            precondition(index >= 0 && index < header.pointee.toOneCount, "to-one index out of range")
            keys[index] = RowKey(key)
        }
    }

    /// Names the row the block holds. Only `NewRow` calls it, on a block no snapshot shares.
    func setIdentity(_ objectID: ObjectID, version: Int64) {
        withUnsafeMutablePointerToHeader { header in
            header.pointee.objectID = objectID
            header.pointee.version = version
        }
    }

    deinit {
        // The keys are plain values; only the attribute values hold references.
        _ = withParts { header, values, _ in values.deinitialize(count: header.pointee.attributeCount) }
    }
}

/// An inserted object's row until its save: every stored attribute (defaults until set) and every to-one key, kept
/// in the very block (`RowStorage`) that becomes the saved row's snapshot, so a save binds it and hands it on with
/// nothing copied or freed. Copy-on-write: a new object starts by sharing its entity's row of defaults, and undo's
/// copies share the block; whoever writes first while another holds it writes to a copy. A block is written only
/// while this row alone holds it, so a snapshot's block never changes under it.
struct NewRow {
    private var storage: RowStorage

    /// A row sharing `snapshot`'s block until the first write.
    init(sharing snapshot: RowSnapshot) {
        storage = snapshot.storage
    }

    var attributeCount: Int { storage.attributeCount }
    var toOneCount: Int { storage.toOneCount }

    @inline(__always) func value(at index: Int) -> AttributeValue { storage.value(at: index) }
    @inline(__always) func key(at index: Int) -> ObjectID? { storage.key(at: index) }

    @inline(__always) mutating func setValue(_ value: AttributeValue, at index: Int) {
        makeUnique()
        storage.setValue(value, at: index)
    }

    @inline(__always) mutating func setKey(_ key: ObjectID?, at index: Int) {
        makeUnique()
        storage.setKey(key, at: index)
    }

    /// Every value, in slot order (for the few readers that walk them all).
    var values: [AttributeValue] { (0..<attributeCount).map(value(at:)) }
    /// Every to-one key, in slot order.
    var keys: [ObjectID?] { (0..<toOneCount).map(key(at:)) }

    /// The saved row: this block, named `id` at version 1, shared with the snapshot from now on.
    mutating func snapshot(as id: ObjectID) -> RowSnapshot {
        makeUnique()
        storage.setIdentity(id, version: 1)
        return RowSnapshot(storage: storage)
    }

    @inline(__always) private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }
}
