import Foundation
import GRDB
@testable import GraphStore
import Testing

/// The model a store keeps inside itself: Core Data's compressed keyed archive in `Z_MODELCACHE`, read without the
/// model file.
@Suite struct StoredModelTests {
    // MARK: Archives made here

    @Test func subEntitiesOrderedToManyAndManyToMany() throws {
        let item = ModelArchive.entity("Item", abstract: true, properties: [
            ModelArchive.attribute("title", type: 700, optional: false),
            ModelArchive.relationship("albums", to: "Album", inverse: "items", maxCount: 0),
        ])
        let cache = try ModelArchive.cache([
            ModelArchive.entity("Album", properties: [
                ModelArchive.attribute("name", type: 700, defaultValue: "Untitled"),
                ModelArchive.relationship("items", to: "Item", inverse: "albums", maxCount: 0, ordered: true),
            ]),
            item,
            // Optional in `_P` alone; the inherited title and albums are repeated, as Core Data's archives do.
            ModelArchive.entity("Photo", parent: item, properties: [ModelArchive.attribute("pixels", type: 200, flagsOnly: true)]),
            // Ordered in `_P` alone; no upper bound written as -1, as models built in code write it.
            ModelArchive.entity("Playlist", properties: [
                ModelArchive.relationship("tracks", to: "Track", inverse: "playlist", maxCount: -1, minCount: 1, deleteRule: 2,
                                          orderedInFlagsOnly: true),
            ]),
            ModelArchive.entity("Track", properties: [
                ModelArchive.attribute("duration", type: 500, defaultValue: 0.0),
                ModelArchive.relationship("playlist", to: "Playlist", inverse: "tracks", maxCount: 1, minCount: 1),
            ], fetchIndexes: [ModelArchive.fetchIndex("byDuration", ["duration"])], unique: [["duration"]]),
        ])

        let stored = try StoredModel.decode(cache)
        let expected = try ObjectModel {
            EntityDescription("Album") {
                Attribute("name", .string).defaultValue("Untitled")
                Relationship.toMany("items", "Item", inverse: "albums", ordered: true)
            }
            EntityDescription("Item", abstract: true) {
                Attribute("title", .string).required()
                Relationship.toMany("albums", "Album", inverse: "items")
            }
            EntityDescription("Photo", parent: "Item") {
                Attribute("pixels", .integer32)
            }
            EntityDescription("Playlist") {
                Relationship.toMany("tracks", "Track", inverse: "playlist", ordered: true, deleteRule: .cascade, minCount: 1)
            }
            EntityDescription("Track") {
                Attribute("duration", .double).defaultValue("0")
                Relationship.toOne("playlist", "Playlist", inverse: "tracks")
                FetchIndex("byDuration", "duration")
                Unique("duration")
            }
        }
        #expect(stored.format == .coreData)
        #expect(stored.omissions.isEmpty)
        #expect(stored.model == expected)
        // Equal declarations make equal stores: the join table of the many-to-many, the order columns.
        #expect(StoreSchema(model: stored.model).ddl == StoreSchema(model: expected).ddl)
        #expect(stored.model.entity(named: "Photo")?.attributes.map(\.name) == ["title", "pixels"])
    }

    @Test func everyAttributeTypeCode() throws {
        let codes: [(Int, AttributeType)] = [
            (100, .integer16), (200, .integer32), (300, .integer64), (400, .decimal), (500, .double), (600, .float),
            (700, .string), (800, .boolean), (900, .date), (1000, .binaryData), (1100, .uuid), (1200, .uri),
            (1800, .transformable), (2000, .objectID),
        ]
        let cache = try ModelArchive.cache([
            ModelArchive.entity("Sample", properties: codes.map { ModelArchive.attribute("a\($0.0)", type: $0.0) }),
        ])
        let sample = try #require(try StoredModel.decode(cache).model.entity(named: "Sample"))
        for (code, type) in codes {
            #expect(sample.attribute(named: "a\(code)")?.type == type, "type code \(code)")
        }
    }

