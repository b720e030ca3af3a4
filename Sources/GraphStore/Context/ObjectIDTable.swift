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
    fileprivate enum Slot {
        case empty
        /// A removed entry: probes go on past it, inserts may take it.
        case removed
        case full(key: ObjectID, value: Value)
    }

    private var entries: ContiguousArray<Slot>
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

    /// Where `key` is, or where it would go: the first marker on its probe, else the empty slot that ends it.
    @inline(__always) private func position(of key: ObjectID) -> (index: Int, found: Bool) {
        let mask = entries.count - 1
        var index = slot(of: key)
        var free = -1
        while true {
            switch entries[index] {
            case .empty:
                return (free >= 0 ? free : index, false)
            case .removed:
                if free < 0 { free = index }
            case .full(let stored, _):
                if stored == key { return (index, true) }
            }
            index = (index + 1) & mask
        }
    }

    subscript(key: ObjectID) -> Value? {
        get {
            guard count > 0 else { return nil }
            let (index, found) = position(of: key)
            guard found, case .full(_, let value) = entries[index] else { return nil }
            return value
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            if entries.isEmpty || (count + markers + 1) * 2 > entries.count { makeRoom() }
            let (index, found) = position(of: key)
            if !found {
                if case .removed = entries[index] { markers -= 1 }
                count += 1
            }
            entries[index] = .full(key: key, value: newValue)
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: ObjectID) -> Value? {
        guard count > 0 else { return nil }
        let (index, found) = position(of: key)
        guard found, case .full(_, let removed) = entries[index] else { return nil }
        count -= 1
        let mask = entries.count - 1
        guard case .empty = entries[(index + 1) & mask] else {
            entries[index] = .removed
            markers += 1
            return removed
        }
        // No probe goes on past this slot, so it is empty again, and so are the markers just before it.
        entries[index] = .empty
        var previous = (index - 1) & mask
        while case .removed = entries[previous] {
            entries[previous] = .empty
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
        entries = ContiguousArray(repeating: .empty, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        markers = 0
        for case .full(let key, let value) in old {
            let (index, _) = position(of: key)
            entries[index] = .full(key: key, value: value)
            count += 1
        }
    }

    var values: [Value] { compactMap { $0.value } }

    func makeIterator() -> some IteratorProtocol<(key: ObjectID, value: Value)> {
        entries.lazy.compactMap { slot -> (key: ObjectID, value: Value)? in
            guard case .full(let key, let value) = slot else { return nil }
            return (key, value)
        }.makeIterator()
    }
}

extension ObjectIDTable: Sendable where Value: Sendable {}
extension ObjectIDTable.Slot: Sendable where Value: Sendable {}

/// The per-process value `ObjectIDTable` mixes into keys.
private enum ObjectIDTableMix {
    static let value = UInt64.random(in: .min ... .max)
}
