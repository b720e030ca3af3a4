import Collections
import Foundation
import GRDB

/// Change tracking and save: pending changes become one transaction of statements; the row cache and the objects
/// are updated only after it commits, so a failed save leaves the store and the context as they were.
extension ObjectContext {
    /// Nothing to apply yet beyond what setters already did: inverses are kept as values change. Kept for Core Data
    /// parity; delete rules join it when they land.
    public func processPendingChanges() {}

    /// Writes every change in one transaction. Throws `ContextError.optimisticLockingConflict` (writing nothing)
    /// when a row changed in the store since this context read it.
    public func save() throws(ContextError) {
        processPendingChanges()
        guard hasChanges else { return }
        let start = ContinuousClock.now
        let inserted = changedObjects.values.filter { $0.isInserted && !$0.isDeleted }
        let deleted = changedObjects.values.filter { $0.isDeleted && !$0.isInserted }
        let updated = changedObjects.values.filter { !$0.isInserted && !$0.isDeleted && $0.hasPersistentChanges }
        var statements = 0
        var permanentIDs: [ObjectID: ObjectID] = [:]
        var newSnapshots: [RowSnapshot] = []
        var conflicts: [ObjectID] = []
        do {
            try coordinator.write { db in
                let counted = CountingRunner(coordinator: coordinator, db: db, context: id)
                permanentIDs = try allocateKeys(for: inserted, runner: counted)
                func resolve(_ id: ObjectID?) -> ObjectID? { id.map { permanentIDs[$0] ?? $0 } }
                for object in inserted {
                    newSnapshots.append(try insertRow(object, id: permanentIDs[object.objectID]!, resolve: resolve, runner: counted))
                }
                // Objects whose only changes are to-many links have no column to write (their links and positions
                // are written below): updating their row would only fire their faults.
                for object in updated where !object.attributeChanges.isEmpty || !object.toOneChanges.isEmpty {
                    if let snapshot = try updateRow(object, resolve: resolve, runner: counted) {
                        newSnapshots.append(snapshot)
                    } else {
                        conflicts.append(object.objectID)
                    }
                }
                for object in deleted {
                    if try !deleteRow(object, runner: counted) { conflicts.append(object.objectID) }
                }
                if !conflicts.isEmpty {
                    throw ContextError.optimisticLockingConflict(uris: conflicts.map(coordinator.uri(for:)))
                }
                try writeLinks(resolve: resolve, runner: counted)
                try writeOrder(of: inserted + updated, resolve: resolve, runner: counted)
                statements = counted.count
            }
        } catch {
            // The rows that conflicted changed in the store since they were cached (maybe by another coordinator):
            // drop them, so a refreshed object reads the row as it is now.
            for objectID in conflicts { coordinator.rowCache.remove(objectID) }
            coordinator.events.emit(.save(SaveEvent(inserted: inserted.count, updated: updated.count, deleted: deleted.count,
                                                    statements: statements, duration: ContinuousClock.now - start, succeeded: false)), context: id)
            if let error = error as? ContextError { throw error }
            throw .store(String(describing: (error as? StoreError)?.description ?? PersistentStore.sqliteMessage(error)))
        }
        didSave(inserted: inserted, updated: updated, deleted: deleted, permanentIDs: permanentIDs, snapshots: newSnapshots)
        coordinator.events.emit(.save(SaveEvent(inserted: inserted.count, updated: updated.count, deleted: deleted.count,
                                                statements: statements, duration: ContinuousClock.now - start, succeeded: true)), context: id)
    }

    /// Discards every unsaved change: inserted objects go, edits and deletions are undone.
    public func rollback() {
        for object in changedObjects.values {
            if object.isInserted {
                unregister(object.objectID)
                object.isDeletedFlag = true
            }
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.isDeletedFlag = object.isInserted
        }
        changedObjects.removeAll()
        linkChanges.removeAll()
    }

