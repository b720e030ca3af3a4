import Foundation
import Testing

/// The table of browser actions and what each costs and warns of, with prefetching joined, as `IN` statements and
/// off, read from `faultline trace --json` on copies of the default fixture. With prefetching on, no action in the
/// table warns (clearing the cache, confirming a delete and undoing after a save included); with it off, each
/// N+1 names the pane whose reads fired it and a key path that pane prefetches. Every statement's cause agrees with
/// what `--sql-debug 3` annotates it with.
@Suite struct TraceAttributionTests {
    typealias Report = TraceCommandTests.Report

    enum Prefetch: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case joined, separate, off

        var testDescription: String { rawValue }

        /// Options and the script's opening actions that set the mode (`p` goes joined → off → IN statements).
        var options: [String] { self == .off ? ["--no-prefetch"] : [] }
        var opening: String { self == .separate ? "toggle-prefetch; toggle-prefetch; reset; " : "" }
    }

    /// One row: a script, and for the actions named, the statements each pane ran with prefetching joined and with
    /// `IN` statements (`chat list: 4` and so on; "-" for work that is no pane's, such as a save).
    struct Row: CustomTestStringConvertible, Sendable {
        let script: String
        let joined: [String: [String: Int]]
        let separate: [String: [String: Int]]

        var testDescription: String { script }
    }

    static let table: [Row] = [
        Row(script: "open; clear-cache",
            joined: ["start": ["chat list": 3], "open": ["messages": 4], "clear-cache": ["chat list": 3, "messages": 4]],
            separate: ["open": ["messages": 6], "clear-cache": ["chat list": 5, "messages": 6]]),
        Row(script: "open; members; clear-cache",
            joined: ["members": ["members": 2], "clear-cache": ["chat list": 3, "members": 2]],
            separate: ["members": ["members": 3], "clear-cache": ["chat list": 5, "members": 3]]),
        // Scrolled up, the messages on screen are read first, and with them (IN statements) a reply's sender.
        Row(script: "open; up 60; clear-cache",
            joined: ["clear-cache": ["chat list": 3, "messages": 4]],
            separate: ["clear-cache": ["chat list": 5, "messages": 7]]),
        // At the bottom of the list, clearing the cache reads the last rows first, not the first batch.
        Row(script: "bottom; open; clear-cache",
            joined: ["bottom": ["chat list": 3], "open": ["messages": 3], "clear-cache": ["chat list": 2, "messages": 3]],
            separate: ["bottom": ["chat list": 5], "open": ["messages": 4], "clear-cache": ["chat list": 4, "messages": 4]]),
        // Deleting a chat's newest message changes its lastMessageAt: one count places it in the batched list.
        Row(script: "open; delete; confirm",
            joined: ["confirm": ["chat list": 4, "messages": 4]],
            separate: ["confirm": ["chat list": 6, "messages": 4]]),
        Row(script: "delete; confirm; save; undo",
            joined: ["confirm": ["chat list": 3], "save": ["chat list": 3], "undo": ["chat list": 3]],
            separate: ["confirm": ["chat list": 5], "save": ["chat list": 3], "undo": ["chat list": 5]]),
    ]

    /// What each pane's fetch prefetches, as the browser sets it up.
    static let prefetched = ["chat list": ["lastMessage.sender", "lastMessage.attachments"],
                             "messages": ["sender", "replyTo.sender", "reactions", "attachments"],
                             "members": ["user"]]

    /// `script` traced on a fresh copy of the fixture (the table's deletes and saves change it).
    private func trace(_ script: String, _ options: [String]) throws -> Report {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: TraceCommandTests.fixture, toPath: store)
        return try TraceCommandTests().trace(script, options, store: store)
    }

    /// Statements per pane of an action ("-" for no pane's).
    private static func panes(_ action: TraceCommandTests.Cost) -> [String: Int] {
        (action.statements ?? []).reduce(into: [:]) { $0[$1.pane ?? "-", default: 0] += 1 }
    }

    @Test(arguments: table, Prefetch.allCases)
    func row(_ row: Row, prefetch: Prefetch) throws {
        let report = try trace(prefetch.opening + row.script, prefetch.options)
        let actions = report.actions.filter { $0.action != "toggle-prefetch" && $0.action != "reset" }
        for action in report.actions {
            #expect((action.statements ?? []).count == action.sql, "\(action.action): every statement is listed")
        }
        switch prefetch {
        case .joined, .separate:
            for action in actions {
                #expect(action.warnings ?? [] == [], "\(action.action) with prefetching \(prefetch): \(action.warnings ?? [])")
                // A delete or an edit reads the rest of the partial objects it changes (partial faults); nothing
                // else misses the row cache.
                #expect(action.cacheMisses <= action.partialFaults || action.action == "start", "\(action.action): \(action.cacheMisses) misses")
            }
            let expected = prefetch == .joined ? row.joined : row.separate
            for (name, counts) in expected {
                let action = try #require(actions.first { $0.action == name }, "\(name) ran")
                // The pane statements only: a preview's and a save's own statements are the delete's business.
                #expect(Self.panes(action).filter { $0.key != "-" } == counts, "\(name) with prefetching \(prefetch)")
            }
        case .off:
            for action in actions {
                for warning in action.warnings ?? [] where warning.hasPrefix("N+1") {
                    // "N+1 in messages: 16 faults of User one by one — press p to prefetch sender"
                    let pane = try #require(Self.between(warning, "N+1 in ", ":"), "\(warning)")
                    let keyPath = try #require(warning.components(separatedBy: "press p to prefetch ").last, "\(warning)")
                    #expect(Self.panes(action)[pane, default: 0] > 0, "\(action.action): \(pane) ran statements for \(warning)")
                    #expect(Self.prefetched[pane]?.contains { $0 == keyPath || $0.hasPrefix(keyPath + ".") } == true,
                            "\(action.action): '\(keyPath)' is what \(pane) prefetches: \(warning)")
                }
            }
        }
    }

    /// With prefetching off, opening a chat blames the message pane's key paths, not the chat list's.
    @Test func openingAChatWithPrefetchOffBlamesTheMessagePane() throws {
        let report = try trace("open", ["--no-prefetch"])
        let open = try #require(report.actions.last)
        let warnings = open.warnings ?? []
        #expect(warnings.contains { $0.hasPrefix("N+1 in messages: ") && $0.hasSuffix("press p to prefetch sender") }, "\(warnings)")
        #expect(warnings.contains { $0.hasSuffix("press p to prefetch reactions") }, "\(warnings)")
        #expect(!warnings.contains { $0.contains("lastMessage") || $0.contains("chat list") }, "\(warnings)")
    }

    /// Each statement's cause in the JSON agrees with `--sql-debug 3`'s annotation of it: a fault of an entity is
    /// annotated as a fault of an object of that entity, a relationship fault as that relationship's, and nothing
    /// else as a fault; the statements are the same, in the same order.
    @Test(arguments: Prefetch.allCases)
    func causesAgreeWithTheSQLDebugLog(prefetch: Prefetch) throws {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        try FileManager.default.copyItem(atPath: TraceCommandTests.fixture, toPath: store)
        let log = folder.path("sql.log")
        let script = prefetch.opening + "open; up 40; members; clear-cache; back; down 3; delete; confirm; save; undo"
        let report = try TraceCommandTests().trace(script, prefetch.options + ["--sql-debug", "3", "--sql-log", log], store: store)
        let statements = report.actions.flatMap { $0.statements ?? [] }
        let logged = try Self.loggedStatements(String(contentsOfFile: log, encoding: .utf8))
        #expect(statements.count == logged.count)
        #expect(statements.count > 20)
        for (statement, entry) in zip(statements, logged) {
            #expect(statement.sql == entry.sql)
            if statement.cause.hasPrefix("fault of ") {
                let entity = statement.cause.dropFirst("fault of ".count).prefix { $0 != "." }
                #expect(entry.annotations.contains { $0.hasPrefix("fault fulfilled from database for : ") && $0.contains("/\(entity)/p") },
                        "\(statement.cause): \(entry.annotations)")
                #expect(statement.pane != nil, "a fault is some pane's: \(statement.cause)")
            } else if statement.cause.hasPrefix("relationship fault ") {
                let named = statement.cause.dropFirst("relationship fault ".count)
                let entity = named.prefix { $0 != "." }
                let key = named.split(separator: ".").last.map(String.init) ?? ""
                #expect(entry.annotations.contains { $0.contains("relationship fault \"\(key)\" for objectID ") && $0.contains("/\(entity)/p") },
                        "\(statement.cause): \(entry.annotations)")
                #expect(statement.pane != nil, "a fault is some pane's: \(statement.cause)")
            } else {
                // Row-cache hits that happen to follow the statement are annotated without SQL of their own.
                #expect(!entry.annotations.contains { $0.contains("fault") && !$0.contains("from row cache") },
                        "\(statement.cause): \(entry.annotations.filter { !$0.contains("from row cache") })")
            }
        }
    }

    /// The statements of a `--sql-debug` log, each with the annotation lines that follow it.
    static func loggedStatements(_ text: String) -> [(sql: String, annotations: [String])] {
        var entries: [(sql: String, annotations: [String])] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("CoreData: sql: ") {
                entries.append((String(line.dropFirst("CoreData: sql: ".count)), []))
            } else if line.hasPrefix("CoreData: annotation: "), !entries.isEmpty {
                entries[entries.count - 1].annotations.append(String(line.dropFirst("CoreData: annotation: ".count)))
            }
        }
        return entries
    }

    /// The text between the first `start` and the `end` after it.
    static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard let from = text.range(of: start), let to = text.range(of: end, range: from.upperBound..<text.endIndex) else { return nil }
        return String(text[from.upperBound..<to.lowerBound])
    }
}
