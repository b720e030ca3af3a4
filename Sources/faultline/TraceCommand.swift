import ArgumentParser
import Browser
import Foundation
import GraphStore

/// `faultline trace [STORE] --script "down 3; open; …"`: runs the browser headless and prints the final screen,
/// or with `--json` what each action cost.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Run browser actions without a terminal and print the screen they leave, or what each cost.",
        discussion: """
            The actions are the browser's own, named as in its help: down, up, pagedown, pageup, top, bottom, open, \
            back, tab, members, search TEXT, delete, confirm, cancel, save, undo, redo, toggle-prefetch, \
            toggle-batch-mode, toggle-derived, cycle-batch, batch N, clear-cache, reset, explain, help, resize WxH. \
            Movement, undo and redo take a repeat count (down 3). Separate actions with ';'. The first action is \
            always 'start': the launch up to the first chat-list screen.

            With --json: {"screen": …, "actions": [{"action", "sql", "faults", "cacheHits", "cacheMisses", \
            "relationshipFaults", "fetches", "ms", "progress"}], "totals": {…}}. "progress" lists the progress \
            lines the action showed ("saving: 120,000 rows, 0.4 s"): saves, undo or redo after a save and delete \
            previews show one once they have run for --progress-after milliseconds, and again every 100 ms.
            """
    )

    @OptionGroup var browser: BrowserOptions

    @Option(help: ArgumentHelp("The actions to run, separated by ';'.", valueName: "actions"))
    var script = ""

    @Option(help: ArgumentHelp("The screen size, WIDTHxHEIGHT.", valueName: "size"))
    var size = "120x40"

    @Flag(help: "Print the screen and each action's cost as JSON.")
    var json = false

    @OptionGroup var sqlDebug: SQLDebugOptions

    func run() throws {
        guard let screenSize = Layout.size(size) else {
            throw CommandFailure("--size '\(size)': give WIDTHxHEIGHT, e.g. 120x40, each side from 1 to \(Layout.sideRange.upperBound)")
        }
        let actions: [BrowserAction]
        do {
            actions = try BrowserAction.script(script)
        } catch {
            throw CommandFailure("--script: \(error)")
        }
        let path = try browser.store ?? DefaultFixture.ensure()
        // The log file is checked before the store is opened and made only after it opened, so a bad log file
        // leaves the store alone and a bad store leaves no log file.
        try sqlDebug.checkLogFile(notOverwriting: [path])
        let model: BrowserModel
        do {
            model = try BrowserModel(path: path, settings: browser.settings, width: screenSize.width, height: screenSize.height)
        } catch {
            throw CommandFailure(error)
        }
        let log = try sqlDebug.attach(to: model.coordinator)
        let shown = ShownProgress()
        model.onProgress = { state in
            shown.note(state.progress)
            return true
        }
        var costs = [TraceReport.Cost(model.apply(.start), progress: shown.take())]
        for action in actions where !model.state.quitRequested {
            costs.append(TraceReport.Cost(model.apply(action), progress: shown.take()))
        }
        withExtendedLifetime(log) {}
        let screen = BrowserView.frame(model.state, activity: model.activity).text
        if json {
            try Output.write(TraceReport(screen: screen, actions: costs).json() + "\n")
        } else {
            try Output.write(screen + "\n")
        }
    }
}

/// `trace --json`'s shape.
struct TraceReport: Encodable {
    struct Cost: Encodable {
        let action: String
        let sql: Int
        let faults: Int
        let cacheHits: Int
        let cacheMisses: Int
        let relationshipFaults: Int
        let fetches: Int
        let ms: Double
        /// The progress lines the action showed, in order (nil for the totals).
        let progress: [String]?

        init(action: String, sql: Int, faults: Int, cacheHits: Int, cacheMisses: Int, relationshipFaults: Int, fetches: Int, ms: Double) {
            (self.action, self.sql, self.faults, self.cacheHits) = (action, sql, faults, cacheHits)
            (self.cacheMisses, self.relationshipFaults, self.fetches, self.ms) = (cacheMisses, relationshipFaults, fetches, ms)
            progress = nil
        }

        init(_ cost: ActionCost, progress: [String]) {
            self.progress = progress
            action = cost.action
            sql = cost.totals.statements
            faults = cost.totals.objectFaults
            cacheHits = cost.totals.cacheHits
            cacheMisses = cost.totals.cacheMisses
            relationshipFaults = cost.totals.relationshipFaults
            fetches = cost.totals.fetches
            ms = Double(cost.duration.components.attoseconds) / 1e15 + Double(cost.duration.components.seconds) * 1000
        }
    }

    let screen: String
    let actions: [Cost]
    /// The sums over every action (its `action` is "totals").
    let totals: Cost

    init(screen: String, actions: [Cost]) {
        self.screen = screen
        func sum(_ value: (Cost) -> Int) -> Int { actions.reduce(0) { $0 + value($1) } }
        self.actions = actions
        totals = Cost(action: "totals", sql: sum(\.sql), faults: sum(\.faults), cacheHits: sum(\.cacheHits),
                      cacheMisses: sum(\.cacheMisses), relationshipFaults: sum(\.relationshipFaults), fetches: sum(\.fetches),
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
