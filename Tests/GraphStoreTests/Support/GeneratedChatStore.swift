import ChatFixture
import Foundation
import GRDB
import GraphStore

/// A chat store the fixture generator made in a temporary folder, with a coordinator on it (the chat model and its
/// classes).
///
///     let store = try GeneratedChatStore(FixtureOptions(seed: 5, users: 40, chats: 12, messages: 400))
///     let context = ObjectContext(coordinator: store.coordinator, name: "reader")
struct GeneratedChatStore {
    let folder: TemporaryDirectory
    let path: String
    let summary: FixtureSummary
    let coordinator: PersistentStoreCoordinator

    init(_ options: FixtureOptions) throws {
        folder = try TemporaryDirectory()
        path = folder.path("chat.sqlite")
        summary = try FixtureGenerator(options: options, corpus: try ChatCorpus.load()).generate(to: path)
        coordinator = try PersistentStoreCoordinator(path: path, model: try ChatModel.make(), classes: ChatModel.classes)
    }

    /// The store as another process sees it: SQL on a connection of its own.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try DatabaseQueue(path: path).read(body)
    }
}
