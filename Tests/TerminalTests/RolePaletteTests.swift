import CNcursesw
@testable import Terminal
import TerminalText
import Testing

/// What each role looks like in each colour mode.
@Suite struct RolePaletteTests {
    let bold = faultline_a_bold()
    let reverse = faultline_a_reverse()
    let underline = faultline_a_underline()
    let dim = faultline_a_dim()

    @Test func monochromeUsesAttributesAndNoColourPair() {
        let palette = RolePalette(mode: .monochrome)
        for role in Role.allCases {
            #expect(palette.pair(of: role) == 0, "\(role)")
        }
        #expect(palette.appearance(of: Style(.plain)).attributes == faultline_a_normal())
        #expect(palette.appearance(of: Style(.selection)).attributes == reverse | bold)
        #expect(palette.appearance(of: Style(.status)).attributes == reverse)
        #expect(palette.appearance(of: Style(.muted)).attributes == dim)
        #expect(palette.appearance(of: Style(.title)).attributes == bold)
    }

    @Test(arguments: [ColorMode.eight, .palette256])
    func colourModesGiveEachRoleItsOwnPair(mode: ColorMode) {
        let palette = RolePalette(mode: mode)
        let pairs = Role.allCases.map { palette.pair(of: $0) }
        #expect(Set(pairs).count == Role.allCases.count)
        #expect(pairs.allSatisfy { $0 >= 1 && Int($0) <= Role.allCases.count })
        #expect(palette.look(of: .plain) == RolePalette.Look())
        #expect(palette.look(of: .selection).background >= 0)
        #expect(palette.look(of: .status).background >= 0)
    }

    /// A fixed white (or black) title would vanish on a terminal of that background: titles use its own foreground.
    @Test(arguments: [ColorMode.monochrome, .eight, .palette256])
    func titlesKeepTheTerminalsForegroundInBold(mode: ColorMode) {
        let look = RolePalette(mode: mode).look(of: .title)
        #expect(look.foreground == -1 && look.background == -1)
        #expect(look.attributes & bold == bold)
    }

    @Test func eightColoursStayWithinTheBasicColours() {
        let palette = RolePalette(mode: .eight)
        for role in Role.allCases {
            let look = palette.look(of: role)
            #expect((-1...7).contains(look.foreground) && (-1...7).contains(look.background), "\(role)")
        }
    }

    @Test(arguments: [ColorMode.monochrome, .eight, .palette256])
    func boldAndUnderlineAddToTheRole(mode: ColorMode) {
        let palette = RolePalette(mode: mode)
        let accent = palette.appearance(of: Style(.accent))
        let emphasised = palette.appearance(of: Style(.accent, bold: true, underline: true))
        #expect(emphasised.attributes == accent.attributes | bold | underline)
        #expect(emphasised.pair == accent.pair)
    }
}
