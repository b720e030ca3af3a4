@testable import GraphStore
import Testing

/// The hash table behind a context's registry and the row cache's index, against a `Dictionary` doing the same
/// random inserts, replacements and removals: the same contents after every step, through growth, removals'
/// markers and the rebuilds that clear them.
@Suite struct ObjectIDTableTests {
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomOperationsAgreeWithADictionary(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = ObjectIDTable<Int>()
        var reference: [ObjectID: Int] = [:]
        // Few distinct keys, so that removals often hit, across two entities.
        for step in 0..<20_000 {
            let key = ObjectID(entityNumber: 1 + random.below(2), primaryKey: Int64(random.below(600)))
            switch random.below(4) {
            case 0, 1:
                table[key] = step
                reference[key] = step
            case 2:
                // One probe: the value kept when present (and nothing made), else the new one placed.
                var made = false
                let (value, inserted) = table.value(forKey: key) {
                    made = true
                    return step
                }
                #expect(inserted == (reference[key] == nil) && made == inserted)
                #expect(value == reference[key] ?? step)
                if inserted { reference[key] = step }
            default:
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            }
            if step % 997 == 0 {
                #expect(table.count == reference.count)
                #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == reference)
            }
        }
        for (key, value) in reference { #expect(table[key] == value) }
        #expect(table[ObjectID(entityNumber: 3, primaryKey: 1)] == nil)
        table.removeAll()
        #expect(table.isEmpty && table[ObjectID(entityNumber: 1, primaryKey: 1)] == nil)
    }

    @Test func sequentialKeysFillAndEmpty() {
        var table = ObjectIDTable<Int>(minimumCapacity: 10)
        for key in 1...100_000 { table[ObjectID(entityNumber: 1, primaryKey: Int64(key))] = key }
        #expect(table.count == 100_000)
        #expect(table.capacity >= 100_000)
        for key in stride(from: 1, through: 100_000, by: 2) { table[ObjectID(entityNumber: 1, primaryKey: Int64(key))] = nil }
        #expect(table.count == 50_000)
        #expect((1...100_000).allSatisfy { key in table[ObjectID(entityNumber: 1, primaryKey: Int64(key))] == (key % 2 == 0 ? key : nil) })
        #expect(table.values.sorted() == Array(stride(from: 2, through: 100_000, by: 2)))
    }

    /// Keys that come and go (a context's objects, made and released one after another) leave markers that a
    /// rebuild clears: the table stays the size of what it holds at once, and every live key is still found.
    @Test func churnKeepsTheTableSmall() {
        var table = ObjectIDTable<Int>()
        var live: [ObjectID] = []
        for key in 0..<200_000 {
            let id = ObjectID(entityNumber: 1, primaryKey: Int64(key &* 7_919 % 1_000_003))
            table[id] = key
            live.append(id)
            if live.count > 40 { #expect(table.removeValue(forKey: live.removeFirst()) != nil) }
        }
        #expect(table.count == 40)
        #expect(table.capacity <= 128)
        // Asking for room that leaves the keys a quarter of the slots keeps the table's size: markers are cleared by
        // a rebuild, never grown for.
        let capacity = table.capacity
        table.reserveCapacity(capacity / 2)
        #expect(table.capacity == capacity)
        #expect(live.allSatisfy { table[$0] != nil })
        #expect(live.allSatisfy { table[$0] != nil })
        // Removing a run from its end leaves no markers behind: the table then reads as empty everywhere.
        for id in live.reversed() { table[id] = nil }
        #expect(table.isEmpty && table[live[0]] == nil)
    }

    /// A window of keys sliding through the table, a batch at a time, as a scroll's batches of objects are made and
    /// released: each batch asks for room first (as a fetch does for its rows). The rebuilds that clear the
    /// released keys' markers come a few batches apart, not at every batch, and the table stays a small multiple
    /// of the window.
    @Test func aSlidingWindowRebuildsRarely() {
        var table = ObjectIDTable<Int>()
        var live: [ObjectID] = []
        let window = 400, batch = 60, batches = 200
        var next = 0
        for _ in 0..<batches {
            table.reserveCapacity(table.count + batch)
            for _ in 0..<batch {
                let id = ObjectID(entityNumber: 1 + next % 3, primaryKey: Int64(next))
                table[id] = next
                live.append(id)
                next += 1
            }
            while live.count > window { #expect(table.removeValue(forKey: live.removeFirst()) != nil) }
        }
        #expect(table.count == window)
        #expect(live.allSatisfy { table[$0] != nil })
        // Growing to hold the window takes a handful; clearing markers, one every several batches.
        #expect(table.rebuilds <= batches / 5)
        #expect(table.capacity <= window * 4)
    }

    /// Consecutive keys of one entity sit in neighbouring slots, sixteen to a run, so a fetch in key order (and the
    /// release of its objects) touches a few cache lines where a hash per key would touch one a key. Walking the
    /// slots meets each run's keys one after another; per-key hashing would scatter them over the table.
    @Test func consecutiveKeysSitInRuns() {
        var table = ObjectIDTable<Int>(minimumCapacity: 4_000)
        for key in 0..<4_000 { table[ObjectID(entityNumber: 1, primaryKey: Int64(key))] = key }
        let order = table.map { Int($0.key.primaryKey) }
        let neighbours = zip(order, order.dropFirst()).filter { $1 == $0 + 1 && $0 / 16 == $1 / 16 }.count
        // 250 runs of 15 neighbouring pairs each; a run that wraps past the last slot, or that another run's
        // home pushes along, loses a few.
        #expect(neighbours >= 250 * 15 / 2)
        // Keys that share no run: a stride of 16, and a power-of-two one (eight keys are in both), still land apart
        // and are all found.
        var strided = ObjectIDTable<Int>()
        for key in 0..<2_000 { strided[ObjectID(entityNumber: 2, primaryKey: Int64(key * 16))] = key }
        for key in 0..<2_000 { strided[ObjectID(entityNumber: 2, primaryKey: Int64(key * 4_096))] = key }
        #expect(strided.count == 3_992 && strided[ObjectID(entityNumber: 2, primaryKey: 16 * 1_999)] == 1_999)
        #expect(strided[ObjectID(entityNumber: 2, primaryKey: 4_096 * 1_999)] == 1_999)
    }
}
