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

    /// The sum of the scores of the items with `keys`, each read as an `ItemRow` by `select` (`selectByKey`) taken
    /// once from the connection's statement cache. A key with no row is an error.
    static func sumScores(of keys: [Int64], select sql: String, in db: Database) throws -> Int64 {
        let select = try db.cachedStatement(sql: sql)
        var sum: Int64 = 0
        for key in keys {
            guard let item = try ItemRow.fetchOne(select, arguments: [key]) else { throw BenchmarkError("GRDB found no item \(key)") }
            if let score = item.score { sum &+= score }
        }
        return sum
    }
}
