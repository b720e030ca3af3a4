import TerminalText

/// Where the keyboard focus is.
public enum Pane: String, Equatable, Sendable, CaseIterable {
    case chats, messages, members, sqlLog

    var title: String {
        switch self {
        case .chats: "Chats"
        case .messages: "Messages"
        case .members: "Members"
        case .sqlLog: "SQL log"
        }
    }
}

/// One key binding: the keys, what they do, the line the help shows, and the panes where the hint bar lists it
/// (empty: everywhere).
public struct KeyBinding: Sendable {
    public let keys: [Key]
    public let action: BrowserAction
    public let help: String
    public let panes: [Pane]
    /// Shown in the hint bar (the most useful few); every binding is in the help overlay.
    public let hint: String?

    init(_ keys: [Key], _ action: BrowserAction, _ help: String, panes: [Pane] = [], hint: String? = nil) {
        self.keys = keys
        self.action = action
        self.help = help
        self.panes = panes
        self.hint = hint
    }
}

/// What the keys mean now: the normal mode, or the overlay (or too small a window) that takes them.
public enum KeyMode: Equatable, Sendable {
    case normal, help, deletePreview, confirmQuit, search, sqlDetail, tooSmall

    public init(_ state: BrowserState) {
        if Layout.isTooSmall(width: state.width, height: state.height) {
            self = .tooSmall
            return
        }
        switch state.overlay {
        case .none: self = .normal
        case .help: self = .help
        case .deletePreview: self = .deletePreview
        case .confirmQuit: self = .confirmQuit
        case .search: self = .search
        case .sqlDetail: self = .sqlDetail
        }
    }
}

/// The one table that both dispatches keys and draws the `?` help and the hint bar, so they cannot disagree.
public enum KeyTable {
    public static let bindings: [KeyBinding] = [
        KeyBinding([.up, .character("k")], .up, "move up", hint: "↑↓ move"),
        KeyBinding([.down, .character("j")], .down, "move down"),
        KeyBinding([.pageUp], .pageUp, "page up"),
        KeyBinding([.pageDown, .character(" ")], .pageDown, "page down"),
        KeyBinding([.character("g"), .home], .top, "first row"),
        KeyBinding([.character("G"), .end], .bottom, "last row"),
        KeyBinding([.enter, .character("l"), .right], .open, "open the chat; in the SQL log, the statement in full",
                   panes: [.chats, .sqlLog], hint: "Enter open"),
        KeyBinding([.escape, .character("h"), .left], .back, "back to the chat list", panes: [.messages, .members, .sqlLog], hint: "Esc back"),
        KeyBinding([.tab], .nextPane, "next pane", hint: "Tab pane"),
        KeyBinding([.backTab], .previousPane, "previous pane"),
        KeyBinding([.character("/")], .beginSearch, "search chats by title or member", panes: [.chats], hint: "/ search"),
        KeyBinding([.character("m")], .members, "members of the chat (toggle)", panes: [.chats, .messages, .members], hint: "m members"),
        KeyBinding([.character("d")], .delete, "delete the selected chat, message or member (preview first)",
                   panes: [.chats, .messages, .members], hint: "d delete"),
        KeyBinding([.character("u")], .undo, "undo", hint: "u undo"),
        KeyBinding([.control("r")], .redo, "redo"),
        KeyBinding([.character("w")], .save, "save", hint: "w save"),
        KeyBinding([.character("b")], .cycleBatch, "batch size: off, 20, 100", hint: "b batch"),
        KeyBinding([.character("B")], .toggleBatchMode, "batching: Faultline's windows or Core Data's all IDs first"),
        KeyBinding([.character("p")], .togglePrefetch, "prefetch: joined → off → IN statements", hint: "p prefetch"),
        KeyBinding([.character("c")], .toggleDerived, "derived counts on/off (off: counts fire the relationship)", hint: "c counts"),
        KeyBinding([.character("f")], .toggleColumns, "fetch only the columns drawn (propertiesToFetch) or whole rows"),
        KeyBinding([.character("x")], .clearCache, "empty the row cache"),
        KeyBinding([.character("r")], .resetCounters, "reset the counters and the sparklines"),
        KeyBinding([.character("e")], .explain, "EXPLAIN QUERY PLAN of the selected statement", panes: [.sqlLog], hint: "e explain"),
        KeyBinding([.character("?")], .help, "this help", hint: "? help"),
        KeyBinding([.character("q")], .quit, "quit (asks when changes are unsaved)", hint: "q quit"),
    ]

    /// The action bound to `key`, when the browser is in its normal mode (no overlay, no search field).
    public static func action(for key: Key) -> BrowserAction? {
        switch key {
        case .click(let row, let column): return .click(row: row, column: column)
        case .wheelUp(let row, let column): return .scrollUp(row: row, column: column)
        case .wheelDown(let row, let column): return .scrollDown(row: row, column: column)
        case .resize(let width, let height): return .resize(width: width, height: height)
        default: return bindings.first { $0.keys.contains(key) }?.action
        }
    }

    /// The keys of one mode other than the normal one: its bindings (which the hint bar shows, in order), what any
    /// other key does (nil: nothing), and whether printable characters are typed into a field.
    struct ModeKeys {
        let bindings: [KeyBinding]
        let otherKey: (action: BrowserAction, hint: String)?
        let typesText: Bool

