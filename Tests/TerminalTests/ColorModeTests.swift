@testable import Terminal
import TerminalText
import Testing

/// Which colour mode a terminal gets, from its colours and `NO_COLOR`.
@Suite struct ColorModeTests {
    @Test func colourCountPicksTheMode() {
        #expect(ColorMode(noColor: nil, colors: 256, colorPairs: 65536) == .palette256)
        #expect(ColorMode(noColor: nil, colors: 88, colorPairs: 7744) == .eight)
        #expect(ColorMode(noColor: nil, colors: 8, colorPairs: 64) == .eight)
        #expect(ColorMode(noColor: nil, colors: 0, colorPairs: 0) == .monochrome)
    }

    @Test func aNonEmptyNoColorMeansMonochrome() {
        #expect(ColorMode(noColor: "1", colors: 256, colorPairs: 65536) == .monochrome)
        #expect(ColorMode(noColor: "", colors: 256, colorPairs: 65536) == .palette256)
    }

    @Test func tooFewPairsForOnePerRoleMeansMonochrome() {
        #expect(ColorMode(noColor: nil, colors: 8, colorPairs: Role.allCases.count) == .monochrome)
        #expect(ColorMode(noColor: nil, colors: 8, colorPairs: Role.allCases.count + 1) == .eight)
    }
}
