import GRDB
import Synchronization

/// What undo after a save needs: the rows each recorded save changed, as they were before it, kept in temporary
/// tables on the writer connection.
///
/// Temporary triggers on every entity and join table fill the journal while a save that records runs (they are idle
/// otherwise): the first time a row is updated or deleted in a step its before-image goes to `GS_UNDO_ROWS_<table>`,
/// and every row the step touches is listed in `GS_UNDO_KEYS_<table>` with the version it was left at (NULL when the
/// step deleted it). Capturing in triggers catches every statement a save runs — set-based cascades, nullified keys,
/// order columns, join-table links — without loading a row into memory, and costs nothing to saves that do not
/// record. Undoing a step writes the images back set-based: rows the step created are deleted, rows it changed get
/// their old values, rows it deleted come back with their old keys; derived attributes are left to the store's
/// triggers, and copied ones are recomputed. The journal lives as long as the connection: a closed store forgets it.
final class UndoJournal: Sendable {
    struct Table: Sendable {
        let name: String
        let isJoinTable: Bool
        /// `Z_PK`, or a join table's two key columns.
        let keyColumns: [String]
        let columns: [String]
        /// Each column with its declared type: the journal's columns compare as the table's do, so that a key
        /// looked up from a trigger (`OLD.Z_PK`, an INTEGER) can use the journal's index.
        let definitions: [String]
        /// Columns written back onto rows that still exist: not keys, `Z_ENT`, `Z_OPT` nor derived ones.
        let restoredColumns: [String]
        /// Columns whose change puts a row in a step (derived ones follow other rows, through triggers).
        let trackedColumns: [String]
        /// The entity numbers the table's rows may carry (`Z_ENT`); a join table's rows carry none.
        var entityNumbers: ClosedRange<Int> = 1...1

        var rows: String { "GS_UNDO_ROWS_\(name)" }
        var keys: String { "GS_UNDO_KEYS_\(name)" }
    }

    /// Rows a reversal removed, wrote back and restored, and the rows that changed since the step (conflicts).
    struct Reversal {
        var conflicts: [ObjectID] = []
        var removed: [ObjectID] = []
        var rewritten: [ObjectID] = []
        var restored: [ObjectID] = []
    }

    let tables: [Table]
    private let copyRefreshes: [CopyRefresh]
    private struct State {
        var isInstalled = false
        var nextStep: Int64 = 1
        /// Steps nobody can undo any more, whose images the next recorded save deletes.
        var discarded: [Int64: [Int]] = [:]
    }
    private let state = Mutex(State())

    private static let step = "(SELECT Z_STEP FROM GS_UNDO_STATE)"

    init(schema: StoreSchema) {
        var derived = Set<String>()
        for entity in schema.model.entities {
            for attribute in entity.declaration.attributes where attribute.isDerived {
                if let table = schema.table(for: entity.name), let column = schema.column(forAttribute: attribute.name, of: entity.name) {
                    derived.insert("\(table.name).\(column)")
                }
            }
        }
        var tables: [Table] = []
        for table in schema.tables {
            let columns = table.columns.map(\.name)
            let tracked = columns.filter { $0 != "Z_PK" && $0 != "Z_OPT" && !derived.contains("\(table.name).\($0)") }
            let numbers = (table.entityNumbers.min() ?? 1)...(table.entityNumbers.max() ?? 1)
            tables.append(Table(name: table.name, isJoinTable: false, keyColumns: ["Z_PK"], columns: columns,
                                definitions: table.columns.map { "\($0.name) \($0.type)" },
                                restoredColumns: tracked.filter { $0 != "Z_ENT" }, trackedColumns: tracked, entityNumbers: numbers))
        }
        for table in schema.joinTables {
            let columns = table.columns.map(\.name)
            let others = columns.filter { !table.primaryKey.contains($0) }
            tables.append(Table(name: table.name, isJoinTable: true, keyColumns: table.primaryKey, columns: columns,
                                definitions: table.columns.map { "\($0.name) \($0.type)" },
                                restoredColumns: others, trackedColumns: others))
        }
        self.tables = tables
        self.copyRefreshes = schema.copyRefreshes
    }

    // MARK: setting up

