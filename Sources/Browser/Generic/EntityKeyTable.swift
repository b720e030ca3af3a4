import TerminalText

/// One key binding of the entity browser: the keys, the action, the help line, and the panes whose hint bar shows
/// it (empty: every pane).
struct EntityKeyBinding: Sendable {
    let keys: [Key]
    let action: EntityBrowserAction
    let help: String
    let panes: [EntityPane]
    let hint: String?

    init(_ keys: [Key], _ action: EntityBrowserAction, _ help: String, panes: [EntityPane] = [], hint: String? = nil) {
        self.keys = keys
        self.action = action
        self.help = help
        self.panes = panes
        self.hint = hint
    }

    init(_ keys: [Key], _ action: BrowserAction, _ help: String, panes: [EntityPane] = [], hint: String? = nil) {
        self.init(keys, .browser(action), help, panes: panes, hint: hint)
    }
}

/// The one table that dispatches the entity browser's keys and draws its help and hint bar. The overlays (help,
/// the delete preview, the quit question, the filter field, a statement in full) take their keys from the chat
/// browser's tables (`KeyTable.keys(for:)`): they are the same overlays.
enum EntityKeyTable {
    static let bindings: [EntityKeyBinding] = [
        EntityKeyBinding([.up, .character("k")], .up, "move up", hint: "↑↓ move"),
        EntityKeyBinding([.down, .character("j")], .down, "move down"),
        EntityKeyBinding([.pageUp], .pageUp, "page up"),
        EntityKeyBinding([.pageDown, .character(" ")], .pageDown, "page down"),
        EntityKeyBinding([.character("g"), .home], .top, "first row"),
        EntityKeyBinding([.character("G"), .end], .bottom, "last row"),
        EntityKeyBinding([.enter, .character("l"), .right], .open,
                         "open the entity or the object; on a relationship, follow it; in the SQL log, the statement in full",
                         panes: [.entities, .objects, .sqlLog], hint: "Enter open"),
        EntityKeyBinding([.enter, .character("l"), .right], .open, "", panes: [.object], hint: "Enter follow"),
        EntityKeyBinding([.escape, .character("h"), .left, .backspace], .back, "back along the path",
                         panes: [.objects, .object, .sqlLog], hint: "Esc back"),
        EntityKeyBinding([.tab], .nextPane, "next pane", hint: "Tab pane"),
        EntityKeyBinding([.backTab], .previousPane, "previous pane"),
        EntityKeyBinding([.character("/")], .beginSearch, "filter the objects with a predicate (name BEGINSWITH 'A'); Enter applies it",
                         panes: [.objects], hint: "/ filter"),
        EntityKeyBinding([.character("s")], EntityBrowserAction.cycleSort, "sort by the next attribute (the key first)",
                         panes: [.objects], hint: "s sort"),
        EntityKeyBinding([.character("S")], EntityBrowserAction.reverseSort, "reverse the sort", panes: [.objects]),
        EntityKeyBinding([.character("v")], EntityBrowserAction.cycleColumns, "columns from the next attribute on",
                         panes: [.objects], hint: "v columns"),
        EntityKeyBinding([.character("d")], .delete, "delete the selected object (preview by the delete rules first)",
                         panes: [.objects, .object], hint: "d delete"),
        EntityKeyBinding([.character("u")], .undo, "undo", hint: "u undo"),
        EntityKeyBinding([.control("r")], .redo, "redo"),
        EntityKeyBinding([.character("w")], .save, "save", hint: "w save"),
        EntityKeyBinding([.character("b")], .cycleBatch, "batch size of object lists: off, 20, 100 (not the counts, not one object)",
                         panes: [.objects], hint: "b batch"),
        EntityKeyBinding([.character("B")], .toggleBatchMode, "batching of object lists: Faultline's windows or Core Data's all IDs first"),
        EntityKeyBinding([.character("p")], .togglePrefetch,
                         "prefetch the to-ones an object list shows: joined → off → IN statements (nothing else prefetches)",
                         panes: [.objects], hint: "p prefetch"),
        EntityKeyBinding([.character("c")], .toggleDerived, "to-many counts in the object pane, one COUNT each: on/off",
                         panes: [.object], hint: "c counts"),
        EntityKeyBinding([.character("x")], .clearCache, "empty the row cache"),
        EntityKeyBinding([.character("r")], .resetCounters, "reset the counters and the sparklines"),
        EntityKeyBinding([.character("e")], .explain, "EXPLAIN QUERY PLAN of the selected statement", panes: [.sqlLog], hint: "e explain"),
        EntityKeyBinding([.character("?")], .help, "this help", hint: "? help"),
        EntityKeyBinding([.character("q")], .quit, "quit (asks when changes are unsaved)", hint: "q quit"),
    ]

    /// The action bound to `key` in the normal mode (no overlay).
    static func action(for key: Key) -> EntityBrowserAction? {
        switch key {
        case .click(let row, let column): return .browser(.click(row: row, column: column))
        case .wheelUp(let row, let column): return .browser(.scrollUp(row: row, column: column))
        case .wheelDown(let row, let column): return .browser(.scrollDown(row: row, column: column))
        case .resize(let width, let height): return .browser(.resize(width: width, height: height))
        default: return bindings.first { $0.keys.contains(key) }?.action
        }
    }

    /// The actions that change the store, which a read-only browser neither offers nor carries out.
    static let writingActions: [EntityBrowserAction] = [.browser(.delete), .browser(.save), .browser(.undo), .browser(.redo)]

    /// The hint bar's entries for a pane, in the table's order. A read-only store does not advertise the keys that
    /// write. `prefetchUseless` says the list shows no to-one, so that `p` has nothing to prefetch there.
    static func hints(for pane: EntityPane, writable: Bool, prefetchUseless: Bool = false) -> [String] {
        bindings.filter { $0.hint != nil && ($0.panes.isEmpty || $0.panes.contains(pane)) }
            .filter { writable || !writingActions.contains($0.action) }
            .compactMap { binding in
                if binding.action == .browser(.togglePrefetch), prefetchUseless { return "p nothing to prefetch" }
                return binding.hint
            }
    }

    /// The help overlay's rows: keys, then what they do; bindings that repeat another's keys are left out.
    static func helpRows() -> [(keys: String, help: String)] {
        bindings.filter { !$0.help.isEmpty }.map { ($0.keys.map(\.label).joined(separator: " "), $0.help) }
            + [("click · wheel", "select a row · scroll"), ("", ""), (KeyTable.markersHeading, "")]
            + markers.map { ($0.mark, $0.meaning) }
    }

    /// What the marks on screen mean, for the help's second section.
    static let markers: [(mark: String, meaning: String)] = [
        ("Car 125", "objects of the entity and its sub-entities"),
        ("  SportCar 10", "a sub-entity, under its parent"),
        ("p12", "an object by its key (Z_PK)"),
        ("→ Person p17", "a to-one and the object it points to"),
        ("⇉ 12 Car", "a to-many: its count, when counts are on"),
        ("—", "no value (nil)"),
        ("48 B  89 50 4e…", "binary data: its size and first bytes"),
        ("external file <uuid>", "kept in .<store>_SUPPORT/_EXTERNAL_DATA"),
        ("A › p3 › cars", "the path from the entity to what is shown"),
        ("key ↑", "the sort: the key or an attribute, its direction"),
    ]
}
