#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Widths of text in terminal columns, as the terminal will draw it: CJK and most emoji take two, combining marks
/// none. Views measure, cut and pad with these, never with `String.count`, so that columns line up.
///
/// The widths are glibc's (what `wcwidth` answers in a UTF-8 locale, which is what ncurses and tmux draw by), read
/// from a table generated from glibc's locale sources (`Scripts/generate-width-table.py`), so no locale is needed
/// and a measure means the same on every platform. Characters `wcwidth` calls unprintable (controls, unassigned
/// code points) take no columns: the screen leaves them out.
///
/// ```swift
/// DisplayWidth.of("日本")                          // 4
/// DisplayWidth.fit("Ski trip 🎿", width: 6)        // "Ski t…"
/// ```
public enum DisplayWidth {
    /// Columns `text` takes.
    public static func of(_ text: String) -> Int {
        columns(of: text, stoppingAbove: .max)
    }

    /// Whether `text` takes more than `width` columns; stops measuring as soon as it does, so a long text costs
    /// no more than its first `width` columns.
    public static func exceeds(_ text: String, _ width: Int) -> Bool {
        columns(of: text, stoppingAbove: width) > width
    }

    /// The columns `text` takes, or the first count past `limit` once it passes it. Reads the UTF-8 bytes in place
    /// (a `String` holds valid UTF-8): an ASCII byte is one column (a control none), a longer scalar is decoded from
    /// its bytes and looked up. Every span of every screen line is measured here, where `unicodeScalars`' iterator
    /// cost several times as much.
    private static func columns(of text: String, stoppingAbove limit: Int) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var total = 0
            var index = 0
            while index < bytes.count {
                let lead = bytes[index]
                if lead < 0x80 {
                    if lead >= 0x20, lead != 0x7F {
                        total += 1
                        if total > limit { return total }
                    }
                    index += 1
                    continue
                }
                var value: UInt32
                let length: Int
                if lead < 0xE0 {
                    (value, length) = (UInt32(lead & 0x1F), 2)
                } else if lead < 0xF0 {
                    (value, length) = (UInt32(lead & 0x0F), 3)
                } else {
                    (value, length) = (UInt32(lead & 0x07), 4)
                }
                guard index + length <= bytes.count else { break }
                for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
                total += max(0, columns(of: value))
                if total > limit { return total }
                index += length
            }
            return total
        }
    }

    /// `text`'s first `count` bytes when they and the byte after them are printable ASCII: then each is one
    /// column and one whole character (nothing after them can join the last one), so they are the text cut to
    /// `count` columns. Nil otherwise, for the careful cut.
    private static func printableASCIIPrefix(_ text: String, bytes count: Int) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard count < bytes.count else { return nil }
            for byte in bytes[...count] where byte < 0x20 || byte >= 0x7F { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<count]), as: UTF8.self)
        }
    }

    /// Columns one scalar takes: what `wcwidth` says, with control and unprintable characters (which the screen
    /// never draws) as 0.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        max(0, columns(of: scalar.value))
    }

    /// Columns a scalar takes when drawn, or nil for a character the screen leaves out rather than draw: a
    /// control or unprintable one, and the zero-width joiner (see `joinerRemoved(from:)`).
    package static func drawnWidth(of scalar: Unicode.Scalar) -> Int? {
        if scalar.value == 0x200D { return nil }
        let columns = columns(of: scalar.value)
        return columns < 0 ? nil : columns
    }

    /// `text` without zero-width joiners (U+200D), as the screen draws it. A joiner makes one picture of the emoji
    /// around it (👨‍👩‍👧, 🏃‍♀️) in terminals that join them, two columns in tmux, while others, xterm among them,
    /// draw each emoji in its own columns: no measure is right for both, and a line measured for one is misdrawn
    /// by the other, its later cells shifted. Without the joiner every terminal draws the parts (👨👩👧), the
    /// columns `DisplayWidth` counts.
    public static func joinerRemoved(from text: String) -> String {
        // The joiner is E2 80 8D in UTF-8. Every line of a frame is scanned (box-drawing characters start with E2
        // too), so the lead byte is found with `memchr` and only its followers are looked at.
        var copy = text
        let hasJoiner = copy.withUTF8 { bytes -> Bool in
            guard let base = bytes.baseAddress, bytes.count >= 3 else { return false }
            var at = base
            let end = base + bytes.count
            while at + 2 < end, let found = memchr(at, 0xE2, end - 2 - at) {
                let lead = found.assumingMemoryBound(to: UInt8.self)
                if lead[1] == 0x80, lead[2] == 0x8D { return true }
                at = UnsafePointer(lead + 1)
            }
            return false
        }
        guard hasJoiner else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.lazy.filter { $0.value != 0x200D })
        return String(scalars)
    }

    /// `wcwidth` from the table: 0, 1 or 2 columns, or -1 for an unprintable code point.
    private static func columns(of value: UInt32) -> Int {
        if value < 0x7F { return value >= 0x20 ? 1 : -1 }
        if value < 0x1_0000 { return Int(basicPlane[Int(value)]) }
        // The last range that starts at or before `value`; the value is in it or in none.
        var low = 0
        var high = exceptions.count
        while low < high {
            let middle = (low + high) / 2
            if exceptions[middle].first <= value { low = middle + 1 } else { high = middle }
        }
        guard low > 0, value <= exceptions[low - 1].last else { return 1 }
        return Int(exceptions[low - 1].columns)
    }

    /// The widths of the Basic Multilingual Plane, one byte per code point (64 KB), made from `exceptions` on first
    /// use: screen text is full of box-drawing characters, dots and accented letters, each of which a search of the
    /// table's 1,173 ranges took a dozen steps to measure.
    private static let basicPlane: [Int8] = {
        var table = [Int8](repeating: 1, count: 0x1_0000)
        for range in exceptions where range.first < 0x1_0000 {
            for value in range.first...min(range.last, 0xFFFF) { table[Int(value)] = range.columns }
        }
        return table
    }()

    /// `text` cut to at most `width` columns; when cut, it ends with `ellipsis` (still within `width`). Whole
    /// grapheme clusters only: a wide character that would straddle the edge is left out.
    public static func truncate(_ text: String, width: Int, ellipsis: String = "…") -> String {
        truncated(text, width: width, ellipsis: ellipsis).text
    }

    /// `truncate(_:width:ellipsis:)` with the columns the result takes, measured in the same pass: a line fitted
    /// span by span needs both, and text that fits (most of it) is then read once instead of twice.
    public static func truncated(_ text: String, width: Int, ellipsis: String = "…") -> (text: String, columns: Int) {
        guard width > 0 else { return ("", 0) }
        let measured = columns(of: text, stoppingAbove: width)
        guard measured > width else { return (text, measured) }
        let mark = of(ellipsis)
        let room = width - mark
        guard room >= 0 else { return ("", 0) }
        if let cut = printableASCIIPrefix(text, bytes: room) { return (cut + ellipsis, room + mark) }
        var result = ""
        var used = 0
        for character in text {
            var columns = 0
            for scalar in character.unicodeScalars { columns += Self.width(of: scalar) }
            if used + columns > room { break }
            result.append(character)
            used += columns
        }
        return (result + ellipsis, used + mark)
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already as wide or wider).
    public static func pad(_ text: String, width: Int) -> String {
        let missing = width - of(text)
        return missing > 0 ? text + Repeated.text(" ", count: missing) : text
    }

    /// Exactly `width` columns: cut with an ellipsis, then padded (a wide character that does not fit leaves a space).
    public static func fit(_ text: String, width: Int) -> String {
        pad(truncate(text, width: width), width: width)
    }

    /// `text` broken into lines of at most `width` columns, at spaces where it can be and inside a word only when the
    /// word alone is wider than a line. Never returns an empty array.
    ///
    /// ```swift
    /// DisplayWidth.wrap("N+1: 20 faults of User one by one", width: 16)
    /// // ["N+1: 20 faults", "of User one by", "one"]
    /// ```
    public static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [text] }
        var lines: [String] = []
        var line = ""
        var used = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            let columns = of(word)
            if used > 0, used + 1 + columns <= width {
                line += " " + word
                used += 1 + columns
                continue
            }
            if used > 0 {
                lines.append(line)
                (line, used) = ("", 0)
            }
            if columns <= width {
                (line, used) = (word, columns)
                continue
            }
            // A word wider than a line (a URI, a path): broken after a slash where the part fits, so that
            // `…/Person/p17` does not end a line with `p1`; else as many characters per line as fit.
            var parts: [Substring] = []
            var start = word.startIndex
            for index in word.indices where word[index] == "/" {
                let next = word.index(after: index)
                parts.append(word[start..<next])
                start = next
            }
            if start < word.endIndex { parts.append(word[start...]) }
            for part in parts {
                let partColumns = of(String(part))
                if partColumns <= width {
                    if used + partColumns > width, used > 0 {
                        lines.append(line)
                        (line, used) = ("", 0)
                    }
                    line += part
                    used += partColumns
                    continue
                }
                for character in part {
                    let characterColumns = of(String(character))
                    if used + characterColumns > width, used > 0 {
                        lines.append(line)
                        (line, used) = ("", 0)
                    }
                    line.append(character)
                    used += characterColumns
                }
            }
        }
        if used > 0 || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// The display columns at which `character` stands in `line` (where a pane edge `│` is drawn, say).
    public static func columns(of character: Character, in line: String) -> [Int] {
        var columns: [Int] = []
        var column = 0
        for next in line {
            if next == character { columns.append(column) }
            column += of(String(next))
        }
        return columns
    }

    /// Exactly `width` columns, the text at the right.
    public static func fitRight(_ text: String, width: Int) -> String {
        let cut = truncate(text, width: width)
        return Repeated.text(" ", count: max(0, width - of(cut))) + cut
    }
}
