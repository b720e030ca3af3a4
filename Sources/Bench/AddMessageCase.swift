import Foundation
import GraphStore

/// `add-message`: one message added to the largest chat and to a small one.
final class AddMessageCase {
    let folder: URL
    let quick: Bool
    let opened: (PersistentStoreCoordinator) -> Void
    let store: () throws -> ChatListStore

    init(folder: URL, quick: Bool, opened: @escaping (PersistentStoreCoordinator) -> Void, store: @escaping () throws -> ChatListStore) {
        self.folder = folder
        self.quick = quick
        self.opened = opened
        self.store = store
    }

    func prepare() throws -> PreparedCase {
        throw BenchmarkError("add-message is not built yet")
    }
}
