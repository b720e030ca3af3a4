/// The persisted state of one row, as read from SQLite or written by a save: immutable, shared between contexts
/// through the coordinator's row cache.
///
/// A row read with chosen properties only (`FetchRequest.propertiesToFetch`) is *partial*: `loaded` names what it
/// holds, and the values it does not hold are placeholders (`.null`, nil) that must not be read as the row's.
///
/// A row lies in a block (`RowStorage`) with the rows read beside it: its ID, version and counts, then its values,
/// then its to-one keys. The rows one statement returns share blocks (`RowArena`), so reading a hundred thousand
/// rows allocates a few thousand blocks, not a hundred thousand; a row made on its own (a save's, a merge's) has a
/// block of its own. A block, and every value of its rows, lives while any of its rows does.
public struct RowSnapshot: @unchecked Sendable {
    // Sendable by hand: `ManagedBuffer` is not, but a row is written only while it is made, before any snapshot of
    // it exists; rows appended to its block later lie in memory no earlier row covers.
    let storage: RowStorage
    /// Where the row begins in its block, in words.
    let start: Int

    /// A row of the given values and keys, in a block of its own.
    public init(objectID: ObjectID, version: Int64, values: [AttributeValue], toOneKeys: [ObjectID?], loaded: LoadedProperties? = nil) {
        self.init(objectID: objectID, version: version, attributeCount: values.count, toOneCount: toOneKeys.count, loaded: loaded) { valueSlots, keySlots in
            valueSlots.initialize(from: values, count: values.count)
            for (index, key) in toOneKeys.enumerated() { (keySlots + index).initialize(to: RowKey(key)) }
        }
    }

    /// The row at `start` of a block already filled.
    init(storage: RowStorage, start: Int) {
        self.storage = storage
        self.start = start
    }

    /// A row in a block of its own whose values and keys `fill` writes in place: it must initialize all
    /// `attributeCount` values and all `toOneCount` keys.
    @inline(__always)
    init(objectID: ObjectID, version: Int64, attributeCount: Int, toOneCount: Int, loaded: LoadedProperties?,
         fill: (UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Void) {
        let header = RowStorage.Header(objectID: objectID, version: version, loaded: loaded, attributeCount: attributeCount, toOneCount: toOneCount)
        storage = RowStorage.make(words: RowStorage.words(header))
        start = storage.append(header, fill: fill)
    }

    public var objectID: ObjectID { storage.header(start).pointee.objectID }
    /// `Z_OPT`: the row's version, checked by optimistic locking.
    public var version: Int64 { storage.header(start).pointee.version }
    /// One value per stored attribute, in the order of the entity's stored attributes (`EntityMapping`).
    public var values: Values { Values(storage: storage, start: start) }
    /// One destination per stored to-one relationship, in the order of the entity's stored to-ones.
    public var toOneKeys: Keys { Keys(storage: storage, start: start) }
    /// The properties a partial row holds; nil when it holds every stored attribute and to-one.
    public var loaded: LoadedProperties? { storage.header(start).pointee.loaded }

    /// Whether both are the same row read or written once (not merely equal values): a cache that kept a row hands
    /// back that very one.
    public func isIdentical(to other: RowSnapshot) -> Bool { storage === other.storage && start == other.start }

    /// The value of the stored attribute at `index`.
    @inline(__always) func value(at index: Int) -> AttributeValue { storage.value(at: index, row: start) }

    /// The destination of the to-one at `index`.
    @inline(__always) func toOneKey(at index: Int) -> ObjectID? { storage.key(at: index, row: start) }

    /// Whether the row holds every stored attribute and to-one.
    @inline(__always) public var isComplete: Bool { storage.header(start).pointee.isComplete }

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
        let start: Int
        public var startIndex: Int { 0 }
        public var endIndex: Int { storage.header(start).pointee.attributeCount }
        public subscript(index: Int) -> AttributeValue { storage.value(at: index, row: start) }
    }

    /// A row's to-one destinations, in the order of the entity's stored to-ones.
    public struct Keys: RandomAccessCollection, @unchecked Sendable {
        let storage: RowStorage
        let start: Int
        public var startIndex: Int { 0 }
        public var endIndex: Int { storage.header(start).pointee.toOneCount }
        public subscript(index: Int) -> ObjectID? { storage.key(at: index, row: start) }
    }
}

/// Where the rows one statement returns are made: blocks shared by consecutive rows. The first row gets a block of
/// exactly its size, so a statement that returns one row (a fault by key) allocates what a row of its own would;
/// each later block has room for as many rows as the statement has made so far (so 1, 1, 2, 4, 8… rows), up to
/// `maximumWords`. A statement of two rows thus wastes at most one row's room, and one of many at most half a block.
///
/// A block lives while any of its rows does, and with it every row's values (their texts and data): a row the row
/// cache keeps after its neighbours were evicted keeps them too, at most `maximumWords` of rows (4 KB, about
/// eighteen message rows) and what their values point to.
struct RowArena {
    private var block: RowStorage?
    private var rows = 0
    /// The largest block made, in words (4 KB: eighteen rows of a message's size).
    static let maximumWords = 512

