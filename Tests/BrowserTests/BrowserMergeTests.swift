import Browser
import ChatFixture
import Foundation
import GraphStore
import Testing

/// The browser's `merge`: another context's or another process's new message reaches the chat list, which redraws
/// only the changed rows and keeps the selection on its chat.
@Suite(.serialized) struct BrowserMergeTests {
    private func model(_ path: String) throws -> BrowserModel {
        try BrowserModel(path: path, settings: BrowserSettings(), width: 120, height: 40)
    }

    private func selectedTitle(_ model: BrowserModel) -> String {
        let list = model.state.chatList
        return list.rows[list.selected - list.top].title
    }

    @Test func anotherContextsMessageRedrawsOnlyItsChatsRow() throws {
        let path = try BrowserBudgetTests.copy()
        let model = try model(path)
        model.apply(.start)
        for _ in 0..<5 { model.apply(.down) }
        let selected = selectedTitle(model)
        #expect(!model.hasPendingChanges())

        // A background context on the browser's coordinator receives a message.
        let writer = ObjectContext(coordinator: model.coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 5)
        let delivery = try incoming.deliver(in: writer)
        #expect(model.hasPendingChanges())
        let merge = model.apply(.merge)
        #expect(!model.hasPendingChanges())

        // Only the changed chat's row read the graph again, and fired no fault: the chat, refaulted for its new
        // count, took the columns the list draws from the list's refetch, with its new last message and sender;
        // every other row kept what it showed.
        #expect(merge.counts.objectFaults == 0, "merge faults: \(merge.counts.objectFaults)")
        #expect(merge.counts.relationshipFaults == 0)
        #expect(selectedTitle(model) == selected)
        let title = try #require(model.coordinator.rowCache.snapshot(for: delivery.chat)).values
        let chatTitle = title.compactMap { if case .string(let text) = $0 { text } else { nil } }.first
        let row = try #require(model.state.chatList.rows.first { $0.title == chatTitle }, "the chat's row is on screen")
        #expect(row.preview.hasPrefix(String(delivery.text.prefix(5))))
        #expect(model.state.message?.hasPrefix("merged from incoming: 1 new, ") == true, "\(model.state.message ?? "")")
    }

    @Test func anotherProcesssMessageIsFoundAndMerged() throws {
        let path = try BrowserBudgetTests.copy()
        let model = try model(path)
        model.apply(.start)
        #expect(!model.hasPendingChanges())

        let elsewhere = ObjectContext(coordinator: try PersistentStoreCoordinator(path: path, model: try ChatModel.make()), name: "elsewhere")
        var incoming = IncomingMessages(seed: 9)
        let delivery = try incoming.deliver(in: elsewhere)
        #expect(model.hasPendingChanges())
        let merge = model.apply(.merge)
        #expect(model.state.message?.hasPrefix("merged from another process: 1 new") == true, "\(model.state.message ?? "")")
        // The scan read the new message whole: nothing about it misses the row cache afterwards.
        #expect(merge.counts.cacheMisses <= 1, "merge misses: \(merge.counts.cacheMisses)")
        #expect(model.coordinator.rowCache.snapshot(for: delivery.message) != nil)
        #expect(!model.hasPendingChanges())
    }
}
