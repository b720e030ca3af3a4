import Foundation
import GRDB

/// A `Group` of `GraphCases`' model as a GRDB app would declare it: a Codable record per table, its columns named
/// by its coding keys, and its association to the items. The table is the one Faultline lays out for the model
/// (`ZGROUP`, Core Data's names), so the coding keys spell those columns; `GRDBItemRecords.verify` checks them
/// against the model's layout before any case uses them.
struct GroupRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZGROUP"

    var id: Int64
    /// Core Data's entity number column: GRDB does not need it, but the table has it and other writers fill it.
    var entity: Int64
    /// Core Data's optimistic-locking version, 1 for a new row.
    var version: Int64
    var title: String?

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK"
        case entity = "Z_ENT"
        case version = "Z_OPT"
        case title = "ZTITLE"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let title = Column(CodingKeys.title)
    }

    static let items = hasMany(ItemRecord.self, using: ItemRecord.groupForeignKey)

    var items: QueryInterfaceRequest<ItemRecord> { request(for: Self.items) }
}

/// An `Item` of `GraphCases`' model as a GRDB record: every attribute, and its group's key with a `belongsTo`
/// association. Dates are stored as Faultline (and Core Data) store them, seconds since 2001 as a REAL, which GRDB
/// reads and writes with its `timeIntervalSinceReferenceDate` strategies.
struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZITEM"

    var id: Int64
    var entity: Int64
    var version: Int64
    var name: String?
    var score: Int64?
    var createdAt: Date?
    var payload: Data?
    var flag: Bool?
    var groupID: Int64?

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK"
        case entity = "Z_ENT"
        case version = "Z_OPT"
        case name = "ZNAME"
        case score = "ZSCORE"
        case createdAt = "ZCREATEDAT"
        case payload = "ZPAYLOAD"
        case flag = "ZFLAG"
        case groupID = "ZGROUP"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let name = Column(CodingKeys.name)
        static let score = Column(CodingKeys.score)
        static let createdAt = Column(CodingKeys.createdAt)
        static let payload = Column(CodingKeys.payload)
        static let flag = Column(CodingKeys.flag)
        static let groupID = Column(CodingKeys.groupID)
    }

    /// The store declares no foreign keys (Core Data's layout has none), so the association names its column.
    static let groupForeignKey = ForeignKey([Columns.groupID])
    static let group = belongsTo(GroupRecord.self, using: groupForeignKey)

    var group: QueryInterfaceRequest<GroupRecord> { request(for: Self.group) }

    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSinceReferenceDate }
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSinceReferenceDate }

    /// Row `row` of `rows`, with the same key, entity number and values the other variants write.
    init(row: Int, of rows: ItemRows, entity: Int) {
        id = Int64(row + 1)
        self.entity = Int64(entity)
        version = 1
        name = rows.names[row]
        score = rows.scores[row]
        createdAt = rows.dates[row]
        payload = rows.payloads[row]
        flag = rows.flags[row]
        groupID = Int64(rows.groups[row] + 1)
    }
}

/// The check that the records' names are the model's.
enum GRDBItemRecords {
    /// Throws unless every table and column the records name is the one Faultline's layout gives the model.
    static func verify(_ columns: ItemColumns) throws(BenchmarkError) {
        let expected: [(what: String, record: String, model: String)] = [
            ("Item table", ItemRecord.databaseTableName, columns.table),
            ("Item.name", ItemRecord.CodingKeys.name.rawValue, columns.name),
            ("Item.score", ItemRecord.CodingKeys.score.rawValue, columns.score),
            ("Item.createdAt", ItemRecord.CodingKeys.createdAt.rawValue, columns.createdAt),
            ("Item.payload", ItemRecord.CodingKeys.payload.rawValue, columns.payload),
            ("Item.flag", ItemRecord.CodingKeys.flag.rawValue, columns.flag),
            ("Item.group", ItemRecord.CodingKeys.groupID.rawValue, columns.group),
            ("Group table", GroupRecord.databaseTableName, columns.groupTable),
            ("Group.title", GroupRecord.CodingKeys.title.rawValue, columns.groupTitle),
        ]
        let wrong = expected.filter { $0.record != $0.model }
        guard wrong.isEmpty else {
            throw BenchmarkError("the GRDB records name columns the model lays out otherwise: "
                + wrong.map { "\($0.what) is \($0.model), the record says \($0.record)" }.joined(separator: "; "))
        }
    }

    /// The sum of the scores of the items with `keys`, each read with `ItemRecord.fetchOne(db, key:)`, as an app
    /// with no row cache reads a record it has the key of. A key with no row is an error.
    static func sumScores(of keys: [Int64], in db: Database) throws -> Int64 {
        var sum: Int64 = 0
        for key in keys {
            guard let item = try ItemRecord.fetchOne(db, key: key) else { throw BenchmarkError("GRDB found no item \(key)") }
            if let score = item.score { sum &+= score }
        }
        return sum
    }
}
