import Foundation
import GRDB

/// The checks themselves, run on one read transaction. Every row-level rule is one statement per relationship or
/// attribute whose result rows are exactly the violations, so a clean store returns no rows at all.
final class IntegrityChecker {
    typealias Kind = IntegrityReport.Kind
    typealias Violation = IntegrityReport.Violation

    let path: String
    let record: StoreRecord
    let model: ObjectModel
    let schema: StoreSchema
    private var collector: ViolationCollector

    init(path: String, record: StoreRecord, limit: Int?) {
        self.path = path
        self.record = record
        self.model = record.model
        self.schema = StoreSchema(model: record.model)
        self.collector = ViolationCollector(limit: limit)
    }

    func run(_ db: Database) throws -> IntegrityReport {
        try guarded(.integrity, step: "SQLite's integrity_check") { try checkFile(db) }
        let catalog = try StoreCatalog.read(db)
        let tablesAreWhole = try checkLayout(db, catalog)
        // A store Core Data wrote records Apple's version hashes, which are not computed here.
        if record.format == .graphStore { checkModelIdentity() }
        if tablesAreWhole {
            try guarded(.entityNumber) { try checkEntityNumbers(db) }
            try guarded(.primaryKey) { try checkPrimaryKeys(db) }
            try guarded(.foreignKey) { try checkForeignKeys(db) }
            try guarded(.joinTable) { try checkJoinTables(db) }
            try guarded(.inverse) { try checkInverses(db) }
            try guarded(.derived) { try checkDerivedAttributes(db) }
            try guarded(.valueType) { try checkValueTypes(db) }
        }
        var entities: [IntegrityReport.RowCount] = []
        var joinTables: [IntegrityReport.RowCount] = []
        try guarded(.integrity, step: "counting the rows") { (entities, joinTables) = try countRows(db, catalog: catalog) }

        // Every kind is in `order`: it is made from all of them.
        let order = Dictionary(uniqueKeysWithValues: Kind.allCases.enumerated().map { ($1, $0) })
        let violations = collector.listed.enumerated()
            .sorted { (order[$0.element.kind] ?? .max, $0.offset) < (order[$1.element.kind] ?? .max, $1.offset) }
            .map(\.element)
        return IntegrityReport(
            path: path, storeUUID: record.storeUUID, model: model, entities: entities, joinTables: joinTables,
            violations: violations, violationCounts: collector.counts)
    }

