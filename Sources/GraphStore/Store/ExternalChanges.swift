import Foundation
import GRDB
import Synchronization

/// Noticing what other processes wrote to the store file.
///
/// SQLite's `PRAGMA data_version` changes on a connection when another connection commits. Polled on the
/// coordinator's writing connection, it changes for other processes' commits (and other coordinators' on the same
/// file) but never for this coordinator's own saves. When it has moved, one scan finds what changed, the way a
/// store laid out as Core Data's can be read: rows above each root entity's last known `Z_MAX` are new; rows this
/// process holds (in the row cache, or named by the caller) whose `Z_OPT` moved were updated, and those no longer
/// there were deleted. To-manys and derived counts of the rows those point at are refreshed. Links in many-to-many
/// join tables that another process changed between rows this process does not re-read are not seen.
final class ExternalChangeWatch: Sendable {
    struct State {
        var dataVersion: Int64?
        /// Each root entity's `Z_MAX` as last seen, by entity number.
        var maxima: [Int: Int64] = [:]
        /// Keys this coordinator's saves took above those maxima (after another writer's), by entity number.
        var ownKeys: [Int: [ClosedRange<Int64>]] = [:]
    }

    let state = Mutex(State())
}

extension PersistentStoreCoordinator {
    /// Starts watching for other processes' writes (the first call of `changesFromOtherConnections` does it too):
    /// records where the store stands now.
    public func startWatchingOtherConnections() throws(StoreError) {
        let version = try dataVersion()
        let maxima = try readMaxima()
        externalWatch.state.withLock { state in
            state.dataVersion = version
            state.maxima = maxima
        }
    }

    /// What other connections (other processes, other coordinators on the same file) committed since the last
    /// call; nil when nothing (one `PRAGMA data_version` on the writing connection, which reports no statement).
    /// Objects registered in contexts but no longer in the row cache are checked only when named in `alsoChecking`
    /// with the version their context holds (`ObjectContext.mergeChangesFromOtherConnections()` names its own). The row cache is brought up to date; the
    /// notification also goes to every save observer.
    public func changesFromOtherConnections(alsoChecking extra: [ObjectID: Int64] = [:]) throws(StoreError) -> SaveNotification? {
        let version = try dataVersion()
        let known = externalWatch.state.withLock { $0 }
        guard let knownVersion = known.dataVersion else {
            try startWatchingOtherConnections()
            return nil
        }
        guard version != knownVersion else { return nil }

        var note = SaveNotification(source: nil, storeUUID: store.storeUUID)
        var maxima = known.maxima
        do {
            try store.database.read { db in
                try scan(db, known: known.maxima, own: known.ownKeys, maxima: &maxima, extra: extra, into: &note)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unreadable(path: store.path, reason: PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))
        }
        externalWatch.state.withLock { state in
            state.dataVersion = version
            for (root, maximum) in maxima {
                state.maxima[root] = max(state.maxima[root] ?? 0, maximum)
                state.ownKeys[root]?.removeAll { $0.upperBound <= maximum }
            }
        }
        guard !note.isEmpty else { return nil }
        rowCache.insert(contentsOf: note.values.values)
        rowCache.remove(contentsOf: note.deleted)
        rowCache.remove(contentsOf: note.refreshed)
        saveObservers.post(note)
        return note
    }

    /// Whether another connection committed since the last look (one `PRAGMA data_version`, no scan); false
    /// before watching started or when the pragma fails.
    public func hasChangesFromOtherConnections() -> Bool {
        guard let known = externalWatch.state.withLock({ $0.dataVersion }), let version = try? dataVersion() else { return false }
        return version != known
    }

    /// Records keys this coordinator's own save allocated, so the next scan does not report its rows as another
    /// process's: only when they follow the last known maximum directly (a gap is someone else's rows).
    func noteOwnKeys(root: Int, first: Int64, last: Int64) {
        externalWatch.state.withLock { state in
            guard state.dataVersion != nil, let known = state.maxima[root] else { return }
            if known == first - 1 {
                state.maxima[root] = last
            } else {
                state.ownKeys[root, default: []].append(first...last)
            }
        }
    }

    private func dataVersion() throws(StoreError) -> Int64 {
        do {
            if let writer = try? store.databaseWriter() {
                return try writer.writeWithoutTransaction { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
            }
            return try read { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
        } catch {
            throw .unreadable(path: store.path, reason: PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))
        }
    }

    /// Each root entity's `Z_MAX`; bookkeeping, reported as no statement.
    private func readMaxima() throws(StoreError) -> [Int: Int64] {
        do {
            return try read { db in
                var maxima: [Int: Int64] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") {
                    // A damaged store may hold text there: such a row is left out rather than trapping.
                    guard let number = row.lenient(0, as: Int.self) else { continue }
                    maxima[number] = row.lenient(1, as: Int64.self)
                }
                return maxima
            }
        } catch {
            throw .unreadable(path: store.path, reason: PersistentStore.sqliteMessage(error, busyTimeout: store.busyTimeout))
        }
    }

    /// Every root mapping (one per table) with the mappings its table holds.
    private var rootFamilies: [(root: EntityMapping, plan: RowReadPlan)] {
        model.entities.compactMap { entity -> (EntityMapping, RowReadPlan)? in
            guard let mapping = self.mapping(forEntity: entity.name), mapping.rootNumber == mapping.number else { return nil }
            let family = [mapping] + entity.descendantNames.compactMap { self.mapping(forEntity: $0) }
            return (mapping, RowReadPlan(family))
        }
    }

