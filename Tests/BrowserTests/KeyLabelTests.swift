import TerminalText
import Testing

/// How the help overlay names keys.
@Suite struct KeyLabelTests {
    @Test func keysHaveShortReadableLabels() {
        #expect(Key.control("r").label == "Ctrl-R")
        #expect(Key.pageDown.label == "PgDn")
        #expect(Key.character("j").label == "j")
        #expect(Key.character(" ").label == "Space")
    }
}
