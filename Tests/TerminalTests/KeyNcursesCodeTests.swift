import CNcursesw
@testable import Terminal
import TerminalText
import Testing

/// Keys from the codes `wget_wch` reads and from mouse events.
@Suite struct KeyNcursesCodeTests {
    private func keyCode(_ code: Int32) -> Key? { Key(ncursesCode: UInt32(code), isKeyCode: true) }
    private func typed(_ code: UInt32) -> Key? { Key(ncursesCode: code, isKeyCode: false) }

    @Test func keyCodesNameTheirKeys() {
        #expect(keyCode(KEY_UP) == .up)
        #expect(keyCode(KEY_DOWN) == .down)
        #expect(keyCode(KEY_LEFT) == .left)
        #expect(keyCode(KEY_RIGHT) == .right)
        #expect(keyCode(KEY_PPAGE) == .pageUp)
        #expect(keyCode(KEY_NPAGE) == .pageDown)
        #expect(keyCode(KEY_HOME) == .home)
        #expect(keyCode(KEY_END) == .end)
        #expect(keyCode(KEY_ENTER) == .enter)
        #expect(keyCode(KEY_BTAB) == .backTab)
        #expect(keyCode(KEY_BACKSPACE) == .backspace)
        #expect(keyCode(KEY_DC) == .delete)
        #expect(keyCode(faultline_key_f(1)) == .function(1))
        #expect(keyCode(faultline_key_f(12)) == .function(12))
        #expect(keyCode(KEY_IC) == nil)
    }

    @Test func controlCharactersAreKeysOrCtrlLetters() {
        #expect(typed(10) == .enter)
        #expect(typed(13) == .enter)
        #expect(typed(9) == .tab)
        #expect(typed(27) == .escape)
        #expect(typed(127) == .backspace)
        #expect(typed(8) == .backspace)
        #expect(typed(1) == .control("a"))
        #expect(typed(18) == .control("r"))
        #expect(typed(26) == .control("z"))
        #expect(typed(0) == nil)
        #expect(typed(28) == nil)
    }

    @Test func printableCharactersAreCharacters() {
        #expect(typed(UInt32(Character("q").asciiValue!)) == .character("q"))
        #expect(typed(32) == .character(" "))
        #expect(typed(0xE9) == .character("é"))
        #expect(typed(0x65E5) == .character("日"))
        #expect(typed(0x1F3BF) == .character("🎿"))
        #expect(typed(0x85) == nil)
        #expect(typed(0xD800) == nil)
    }

    @Test func mouseEventsAreClicksAndWheelTurns() {
        #expect(Key(mouseButtons: faultline_button1_pressed(), row: 2, column: 5) == .click(row: 2, column: 5))
        #expect(Key(mouseButtons: faultline_button1_clicked(), row: 0, column: 0) == .click(row: 0, column: 0))
        #expect(Key(mouseButtons: faultline_button4_pressed(), row: 3, column: 9) == .wheelUp(row: 3, column: 9))
        #expect(Key(mouseButtons: faultline_button5_pressed(), row: 3, column: 9) == .wheelDown(row: 3, column: 9))
        #expect(Key(mouseButtons: 0, row: 2, column: 5) == nil)
    }
}
