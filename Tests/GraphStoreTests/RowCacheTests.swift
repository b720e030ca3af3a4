import GraphStore
import Testing

/// The coordinator's row cache: contents, least-recently-used order, statistics, slot reuse, thread safety, and a
/// randomized comparison with a plain array-based model.
@Suite struct RowCacheTests {
    // MARK: helpers

    private static func id(_ key: Int, entity: Int = 1) -> ObjectID {
        ObjectID(entityNumber: entity, primaryKey: Int64(key))
    }

    private static func row(_ key: Int, version: Int64 = 1, entity: Int = 1) -> RowSnapshot {
        RowSnapshot(objectID: id(key, entity: entity), version: version, values: [.integer(Int64(key))], toOneKeys: [])
    }

    private static func stats(evictions: Int) -> RowCache.Statistics {
        RowCache.Statistics(evictions: evictions)
    }

    // MARK: contents

    @Test func insertLookUpAndReplace() {
        let cache = RowCache(capacity: 10)
        #expect(cache.capacity == 10)
        #expect(cache.count == 0)
        #expect(cache.snapshot(for: Self.id(1)) == nil)

        let first = Self.row(1, version: 1)
        cache.insert(first)
        #expect(cache.count == 1)
        #expect(cache.snapshot(for: Self.id(1)) === first)
        // Same key, other entity: a different object.
        #expect(cache.snapshot(for: Self.id(1, entity: 2)) == nil)

        let second = Self.row(1, version: 2)
        cache.insert(second)
        #expect(cache.count == 1)
        let found = cache.snapshot(for: Self.id(1))
        #expect(found === second)
        #expect(found?.version == 2)
        #expect(cache.idsByRecency() == [Self.id(1)])
        #expect(cache.statistics.evictions == 0)
    }

    @Test func defaultCapacityIsOneHundredThousand() {
        #expect(RowCache().capacity == 100_000)
    }

    @Test func leastRecentlyUsedRowIsEvicted() {
        let cache = RowCache(capacity: 3)
        let (a, b, c, d) = (Self.id(1), Self.id(2), Self.id(3), Self.id(4))
        cache.insert(Self.row(1))
        cache.insert(Self.row(2))
        cache.insert(Self.row(3))
        #expect(cache.idsByRecency() == [c, b, a])
        #expect(cache.snapshot(for: a) != nil)
        cache.insert(Self.row(4))

        #expect(cache.count == 3)
        #expect(cache.snapshot(for: b) == nil)
        #expect(cache.idsByRecency() == [d, a, c])
        #expect(cache.statistics.evictions == 1)
    }

    @Test func replacingARowMakesItMostRecentlyUsed() {
        let cache = RowCache(capacity: 3)
        cache.insert(contentsOf: [Self.row(1), Self.row(2), Self.row(3)])
        cache.insert(Self.row(1, version: 7))
        #expect(cache.idsByRecency() == [Self.id(1), Self.id(3), Self.id(2)])
        cache.insert(Self.row(4))
        #expect(cache.idsByRecency() == [Self.id(4), Self.id(1), Self.id(3)])
        #expect(cache.snapshot(for: Self.id(1))?.version == 7)
    }

    @Test func batchInsertKeepsOrderAndEvictsBeyondCapacity() {
        let cache = RowCache(capacity: 3)
        // A lazy sequence, with a repeated ID inside the batch.
        cache.insert(contentsOf: (1...10).lazy.map { Self.row($0) })
        #expect(cache.idsByRecency() == [Self.id(10), Self.id(9), Self.id(8)])
        #expect(cache.statistics.evictions == 7)

        let replacement = Self.row(9, version: 3)
        cache.insert(contentsOf: [Self.row(9, version: 2), Self.row(11), replacement])
        #expect(cache.idsByRecency() == [Self.id(9), Self.id(11), Self.id(10)])
        #expect(cache.snapshot(for: Self.id(9)) === replacement)
        #expect(cache.statistics.evictions == 8)

        cache.insert(contentsOf: [RowSnapshot]())
        #expect(cache.count == 3)
    }

