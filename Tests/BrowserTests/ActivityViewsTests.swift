import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// The activity panel and the SQL log as text: exact sizes at any size (wide characters included), what stays
/// when room runs out, highlighting, query plans, and the duration and count formats.
@Suite struct ActivityViewsTests {
    // MARK: formats

    @Test func durationsUseTheUnitThatKeepsThemShort() {
        let table: [(Duration, String)] = [
            (.zero, "0µs"),
            (.nanoseconds(499), "0µs"),
            (.nanoseconds(500), "1µs"),
            (.microseconds(850), "850µs"),
            (.nanoseconds(999_499), "999µs"),
            (.nanoseconds(999_500), "1.0ms"),
            (.microseconds(1_340), "1.3ms"),
            (.microseconds(9_949), "9.9ms"),
            (.microseconds(9_960), "10ms"),
            (.milliseconds(850), "850ms"),
            (.microseconds(999_499), "999ms"),
            (.microseconds(999_500), "1.00s"),
            (.milliseconds(1_200), "1.20s"),
            (.milliseconds(61_237), "61.24s"),
            (.seconds(-1), "0µs"),
        ]
        for (duration, text) in table {
            #expect(ActivityFormat.duration(duration) == text, "\(duration)")
        }
    }

    @Test func countsHaveThousandsSeparators() {
        #expect(ActivityFormat.count(0) == "0")
        #expect(ActivityFormat.count(999) == "999")
        #expect(ActivityFormat.count(1_000) == "1,000")
        #expect(ActivityFormat.count(12_345) == "12,345")
        #expect(ActivityFormat.count(1_234_567) == "1,234,567")
        #expect(ActivityFormat.count(-1_234) == "-1,234")
        #expect(ActivityFormat.count(1, "row") == "1 row")
        #expect(ActivityFormat.count(12_345, "row") == "12,345 rows")
    }

