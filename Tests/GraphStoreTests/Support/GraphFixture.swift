import Foundation
import GraphStore

/// A coordinator on a new store in a temporary folder, with helpers to count what a piece of work cost.
final class GraphFixture {
    let folder: TemporaryDirectory
    let coordinator: PersistentStoreCoordinator
    let path: String

    init(_ model: ObjectModel, rowCacheCapacity: Int = 100_000) throws {
        folder = try TemporaryDirectory()
        path = folder.path("store.sqlite")
        coordinator = try PersistentStoreCoordinator(path: path, model: model, rowCacheCapacity: rowCacheCapacity)
    }

    func context(_ name: String = "test") -> ObjectContext { ObjectContext(coordinator: coordinator, name: name) }

    /// Runs `work` and returns what it cost: statements, hits, misses, relationship faults.
    func measure(_ work: () throws -> Void) throws -> GraphCounters.Totals {
        let before = coordinator.events.counters
        try work()
        return coordinator.events.counters.difference(since: before).total
    }

    /// A second coordinator on the same file: another process's view, with its own cold row cache.
    func reopen() throws -> PersistentStoreCoordinator {
        try PersistentStoreCoordinator(path: path, model: coordinator.model)
    }
}
