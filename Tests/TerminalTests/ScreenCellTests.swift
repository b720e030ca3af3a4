@testable import Terminal
import TerminalText
import Testing

/// Lines cut into screen cells, the way `DisplayWidth` measures them.
@Suite struct ScreenCellTests {
    private func text(_ cells: [ScreenCell]) -> String {
        String(String.UnicodeScalarView(cells.flatMap(\.scalars)))
    }

    @Test func wideCharactersTakeTwoColumnsAndMatchDisplayWidth() {
        let line = StyledLine("日本語|🎿|abc")
        let cells = line.cells(fittingWidth: 80)
        #expect(cells.map(\.width) == [2, 2, 2, 1, 2, 1, 1, 1, 1])
        #expect(cells.reduce(0) { $0 + $1.width } == DisplayWidth.of(line.text))
    }

    @Test func aLineIsCutAtTheRightEdgeWithoutSplittingAWideCharacter() {
        #expect(text(StyledLine("0123456789ABC").cells(fittingWidth: 10)) == "0123456789")
        #expect(text(StyledLine("12345678日本").cells(fittingWidth: 10)) == "12345678日")
        #expect(text(StyledLine("123456789日x").cells(fittingWidth: 10)) == "123456789")
        #expect(StyledLine("abc").cells(fittingWidth: 0).isEmpty)
    }

    @Test func zeroWidthCharactersJoinTheCellBefore() {
        let cells = StyledLine("e\u{301}x").cells(fittingWidth: 10)
        #expect(cells.count == 2)
        #expect(cells[0].scalars == ["e", "\u{301}"])
        #expect(cells[0].width == 1)
        // Nothing to join at the start of a line: the mark is left out.
        #expect(text(StyledLine("\u{301}a").cells(fittingWidth: 10)) == "a")
    }

    /// A zero-width joiner is never sent: tmux draws 👨‍👩‍👧 in two columns, xterm in six, so the parts are drawn
    /// (six columns everywhere), as `DisplayWidth` counts them.
    @Test func zeroWidthJoinersAreLeftOut() {
        let line = StyledLine("👨\u{200D}👩\u{200D}👧|🏃\u{200D}♀\u{FE0F}|")
        let cells = line.cells(fittingWidth: 80)
        #expect(!cells.flatMap(\.scalars).contains("\u{200D}"))
        #expect(cells.map(\.width) == [2, 2, 2, 1, 2, 1, 1])
        #expect(cells.reduce(0) { $0 + $1.width } == DisplayWidth.of(line.text))
        #expect(cells[5].scalars == ["♀", "\u{FE0F}"])
        let frame = Frame(width: 11, height: 1, lines: [line])
        #expect(frame.text == "👨👩👧|🏃♀\u{FE0F}|")
        #expect(DisplayWidth.joinerRemoved(from: "plain 日本") == "plain 日本")
    }

    @Test func controlCharactersAreLeftOut() {
        #expect(text(StyledLine("a\tb\u{7}c\u{7F}\u{85}d").cells(fittingWidth: 10)) == "abcd")
    }

    @Test func eachCellKeepsItsSpansStyle() {
        var line = StyledLine("ab", Style(.title))
        line.append("日", Style(.selection, bold: true))
        let styles = line.cells(fittingWidth: 10).map(\.style)
        #expect(styles == [Style(.title), Style(.title), Style(.selection, bold: true)])
    }
}
