import GRDB

/// The tables, columns and indexes an SQLite file actually has, read from `sqlite_master`.
public struct StoreCatalog: Equatable, Sendable {
    /// Table name → column names, in declaration order.
    public var columns: [String: [String]]
    /// Index name → table name (SQLite's automatic indexes left out).
    public var indexes: [String: String]
    public var triggers: Set<String>

    public init(columns: [String: [String]], indexes: [String: String], triggers: Set<String>) {
        self.columns = columns
        self.indexes = indexes
        self.triggers = triggers
    }

    /// Reads the catalog of an open database.
    public static func read(_ db: Database) throws -> StoreCatalog {
        var columns: [String: [String]] = [:]
        var indexes: [String: String] = [:]
        var triggers: Set<String> = []
        let rows = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        for row in rows {
            guard let type = row.lenient("type", as: String.self), let name = row.lenient("name", as: String.self) else { continue }
            switch type {
            case "table": columns[name] = try db.columns(in: name).map(\.name)
            case "index": indexes[name] = row.lenient("tbl_name", as: String.self)
            case "trigger": triggers.insert(name)
            default: break
            }
        }
        return StoreCatalog(columns: columns, indexes: indexes, triggers: triggers)
    }

    /// The catalog a new store for `schema` has.
    public init(schema: StoreSchema) {
        var columns: [String: [String]] = [:]
        var indexes: [String: String] = [:]
        for table in schema.tables {
            columns[table.name] = table.columns.map(\.name)
            for index in table.indexes { indexes[index.name] = table.name }
        }
        for table in schema.joinTables {
            columns[table.name] = table.columns.map(\.name)
            for index in table.indexes { indexes[index.name] = table.name }
        }
        columns["Z_PRIMARYKEY"] = ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"]
        columns["Z_METADATA"] = ["Z_VERSION", "Z_UUID", "Z_PLIST"]
        columns["Z_MODELCACHE"] = ["Z_CONTENT"]
        self.init(columns: columns, indexes: indexes, triggers: Set(schema.triggers.map(\.name)))
    }

    /// What `self` (expected) has that `actual` lacks or differs in, one phrase each; empty when the names agree.
    /// Columns are compared as sets: Core Data's column order is not fixed.
    /// - Parameter ignoringCoreDataBookkeeping: leave out the tables Core Data adds to stores of its own beside the
    ///   model's, and their indexes: its persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`) and
    ///   CloudKit mirroring (`ANSCK…`). Their names start with `A`; the model's tables start with `Z`.
    /// - Parameter ignoringExtras: leave out tables and indexes the model does not lay out at all (an app's own
    ///   table beside Core Data's, an index added by hand): they change nothing the model's rows are read or written
    ///   by. Columns are still compared in full.
    public func differences(from actual: StoreCatalog, ignoringCoreDataBookkeeping: Bool = false, ignoringExtras: Bool = false) -> [String] {
        var actual = actual
        if ignoringCoreDataBookkeeping {
            let bookkeeping = Set(actual.columns.keys.filter { Self.isCoreDataBookkeeping($0) && columns[$0] == nil })
            actual.columns = actual.columns.filter { !bookkeeping.contains($0.key) }
            actual.indexes = actual.indexes.filter { !bookkeeping.contains($0.value) }
        }
        var found: [String] = []
        for table in Set(columns.keys).union(actual.columns.keys).sorted() {
            switch (columns[table], actual.columns[table]) {
            case (nil, _?): if !ignoringExtras { found.append("unexpected table \(table)") }
            case (_?, nil): found.append("missing table \(table)")
            case (let expected?, let present?):
                let missing = Set(expected).subtracting(present).sorted()
                let extra = Set(present).subtracting(expected).sorted()
                if !missing.isEmpty { found.append("table \(table) lacks \(missing.joined(separator: ", "))") }
                if !extra.isEmpty { found.append("table \(table) has unexpected \(extra.joined(separator: ", "))") }
            default: break
            }
        }
        for index in Set(indexes.keys).union(actual.indexes.keys).sorted() where indexes[index] != actual.indexes[index] {
            if indexes[index] == nil, ignoringExtras { continue }
            found.append(indexes[index] == nil ? "unexpected index \(index)" : "missing index \(index)")
        }
        return found
    }

    /// `Z_PRIMARYKEY`'s rows below Core Data's own entities (its persistent history's are numbered from 16001):
    /// entity number → (name, parent number, 0 for none). Rows whose columns are not integers and text are left out.
    public static func readEntityNumbers(_ db: Database) throws -> [Int: (name: String, parent: Int)] {
        var numbers: [Int: (name: String, parent: Int)] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000") {
            guard let number = row.lenient("Z_ENT", as: Int.self), let name = row.lenient("Z_NAME", as: String.self) else { continue }
            numbers[number] = (name, row.lenient("Z_SUPER", as: Int.self) ?? 0)
        }
        return numbers
    }

    /// Where the entity numbers a store records differ from the model's: rows are found by `Z_ENT`, so a store
    /// numbered otherwise would show its rows as other entities. A name may differ where the numbers and parents
    /// agree: an entity renamed in a later model version keeps its old name in `Z_PRIMARYKEY`.
    public static func entityNumberDifferences(model: ObjectModel, recorded: [Int: (name: String, parent: Int)]) -> [String] {
        var found: [String] = []
        for entity in model.entities {
            let parent = entity.parentName.flatMap(model.entity(named:))?.number ?? 0
            guard let row = recorded[entity.number] else {
                found.append("entity \(entity.number) (\(entity.name)) is in the model but not in Z_PRIMARYKEY")
                continue
            }
            if row.parent != parent {
                found.append("entity \(entity.number) (\(entity.name)) has parent \(parent) in the model but \(row.parent) in Z_PRIMARYKEY (\(row.name))")
            }
        }
        for (number, row) in recorded.sorted(by: { $0.key < $1.key }) where model.entity(number: number) == nil {
            found.append("entity \(number) (\(row.name)) is in Z_PRIMARYKEY but not in the model")
        }
        return found
    }

    /// Whether a table is one Core Data keeps for itself beside a model's (see `differences`).
    static func isCoreDataBookkeeping(_ table: String) -> Bool {
        table.first == "A"
    }
}
