import Foundation
import TerminalText
import Testing

/// The real `faultline browse` in a real terminal (tmux, UTF-8, a fixed size): keys typed, the screen read back with
/// `capture-pane`, the exit status and the terminal's modes checked after it ends.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct BrowserEndToEndTests {
    /// A small chat store (60 chats, 6,000 messages) made once with `faultline fixture generate`; each test works on
    /// its own copy.
    static let fixture: String = {
        let folder = ProcessFolders.make("browser-e2e")
        let path = folder.appendingPathComponent("chat.sqlite").path
        let made = try! FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "200", "--chats", "60",
                                             "--messages", "6000"])
        precondition(made.status == 0, "fixture generate failed: \(made.stderr)")
        return path
    }()

    private let folder = TemporaryFolder()

    /// A fresh copy of the fixture.
    private func store() throws -> String {
        let path = folder.path("chat-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        return path
    }

    private func browse(_ store: String, width: Int = 120, height: Int = 40,
                        environment: [String: String] = [:]) throws -> TmuxSession {
        try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(store)'", width: width, height: height,
                        environment: environment)
    }

    @Test func browsingDeletingUndoingResizingAndQuitting() throws {
        let path = try store()
        let session = try browse(path)
        var screen = try session.waitFor("Chats (60)")
        #expect(try session.modes().alternateScreen)

        // The chat list: names in Korean, Japanese, Chinese and Thai, with emoji, and every column edge in the same
        // place on every row.
        var lines = Self.lines(screen)
        try #require(lines.count == 40, "a whole 120×40 frame:\n\(screen)")
        // Until a chat is opened the list takes the messages pane's room: two columns at 120×40, three after.
        let edges = Self.separatorColumns(lines[0])
        #expect(edges.count == 1, "the list and the panel at 120×40: \(lines[0])")
        for line in lines[1..<38] {
            #expect(Self.separatorColumns(line) == edges, "a column edge moved on this row:\n\(line)")
        }
        let wide = lines[1..<38].filter { DisplayWidth.of($0) != $0.count }
        #expect(wide.count > 10, "rows with wide or combining characters: \(wide.count)")
        #expect(lines[1..<38].contains { $0.unicodeScalars.contains { $0.properties.isEmojiPresentation } })

        // Opening the first chat: its messages, and the panel counting that action's faults and statements.
        let firstChat = Self.chatTitle(lines[1])
        let firstRow = Self.chatColumn(lines[1])
        try session.send(keys: "Enter")
        screen = try session.waitFor("last: open")
        lines = Self.lines(screen)
        #expect(lines[0].contains("─ \(firstChat) · "), "the open chat's title: \(lines[0])")
        let openEdges = Self.separatorColumns(lines[0])
        #expect(openEdges.count == 2, "three columns at 120×40 with a chat open: \(lines[0])")
        let messagesTitle = try #require(lines[0].split(separator: "│").dropFirst().first.map(String.init))
        let openPanel = try #require(Self.panelFigures(screen, after: "last: open"))
        // The messages with their senders and quotes, the count, the reactions, the attachments (file names): the
        // pane's prefetches read them all, whatever the screen shows.
        #expect(openPanel.statements > 0 && openPanel.statements <= 4, "\(openPanel.statements) statements")
        // Filled with the columns the pane draws, the messages and senders fire no fault.
        #expect(openPanel.faults == 0)
        #expect(openPanel.faults == openPanel.hits + openPanel.misses)
        // The same action through `faultline trace` on the same store, at the same size, counts the same.
        let trace = try FaultlineBinary.run(["trace", path, "--script", "open", "--json", "--size", "120x40"])
        let traced = try #require(try Self.traceCosts(trace.stdout)["open"], "trace: \(trace.stderr)")
        #expect(openPanel.statements == traced["sql"])
        #expect(openPanel.faults == traced["faults"])
        #expect(openPanel.hits == traced["cacheHits"])
        #expect(openPanel.misses == traced["cacheMisses"])

        // Deleting it: the preview first, then the list without it and the unsaved count.
        try session.send(keys: "Escape")
        try session.waitFor("last: back")
        try session.send(keys: "d")
        screen = try session.waitFor("Delete chat")
        #expect(screen.contains("goes (Cascade)"))
        #expect(screen.contains("Message"))
        #expect(screen.contains("y/Enter delete"))
        try session.send(keys: "y")
        screen = try session.waitFor("Chats (59)")
        #expect(screen.contains("unsaved"))
        #expect(Self.chatTitle(Self.lines(screen)[1]) != firstChat)

        // Saved, then undone: the chat is back with all its messages, and nothing is pending.
        try session.send(keys: "w")
        screen = try session.waitFor("last: save")
        #expect(!screen.contains("unsaved"))
        try session.send(keys: "u")
        screen = try session.waitFor("Chats (60)")
        lines = Self.lines(screen)
        try #require(lines.count == 40)
        #expect(Self.chatColumn(lines[1]) == firstRow, "the chat's row is back as it was")
        try session.send(keys: "Enter")
        screen = try session.waitFor("last: open")
        #expect(Self.lines(screen)[0].contains(messagesTitle), "after undo: \(Self.lines(screen)[0])")

        // Resizing: two rows of panes at 80×24, a notice below 60×15, three columns again at 120×40.
        try session.resize(width: 80, height: 24)
        screen = try session.waitFor("─ Graph activity")
        lines = Self.lines(screen)
        try #require(lines.count == 24)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 })
        #expect(Self.separatorColumns(lines[0]).count == 1, "two panes side by side at 80×24: \(lines[0])")
        // Only the 80×24 layout puts the panel in a band under the panes, starting at the left edge.
        #expect(lines.contains { $0.hasPrefix("─ Graph activity") }, "\(screen)")
        try session.resize(width: 50, height: 12)
        try session.waitFor("window too small")
        try session.resize(width: 120, height: 40)
        screen = try session.waitFor("Graph activity")
        #expect(Self.separatorColumns(Self.lines(screen)[0]) == openEdges)

        // Quitting: status 0, and the terminal as the shell left it.
        try session.send(keys: "q")
        #expect(try session.waitForExit() == 0)
        #expect(try session.modes() == .restored)
        #expect(try session.lineDisciplineAfterExit() == (canonical: true, echo: true))

        // The store holds every chat again and passes the integrity check.
        let check = try FaultlineBinary.run(["check", path])
        #expect(check.status == 0, "check: \(check.stdout)\(check.stderr)")
        #expect(try Self.chatCount(path) == 60)
    }

    @Test func quittingWithUnsavedChangesAsksFirst() throws {
        let path = try store()
        let session = try browse(path, width: 100, height: 30)
        try session.waitFor("Chats (60)")
        try session.send(keys: "d")
        try session.waitFor("Delete chat")
        try session.send(keys: "Enter")
        try session.waitFor("Chats (59)")
        try session.send(keys: "q")
        try session.waitFor("discard")
        try session.send(keys: "n")
        // Staying: the question goes, the browser's own hints come back, the deletion is still pending.
        try session.waitUntilGone("discard")
        try session.waitFor("↑↓ move")
        try session.waitFor("Chats (59)")
        try session.send(keys: "q")
        try session.waitFor("discard")
        try session.send(keys: "y")
        #expect(try session.waitForExit() == 0)
        #expect(try session.modes() == .restored)
        #expect(try session.lineDisciplineAfterExit() == (canonical: true, echo: true))
        // Discarded: nothing reached the file.
        #expect(try Self.chatCount(path) == 60)
    }

    /// Also: the store is closed on the way out, so the -wal and -shm its connections made go with them, and a
    /// browse with no edits leaves the file as it found it.
    @Test func interruptAndTerminateRestoreTheTerminal() throws {
        for (signal, key) in [(SIGINT, "C-c"), (SIGTERM, "")] {
            let path = try store()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let session = try browse(path, width: 90, height: 25)
            try session.waitFor("Chats (60)")
            if key.isEmpty {
                // SIGTERM to the browser, the shell's only child.
                let shell = try session.format("#{pane_pid}")
                let child = try #require(Self.children(of: shell).first)
                #expect(kill(child, signal) == 0)
            } else {
                try session.send(keys: key)
            }
            #expect(try session.waitForExit() == 128 + signal)
            #expect(try session.modes() == .restored)
            #expect(try session.lineDisciplineAfterExit() == (canonical: true, echo: true))
            let screen = try session.capture()
            #expect(!screen.contains("Chats (60)"), "the browser's screen was left behind:\n\(screen)")
            for suffix in ["-wal", "-shm"] {
                #expect(!FileManager.default.fileExists(atPath: path + suffix), "signal \(signal) left \(suffix) beside the store")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "browsing without edits changed the store")
        }
    }

    @Test(arguments: [("TERM=no-such-terminal", "'no-such-terminal'"), ("env -u TERM", "TERM is not set")])
    func anUnknownOrMissingTerminalIsOneErrorLineSuggestingTrace(prefix: String, named: String) throws {
        let path = try store()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let session = try TmuxSession(command: "\(prefix) \(FaultlineBinary.url.path) browse '\(path)'", width: 100, height: 10)
        #expect(try session.waitForExit() == 1)
        let screen = try session.capture(joiningWrappedLines: true)
        let errors = screen.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errors.count == 1, "\(screen)")
        #expect(errors.first?.contains(named) == true, "\(screen)")
        #expect(errors.first?.contains("faultline trace") == true)
        #expect(!screen.contains("Fatal") && !screen.contains("backtrace"))
        #expect(try session.modes() == .restored)
        #expect(try session.lineDisciplineAfterExit() == (canonical: true, echo: true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store is left as it was")
        // The terminal is checked before the store is opened: no -wal or -shm appears beside it.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))
    }

    // MARK: Reading the screen

    static func lines(_ screen: String) -> [String] {
        var lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Display columns at which `│` (the pane edge) stands in `line`.
    static func separatorColumns(_ line: String) -> [Int] {
        DisplayWidth.columns(of: "│", in: line)
    }

    /// The chat list's part of a row: everything before the first pane edge.
    static func chatColumn(_ row: String) -> String {
        row.split(separator: "│", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? row
    }

    /// The chat title at the start of a chat-list row's first line, without its member count and marks.
    static func chatTitle(_ row: String) -> String {
        let text = row.split(separator: "│").first.map(String.init) ?? row
        return String(text.dropFirst().prefix { $0 != "👥" && $0 != "📌" && $0 != "🔕" }).trimmingCharacters(in: .whitespaces)
    }

    struct PanelFigures { var statements, faults, hits, misses: Int }

    /// The panel's figures in the lines following `header`: "SQL n stmts" and "faults n  hits n  misses n".
    static func panelFigures(_ screen: String, after header: String) -> PanelFigures? {
        let panel = lines(screen).compactMap { line in line.split(separator: "│").last.map(String.init) }
        guard let start = panel.firstIndex(where: { $0.hasPrefix(header) }), start + 2 < panel.count else { return nil }
        func numbers(_ text: String) -> [Int] {
            text.split(whereSeparator: { !$0.isNumber && $0 != "," }).compactMap { Int($0.replacingOccurrences(of: ",", with: "")) }
        }
        let sql = numbers(panel[start + 1])
        let faults = numbers(panel[start + 2])
        guard panel[start + 1].hasPrefix("SQL"), panel[start + 2].hasPrefix("faults"), let statements = sql.first,
              faults.count >= 3 else { return nil }
        return PanelFigures(statements: statements, faults: faults[0], hits: faults[1], misses: faults[2])
    }

    /// Each action's figures from `trace --json`, by action name.
    static func traceCosts(_ json: String) throws -> [String: [String: Int]] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        var costs: [String: [String: Int]] = [:]
        for action in object?["actions"] as? [[String: Any]] ?? [] {
            guard let name = action["action"] as? String else { continue }
            costs[name] = action.compactMapValues { $0 as? Int }
        }
        return costs
    }

    static func chatCount(_ path: String) throws -> Int? {
        let result = try FaultlineBinary.run(["trace", path, "--script", "", "--size", "120x40"])
        let header = lines(result.stdout).first ?? ""
        guard let open = header.range(of: "Chats ("), let close = header[open.upperBound...].firstIndex(of: ")") else {
            return nil
        }
        return Int(header[open.upperBound..<close])
    }

    /// Process IDs whose parent is `parent`.
    static func children(of parent: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return nil }
            // After "(name)": state, then the parent's ID.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && String(fields[1]) == parent ? pid : nil
        }
    }
}