    private func scan(_ db: Database, known: [Int: Int64], own: [Int: [ClosedRange<Int64>]], maxima: inout [Int: Int64], extra: [ObjectID: Int64], into note: inout SaveNotification) throws {
        let runner = StatementRunner(coordinator: self, db: db, cause: .other("changes from another process"), context: nil)
        try runner.query(SQLStatement("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY")) { row in
            maxima[row.int(0)] = row.int64(1)
        }
        // The rows this process may hold, by root entity.
        let cached = rowCache.cachedSnapshots(for: rowCache.idsByRecency())
        /// Each held row's ID and the version held, by root entity and key.
        var held: [Int: [Int64: (id: ObjectID, version: Int64)]] = [:]
        for (id, version) in extra where !id.isTemporary {
            held[mapping(forEntityNumber: id.entityNumber).rootNumber, default: [:]][id.primaryKey] = (id, version)
        }
        for (id, snapshot) in cached {
            held[mapping(forEntityNumber: id.entityNumber).rootNumber, default: [:]][id.primaryKey] = (id, snapshot.version)
        }
        var stale: [ObjectID: Int64] = [:]
        var owners = Set<ObjectID>()
        for (root, plan) in rootFamilies {
            let number = root.number
            // New rows: keys above the last known maximum.
            if let before = known[number], let now = maxima[number], now > before {
                try runner.query(SQLStatement("SELECT \(plan.selectList) FROM \(root.table) t0 WHERE t0.Z_PK > ? AND t0.Z_PK <= ? ORDER BY t0.Z_PK",
                                              [.integer(before), .integer(now)])) { row in
                    let snapshot = row.snapshot(plan)
                    if let ranges = own[number], ranges.contains(where: { $0.contains(snapshot.objectID.primaryKey) }) { return }
                    note.inserted.append(snapshot.objectID)
                    note.values[snapshot.objectID] = snapshot
                    for key in snapshot.toOneKeys { if let key { owners.insert(key) } }
                }
            }
            // Held rows: which moved on, which are gone.
            guard let keys = held[number], !keys.isEmpty else { continue }
            var versions: [Int64: Int64] = [:]
            try runner.query(MappingSQL.versions(of: root.table, keys: keys.keys.sorted())) { row in
                versions[row.int64(0)] = row.int64(1)
            }
            var moved: [Int64] = []
            for (key, row) in keys.sorted(by: { $0.key < $1.key }) {
                guard let version = versions[key] else {
                    note.deleted.append(row.id)
                    if let keys = cached[row.id]?.toOneKeys { for case let destination? in keys { owners.insert(destination) } }
                    continue
                }
                if version != row.version {
                    moved.append(key)
                    stale[row.id] = row.version
                }
            }
            guard !moved.isEmpty else { continue }
            try runner.query(SQLStatement("SELECT \(plan.selectList) FROM \(root.table) t0 WHERE t0.Z_PK \(MappingSQL.inKeys)",
                                          [MappingSQL.json(moved)])) { row in
                let snapshot = row.snapshot(plan)
                let id = snapshot.objectID
                guard stale[id] != nil else { return }
                note.updated.append(id)
                note.values[id] = snapshot
                let mapping = self.mapping(forEntityNumber: id.entityNumber)
                var changed: [String] = []
                if let before = cached[id] {
                    // A partial row held only some values: the others are not known to have changed or not, and
                    // are not reported.
                    for index in mapping.attributes.indices where before.holdsAttribute(index) && before.values[index] != snapshot.values[index] {
                        changed.append(mapping.attributes[index].name)
                    }
                    for index in mapping.toOnes.indices where before.holdsToOne(index) && before.toOneKeys[index] != snapshot.toOneKeys[index] {
                        changed.append(mapping.toOnes[index].name)
                        if let key = before.toOneKeys[index] { owners.insert(key) }
                        if let key = snapshot.toOneKeys[index] { owners.insert(key) }
                    }
                    for index in mapping.toOnes.indices where !before.holdsToOne(index) {
                        if let key = snapshot.toOneKeys[index] { owners.insert(key) }
                    }
                } else {
                    for key in snapshot.toOneKeys { if let key { owners.insert(key) } }
                }
                note.changedKeys[id] = changed
            }
        }
        let gone = Set(note.deleted)
        owners.subtract(gone)
        note.relationshipOwners = owners
        note.refreshed = owners.filter { mapping(forEntityNumber: $0.entityNumber).hasDerivedAttributes }.sorted()
    }
}

extension ObjectContext {
    /// Looks for other processes' writes (`PersistentStoreCoordinator.changesFromOtherConnections`), checking this
    /// context's registered objects too, and merges what it finds; returns it (nil when nothing changed). Other
    /// contexts hear of it through their save observers.
    @discardableResult
    public func mergeChangesFromOtherConnections() throws(StoreError) -> SaveNotification? {
        var held: [ObjectID: Int64] = [:]
        for (id, entry) in registry { if let row = entry.object.state.row { held[id] = row.version } }
        guard let note = try coordinator.changesFromOtherConnections(alsoChecking: held) else { return nil }
        mergeChanges(fromContextDidSave: note)
        return note
    }
}
