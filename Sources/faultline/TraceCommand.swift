import ArgumentParser
import Browser
import Foundation
import GraphStore
import TerminalText

/// `faultline trace [STORE] --script "down 3; open; …"`: runs the browser headless and prints the final screen,
/// or with `--json` what each action cost.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Run browser actions without a terminal and print the screen they leave, or what each cost.",
        discussion: """
            The actions are the browser's own, named as in its help: down, up, pagedown, pageup, top, bottom, open, \
            back, tab, backtab, members, search TEXT, delete, confirm, cancel, save, undo, redo, toggle-prefetch, \
            toggle-batch-mode, toggle-derived, toggle-columns, cycle-batch, batch N, clear-cache, reset, explain, \
            help, quit, save-and-quit, resize WxH. Movement, tab, undo and redo take a repeat count (down 3). Separate actions \
            with ';'. The first action is always 'start': the launch up to the first chat-list screen. In the SQL \
            log (tab to it), open shows the selected statement in full.

            On a STORE of another model (a Core Data store of your app, say), the entity browser runs instead, with \
            the model read from inside the store or given with --model (read-only unless --write): its panes are the entities with their counts, a list of objects and \
            one object. Its actions are the ones above that mean something there (down, up, pagedown, pageup, top, \
            bottom, open, back, tab, backtab, delete, confirm, cancel, save, undo, redo, toggle-prefetch, \
            toggle-batch-mode, toggle-derived, cycle-batch, batch N, clear-cache, reset, explain, help, quit, \
            save-and-quit, resize WxH) and its own: entity NAME (open an entity), sort (the next sort key), sort KEY \
            or sort -KEY (by an attribute, or SELF for the key; - for descending), reverse, columns (from the next \
            attribute on), columns KEY,KEY… or columns default, filter PREDICATE (Core Data's format, e.g. \
            filter maker == 'FIAT'; filter alone clears it; search is the same), follow RELATIONSHIP (from the object \
            shown: a to-one to its object, a to-many to its members). open on an object list opens the selected \
            object; on a relationship of the object shown, it follows it.

            With --json: {"screen": …, "actions": [{"action", "sql", "faults", "cacheHits", "cacheMisses", \
            "partialFaults", "relationshipFaults", "fetches", "ms", "warnings": [the panel's], "statements": [{"pane", "cause", \
            "rows", "sql"}], "progress"}], "totals": {…}}. A statement's pane is absent for work that is no pane's (a \
            save). "progress" lists the progress lines the action showed ("saving: 120,000 rows, 0.4 s"): saves, undo \
            or redo after a save and delete previews show one once they have run for --progress-after milliseconds, \
            and again every 100 ms.
            """
    )

    @OptionGroup var browser: BrowserOptions

    @Option(help: ArgumentHelp("The actions to run, separated by ';'.", valueName: "actions"))
    var script = ""

    @Option(parsing: .unconditional, help: ArgumentHelp("The screen size, WIDTHxHEIGHT.", valueName: "size"))
    var size = "120x40"

    @Flag(help: "Print the screen and each action's cost as JSON.")
    var json = false

    @OptionGroup var sqlDebug: SQLDebugOptions

    /// How many statements `--json` lists at most (the newest); a script that runs more lists the last ones.
    static let jsonLogCapacity = 200_000

    func run() throws {
        guard let screenSize = Layout.size(size) else {
            throw CommandFailure("--size '\(size)': give WIDTHxHEIGHT, e.g. 120x40, each side from 1 to \(Layout.sideRange.upperBound)")
        }
        if let foreign = try browser.foreignModel() {
            try traceForeign(model: foreign, size: screenSize)
            return
        }
        // A store given without --model may turn out to be of another model (the entity browser's actions): a script
        // only the entity browser reads is refused once the store is known to be a chat store.
        let actions: [BrowserAction]
        var scriptProblem: CommandFailure?
        do {
            actions = try BrowserAction.script(script)
        } catch {
            let problem = CommandFailure("--script: \(error)")
            guard browser.model == nil, browser.store != nil, (try? EntityBrowserAction.script(script)) != nil else { throw problem }
            actions = []
            scriptProblem = problem
        }
        let path = try browser.store ?? DefaultFixture.ensure()
        // The log file is checked before the store is opened and made only after it opened, so a bad log file
        // leaves the store alone and a bad store leaves no log file.
        try sqlDebug.checkLogFile(notOverwriting: [path])
        let model: BrowserModel
        let settings = try browser.settings()
        do {
            // The log keeps every statement the JSON lists.
            model = try BrowserModel(path: path, settings: settings, width: screenSize.width, height: screenSize.height,
                                     logCapacity: json ? Self.jsonLogCapacity : ActivityMonitor.defaultLogCapacity)
        } catch {
            // A store of another model, given without --model: the entity browser, with the model inside it.
            try traceForeign(model: browser.modelInside(storeAt: path, refusal: error), size: screenSize)
            return
        }
        if let scriptProblem { throw scriptProblem }
        let log = try sqlDebug.attach(to: model.coordinator)
        let shown = ShownProgress()
        model.onProgress = { state in
            shown.note(state.progress)
            return true
        }
        let (costs, progress) = Self.play(actions, start: { model.apply(.start) }, apply: model.apply,
                                          quitRequested: { model.state.quitRequested }, shown: shown)
        withExtendedLifetime(log) {}
        try write(screen: BrowserView.frame(model.state, activity: model.activity).text, costs: costs, progress: progress,
                  log: model.activity.sqlLog)
    }

    /// The launch, then each action until one quits, with the progress lines each showed.
    static func play<Action>(_ actions: [Action], start: () -> ActionSummary, apply: (Action) -> ActionSummary,
                             quitRequested: () -> Bool, shown: ShownProgress) -> (costs: [ActionSummary], progress: [[String]]) {
        var costs = [start()]
        var progress = [shown.take()]
        for action in actions where !quitRequested() {
            costs.append(apply(action))
            progress.append(shown.take())
        }
        return (costs, progress)
    }

    /// The last screen, or with `--json` the screen and each action's cost.
    func write(screen: String, costs: [ActionSummary], progress: [[String]], log: [SQLLogEntry]) throws {
        if json {
            try Output.write(TraceReport(screen: screen, summaries: costs, progress: progress, log: log).json() + "\n")
        } else {
            try Output.write(screen + "\n")
        }
    }
}

