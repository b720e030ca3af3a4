import CNcursesw
import Glibc
import Terminal
import TerminalText
import Testing

/// `DisplayWidth`'s table, generated from glibc's locale sources, against glibc's `wcwidth` in a UTF-8 locale:
/// what ncurses measures with, and what tmux draws by. A failure after a C library upgrade means the table is to
/// be generated again (`Scripts/generate-width-table.py`).
@Suite struct DisplayWidthGlibcTests {
    @Test func everyScalarTakesTheColumnsWcwidthGivesIt() throws {
        TerminalLocale.ensureUTF8()
        try #require(TerminalLocale.isUTF8, "wcwidth needs a UTF-8 locale")
        var differences: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }  // the surrogates
            let expected = Int(wcwidth(wchar_t(bitPattern: value)))
            let measured = DisplayWidth.width(of: scalar)
            let drawn = DisplayWidth.drawnWidth(of: scalar)
            let agrees: Bool
            if expected >= 0 {
                // NUL is the one control wcwidth gives a width (0); the screen leaves every control out, and the
                // zero-width joiner (`DisplayWidth.joinerRemoved(from:)`).
                agrees = measured == expected
                    && (ControlCharacters.contains(scalar) || value == 0x200D ? drawn == nil : drawn == expected)
            } else {
                // Unprintable (controls, unassigned code points, noncharacters, U+2028 and U+2029): the screen
                // leaves it out, so it takes no columns.
                agrees = measured == 0 && drawn == nil
            }
            if !agrees {
                let hex = String(value, radix: 16, uppercase: true)
                let drawnText = drawn.map(String.init) ?? "none"
                differences.append("U+\(hex): wcwidth \(expected), table \(measured), drawn \(drawnText)")
            }
        }
        #expect(differences.isEmpty, "\(differences.count) scalars differ: \(differences.prefix(20))")
    }
}
