import CNcursesw
import Foundation
import Synchronization

/// Widths of text in terminal columns, as the terminal will draw it: CJK and most emoji take two, combining marks
/// none. Views measure, cut and pad with these, never with `String.count`, so that columns line up.
///
/// ```swift
/// DisplayWidth.of("日本")                          // 4
/// DisplayWidth.fit("Ski trip 🎿", width: 6)        // "Ski t…"
/// ```
public enum DisplayWidth {
    /// Columns `text` takes.
    public static func of(_ text: String) -> Int {
        TerminalLocale.ensureUTF8()
        var total = 0
        for scalar in text.unicodeScalars { total += width(of: scalar) }
        return total
    }

    /// Whether `text` takes more than `width` columns; stops measuring as soon as it does, so a long text costs
    /// no more than its first `width` columns.
    public static func exceeds(_ text: String, _ width: Int) -> Bool {
        TerminalLocale.ensureUTF8()
        var total = 0
        for scalar in text.unicodeScalars {
            total += DisplayWidth.width(of: scalar)
            if total > width { return true }
        }
        return false
    }

    /// Columns one scalar takes: what `wcwidth` says, with control characters (which views never draw) as 0.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        if scalar.value < 0x7F { return scalar.value >= 0x20 ? 1 : 0 }
        return max(0, Int(wcwidth(wchar_t(bitPattern: scalar.value))))
    }

    /// `text` cut to at most `width` columns; when cut, it ends with `ellipsis` (still within `width`). Whole
    /// grapheme clusters only: a wide character that would straddle the edge is left out.
    public static func truncate(_ text: String, width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        guard exceeds(text, width) else { return text }
        let room = width - of(ellipsis)
        guard room >= 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            var columns = 0
            for scalar in character.unicodeScalars { columns += Self.width(of: scalar) }
            if used + columns > room { break }
            result.append(character)
            used += columns
        }
        return result + ellipsis
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already as wide or wider).
    public static func pad(_ text: String, width: Int) -> String {
        let missing = width - of(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
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
            // A word wider than a line: as many characters per line as fit.
            for character in word {
                let characterColumns = of(String(character))
                if used + characterColumns > width, used > 0 {
                    lines.append(line)
                    (line, used) = ("", 0)
                }
                line.append(character)
                used += characterColumns
            }
        }
        if used > 0 || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// Exactly `width` columns, the text at the right.
    public static func fitRight(_ text: String, width: Int) -> String {
        let cut = truncate(text, width: width)
        return String(repeating: " ", count: max(0, width - of(cut))) + cut
    }
}

/// The process's character locale, made UTF-8 before anything measures or draws text.
public enum TerminalLocale {
    private static let done = Mutex(false)

    /// Adopts the environment's locale; when its codeset is not UTF-8 (CI often sets no `LANG`), uses `C.UTF-8` for
    /// characters. Without a UTF-8 locale `wcwidth` and ncurses treat every non-ASCII character as unprintable.
    public static func ensureUTF8() {
        done.withLock { done in
            guard !done else { return }
            done = true
            setlocale(LC_ALL, "")
            if !isUTF8 { setlocale(LC_CTYPE, "C.UTF-8") }
        }
    }

    /// Whether the character locale in force is UTF-8.
    public static var isUTF8: Bool {
        guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
        let name = String(cString: codeset).uppercased()
        return name == "UTF-8" || name == "UTF8"
    }
}
