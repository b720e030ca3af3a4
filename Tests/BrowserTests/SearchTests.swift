import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// The search field: it filters titles and members' names as typed (`.refine`), Esc gives the list back as it was,
/// and the open chat closes when the list changes under it.
@Suite(.serialized) struct SearchTests {
    @Test func typingRefinesAndEscRestores() throws {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: 120, height: 40)
        model.apply(.start)
        let all = model.state.chatList.count
        model.apply(.open)
        #expect(model.state.openChat != nil)
        model.apply(.nextPane)
        model.apply(.nextPane)
        #expect(model.state.focus == .chats)
        model.apply(.beginSearch)
        var counts: [Int] = []
        for character in "Leo" {
            model.apply(.type(character))
            #expect(model.searchIsPending)
            model.apply(.refine)
            #expect(!model.searchIsPending)
            counts.append(model.state.chatList.count)
        }
        #expect(counts[0] < all && counts.last ?? 0 > 0, "\(counts)")
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 >= $1 }, "\(counts)")
        #expect(model.state.openChat == nil, "the chat opened before the search is not shown beside a list without it")
        // Every listed chat has "leo" in its title or a member's name.
        let context = ObjectContext(coordinator: model.coordinator)
        var request = FetchRequest(entityName: "Chat")
        request.predicate = try GraphStore.Predicate(format: "title CONTAINS[cd] %@ OR ANY members.user.name CONTAINS[cd] %@", "leo", "leo")
        #expect(try context.count(for: request) == counts.last)
        model.apply(.cancel)
        #expect(model.state.overlay == .none)
        #expect(model.state.chatList.count == all, "Esc gives the whole list back")
    }
}