    @Test func shrinkingCapacityEvictsLeastRecentlyUsedAtOnce() {
        let cache = RowCache(capacity: 5)
        cache.insert(contentsOf: (1...5).map { Self.row($0) })
        _ = cache.snapshot(for: Self.id(1))
        #expect(cache.idsByRecency() == [1, 5, 4, 3, 2].map { Self.id($0) })

        cache.setCapacity(2)
        #expect(cache.capacity == 2)
        #expect(cache.count == 2)
        #expect(cache.idsByRecency() == [Self.id(1), Self.id(5)])
        #expect(cache.statistics.evictions == 3)
        #expect(cache.snapshot(for: Self.id(4)) == nil)

        // The shrunk cache still works as an LRU: the lookup above missed, 5 is least recent.
        cache.insert(Self.row(6))
        #expect(cache.idsByRecency() == [Self.id(6), Self.id(1)])
        #expect(cache.statistics.evictions == 4)

        // Growing evicts nothing and makes room.
        cache.setCapacity(4)
        cache.insert(contentsOf: [Self.row(7), Self.row(8)])
        #expect(cache.idsByRecency() == [8, 7, 6, 1].map { Self.id($0) })
        #expect(cache.statistics.evictions == 4)

        // Shrinking to the current count, or growing, changes nothing.
        cache.setCapacity(4)
        #expect(cache.idsByRecency() == [8, 7, 6, 1].map { Self.id($0) })
        cache.setCapacity(1)
        #expect(cache.idsByRecency() == [Self.id(8)])
        #expect(cache.statistics.evictions == 7)
    }

    @Test func shrinkingCapacityAfterRemovalsEvictsNothing() {
        let cache = RowCache(capacity: 10)
        cache.insert(contentsOf: (1...10).map { Self.row($0) })
        cache.remove(contentsOf: [1, 2, 4, 5, 7, 8, 9].map { Self.id($0) })
        cache.setCapacity(4)
        #expect(cache.statistics.evictions == 0)
        #expect(cache.idsByRecency() == [10, 6, 3].map { Self.id($0) })

        cache.insert(contentsOf: [Self.row(11), Self.row(12)])
        #expect(cache.idsByRecency() == [12, 11, 10, 6].map { Self.id($0) })
        #expect(cache.statistics.evictions == 1)
        #expect(cache.snapshot(for: Self.id(6))?.objectID == Self.id(6))
        cache.insert(Self.row(13))
        #expect(cache.idsByRecency() == [13, 6, 12, 11].map { Self.id($0) })
    }

    @Test func removeOneOrManyRows() {
        let cache = RowCache(capacity: 10)
        cache.insert(contentsOf: (1...6).map { Self.row($0) })

        cache.remove(Self.id(3))
        cache.remove(Self.id(42))  // absent: nothing happens
        #expect(cache.count == 5)
        #expect(cache.idsByRecency() == [6, 5, 4, 2, 1].map { Self.id($0) })

        cache.remove(contentsOf: [Self.id(6), Self.id(1), Self.id(99), Self.id(6)])
        #expect(cache.count == 3)
        #expect(cache.idsByRecency() == [5, 4, 2].map { Self.id($0) })
        #expect(cache.snapshot(for: Self.id(1)) == nil)
        #expect(cache.snapshot(for: Self.id(4)) != nil)

        // Freed slots are taken again, and removals are not evictions.
        cache.insert(contentsOf: (7...13).map { Self.row($0) })
        #expect(cache.count == 10)
        #expect(cache.statistics.evictions == 0)
        cache.insert(Self.row(14))
        #expect(cache.statistics.evictions == 1)
        #expect(cache.snapshot(for: Self.id(2)) == nil)  // the least recent row went
        #expect(cache.snapshot(for: Self.id(5)) != nil)
    }

    @Test func removeAllEmptiesTheCacheButKeepsStatistics() {
        let cache = RowCache(capacity: 2)
        cache.insert(contentsOf: (1...3).map { Self.row($0) })
        _ = cache.snapshot(for: Self.id(3))
        _ = cache.snapshot(for: Self.id(1))
        let before = cache.statistics
        #expect(before == Self.stats(evictions: 1))

        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.idsByRecency().isEmpty)
        #expect(cache.statistics == before)
        #expect(cache.capacity == 2)