    @Test func unknownAttributeTypeIsNamed() throws {
        let cache = try ModelArchive.cache([ModelArchive.entity("Sample", properties: [ModelArchive.attribute("blob", type: 2100)])])
        #expect {
            try StoredModel.decode(cache)
        } throws: { error in
            "\(error)" == "its model cache (Z_MODELCACHE) is not a model this version reads: Sample.blob: attribute type 2100 is not supported"
        }
    }

    @Test func truncatedAndCorruptedCachesAreNamed() throws {
        let cache = try ModelArchive.cache([ModelArchive.entity("Sample", properties: [ModelArchive.attribute("name", type: 700)])])
        let truncated = cache.prefix(cache.count / 2)
        #expect {
            try StoredModel.decode(truncated)
        } throws: { error in
            "\(error)" == "its model cache (Z_MODELCACHE) is damaged: its compressed model is cut short"
        }
        var corrupted = cache
        for offset in stride(from: 0, to: corrupted.count, by: 3) { corrupted[offset] ^= 0xA5 }
        #expect {
            try StoredModel.decode(corrupted)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("its model cache (Z_MODELCACHE) is ") && !text.contains("\n")
        }
        // Inflating well but to something other than an archive.
        #expect {
            try StoredModel.decode(try ModelArchive.deflate(Data("not a property list".utf8)))
        } throws: { error in
            "\(error)" == "its model cache (Z_MODELCACHE) is not a model this version reads: it inflates to something that is not a sound property list (it is not a binary property list)"
        }
    }

    /// Structures Foundation's parser here accepts but cannot bridge to Swift values, which ends the process: a
    /// UID as a set member, a collection that holds itself. They are refused before Foundation sees them.
    @Test func propertyListsFoundationCannotBridgeAreRefused() throws {
        // bplist00, objects: 0 = set {1}, 1 = UID 0; then the offset table and the trailer.
        var uidInSet: [UInt8] = Array("bplist00".utf8) + [0xC1, 0x01, 0x80, 0x00]
        let table = uidInSet.count
        uidInSet += [8, 10]
        uidInSet += [0, 0, 0, 0, 0, 0, 1, 1] + Self.bigEndian(2) + Self.bigEndian(0) + Self.bigEndian(table)
        #expect(BinaryPropertyListCheck.problem(in: Data(uidInSet)) == "a set holds something other than a plain value")
        // objects: 0 = array [0].
        var selfHolding: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x00]
        let selfTable = selfHolding.count
        selfHolding += [8]
        selfHolding += [0, 0, 0, 0, 0, 0, 1, 1] + Self.bigEndian(1) + Self.bigEndian(0) + Self.bigEndian(selfTable)
        #expect(BinaryPropertyListCheck.problem(in: Data(selfHolding)) == "a collection holds itself")
        #expect(throws: StoredModelError.self) { try StoredModel.decode(try ModelArchive.deflate(Data(selfHolding))) }
        // A sound archive passes.
        let archive = try ModelArchive.archive([ModelArchive.entity("Sample", properties: [ModelArchive.attribute("name", type: 700)])])
        #expect(BinaryPropertyListCheck.problem(in: archive) == nil)
    }

    private static func bigEndian(_ value: Int) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    @Test func storeWithoutCache() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("old.sqlite")
        let model = try ObjectModel { EntityDescription("Note") { Attribute("text", .string) } }
        _ = try PersistentStore.open(path: path, model: model)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "DROP TABLE Z_MODELCACHE") }
        try queue.close()
        #expect {
            try StoredModel.read(storeAt: path)
        } throws: { error in
            guard let error = error as? StoredModelError, case .missing = error else { return false }
            return error.modelFileWouldHelp && "\(error)" == "\(path): has no model inside it (no Z_MODELCACHE table, as in stores made by older Core Data versions)"
        }
    }

    @Test func graphStoreCacheIsReadToo() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("notes.sqlite")
        let model = try ObjectModel { EntityDescription("Note") { Attribute("text", .string).required() } }
        _ = try PersistentStore.open(path: path, model: model)
        let stored = try StoredModel.read(storeAt: path)
        #expect(stored.format == .graphStore)
        #expect(stored.model == model)
    }

    // MARK: Stores Core Data made

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason), arguments: CoreDataCorpus.names)
    func equalsTheModelFile(name: String) throws {
        let store = try Self.copy(name)
        let fromFile = try XcodeModelLoader.load(contentsOf: try CoreDataCorpus.file("\(name)/model.xcdatamodel"))
        let stored = try StoredModel.read(storeAt: store.path)
        #expect(stored.format == .coreData)
        #expect(stored.omissions.isEmpty)
        #expect(stored.model == fromFile)
        #expect(stored.model.entities.map(\.name) == fromFile.entities.map(\.name))
        #expect(stored.model.entities.map(\.number) == fromFile.entities.map(\.number))
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func everyAttributeTypeOfTheCorpus() throws {
        let store = try Self.copy("books-pages")
        let model = try StoredModel.read(storeAt: store.path).model
        let expected: [(String, String, AttributeType)] = [
            ("Writer", "age", .integer16), ("Page", "number", .integer32), ("Book", "pagesCount", .integer64),
            ("Book", "price", .decimal), ("Feedback", "rating", .double), ("Book", "title", .string),
            ("Page", "isBookmarked", .boolean), ("Book", "publishedAt", .date), ("Book", "uniqueID", .uuid),
            ("Author", "siteURL", .uri), ("Book", "cover", .transformable),
        ]
        for (entity, attribute, type) in expected {
            #expect(model.entity(named: entity)?.attribute(named: attribute)?.type == type, "\(entity).\(attribute)")
        }
        #expect(model.entity(named: "Book")?.attribute(named: "pagesCount")?.derivation == "pages.@count")
        let title = try #require(model.entity(named: "Book")?.attribute(named: "title"))
        #expect(title.minValue == "3" && title.maxValue == "50" && !title.isOptional)
        #expect(model.entity(named: "GraphicNovel")?.attribute(named: "isBlackAndWhite")?.defaultValue == "NO")
        #expect(model.entity(named: "Writer")?.isAbstract == true)
        #expect(model.entity(named: "Author")?.attribute(named: "alias") != nil)
    }

    /// A model read from the store lists the store's entities, with the numbers, names and parents its
    /// `Z_PRIMARYKEY` gives them. Core Data's persistent-history entities (numbered from 16001: CHANGE,
    /// TRANSACTION, TRANSACTIONSTRING) are its own bookkeeping, not the model's.
    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func booksPagesListsTheEntitiesOfItsPrimaryKeyTable() throws {
        let copy = try Self.copy("books-pages")
        let store = copy.path
        let model = try StoredModel.read(storeAt: store).model
        let rows = try Self.readOnly(store) { db in
            try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
        }
        let recorded = rows.map { row -> String in
            let number: Int = row["Z_ENT"]
            let name: String = row["Z_NAME"]
            let parent: Int = row["Z_SUPER"]
            return "\(number) \(name) \(parent)"
        }
        let read = model.entities.map { entity in
            "\(entity.number) \(entity.name) \(entity.parentName.flatMap(model.entity(named:))?.number ?? 0)"
        }
        #expect(read == recorded)
        #expect(recorded.count == 6)
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func booksPagesModelMakesTheSameLayout() throws {
        let copy = try Self.copy("books-pages")
        let original = copy.path
        let model = try StoredModel.read(storeAt: original).model
        let folder = try TemporaryDirectory()
        let made = folder.path("made.sqlite")
        _ = try PersistentStore.open(path: made, model: model)
        // Core Data's persistent-history tables are its own, not the model's.
        let history: Set<String> = ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]
        let originalLayout = try Self.layout(original).filter { !history.contains($0.table) }
        let madeLayout = try Self.layout(made)
        #expect(madeLayout.map(\.description) == originalLayout.map(\.description))
        #expect(originalLayout.contains { $0.description.hasPrefix("index Z_Book_UNIQUE_uniqueID ") })
        // The derived count's triggers are named as Core Data names them, on the same tables.
        #expect(originalLayout.filter { $0.description.hasPrefix("trigger ") }.count == 5)
    }

    /// `check` looks in a store Core Data wrote for the count triggers it names as GraphStore does, and names the
    /// one that is gone.
    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func checkFindsCoreDatasCountTriggers() throws {
        let copy = try Self.copy("books-pages")
        func schemaViolations() throws -> [String] {
            try StoreIntegrityCheck.run(path: copy.path).violations.filter { $0.kind == .schema }.map(\.description)
        }
        #expect(try schemaViolations() == [])
        let queue = try DatabaseQueue(path: copy.path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE") }
        try queue.close()
        #expect(try schemaViolations() == [
            "schema Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE: trigger Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE is missing, so a derived attribute is no longer kept up to date",
        ])
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func readingChangesNothing() throws {
        // A WAL-mode store with no -wal beside it: the case where reading in place would make one.
        let folder = try TemporaryDirectory()
        let copy = folder.path("store.sqlite")
        try FileManager.default.copyItem(atPath: try CoreDataCorpus.file("books-pages/store.sqlite").path, toPath: copy)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        _ = try StoredModel.read(storeAt: copy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["store.sqlite"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    // MARK: Helpers

    /// A copy of a corpus store (with its -wal and -shm, if any) in a folder of its own: the corpus itself is never
    /// opened, so a test stopped halfway cannot leave a file beside it.
    private static func copy(_ name: String) throws -> (folder: TemporaryDirectory, path: String) {
        let folder = try TemporaryDirectory()
        let path = folder.path("store.sqlite")
        for suffix in ["", "-wal", "-shm"] {
            let source = try CoreDataCorpus.file("\(name)/store.sqlite\(suffix)").path
            if FileManager.default.fileExists(atPath: source) { try FileManager.default.copyItem(atPath: source, toPath: path + suffix) }
        }
        return (folder, path)
    }

    private static func readOnly<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        guard let uri = "file://\(path)?immutable=1".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.union(["?", "="])) else {
            throw CocoaError(.fileReadInvalidFileName)
        }
        let queue = try DatabaseQueue(path: uri, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// Every table with its columns (as a set), every index with its definition and every trigger with its table, sorted.
    private struct LayoutItem {
        let table: String
        let description: String
    }

    private static func layout(_ path: String) throws -> [LayoutItem] {
        try readOnly(path) { db in
            var items: [LayoutItem] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                let columns = try db.columns(in: table).map(\.name).sorted()
                items.append(LayoutItem(table: table, description: "table \(table) (\(columns.joined(separator: ", ")))"))
            }
            for row in try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") {
                let name: String = row["name"]
                let table: String = row["tbl_name"]
                let sql: String = row["sql"]
                items.append(LayoutItem(table: table, description: "index \(name) \(sql)"))
            }
            for row in try Row.fetchAll(db, sql: "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name") {
                let name: String = row["name"]
                let table: String = row["tbl_name"]
                items.append(LayoutItem(table: table, description: "trigger \(name) on \(table)"))
            }
            return items
        }
    }
}
