import Synchronization

/// The coordinator's row cache: the last-read persisted values of rows, keyed by object ID and shared by every
/// context on the coordinator. A fault whose row is here needs no SQL.
///
/// A row may be partial (read with chosen properties only): the cache keeps what it was given and each row says
/// what it lacks (`RowSnapshot.loaded`), so a fault that needs a property the cached row lacks reads the row.
///
/// Bounded, least-recently-used, safe to use from any thread. Every operation takes one lock; lookups, inserts,
/// removals and evictions are O(1) and a lookup allocates nothing.
public final class RowCache: Sendable {
    /// What the cache itself did since creation or the last reset. (Whether a fault found its row here is counted
    /// once, where the fault fires: `EventHub.counters`' `cacheHits` and `cacheMisses`.)
    public struct Statistics: Equatable, Sendable {
        /// Rows pushed out to stay within the capacity (not rows removed on request).
        public var evictions: Int

        public init(evictions: Int = 0) {
            self.evictions = evictions
        }
    }

    private let state: Mutex<LRUState>

    /// A cache holding at most `capacity` rows (at least 1).
    public init(capacity: Int = 100_000) {
        precondition(capacity >= 1, "a row cache holds at least one row")
        state = Mutex(LRUState(capacity: capacity))
    }

    /// The most rows the cache holds.
    public var capacity: Int {
        state.withLock { $0.capacity }
    }

    /// Changes the most rows the cache holds (at least 1); shrinking evicts the least recently used rows at once.
    public func setCapacity(_ capacity: Int) {
        precondition(capacity >= 1, "a row cache holds at least one row")
        state.withLock { $0.setCapacity(capacity) }
    }

    /// The rows the cache holds now.
    public var count: Int {
        state.withLock { $0.index.count }
    }

    /// The cached row, marking it most recently used; nil when absent.
    public func snapshot(for id: ObjectID) -> RowSnapshot? {
        state.withLock { $0.lookUp(id) }
    }

    /// The cached rows among `ids`, by ID, under one lock, marking them recently used: for loaders (prefetching, batches) deciding which rows they still need to read.
    func cachedSnapshots(for ids: some Sequence<ObjectID>) -> [ObjectID: RowSnapshot] {
        let wanted = Array(ids)
        guard !wanted.isEmpty else { return [:] }
        return state.withLock { state in
            var found: [ObjectID: RowSnapshot] = [:]
            for id in wanted {
                guard let slot = state.index[id], let snapshot = state.slots[Int(slot)].snapshot else { continue }
                state.moveToFront(slot)
                found[id] = snapshot
            }
            return found
        }
    }

    /// Adds or replaces a row (most recently used), evicting the least recently used beyond capacity.
    public func insert(_ snapshot: RowSnapshot) {
        state.withLock { $0.insert(snapshot) }
    }

    /// Adds or replaces rows in order, under one lock: the last one ends most recently used.
    public func insert(contentsOf snapshots: some Sequence<RowSnapshot>) {
        // Materialize first so no caller code (a lazy sequence, say) runs while the lock is held; an array is
        // passed through without a copy.
        let batch = Array(snapshots)
        guard !batch.isEmpty else { return }
        state.withLock { state in
            // Grow once for the batch (a save's or a fetch's worth of rows), not step by step as the rows arrive:
            // the table rounds up to a power of two and the slots at least double, so a run of small batches
            // still grows geometrically instead of copying on every call.
            let wanted = Swift.min(state.capacity, state.index.count + batch.count)
            state.index.reserveCapacity(wanted)
            if state.freeHead == noSlot, wanted > state.slots.capacity {
                state.slots.reserveCapacity(Swift.min(state.capacity, Swift.max(wanted, state.slots.capacity * 2)))
            }
            for snapshot in batch { state.insert(snapshot) }
        }
    }

    /// Forgets a row; nothing happens when it is absent.
    public func remove(_ id: ObjectID) {
        state.withLock { $0.remove(id) }
    }

