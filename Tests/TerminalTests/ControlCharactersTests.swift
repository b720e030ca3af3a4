import TerminalText
import Testing

/// `ControlCharacters.any(in:)`, which scans a string's UTF-8 bytes, against a check of its scalars one by one:
/// every C0 control, DEL and C1 control alone and between other text, and the scalars whose encodings look like a
/// C1 control's in part (0xC2 leads every scalar from U+0080 to U+00BF; 0x80–0x9F continue many others).
@Suite struct ControlCharactersTests {
    @Test func theByteScanAgreesWithTheScalars() {
        let scalars = (0...0x2FF).compactMap(Unicode.Scalar.init) + ["€", "ツ", "\u{2028}", "😀"]
        for scalar in scalars {
            let expected = ControlCharacters.contains(scalar)
            for text in [String(scalar), "ab" + String(scalar), String(scalar) + "¢", "é" + String(scalar) + "x"] {
                #expect(ControlCharacters.any(in: text) == expected, "U+\(String(scalar.value, radix: 16)) in \(text.debugDescription)")
            }
        }
        #expect(!ControlCharacters.any(in: ""))
        #expect(!ControlCharacters.any(in: String(repeating: "¢£¤ツ", count: 100)))
        #expect(ControlCharacters.any(in: String(repeating: "¢£¤ツ", count: 100) + "\u{85}"))
    }

    /// `any(in:)` reads eight bytes at a time where it can: every control (and DEL, and each C1 control) is found at
    /// every position of a line, next to ASCII and to other multi-byte characters, as a byte-by-byte reading finds it.
    @Test func theWordAtATimeScanFindsEveryControlAtEveryPosition() {
        func reference(_ text: String) -> Bool { text.unicodeScalars.contains(where: ControlCharacters.contains) }
        let insertions = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + ["\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "é", "│", "🎿", " ", "~"]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31] {
            let base = String((0..<length).map { Character(UnicodeScalar(UInt8(0x21 + $0 % 94))) })
            #expect(ControlCharacters.any(in: base) == false)
            for position in 0...length {
                for insertion in insertions {
                    var text = base
                    text.insert(contentsOf: insertion, at: text.index(text.startIndex, offsetBy: position))
                    #expect(ControlCharacters.any(in: text) == reference(text), "\(text.debugDescription)")
                    #expect(ControlCharacters.any(in: "é" + text) == reference(text), "\(text.debugDescription)")
                }
            }
        }
    }
}
