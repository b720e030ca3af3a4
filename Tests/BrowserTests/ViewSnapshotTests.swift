import Browser
import ChatFixture
import Foundation
import TerminalText
import Testing

/// The browser's screens as text, on the default fixture, at 80×24, 120×40 and 200×60, compared with the files in
/// `Snapshots/` (`FAULTLINE_RECORD_SNAPSHOTS=1` records them again). SQL timings are the only thing replaced
/// before comparing; statement, row and fault counts and the SQL itself are compared as drawn.
@Suite(.serialized) struct ViewSnapshotTests {
    /// The screens, each reached through `BrowserModel.apply` as the keys would.
    enum Screen: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case chatList = "chat-list"
        case openChat = "open-chat"
        case members
        case deletePreview = "delete-preview"
        case help
        case sqlDetail = "sql-detail"

        var testDescription: String { rawValue }
    }

    struct Size: CustomTestStringConvertible, Sendable {
        let width: Int
        let height: Int

        var testDescription: String { "\(width)x\(height)" }
    }

    static let sizes = [Size(width: 80, height: 24), Size(width: 120, height: 40), Size(width: 200, height: 60)]

    /// The screens' "now": five minutes before the fixture's own "now" (2026-05-31 00:00 UTC for the default seed),
    /// which is still after its latest message (every chat's last message is at least ten minutes before it), so
    /// the chat list shows times for the last day, weekdays for the week before and dates before that.
    static let now = FixtureGenerator(options: .defaults, corpus: try! ChatCorpus.load()).now.addingTimeInterval(-300)

    @Test(arguments: Screen.allCases, sizes)
    func screen(_ screen: Screen, size: Size) throws {
        // A clock that stands still: every action ends in the same second, so the sparklines have one bar.
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(),
                                     width: size.width, height: size.height, activityClock: { 0 })
        try drive(model, to: screen)
        let frame = BrowserView.frame(model.state, activity: model.activity, now: Self.now)
        #expect(frame.lines.count == size.height)
        #expect(frame.lines.allSatisfy { DisplayWidth.of($0.text) == size.width }, "every line is the frame's width")
        // Where the panes' own edges are on each line, from the same screen without its overlay: a border of the
        // overlay anywhere else cuts what it covers.
        var bare = model.state
        bare.overlay = .none
        let edges = BrowserView.frame(bare, activity: model.activity, now: Self.now).lines.map { Self.ruleColumns($0.text) }
        let text = Self.normalizingDurations(frame.text, paneEdges: edges)
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).allSatisfy { DisplayWidth.of(String($0)) == size.width },
                "the durations' placeholders keep every line the frame's width")
        Snapshot.check(text, named: "\(screen.rawValue)-\(size.testDescription)")
    }

    /// The progress line, as the first frame drawn while the delete preview of a group chat counts (progress shown
    /// at once: `progressAfterMilliseconds` 0). Its elapsed time is the only thing replaced.
    @Test(arguments: sizes)
    func theProgressLine(size: Size) throws {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(progressAfterMilliseconds: 0),
                                     width: size.width, height: size.height, activityClock: { 0 })
        nonisolated(unsafe) var first: Frame?
        model.onProgress = { [unowned model] state in
            if first == nil { first = BrowserView.frame(state, activity: model.activity, now: Self.now) }
            return true
        }
        model.apply(.start)
        model.apply(.delete)
        let frame = try #require(first, "the preview showed progress")
        #expect(frame.lines.count == size.height)
        #expect(frame.lines.allSatisfy { DisplayWidth.of($0.text) == size.width })
        let status = try #require(frame.lines.dropLast().last?.text)
        #expect(status.hasPrefix(" counting: "), "the status row is the progress line: \(status)")
        #expect(status.contains("Esc cancels"))
        let elapsed = try NSRegularExpression(pattern: #"\d+\.\d s\b"#)
        var text = Self.normalizingDurations(frame.text)
        text = elapsed.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<t> s")
        Snapshot.check(text, named: "progress-\(size.testDescription)")
    }

    /// At the common sizes, before and after a chat is opened, every chat row on screen shows its last message's
    /// text (at least its first words) on the line under its title.
    @Test(arguments: [Size(width: 80, height: 24), Size(width: 120, height: 40)])
    func theChatListShowsEachVisibleChatsLastMessageText(size: Size) throws {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(),
                                     width: size.width, height: size.height, activityClock: { 0 })
        model.apply(.start)
        for _ in 0..<3 { model.apply(.down) }
        for opened in [false, true] {
            if opened { model.apply(.open) }
            try #require((model.state.openChat != nil) == opened)
            let layout = Layout(model.state)
            let frame = BrowserView.frame(model.state, activity: model.activity, now: Self.now)
            let rows = model.state.chatList.rows
            #expect(rows.count == (layout.chats.height - 1) / 2, "every pair of lines holds a chat")
            #expect(rows.filter(\.hasMessages).count >= rows.count - 1)
            for (offset, row) in rows.enumerated() where row.hasMessages {
                let line = Self.columns(frame.lines[layout.chats.row + 2 + 2 * offset].text, from: layout.chats.column, width: layout.chats.width)
                // The first words: up to 8 columns of the text, or all of a shorter one.
                let start = DisplayWidth.truncate(row.preview, width: min(8, DisplayWidth.of(row.preview)), ellipsis: "")
                #expect(!start.isEmpty)
                #expect(line.contains(start), "\(size.testDescription) opened \(opened): '\(row.title)' shows '\(line)', not '\(start)'")
                // The title is on the line above.
                let title = Self.columns(frame.lines[layout.chats.row + 1 + 2 * offset].text, from: layout.chats.column, width: layout.chats.width)
                #expect(title.contains(DisplayWidth.truncate(row.title, width: 4, ellipsis: "")))
            }
        }
    }

    /// From 60 to 200 columns, on the chat list, an open chat, its members and the help: every line is exactly the
    /// window's width, and the hint bar of the normal mode keeps `? help` and `q quit`.
    @Test func everyLineFitsAndTheHintBarKeepsHelpAndQuitFrom60To200Columns() throws {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: 60, height: 30,
                                     activityClock: { 0 })
        model.apply(.start)
        for _ in 0..<3 { model.apply(.down) }
        let steps: [(name: String, action: BrowserAction?)] = [("chat list", nil), ("open chat", .open), ("members", .members),
                                                                ("help", .help)]
        for step in steps {
            if let action = step.action { model.apply(action) }
            for width in 60...200 {
                let height = 20 + width % 25
                model.apply(.resize(width: width, height: height))
                let frame = BrowserView.frame(model.state, activity: model.activity, now: Self.now)
                #expect(frame.lines.count == height)
                for (number, line) in frame.lines.enumerated() where DisplayWidth.of(line.text) != width {
                    Issue.record("\(step.name) at \(width)×\(height): line \(number) is \(DisplayWidth.of(line.text)) columns: |\(line.text)|")
                }
                if model.state.overlay == .none, let bar = frame.lines.last?.text {
                    #expect(bar.contains("? help") && bar.contains("q quit"), "\(step.name) at \(width): |\(bar)|")
                }
            }
        }
    }

    /// The help, drawn at 200×60 where all of it fits, explains the marks the screens draw, each on its line.
    @Test func theHelpExplainsTheMarks() throws {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: 200, height: 60,
                                     activityClock: { 0 })
        model.apply(.start)
        model.apply(.help)
        let lines = BrowserView.frame(model.state, activity: model.activity, now: Self.now).lines.map(\.text)
        #expect(lines.contains { $0.contains("Marks on screen") })
        for (mark, words) in [("👥40", "members"), ("📌", "pinned"), ("🔕", "muted"), ("(edited)", "edited"), ("You: …", "yours"),
                              ("12/300", "place"), ("[file] name", "file"), ("↪ «Ana: …»", "reply"), ("┄ Tue 26 May", "day")] {
            #expect(lines.contains { $0.contains(mark) && $0.contains(words) }, "no line explains \(mark)")
        }
    }

    /// `width` display columns of `line` from column `start` (a pane's part of a frame line).
    static func columns(_ line: String, from start: Int, width: Int) -> String {
        var result = ""
        var position = 0
        for character in line {
            let columns = DisplayWidth.of(String(character))
            if position >= start, position + columns <= start + width { result.append(character) }
            position += columns
        }
        return result
    }

    /// The end of a duration an overlay covers reads the same whatever its unit; a whole one is a placeholder.
    @Test func aDurationCutByAnOverlayIsMaskedWhateverItsUnit() {
        for cut in ["ms", "µs", "3s"] {
            #expect(Self.normalizingDurations("ab│ help │\(cut)  rows 201") == "ab│ help │~~  rows 201")
        }
        #expect(Self.normalizingDurations("ab│485µs  20 rows").contains(Self.placeholder))
        // Knowing where the panes' edges are: after an overlay's border, what reads as whole was cut all the same.
        for shown in ["85µs", ".7ms", "12ms", ".23s"] {
            #expect(Self.normalizingDurations("ab│\(shown)  20 rows", paneEdges: [[]]) == "ab│~~~~  20 rows")
        }
        #expect(Self.normalizingDurations("ab│485µs  20 rows", paneEdges: [[2]]).contains(Self.placeholder))
    }

    /// Carries out the actions that lead to `screen`.
    private func drive(_ model: BrowserModel, to screen: Screen) throws {
        model.apply(.start)
        // The chats on screen end before the screens' "now".
        #expect(model.state.chatList.rows.allSatisfy { ($0.time ?? .distantPast) < Self.now })
        switch screen {
        case .chatList:
            break
        case .openChat, .members:
            for _ in 0..<3 { model.apply(.down) }
            model.apply(.open)
            try #require(model.state.openChat != nil)
            if screen == .members {
                model.apply(.members)
                try #require(model.state.showMembers)
            }
        case .deletePreview:
            // The first group chat below the top row.
            model.apply(.down)
            while !model.state.chatList.rows[model.state.chatList.selected - model.state.chatList.top].isGroup {
                try #require(model.state.chatList.selected + 1 < model.state.chatList.count)
                model.apply(.down)
            }
            model.apply(.delete)
            var isPreview = false
            if case .deletePreview = model.state.overlay { isPreview = true }
            try #require(isPreview, "no delete preview: \(model.state.overlay), \(model.state.message ?? "")")
        case .help:
            model.apply(.help)
            try #require(model.state.overlay == .help)
        case .sqlDetail:
            // The open chat's first statement, in full.
            model.apply(.open)
            model.apply(.nextPane)
            try #require(model.state.focus == .sqlLog)
            model.apply(.down)
            model.apply(.open)
            var isDetail = false
            if case .sqlDetail = model.state.overlay { isDetail = true }
            try #require(isDetail, "no statement shown: \(model.state.overlay)")
        }
    }

    /// `text` with every SQL duration (`485µs`, `2.7ms`, `12ms`, `1.23s`, as `ActivityFormat.duration` writes
    /// them) replaced by `placeholder`, so that timings may differ from run to run while everything else is
    /// compared exactly. A duration takes the padding before it along (the right-aligned column of the SQL log);
    /// one space stays between a word and it (`stmts <dur>`). Each pane keeps its width: the difference is taken
    /// from, or given to, the blanks at the end of the duration's pane (before the next `│` or the line's end).
    ///
    /// The views themselves keep durations from moving anything else: the SQL log's duration column and the
    /// sparklines' peak have fixed widths (durations of 10 s and more would widen their own row only).
    ///
    /// A duration an overlay covers but for its end (`│ms` at the overlay's right border, the `2.7` hidden) keeps its
    /// place: what shows of it becomes `~` characters, one per column, since the unit too (`µs`, `ms`) changes with
    /// the timing. Given `paneEdges` (per line, the columns of the panes' own `│`), a duration right after any other
    /// border is always taken as cut, even when what shows reads as whole (`│85µs` of `485µs`: the same column shows
    /// `│.7ms` when the timing is `2.7ms`); without them, what reads as a whole duration there is taken as one.
    static func normalizingDurations(_ text: String, paneEdges: [[Int]]? = nil) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            let edges = paneEdges.map { $0.indices.contains(index) ? Set($0[index]) : [] }
            return normalizingDurations(inLine: maskingCutDurations(String(line), paneEdges: edges))
        }
        .joined(separator: "\n")
    }

    /// The display columns of the box-drawing rules (`│`) in a line.
    static func ruleColumns(_ line: String) -> [Int] {
        DisplayWidth.columns(of: "│", in: line)
    }

    /// The ends of durations cut by an overlay's border, as `~`s.
    private static func maskingCutDurations(_ line: String, paneEdges: Set<Int>?) -> String {
        let expression = try! NSRegularExpression(pattern: #"(?<=[│╮╯╰╭])[\d.]*(?:µs|ms|s)(?![\p{L}\p{N}])"#)
        let whole = try! NSRegularExpression(pattern: "^(?:" + durationPattern + ")$")
        var result = line
        for match in expression.matches(in: line, range: NSRange(line.startIndex..., in: line)).reversed() {
            guard let range = Range(match.range, in: result) else { continue }
            let fragment = String(result[range])
            let borderColumn = DisplayWidth.of(String(result[..<range.lowerBound])) - 1
            let cutForSure = paneEdges.map { !$0.contains(borderColumn) } ?? false
            guard cutForSure || whole.firstMatch(in: fragment, range: NSRange(fragment.startIndex..., in: fragment)) == nil else { continue }
            result.replaceSubrange(range, with: String(repeating: "~", count: fragment.count))
        }
        return result
    }

    private static func normalizingDurations(inLine line: String) -> String {
        let pattern = #"(?<![\p{L}\p{N}.,])(?:"# + durationPattern + #")(?![\p{L}\p{N}])"#
        let expression = try! NSRegularExpression(pattern: pattern)
        var characters = Array(line)
        // From the right, so that the offsets of the matches still to do stay valid.
        for match in expression.matches(in: line, range: NSRange(line.startIndex..., in: line)).reversed() {
            guard let range = Range(match.range, in: line) else { continue }
            let tokenStart = line.distance(from: line.startIndex, to: range.lowerBound)
            let tokenEnd = line.distance(from: line.startIndex, to: range.upperBound)
            var start = tokenStart
            while start > 0, characters[start - 1] == " " { start -= 1 }
            let startsAPane = start == 0 || isRule(characters[start - 1])
            let replacement = Array((start < tokenStart && !startsAPane ? " " : "") + placeholder)
            let growth = replacement.count - (tokenEnd - start)
            // The blanks that end this pane: the run of spaces before the next rule, or before the line's end.
            var paneEnd = tokenEnd
            while paneEnd < characters.count, !isRule(characters[paneEnd]) { paneEnd += 1 }
            var blanks = paneEnd
            while blanks > tokenEnd, characters[blanks - 1] == " " { blanks -= 1 }
            if growth > 0 {
                // From the blanks when there are enough; a pane full to its edge (the SQL log at 200 columns) loses
                // its last characters instead, so the line keeps its width.
                characters.removeSubrange(max(tokenEnd, paneEnd - growth)..<paneEnd)
            } else if growth < 0 {
                characters.insert(contentsOf: repeatElement(" ", count: -growth), at: paneEnd)
            }
            characters.replaceSubrange(start..<tokenEnd, with: replacement)
        }
        return String(characters)
    }

    /// A duration as `ActivityFormat.duration` writes it.
    private static let durationPattern = #"\d+µs|\d+\.\dms|\d+ms|\d+\.\d\ds"#

    /// Box-drawing characters: the `│` between panes and the borders of an overlay.
    private static func isRule(_ character: Character) -> Bool {
        character.unicodeScalars.allSatisfy { (0x2500...0x257F).contains($0.value) }
    }

    /// What every duration reads as in the snapshots: as wide as most durations (`485µs`, `2.7ms`).
    static let placeholder = "<dur>"
}
