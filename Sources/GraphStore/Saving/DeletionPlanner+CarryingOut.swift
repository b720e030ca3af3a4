import Foundation

extension DeletionPlanner {
    // MARK: running a plan

    /// The plan for deleting `roots`, changing nothing.
    mutating func preview(_ roots: [ObjectID]) throws -> DeletionPlan {
        try close(over: roots)
        freezeKeys()
        var plan = DeletionPlan(deleted: deletedCounts(), denied: try blockers())
        for step in nullifySteps() {
            guard let key = step.key else { continue }
            var count = 0
            try query(step.countSQL, step.arguments) { count = Int($0.int64(0)) }
            if count > 0 { plan.nullified[key, default: 0] += count }
        }
        return plan
    }

    /// What carrying out a delete did: the plan, and the rows whose keys it cleared (their cached rows are stale).
    struct Outcome {
        var plan: DeletionPlan
        var clearedRows: [ObjectID] = []
        /// What the surviving rows may lack once the save is written (`RelationshipShortfalls`).
        var shortfalls = RelationshipShortfalls()
    }

    /// Plans and carries out the delete of `roots` with set-based statements; when a Deny rule refuses it, returns
    /// the plan with its blockers and changes nothing.
    mutating func carryOut(_ roots: [ObjectID]) throws -> Outcome {
        try close(over: roots)
        return try carryOut()
    }

    /// Carries out the delete of the rows `close(over:)` reached.
    mutating func carryOut() throws -> Outcome {
        freezeKeys()
        var outcome = Outcome(plan: DeletionPlan(deleted: deletedCounts(), denied: try blockers()))
        guard !outcome.plan.isDenied else { return outcome }
        // Before any link goes: the owners whose required to-manys lose members.
        outcome.shortfalls.thinnedToManys = try thinnedToManys()
        // Rows each table's UPDATEs changed so far, whose versions have moved on already.
        var cleared: [Int: Set<Int64>] = [:]
        for step in nullifySteps() {
            var count = 0
            if let root = step.updatedRoot {
                let changedBefore = Self.json((cleared[root] ?? []).sorted())
                let rootNumbers = coordinator.mapping(forEntityNumber: root).entityNumbers
                var required = step.clears.flatMap { $0.toOne.description.isOptional ? nil : RelationshipShortfalls.ClearedToOne(mapping: $0.mapping, toOne: $0.toOne, keys: []) }
                try query(step.applySQL, [changedBefore] + step.arguments) { handle in
                    count += 1
                    let key = handle.int64(0)
                    required?.keys.insert(key)
                    if cleared[root, default: []].insert(key).inserted {
                        outcome.clearedRows.append(ObjectID.stored(entity: handle.int64(1), of: rootNumbers, key: key))
                    }
                }
                if let required, !required.keys.isEmpty { outcome.shortfalls.clearedToOnes.append(required) }
            } else {
                if step.key != nil { try query(step.countSQL, step.arguments) { count = Int($0.int64(0)) } }
                if !step.applySQL.isEmpty { _ = try change(step.applySQL, step.arguments) }
            }
            if let key = step.key, count > 0 { outcome.plan.nullified[key, default: 0] += count }
        }
        for root in doomed.keys.sorted() {
            let table = coordinator.mapping(forEntityNumber: root).table
            _ = try change("DELETE FROM \(table) WHERE Z_PK \(Self.inKeys)", [doomedKeys(root: root)])
        }
        return outcome
    }

    /// A statement that changes rows, through the save's runner (so it is reported with the rows it changed).
    private func change(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        if let execute { return try execute(sql, arguments) }
        var rows = 0
        try query(sql, arguments) { _ in rows += 1 }
        return rows
    }

    private func deletedCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for rows in doomed.values {
            for entity in rows.values { counts[coordinator.mapping(forEntityNumber: entity).name, default: 0] += 1 }
        }
        return counts
    }

    /// Every doomed row's ID.
    var doomedIDs: [ObjectID] {
        doomed.values.flatMap { rows in rows.map { ObjectID(entityNumber: $0.value, primaryKey: $0.key) } }
    }
}
