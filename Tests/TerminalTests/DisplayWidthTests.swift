@testable import TerminalText
import Testing

/// Widths in terminal columns, and cutting and padding by them.
@Suite struct DisplayWidthTests {
    @Test func wideAndCombiningCharactersTakeTheirColumns() {
        #expect(DisplayWidth.of("abc") == 3)
        #expect(DisplayWidth.of("日本語") == 6)
        #expect(DisplayWidth.of("한국") == 4)
        #expect(DisplayWidth.of("🎿") == 2)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("") == 0)
    }

    @Test func aCharactersColumnsCountWideCharactersTwice() {
        #expect(DisplayWidth.columns(of: "│", in: "日本│ab│🎿│") == [4, 7, 10])
        #expect(DisplayWidth.columns(of: "│", in: "none here").isEmpty)
    }

    @Test func fittingCutsWithAnEllipsisAndPadsToTheWidth() {
        #expect(DisplayWidth.fit("Ski trip", width: 5) == "Ski …")
        #expect(DisplayWidth.fit("ab", width: 4) == "ab  ")
        // A wide character that would straddle the edge is left out, and the line still ends at the width.
        #expect(DisplayWidth.fit("日本語", width: 4) == "日… ")
        #expect(DisplayWidth.of(DisplayWidth.fit("日本語", width: 4)) == 4)
        #expect(DisplayWidth.fitRight("12", width: 4) == "  12")
        #expect(DisplayWidth.truncate("abc", width: 0) == "")
    }

    @Test func wrappingBreaksAtSpacesAndInsideWordsOnlyWhenTheyAreWiderThanALine() {
        #expect(DisplayWidth.wrap("N+1: 20 faults of User one by one", width: 16) == ["N+1: 20 faults", "of User one by", "one"])
        #expect(DisplayWidth.wrap("short", width: 10) == ["short"])
        #expect(DisplayWidth.wrap("", width: 10) == [""])
        // Wide characters count two columns; a word wider than the line is split between characters.
        #expect(DisplayWidth.wrap("日本語の文章 ok", width: 6) == ["日本語", "の文章", "ok"])
        #expect(DisplayWidth.wrap("abcdefgh", width: 3) == ["abc", "def", "gh"])
        // A long URI breaks after a slash where the rest fits, not inside its last part.
        #expect(DisplayWidth.wrap("delete x-coredata://C9CB0B35/Person/p17?", width: 24)
            == ["delete", "x-coredata://C9CB0B35/", "Person/p17?"])
        #expect(DisplayWidth.wrap("a/bcdefghij", width: 4) == ["a/bc", "defg", "hij"])
        for line in DisplayWidth.wrap("렌탈 스키 🎿 and 日本語 words mixed in a long line", width: 7) {
            #expect(DisplayWidth.of(line) <= 7, "\(line)")
        }
    }

    @Test func widthsComeFromTheTableWithNoLocale() {
        #expect(DisplayWidth.width(of: "\u{1F600}") == 2)
        #expect(DisplayWidth.width(of: "\u{20000}") == 2)   // CJK extension B
        #expect(DisplayWidth.width(of: "\u{E0001}") == 0)   // a tag: format character
        #expect(DisplayWidth.width(of: "\u{200B}") == 0)
        #expect(DisplayWidth.width(of: "\u{00AD}") == 1)    // glibc draws the soft hyphen
        #expect(DisplayWidth.width(of: "\u{E000}") == 1)    // private use
        #expect(DisplayWidth.width(of: "\u{10FFFD}") == 1)
        // Unprintable for wcwidth, and left out by the screen: no columns.
        for scalar: Unicode.Scalar in ["\u{0}", "\u{1B}", "\u{7F}", "\u{9B}", "\u{378}", "\u{2028}", "\u{FFFF}"] {
            #expect(DisplayWidth.width(of: scalar) == 0, "U+\(String(scalar.value, radix: 16))")
            #expect(DisplayWidth.drawnWidth(of: scalar) == nil, "U+\(String(scalar.value, radix: 16))")
        }
        #expect(DisplayWidth.drawnWidth(of: "\u{301}") == 0)
    }

    @Test func theTableIsSortedAndItsRangesAreDisjoint() {
        let table = DisplayWidth.exceptions
        #expect(!table.isEmpty)
        for (index, range) in table.enumerated() {
            #expect(range.first <= range.last)
            #expect([-1, 0, 2].contains(range.columns))
            if index > 0 { #expect(table[index - 1].last < range.first) }
        }
        #expect(table.last.map { $0.last <= 0x10FFFF } == true)
    }

    /// The measures read ASCII from the string's bytes and the rest scalar by scalar; a cut of printable ASCII is
    /// taken from the bytes. Each agrees with the plain scalar-by-scalar (and character-by-character) reading on
    /// text mixing ASCII, controls, combining marks, wide characters and emoji, at every width.
    @Test func theASCIIPathsAgreeWithReadingScalarByScalar() {
        let pieces = ["a", "Z", " ", "~", "\u{7F}", "\t", "\u{1B}", "é", "e\u{301}", "日", "🎿", "\u{200B}", "│", "\r\n", "\u{85}"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func columns(_ text: String) -> Int { text.unicodeScalars.reduce(0) { $0 + DisplayWidth.width(of: $1) } }
        func cut(_ text: String, _ width: Int) -> String {
            guard width > 0 else { return "" }
            guard columns(text) > width else { return text }
            let room = width - 1
            var result = ""
            var used = 0
            for character in text {
                let taken = columns(String(character))
                if used + taken > room { break }
                result.append(character)
                used += taken
            }
            return result + "…"
        }
        for _ in 0..<2_000 {
            // Mostly ASCII, as screen text is, with other pieces here and there.
            let text = (0..<next(24)).map { _ in next(3) == 0 ? pieces[next(pieces.count)] : String(UnicodeScalar(UInt8(0x20 + next(95)))) }.joined()
            #expect(DisplayWidth.of(text) == columns(text), "\(text.debugDescription)")
            for width in 0...(columns(text) + 2) {
                #expect(DisplayWidth.exceeds(text, width) == (columns(text) > width), "\(text.debugDescription) \(width)")
                #expect(DisplayWidth.truncate(text, width: width) == cut(text, width), "\(text.debugDescription) \(width)")
                let truncated = DisplayWidth.truncated(text, width: width)
                #expect(truncated.text == cut(text, width) && truncated.columns == columns(cut(text, width)), "\(text.debugDescription) \(width)")
            }
        }
    }

    @Test func repeatedTextIsThePieceCountTimes() {
        #expect(Repeated.text(" ", count: 3) == "   ")
        #expect(Repeated.text("─", count: 4) == "────")
        #expect(Repeated.text("ab", count: 20) == String(repeating: "ab", count: 20))
        #expect(Repeated.text("x", count: 0) == "")
        #expect(Repeated.text("x", count: -2) == "")
        #expect(Repeated.text("", count: 5) == "")
        #expect(Repeated.text(" ", count: 40) == String(repeating: " ", count: 40))
    }
}
