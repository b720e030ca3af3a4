/// A hash table from object IDs to small values: a context's registry of objects and the row cache's index.
///
/// Both are touched on every fault and every object made, where `Dictionary` spends most of its time hashing: its
/// per-process SipHash costs about 90 instructions for an 8-byte key, four times per fault served by the row cache.
/// This table hashes an ID with one multiply (Fibonacci hashing of the key's group of sixteen, mixed with a
/// per-process random value, so a store's keys cannot be chosen to collide; see `slot(of:)`) and probes linearly.
/// A removal leaves a marker (a tombstone) that lookups step over and inserts reuse, so it costs one lookup: the
/// objects of a fetch are released together, and shifting entries back (looking at the rest of each run) was most
/// of what unregistering them cost. The markers count toward the load, at most half the slots (keys that come in no runs, a screen's rows picked
/// by their order, met long clusters at three quarters); when live keys and markers reach it, the table is rebuilt
/// without markers, at twice the size only if the live keys fill a quarter of it. A removed key whose next slot is
/// empty leaves no marker, and takes any markers just before it with it.
struct ObjectIDTable<Value>: Sequence, ExpressibleByDictionaryLiteral {
    /// A slot: a key and its value, or a marker key (`ObjectIDTable.empty`, `.removed`) and no value. The marker
    /// lives in the key, so a probe compares one pair of words per slot and reads no separate tag.
    fileprivate struct Entry {
        var key: ObjectID
        var value: Value?
    }

    /// Marker keys (`ObjectID.marker`): key 0 for a slot never used, 1 for one whose entry was removed. Inserts
    /// refuse a marker.
    private static var empty: ObjectID { .marker(0) }
    private static var removed: ObjectID { .marker(1) }

    private var entries: ContiguousArray<Entry>
    /// `64 - log2(entries.count)`: the top bits of the mixed key pick the slot.
    private var shift: UInt64
    private(set) var count = 0
    /// Slots holding a removal's marker.
    private var markers = 0
    /// How many times the table was rebuilt (grown or cleared of markers): for tests.
    private(set) var rebuilds = 0

    /// Mixed into every key: chosen once per process, and kept in each table so that a lookup does not go through
    /// the lazily made global's once-check.
    private let mix: UInt64

    init() {
        entries = []
        shift = 64
        mix = ObjectIDTableMix.value
    }

    /// A table that holds `minimumCapacity` entries before it grows.
    init(minimumCapacity: Int) {
        self.init()
        reserveCapacity(minimumCapacity)
    }