    /// Forgets rows under one lock; absent ones are skipped.
    public func remove(contentsOf ids: some Sequence<ObjectID>) {
        let batch = Array(ids)
        guard !batch.isEmpty else { return }
        state.withLock { state in
            for id in batch { state.remove(id) }
        }
    }

    /// Forgets every row and releases the storage; the statistics are kept.
    public func removeAll() {
        let released = state.withLock { $0.takeAll() }
        // The rows are freed here, after the lock is released, not while other threads wait for it.
        withExtendedLifetime(released) {}
    }

    /// Evictions since creation or the last `resetStatistics()`.
    public var statistics: Statistics {
        state.withLock { $0.statistics }
    }

    /// Sets every count of `statistics` back to zero.
    public func resetStatistics() {
        state.withLock { $0.statistics = Statistics() }
    }

    /// IDs from most to least recently used (for tests and the browser's inspector; O(n)).
    public func idsByRecency() -> [ObjectID] {
        state.withLock { $0.idsByRecency() }
    }
}

// MARK: - State

/// A position in the slot array. 32 bits keep a slot at 24 bytes with the row (its block and where it begins),
/// where two 64-bit positions would make it 32.
private typealias SlotIndex = Int32

private let noSlot: SlotIndex = -1

/// One entry of the slot array: a cached row and its neighbours in the recency list, or, when free, a link in the
/// free list (through `next`). A live slot's ID is its row's (`RowSnapshot.objectID`): only an eviction needs it,
/// and a copy here would add half to every slot of a cache that holds a hundred thousand rows.
private struct Slot {
    var snapshot: RowSnapshot?
    /// The next more recently used slot (`noSlot` at the head).
    var previous: SlotIndex
    /// The next less recently used slot (`noSlot` at the tail); for a free slot, the next free one.
    var next: SlotIndex
}

/// The cache's contents, guarded by the mutex: a table from ID to slot plus a doubly-linked recency list
/// threaded through the slot array, most recently used at `head`. Freed slots are chained for reuse, so a full
/// cache that keeps taking new rows recycles its least recently used slot instead of growing.
private struct LRUState {
    var capacity: Int
    var index = ObjectIDTable<SlotIndex>()
    var slots: [Slot] = []
    var head = noSlot
    var tail = noSlot
    var freeHead = noSlot
    var statistics = RowCache.Statistics()

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func lookUp(_ id: ObjectID) -> RowSnapshot? {
        guard let slot = index[id] else { return nil }
        moveToFront(slot)
        return slots[Int(slot)].snapshot
    }

    mutating func insert(_ snapshot: RowSnapshot) {
        let id = snapshot.objectID
        // Where a new row goes: the least recently used row's slot when full, else a freed slot, else a new one.
        let full = index.count >= capacity
        let next = full ? tail : freeHead != noSlot ? freeHead : SlotIndex(truncatingIfNeeded: slots.count)
        // One probe finds the row's slot or gives the new row `next`.
        let (slot, placed) = index.value(forKey: id) { next }
        guard placed else {
            slots[Int(slot)].snapshot = Self.kept(slots[Int(slot)].snapshot, offered: snapshot)
            moveToFront(slot)
            return
        }
        if full {
            // Recycle the least recently used slot in place for the new row.
            index.removeValue(forKey: liveID(slot))
            unlink(slot)
            statistics.evictions += 1
            slots[Int(slot)].snapshot = snapshot
        } else if slot == freeHead {
            freeHead = slots[Int(slot)].next
            slots[Int(slot)].snapshot = snapshot
        } else {
            // Live rows never exceed the capacity, so the array only grows while there are fewer slots than that.
            precondition(slots.count < Int(SlotIndex.max), "a row cache holds fewer than 2^31 rows")
            slots.append(Slot(snapshot: snapshot, previous: noSlot, next: noSlot))
        }
        linkAtFront(slot)
    }