    /// A row whose values and keys `fill` writes in place, as `RowSnapshot.init(…fill:)` describes.
    @inline(__always)
    mutating func make(objectID: ObjectID, version: Int64, attributeCount: Int, toOneCount: Int, loaded: LoadedProperties?,
                       fill: (UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Void) -> RowSnapshot {
        let header = RowStorage.Header(objectID: objectID, version: version, loaded: loaded, attributeCount: attributeCount, toOneCount: toOneCount)
        let words = RowStorage.words(header)
        let made = rows
        rows &+= 1
        if let block, block.room >= words {
            return RowSnapshot(storage: block, start: block.append(header, fill: fill))
        }
        let capacity = made == 0 ? words : max(words, min(Self.maximumWords, words &* made))
        let fresh = RowStorage.make(words: capacity)
        block = fresh
        return RowSnapshot(storage: fresh, start: fresh.append(header, fill: fill))
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

/// The block behind `RowSnapshot`s: rows one after another, each its header (ID, version, counts), then its values,
/// then its to-one keys. A row is written only while it is appended (or, for a new object's `NewRow`, while that row
/// alone holds the block), so the snapshots that share a block can cross threads.
///
/// Rows are counted in words, not in values: the keys (sixteen bytes each) follow the values (twenty-four) with
/// nothing between them, where slots of a value's size would round the keys up to whole values.
final class RowStorage: ManagedBuffer<RowStorage.Extent, UInt64> {
    /// A row's header.
    struct Header {
        // Variable only for `NewRow`, which names its row at the save, while no snapshot shares the block.
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

    /// The block's own header: words written so far, and words it has room for.
    struct Extent {
        var used: Int
        let capacity: Int
    }

    /// Words a row's header takes.
    static let headerWords = MemoryLayout<Header>.stride / MemoryLayout<UInt64>.stride

    /// Words a row takes: its header, values and keys. (All three strides are whole words.)
    @inline(__always) static func words(_ header: Header) -> Int {
        headerWords + (header.attributeCount * MemoryLayout<AttributeValue>.stride + header.toOneCount * MemoryLayout<RowKey>.stride)
            / MemoryLayout<UInt64>.stride
    }

    /// An empty block with room for `words` words of rows.
    static func make(words: Int) -> RowStorage {
        unsafeDowncast(create(minimumCapacity: words) { _ in Extent(used: 0, capacity: words) }, to: RowStorage.self)
    }

    // The block's header is read through its pointer: `ManagedBuffer.header` is a stored class property, and reading
    // it costs a runtime exclusivity check (`swift_beginAccess`) on every access.
    /// Words left for rows.
    @inline(__always) var room: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity - $0.pointee.used } }
    /// Words of rows the block was made with room for.
    var capacityInWords: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// Appends a row whose values and keys `fill` writes in place; returns where it begins. The caller checked `room`.
    @inline(__always)
    func append(_ header: Header, fill: (UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Void) -> Int {
        let words = Self.words(header)
        return withUnsafeMutablePointers { extent, elements in
            let start = extent.pointee.used
            precondition(words <= extent.pointee.capacity - start, "a row appended to a block without room for it")
            let row = UnsafeMutableRawPointer(elements + start)
            row.bindMemory(to: Header.self, capacity: 1).initialize(to: header)
            let values = (row + MemoryLayout<Header>.stride).bindMemory(to: AttributeValue.self, capacity: header.attributeCount)
            let keys = UnsafeMutableRawPointer(values + header.attributeCount).bindMemory(to: RowKey.self, capacity: header.toOneCount)
            fill(values, keys)
            extent.pointee.used = start + words
            return start
        }
    }

    /// The header of the row at `start`.
    @inline(__always) func header(_ start: Int) -> UnsafeMutablePointer<Header> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0 + start).assumingMemoryBound(to: Header.self) }
    }

    /// The header of the row at `start`, and where its values and keys lie.
    @inline(__always)
    private func withParts<Result>(
        row start: Int, _ body: (UnsafeMutablePointer<Header>, UnsafeMutablePointer<AttributeValue>, UnsafeMutablePointer<RowKey>) -> Result
    ) -> Result {
        withUnsafeMutablePointerToElements { elements in
            let row = UnsafeMutableRawPointer(elements + start)
            let header = row.assumingMemoryBound(to: Header.self)
            let values = (row + MemoryLayout<Header>.stride).assumingMemoryBound(to: AttributeValue.self)
            let keys = UnsafeMutableRawPointer(values + header.pointee.attributeCount).assumingMemoryBound(to: RowKey.self)
            return body(header, values, keys)
        }
    }

