import Foundation
import GRDB
import GraphStore
import Testing

/// The store layout checked against stores Core Data made (`CoreDataCorpus`): the same names for every table,
/// column and index, the same entity numbers, and Apple's stores opening with their models.
@Suite(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
struct CoreDataCorpusLayoutTests {
    private func appleCatalog(_ name: String) throws -> StoreCatalog {
        let folder = try TemporaryDirectory()
        return try Self.readApples(name, in: folder).read(StoreCatalog.read)
    }

    /// A read-only queue on a copy of `name`'s store in `folder`, with the `-wal` and `-shm` beside it if any: even
    /// a read-only connection to a store in WAL mode writes to its `-shm`, and the corpus is never written.
    private static func readApples(_ name: String, in folder: TemporaryDirectory) throws -> DatabaseQueue {
        let copy = folder.path("apple-\(name).sqlite")
        let source = try CoreDataCorpus.file("\(name)/store.sqlite").path
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: copy + suffix)
        }
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: copy, configuration: configuration)
    }

    private func model(_ name: String) throws -> ObjectModel {
        try XcodeModelLoader.load(contentsOf: try CoreDataCorpus.file("\(name)/model.xcdatamodel"))
    }

    @Test(arguments: CoreDataCorpus.names)
    func newStoreHasAppleNamesForEveryTableColumnAndIndex(name: String) throws {
        let folder = try TemporaryDirectory()
        let store = try PersistentStore.open(path: folder.path("\(name).sqlite"), model: try model(name))
        let ours = try store.database.read(StoreCatalog.read)
        let apple = try appleCatalog(name)
        #expect(Set(ours.columns.keys) == Set(apple.columns.keys))
        for (table, columns) in apple.columns {
            #expect(Set(ours.columns[table] ?? []) == Set(columns), "columns of \(table)")
        }
        #expect(ours.indexes == apple.indexes)
        #expect(ours.differences(from: apple) == [])
    }

    @Test func entityNumbersMatchApples() throws {
        let model = try model("cars-people")
        let folder = try TemporaryDirectory()
        let apple = try Self.readApples("cars-people", in: folder).read { try Row.fetchAll($0, sql: "SELECT Z_ENT, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") }
        #expect(apple.map { $0[0] as Int } == model.entities.map(\.number))
        #expect(apple.map { $0[1] as Int } == model.entities.map { $0.parentName.flatMap(model.entity(named:))?.number ?? 0 })
    }

    /// A store Core Data made opens with its model: the hashes are Apple's, so the layout is compared instead.
    @Test(arguments: CoreDataCorpus.names)
    func appleStoreOpensReadOnlyWithItsModel(name: String) throws {
        let folder = try TemporaryDirectory()
        let copy = folder.path("\(name).sqlite")
        try FileManager.default.copyItem(atPath: try CoreDataCorpus.file("\(name)/store.sqlite").path, toPath: copy)
        let store = try PersistentStore.open(path: copy, model: try model(name), options: .init(readOnly: true))
        #expect(!store.storeUUID.isEmpty)
        #expect(store.isReadOnly)
    }

    @Test func appleStoreIsRefusedForAnotherModel() throws {
        let folder = try TemporaryDirectory()
        let copy = folder.path("authors.sqlite")
        try FileManager.default.copyItem(atPath: try CoreDataCorpus.file("authors-books/store.sqlite").path, toPath: copy)
        let before = FileManager.default.contents(atPath: copy)
        // Tables and indexes the model does not lay out are left out of the comparison (an app's own, say): what
        // the other store lacks is what tells them apart.
        #expect(throws: StoreError.modelMismatch(path: copy, differences: [
            "missing table ZCAR", "missing table ZPERSON",
            "missing index ZCAR_ZOWNER_INDEX", "missing index ZCAR_Z_ENT_INDEX",
            "missing index Z_Car_UNIQUE_numberPlate", "missing index Z_Car_byMakerAndNumberPlate", "missing index Z_Person_UNIQUE_firstName_lastName",
        ])) {
            try PersistentStore.open(path: copy, model: try model("cars-people"))
        }
        #expect(FileManager.default.contents(atPath: copy) == before)
    }
}