extension TraceCommand {
    /// The error of `--model` naming a model other than the chat model without the store it describes.
    static let storeMissing = "--model names a model other than the chat model: give the STORE it describes"

    /// The entity browser, headless, on a store whose model is not the chat model.
    func traceForeign(model: ForeignModel, size: (width: Int, height: Int)) throws {
        let actions: [EntityBrowserAction]
        do {
            actions = try EntityBrowserAction.script(script)
        } catch {
            throw CommandFailure("--script: \(error)")
        }
        guard let path = browser.store else { throw CommandFailure(Self.storeMissing) }
        try sqlDebug.checkLogFile(notOverwriting: [path])
        let entityBrowser: EntityBrowserModel
        let settings = try browser.settings()
        do {
            let store = try ForeignStore.open(path: path, model: model, writable: browser.write, settings: settings)
            entityBrowser = EntityBrowserModel(store: store, settings: settings, width: size.width, height: size.height,
                                               logCapacity: json ? Self.jsonLogCapacity : ActivityMonitor.defaultLogCapacity)
        } catch {
            throw CommandFailure(error)
        }
        if browser.write { Output.writeError(ChosenModel.writeWarning(store: path) + "\n") }
        let log = try sqlDebug.attach(to: entityBrowser.coordinator)
        let shown = ShownProgress()
        entityBrowser.onProgress = { state in
            shown.note(state.progress)
            return true
        }
        let (costs, progress) = Self.play(actions, start: { entityBrowser.apply(.browser(.start)) }, apply: entityBrowser.apply,
                                          quitRequested: { entityBrowser.state.quitRequested }, shown: shown)
        withExtendedLifetime(log) {}
        try write(screen: EntityBrowserView.frame(entityBrowser.state, activity: entityBrowser.activity).text, costs: costs,
                  progress: progress, log: entityBrowser.activity.sqlLog)
    }
}