    @Test func argumentsAreWrittenOnOneLine() {
        #expect(ActivityFormat.arguments([]) == "")
        #expect(ActivityFormat.arguments([.string("two\nlines"), .integer(3), .null, .boolean(true), .data(Data([1, 2]))])
            == "[\"two lines\", 3, nil, true, <2 bytes>]")
    }

    // MARK: the activity panel

    private let summary = ActionSummary(
        action: "open chat", rootEntity: "Message",
        counts: ActivityCounts(
            statements: 7, rows: 12, sqlTime: .microseconds(1_340), objectFaults: 12, cacheHits: 6, cacheMisses: 6,
            relationshipFaults: 1, fetches: 1, failedSaves: 1, faultsByEntity: ["User": 6, "Message": 6, "DirectChat": 1]),
        saveSucceeded: false,
        warnings: [
            ActivityWarning(kind: .nPlusOne, message: "N+1: 6 faults of User one by one — prefetch sender"),
            ActivityWarning(kind: .countFiredRelationship,
                            message: "count of Chat.members fired the relationship (6 faults) — use membersCount (derived count)"),
        ])

    private let totals = ActivityCounts(
        statements: 12_345, rows: 99_000, sqlTime: .milliseconds(1_234), objectFaults: 3_000, cacheHits: 2_500,
        cacheMisses: 500, relationshipFaults: 20, fetches: 30, saves: 2)

    /// Nine busy seconds, 0 to 8.
    private var timeline: ActivityTimeline {
        var timeline = ActivityTimeline()
        for (second, statements) in [3, 0, 7, 12, 1, 0, 0, 40, 5].enumerated() {
            timeline.record(statements: statements, sqlTime: .microseconds(statements * 97), at: Double(second))
        }
        return timeline
    }

    private func panel(width: Int, height: Int) -> [StyledLine] {
        ActivityPanelView.lines(summary: summary, totals: totals, timeline: timeline, width: width, height: height)
    }

    @Test func thePanelIsExactlyTheSizeAskedFor() {
        for (width, height) in [(30, 6), (40, 12), (63, 10), (64, 10), (80, 24), (120, 40), (10, 3), (1, 1), (5, 0), (0, 3)] {
            for lines in [panel(width: width, height: height),
                          ActivityPanelView.lines(summary: nil, totals: ActivityCounts(), timeline: ActivityTimeline(), width: width, height: height)] {
                #expect(lines.count == height, "\(width)×\(height)")
                #expect(lines.allSatisfy { DisplayWidth.of($0.text) == width }, "\(width)×\(height)")
            }
        }
    }

    @Test func aNarrowPanelStacksTheLastActionOverTheTotals() {
        #expect(panel(width: 40, height: 12).map(\.text) == [
            "last: open chat                         ",
            "SQL 7 stmts 1.3ms  rows 12              ",
            "faults 12  hits 6  misses 6             ",
            "rel. faults 1  fetches 1  saves 0 (1 fa…",
            // Warnings are wrapped, not cut: the advice is at their end. The totals give way to them.
            "! N+1: 6 faults of User one by one —    ",
            "  prefetch sender                       ",
            "! count of Chat.members fired the       ",
            "  relationship (6 faults) — use         ",
            "  membersCount (derived count)          ",
            "since start                             ",
            "stmts/s             ▁ ▂▃▁  █▁ max 40    ",
            "SQL/s               ▁ ▂▃▁  █▁ max 3.9ms ",
        ])
    }

    @Test func aWidePanelPutsTheTotalsBesideTheLastAction() {
        #expect(panel(width: 80, height: 10).map(\.text) == [
            "last: open chat                        │ since start                            ",
            "SQL 7 stmts 1.3ms  rows 12             │ SQL 12,345 stmts 1.23s  rows 99,000    ",
            "faults 12  hits 6  misses 6            │ faults 3,000  hits 2,500  misses 500   ",
            "rel. faults 1  fetches 1  saves 0 (1 … │ rel. faults 20  fetches 30  saves 2    ",
            "! N+1: 6 faults of User one by one — prefetch sender                            ",
            "! count of Chat.members fired the relationship (6 faults) — use membersCount    ",
            "  (derived count)                                                               ",
            "by entity Message 6 · User 6 · DirectChat 1                                     ",
            "stmts/s                                                    ▁ ▂▃▁  █▁ max 40     ",
            "SQL/s                                                      ▁ ▂▃▁  █▁ max 3.9ms  ",
        ])
    }

    @Test func aSmallPanelKeepsTheFiguresAndWarningsFirst() {
        #expect(panel(width: 30, height: 6).map(\.text) == [
            "last: open chat               ",
            "SQL 7 stmts 1.3ms  rows 12    ",
            "faults 12  hits 6  misses 6   ",
            "rel. faults 1  fetches 1  sav…",
            "! N+1: 6 faults of User one by",
            "  one — prefetch sender       ",
        ])
        // Without warnings, the sparklines come before the totals.
        let quiet = ActionSummary(action: "down", rootEntity: "Chat", counts: ActivityCounts(), saveSucceeded: nil, warnings: [])
        let lines = ActivityPanelView.lines(summary: quiet, totals: totals, timeline: timeline, width: 30, height: 6)
        #expect(lines.map(\.text).suffix(2) == ["stmts/s   ▁ ▂▃▁  █▁ max 40    ", "SQL/s     ▁ ▂▃▁  █▁ max 3.9ms "])
    }

    @Test func thePanelStylesWhatMatters() {
        let lines = panel(width: 40, height: 12)
        #expect(lines[0].spans.contains { $0.text == "open chat" && $0.style == Style(.title, bold: true) })
        #expect(lines[2].spans.contains { $0.text == "6" && $0.style.role == .success })
        #expect(lines[3].spans.contains { $0.text.hasPrefix(" (1 fa") && $0.style.role == .danger })
        #expect(lines[4].spans.allSatisfy { $0.style.role == .warning || $0.text.allSatisfy(\.isWhitespace) })
    }

    @Test func beforeAnyActionThePanelSaysSo() {
        let lines = ActivityPanelView.lines(summary: nil, totals: ActivityCounts(), timeline: ActivityTimeline(), width: 30, height: 4)
        #expect(lines.map(\.text) == [
            "last: no action yet           ",
            "SQL 0 stmts   0µs  rows 0     ",
            "faults 0  hits 0  misses 0    ",
            "rel. faults 0  fetches 0  sav…",
        ])
    }

    // MARK: the SQL log

    private let entries = [
        SQLLogEntry(
            number: 3, sql: "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZUSER t0 WHERE t0.Z_PK = ?", arguments: [.integer(3)],
            rows: 1, duration: .microseconds(94), cause: .objectFault(entity: "User", key: "name"),
            queryPlan: ["SEARCH t0 USING INTEGER PRIMARY KEY (rowid=?)"], action: "open chat"),
        SQLLogEntry(
            number: 2, sql: "SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 WHERE t0.ZTITLE = ?", arguments: [.string("日本語のチャット 🎿")],
            rows: 12_345, duration: .milliseconds(1_234), cause: .fetch(entity: "Chat"), queryPlan: nil, action: "search"),
        SQLLogEntry(
            number: 1, sql: "UPDATE ZCHAT SET ZTITLE = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            arguments: [.string("Boats"), .integer(2), .integer(1), .integer(1)], rows: 1, duration: .microseconds(4_567),
            cause: .save, queryPlan: nil, action: "rename chat"),
    ]

    @Test func theLogIsExactlyTheSizeAskedForWhateverItsArguments() {
        for width in 0...100 {
            for (selected, expanded) in [(nil, false), (0, true), (1, false)] as [(Int?, Bool)] {
                let lines = SQLLogView.lines(entries: entries, selected: selected, expanded: expanded, width: width, height: 4)
                #expect(lines.count == 4)
                #expect(lines.allSatisfy { DisplayWidth.of($0.text) == width }, "width \(width)")
            }
        }
        #expect(SQLLogView.lines(entries: entries, selected: 0, width: 40, height: 0).isEmpty)
        let roomy = SQLLogView.lines(entries: entries, selected: nil, width: 120, height: 2)[1].text
        #expect(roomy.contains("WHERE t0.ZTITLE = ? [\"日本語のチャット 🎿\"]"))
        #expect(DisplayWidth.of(roomy) == 120)
    }

    @Test func eachStatementIsOneLineNewestFirst() {
        let lines = SQLLogView.lines(entries: entries, selected: nil, width: 100, height: 4)
        #expect(lines.map(\.text) == [
            " 94µs       1 row fault of User.name SELECT … FROM ZUSER t0 WHERE t0.Z_PK = ? [3]                   ",
            // The wide character that would straddle the edge is left out: a space pads the line instead.
            "1.23s 12,345 rows fetch Chat         SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 WHERE t0.ZTITLE = ? [\"… ",
            "4.6ms       1 row save               UPDATE ZCHAT SET ZTITLE = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OP…",
            String(repeating: " ", count: 100),
        ])
    }

    @Test func aSelectTooLongKeepsItsTableInView() {
        let lines = SQLLogView.lines(entries: entries, selected: nil, width: 80, height: 2)
        #expect(lines.map(\.text) == [
            " 94µs       1 row fault of User.name SELECT … FROM ZUSER t0 WHERE t0.Z_PK = ? […",
            "1.23s 12,345 rows fetch Chat         SELECT … FROM ZCHAT t0 WHERE t0.ZTITLE = ?…",
        ])
    }

    @Test func narrowLogsLeaveOutTheCauseThenTheRows() {
        // One line shows: the rows column is as wide as its "1 row", not as the 12,345 rows out of view.
        #expect(SQLLogView.lines(entries: entries, selected: nil, width: 30, height: 1)[0].text == " 94µs 1 row SELECT … FROM ZUS…")
        #expect(SQLLogView.lines(entries: entries, selected: nil, width: 20, height: 1)[0].text == " 94µs SELECT … FROM…")
    }

    @Test func theSelectedEntryIsHighlightedAcrossTheWholeLine() {
        let lines = SQLLogView.lines(entries: entries, selected: 1, width: 60, height: 3)
        #expect(lines[1].spans.allSatisfy { $0.style.role == .selection })
        #expect(lines[0].spans.allSatisfy { $0.style.role != .selection })
        #expect(lines[2].spans.allSatisfy { $0.style.role != .selection })
    }

    @Test func anExpandedSelectionShowsItsQueryPlanIndented() {
        let expanded = SQLLogView.lines(entries: entries, selected: 0, expanded: true, width: 60, height: 4).map(\.text)
        #expect(expanded[1] == DisplayWidth.pad("    SEARCH t0 USING INTEGER PRIMARY KEY (rowid=?)", width: 60))
        #expect(expanded[2].hasPrefix("1.23s"))
        let collapsed = SQLLogView.lines(entries: entries, selected: 0, expanded: false, width: 60, height: 4).map(\.text)
        #expect(collapsed[1].hasPrefix("1.23s"))
        // An entry without a plan shows none, expanded or not.
        let planless = SQLLogView.lines(entries: entries, selected: 1, expanded: true, width: 60, height: 4).map(\.text)
        #expect(planless[2].hasPrefix("4.6ms"))
    }

    @Test func theSelectionStaysInViewWithItsPlan() {
        let many = (0..<20).map { index in
            SQLLogEntry(number: 20 - index, sql: "SELECT \(index)", arguments: [], rows: 1, duration: .microseconds(10),
                        cause: .other("test"), queryPlan: ["SCAN \(index)", "USE TEMP B-TREE"], action: nil)
        }
        let lines = SQLLogView.lines(entries: many, selected: 15, expanded: true, width: 40, height: 5).map(\.text)
        #expect(lines.map { $0.trimmingCharacters(in: .whitespaces) } == [
            "10µs 1 row test SELECT 13",
            "10µs 1 row test SELECT 14",
            "10µs 1 row test SELECT 15",
            "SCAN 15",
            "USE TEMP B-TREE",
        ])
        let top = SQLLogView.lines(entries: many, selected: 2, width: 40, height: 5).map(\.text)
        #expect(top[0].trimmingCharacters(in: .whitespaces) == "10µs 1 row test SELECT 0")
    }

    @Test func anEmptyLogSaysSo() {
        let lines = SQLLogView.lines(entries: [], selected: 0, width: 24, height: 2)
        #expect(lines.map(\.text) == ["no statements yet       ", String(repeating: " ", count: 24)])
    }
}
