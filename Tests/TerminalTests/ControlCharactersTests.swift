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
}