    /// A damaged file can fail any statement; that becomes a violation of the check that hit it, naming the step
    /// (`step`, or the check itself). Other errors (busy, I/O) are not findings about the store and end the check.
    private func guarded(_ kind: Kind, step: String = "this check", _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            collector.add(Violation(kind: kind, entity: nil, object: nil, key: nil,
                                    message: "\(step) could not finish: \(error.message ?? "SQLite error \(error.resultCode.rawValue)")"))
        }
    }

    // MARK: naming

    private func uri(_ entity: String, _ key: Int64) -> String {
        "x-coredata://\(record.storeUUID)/\(entity)/p\(key)"
    }

    /// The name of entity `number` when it is one, else `fallback`.
    private func entityName(_ number: Int64?, or fallback: String) -> String {
        number.flatMap { model.entity(number: Int($0)) }?.name ?? fallback
    }

    /// `Bot p3`, or `Z_PK 3 (Z_ENT 9)` when the row's entity number names no entity.
    private func rowName(entity number: Int64?, key: Int64) -> String {
        if let entity = number.flatMap({ model.entity(number: Int($0)) }) { return "\(entity.name) p\(key)" }
        return "Z_PK \(key) (Z_ENT \(number.map(String.init) ?? "NULL"))"
    }

    /// `User`, or `Bot or User`: the concrete entities among `numbers`, for "may only point at …".
    private func entitiesPhrase(_ numbers: [Int]) -> String {
        let entities = numbers.compactMap { model.entity(number: $0) }
        let concrete = entities.filter { !$0.isAbstract }
        return (concrete.isEmpty ? entities : concrete).map(\.name).joined(separator: " or ")
    }

    /// The entity and every entity below it: the `Z_ENT` numbers a relationship to it may point at.
    private func members(of entity: Entity) -> [Int] {
        [entity.number] + entity.descendantNames.compactMap { model.entity(named: $0)?.number }
    }

    private func list(_ numbers: [Int]) -> String {
        "(\(numbers.map(String.init).joined(separator: ", ")))"
    }

    /// `<alias>.Z_ENT IN (…) AND ` limiting a query to the given entities' rows, or nothing when the table holds no others.
    private func rowFilter(_ alias: String, _ numbers: [Int], in table: EntityTable) -> String {
        Set(numbers) == Set(table.entityNumbers) ? "" : "\(alias).Z_ENT IN \(list(numbers)) AND "
    }

    private func table(of entity: Entity) -> EntityTable { schema.table(for: entity.name)! }  // cannot fail: every entity has a table

    private static func valueText(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return (text.count > 40 ? String(text.prefix(40)) + "…" : text).debugDescription
        case .blob(let data): return "<\(data.count) byte\(data.count == 1 ? "" : "s")>"
        }
    }

    // MARK: 1. the SQLite file

    private func checkFile(_ db: Database) throws {
        let lines = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        guard lines != ["ok"] else { return }
        for line in lines {
            collector.add(Violation(kind: .integrity, entity: nil, object: nil, key: nil, message: line))
        }
    }

    // MARK: the layout

    /// Reports tables, columns, primary keys, indexes and triggers the model calls for and the file lacks. Returns
    /// whether every table has every column, which the row checks need; extra tables, columns and indexes are left alone.
    private func checkLayout(_ db: Database, _ actual: StoreCatalog) throws -> Bool {
        let expected = StoreCatalog(schema: schema)
        var rootByTable: [String: String] = [:]
        for table in schema.tables { rootByTable[table.name] = table.rootEntity }
        var whole = true
        for (table, columns) in expected.columns.sorted(by: { $0.key < $1.key }) {
            guard let present = actual.columns[table] else {
                whole = false
                collector.add(Violation(kind: .schema, entity: rootByTable[table], object: nil, key: table, message: "table \(table) is missing"))
                continue
            }
            let missing = Set(columns).subtracting(present).sorted()
            if !missing.isEmpty {
                whole = false
                collector.add(Violation(kind: .schema, entity: rootByTable[table], object: nil, key: table,
                                        message: "table \(table) lacks \(missing.count == 1 ? "column" : "columns") \(missing.joined(separator: ", "))"))
            }
        }
        // Without its primary key an entity table could hold two rows with one Z_PK, and a join table one link twice.
        let primaryKeys = schema.tables.map { ($0.name, ["Z_PK"]) } + schema.joinTables.map { ($0.name, $0.primaryKey) }
        for (table, columns) in primaryKeys where actual.columns[table] != nil {
            let present = try db.primaryKey(table).columns
            if present != columns {
                collector.add(Violation(kind: .schema, entity: rootByTable[table], object: nil, key: table,
                                        message: "table \(table) has primary key (\(present.joined(separator: ", "))), not (\(columns.joined(separator: ", ")))"))
            }
        }
        for (index, table) in expected.indexes.sorted(by: { $0.key < $1.key }) where actual.indexes[index] != table {
            collector.add(Violation(kind: .schema, entity: rootByTable[table], object: nil, key: index, message: "index \(index) on \(table) is missing"))
        }
        // A trigger counts as present under the name an earlier GraphStore gave it. In a store Core Data wrote, only
        // the triggers it names as GraphStore does are looked for (its count triggers; it names copies its own way).
        let lookedFor = schema.triggers.filter { record.format == .graphStore || $0.isNamedAsCoreData }
        for trigger in lookedFor.sorted(by: { $0.name < $1.name }) where !trigger.isPresent(in: actual.triggers) {
            collector.add(Violation(kind: .schema, entity: nil, object: nil, key: trigger.name,
                                    message: "trigger \(trigger.name) is missing, so a derived attribute is no longer kept up to date"))
        }
        if !whole {
            collector.add(Violation(kind: .schema, entity: nil, object: nil, key: nil,
                                    message: "the row checks were skipped: the tables lack what the model calls for"))
        }
        return whole
    }

    // MARK: 7. model identity

    private func checkModelIdentity() {
        func violation(_ entity: String?, _ message: String) {
            collector.add(Violation(kind: .modelIdentity, entity: entity, object: nil, key: "Z_PLIST", message: message))
        }
        guard let plist = record.metadataPropertyList else {
            return violation(nil, "Z_METADATA.Z_PLIST is empty: the store records no model identity")
        }
        let (isPropertyList, recorded) = ModelIdentity.read(metadataPropertyList: plist)
        guard isPropertyList else { return violation(nil, "Z_METADATA.Z_PLIST is not a property list") }
        guard let recorded else {
            return violation(nil, "Z_METADATA.Z_PLIST has no Faultline model identity (FaultlineStoreFormat and NSStoreModelVersionHashes)")
        }
        let expected = ModelIdentity(model: model).entityHashes
        func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
        for name in Set(expected.keys).union(recorded.entityHashes.keys).sorted() {
            switch (recorded.entityHashes[name], expected[name]) {
            case (nil, _?):
                violation(name, "the recorded model identity lacks this entity, which the model in Z_MODELCACHE has")
            case (_?, nil):
                violation(name, "the recorded model identity has this entity, which the model in Z_MODELCACHE lacks")
            case (let stored?, let computed?) where stored != computed:
                violation(name, "the recorded version hash \(hex(stored)) differs from \(hex(computed)), the hash of the model in Z_MODELCACHE")
            default:
                break
            }
        }
    }

    // MARK: 8. entity numbers

    private func checkEntityNumbers(_ db: Database) throws {
        for table in schema.tables {
            let concrete = table.entityNumbers.filter { !(model.entity(number: $0)?.isAbstract ?? true) }
            // cannot fail: a table's entity numbers are the model's.
            let allowedText = table.entityNumbers.map { "\(model.entity(number: $0)!.name) (\($0))" }.joined(separator: ", ")
            try collector.addRows(db, .entityNumber, sql: """
                SELECT Z_PK AS pk, Z_ENT AS ent FROM \(table.name) WHERE Z_ENT IS NULL OR Z_ENT NOT IN \(list(concrete))
                """) { row in
                let number: Int64? = row.lenient("ent")
                let message: String
                if let number, let entity = model.entity(number: Int(truncatingIfNeeded: number)) {
                    message = entity.isAbstract && table.entityNumbers.contains(entity.number)
                        ? "Z_ENT is \(number), the abstract entity \(entity.name), which can have no objects of its own"
                        : "Z_ENT is \(number), entity \(entity.name), whose rows belong in \(self.table(of: entity).name), not \(table.name)"
                } else {
                    message = "Z_ENT is \(Self.valueText(row["ent"])), which is no entity of the model (\(table.name) holds \(allowedText))"
                }
                return Violation(kind: .entityNumber, entity: table.rootEntity, object: uri(table.rootEntity, row.lenient("pk") ?? 0),
                                 key: "Z_ENT", message: message)
            }
        }
    }

    // MARK: 6. key allocation

    private func checkPrimaryKeys(_ db: Database) throws {
        var maxima: [Int: DatabaseValue] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") {
            if let number = row.lenient(0, as: Int.self) { maxima[number] = row[1] as DatabaseValue }
        }
        for table in schema.tables {
            let root = model.entity(named: table.rootEntity)!  // cannot fail: a table's root entity is the model's
            // Keys start at 1; one below would pass for an unsaved object's temporary ID (readers take it as 0).
            try collector.addRows(db, .primaryKey, sql: "SELECT Z_PK AS pk, Z_ENT AS ent FROM \(table.name) WHERE Z_PK < 1") { row in
                Violation(kind: .primaryKey, entity: entityName(row.lenient("ent"), or: root.name), object: nil, key: "Z_PK",
                          message: "a row of \(table.name) has Z_PK \(Self.valueText(row["pk"])), but keys start at 1")
            }
            let top = try Row.fetchOne(db, sql: "SELECT Z_PK, Z_ENT FROM \(table.name) ORDER BY Z_PK DESC LIMIT 1")
            guard let stored = maxima[root.number] else {
                collector.add(Violation(kind: .primaryKey, entity: root.name, object: nil, key: "Z_MAX",
                                        message: "Z_PRIMARYKEY has no row for \(root.name) (Z_ENT \(root.number)), so no key can be handed out"))
                continue
            }
            let recorded = Int64.fromDatabaseValue(stored)
            if !stored.isNull, recorded == nil || recorded ?? 0 < 0 {
                collector.add(Violation(kind: .primaryKey, entity: root.name, object: nil, key: "Z_MAX",
                                        message: "Z_PRIMARYKEY.Z_MAX is \(Self.valueText(stored)), which is not a key (a whole number from 0)"))
                continue
            }
            if recorded == Int64.max {
                collector.add(Violation(kind: .primaryKey, entity: root.name, object: nil, key: "Z_MAX",
                                        message: "Z_PRIMARYKEY.Z_MAX is \(Int64.max), the largest key there is, so no new object can get one"))
                continue
            }
            guard let top, let largest = top.lenient(0, as: Int64.self) else { continue }
            if recorded.map({ $0 < largest }) ?? true {
                let entity = entityName(top.lenient(1), or: root.name)
                collector.add(Violation(
                    kind: .primaryKey, entity: root.name, object: uri(entity, largest), key: "Z_MAX",
                    message: "Z_PRIMARYKEY.Z_MAX is \(recorded.map { String($0) } ?? "NULL") but \(table.name) already holds Z_PK \(largest): new objects would get keys in use"))
            }
        }
    }

    // MARK: 2. to-one keys

    private func checkForeignKeys(_ db: Database) throws {
        for entity in model.entities {
            for relationship in entity.declaration.relationships where relationship.isToOne && relationship.isPersistent {
                guard case .foreignKey(let column, let entityColumn, _)? = schema.storage(forRelationship: relationship.name, of: entity.name),
                      let destination = model.entity(named: relationship.destination) else { continue }
                let source = table(of: entity)
                let target = table(of: destination)
                let allowed = members(of: destination)
                // When the destination table holds other entities too, the row found must be one the relationship allows.
                let checksEntity = Set(allowed) != Set(target.entityNumbers)
                var wrong = ["d.Z_PK IS NULL"]
                if checksEntity { wrong.append("d.Z_ENT IS NULL OR d.Z_ENT NOT IN \(list(allowed))") }
                if let entityColumn { wrong.append("s.\(entityColumn) IS NOT d.Z_ENT") }
                var condition = "(s.\(column) IS NOT NULL AND (\(wrong.joined(separator: " OR "))))"
                if let entityColumn { condition = "(\(condition) OR (s.\(column) IS NULL AND s.\(entityColumn) IS NOT NULL))" }
                let sql = """
                    SELECT s.Z_PK AS pk, s.Z_ENT AS ent, s.\(column) AS target, \(entityColumn.map { "s.\($0)" } ?? "NULL") AS targetEntity, \
                    d.Z_PK AS found, d.Z_ENT AS foundEntity \
                    FROM \(source.name) s LEFT JOIN \(target.name) d ON d.Z_PK = s.\(column) \
                    WHERE \(rowFilter("s", members(of: entity), in: source))\(condition)
                    """
                try collector.addRows(db, .foreignKey, sql: sql) { row in
                    let name = entityName(row.lenient("ent"), or: entity.name)
                    let key: Int64? = row.lenient("target")
                    let claimed: Int64? = row.lenient("targetEntity")
                    let foundEntity: Int64? = row.lenient("foundEntity")
                    let message: String
                    if let key {
                        if (row["found"] as DatabaseValue).isNull {
                            message = "points at Z_PK \(key), which is not a row of \(target.name)"
                        } else if checksEntity, !allowed.contains(where: { Int64($0) == foundEntity }) {
                            message = "points at \(rowName(entity: foundEntity, key: key)), but \(relationship.name) may only point at \(entitiesPhrase(allowed))"
                        } else {
                            message = "\(entityColumn ?? "Z_ENT") says the destination is entity \(claimed.map(String.init) ?? "NULL"), but \(rowName(entity: foundEntity, key: key)) has Z_ENT \(foundEntity.map(String.init) ?? "NULL")"
                        }
                    } else if !(row["target"] as DatabaseValue).isNull {
                        message = "\(column) is \(Self.valueText(row["target"])), which is not a key"
                    } else {
                        message = "\(entityColumn ?? "Z_ENT") is \(Self.valueText(row["targetEntity"])) but \(column) is NULL"
                    }
                    return Violation(kind: .foreignKey, entity: name, object: uri(name, row.lenient("pk") ?? 0), key: relationship.name, message: message)
                }
            }
        }
    }

    // MARK: 3. join tables

    /// One key column of a join table, with what it may point at and the column beside it.
    private struct JoinColumn {
        let table: String
        let column: String
        let otherColumn: String
        var allowed: Set<Int>
        /// The entity whose rows `column` points at (its table is searched).
        let destination: Entity
        /// The entity of the rows `otherColumn` holds, named when that row's own `Z_ENT` cannot be read.
        let owner: Entity
        /// The relationship whose links, seen from the `otherColumn` side, run through this column.
        let relationship: String
        /// False for the owner column of a relationship without an inverse: the row in `otherColumn` does not own
        /// the link, so a bad key here is reported against the relationship's entity rather than that row.
        var otherSideOwnsLink = true
    }

    private func joinColumns() -> [JoinColumn] {
        var columns: [JoinColumn] = []
        var indexByColumn: [String: Int] = [:]
        var ownerSides: [JoinColumn] = []
        func merge(_ column: JoinColumn) {
            let key = column.table + "." + column.column
            if let index = indexByColumn[key] {
                columns[index].allowed.formIntersection(column.allowed)
            } else {
                indexByColumn[key] = columns.count
                columns.append(column)
            }
        }
        for entity in model.entities {
            for relationship in entity.declaration.relationships where relationship.isToMany {
                guard case .joinTable(let table, let sourceColumn, let destinationColumn, _, _)? =
                        schema.storage(forRelationship: relationship.name, of: entity.name),
                      let destination = model.entity(named: relationship.destination) else { continue }
                merge(JoinColumn(table: table, column: destinationColumn, otherColumn: sourceColumn, allowed: Set(members(of: destination)),
                                 destination: destination, owner: entity, relationship: relationship.name))
                // The source column is some other relationship's destination column, except for a self-inverse
                // relationship or one without an inverse: then it is checked from here.
                ownerSides.append(JoinColumn(table: table, column: sourceColumn, otherColumn: destinationColumn, allowed: Set(members(of: entity)),
                                             destination: entity, owner: destination, relationship: relationship.name,
                                             otherSideOwnsLink: relationship.inverse != nil))
            }
        }
        ownerSides.forEach(merge)
        return columns
    }

    private func checkJoinTables(_ db: Database) throws {
        for join in joinColumns() {
            let target = table(of: join.destination)
            let ownerTable = table(of: join.owner)
            let allowed = join.allowed.sorted()
            let checksEntity = Set(allowed) != Set(target.entityNumbers)
            var wrong = ["d.Z_PK IS NULL"]
            if checksEntity { wrong.append("d.Z_ENT IS NULL OR d.Z_ENT NOT IN \(list(allowed))") }
            let sql = """
                SELECT j.\(join.otherColumn) AS owner, j.\(join.column) AS target, o.Z_ENT AS ownerEntity, \
                d.Z_PK AS found, d.Z_ENT AS foundEntity \
                FROM \(join.table) j LEFT JOIN \(target.name) d ON d.Z_PK = j.\(join.column) \
                LEFT JOIN \(ownerTable.name) o ON o.Z_PK = j.\(join.otherColumn) \
                WHERE \(wrong.joined(separator: " OR "))
                """
            try collector.addRows(db, .joinTable, sql: sql) { row in
                let owner: Int64? = row.lenient("owner")
                let ownerName = entityName(row.lenient("ownerEntity"), or: join.owner.name)
                let key: Int64? = row.lenient("target")
                let foundEntity: Int64? = row.lenient("foundEntity")
                let problem: String
                if let key {
                    problem = (row["found"] as DatabaseValue).isNull
                        ? "Z_PK \(key), which is not a row of \(target.name)"
                        : "\(rowName(entity: foundEntity, key: key)), but only \(entitiesPhrase(allowed)) may be linked there"
                } else {
                    problem = Self.valueText(row["target"])
                }
                if join.otherSideOwnsLink {
                    return Violation(kind: .joinTable, entity: ownerName, object: owner.map { uri(ownerName, $0) }, key: join.relationship,
                                     message: "\(join.table) links it through \(join.column) to \(problem)")
                }
                let linked = owner.map { rowName(entity: row.lenient("ownerEntity"), key: $0) } ?? "NULL"
                return Violation(kind: .joinTable, entity: join.destination.name, object: nil, key: join.relationship,
                                 message: "\(join.table) links \(linked) through \(join.column) to \(problem)")
            }
        }
    }

    // MARK: 4. both sides of a relationship

    /// A one-to-one keeps a key on both sides, which must point at each other; a self-inverse many-to-many keeps each
    /// link as two rows, which must both be there. Other kinds keep each link once, so their sides cannot disagree.
    private func checkInverses(_ db: Database) throws {
        for entity in model.entities {
            for relationship in entity.declaration.relationships where relationship.isPersistent {
                let storage = schema.storage(forRelationship: relationship.name, of: entity.name)
                if relationship.isToOne, case .foreignKey(let column, _, _)? = storage {
                    try checkOneToOne(db, relationship, of: entity, column: column)
                } else if case .joinTable(let table, let sourceColumn, let destinationColumn, _, true)? = storage {
                    try checkSymmetric(db, relationship, of: entity, table: table, sourceColumn: sourceColumn, destinationColumn: destinationColumn)
                }
            }
        }
    }

    private func checkOneToOne(_ db: Database, _ relationship: RelationshipDescription, of entity: Entity, column: String) throws {
        guard let inverse = model.inverse(of: relationship), inverse.isToOne,
              let destination = model.entity(named: relationship.destination),
              case .foreignKey(let inverseColumn, _, _)? = schema.storage(forRelationship: inverse.name, of: destination.name) else { return }
        let source = table(of: entity)
        let target = table(of: destination)
        let sql = """
            SELECT s.Z_PK AS pk, s.Z_ENT AS ent, s.\(column) AS target, d.Z_ENT AS targetEntity, d.\(inverseColumn) AS back, \
            b.Z_ENT AS backEntity \
            FROM \(source.name) s JOIN \(target.name) d ON d.Z_PK = s.\(column) \
            LEFT JOIN \(source.name) b ON b.Z_PK = d.\(inverseColumn) \
            WHERE \(rowFilter("s", members(of: entity), in: source))\(rowFilter("d", members(of: destination), in: target))\
            d.\(inverseColumn) IS NOT s.Z_PK
            """
        try collector.addRows(db, .inverse, sql: sql) { row in
            let name = entityName(row.lenient("ent"), or: entity.name)
            let partner = rowName(entity: row.lenient("targetEntity"), key: row.lenient("target") ?? 0)
            let back: Int64? = row.lenient("back")
            let backText = back.map { "\(rowName(entity: row.lenient("backEntity"), key: $0)), not this object" } ?? "empty"
            return Violation(kind: .inverse, entity: name, object: uri(name, row.lenient("pk") ?? 0), key: relationship.name,
                             message: "is \(partner), whose \(inverse.name) is \(backText)")
        }
    }

    private func checkSymmetric(
        _ db: Database, _ relationship: RelationshipDescription, of entity: Entity, table: String, sourceColumn: String, destinationColumn: String
    ) throws {
        let rows = self.table(of: entity)
        let sql = """
            SELECT j.\(sourceColumn) AS a, j.\(destinationColumn) AS b, oa.Z_ENT AS aEntity, ob.Z_ENT AS bEntity \
            FROM \(table) j LEFT JOIN \(table) r ON r.\(sourceColumn) = j.\(destinationColumn) AND r.\(destinationColumn) = j.\(sourceColumn) \
            LEFT JOIN \(rows.name) oa ON oa.Z_PK = j.\(sourceColumn) LEFT JOIN \(rows.name) ob ON ob.Z_PK = j.\(destinationColumn) \
            WHERE j.\(sourceColumn) IS NOT NULL AND j.\(destinationColumn) IS NOT NULL AND r.\(sourceColumn) IS NULL
            """
        try collector.addRows(db, .inverse, sql: sql) { row in
            let a: Int64 = row.lenient("a") ?? 0
            let b: Int64 = row.lenient("b") ?? 0
            let name = entityName(row.lenient("bEntity"), or: entity.name)
            let other = rowName(entity: row.lenient("aEntity"), key: a)
            return Violation(
                kind: .inverse, entity: name, object: uri(name, b), key: relationship.name,
                message: "lacks \(other), whose \(relationship.name) holds this object (\(table) has the row \(a) → \(b) but not \(b) → \(a))")
        }
    }

    // MARK: 5. derived attributes

    private func checkDerivedAttributes(_ db: Database) throws {
        for entity in model.entities {
            for attribute in entity.declaration.attributes where attribute.isPersistent {
                guard let derivation = attribute.parsedDerivation,
                      let column = schema.column(forAttribute: attribute.name, of: entity.name) else { continue }
                let source = table(of: entity)
                let filter = rowFilter("s", members(of: entity), in: source)
                switch derivation {
                case .count(let relationship):
                    let counted: String
                    switch schema.storage(forRelationship: relationship, of: entity.name) {
                    case .inverseForeignKey(let table, let keyColumn, _)?:
                        counted = "SELECT COUNT(*) FROM \(table) l WHERE l.\(keyColumn) = s.Z_PK"
                    case .joinTable(let table, let sourceColumn, _, _, _)?:
                        counted = "SELECT COUNT(*) FROM \(table) l WHERE l.\(sourceColumn) = s.Z_PK"
                    default:
                        continue
                    }
                    let sql = """
                        SELECT pk, ent, stored, actual FROM (SELECT s.Z_PK AS pk, s.Z_ENT AS ent, s.\(column) AS stored, (\(counted)) AS actual \
                        FROM \(source.name) s WHERE \(filter)1) WHERE stored IS NOT actual
                        """
                    try collector.addRows(db, .derived, sql: sql) { row in
                        let name = entityName(row.lenient("ent"), or: entity.name)
                        let stored = Self.valueText(row["stored"])
                        let actual: Int64 = row.lenient("actual") ?? 0
                        return Violation(kind: .derived, entity: name, object: uri(name, row.lenient("pk") ?? 0), key: attribute.name,
                                         message: "is \(stored), but \(relationship) holds \(actual)")
                    }
                case .copy(let relationship, let copied):
                    guard case .foreignKey(let keyColumn, _, _)? = schema.storage(forRelationship: relationship, of: entity.name),
                          let destinationName = entity.relationship(named: relationship)?.destination,
                          let destination = model.entity(named: destinationName),
                          let copiedColumn = schema.column(forAttribute: copied, of: destination.name) else { continue }
                    let sql = """
                        SELECT s.Z_PK AS pk, s.Z_ENT AS ent, s.\(keyColumn) AS target, s.\(column) AS stored, d.\(copiedColumn) AS actual \
                        FROM \(source.name) s LEFT JOIN \(table(of: destination).name) d ON d.Z_PK = s.\(keyColumn) \
                        WHERE \(filter)s.\(column) IS NOT d.\(copiedColumn)
                        """
                    try collector.addRows(db, .derived, sql: sql) { row in
                        let name = entityName(row.lenient("ent"), or: entity.name)
                        let stored = Self.valueText(row["stored"])
                        let source = (row["target"] as DatabaseValue).isNull ? "\(relationship) is empty" : "\(relationship).\(copied) is \(Self.valueText(row["actual"]))"
                        return Violation(kind: .derived, entity: name, object: uri(name, row.lenient("pk") ?? 0), key: attribute.name,
                                         message: "is \(stored), but \(source)")
                    }
                }
            }
        }
    }

    // MARK: 6. value types

    /// Per table, one statement that reads each row once and tests every attribute stored there; a row comes back
    /// when any of its values has a storage class (or range, or length) the attribute's type cannot be read from,
    /// with a flag per attribute. Derived attributes are the `derived` check's.
    private func checkValueTypes(_ db: Database) throws {
        for source in schema.tables {
            var rules: [(entity: Entity, attribute: AttributeDescription, column: String, condition: String)] = []
            for entity in model.entities where table(of: entity).name == source.name {
                for attribute in entity.declaration.attributes where attribute.isPersistent && attribute.derivation == nil {
                    guard let column = schema.column(forAttribute: attribute.name, of: entity.name),
                          let wrong = Self.wrongValue(of: attribute.type, in: "s.\(column)") else { continue }
                    let filter = rowFilter("s", members(of: entity), in: source)
                    rules.append((entity, attribute, column, "(\(filter)s.\(column) IS NOT NULL AND (\(wrong)))"))
                }
            }
            let entityColumn = source.entityNumbers.count > 1 ? "s.Z_ENT" : source.entityNumbers.first.map(String.init) ?? "NULL"
            // Two result columns per attribute: a table of more attributes than SQLite returns columns (2,000 by
            // default) is read in several statements.
            for start in stride(from: 0, to: rules.count, by: Self.valueTypeRulesPerStatement) {
                let chunk = rules[start..<min(start + Self.valueTypeRulesPerStatement, rules.count)]
                let flags = chunk.indices.map { "\(rules[$0].condition) AS bad\($0), s.\(rules[$0].column) AS value\($0)" }
                let sql = """
                    SELECT pk, ent, \(chunk.indices.map { "bad\($0), value\($0)" }.joined(separator: ", ")), \
                    \(chunk.indices.map { "bad\($0)" }.joined(separator: " + ")) AS violations \
                    FROM (SELECT s.Z_PK AS pk, \(entityColumn) AS ent, \(flags.joined(separator: ", ")) FROM \(source.name) s \
                    WHERE \(chunk.map(\.condition).joined(separator: " OR ")))
                    """
                try collector.addGroupedRows(db, .valueType, sql: sql) { row in
                    chunk.indices.compactMap { index -> Violation? in
                        guard row.lenient("bad\(index)", as: Bool.self) == true else { return nil }
                        let rule = rules[index]
                        let name = entityName(row.lenient("ent"), or: rule.entity.name)
                        return Violation(kind: .valueType, entity: name, object: uri(name, row.lenient("pk") ?? 0), key: rule.attribute.name,
                                         message: Self.wrongValueMessage(row["value\(index)"], type: rule.attribute.type))
                    }
                }
            }
        }
    }

    /// Attributes tested by one statement of the `valueType` check: two result columns each, well under SQLite's
    /// default limit of 2,000.
    static let valueTypeRulesPerStatement = 400

    /// An SQL condition true when `value` (not NULL) cannot be read as `type`; nil for a type read from anything.
    /// What counts as readable is what Core Data writes and what the SQL column's affinity keeps: integers and
    /// Booleans as INTEGER, within the type's range, Double, Float and Date as REAL or INTEGER, String and
    /// URI as TEXT, Binary and Transformable as BLOB, a UUID as a BLOB of 16 bytes. A Decimal is read from a number
    /// or from text; only a BLOB is wrong.
    static func wrongValue(of type: AttributeType, in value: String) -> String? {
        switch type {
        case .integer16: "typeof(\(value)) != 'integer' OR \(value) NOT BETWEEN \(Int16.min) AND \(Int16.max)"
        case .integer32: "typeof(\(value)) != 'integer' OR \(value) NOT BETWEEN \(Int32.min) AND \(Int32.max)"
        case .integer64, .boolean: "typeof(\(value)) != 'integer'"
        case .double, .float, .date: "typeof(\(value)) NOT IN ('real', 'integer')"
        case .decimal: "typeof(\(value)) = 'blob'"
        case .string, .uri: "typeof(\(value)) != 'text'"
        case .binaryData, .transformable: "typeof(\(value)) != 'blob'"
        case .uuid: "typeof(\(value)) != 'blob' OR length(\(value)) != 16"
        case .objectID: nil
        }
    }

    /// `holds text "abc", which an Integer 16 attribute cannot hold` (the value as `valueText` shows it, after its
    /// storage class), or for a number out of range `holds 70000, outside Integer 16's range`.
    static func wrongValueMessage(_ value: DatabaseValue, type: AttributeType) -> String {
        let storageClass: String
        switch value.storage {
        case .null: storageClass = "NULL"
        case .int64(let number):
            if type == .integer16 || type == .integer32 { return "holds \(number), outside \(type.rawValue)'s range" }
            storageClass = "integer"
        case .double: storageClass = "real"
        case .string: storageClass = "text"
        case .blob: storageClass = "blob"
        }
        // Integer and ObjectID are the types whose names are said with a vowel first (a UUID, a URI).
        let article = type.rawValue.first.map { "IO".contains($0) } == true ? "an" : "a"
        return "holds \(storageClass) \(valueText(value)), which \(article) \(type.rawValue) attribute cannot hold"
    }

    // MARK: row counts

    private func countRows(_ db: Database, catalog: StoreCatalog) throws -> ([IntegrityReport.RowCount], [IntegrityReport.RowCount]) {
        var rowsByEntity: [Int: Int] = [:]
        for table in schema.tables {
            guard let columns = catalog.columns[table.name] else { continue }
            if table.entityNumbers.count == 1 {
                rowsByEntity[table.entityNumbers[0]] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0
            } else if columns.contains("Z_ENT") {
                for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, COUNT(*) FROM \(table.name) GROUP BY Z_ENT") {
                    guard let number = row.lenient(0, as: Int.self), table.entityNumbers.contains(number) else { continue }
                    rowsByEntity[number] = row.lenient(1) ?? 0
                }
            }
        }
        let entities = model.entities.map { entity in
            IntegrityReport.RowCount(name: entity.name, table: table(of: entity).name, rows: rowsByEntity[entity.number] ?? 0)
        }
        var joinTables: [IntegrityReport.RowCount] = []
        for table in schema.joinTables where catalog.columns[table.name] != nil {
            let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0
            joinTables.append(IntegrityReport.RowCount(name: table.name, table: table.name, rows: rows))
        }
        return (entities, joinTables)
    }
}
