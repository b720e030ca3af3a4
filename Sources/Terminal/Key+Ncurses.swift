import CNcursesw
import TerminalText

extension Key {
    /// The key for what `wget_wch` read: a key code (`KEY_UP`, `KEY_F(3)`…) when `isKeyCode`, else a character.
    /// Nil for codes Faultline has no name for. Mouse events and resizes need more than the code; the screen reads
    /// those itself.
    ///
    /// ```swift
    /// Key(ncursesCode: UInt32(KEY_NPAGE), isKeyCode: true)   // .pageDown
    /// Key(ncursesCode: 18, isKeyCode: false)                  // .control("r")
    /// ```
    init?(ncursesCode code: UInt32, isKeyCode: Bool) {
        if isKeyCode {
            guard let key = Self.named(keyCode: Int32(bitPattern: code)) else { return nil }
            self = key
        } else {
            guard let key = Self.typed(character: code) else { return nil }
            self = key
        }
    }

    /// The key for a mouse event: a button-1 press or click, or the wheel (buttons 4 and 5); nil for the rest.
    ///
    /// ```swift
    /// Key(mouseButtons: faultline_button4_pressed(), row: 3, column: 10)   // .wheelUp(row: 3, column: 10)
    /// ```
    init?(mouseButtons buttons: mmask_t, row: Int, column: Int) {
        if buttons & (faultline_button1_pressed() | faultline_button1_clicked()) != 0 {
            self = .click(row: row, column: column)
        } else if buttons & faultline_button4_pressed() != 0 {
            self = .wheelUp(row: row, column: column)
        } else if buttons & faultline_button5_pressed() != 0 {
            self = .wheelDown(row: row, column: column)
        } else {
            return nil
        }
    }

    private static func named(keyCode code: Int32) -> Key? {
        switch code {
        case KEY_UP: .up
        case KEY_DOWN: .down
        case KEY_LEFT: .left
        case KEY_RIGHT: .right
        case KEY_PPAGE: .pageUp
        case KEY_NPAGE: .pageDown
        case KEY_HOME: .home
        case KEY_END: .end
        case KEY_ENTER: .enter
        case KEY_BTAB: .backTab
        case KEY_BACKSPACE: .backspace
        case KEY_DC: .delete
        case faultline_key_f(1)...faultline_key_f(63): .function(Int(code - faultline_key_f(0)))
        default: nil
        }
    }

    private static func typed(character code: UInt32) -> Key? {
        switch code {
        case 10, 13: return .enter
        case 9: return .tab
        case 27: return .escape
        // Ctrl-H is what many terminals send for Backspace.
        case 8, 127: return .backspace
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(code) + 0x60)))
        case 0x20..<0x7F, 0xA0...:
            guard let scalar = Unicode.Scalar(code) else { return nil }
            return .character(Character(scalar))
        default: return nil
        }
    }
}