    /// Creates the journal's tables and triggers on the writer connection, once.
    func install(on coordinator: PersistentStoreCoordinator) throws {
        guard !state.withLock({ $0.isInstalled }) else { return }
        try coordinator.write { db in
            for statement in installStatements() { try db.execute(sql: statement) }
        }
        state.withLock { $0.isInstalled = true }
    }

    func installStatements() -> [String] {
        var statements = ["CREATE TEMP TABLE GS_UNDO_STATE (Z_STEP INTEGER)", "INSERT INTO GS_UNDO_STATE VALUES (NULL)"]
        let step = Self.step
        for table in tables {
            let keyList = table.keyColumns.joined(separator: ", ")
            let keyMatch = table.keyColumns.map { "\($0) = OLD.\($0)" }.joined(separator: " AND ")
            statements.append("CREATE TEMP TABLE \(table.rows) (Z_STEP INTEGER NOT NULL, \(table.definitions.joined(separator: ", ")), PRIMARY KEY (Z_STEP, \(keyList)))")
            let keyDefinitions = table.keyColumns.map { "\($0) INTEGER" }.joined(separator: ", ")
            let keyExtra = table.isJoinTable ? "Z_PRESENT INTEGER" : "Z_ENT INTEGER, Z_OPT INTEGER"
            statements.append("CREATE TEMP TABLE \(table.keys) (Z_STEP INTEGER NOT NULL, \(keyDefinitions), \(keyExtra), PRIMARY KEY (Z_STEP, \(keyList)))")
            let firstTouch = "\(step) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(table.keys) WHERE Z_STEP = \(step) AND \(keyMatch))"
            let image = "INSERT INTO \(table.rows) VALUES (\(step), \(table.columns.map { "OLD.\($0)" }.joined(separator: ", ")));"
            func note(_ row: String, present: Bool) -> String {
                let values = table.keyColumns.map { "\(row).\($0)" }
                    + (table.isJoinTable ? [present ? "1" : "0"] : ["\(row).Z_ENT", present ? "\(row).Z_OPT" : "NULL"])
                let update = table.isJoinTable ? "Z_PRESENT = excluded.Z_PRESENT" : "Z_ENT = excluded.Z_ENT, Z_OPT = excluded.Z_OPT"
                // An upsert (a DELETE then INSERT here made each row cost a scan of the journal).
                return "INSERT INTO \(table.keys) VALUES (\(step), \(values.joined(separator: ", ")))"
                    + " ON CONFLICT (Z_STEP, \(keyList)) DO UPDATE SET \(update);"
            }
            let prefix = "CREATE TEMP TRIGGER GS_UNDO_\(table.name)"
            let active = "WHEN \(step) IS NOT NULL"
            if !table.trackedColumns.isEmpty {
                let of = table.trackedColumns.joined(separator: ", ")
                statements.append("\(prefix)_BU BEFORE UPDATE OF \(of) ON \(table.name) WHEN \(firstTouch) BEGIN \(image) END")
                statements.append("\(prefix)_AU AFTER UPDATE OF \(of) ON \(table.name) \(active) BEGIN \(note("NEW", present: true)) END")
            }
            statements.append("\(prefix)_BD BEFORE DELETE ON \(table.name) WHEN \(firstTouch) BEGIN \(image) END")
            statements.append("\(prefix)_AD AFTER DELETE ON \(table.name) \(active) BEGIN \(note("OLD", present: false)) END")
            statements.append("\(prefix)_AI AFTER INSERT ON \(table.name) \(active) BEGIN \(note("NEW", present: true)) END")
        }
        return statements
    }

    // MARK: steps

    func makeStep() -> Int64 {
        state.withLock { state in
            defer { state.nextStep += 1 }
            return state.nextStep
        }
    }

    /// Notes that nobody can undo `step` any more; the next recorded save deletes its images.
    func discard(_ step: Int64, tables: [Int]) {
        state.withLock { $0.discarded[step] = tables }
    }

