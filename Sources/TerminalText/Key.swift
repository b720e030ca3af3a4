/// A key press, a mouse event or a resize, as the terminal layer reads them.
public enum Key: Hashable, Sendable {
    case character(Character)
    /// Ctrl with a letter: `.control("r")` is Ctrl-R.
    case control(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace, delete
    case function(Int)
    /// A click (button 1) at a screen cell.
    case click(row: Int, column: Int)
    case wheelUp(row: Int, column: Int)
    case wheelDown(row: Int, column: Int)
    /// The window changed size.
    case resize(width: Int, height: Int)

    /// How the help overlay names the key (`j`, `↓`, `PgDn`, `Ctrl-R`, `Enter`…).
    public var label: String {
        switch self {
        case .character(" "): "Space"
        case .character(let character): String(character)
        case .control(let character): "Ctrl-\(character.uppercased())"
        case .up: "↑"
        case .down: "↓"
        case .left: "←"
        case .right: "→"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .home: "Home"
        case .end: "End"
        case .enter: "Enter"
        case .escape: "Esc"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .backspace: "Backspace"
        case .delete: "Del"
        case .function(let number): "F\(number)"
        case .click: "click"
        case .wheelUp: "wheel up"
        case .wheelDown: "wheel down"
        case .resize: "resize"
        }
    }
}
