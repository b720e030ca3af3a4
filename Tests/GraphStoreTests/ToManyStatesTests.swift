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
}
