@testable import GraphStore
import Testing

/// The small map of an object's to-many states, against a `Dictionary` doing the same random sets, updates through
/// optional chaining and `default:`, and removals.
@Suite struct ToManyStatesTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func randomOperationsAgreeWithADictionary(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var states = ToManyStates()
        var reference: [Int: ToManyState] = [:]
        for step in 0..<5_000 {
            let slot = random.below(6)
            switch random.below(4) {
            case 0:
                states[slot] = ToManyState(members: nil, storedCount: step)
                reference[slot] = ToManyState(members: nil, storedCount: step)
            case 1:
                states[slot]?.storedCount = step
                reference[slot]?.storedCount = step
            case 2:
                states[slot, default: ToManyState()].added.append(ObjectID(entityNumber: 1, primaryKey: Int64(step)))
                reference[slot, default: ToManyState()].added.append(ObjectID(entityNumber: 1, primaryKey: Int64(step)))
            default:
                states[slot] = nil
                reference[slot] = nil
            }
            #expect(states.isEmpty == reference.isEmpty)
            #expect(Set(states.keys) == Set(reference.keys))
            #expect(states.keys.count == reference.count)
            for (slot, state) in states {
                #expect(state.storedCount == reference[slot]?.storedCount)
                #expect(state.added == reference[slot]?.added)
            }
        }
        states.removeAll()
        #expect(states.isEmpty)
        #expect(states[0] == nil)
    }

    /// Changing a state through either subscript changes it in place: appending to `added` with room to spare keeps
    /// its storage (a copy per append would make saving 100,000 inserts into a few to-manys quadratic).
    @Test func changesThroughTheSubscriptsAreMadeInPlace() {
        var states = ToManyStates()
        states[3, default: ToManyState()].added.reserveCapacity(100)
        let storage = states[3]?.added.withUnsafeBufferPointer { $0.baseAddress }
        #expect(storage != nil)
        // Checked after every append: a copy-on-write copy could land where the storage two copies back was freed.
        for key in 0..<40 {
            states[3, default: ToManyState()].added.append(ObjectID(entityNumber: 1, primaryKey: Int64(key)))
            #expect(states[3]?.added.withUnsafeBufferPointer { $0.baseAddress } == storage)
            states[3]?.added.append(ObjectID(entityNumber: 2, primaryKey: Int64(key)))
            #expect(states[3]?.added.withUnsafeBufferPointer { $0.baseAddress } == storage)
        }
        #expect(states[3]?.added.count == 80)
    }

    /// A count read with the row is kept without allocating (a counting fetch gives every object one); recording
    /// anything more for it, or a second state, moves it among the others, and it reads the same throughout.
    @Test func aCountAloneAllocatesNothing() {
        var states = ToManyStates()
        states[2] = ToManyState(storedCount: 7)
        #expect(states.holdsNoStorage)
        #expect(states[2]?.storedCount == 7)
        #expect(states.keys == [2])
        #expect(!states.isEmpty)
        states[2]?.storedCount = 8
        #expect(states.holdsNoStorage)
        #expect(states[2]?.knownCount == 8)
        states[4] = ToManyState(storedCount: 1)
        #expect(!states.holdsNoStorage)
        #expect(Set(states.keys) == [2, 4])
        states[2, default: ToManyState()].added.append(ObjectID(entityNumber: 1, primaryKey: 9))
        #expect(states[2]?.storedCount == 8)
        #expect(states[2]?.knownCount == nil)
        #expect(states[2]?.added.count == 1)
        #expect(Set(states.keys) == [2, 4])
        states[2] = nil
        states[4] = nil
        #expect(states.isEmpty)
        states[5] = ToManyState(members: [])
        #expect(!states.holdsNoStorage)
    }
}
