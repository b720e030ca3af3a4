import Foundation

/// Everything the browser can be asked to do: by a key (through `KeyTable`), by a click, or by name in a
/// `faultline trace --script`. The names are the words the help overlay and scripts use.
///
/// ```swift
/// let actions = try BrowserAction.script("down 3; open; members; delete; confirm; save; undo")
/// ```
public enum BrowserAction: Equatable, Sendable {
    /// The launch, up to the first chat-list screen.
    case start
    case up, down, pageUp, pageDown, top, bottom
    case open, back
    /// Move the focus to the next pane (`Tab`).
    case nextPane
    case previousPane
    case members
    /// Start typing a search (the `/` key); `search(text)` runs it (an empty text clears it).
    case beginSearch
    case search(String)
    /// While the search field is open: filters the list by what is typed so far (the browser sends it once typing
    /// pauses), keeping the field open.
    case refine
    /// Enter in the search field: keeps the filter typed and closes the field.
    case keepSearch
    case delete, confirm, cancel
    case save, undo, redo
    case togglePrefetch, toggleBatchMode, toggleDerived
    /// Fetch only the columns the panes draw (`propertiesToFetch`), or whole rows.
    case toggleColumns
    /// One step of the batch-size cycle (`b`); `batch(n)` sets a size.
    case cycleBatch
    case batch(Int)
    case clearCache
    case resetCounters
    /// Brings in what other contexts (the live writer) saved and other processes wrote: the browser runs it when
    /// its idle check finds something waiting; scripts may name it.
    case merge
    /// `EXPLAIN QUERY PLAN` of the SQL log's selected statement.
    case explain
    case help
    case quit
    /// At the quit question: save, then quit if the save went through.
    case saveAndQuit
    case resize(width: Int, height: Int)
    case click(row: Int, column: Int)
    case scrollUp(row: Int, column: Int)
    case scrollDown(row: Int, column: Int)
    /// A character typed into the search field, or a backspace.
    case type(Character)
    case erase

    /// The action's name in scripts and in `trace --json`.
    public var name: String {
        switch self {
        case .start: "start"
        case .up: "up"
        case .down: "down"
        case .pageUp: "pageup"
        case .pageDown: "pagedown"
        case .top: "top"
        case .bottom: "bottom"
        case .open: "open"
        case .back: "back"
        case .nextPane: "tab"
        case .previousPane: "backtab"
        case .members: "members"
        case .beginSearch: "find"
        case .search(let text): text.isEmpty ? "search" : "search \(text)"
        case .refine: "refine"
        case .keepSearch: "keep-search"
        case .delete: "delete"
        case .confirm: "confirm"
        case .cancel: "cancel"
        case .save: "save"
        case .undo: "undo"
        case .redo: "redo"
        case .togglePrefetch: "toggle-prefetch"
        case .toggleBatchMode: "toggle-batch-mode"
        case .toggleDerived: "toggle-derived"
        case .toggleColumns: "toggle-columns"
        case .cycleBatch: "cycle-batch"
        case .batch(let size): "batch \(size)"
        case .clearCache: "clear-cache"
        case .resetCounters: "reset"
        case .merge: "merge"
        case .explain: "explain"
        case .help: "help"
        case .quit: "quit"
        case .saveAndQuit: "save-and-quit"
        case .resize(let width, let height): "resize \(width)x\(height)"
        case .click(let row, let column): "click \(row) \(column)"
        case .scrollUp(let row, let column): "scroll-up \(row) \(column)"
        case .scrollDown(let row, let column): "scroll-down \(row) \(column)"
        case .type(let character): "type \(character)"
        case .erase: "erase"
        }
    }

    /// Whether the action only moves within what is fetched: a batch it reads is read ahead of the rows it shows
    /// (one row of it on screen after a step down), so what that batch prefetched is not judged unused.
    public var movesWithinFetch: Bool {
        switch self {
        case .up, .down, .pageUp, .pageDown, .top, .bottom, .click, .scrollUp, .scrollDown: true
        default: false
        }
    }

    /// Actions a script can name without an argument.
    private static let plain: [String: BrowserAction] = {
        let all: [BrowserAction] = [
            .up, .down, .pageUp, .pageDown, .top, .bottom, .open, .back, .nextPane, .previousPane, .members, .delete, .confirm, .cancel,
            .save, .undo, .redo, .togglePrefetch, .toggleBatchMode, .toggleDerived, .toggleColumns, .cycleBatch, .clearCache,
            .resetCounters, .merge, .explain, .help, .quit, .saveAndQuit, .refine,
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    }()

    /// Actions that take a repeat count (`down 3`).
    private static let repeatable: Set<String> = ["up", "down", "pageup", "pagedown", "undo", "redo", "tab", "backtab"]

    /// Parses a script: actions separated by `;` or new lines, each a name with an optional argument (`down 3`,
    /// `search ski`, `batch 100`, `resize 80x24`). Throws `ScriptError` naming the first bad action.
    public static func script(_ text: String) throws(ScriptError) -> [BrowserAction] {
        var actions: [BrowserAction] = []
        for (offset, raw) in text.split(whereSeparator: { $0 == ";" || $0 == "\n" }).enumerated() {
            let item = raw.trimmingCharacters(in: .whitespaces)
            guard !item.isEmpty else { continue }
            actions += try parse(item, position: offset + 1)
        }
        return actions
    }

    private static func parse(_ item: String, position: Int) throws(ScriptError) -> [BrowserAction] {
        let parts = item.split(separator: " ", maxSplits: 1).map(String.init)
        let word = parts[0].lowercased()
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
        func bad(_ reason: String) -> ScriptError { ScriptError(position: position, action: item, reason: reason) }
        switch word {
        case "search":
            return [.search(argument ?? "")]
        case "batch":
            guard let argument, let size = Int(argument), BrowserSettings.batchSizeRange.contains(size) else {
                throw bad("batch takes a size: a number from 0 to \(BrowserSettings.batchSizeRange.upperBound)")
            }
            return [.batch(size)]
        case "resize":
            guard let argument, let size = Layout.size(argument) else {
                throw bad("resize takes a size like 120x40, each side from 1 to \(Layout.sideRange.upperBound)")
            }
            return [.resize(width: size.width, height: size.height)]
        default:
            guard let action = plain[word] else {
                throw bad("unknown action; known: " + (plain.keys.sorted() + ["batch N", "resize WxH", "search TEXT"]).joined(separator: ", "))
            }
            guard let argument else { return [action] }
            guard repeatable.contains(word), let count = Int(argument), (1...10_000).contains(count) else {
                throw bad(repeatable.contains(word) ? "the repeat count must be a number from 1 to 10000" : "'\(word)' takes no argument")
            }
            return Array(repeating: action, count: count)
        }
    }
}

/// A script action that could not be read: its position (from 1), its text and why.
public struct ScriptError: Error, Equatable, CustomStringConvertible {
    public let position: Int
    public let action: String
    public let reason: String

    public var description: String { "action \(position) '\(action)': \(reason)" }
}
