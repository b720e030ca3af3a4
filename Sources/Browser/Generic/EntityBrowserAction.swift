import Foundation

/// What the entity browser can be asked to do: the chat browser's own actions where they mean the same (moving,
/// open, back, panes, the filter field, delete, save, undo, the levers, the SQL log), and those of its own panes.
///
/// ```swift
/// let actions = try EntityBrowserAction.script("entity Person; open; sort lastName; follow cars; down 2; open")
/// ```
public enum EntityBrowserAction: Equatable, Sendable {
    /// One of the chat browser's actions, meaning here what it means there.
    case browser(BrowserAction)
    /// Opens the entity of that name in the entities pane (its objects in the objects pane).
    case entity(String)
    /// The next sort key of the objects pane (`s`): its own order, then each attribute in turn.
    case cycleSort
    /// Sorts the objects pane by an attribute (`SELF` for the key), ascending or not.
    case sort(String, ascending: Bool)
    /// Flips the objects pane's sort direction (`S`).
    case reverseSort
    /// Shows the objects pane's columns from the next attribute on (`v`), round to the first.
    case cycleColumns
    /// Shows these attributes and to-ones as the objects pane's columns, in this order (empty: the default ones).
    case columns([String])
    /// Filters the objects pane with a predicate in Core Data's format ("" clears it).
    case filter(String)
    /// Follows a relationship of the object shown: its destination, or its members as a list.
    case follow(String)

    /// The action's name in scripts and in `trace --json`.
    public var name: String {
        switch self {
        case .browser(let action): action.name
        case .entity(let name): "entity \(name)"
        case .cycleSort: "sort"
        case .sort(let key, let ascending): "sort \(ascending ? "" : "-")\(key)"
        case .reverseSort: "reverse"
        case .cycleColumns: "columns"
        case .columns(let keys): keys.isEmpty ? "columns default" : "columns \(keys.joined(separator: ","))"
        case .filter(let text): text.isEmpty ? "filter" : "filter \(text)"
        case .follow(let key): "follow \(key)"
        }
    }

    /// The chat browser's actions that mean something here, by their script names.
    static let sharedNames: Set<String> = [
        "up", "down", "pageup", "pagedown", "top", "bottom", "open", "back", "tab", "backtab", "delete", "confirm",
        "cancel", "save", "undo", "redo", "toggle-prefetch", "toggle-batch-mode", "toggle-derived", "cycle-batch",
        "batch", "clear-cache", "reset", "explain", "help", "quit", "save-and-quit", "resize",
    ]

    /// Every action a script may name, for the message about an unknown one and for `trace --help`.
    public static let scriptNames = sharedNames.subtracting(["batch", "resize"]).sorted()
        + ["batch N", "columns [KEY,…|default]", "entity NAME", "filter [PREDICATE]", "follow RELATIONSHIP", "resize WxH",
           "reverse", "search [PREDICATE]", "sort [KEY|-KEY]"]

    /// Parses a script: actions separated by `;` or new lines, each a name with an optional argument. The chat
    /// browser's actions are read as it reads them (`down 3`, `batch 100`, `resize 80x24`); `search` is `filter`
    /// here, its text a predicate. Throws `ScriptError` naming the first bad action.
    public static func script(_ text: String) throws(ScriptError) -> [EntityBrowserAction] {
        var actions: [EntityBrowserAction] = []
        for (offset, raw) in text.split(whereSeparator: { $0 == ";" || $0 == "\n" }).enumerated() {
            let item = raw.trimmingCharacters(in: .whitespaces)
            guard !item.isEmpty else { continue }
            actions += try parse(item, position: offset + 1)
        }
        return actions
    }

    private static func parse(_ item: String, position: Int) throws(ScriptError) -> [EntityBrowserAction] {
        let parts = item.split(separator: " ", maxSplits: 1).map(String.init)
        let word = parts.first?.lowercased() ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
        func bad(_ reason: String) -> ScriptError { ScriptError(position: position, action: item, reason: reason) }
        switch word {
        case "filter", "search":
            return [.filter(argument ?? "")]
        case "entity":
            guard let argument, !argument.isEmpty else { throw bad("entity takes the name of an entity") }
            return [.entity(argument)]
        case "follow":
            guard let argument, !argument.isEmpty else { throw bad("follow takes the name of a relationship") }
            return [.follow(argument)]
        case "reverse":
            guard argument == nil else { throw bad("'reverse' takes no argument") }
            return [.reverseSort]
        case "sort":
            guard let argument else { return [.cycleSort] }
            let descending = argument.hasPrefix("-")
            let key = descending ? String(argument.dropFirst()) : argument
            guard !key.isEmpty, !key.contains(" ") else { throw bad("sort takes one key, '-' before it for descending") }
            return [.sort(key, ascending: !descending)]
        case "columns":
            guard let argument else { return [.cycleColumns] }
            if argument == "default" { return [.columns([])] }
            let keys = argument.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !keys.contains(where: { $0.isEmpty || $0.contains(" ") }) else {
                throw bad("columns takes keys separated by commas (maker,model,owner), or 'default'")
            }
            return [.columns(keys)]
        default:
            guard sharedNames.contains(word) else {
                throw bad("unknown action; known: " + scriptNames.joined(separator: ", "))
            }
            do {
                return try BrowserAction.script(item).map(EntityBrowserAction.browser)
            } catch {
                throw ScriptError(position: position, action: item, reason: error.reason)
            }
        }
    }
}
