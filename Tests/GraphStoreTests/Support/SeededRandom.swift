import Foundation

/// SplitMix64: a small generator whose sequence depends only on its seed, so a randomized test that fails can be
/// run again with the same seed and make the same choices (the standard library's generator is seeded by the system).
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<count` (`count` > 0). Plain modulo: the tiny bias does not matter here, and the choice
    /// stays the same whatever the standard library's `random(in:using:)` does in a later release.
    mutating func below(_ count: Int) -> Int {
        precondition(count > 0)
        return Int(next() % UInt64(count))
    }

    /// `count` bytes of the sequence, eight to a number, little-endian.
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(capacity: count)
        while data.count < count {
            withUnsafeBytes(of: next().littleEndian) { data.append(contentsOf: $0.prefix(count - data.count)) }
        }
        return data
    }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<C: Collection>(_ collection: C) -> C.Element? {
        guard !collection.isEmpty else { return nil }
        return collection[collection.index(collection.startIndex, offsetBy: below(collection.count))]
    }

    /// One of `choices`, each as likely as its weight; zero weights are never chosen.
    mutating func weighted<T>(_ choices: [(weight: Int, value: T)]) -> T {
        let total = choices.reduce(0) { $0 + max(0, $1.weight) }
        precondition(total > 0)
        var roll = below(total)
        for choice in choices where choice.weight > 0 {
            if roll < choice.weight { return choice.value }
            roll -= choice.weight
        }
        return choices.last { $0.weight > 0 }!.value
    }
}

/// Settings of the randomized tests from the environment (`GRAPH_PROPERTY_SEEDS=200 swift test …`).
enum TestEnvironment {
    static func integer(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The seeds to run: `<prefix>_SEED` alone when set, else `<prefix>_SEEDS` seeds (default `count`) from
    /// `<prefix>_FIRST_SEED` (default 0).
    static func seeds(_ prefix: String, defaultCount count: Int) -> [UInt64] {
        if let seed = integer("\(prefix)_SEED") { return [UInt64(seed)] }
        let first = integer("\(prefix)_FIRST_SEED") ?? 0
        let number = integer("\(prefix)_SEEDS") ?? count
        return (0..<max(0, number)).map { UInt64(first + $0) }
    }
}