        init(_ bindings: [KeyBinding], otherKey: (action: BrowserAction, hint: String)? = nil, typesText: Bool = false) {
            self.bindings = bindings
            self.otherKey = otherKey
            self.typesText = typesText
        }

        /// The action for `key` in this mode; nil when the mode ignores it.
        func action(for key: Key) -> BrowserAction? {
            if let binding = bindings.first(where: { $0.keys.contains(key) }) { return binding.action }
            if typesText, case .character(let character) = key { return .type(character) }
            if case .resize(let width, let height) = key { return .resize(width: width, height: height) }
            return otherKey?.action
        }

        /// The hint bar's entries, in order.
        var hints: [String] { bindings.compactMap(\.hint) + (otherKey.map { [$0.hint] } ?? []) }
    }

    /// The keys of the mode `state` is in: one table per overlay drives both the dispatch and the hint bar.
    static func keys(for mode: KeyMode) -> ModeKeys? {
        let scrolling = [
            KeyBinding([.up, .character("k")], .up, "scroll up", hint: "↑↓ scroll"),
            KeyBinding([.down, .character("j")], .down, "scroll down"),
            KeyBinding([.pageUp], .pageUp, "page up"),
            KeyBinding([.pageDown, .character(" ")], .pageDown, "page down"),
        ]
        switch mode {
        case .normal:
            return nil
        case .help, .sqlDetail:
            return ModeKeys(scrolling, otherKey: (.cancel, "other keys close"))
        case .deletePreview:
            return ModeKeys([
                KeyBinding([.character("y"), .enter], .confirm, "delete", hint: "y/Enter delete"),
                KeyBinding([.character("n"), .escape], .cancel, "keep it", hint: "n/Esc cancel"),
            ])
        case .confirmQuit:
            return ModeKeys([
                KeyBinding([.character("w")], .saveAndQuit, "save, then quit", hint: "w save and quit"),
                KeyBinding([.character("y")], .confirm, "quit without saving", hint: "y discard and quit"),
                KeyBinding([.character("n"), .escape], .cancel, "stay", hint: "n stay"),
            ])
        case .search:
            return ModeKeys([
                KeyBinding([.enter], .keepSearch, "keep the filter", hint: "Enter keep"),
                KeyBinding([.escape], .cancel, "the list as it was", hint: "Esc cancel"),
                KeyBinding([.backspace], .erase, "erase a character"),
            ], typesText: true)
        case .tooSmall:
            return ModeKeys([KeyBinding([.character("q")], .quit, "quit", hint: "q quit")])
        }
    }

    /// The first key bound to `action`, as the help writes it (`p`): what advice tells the user to press.
    static func keyLabel(for action: BrowserAction) -> String {
        bindings.first { $0.action == action }?.keys.first?.label ?? "?"
    }

    /// The hint bar's entries for a pane, in the table's order, which is also their priority when the bar is short.
    /// A store that cannot be written does not advertise the keys that write (`d`, `w`, `u`).
    static func hints(for pane: Pane, readOnly: Bool = false) -> [String] {
        bindings.filter { $0.hint != nil && ($0.panes.isEmpty || $0.panes.contains(pane)) }
            .filter { !readOnly || !writingActions.contains($0.action) }
            .compactMap(\.hint)
    }

    /// The actions that change the store, which a read-only browser refuses.
    static let writingActions: [BrowserAction] = [.delete, .save, .undo, .redo]

    /// Hints the bar keeps at every width, whatever else it must leave out: how to learn the rest, and how to leave.
    static let keptHints = ["? help", "q quit"]

    /// What the marks and styles on screen mean, for the help's second section.
    static let markers: [(mark: String, meaning: String)] = [
        ("bold line", "a chat's title; its last message below"),
        ("You: …", "the last message is yours (handle 'me')"),
        ("Ana: …", "who sent a group's last message"),
        ("text alone", "a direct chat's last message, from them"),
        ("👥40", "a group's members (not unread messages)"),
        ("📌", "pinned: listed first"),
        ("🔕", "muted"),
        ("14:05 Fri date", "last message: today, this week, before"),
        ("12/300", "the selected row's place in the list"),
        ("┄ Tue 26 May", "the day of the messages below"),
        ("↪ «Ana: …»", "a reply, quoting the message it answers"),
        ("(edited)", "edited after it was sent"),
        ("👍2 ❤️1", "reactions, with how many of each"),
        ("[sticker] [image]", "not text: its name or caption"),
        ("[file] name", "a file message, with the file's name"),
        ("no messages", "the chat is empty"),
        ("highlight", "the selection (coloured text: pane unfocused)"),
    ]

    /// The help overlay's lines: keys, then what they do; then the marks and what they mean. A row with an empty
    /// meaning is a section heading.
    static func helpRows() -> [(keys: String, help: String)] {
        bindings.map { binding in (binding.keys.map(\.label).joined(separator: " "), binding.help) }
            + [("click · wheel", "select a row · scroll"), ("", ""), (markersHeading, "")]
            + markers.map { ($0.mark, $0.meaning) }
    }

    /// The heading of the marks' section in the help.
    static let markersHeading = "Marks on screen"
}