    /// What a slot holding `current` keeps when `offered` arrives. Keys are never reused, so a higher Z_OPT is
    /// always the newer row: a read that finished after a save must not put the older values back. Of two rows of
    /// one version, the cache keeps what either holds: a partial row never replaces a whole one, and two partial
    /// ones are merged.
    static func kept(_ current: RowSnapshot?, offered: RowSnapshot) -> RowSnapshot {
        guard let current else { return offered }
        if current.version > offered.version { return current }
        if current.version < offered.version || offered.isComplete { return offered }
        return current.merged(with: offered)
    }

    mutating func remove(_ id: ObjectID) {
        guard let slot = index.removeValue(forKey: id) else { return }
        unlink(slot)
        release(slot)
    }

    /// Empties the cache and hands back the old storage, for the caller to free outside the lock.
    mutating func takeAll() -> [Slot] {
        let old = slots
        index = [:]
        slots = []
        head = noSlot
        tail = noSlot
        freeHead = noSlot
        return old
    }

    mutating func setCapacity(_ newCapacity: Int) {
        capacity = newCapacity
        while index.count > newCapacity {
            let slot = tail
            index.removeValue(forKey: liveID(slot))
            unlink(slot)
            release(slot)
            statistics.evictions += 1
        }
        // Storage sized for the old capacity (live or freed slots) is given back.
        if slots.count > newCapacity { compact() }
    }

    func idsByRecency() -> [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(index.count)
        var slot = head
        while slot != noSlot {
            ids.append(liveID(slot))
            slot = slots[Int(slot)].next
        }
        return ids
    }

    /// The ID of the row a slot on the recency list holds.
    private func liveID(_ slot: SlotIndex) -> ObjectID {
        guard let snapshot = slots[Int(slot)].snapshot else { preconditionFailure("a slot on the recency list holds a row") }
        return snapshot.objectID
    }

    // MARK: list plumbing

    mutating func moveToFront(_ slot: SlotIndex) {
        guard slot != head else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func linkAtFront(_ slot: SlotIndex) {
        slots[Int(slot)].previous = noSlot
        slots[Int(slot)].next = head
        if head != noSlot {
            slots[Int(head)].previous = slot
        } else {
            tail = slot
        }
        head = slot
    }

    private mutating func unlink(_ slot: SlotIndex) {
        let previous = slots[Int(slot)].previous
        let next = slots[Int(slot)].next
        if previous != noSlot {
            slots[Int(previous)].next = next
        } else {
            head = next
        }
        if next != noSlot {
            slots[Int(next)].previous = previous
        } else {
            tail = previous
        }
    }

    /// Drops the slot's row (so the snapshot is freed) and chains the slot onto the free list.
    private mutating func release(_ slot: SlotIndex) {
        slots[Int(slot)].snapshot = nil
        slots[Int(slot)].previous = noSlot
        slots[Int(slot)].next = freeHead
        freeHead = slot
    }

    /// Rebuilds the slot array and the dictionary with only the live rows, in recency order, so a shrink gives
    /// back the memory the larger capacity took (neither array nor dictionary shrinks on removal by itself).
    private mutating func compact() {
        var packed: [Slot] = []
        packed.reserveCapacity(index.count)
        var packedIndex = ObjectIDTable<SlotIndex>(minimumCapacity: index.count)
        var slot = head
        while slot != noSlot {
            let position = SlotIndex(packed.count)
            let old = slots[Int(slot)]
            packed.append(Slot(snapshot: old.snapshot, previous: position - 1, next: noSlot))
            if position > 0 { packed[Int(position) - 1].next = position }
            packedIndex[liveID(slot)] = position
            slot = old.next
        }
        slots = packed
        index = packedIndex
        head = slots.isEmpty ? noSlot : 0
        tail = SlotIndex(slots.count) - 1
        freeHead = noSlot
    }
}