/// `trace --json`'s shape.
struct TraceReport: Encodable {
    /// One statement an action ran: the pane whose reads ran it (none for a save or a preview), its cause as the
    /// SQL log writes it, the rows it returned or changed, and the SQL.
    struct Statement: Encodable {
        let pane: String?
        let cause: String
        let rows: Int
        let sql: String
    }

    struct Cost: Encodable {
        let action: String
        let sql: Int
        let faults: Int
        let cacheHits: Int
        let cacheMisses: Int
        /// Of the faults, those of partial objects that read the rest of their row.
        let partialFaults: Int
        let relationshipFaults: Int
        let fetches: Int
        let ms: Double
        /// The panel's warnings after the action, as it words them.
        let warnings: [String]?
        /// Every statement, in the order it ran (the totals have none).
        let statements: [Statement]?
        /// The progress lines the action showed, in order (nil for the totals).
        let progress: [String]?

        init(action: String, sql: Int, faults: Int, cacheHits: Int, cacheMisses: Int, partialFaults: Int, relationshipFaults: Int,
             fetches: Int, ms: Double) {
            (self.action, self.sql, self.faults, self.cacheHits) = (action, sql, faults, cacheHits)
            (self.cacheMisses, self.partialFaults, self.relationshipFaults, self.fetches, self.ms) = (cacheMisses, partialFaults, relationshipFaults, fetches, ms)
            (warnings, statements, progress) = (nil, nil, nil)
        }

        /// - Parameter log: the statements, oldest first (numbers rising).
        init(_ summary: ActionSummary, log: ArraySlice<SQLLogEntry>, progress: [String]) {
            self.progress = progress
            action = summary.action
            sql = summary.counts.statements
            faults = summary.counts.objectFaults
            cacheHits = summary.counts.cacheHits
            cacheMisses = summary.counts.cacheMisses
            partialFaults = summary.counts.partialFaults
            relationshipFaults = summary.counts.relationshipFaults
            fetches = summary.counts.fetches
            ms = Double(summary.duration.components.attoseconds) / 1e15 + Double(summary.duration.components.seconds) * 1000
            warnings = summary.warnings.map(\.message)
            statements = log.map { entry in
                Statement(pane: entry.pane, cause: entry.cause.description, rows: entry.rows, sql: entry.sql)
            }
        }
    }

    let screen: String
    let actions: [Cost]
    /// The sums over every action (its `action` is "totals").
    let totals: Cost

    /// - Parameter progress: per action, the progress lines it showed.
    init(screen: String, summaries: [ActionSummary], progress: [[String]], log: [SQLLogEntry]) {
        self.screen = screen
        // The log is newest first; oldest first, each action's statements are one run of it, found by bisection
        // rather than by a pass over the whole log per action.
        let oldestFirst = Array(log.reversed())
        func start(of number: Int) -> Int {
            var (low, high) = (0, oldestFirst.count)
            while low < high {
                let middle = (low + high) / 2
                if oldestFirst[middle].number < number { low = middle + 1 } else { high = middle }
            }
            return low
        }
        let actions = zip(summaries, progress).map { summary, lines in
            let numbers = summary.entryNumbers
            return Cost(summary, log: oldestFirst[start(of: numbers.lowerBound)..<start(of: numbers.upperBound)], progress: lines)
        }
        func sum(_ value: (Cost) -> Int) -> Int { actions.reduce(0) { $0 + value($1) } }
        self.actions = actions
        totals = Cost(action: "totals", sql: sum(\.sql), faults: sum(\.faults), cacheHits: sum(\.cacheHits),
                      cacheMisses: sum(\.cacheMisses), partialFaults: sum(\.partialFaults), relationshipFaults: sum(\.relationshipFaults), fetches: sum(\.fetches),
                      ms: actions.reduce(0) { $0 + $1.ms })
    }

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

/// The progress lines the browser showed during one action, as the trace records them.
final class ShownProgress {
    private var lines: [String] = []

    func note(_ progress: WorkProgress?) {
        guard let line = progress?.description, lines.last != line else { return }
        lines.append(line)
    }

    /// The lines since the last call.
    func take() -> [String] {
        defer { lines = [] }
        return lines
    }
}
