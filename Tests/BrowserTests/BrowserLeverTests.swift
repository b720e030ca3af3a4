import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// The browser's levers and the rest of its keys on the default fixture: batching mode, the prefetch cycle, search,
/// emptying the row cache, explain, mouse clicks and the wheel. Each is checked by the SQL it ran or the rows it
/// selected, through the model the keys drive.
@Suite(.serialized) struct BrowserLeverTests {
    private func model(width: Int = 120, height: Int = 40) throws -> BrowserModel {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: width, height: height)
        model.apply(.start)
        return model
    }

    /// The statements the last action ran, oldest first.
    private func statements(_ model: BrowserModel) -> [SQLLogEntry] {
        let action = model.activity.lastAction?.counts.statements ?? 0
        return Array(model.activity.sqlLog.prefix(action).reversed())
    }

    @Test func batchingModeAllIDsFirstReadsEveryChatIDBeforeTheFirstScreen() throws {
        let model = try model()
        #expect(model.state.settings.batchingMode == .windowed)
        // Windowed: no statement of the first screen reads all 300 chats.
        model.apply(.resetCounters)
        model.apply(.toggleBatchMode)
        #expect(model.state.settings.batchingMode == .faithful)
        #expect(model.state.message == "batch 20 all IDs first")
        let sql = statements(model)
        #expect(sql.first?.rows == 300, "Core Data's way reads every ID first: \(sql.map(\.rows))")
        #expect(sql.first?.sql.contains("LIMIT") == false)
        // And back: the first statement reads one batch of rows with LIMIT.
        model.apply(.toggleBatchMode)
        #expect(statements(model).first?.sql.contains("LIMIT 20") == true)
        #expect(statements(model).first?.rows == 20)
    }

    /// The columns a statement selects, each qualified (`t0.ZTITLE`, `p1.ZNAME`); none for a statement of
    /// something else.
    private func selectedColumns(_ sql: String) -> [String] {
        guard sql.hasPrefix("SELECT "), let from = sql.range(of: " FROM ") else { return [] }
        return sql[sql.index(sql.startIndex, offsetBy: 7)..<from.lowerBound].split(separator: ", ").map(String.init)
            .filter { $0.contains(".") && !$0.contains("(") }
    }

    @Test func eachScreensStatementsNameOnlyTheColumnsItDraws() throws {
        let model = try model()
        // The chat list: the chat's, its last message's and that sender's drawn columns (the keys and the
        // to-ones followed besides), and the attachments' file names.
        let list = statements(model).flatMap { selectedColumns($0.sql) }
        #expect(Set(list) == [
            "t0.Z_ENT", "t0.Z_PK", "t0.Z_OPT", "t0.ZTITLE", "t0.ZLASTMESSAGEAT", "t0.ZISPINNED", "t0.ZISMUTED", "t0.ZMEMBERSCOUNT", "t0.ZLASTMESSAGE",
            "p1.Z_OPT", "p1.ZTEXT", "p1.ZKIND", "p1.ZSENDER", "p2.Z_OPT", "p2.ZNAME", "p2.ZHANDLE",
            "t0.ZMESSAGE", "t0.ZFILENAME",
        ], "\(list)")
        #expect(model.activity.lastAction?.counts.objectFaults == 0, "every drawn value came with the fetch")
        // The open chat: the messages', their senders', the replied-to messages' and their senders' drawn columns,
        // then the reactions' emoji and the attachments' file names.
        model.apply(.open)
        let chat = statements(model).flatMap { selectedColumns($0.sql) }
        #expect(Set(chat) == [
            "t0.Z_PK", "t0.Z_OPT", "t0.ZTEXT", "t0.ZKIND", "t0.ZSENTAT", "t0.ZISEDITED", "t0.ZSENDER", "t0.ZREPLYTO",
            "p1.Z_OPT", "p1.ZNAME", "p1.ZHANDLE", "p2.Z_OPT", "p2.ZTEXT", "p2.ZKIND", "p2.ZSENDER", "p3.Z_OPT", "p3.ZNAME", "p3.ZHANDLE",
            "t0.ZMESSAGE", "t0.ZEMOJI", "t0.ZFILENAME",
        ], "\(chat)")
        #expect(model.activity.lastAction?.counts.objectFaults == 0)
        #expect(model.activity.lastAction?.counts.partialFaults == 0)
        // Members: the member's role and join date, and the user's name (and handle: users are shared with the list).
        model.apply(.members)
        let members = statements(model).flatMap { selectedColumns($0.sql) }
        #expect(Set(members) == ["t0.Z_PK", "t0.Z_OPT", "t0.ZROLE", "t0.ZJOINEDAT", "t0.ZUSER", "p1.Z_OPT", "p1.ZNAME", "p1.ZHANDLE"], "\(members)")
        #expect(model.activity.lastAction?.counts.objectFaults == 0)
    }

    @Test func wholeRowsAreOneKeyAway() throws {
        let model = try model()
        model.apply(.toggleColumns)
        #expect(!model.state.settings.drawnColumnsOnly)
        #expect(model.state.message == "columns: whole rows")
        let whole = statements(model).flatMap { selectedColumns($0.sql) }
        #expect(whole.contains("t0.ZCREATEDAT") && whole.contains("p1.ZCHAT") && whole.contains("p2.ZSTATUSMESSAGE"), "\(whole)")
        model.apply(.toggleColumns)
        #expect(model.state.settings.drawnColumnsOnly)
        #expect(!statements(model).flatMap { selectedColumns($0.sql) }.contains("t0.ZCREATEDAT"))
    }

    @Test func thePrefetchCycleIsJoinedThenOffThenINStatements() throws {
        let model = try model()
        #expect(model.state.settings.prefetch == .joined)
        // Joined: the last message and its sender come in the main statement, no prefetch statement of their own;
        // only the to-many (the last message's attachments) has one.
        #expect(statements(model).compactMap { if case .prefetch(let keyPath) = $0.cause { keyPath } else { nil } } == ["lastMessage.attachments"])
        #expect(statements(model).first?.sql.contains("LEFT JOIN") == true)
        // The rows are in the row cache already: the list reloads without faulting any row from SQLite, and the
        // message says how to see the difference.
        model.apply(.togglePrefetch)
        #expect(model.state.settings.prefetch == .off)
        #expect(model.state.message?.contains("x empties the row cache") == true)
        model.apply(.clearCache)
        #expect(statements(model).count > 20, "off and cold: one fault statement per row")
        model.apply(.togglePrefetch)
        #expect(model.state.settings.prefetch == .separate)
        model.apply(.clearCache)
        let causes = statements(model).map(\.cause)
        #expect(causes.contains(.prefetch(keyPath: "lastMessage")))
        #expect(causes.contains(.prefetch(keyPath: "lastMessage.sender")))
        #expect(statements(model).contains { $0.sql.contains(" IN (") })
        model.apply(.togglePrefetch)
        #expect(model.state.settings.prefetch == .joined)
    }

    @Test func searchIsOneParameterizedFetchCaseAndDiacriticInsensitive() throws {
        let model = try model()
        let all = model.state.chatList.rows.map(\.title)
        model.apply(.search("TRIP"))
        let search = statements(model)
        #expect(search.contains { $0.arguments.contains(.string("TRIP")) && !$0.sql.contains("TRIP") },
                "the text is bound, not spliced: \(search.map(\.sql))")
        let found = model.state.chatList.rows.map(\.title)
        #expect(!found.isEmpty)
        #expect(found.allSatisfy { $0.lowercased().contains("trip") }, "\(found)")
        #expect(model.state.chatList.count < 300)
        let count = model.state.chatList.count
        #expect(model.state.message == (count == 1 ? "1 chat matches 'TRIP'" : "\(count) chats match 'TRIP'"))
        // An empty search brings the whole list back.
        model.apply(.search(""))
        #expect(model.state.chatList.count == 300)
        #expect(model.state.chatList.rows.map(\.title) == all)
    }

    @Test func emptyingTheRowCacheMakesTheScreenReadItsRowsAgain() throws {
        let model = try model()
        #expect(model.apply(.down).counts.statements == 0)
        let cleared = model.apply(.clearCache)
        #expect(cleared.counts.statements > 0)
        #expect(model.state.message?.hasPrefix("row cache emptied") == true)
        #expect(model.state.chatList.rows.count > 10)
    }

    @Test func explainShowsTheSelectedStatementsQueryPlan() throws {
        let model = try model()
        model.apply(.nextPane)
        #expect(model.state.focus == .sqlLog)
        #expect(model.action(for: .character("e")) == .explain)
        model.apply(.explain)
        let plan = try #require(model.state.explained)
        #expect(plan.contains { $0.contains("SCAN") || $0.contains("SEARCH") }, "\(plan)")
        // The plan is drawn under the selected entry of the log.
        let screen = BrowserView.frame(model.state, activity: model.activity).text
        #expect(plan.allSatisfy { screen.contains(String($0.prefix(20))) })
    }

    @Test func aClickSelectsTheRowUnderItAndTheWheelScrolls() throws {
        let model = try model()
        // Row 0 is the chat list's title; each chat takes two rows, so rows 11 and 12 are its sixth chat (either
        // line selects it) and row 3 its second.
        model.apply(.click(row: 3, column: 5))
        #expect(model.state.chatList.selected == 1)
        model.apply(.click(row: 12, column: 5))
        #expect(model.state.focus == .chats)
        #expect(model.state.chatList.selected == 5)
        model.apply(.click(row: 11, column: 5))
        #expect(model.state.chatList.selected == 5)
        model.apply(.open)
        let open = try #require(model.state.openChat)
        // A click on a message selects it; one on the pane's title selects nothing new.
        let screen = BrowserView.frame(model.state, activity: model.activity).text.split(separator: "\n")
        // The newest messages are at the bottom and always in view (older ones may be pushed out by day separators).
        let target = try #require(open.rows.reversed().first { $0.index != open.selected })
        let clock = DateFormatter()
        clock.locale = Locale(identifier: "en_US_POSIX")
        clock.timeZone = TimeZone(identifier: "UTC")
        clock.dateFormat = "HH:mm"
        let line = try #require(screen.firstIndex { $0.contains("│ \(clock.string(from: target.sentAt)) \(target.sender): ") })
        model.apply(.click(row: line, column: 50))
        #expect(model.state.focus == .messages)
        #expect(model.state.openChat?.selected == target.index)
        model.apply(.click(row: 0, column: 50))
        #expect(model.state.openChat?.selected == target.index)
        // The wheel over the chat list moves its selection three rows and focuses it.
        model.apply(.scrollDown(row: 10, column: 5))
        #expect(model.state.focus == .chats)
        #expect(model.state.chatList.selected == 8)
        model.apply(.scrollUp(row: 10, column: 5))
        #expect(model.state.chatList.selected == 5)
    }

    @Test func helpScrollsWhenTheWindowIsShortAndAnyOtherKeyClosesIt() throws {
        let model = try model(width: 80, height: 24)
        model.apply(.help)
        var screen = BrowserView.frame(model.state, activity: model.activity).text
        #expect(screen.contains("↑ k"))
        #expect(!screen.contains("quit (asks"))
        #expect(model.action(for: .down) == .down)
        model.apply(.pageDown)
        screen = BrowserView.frame(model.state, activity: model.activity).text
        #expect(screen.contains("quit (asks"), "the keys' last rows after paging down:\n\(screen)")
        #expect(!screen.contains("↑ k"))
        // The marks follow the keys: the last of them after one more page.
        model.apply(.pageDown)
        screen = BrowserView.frame(model.state, activity: model.activity).text
        #expect(screen.contains("the chat is empty"), "the help's last rows:\n\(screen)")
        #expect(model.action(for: .character("x")) == .cancel)
        model.apply(.cancel)
        #expect(model.state.overlay == .none)
        #expect(model.state.chatList.selected == 0, "scrolling the help moved no list")
    }
}