        cache.insert(contentsOf: (4...6).map { Self.row($0) })
        #expect(cache.idsByRecency() == [Self.id(6), Self.id(5)])
    }

    @Test func statisticsCountEvictionsExactlyAndLookupsNot() {
        let cache = RowCache(capacity: 2)
        #expect(cache.statistics == Self.stats(evictions: 0))

        _ = cache.snapshot(for: Self.id(1))
        cache.insert(Self.row(1))
        cache.insert(Self.row(2))
        _ = cache.snapshot(for: Self.id(1))                  // hit
        _ = cache.snapshot(for: Self.id(2))                  // hit
        cache.insert(Self.row(2, version: 2))                // replace: no eviction
        cache.insert(Self.row(3))                            // evicts 1
        _ = cache.snapshot(for: Self.id(1))
        cache.remove(Self.id(2))                             // removal: no eviction
        #expect(cache.statistics == Self.stats(evictions: 1))

        cache.resetStatistics()
        #expect(cache.statistics == Self.stats(evictions: 0))
        #expect(cache.count == 1)  // resetting touches no rows

        _ = cache.snapshot(for: Self.id(3))                  // hit
        cache.insert(contentsOf: [Self.row(4), Self.row(5)]) // evicts 3
        #expect(cache.statistics == Self.stats(evictions: 1))
    }

    @Test func slotsAreReusedAcrossAMillionInserts() {
        let cache = RowCache(capacity: 1_000)
        for key in 0..<1_000_000 {
            cache.insert(Self.row(key))
        }
        #expect(cache.count == 1_000)
        #expect(cache.statistics.evictions == 999_000)
        let expected = (999_000..<1_000_000).reversed().map { Self.id($0) }
        #expect(cache.idsByRecency() == expected)
        #expect(cache.snapshot(for: Self.id(998_999)) == nil)
        #expect(cache.snapshot(for: Self.id(999_000))?.objectID == Self.id(999_000))
    }

    // MARK: concurrency

    @Test func concurrentMixedUseKeepsTheCacheConsistent() async {
        let capacity = 500
        let cache = RowCache(capacity: capacity)
        let operationsPerTask = 50_000

        let lookups = await withTaskGroup(of: (lookups: Int, wrongRows: Int).self) { group in
            for task in 0..<4 {
                group.addTask {
                    var random = SeededRandom(seed: 0xFA17_0000 + UInt64(task))
                    var lookups = 0
                    var wrongRows = 0
                    for operation in 0..<operationsPerTask {
                        let key = random.below(2_000)  // every task works on the same IDs
                        switch random.below(100) {
                        case 0..<45:
                            lookups += 1
                            if let row = cache.snapshot(for: Self.id(key)), row.objectID != Self.id(key) {
                                wrongRows += 1
                            }
                        case 45..<80:
                            cache.insert(Self.row(key, version: Int64(operation)))
                        case 80..<90:
                            cache.insert(contentsOf: (key..<key + random.below(8)).map { Self.row($0) })
                        case 90..<97:
                            cache.remove(Self.id(key))
                        default:
                            cache.remove(contentsOf: (key..<key + random.below(8)).map { Self.id($0) })
                        }
                    }
                    return (lookups, wrongRows)
                }
            }
            var lookups = 0
            for await result in group {
                #expect(result.wrongRows == 0)
                lookups += result.lookups
            }
            return lookups
        }

        #expect(lookups > 0)
        #expect(cache.statistics.evictions > 0)

        let ids = cache.idsByRecency()
        #expect(cache.count <= capacity)
        #expect(ids.count == cache.count)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(cache.snapshot(for: id)?.objectID == id)
        }
    }

    // MARK: randomized comparison with a reference model

    /// 20,000 seeded operations on a capacity-50 cache and on `ReferenceLRU`; with `changingCapacity`, one operation in
    /// a hundred also sets a new capacity between 1 and 60 (and the check every 1,000 operations first restores 50).
    @Test(arguments: [false, true])
    func randomizedOperationsMatchAReferenceModel(changingCapacity: Bool) {
        var random = SeededRandom(seed: changingCapacity ? 0x5EED_0002 : 0x0BAD_CAFE)
        let cache = RowCache(capacity: 50)
        var model = ReferenceLRU(capacity: 50)
        var version: Int64 = 0

        func newRow(_ key: Int) -> RowSnapshot {
            version += 1
            return Self.row(key, version: version, entity: 1 + key % 3)
        }
        func randomID() -> ObjectID {
            let key = random.below(120)
            return Self.id(key, entity: 1 + key % 3)
        }

        for operation in 1...20_000 {
            if changingCapacity, random.below(100) == 0 {
                let capacity = 1 + random.below(60)
                cache.setCapacity(capacity)
                model.setCapacity(capacity)
                #expect(cache.capacity == capacity)
            }
            switch random.below(1_000) {
            case 0..<350:
                let row = newRow(random.below(120))
                cache.insert(row)
                model.insert(row)
            case 350..<650:
                let id = randomID()
                let found = cache.snapshot(for: id)
                let expected = model.lookUp(id)
                #expect(found === expected, "lookup of \(id) at operation \(operation)")
            case 650..<780:
                let id = randomID()
                cache.remove(id)
                model.remove(id)
            case 780..<830:
                let ids = (0..<random.below(6)).map { _ in randomID() }
                cache.remove(contentsOf: ids)
                for id in ids { model.remove(id) }
            case 830..<998:
                let rows = (0..<random.below(12)).map { _ in newRow(random.below(120)) }
                cache.insert(contentsOf: rows)
                for row in rows { model.insert(row) }
            default:
                cache.removeAll()
                model.removeAll()
            }

            if operation.isMultiple(of: 1_000) {
                if changingCapacity {
                    cache.setCapacity(50)
                    model.setCapacity(50)
                }
                #expect(cache.idsByRecency() == model.ids, "order after operation \(operation)")
                #expect(cache.count == model.entries.count)
                // Look every row up from least to most recent: each comes back as the model's, and the order is unchanged.
                for entry in model.entries.reversed() {
                    #expect(cache.snapshot(for: entry.objectID) === entry)
                }
                for entry in model.entries.reversed() { _ = model.lookUp(entry.objectID) }
                #expect(cache.idsByRecency() == model.ids)
                #expect(cache.statistics == model.statistics, "statistics after operation \(operation)")
            }
        }
        #expect(model.statistics.evictions > 0)
    }
}