    /// Deletes the images of discarded steps, and starts recording `step`.
    func begin(_ step: Int64, runner: StatementRunner) throws {
        func execute(_ sql: String, _ arguments: [AttributeValue]) throws { try runner.execute(SQLStatement(sql, arguments)) }
        let discarded = state.withLock { state in
            defer { state.discarded.removeAll() }
            return state.discarded
        }
        var byTable: [Int: [Int64]] = [:]
        for (step, tables) in discarded {
            for table in tables { byTable[table, default: []].append(step) }
        }
        for index in byTable.keys.sorted() {
            let steps = MappingSQL.json((byTable[index] ?? []).sorted())
            try execute("DELETE FROM temp.\(tables[index].rows) WHERE Z_STEP IN (SELECT value FROM json_each(?))", [steps])
            try execute("DELETE FROM temp.\(tables[index].keys) WHERE Z_STEP IN (SELECT value FROM json_each(?))", [steps])
        }
        try execute("UPDATE temp.GS_UNDO_STATE SET Z_STEP = ?", [.integer(step)])
    }

    /// Stops recording; returns the tables `step` touched (indexes into `tables`).
    func end(_ step: Int64, runner: StatementRunner) throws -> [Int] {
        func query(_ sql: String, _ arguments: [AttributeValue], _ row: (borrowing RowView) throws -> Void) throws {
            try runner.query(SQLStatement(sql, arguments), row: row)
        }
        let sql = tables.indices.map { "SELECT \($0) WHERE EXISTS (SELECT 1 FROM temp.\(tables[$0].keys) WHERE Z_STEP = ?1)" }
            .joined(separator: " UNION ALL ")
        var touched: [Int] = []
        try query(sql, [.integer(step)]) { touched.append($0.int(0)) }
        try query("UPDATE temp.GS_UNDO_STATE SET Z_STEP = NULL", []) { _ in }
        return touched
    }

    // MARK: undoing a step