    @inline(__always)
    func value(at index: Int, row start: Int) -> AttributeValue {
        withParts(row: start) { header, values, _ in
            precondition(index >= 0 && index < header.pointee.attributeCount, "attribute index out of range")
            return values[index]
        }
    }

    @inline(__always)
    func key(at index: Int, row start: Int) -> ObjectID? {
        withParts(row: start) { header, _, keys in
            precondition(index >= 0 && index < header.pointee.toOneCount, "to-one index out of range")
            return keys[index].id
        }
    }

    /// The row at `start`, copied into a block of its own (for `NewRow`'s copy on write).
    func copy(row start: Int) -> RowStorage {
        withParts(row: start) { header, values, keys in
            let attributeCount = header.pointee.attributeCount
            let toOneCount = header.pointee.toOneCount
            let copy = RowStorage.make(words: Self.words(header.pointee))
            _ = copy.append(header.pointee) { newValues, newKeys in
                // Value by value: `initialize(from:count:)` copies through the runtime's generic array copy, a
                // value-witness call per value, several times what the loop's inlined copies cost.
                for index in 0..<attributeCount { (newValues + index).initialize(to: values[index]) }
                newKeys.initialize(from: keys, count: toOneCount)
            }
            return copy
        }
    }

    /// Writes a value in place. Only `NewRow` calls it, on a block no snapshot shares.
    @inline(__always)
    func setValue(_ value: AttributeValue, at index: Int, row start: Int) {
        withParts(row: start) { header, values, _ in
            precondition(index >= 0 && index < header.pointee.attributeCount, "attribute index out of range")
            values[index] = value
        }
    }

    /// Writes a to-one key in place. Only `NewRow` calls it, on a block no snapshot shares.
    @inline(__always)
    func setKey(_ key: ObjectID?, at index: Int, row start: Int) {
        withParts(row: start) { header, _, keys in
            precondition(index >= 0 && index < header.pointee.toOneCount, "to-one index out of range")
            keys[index] = RowKey(key)
        }
    }

    /// Names the row at `start`. Only `NewRow` calls it, on a block no snapshot shares.
    func setIdentity(_ objectID: ObjectID, version: Int64, row start: Int) {
        let header = header(start)
        header.pointee.objectID = objectID
        header.pointee.version = version
    }

    deinit {
        // Row by row: each header's `loaded` and each row's values hold references; the keys are plain values.
        withUnsafeMutablePointers { extent, elements in
            var start = 0
            let used = extent.pointee.used
            while start < used {
                let row = UnsafeMutableRawPointer(elements + start)
                let header = row.assumingMemoryBound(to: Header.self)
                let words = Self.words(header.pointee)
                (row + MemoryLayout<Header>.stride).assumingMemoryBound(to: AttributeValue.self).deinitialize(count: header.pointee.attributeCount)
                header.deinitialize(count: 1)
                start += words
            }
        }
    }
}

/// An inserted object's row until its save: every stored attribute (defaults until set) and every to-one key, kept
/// in the very block (`RowStorage`) that becomes the saved row's snapshot, so a save binds it and hands it on with
/// nothing copied or freed. Copy-on-write: a new object starts by sharing its entity's row of defaults, and undo's
/// copies share the block; whoever writes first while another holds it writes to a copy (a block of its own). A
/// block is written only while this row alone holds it, so a snapshot's row never changes under it.
struct NewRow {
    private var storage: RowStorage
    private var start: Int

    /// A row sharing `snapshot`'s block until the first write.
    init(sharing snapshot: RowSnapshot) {
        storage = snapshot.storage
        start = snapshot.start
    }

    var attributeCount: Int { storage.header(start).pointee.attributeCount }
    var toOneCount: Int { storage.header(start).pointee.toOneCount }

    @inline(__always) func value(at index: Int) -> AttributeValue { storage.value(at: index, row: start) }
    @inline(__always) func key(at index: Int) -> ObjectID? { storage.key(at: index, row: start) }

    @inline(__always) mutating func setValue(_ value: AttributeValue, at index: Int) {
        makeUnique()
        storage.setValue(value, at: index, row: start)
    }

    @inline(__always) mutating func setKey(_ key: ObjectID?, at index: Int) {
        makeUnique()
        storage.setKey(key, at: index, row: start)
    }

    /// Every value, in slot order (for the few readers that walk them all).
    var values: [AttributeValue] { (0..<attributeCount).map(value(at:)) }
    /// Every to-one key, in slot order.
    var keys: [ObjectID?] { (0..<toOneCount).map(key(at:)) }

    /// The saved row: this block, named `id` at version 1, shared with the snapshot from now on.
    mutating func snapshot(as id: ObjectID) -> RowSnapshot {
        makeUnique()
        storage.setIdentity(id, version: 1, row: start)
        return RowSnapshot(storage: storage, start: start)
    }

    @inline(__always) private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(row: start)
            start = 0
        }
    }
}
