import ChatFixture
import Foundation
import GraphStore
@testable import Browser
import TerminalText
import Testing

/// What the chat list and the message pane say about each message and chat, on the default fixture: previews by
/// message kind, no repeated name in direct chats, an empty chat saying so, a day header atop the messages.
@Suite struct ChatRowContentTests {
    private func model(width: Int = 120, height: Int = 40) throws -> BrowserModel {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: width, height: height,
                                     activityClock: { 0 })
        model.apply(.start)
        return model
    }

    /// Every chat's row, read a screen at a time.
    private func allRows(_ model: BrowserModel) -> [ChatRow] {
        var rows: [Int: ChatRow] = [:]
        while true {
            for (offset, row) in model.state.chatList.rows.enumerated() { rows[model.state.chatList.top + offset] = row }
            guard model.state.chatList.selected + 1 < model.state.chatList.count else { break }
            model.apply(.pageDown)
        }
        return (0..<rows.count).compactMap { rows[$0] }
    }

    @Test func previewsFollowTheMessageKind() throws {
        let model = try model()
        let rows = allRows(model)
        #expect(rows.count == model.state.chatList.count)
        let files = rows.filter { $0.preview.hasPrefix("[file]") }
        let stickers = rows.filter { $0.preview.hasPrefix("[sticker]") }
        try #require(!files.isEmpty && !stickers.isEmpty, "the fixture has chats whose last message is a file and a sticker")
        // A file shows its file's name, a sticker its name.
        #expect(files.allSatisfy { $0.preview.count > "[file] ".count && $0.preview.contains(".") }, "\(files.map(\.preview))")
        #expect(stickers.allSatisfy { $0.preview.count > "[sticker] ".count }, "\(stickers.map(\.preview))")
    }

    @Test func directChatsDoNotRepeatTheOtherPersonsName() throws {
        let model = try model()
        let rows = allRows(model)
        let direct = rows.filter { !$0.isGroup && $0.hasMessages }
        try #require(direct.contains { !$0.sentByOwner } && direct.contains(where: \.sentByOwner))
        for row in direct {
            let line = ChatListView.lines(row, width: 60, selected: false, focused: true, now: Date())[1].text
            #expect(!line.contains(row.title + ":"), "|\(line)|")
            if row.sentByOwner { #expect(line.hasPrefix("   You: "), "|\(line)|") }
            if !row.sentByOwner { #expect(line.hasPrefix("   " + String(row.preview.prefix(3))), "|\(line)|") }
        }
        // A group names the sender.
        let group = try #require(rows.first { $0.isGroup && !$0.sentByOwner && $0.sender != nil })
        let line = ChatListView.lines(group, width: 80, selected: false, focused: true, now: Date())[1].text
        #expect(line.hasPrefix("   \(group.sender ?? ""): "), "|\(line)|")
    }

    @Test func anEmptyChatSaysSoInTheListAndThePane() throws {
        let row = ChatRow(title: "Quiet", isGroup: true, membersCount: 3, preview: "", sender: nil, sentByOwner: false,
                          hasMessages: false, time: nil, isPinned: false, isMuted: false)
        let lines = ChatListView.lines(row, width: 40, selected: false, focused: true, now: Date())
        #expect(lines[0].text.hasPrefix(" Quiet 👥3"))
        #expect(lines[1].text.contains("no messages"))
        var state = BrowserState(width: 120, height: 40, storeName: "chat.sqlite", settings: BrowserSettings())
        state.openChat = OpenChatState(title: "Quiet", messagesCount: 0)
        state.focus = .messages
        let pane = MessagesView.lines(state, width: 50, height: 20).map(\.text)
        #expect(pane.count == 20)
        #expect(pane[1].contains("no messages in this chat"))
        #expect(pane.allSatisfy { DisplayWidth.of($0) == 50 })
    }

    /// Wherever the pane is scrolled, its first line under the title is the day of the message below it, and the
    /// selected message is in view.
    @Test func theTopOfTheMessagePaneAlwaysNamesItsDay() throws {
        let model = try model(width: 80, height: 24)
        for _ in 0..<3 { model.apply(.down) }
        model.apply(.open)
        let layout = Layout(model.state)
        for step in 0..<60 {
            model.apply(.up)
            let open = try #require(model.state.openChat)
            let lines = MessagesView.lines(model.state, width: layout.main.width, height: layout.main.height).map(\.text)
            let firstRow = try #require(open.rows.first)
            // Day headers and rows only: the pane is full.
            #expect(lines[1].contains("┄") && lines[1].contains(TimeText.day(firstRow.sentAt)), "after \(step + 1) up: |\(lines[1])|")
            #expect(open.rows.contains { $0.index == open.selected }, "the selection is drawn")
            let drawn = (1..<lines.count).compactMap { MessagesView.messageIndex(model.state, height: layout.main.height, line: $0) }
            #expect(drawn == open.rows.map(\.index), "every row read is drawn, in order")
        }
    }
}