    init(dictionaryLiteral elements: (ObjectID, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }

    var isEmpty: Bool { count == 0 }

    /// The slots the table has (a value for `Dictionary.capacity`'s purpose: what storage it holds).
    var capacity: Int { entries.count / 2 }

    /// Keys run in groups of sixteen consecutive keys of one entity: a group's home is hashed, and its keys take the
    /// slots after it in order. Stores number rows consecutively and read them in runs (a fetch in key order, its
    /// objects released in the same order), so one group's entries share cache lines where hashing each key alone
    /// would send every one of a hundred thousand to a different line. Groups are spread as single keys were
    /// (consecutive groups fall evenly over the table), so dense keys still land on empty slots.
    @inline(__always) private func slot(of key: ObjectID) -> Int {
        let bits = UInt64(bitPattern: key.primaryKey)
        let group = ((bits >> 4) ^ (UInt64(truncatingIfNeeded: key.entityNumber) << 52)) ^ mix
        // Top bits of the mixed group pick the run's home; a smart shift gives 0 for the smallest table.
        let home = (group &* 0x9E37_79B9_7F4A_7C15) >> shift
        return Int(truncatingIfNeeded: (home &+ (bits & 15)) & UInt64(truncatingIfNeeded: entries.count &- 1))
    }

    /// Where `key` is, or where it would go: the first marker on its probe, else the empty slot that ends it. The
    /// table must have slots (`entries` not empty), and always has an empty one, so the probe ends.
    @inline(__always) private func position(of key: ObjectID) -> (index: Int, found: Bool) {
        let home = slot(of: key)
        return entries.withUnsafeBufferPointer { slots in
            let mask = slots.count &- 1
            var index = home
            var free = -1
            while true {
                let stored = slots[index].key
                if stored == key { return (index, true) }
                if stored.isMarker {
                    if stored.primaryKey == 0 { return (free >= 0 ? free : index, false) }
                    if free < 0 { free = index }
                }
                index = (index &+ 1) & mask
            }
        }
    }

    subscript(key: ObjectID) -> Value? {
        get {
            guard count > 0 else { return nil }
            let (index, found) = position(of: key)
            return found ? entries[index].value : nil
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            let (index, found) = probeForInsert(key)
            if found { entries[index].value = newValue } else { place(newValue, forKey: key, at: index) }
        }
    }

    /// The value `key` has, or else `make()`'s, placed in the slot the lookup's probe ended on: one walk of the
    /// table where a lookup followed by an insert takes two (a second walk only when the table must first grow or
    /// be cleared of markers). `make` must not use this table.
    @inline(__always)
    mutating func value(forKey key: ObjectID, orInsert make: () -> Value) -> (value: Value, inserted: Bool) {
        precondition(!key.isMarker, "an object ID's entity number is a model's")
        var index = -1
        if !entries.isEmpty {
            let (at, found) = position(of: key)
            if found, let value = entries[at].value { return (value, false) }
            index = at
        }
        let value = make()
        if needsRoom {
            makeRoom()
            index = position(of: key).index
        }
        place(value, forKey: key, at: index)
        return (value, true)
    }

    /// Whether one more key would fill more than half the slots (live keys and markers count alike).
    @inline(__always) private var needsRoom: Bool { entries.isEmpty || (count + markers + 1) * 2 > entries.count }

    /// Makes room for one more key first (so the slot found stays valid), then finds `key` or where it would go.
    @inline(__always)
    private mutating func probeForInsert(_ key: ObjectID) -> (index: Int, found: Bool) {
        precondition(!key.isMarker, "an object ID's entity number is a model's")
        if needsRoom { makeRoom() }
        return position(of: key)
    }

    /// Puts a new key in the free slot `probeForInsert` gave.
    @inline(__always)
    private mutating func place(_ value: Value, forKey key: ObjectID, at index: Int) {
        if entries[index].key == Self.removed { markers -= 1 }
        count += 1
        entries[index] = Entry(key: key, value: value)
    }

    @discardableResult
    mutating func removeValue(forKey key: ObjectID) -> Value? {
        guard count > 0 else { return nil }
        let (index, found) = position(of: key)
        guard found else { return nil }
        let removed = entries[index].value
        count -= 1
        let mask = entries.count - 1
        guard entries[(index + 1) & mask].key == Self.empty else {
            entries[index] = Entry(key: Self.removed, value: nil)
            markers += 1
            return removed
        }
        // No probe goes on past this slot, so it is empty again, and so are the markers just before it.
        entries[index] = Entry(key: Self.empty, value: nil)
        var previous = (index - 1) & mask
        while entries[previous].key == Self.removed {
            entries[previous].key = Self.empty
            markers -= 1
            previous = (previous - 1) & mask
        }
        return removed
    }

    /// Empties the table and gives back its storage.
    mutating func removeAll() {
        self = ObjectIDTable()
    }

    /// Makes room for `minimumCapacity` entries at once.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        var size = Swift.max(16, entries.count)
        while size / 2 < minimumCapacity { size *= 2 }
        if size > entries.count { return resize(to: size) }
        // Markers count toward the load too: a table big enough for the keys is rebuilt without them instead of
        // growing for them. As in `makeRoom`, the rebuild doubles the table when the keys asked for would fill more
        // than a quarter of it, so that the next rebuild is at least a quarter of the slots' inserts away: a window
        // of objects sliding through a context (a scroll, its batches made and released) would otherwise fill the
        // slots its rebuild freed with the next batch and rebuild again at every batch.
        if (minimumCapacity + markers) * 2 > size { resize(to: minimumCapacity * 4 > size ? size * 2 : size) }
    }

    /// Rebuilds the table without markers before an insert would pass half full: at twice the size when the live
    /// keys take a quarter of it or more, else at the same size.
    private mutating func makeRoom() {
        let size = Swift.max(16, entries.count)
        resize(to: entries.isEmpty || (count + 1) * 4 > size ? size * 2 : size)
    }

    private mutating func resize(to size: Int) {
        rebuilds += 1
        let old = entries
        entries = ContiguousArray(unsafeUninitializedCapacity: size) { slots, initialized in
            slots.initialize(repeating: Entry(key: Self.empty, value: nil))
            initialized = size
        }
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        markers = 0
        for entry in old where !entry.key.isMarker {
            let (index, _) = position(of: entry.key)
            entries[index] = entry
            count += 1
        }
    }

    var values: [Value] { compactMap { $0.value } }

    func makeIterator() -> some IteratorProtocol<(key: ObjectID, value: Value)> {
        entries.lazy.compactMap { entry -> (key: ObjectID, value: Value)? in
            guard !entry.key.isMarker, let value = entry.value else { return nil }
            return (entry.key, value)
        }.makeIterator()
    }
}

extension ObjectIDTable: Sendable where Value: Sendable {}
extension ObjectIDTable.Entry: Sendable where Value: Sendable {}

/// The per-process value `ObjectIDTable` mixes into keys.
private enum ObjectIDTableMix {
    static let value = UInt64.random(in: .min ... .max)
}
