import Synchronization

/// The coordinator's row cache: the last-read persisted values of rows, keyed by object ID and shared by every
/// context on the coordinator. A fault whose row is here needs no SQL.
///
/// Bounded, least-recently-used, safe to use from any thread. Every operation takes one lock; lookups, inserts,
/// removals and evictions are O(1) and a lookup allocates nothing.
public final class RowCache: Sendable {
    /// Counts since creation or the last reset: lookups that found a row, that did not, and evictions.
    public struct Statistics: Equatable, Sendable {
        /// `snapshot(for:)` calls that found their row.
        public var hits: Int
        /// `snapshot(for:)` calls that did not.
        public var misses: Int
        /// Rows pushed out to stay within the capacity (not rows removed on request).
        public var evictions: Int

        public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
            self.hits = hits
            self.misses = misses
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
        state.withLock { $0.removeAll() }
    }

    /// Hits, misses and evictions since creation or the last `resetStatistics()`.
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

/// One entry of the slot array: a cached row and its neighbours in the recency list, or, when free, a link in the
/// free list (through `next`).
private struct Slot {
    var id: ObjectID
    var snapshot: RowSnapshot?
    /// The next more recently used slot (`noSlot` at the head).
    var previous: Int
    /// The next less recently used slot (`noSlot` at the tail); for a free slot, the next free one.
    var next: Int
}

private let noSlot = -1

/// The cache's contents, guarded by the mutex: a dictionary from ID to slot plus a doubly-linked recency list
/// threaded through the slot array, most recently used at `head`. Freed slots are chained for reuse, so a full
/// cache that keeps taking new rows recycles its least recently used slot instead of growing.
private struct LRUState {
    var capacity: Int
    var index: [ObjectID: Int] = [:]
    var slots: [Slot] = []
    var head = noSlot
    var tail = noSlot
    var freeHead = noSlot
    var statistics = RowCache.Statistics()

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func lookUp(_ id: ObjectID) -> RowSnapshot? {
        guard let slot = index[id] else {
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        moveToFront(slot)
        return slots[slot].snapshot
    }

    mutating func insert(_ snapshot: RowSnapshot) {
        let id = snapshot.objectID
        if let slot = index[id] {
            slots[slot].snapshot = snapshot
            moveToFront(slot)
            return
        }
        let slot: Int
        if index.count >= capacity {
            // Full: recycle the least recently used slot in place for the new row.
            slot = tail
            index.removeValue(forKey: slots[slot].id)
            unlink(slot)
            statistics.evictions += 1
            slots[slot].id = id
            slots[slot].snapshot = snapshot
        } else if freeHead != noSlot {
            slot = freeHead
            freeHead = slots[slot].next
            slots[slot].id = id
            slots[slot].snapshot = snapshot
        } else {
            slot = slots.count
            slots.append(Slot(id: id, snapshot: snapshot, previous: noSlot, next: noSlot))
        }
        index[id] = slot
        linkAtFront(slot)
    }

    mutating func remove(_ id: ObjectID) {
        guard let slot = index.removeValue(forKey: id) else { return }
        unlink(slot)
        release(slot)
    }

    mutating func removeAll() {
        index = [:]
        slots = []
        head = noSlot
        tail = noSlot
        freeHead = noSlot
    }

    mutating func setCapacity(_ newCapacity: Int) {
        capacity = newCapacity
        guard index.count > newCapacity else { return }
        while index.count > newCapacity {
            let slot = tail
            index.removeValue(forKey: slots[slot].id)
            unlink(slot)
            release(slot)
            statistics.evictions += 1
        }
        compact()
    }

    func idsByRecency() -> [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(index.count)
        var slot = head
        while slot != noSlot {
            ids.append(slots[slot].id)
            slot = slots[slot].next
        }
        return ids
    }

    // MARK: list plumbing

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func linkAtFront(_ slot: Int) {
        slots[slot].previous = noSlot
        slots[slot].next = head
        if head != noSlot {
            slots[head].previous = slot
        } else {
            tail = slot
        }
        head = slot
    }

    private mutating func unlink(_ slot: Int) {
        let previous = slots[slot].previous
        let next = slots[slot].next
        if previous != noSlot {
            slots[previous].next = next
        } else {
            head = next
        }
        if next != noSlot {
            slots[next].previous = previous
        } else {
            tail = previous
        }
    }

    /// Drops the slot's row (so the snapshot is freed) and chains the slot onto the free list.
    private mutating func release(_ slot: Int) {
        slots[slot].snapshot = nil
        slots[slot].previous = noSlot
        slots[slot].next = freeHead
        freeHead = slot
    }

    /// Rebuilds the slot array with only the live rows, in recency order, after a shrink left it oversized.
    private mutating func compact() {
        guard slots.count > index.count else { return }
        var packed: [Slot] = []
        packed.reserveCapacity(index.count)
        var slot = head
        while slot != noSlot {
            let position = packed.count
            packed.append(Slot(id: slots[slot].id, snapshot: slots[slot].snapshot,
                               previous: position - 1, next: noSlot))
            if position > 0 { packed[position - 1].next = position }
            index[slots[slot].id] = position
            slot = slots[slot].next
        }
        slots = packed
        head = slots.isEmpty ? noSlot : 0
        tail = slots.count - 1
        freeHead = noSlot
    }
}
