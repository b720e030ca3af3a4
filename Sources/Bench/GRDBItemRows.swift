import Foundation
import GRDB

/// An `Item` row of `GraphCases`' model as a GRDB app decodes one on a hot path: a plain `FetchableRecord` whose
/// `init(row:)` reads the columns by index, in the order of `ItemColumns.selectList`, from SQL the app wrote. No
/// `Codable` decoding and no lookup of columns by name, so a row costs what its values cost. It reads the 8 columns
/// a Faultline fault and the raw peer read; the date is the REAL Faultline stores (seconds since 2001), turned into a
/// `Date` as a fault turns it.
struct ItemRow: FetchableRecord {
    var id: Int64
    var version: Int64?
    var name: String?
    var score: Int64?
    var createdAt: Date?
    var payload: Data?
    var flag: Bool?
    var groupID: Int64?

    init(row: Row) {
        id = row[0]
        version = row[1]
        name = row[2]
        score = row[3]
        createdAt = (row[4] as Double?).map { Date(timeIntervalSinceReferenceDate: $0) }
        payload = row[5]
        flag = row[6]
        groupID = row[7]
    }
}

/// The `grdb` peers' SQL for the item table: the statements the raw peer prepares, run through GRDB's cached
/// statements, so the two differ only in what GRDB adds around SQLite.
enum GRDBItemRows {
    /// The SELECT by primary key that the raw peer steps (a Faultline fault's, less its constant entity term).
    static func selectByKey(_ columns: ItemColumns) -> String {
        "SELECT \(columns.selectList) FROM \(columns.table) WHERE Z_PK = ?"
    }

    /// The INSERT of one item with every column the raw peer and a Faultline save write.
    static func insert(_ columns: ItemColumns) -> String {
        "INSERT INTO \(columns.table) (Z_PK, Z_ENT, Z_OPT, \(columns.name), \(columns.score), \(columns.createdAt), "
            + "\(columns.payload), \(columns.flag), \(columns.group)) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)"
    }

    /// The sum of the scores of the items with `keys`, each read as an `ItemRow` by `select` (`selectByKey`) taken
    /// once from the connection's statement cache. A key with no row is an error.
    static func sumScores(of keys: [Int64], select sql: String, in db: Database) throws -> Int64 {
        let select = try db.cachedStatement(sql: sql)
        var sum: Int64 = 0
        for key in keys {
            // The one argument is known to fit the statement: set unchecked, as `insertAll` sets its arguments.
            select.setUncheckedArguments([key])
            guard let item = try ItemRow.fetchOne(select) else { throw BenchmarkError("GRDB found no item \(key)") }
            if let score = item.score { sum &+= score }
        }
        return sum
    }

    /// Inserts every row of `rows` with `insert` (`insert(_:)`) taken once from the connection's statement cache,
    /// with the keys, entity number and values the raw peer binds: the caller's transaction holds them all. The
    /// arguments are set unchecked (the statement's eight placeholders are known), then the statement executed:
    /// measured, that is faster than `execute(arguments:)`, which validates the arguments on every row.
    static func insertAll(_ rows: ItemRows, entity: Int, insert sql: String, in db: Database) throws {
        let insert = try db.cachedStatement(sql: sql)
        let entity = Int64(entity)
        for index in 0..<rows.count {
            insert.setUncheckedArguments([Int64(index + 1), entity, rows.names[index], rows.scores[index],
                                          rows.dates[index].timeIntervalSinceReferenceDate, rows.payloads[index],
                                          rows.flags[index], Int64(rows.groups[index] + 1)])
            try insert.execute()
        }
    }
}
