import Foundation
import Testing

/// `faultline trace` on the default fixture (1,000 users, 300 chats, 60,000 messages): the browser's SQL budgets as
/// its JSON reports them, and the activity panel's figures checked against what really ran.
@Suite struct TraceCommandTests {
    /// The default fixture, generated once by the binary into a temporary folder.
    static let fixture: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trace-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("chat.sqlite").path
        let made = try! FaultlineBinary.run(["fixture", "generate", "--out", path])
        precondition(made.status == 0, "fixture generate failed: \(made.stderr)")
        return path
    }()

    struct Statement: Decodable {
        let pane: String?
        let cause: String
        let rows: Int
        let sql: String
    }

    struct Cost: Decodable {
        let action: String
        let sql, faults, cacheHits, cacheMisses, partialFaults, relationshipFaults, fetches: Int
        let ms: Double
        /// Absent from the totals.
        let warnings: [String]?
        let statements: [Statement]?
        /// The progress lines the action showed (none for the totals).
        let progress: [String]?
    }

    struct Report: Decodable {
        let screen: String
        let actions: [Cost]
        let totals: Cost
    }

    func trace(_ script: String, _ options: [String] = [], store: String = fixture) throws -> Report {
        let result = try FaultlineBinary.run(["trace", store, "--json", "--script", script] + options)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
    }

    @Test func theBudgetsHoldWithDefaultSettings() throws {
        let report = try trace("down 5; open; up 3; back; pagedown; pagedown; pagedown; pagedown")
        let actions = report.actions
        #expect(actions.map(\.action) == ["start"] + Array(repeating: "down", count: 5) + ["open"]
            + Array(repeating: "up", count: 3) + ["back"] + Array(repeating: "pagedown", count: 4))
        #expect(actions[0].sql <= 4, "first chat-list screen: \(actions[0].sql) statements")
        #expect(actions[0].fetches >= 1)
        // Moving within the loaded batch, down the chats and up the messages: no SQL.
        for moved in actions[1...5] + actions[7...9] {
            #expect(moved.sql == 0 && moved.faults == 0, "\(moved.action): \(moved.sql) statements")
        }
        #expect(actions[6].sql <= 4, "opening a chat: \(actions[6].sql) statements")
        // The latest messages and their senders come filled with the columns the pane draws: nothing to fault.
        #expect(actions[6].faults == 0, "opening a chat: \(actions[6].faults) faults")
        let pages = actions[11...]
        #expect(pages.contains { $0.sql > 0 }, "paging past the first batches loads the next")
        #expect(pages.allSatisfy { $0.sql <= 3 }, "the next batch: \(pages.map(\.sql)) statements")
        // The totals are the sum of the actions.
        #expect(report.totals.action == "totals")
        #expect(report.totals.sql == actions.map(\.sql).reduce(0, +))
        #expect(report.totals.faults == actions.map(\.faults).reduce(0, +))
    }

    @Test func scrollingBackThroughAChatLoadsOlderMessagesInBatchesWithinBudget() throws {
        // The first chat (20,000 messages): scrolling back 120 crosses at least two batch boundaries.
        let report = try trace("open; up 120")
        let ups = report.actions.filter { $0.action == "up" }
        #expect(ups.count == 120)
        #expect(ups.filter { $0.sql > 0 }.count >= 2, "older batches were read: \(ups.map(\.sql))")
        // IDs, rows with senders and quotes joined, reactions, attachments.
        #expect(ups.allSatisfy { $0.sql <= 4 }, "each older batch: \(ups.map(\.sql).filter { $0 > 0 }) statements")
        #expect(ups.filter { $0.sql == 0 }.count > 100, "moves within a loaded batch run no SQL")
    }

    @Test func withPrefetchOffTheScreenWarnsOfNPlusOneAndCostsMore() throws {
        let tuned = try trace("")
        let untuned = try trace("", ["--no-prefetch"])
        #expect(untuned.screen.contains("N+1"), "\(untuned.screen)")
        #expect(!tuned.screen.contains("N+1"))
        #expect(untuned.actions[0].sql > tuned.actions[0].sql + 5, "with prefetch off, one statement per fault")
        #expect(untuned.actions[0].relationshipFaults == 0)
        #expect(untuned.actions[0].cacheMisses > 0)
    }

    @Test func derivedCountsOffFireTheMembersRelationship() throws {
        let report = try trace("toggle-derived")
        let toggled = report.actions[1]
        #expect(toggled.relationshipFaults > 0, "counting members without the derived count fires the to-many")
        #expect(report.screen.contains("counts counted"))
        // Only group chats show a count: one relationship fault per group row on the screen.
        let rows = report.screen.split(separator: "\n").dropFirst().compactMap { $0.split(separator: "│").first }
        let groupRows = rows.filter { $0.contains(#/👥\d+/#) }
        #expect(groupRows.count > 5)
        #expect(toggled.relationshipFaults == groupRows.count, "\(toggled.relationshipFaults) for \(groupRows.count) rows")
        let warnings = toggled.warnings ?? []
        #expect(warnings.contains { $0.hasPrefix("count of Chat.members in chat list fired the relationship (") },
                "the warning names the count and the pane: \(warnings)")
        #expect(warnings.contains { $0.hasSuffix("— press c to read membersCount (derived count)") }, "and the key for the derived one")
        #expect(report.screen.contains("count of Chat.members in chat list"), "the panel shows it: \(report.screen)")
    }

    /// The panel on the screen shows the same figures as the JSON, and the JSON's statements are the statements the
    /// store's own SQL log saw, one for one.
    @Test func thePanelsFiguresMatchTheEvents() throws {
        let folder = TemporaryFolder()
        let log = folder.path("sql.log")
        let script = "open; down 3; members; back; toggle-prefetch; clear-cache; pagedown; pagedown"
        let report = try trace(script, ["--sql-debug", "1", "--sql-log", log])
        let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("CoreData: sql: ") }
        #expect(report.totals.sql == logged.count, "the SQL log has \(logged.count) statements")
        #expect(report.totals.sql > 10)
        #expect(report.totals.cacheMisses > 0, "after emptying the row cache, faults miss it")

        let panel = Self.panel(report.screen)
        let last = try #require(report.actions.last)
        #expect(panel.contains { $0.hasPrefix("last: pagedown") }, "\(panel)")
        #expect(Self.figures(panel, after: "last:") == [last.sql, last.faults, last.cacheHits, last.cacheMisses,
                                                         last.relationshipFaults, last.fetches])
        let totals = report.totals
        #expect(Self.figures(panel, after: "since start") == [totals.sql, totals.faults, totals.cacheHits,
                                                                totals.cacheMisses, totals.relationshipFaults,
                                                                totals.fetches])
    }

    /// The right-hand column of a 120-column screen: the panel over the SQL log.
    static func panel(_ screen: String) -> [String] {
        screen.split(separator: "\n").compactMap { $0.split(separator: "│").last.map(String.init) }
    }

    /// From the three lines after the header line starting with `header`: statements, faults, hits, misses,
    /// relationship faults and fetches.
    static func figures(_ panel: [String], after header: String) -> [Int]? {
        guard let start = panel.firstIndex(where: { $0.hasPrefix(header) }), start + 3 < panel.count else { return nil }
        func numbers(_ line: String) -> [Int] {
            line.split(whereSeparator: { !$0.isNumber && $0 != "," && $0 != "." })
                .map { $0.replacingOccurrences(of: ",", with: "") }
                .filter { !$0.contains(".") }
                .compactMap { Int($0) }
        }
        let sql = numbers(panel[start + 1])    // SQL n stmts t  rows n
        let faults = numbers(panel[start + 2]) // faults n  hits n  misses n
        let others = numbers(panel[start + 3]) // rel. faults n  fetches n  saves n
        guard let statements = sql.first, faults.count == 3, others.count == 3 else { return nil }
        return [statements] + faults + others.prefix(2)
    }

    /// A store of its own for a test that saves (the shared fixture is only read).
    private static func writableStore() -> String {
        FaultlineBinary.smallStore("trace-progress", users: 60, chats: 12, messages: 1_500)
    }

    /// `saving: 1,234 rows, 0.1 s`
    private static func isProgressLine(_ line: String) -> Bool {
        line.wholeMatch(of: #/(counting|saving|undoing|redoing): [0-9]{1,3}(,[0-9]{3})* rows?, [0-9]+\.[0-9] s/#) != nil
    }

    @Test func withNoDelayTheJSONListsEachActionsProgressLines() throws {
        let store = Self.writableStore()
        let result = try FaultlineBinary.run(["trace", store, "--json", "--progress-after", "0", "--script", "delete; confirm; save; undo; redo; down"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let byAction = Dictionary(report.actions.map { ($0.action, $0.progress ?? ["missing"]) }, uniquingKeysWith: { $0 + $1 })
        #expect(report.actions.map(\.action) == ["start", "delete", "confirm", "save", "undo", "redo", "down"])
        for (action, word) in [("delete", "counting"), ("save", "saving"), ("undo", "undoing"), ("redo", "redoing")] {
            let lines = byAction[action] ?? []
            #expect(!lines.isEmpty, "\(action) showed no progress")
            #expect(lines.allSatisfy { $0.hasPrefix("\(word): ") && Self.isProgressLine($0) }, "\(action): \(lines)")
        }
        // In-memory work and moves show none.
        for action in ["start", "confirm", "down"] { #expect(byAction[action] == [], "\(action): \(byAction[action] ?? [])") }
        #expect(report.totals.progress == nil)
        #expect(report.screen.contains("Chats (11)"))
    }

    @Test func withTheDefaultDelayASmallStoreShowsNoProgress() throws {
        let store = Self.writableStore()
        let result = try FaultlineBinary.run(["trace", store, "--json", "--script", "delete; confirm; save; undo"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.actions.count == 5)
        #expect(report.actions.allSatisfy { $0.progress == [] }, "\(report.actions.map { $0.progress ?? [] })")
    }

    @Test(arguments: ["-1", "60001", "soon"])
    func aBadProgressDelayIsOneErrorLine(value: String) throws {
        let result = try FaultlineBinary.run(["trace", Self.fixture, "--progress-after", value, "--script", "down"])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("error: ") == true, "\(result.stderr)")
        #expect(result.stderr.contains("--progress-after"))
    }
}
