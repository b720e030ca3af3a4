import Foundation

/// A save's updates of changed rows: only the changed columns, checked against the version read (`Z_OPT`). When a
/// row changed since it was read, the merge policy settles it against the row as it is now, read in the same
/// transaction (see `MergePolicy`).
struct RowUpdates {
    enum Outcome {
        /// The row as the save left it.
        case written(RowSnapshot)
        /// The row changed since it was read, and the merge policy is `.error`.
        case conflict
        /// The row is gone from the store (and the policy is not `.error`): the object's changes are dropped.
        case vanished
    }

    let context: ObjectContext
    let policy: MergePolicy
    let resolver: KeyResolver
    let runner: StatementRunner

    /// Writes `object`'s changes over the version it read, `versionsAhead` versions on (this save's own earlier
    /// statements may have moved its row on already).
    func update(_ object: ManagedObject, versionsAhead: Int64) throws -> Outcome {
        if object.snapshot == nil { context.fulfillFault(object, trigger: .save) }
        guard let snapshot = object.snapshot else {
            return policy == .error ? .conflict : try settle(object, ancestor: nil)
        }
        // A version near Int64.max comes from a damaged row: `write` refuses it rather than overflow.
        let (expected, overflow) = snapshot.version.addingReportingOverflow(versionsAhead)
        if overflow { throw versionExhausted(object) }
        if let written = try write(object, over: snapshot, version: expected) {
            return .written(written)
        }
        guard policy != .error else { return .conflict }
        return try settle(object, ancestor: snapshot)
    }

    /// A conflicting row under a merge policy other than `.error`: reads the row as it is now and writes what the
    /// policy keeps of the object's changes over it.
    private func settle(_ object: ManagedObject, ancestor: RowSnapshot?) throws -> Outcome {
        let mapping = object.mapping
        var current: RowSnapshot?
        try runner.query(SQLStatement(mapping.selectByPrimaryKey, [.integer(object.objectID.primaryKey)])) { row in
            current = row.snapshot(mapping)
        }
        guard let current else { return .vanished }
        switch policy {
        case .error:
            return .conflict
        case .rollback:
            // The store's row wins whole: the object's changes go (the save clears them).
            return .written(current)
        case .objectTrump:
            break
        case .storeTrump:
            // Changes to properties the store also changed since the ancestor give way.
            if let ancestor {
                for (index, _) in object.attributeChanges.entries where current.values[index] != ancestor.values[index] {
                    object.attributeChanges[index] = nil
                }
                for (index, _) in object.toOneChanges.entries where current.toOneKeys[index] != ancestor.toOneKeys[index] {
                    object.toOneChanges[index] = nil
                }
            }
        case .overwrite:
            // Every stored property of the object as this context holds it, derived ones aside (triggers keep them).
            let base = ancestor ?? current
            for index in mapping.attributes.indices where object.attributeChanges[index] == nil && !mapping.attributes[index].description.isDerived {
                object.attributeChanges[index] = base.values[index]
            }
            for index in mapping.toOnes.indices where object.toOneChanges[index] == nil {
                object.toOneChanges[index] = .some(base.toOneKeys[index])
            }
        }
        if object.attributeChanges.isEmpty, object.toOneChanges.isEmpty { return .written(current) }
        guard let written = try write(object, over: current, version: current.version) else { return .conflict }
        return .written(written)
    }

    /// The versioned update of the object's changed columns over `snapshot`; nil when no row has that version.
    private func write(_ object: ManagedObject, over snapshot: RowSnapshot, version: Int64) throws -> RowSnapshot? {
        let mapping = object.mapping
        var columns: [(column: String, value: AttributeValue)] = []
        var values = Array(snapshot.values)
        var keys = Array(snapshot.toOneKeys)
        for (index, value) in object.attributeChanges.entries {
            values[index] = value
            columns.append((mapping.attributes[index].column, value))
        }
        for (index, destination) in object.toOneChanges.entries {
            let resolved = resolver.resolve(destination)
            keys[index] = resolved
            let toOne = mapping.toOnes[index]
            columns.append((toOne.column, resolved.map { .integer($0.primaryKey) } ?? .null))
            if let entityColumn = toOne.entityColumn {
                columns.append((entityColumn, resolved.map { .integer(Int64($0.entityNumber)) } ?? .null))
            }
        }
        guard !columns.isEmpty else { return snapshot }
        // The next version must fit: SQLite would make Z_OPT + 1 a REAL past Int64.max.
        guard version < Int64.max else { throw versionExhausted(object) }
        let changed = try runner.execute(MappingSQL.versionedUpdate(of: mapping.table, key: object.objectID.primaryKey, version: version, setting: columns))
        guard changed == 1 else { return nil }
        return RowSnapshot(objectID: object.objectID, version: version + 1, values: values, toOneKeys: keys)
    }

    /// A row whose `Z_OPT` is at Int64.max: it has no next version to write, so it cannot be updated.
    private func versionExhausted(_ object: ManagedObject) -> ContextError {
        .damaged("\(context.coordinator.uri(for: object.objectID)): Z_OPT is at its largest value (\(Int64.max)), so the row cannot "
            + "be updated: the store is damaged")
    }
}
