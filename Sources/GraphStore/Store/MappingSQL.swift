import Foundation

/// The statements the object layer runs, built from entity mappings: the only place outside `Fetching/` (which
/// compiles fetch requests) and the save's set-based deletion planner where object-layer SQL is written. Each
/// builder says which `RowView` columns its rows carry.
enum MappingSQL {
    // MARK: rows

    /// Full rows of `plan`'s table by primary key: `SELECT <plan> FROM <table> t0 WHERE t0.Z_PK IN (…)`.
    static func rows(_ plan: RowReadPlan, of table: String, keys: KeyList) -> SQLStatement {
        SQLStatement("SELECT \(plan.selectList) FROM \(table) t0 WHERE t0.Z_PK IN \(keys.sql)", keys.arguments)
    }

    /// Full rows of one entity's table whose columns equal the given values (`IS NULL` for a null), in `Z_PK` order;
    /// `entities`, when the table holds several, limits the rows to those entity numbers.
    static func rows(_ plan: RowReadPlan, of table: String, entities: [Int]?, matching columns: [(column: String, value: AttributeValue)]) -> SQLStatement {
        var clauses: [String] = []
        var arguments: [AttributeValue] = []
        if let entities {
            clauses.append(entities.count == 1 ? "t0.Z_ENT = ?" : "t0.Z_ENT IN (\(FetchPlan.placeholders(entities.count)))")
            arguments += entities.map { .integer(Int64($0)) }
        }
        for (column, value) in columns {
            clauses.append(value.isNull ? "t0.\(column) IS NULL" : "t0.\(column) = ?")
            if !value.isNull { arguments.append(value) }
        }
        let whereClause = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return SQLStatement("SELECT \(plan.selectList) FROM \(table) t0\(whereClause) ORDER BY t0.Z_PK", arguments)
    }

    /// The versions of rows by key: `SELECT Z_PK, Z_OPT FROM <table> WHERE Z_PK IN (json_each)`. Columns: key, version.
    static func versions(of table: String, keys: [Int64]) -> SQLStatement {
        SQLStatement("SELECT Z_PK, Z_OPT FROM \(table) WHERE Z_PK \(inKeys)", [json(keys)])
    }

    // MARK: to-manys

