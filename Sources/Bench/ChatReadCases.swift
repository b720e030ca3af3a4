import Foundation
import GraphStore

/// `open-chat` and `materialize-messages`: reads of the chat store `chat-list` generates.
final class ChatReadCases {
    let quick: Bool
    let store: () throws -> ChatListStore

    init(quick: Bool, store: @escaping () throws -> ChatListStore) {
        self.quick = quick
        self.store = store
    }

    func prepare(_ name: BenchmarkCaseName) throws -> PreparedCase {
        throw BenchmarkError("\(name.rawValue) is not built yet")
    }
}