    /// Turns an object back into a fault (dropping its changes), or with `mergeChanges` re-reads its persisted
    /// values on next access while keeping its changes.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard !object.isInserted else { return }
        object.snapshot = nil
        object.faultError = nil
        if !mergeChanges {
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
            object.isDeletedFlag = false
            changedObjects[object.objectID] = nil
        } else {
            // Keep recorded link changes; reload the members themselves on next access.
            for index in object.toManyStates.keys { object.toManyStates[index]?.members = nil }
        }
    }

    /// Forgets every object and change: the context is as new.
    public func reset() {
        for object in registeredObjects {
            object.snapshot = nil
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            object.toManyStates.removeAll()
        }
        forgetAll()
    }

    /// Marks an object deleted; the next save removes its row, its join-table links, and nullifies foreign keys
    /// pointing at it. (Delete rules beyond Nullify arrive with the delete-rules work.)
    public func delete(_ object: ManagedObject) {
        willChange(object)
        object.isDeletedFlag = true
        if object.isInserted {
            changedObjects[object.objectID] = nil
            unregister(object.objectID)
        }
    }

    // MARK: statements of a save

    /// Counts the statements a save runs.
    final class CountingRunner {
        let coordinator: PersistentStoreCoordinator
        let db: Database
        let context: ContextID
        var count = 0

        init(coordinator: PersistentStoreCoordinator, db: Database, context: ContextID) {
            self.coordinator = coordinator
            self.db = db
            self.context = context
        }

        @discardableResult
        func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
            count += 1
            return try coordinator.execute(db, sql: sql, arguments: arguments, cause: .save, context: context)
        }

        func query(_ sql: String, _ arguments: [AttributeValue], row: (OpaquePointer) throws -> Void) throws {
            count += 1
            try coordinator.query(db, sql: sql, arguments: arguments, cause: .save, context: context, row: row)
        }
    }

    /// Reserves primary keys for new objects, one statement per root entity (`Z_MAX` is kept on roots).
    private func allocateKeys(for inserted: [ManagedObject], runner: CountingRunner) throws -> [ObjectID: ObjectID] {
        var byRoot: OrderedDictionary<Int, [ManagedObject]> = [:]
        for object in inserted {
            let root = model.root(of: object.entity).number
            byRoot[root, default: []].append(object)
        }
        var result: [ObjectID: ObjectID] = [:]
        for (root, objects) in byRoot {
            var maximum: Int64 = 0
            try runner.query("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX",
                             [.integer(Int64(objects.count)), .integer(Int64(root))]) { maximum = SQLiteValues.int64($0, 0) }
            var next = maximum - Int64(objects.count)
            for object in objects {
                next += 1
                result[object.objectID] = ObjectID(entityNumber: object.objectID.entityNumber, primaryKey: next)
            }
        }
        return result
    }

    private func insertRow(_ object: ManagedObject, id: ObjectID, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws -> RowSnapshot {
        let mapping = object.mapping
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var arguments: [AttributeValue] = [.integer(id.primaryKey), .integer(Int64(id.entityNumber)), .integer(1)]
        var values: [AttributeValue] = []
        for (index, attribute) in mapping.attributes.enumerated() {
            let value = object.currentValue(of: index)
            values.append(value)
            guard !attribute.description.isDerived else { continue }
            columns.append(attribute.column)
            arguments.append(value)
        }
        var keys: [ObjectID?] = []
        for (index, toOne) in mapping.toOnes.enumerated() {
            let destination = resolve(object.toOneChanges[index] ?? nil)
            keys.append(destination)
            columns.append(toOne.column)
            arguments.append(destination.map { .integer($0.primaryKey) } ?? .null)
            if let entityColumn = toOne.entityColumn {
                columns.append(entityColumn)
                arguments.append(destination.map { .integer(Int64($0.entityNumber)) } ?? .null)
            }
        }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try runner.execute("INSERT INTO \(mapping.table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", arguments)
        return RowSnapshot(objectID: id, version: 1, values: values, toOneKeys: keys)
    }

    /// Writes changed columns only, checking `Z_OPT`; nil when the row changed since it was read (a conflict).
    private func updateRow(_ object: ManagedObject, resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws -> RowSnapshot? {
        let mapping = object.mapping
        if object.snapshot == nil { fulfillFault(object, key: "save") }
        guard let snapshot = object.snapshot else { return nil }
        var assignments: [String] = []
        var arguments: [AttributeValue] = []
        var values = snapshot.values
        var keys = snapshot.toOneKeys
        for (index, value) in object.attributeChanges.sorted(by: { $0.key < $1.key }) {
            values[index] = value
            assignments.append("\(mapping.attributes[index].column) = ?")
            arguments.append(value)
        }
        for (index, destination) in object.toOneChanges.sorted(by: { $0.key < $1.key }) {
            let resolved = resolve(destination)
            keys[index] = resolved
            let toOne = mapping.toOnes[index]
            assignments.append("\(toOne.column) = ?")
            arguments.append(resolved.map { .integer($0.primaryKey) } ?? .null)
            if let entityColumn = toOne.entityColumn {
                assignments.append("\(entityColumn) = ?")
                arguments.append(resolved.map { .integer(Int64($0.entityNumber)) } ?? .null)
            }
        }
        guard !assignments.isEmpty else { return snapshot }
        let sql = "UPDATE \(mapping.table) SET Z_OPT = Z_OPT + 1, \(assignments.joined(separator: ", ")) WHERE Z_PK = ? AND Z_OPT = ?"
        let changed = try runner.execute(sql, arguments + [.integer(object.objectID.primaryKey), .integer(snapshot.version)])
        guard changed == 1 else { return nil }
        return RowSnapshot(objectID: object.objectID, version: snapshot.version + 1, values: values, toOneKeys: keys)
    }

    /// Deletes the row (checking `Z_OPT` when it was read), its join-table links, and nullifies keys pointing at it.
    private func deleteRow(_ object: ManagedObject, runner: CountingRunner) throws -> Bool {
        let mapping = object.mapping
        let key = AttributeValue.integer(object.objectID.primaryKey)
        let changed: Int
        if let snapshot = object.snapshot {
            changed = try runner.execute("DELETE FROM \(mapping.table) WHERE Z_PK = ? AND Z_OPT = ?", [key, .integer(snapshot.version)])
        } else {
            changed = try runner.execute("DELETE FROM \(mapping.table) WHERE Z_PK = ?", [key])
        }
        guard changed == 1 else { return false }
        for toMany in mapping.toManys {
            switch toMany.storage {
            case .inverseForeignKey(let table, let column, _):
                try runner.execute("UPDATE \(table) SET \(column) = NULL WHERE \(column) = ?", [key])
            case .joinTable(let table, let sourceColumn, _, _, let isSymmetric):
                try runner.execute("DELETE FROM \(table) WHERE \(sourceColumn) = ?", [key])
                if isSymmetric, case .joinTable(_, _, let destinationColumn, _, _) = toMany.storage {
                    try runner.execute("DELETE FROM \(table) WHERE \(destinationColumn) = ?", [key])
                }
            default:
                break
            }
        }
        return true
    }

    private func writeLinks(resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws {
        for (link, adding) in linkChanges {
            guard let table = coordinator.store.schema.joinTables.first(where: { $0.name == link.table }) else { continue }
            let first = resolve(link.first)!.primaryKey
            let second = resolve(link.second)!.primaryKey
            let (a, b) = (table.primaryKey[0], table.primaryKey[1])
            if adding {
                try runner.execute("INSERT OR IGNORE INTO \(table.name) (\(a), \(b)) VALUES (?, ?)", [.integer(first), .integer(second)])
            } else {
                try runner.execute("DELETE FROM \(table.name) WHERE \(a) = ? AND \(b) = ?", [.integer(first), .integer(second)])
            }
        }
    }

    /// Writes positions of ordered to-manys that changed: all members when loaded, appended ones otherwise.
    private func writeOrder(of objects: [ManagedObject], resolve: (ObjectID?) -> ObjectID?, runner: CountingRunner) throws {
        for object in objects {
            for (index, state) in object.toManyStates where state.reordered {
                let toMany = object.mapping.toManys[index]
                let owner = AttributeValue.integer(resolve(object.objectID)!.primaryKey)
                let ordered = state.members ?? state.added
                let appendOnly = state.members == nil
                for (position, member) in ordered.enumerated() {
                    let memberKey = AttributeValue.integer(resolve(member)!.primaryKey)
                    switch toMany.storage {
                    case .inverseForeignKey(let table, let column, let orderColumn?):
                        if appendOnly {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) WHERE \(column) = ?) WHERE Z_PK = ?", [owner, memberKey])
                        } else {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = ? WHERE Z_PK = ?", [.integer(Int64(position + 1)), memberKey])
                        }
                    case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn?, _):
                        if appendOnly {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) WHERE \(sourceColumn) = ?) WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?", [owner, owner, memberKey])
                        } else {
                            try runner.execute("UPDATE \(table) SET \(orderColumn) = ? WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?", [.integer(Int64(position + 1)), owner, memberKey])
                        }
                    default:
                        break
                    }
                }
            }
        }
    }

    /// After commit: new IDs, fresh snapshots in objects and the row cache, changes cleared; objects whose derived
    /// values the triggers recomputed become faults so they read the new values.
    private func didSave(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject],
                         permanentIDs: [ObjectID: ObjectID], snapshots: [RowSnapshot]) {
        let byID = Dictionary(uniqueKeysWithValues: snapshots.map { ($0.objectID, $0) })
        var stale: [ManagedObject] = []
        for object in inserted {
            let old = object.objectID
            object.objectID = permanentIDs[old]!
            object.isInsertedFlag = false
            reregister(object, from: old)
        }
        // Every registered object's links may name temporary IDs: make them permanent.
        if !permanentIDs.isEmpty {
            for object in registeredObjects {
                for (index, change) in object.toOneChanges { object.toOneChanges[index] = change.map { permanentIDs[$0] ?? $0 } }
                for (index, state) in object.toManyStates {
                    var state = state
                    state.members = state.members?.map { permanentIDs[$0] ?? $0 }
                    state.added = state.added.map { permanentIDs[$0] ?? $0 }
                    object.toManyStates[index] = state
                }
            }
        }
        for object in inserted + updated {
            if object.toManyStates.values.contains(where: \.hasChanges) || object.mapping.attributes.contains(where: { $0.description.isDerived }) {
                stale.append(object)
            }
            object.snapshot = byID[object.objectID] ?? object.snapshot
            object.attributeChanges.removeAll()
            object.toOneChanges.removeAll()
            for (index, state) in object.toManyStates {
                object.toManyStates[index] = ToManyState(members: state.members)
            }
        }
        coordinator.rowCache.insert(contentsOf: snapshots)
        for object in deleted {
            coordinator.rowCache.remove(object.objectID)
            unregister(object.objectID)
        }
        // Objects on the other side of a changed link may carry derived counts: re-read them on next access.
        for object in stale where object.mapping.attributes.contains(where: { $0.description.isDerived }) {
            coordinator.rowCache.remove(object.objectID)
            object.snapshot = nil
        }
        changedObjects.removeAll()
        linkChanges.removeAll()
    }
}