    /// The members of one owner's to-many, IDs only (`SELECT Z_ENT-or-0, t0.Z_PK …`), in the relationship's order
    /// when it has one; nil for storage that keeps no members. Columns: entity number (or 0), key.
    static func memberIDs(of toMany: EntityMapping.ToMany, owner: Int64) -> SQLStatement? {
        let entityTerm = toMany.destinationHasSubentities ? "t0.Z_ENT" : "0"
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            return SQLStatement("SELECT \(entityTerm), t0.Z_PK FROM \(table) t0 WHERE t0.\(column) = ?"
                + (orderColumn.map { " ORDER BY t0.\($0)" } ?? ""), [.integer(owner)])
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn, _):
            return SQLStatement("SELECT \(entityTerm), t0.Z_PK FROM \(table) t1 JOIN \(toMany.destinationTable) t0 ON t0.Z_PK = "
                + "t1.\(destinationColumn) WHERE t1.\(sourceColumn) = ?" + (orderColumn.map { " ORDER BY t1.\($0)" } ?? ""), [.integer(owner)])
        case .foreignKey, .transient:
            return nil
        }
    }

    /// A correlated count of the members of `toMany` for the owner row `t0` (`FetchRequest.countsToFetch`), read as
    /// `memberIDs` reads them (through the destination's table for a join table: rows that exist); nil for storage
    /// that keeps no members.
    static func memberCount(of toMany: EntityMapping.ToMany, alias: String) -> String? {
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, _):
            return "(SELECT COUNT(*) FROM \(table) \(alias) WHERE \(alias).\(column) = t0.Z_PK)"
        case .joinTable(let table, let sourceColumn, let destinationColumn, _, _):
            return "(SELECT COUNT(*) FROM \(table) \(alias) JOIN \(toMany.destinationTable) \(alias)d ON \(alias)d.Z_PK = "
                + "\(alias).\(destinationColumn) WHERE \(alias).\(sourceColumn) = t0.Z_PK)"
        case .foreignKey, .transient:
            return nil
        }
    }

    /// The full rows of the members of many owners' to-many, each after its owner's key, grouped by owner and in
    /// the relationship's order; nil for storage that keeps no members. Columns: owner key, then `plan`'s.
    static func members(of toMany: EntityMapping.ToMany, _ plan: RowReadPlan, owners: KeyList) -> SQLStatement? {
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            return SQLStatement("SELECT t0.\(column), \(plan.selectList) FROM \(table) t0 WHERE t0.\(column) IN \(owners.sql) ORDER BY t0.\(column)"
                + (orderColumn.map { ", t0.\($0)" } ?? ""), owners.arguments)
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn, _):
            return SQLStatement("SELECT t1.\(sourceColumn), \(plan.selectList) FROM \(table) t1 JOIN \(toMany.destinationTable) t0 ON t0.Z_PK = "
                + "t1.\(destinationColumn) WHERE t1.\(sourceColumn) IN \(owners.sql) ORDER BY t1.\(sourceColumn)"
                + (orderColumn.map { ", t1.\($0)" } ?? ""), owners.arguments)
        case .foreignKey, .transient:
            return nil
        }
    }

    // MARK: writes

    /// `UPDATE <table> SET Z_OPT = Z_OPT + 1, <column> = ?… WHERE Z_PK = ? AND Z_OPT = ?`: writes the columns only
    /// over the version read, so a row changed since by someone else changes nothing (optimistic locking).
    static func versionedUpdate(of table: String, key: Int64, version: Int64, setting columns: [(column: String, value: AttributeValue)]) -> SQLStatement {
        let assignments = columns.map { "\($0.column) = ?" }.joined(separator: ", ")
        return SQLStatement("UPDATE \(table) SET Z_OPT = Z_OPT + 1, \(assignments) WHERE Z_PK = ? AND Z_OPT = ?",
                            columns.map(\.value) + [.integer(key), .integer(version)])
    }

    /// A many-to-many link written (`INSERT OR IGNORE`) or removed, keys in the join table's key order.
    static func link(_ table: JoinTable, _ first: Int64, _ second: Int64, present: Bool) -> SQLStatement {
        let (a, b) = (table.primaryKey[0], table.primaryKey[1])
        return present
            ? SQLStatement("INSERT OR IGNORE INTO \(table.name) (\(a), \(b)) VALUES (?, ?)", [.integer(first), .integer(second)])
            : SQLStatement("DELETE FROM \(table.name) WHERE \(a) = ? AND \(b) = ?", [.integer(first), .integer(second)])
    }

    /// A member's position in an ordered to-many: `position` (from 1), or after the owner's last member when nil;
    /// nil for an unordered one.
    static func order(of toMany: EntityMapping.ToMany, owner: Int64, member: Int64, position: Int?) -> SQLStatement? {
        let owner = AttributeValue.integer(owner)
        let member = AttributeValue.integer(member)
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, let orderColumn?):
            guard let position else {
                return SQLStatement("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) "
                    + "WHERE \(column) = ?) WHERE Z_PK = ?", [owner, member])
            }
            return SQLStatement("UPDATE \(table) SET \(orderColumn) = ? WHERE Z_PK = ?", [.integer(Int64(position)), member])
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn?, _):
            guard let position else {
                return SQLStatement("UPDATE \(table) SET \(orderColumn) = (SELECT IFNULL(MAX(\(orderColumn)), 0) + 1 FROM \(table) "
                    + "WHERE \(sourceColumn) = ?) WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?", [owner, owner, member])
            }
            return SQLStatement("UPDATE \(table) SET \(orderColumn) = ? WHERE \(sourceColumn) = ? AND \(destinationColumn) = ?",
                                [.integer(Int64(position)), owner, member])
        default:
            return nil
        }
    }

    // MARK: keys

    /// Moves a root entity's `Z_MAX` on by `count` and returns the new maximum, only when it is an integer key with
    /// room for `count` more: SQLite would turn text into 0 (handing out keys in use) and an overflowing sum into a
    /// REAL. No row comes back otherwise. Column: the new `Z_MAX`.
    static func allocateKeys(root: Int, count: Int64) -> SQLStatement {
        SQLStatement("""
            UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ?1 WHERE Z_ENT = ?2 AND typeof(Z_MAX) = 'integer' \
            AND Z_MAX >= 0 AND Z_MAX <= 9223372036854775807 - ?1 RETURNING Z_MAX
            """, [.integer(count), .integer(Int64(root))])
    }

    /// What `Z_MAX` holds for a root entity, quoted as SQL writes it. Column: the text.
    static func recordedMaximumKey(root: Int) -> SQLStatement {
        SQLStatement("SELECT quote(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(root))])
    }

    // MARK: constraints

    /// Rows of `mapping`'s table whose `columns` equal one of the value groups, each group numbered first:
    /// `SELECT v.column1, <entity>, t0.Z_PK FROM (VALUES (?, ?…), …) v JOIN <table> t0 ON …`, by group then key.
    /// `entities`, when the table holds several, limits the rows to those entity numbers. Columns: group number,
    /// entity number (or 0), key.
    static func rowsMatchingGroups(_ mapping: EntityMapping, columns: [String], entities: [Int]?, groups: [(Int, [AttributeValue])]) -> SQLStatement {
        let entityTerm = mapping.tableHasSubentities ? "t0.Z_ENT" : "0"
        let join = columns.enumerated().map { "t0.\($1) = v.column\($0 + 2)" }
            + (entities.map { ["t0.Z_ENT IN (\($0.map(String.init).joined(separator: ", ")))"] } ?? [])
        let row = "(" + FetchPlan.placeholders(columns.count + 1) + ")"
        var arguments: [AttributeValue] = []
        arguments.reserveCapacity(groups.count * (columns.count + 1))
        for (group, values) in groups {
            arguments.append(.integer(Int64(group)))
            arguments += values
        }
        return SQLStatement("SELECT v.column1, \(entityTerm), t0.Z_PK FROM (VALUES \(Array(repeating: row, count: groups.count).joined(separator: ", "))) v"
            + " JOIN \(mapping.table) t0 ON \(join.joined(separator: " AND ")) ORDER BY v.column1, t0.Z_PK", arguments)
    }

    // MARK: key lists

    /// `IN (SELECT value FROM json_each(?))`: a key list of any length as one bound JSON array.
    static let inKeys = "IN (SELECT value FROM json_each(?))"

    /// Keys as the JSON array `inKeys` binds.
    static func json(_ keys: [Int64]) -> AttributeValue {
        .string("[" + keys.map(String.init).joined(separator: ",") + "]")
    }
}
