import Foundation

/// Runs `body` on a thread with a small stack (512 KiB, what macOS gives secondary threads) and waits for it, so
/// that a test finds recursion too deep for an ordinary thread here rather than in an app.
func onSmallStack<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let box = SmallStackResult<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.value = body()
        done.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    done.wait()
    return box.value!
}

/// Where `onSmallStack`'s thread leaves its result; read only after the thread signalled that it is done.
private final class SmallStackResult<T: Sendable>: @unchecked Sendable {
    var value: T?
}

/// Changes text the way fuzzers do: flipped bytes, cut and repeated pieces, inserted tokens and odd characters.
struct TextMutator {
    var random: SeededRandom
    /// Pieces worth inserting: the syntax of the format being fuzzed.
    let tokens: [String]

    static let oddCharacters = [
        "\u{0}", "\u{FEFF}", "\u{202E}", "e\u{301}", "\u{301}", "👩‍👩‍👧", "🇯🇵", "\u{10FFFF}", "\u{FFFD}", "ǅ", "İ", "ß", "\u{2028}",
        "\r\n", "\u{85}", "\u{A0}", "\u{3000}", "٣", "𝟘", "Ⅻ", "\t", "\u{7F}",
    ]

    init(seed: UInt64, tokens: [String]) {
        random = SeededRandom(seed: seed)
        self.tokens = tokens
    }

    /// `text` with one mutation (half the time) to four.
    mutating func mutate(_ text: String, splicingWith others: [String] = []) -> String {
        var result = text
        for _ in 0..<(random.chance(50) ? 1 : 2 + random.below(3)) { result = mutateOnce(result, others: others) }
        return result
    }

    private mutating func position(in characters: [Character]) -> Int { random.below(characters.count + 1) }

    private mutating func mutateOnce(_ text: String, others: [String]) -> String {
        var characters = Array(text)
        switch random.below(11) {
        case 0:
            // A flipped bit in the UTF-8 bytes; what is no longer UTF-8 reads as U+FFFD.
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { return text }
            bytes[random.below(bytes.count)] ^= UInt8(1) << UInt8(random.below(8))
            return String(decoding: bytes, as: UTF8.self)
        case 1:
            guard !characters.isEmpty else { return text }
            return String(characters.prefix(random.below(characters.count)))
        case 2:
            guard !characters.isEmpty else { return text }
            let start = random.below(characters.count)
            characters.removeSubrange(start..<min(characters.count, start + 1 + random.below(6)))
        case 3:
            guard !characters.isEmpty else { return text }
            let start = random.below(characters.count)
            let piece = characters[start..<min(characters.count, start + 1 + random.below(12))]
            characters.insert(contentsOf: Array(repeating: piece, count: 1 + random.below(3)).joined(), at: position(in: characters))
        case 4:
            characters.insert(contentsOf: random.pick(tokens)!, at: position(in: characters))
        case 5:
            characters.insert(contentsOf: random.pick(Self.oddCharacters)!, at: position(in: characters))
        case 6:
            guard !characters.isEmpty else { return text }
            characters[random.below(characters.count)] = random.pick(tokens)!.first ?? " "
        case 7:
            let other = random.pick(others) ?? text
            return String(characters.prefix(position(in: characters))) + String(Array(other).suffix(random.below(other.count + 1)))
        case 8:
            let digits = String(repeating: random.pick(["9", "0", "1"])!, count: 1 + random.below(400))
            characters.insert(contentsOf: random.pick(["", "-", "."])! + digits + random.pick(["", "e999999", "e-999999", ".5", "e"])!,
                              at: position(in: characters))
        case 9:
            characters.insert(contentsOf: random.pick(["'", "\"", "\\", "\\u", "\\u12", "\\uD800"])!, at: position(in: characters))
        default:
            let depth = 1 + random.below(60)
            return String(repeating: random.pick(["(", "NOT ", "!", "{"])!, count: depth) + text + String(repeating: ")", count: random.below(depth + 1))
        }
        return String(characters)
    }
}
