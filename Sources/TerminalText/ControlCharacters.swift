/// The characters a terminal acts on instead of showing: the C0 controls (U+0000–U+001F), DEL (U+007F) and the C1
/// controls (U+0080–U+009F). ESC starts the sequences that set a window title, write the clipboard or clear the
/// screen; U+009B and U+009D do the same on their own in terminals that honour C1. Text from a store or a file
/// reaches a screen only without them, and a line of output only with them escaped. This is the one place that
/// decides what counts as one: the terminal's cells, `trace`'s text screens, the activity panel's one-line values
/// and the commands' line-oriented output all ask here.
///
/// ```swift
/// ControlCharacters.removed(from: "a\u{1B}]0;x\u{07}b")    // "a]0;xb"
/// ControlCharacters.escaped("p\nq\u{1B}")                  // "p\\nq\\u{1B}"
/// ```
public enum ControlCharacters {
    /// Whether `scalar` is a C0 control, DEL or a C1 control.
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `text` holds any control character. Most text has none: a scan of its bytes says so without
    /// decoding it. C0 controls and DEL are single bytes; C1 controls are encoded as 0xC2 followed by 0x80–0x9F.
    /// The bytes are read in place (`withUTF8`, which copies only a string not stored as UTF-8): every line drawn
    /// goes through here, so the scan is a plain loop over memory, not `String.UTF8View`'s iterator.
    /// Eight bytes at a time where they are all printable ASCII (most of any line), byte by byte elsewhere.
    public static func any(in text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            var afterC2 = false
            var index = 0
            while index < bytes.count {
                if index + 8 <= bytes.count {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    if isPrintableASCII(word) {
                        afterC2 = false
                        index += 8
                        continue
                    }
                }
                let byte = bytes[index]
                if byte < 0x20 || byte == 0x7F || (afterC2 && byte >= 0x80 && byte <= 0x9F) { return true }
                afterC2 = byte == 0xC2
                index += 1
            }
            return false
        }
    }

    /// Whether all eight bytes of `word` are in 0x20...0x7E: none has its top bit set, none is below 0x20 (adding
    /// 0x60 to such a byte leaves its top bit clear), and none is 0x7F (adding 1 to it sets its top bit).
    private static func isPrintableASCII(_ word: UInt64) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080
        // No byte exceeds 0x7F, so the per-byte sums below carry into no neighbour.
        guard word & high == 0 else { return false }
        let atLeastSpace = (word &+ 0x6060_6060_6060_6060) & high
        let belowDelete = ~(word &+ 0x0101_0101_0101_0101) & high
        return atLeastSpace & belowDelete == high
    }

    /// `text` without its control characters: what the terminal shows of it.
    public static func removed(from text: String) -> String {
        guard any(in: text) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !contains(scalar) { scalars.append(scalar) }
        return String(scalars)
    }

    /// `text` with each control character replaced by `replacement` (a line break becomes a space, say).
    public static func replaced(in text: String, by replacement: Unicode.Scalar) -> String {
        guard any(in: text) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { contains($0) ? replacement : $0 }))
    }

    /// `text` for one line of output: a line feed, carriage return or tab written as `\n`, `\r`, `\t`, any other
    /// control character, and the Unicode line and paragraph separators, as `\u{1B}` (its code in hex). Nothing else
    /// changes, so text without them comes out as it is.
    public static func escaped(_ text: String) -> String {
        guard any(in: text) || text.unicodeScalars.contains(where: isSeparator) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where contains(scalar) || isSeparator(scalar):
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// U+2028 and U+2029, which some readers take for line breaks.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