    /// Writes back what `step` changed in `touched` tables, while `current` records (so the reversal can itself be
    /// undone). Nothing is written when a row the step left changed since (another writer): the conflicts come back.
    func reverse(_ step: Int64, touched: [Int], current: Int64, runner: StatementRunner) throws -> Reversal {
        func query(_ sql: String, _ arguments: [AttributeValue], _ row: (borrowing RowView) throws -> Void) throws {
            try runner.query(SQLStatement(sql, arguments), row: row)
        }
        var outcome = Reversal()
        let arguments: [AttributeValue] = [.integer(step)]
        let entityTables = touched.filter { !tables[$0].isJoinTable }.map { tables[$0] }
        let joinTables = touched.filter { tables[$0].isJoinTable }.map { tables[$0] }
        // A Z_ENT outside the table's entity numbers (a row another program wrote) names the table's lowest entity
        // rather than one the model does not have, which would stop the context that looks it up.
        func id(_ row: borrowing RowView, in table: Table) -> ObjectID {
            ObjectID.stored(entity: row.int64(1), of: table.entityNumbers, key: row.int64(0))
        }
        // Rows the step left that changed since, went, or whose key came back.
        for table in entityTables {
            try query("SELECT k.Z_PK, IFNULL(t.Z_ENT, k.Z_ENT) FROM temp.\(table.keys) k LEFT JOIN \(table.name) t ON t.Z_PK = k.Z_PK"
                      + " WHERE k.Z_STEP = ? AND t.Z_OPT IS NOT k.Z_OPT", arguments, { outcome.conflicts.append(id($0, in: table)) })
        }
        guard outcome.conflicts.isEmpty else { return outcome }
        // 1. What the step created goes.
        for table in joinTables {
            let keys = table.keyColumns.joined(separator: ", ")
            try query("DELETE FROM \(table.name) WHERE (\(keys)) IN (SELECT \(keys) FROM temp.\(table.keys) WHERE Z_STEP = ?1 AND Z_PRESENT = 1"
                      + " EXCEPT SELECT \(keys) FROM temp.\(table.rows) WHERE Z_STEP = ?1)", arguments) { _ in }
        }
        for table in entityTables {
            try query("DELETE FROM \(table.name) WHERE Z_PK IN (SELECT Z_PK FROM temp.\(table.keys) WHERE Z_STEP = ?1 AND Z_OPT IS NOT NULL"
                      + " EXCEPT SELECT Z_PK FROM temp.\(table.rows) WHERE Z_STEP = ?1) RETURNING Z_PK, Z_ENT", arguments, { outcome.removed.append(id($0, in: table)) })
        }
        // 2. Rows that are still there get their old values (first, so a unique value they held is free again).
        for table in entityTables where !table.restoredColumns.isEmpty {
            let columns = table.restoredColumns.joined(separator: ", ")
            try query("UPDATE \(table.name) SET (\(columns)) = (SELECT \(columns) FROM temp.\(table.rows) r WHERE r.Z_STEP = ?1 AND r.Z_PK = \(table.name).Z_PK),"
                      + " Z_OPT = Z_OPT + 1 WHERE Z_PK IN (SELECT Z_PK FROM temp.\(table.rows) WHERE Z_STEP = ?1) RETURNING Z_PK, Z_ENT",
                      arguments, { outcome.rewritten.append(id($0, in: table)) })
        }
        // 3. Rows the step deleted come back, keys and versions as they were.
        for table in entityTables {
            let columns = table.columns.joined(separator: ", ")
            try query("INSERT INTO \(table.name) (\(columns)) SELECT \(columns) FROM temp.\(table.rows) WHERE Z_STEP = ?1"
                      + " AND Z_PK NOT IN (SELECT Z_PK FROM \(table.name)) ORDER BY Z_PK RETURNING Z_PK, Z_ENT", arguments, { outcome.restored.append(id($0, in: table)) })
        }
        for table in joinTables {
            let match = table.keyColumns.map { "j.\($0) = r.\($0)" }.joined(separator: " AND ")
            if !table.restoredColumns.isEmpty {
                let columns = table.restoredColumns.joined(separator: ", ")
                let keys = table.keyColumns.joined(separator: ", ")
                let inner = table.keyColumns.map { "r.\($0) = \(table.name).\($0)" }.joined(separator: " AND ")
                try query("UPDATE \(table.name) SET (\(columns)) = (SELECT \(columns) FROM temp.\(table.rows) r WHERE r.Z_STEP = ?1 AND \(inner))"
                          + " WHERE (\(keys)) IN (SELECT \(keys) FROM temp.\(table.rows) WHERE Z_STEP = ?1)", arguments) { _ in }
            }
            let columns = table.columns.joined(separator: ", ")
            try query("INSERT INTO \(table.name) (\(columns)) SELECT \(table.columns.map { "r.\($0)" }.joined(separator: ", "))"
                      + " FROM temp.\(table.rows) r WHERE r.Z_STEP = ?1 AND NOT EXISTS (SELECT 1 FROM \(table.name) j WHERE \(match))", arguments) { _ in }
        }
        // 4. Copied attributes of rows that came back before the rows they copy from.
        let names = Set(entityTables.map(\.name))
        for refresh in copyRefreshes {
            if names.contains(refresh.sourceTable) {
                try query(refresh.updatePrefix + "Z_PK IN (SELECT Z_PK FROM temp.GS_UNDO_ROWS_\(refresh.sourceTable) WHERE Z_STEP = ?)", arguments) { _ in }
            }
            if names.contains(refresh.destinationTable) {
                try query(refresh.updatePrefix + "\(refresh.foreignKey) IN (SELECT Z_PK FROM temp.GS_UNDO_ROWS_\(refresh.destinationTable) WHERE Z_STEP = ?)",
                          arguments) { _ in }
            }
        }
        // 5. Other steps that expected a row as it was before this one now expect it as written back — of the
        // older ones, only the one right before this one in the row's history: a save that only rewrites a row's
        // order column leaves its version alone, so steps before it may expect the same version, and they expect
        // the row as the step after them leaves it when that one is undone in turn.
        for table in entityTables {
            try query("UPDATE temp.\(table.keys) SET Z_OPT = (SELECT t.Z_OPT FROM \(table.name) t WHERE t.Z_PK = \(table.keys).Z_PK)"
                      + " WHERE Z_STEP <> ?1 AND Z_STEP <> ?2 AND (Z_PK, Z_OPT) IN (SELECT Z_PK, Z_OPT FROM temp.\(table.rows) WHERE Z_STEP = ?1)"
                      + " AND (Z_STEP > ?1 OR NOT EXISTS (SELECT 1 FROM temp.\(table.keys) k"
                      + " WHERE k.Z_STEP > \(table.keys).Z_STEP AND k.Z_STEP < ?1 AND k.Z_PK = \(table.keys).Z_PK))",
                      [.integer(step), .integer(current)]) { _ in }
        }
        return outcome
    }
}
