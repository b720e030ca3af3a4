/// A hash table from object IDs to small values: a context's registry of objects and the row cache's index.
///
/// Both are touched on every fault and every object made, where `Dictionary` spends most of its time hashing: its
/// per-process SipHash costs about 90 instructions for an 8-byte key, four times per fault served by the row cache.
/// This table hashes an ID with one multiply (Fibonacci hashing of the key's group of sixteen, mixed with a
/// per-process random value, so a store's keys cannot be chosen to collide; see `slot(of:)`), probes linearly, and
/// deletes by shifting the following entries back, so that it never fills with tombstones. At most half full:
/// keys that come in no runs (a screen's rows picked by their order) met long clusters at three quarters.
struct ObjectIDTable<Value>: Sequence, ExpressibleByDictionaryLiteral {
    private typealias Entry = (key: ObjectID, value: Value)

    private var entries: ContiguousArray<Entry?>
    /// `64 - log2(entries.count)`: the top bits of the mixed key pick the slot.
    private var shift: UInt64
    private(set) var count = 0

    /// Mixed into every key, chosen once per process.
    private static var mix: UInt64 { ObjectIDTableMix.value }

    init() {
        entries = []
        shift = 64
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
        let group = ((bits >> 4) ^ (UInt64(truncatingIfNeeded: key.entityNumber) << 52)) ^ Self.mix
        // Top bits of the mixed group pick the run's home; a smart shift gives 0 for the smallest table.
        let home = (group &* 0x9E37_79B9_7F4A_7C15) >> shift
        return Int(truncatingIfNeeded: (home &+ (bits & 15)) & UInt64(truncatingIfNeeded: entries.count &- 1))
    }

    /// Where `key` is, or the empty slot where it would go.
    @inline(__always) private func position(of key: ObjectID) -> (index: Int, found: Bool) {
        let mask = entries.count - 1
        var index = slot(of: key)
        while let entry = entries[index] {
            if entry.key == key { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    subscript(key: ObjectID) -> Value? {
        get {
            guard count > 0 else { return nil }
            let (index, found) = position(of: key)
            return found ? entries[index]?.value : nil
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            if entries.isEmpty || (count + 1) * 2 > entries.count { grow() }
            let (index, found) = position(of: key)
            entries[index] = (key, newValue)
            if !found { count += 1 }
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: ObjectID) -> Value? {
        guard count > 0 else { return nil }
        let (found, present) = position(of: key)
        guard present, let removed = entries[found] else { return nil }
        // Backward shift: each entry after the hole that may sit in it (its home slot is not between the hole and
        // it) moves into it, so every entry stays reachable from its home slot without tombstones.
        let mask = entries.count - 1
        var hole = found
        var index = (found + 1) & mask
        while let entry = entries[index] {
            let home = slot(of: entry.key)
            let distanceToEntry = (index - home) & mask
            let distanceToHole = (index - hole) & mask
            if distanceToEntry >= distanceToHole {
                entries[hole] = entry
                hole = index
            }
            index = (index + 1) & mask
        }
        entries[hole] = nil
        count -= 1
        return removed.value
    }

    /// Empties the table and gives back its storage.
    mutating func removeAll() {
        self = ObjectIDTable()
    }

    /// Makes room for `minimumCapacity` entries at once.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        var size = Swift.max(16, entries.count)
        while size / 2 < minimumCapacity { size *= 2 }
        if size > entries.count { resize(to: size) }
    }

    private mutating func grow() {
        resize(to: Swift.max(16, entries.count * 2))
    }

    private mutating func resize(to size: Int) {
        let old = entries
        entries = ContiguousArray(repeating: nil, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        for case let entry? in old {
            let (index, _) = position(of: entry.key)
            entries[index] = entry
            count += 1
        }
    }

    var values: [Value] { compactMap { $0.value } }

    func makeIterator() -> some IteratorProtocol<(key: ObjectID, value: Value)> {
        entries.lazy.compactMap { $0 }.makeIterator()
    }
}

extension ObjectIDTable: Sendable where Value: Sendable {}

/// The per-process value `ObjectIDTable` mixes into keys.
private enum ObjectIDTableMix {
    static let value = UInt64.random(in: .min ... .max)
}
