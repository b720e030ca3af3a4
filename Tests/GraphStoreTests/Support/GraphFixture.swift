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

    /// A context on a second coordinator (`reopen()`): what another process reads from the file.
    func reader() throws -> ObjectContext {
        ObjectContext(coordinator: try reopen(), name: "reader")
    }
}

extension GraphFixture {
    /// A new store on the property test's model (`GraphPropertyTests.model()`: folders, items, notes, tags,
    /// people, badges, locks), and a context on it.
    static func itemGraph() throws -> (GraphFixture, ObjectContext) {
        let fixture = try GraphFixture(try GraphPropertyTests.model())
        return (fixture, fixture.context())
    }
}
