import Foundation
import GraphStore

/// A new store for one scenario, and the way every method of it is measured.
///
/// Each method starts from a new context on a row cache emptied first, so no method profits from the rows an earlier
/// one read. What a method fetches to get started is fetched before measuring starts; the figures are the changes of
/// the coordinator's counters across the method alone.
public final class ScenarioStore {
    public let path: String
    public let coordinator: PersistentStoreCoordinator
    public let strategy: FaultStrategy

    /// Creates a store at `path`, which must not exist yet.
    init(path: String, model: ObjectModel, strategy: FaultStrategy) throws(ScenarioError) {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw ScenarioError("\(path): already exists; a scenario builds its own store")
        }
        do {
            coordinator = try PersistentStoreCoordinator(path: path, model: model)
        } catch {
            throw ScenarioError("\(path): \(error)")
        }
        self.path = path
        self.strategy = strategy
    }

    /// A new context on an empty row cache, faulting as the strategy says.
    public func freshContext(name: String) -> ObjectContext {
        coordinator.rowCache.removeAll()
        let context = ObjectContext(coordinator: coordinator, name: name)
        context.faultBatchSize = strategy.faultBatchSize
        return context
    }

    /// Runs `body`, counting the statements, rows and row-cache hits and misses it caused and timing it.
    func measure(_ name: String, note: String? = nil, _ body: () throws -> [String]) throws(ScenarioError) -> MethodResult {
        let before = coordinator.events.counters.total
        let start = ContinuousClock.now
        let result: [String]
        do {
            result = try body()
        } catch {
            throw .wrapping(error, while: name)
        }
        let elapsed = ContinuousClock.now - start
        let change = coordinator.events.counters.total.difference(since: before)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return MethodResult(
            name: name, queries: change.statements, rows: change.statementRows,
            cacheHits: change.cacheHits, cacheMisses: change.cacheMisses,
            ms: (milliseconds * 1000).rounded() / 1000, result: result, note: note)
    }
}

extension ManagedObject {
    /// A string attribute, or "" when unset.
    func string(_ key: String) -> String {
        value(forKey: key) as? String ?? ""
    }

    /// An integer attribute, or 0 when unset.
    func integer(_ key: String) -> Int {
        if case .integer(let value) = attributeValue(forKey: key) { return Int(value) }
        return 0
    }
}