// MARK: - Test support


/// The obvious LRU: an array of rows, most recently used first, searched linearly.
private struct ReferenceLRU {
    private(set) var capacity: Int
    private(set) var entries: [RowSnapshot] = []
    private(set) var statistics = RowCache.Statistics(evictions: 0)

    init(capacity: Int) { self.capacity = capacity }

    var ids: [ObjectID] { entries.map(\.objectID) }

    mutating func lookUp(_ id: ObjectID) -> RowSnapshot? {
        guard let position = entries.firstIndex(where: { $0.objectID == id }) else { return nil }
        let entry = entries.remove(at: position)
        entries.insert(entry, at: 0)
        return entry
    }

    mutating func insert(_ row: RowSnapshot) {
        if let position = entries.firstIndex(where: { $0.objectID == row.objectID }) {
            entries.remove(at: position)
        } else if entries.count >= capacity {
            entries.removeLast()
            statistics.evictions += 1
        }
        entries.insert(row, at: 0)
    }

    mutating func remove(_ id: ObjectID) {
        entries.removeAll { $0.objectID == id }
    }

    mutating func setCapacity(_ newCapacity: Int) {
        capacity = newCapacity
        while entries.count > capacity {
            entries.removeLast()
            statistics.evictions += 1
        }
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}

@Suite struct RowCacheVersionTests {
    @Test func anOlderVersionNeverReplacesANewerOne() {
        let cache = RowCache(capacity: 10)
        let id = ObjectID(entityNumber: 1, primaryKey: 7)
        cache.insert(RowSnapshot(objectID: id, version: 3, values: [.string("new")], toOneKeys: []))
        cache.insert(RowSnapshot(objectID: id, version: 2, values: [.string("old")], toOneKeys: []))
        #expect(cache.snapshot(for: id).map { Array($0.values) } == [.string("new")])
        cache.insert(RowSnapshot(objectID: id, version: 4, values: [.string("newer")], toOneKeys: []))
        #expect(cache.snapshot(for: id).map { Array($0.values) } == [.string("newer")])
    }
}

/// The same row, not merely equal values (both nil counts as the same).
private func === (lhs: RowSnapshot?, rhs: RowSnapshot?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): true
    case let (lhs?, rhs?): lhs.isIdentical(to: rhs)
    default: false
    }
}
