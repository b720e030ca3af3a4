import Browser
import Foundation
import GraphStore
import Testing

/// The entity browser on real files: a store opened read-only keeps every byte and gains no file beside it, Core
/// Data's own stores (the corpus) browse as their models say, and values kept outside the store are named by the
/// file they are in.
@Suite(.serialized) struct EntityBrowserStoreTests {
    /// FNV-1a over the bytes: a short name for what a file holds, for messages.
    static func hash(_ data: Data?) -> String {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in data ?? Data() { value = (value ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return String(value, radix: 16)
    }

    /// Opens `path` read-only in the entity browser and walks it: every entity, an object, its relationships.
    static func browseEverything(_ path: String, model: ForeignModel) throws {
        let store = try ForeignStore.open(path: path, model: model, writable: false, settings: BrowserSettings())
        let browser = EntityBrowserModel(store: store, settings: BrowserSettings(), width: 120, height: 40, activityClock: { 0 })
        browser.apply(.browser(.start))
        for entity in model.objectModel.entities {
            browser.apply(.entity(entity.name))
            browser.apply(.browser(.open))
            for relationship in entity.relationships {
                browser.apply(.follow(relationship.name))
                browser.apply(.browser(.back))
            }
            browser.apply(.browser(.clearCache))
        }
        // Writing keys are refused, not carried out.
        browser.apply(.browser(.delete))
        browser.apply(.browser(.save))
        #expect(browser.state.messageIsError)
    }

    static func expectUnchanged(_ before: [String: Data], _ after: [String: Data], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(after.keys.sorted() == before.keys.sorted(), "files beside the store", sourceLocation: sourceLocation)
        for (name, bytes) in before {
            #expect(after[name] == bytes, "\(name): \(hash(bytes)) before, \(hash(after[name])) after", sourceLocation: sourceLocation)
        }
    }

    @Test func readOnlyLeavesAStoreMadeHereByteForByteAsItWas() throws {
        let folder = TemporaryFolder()
        let path = folder.path("library.sqlite")
        try FileManager.default.copyItem(atPath: EntityBrowserTests.shared.path, toPath: path)
        let before = try CoreDataCorpus.snapshot(folder)
        #expect(before.keys.sorted() == ["library.sqlite"])
        try Self.browseEverything(path, model: ForeignModel(objectModel: try LibraryStore.model()))
        Self.expectUnchanged(before, try CoreDataCorpus.snapshot(folder))
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason), arguments: CoreDataCorpus.withModelFiles)
    func readOnlyLeavesACoreDataStoreByteForByteAsItWas(_ name: String) throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy(name, into: folder)
        let model = try ForeignModel.load(path: try CoreDataCorpus.modelFile(name))
        let before = try CoreDataCorpus.snapshot(folder)
        try Self.browseEverything(store, model: model)
        Self.expectUnchanged(before, try CoreDataCorpus.snapshot(folder))
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func carsAndPeopleBrowseAsTheirModelSays() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let opened = try ForeignStore.open(path: store, model: try ForeignModel.load(path: try CoreDataCorpus.modelFile("cars-people")),
                                           writable: false, settings: BrowserSettings())
        let browser = EntityBrowserModel(store: opened, settings: BrowserSettings(), width: 140, height: 40,
                                         timeZone: TimeZone(identifier: "UTC") ?? .current, activityClock: { 0 })
        browser.apply(.browser(.start))
        // Car's table holds its sub-entities' rows too: 115 Cars, 5 SportCars and 5 LuxuryCars (whose Z_NAME is the
        // model's elementID, ExpensiveSportCar). Each count is of the entity and what is below it.
        #expect(browser.state.entities.rows.map(\.name) == ["Car", "SportCar", "LuxuryCar", "Person"])
        #expect(browser.state.entities.rows.map(\.count) == [125, 10, 5, 20])
        browser.apply(.entity("Person"))
        browser.apply(.sort("lastName", ascending: true))
        guard case .list(let people) = browser.state.main else { throw EntityBrowserTests.Failure("no list of people") }
        let lastNames = people.rows.compactMap { row in zip(people.columns, row.cells).first { $0.0.key == "lastName" }?.1.text }
        #expect(lastNames.count == 20)
        #expect(lastNames == lastNames.sorted())
        browser.apply(.filter("lastName == 'Stone'"))
        browser.apply(.browser(.open))
        guard case .object(let theodora) = browser.state.main else { throw EntityBrowserTests.Failure("no object") }
        #expect(theodora.title == "Person p17 Theodora Stone")
        #expect(theodora.rows.first { $0.name == "updatedAt" }?.value.text == "2021-04-07 15:52:49.638 +00:00")
        #expect(theodora.rows.first { $0.name == "cars" }?.value.text == "⇉ 100 Car")
        browser.apply(.follow("cars"))
        guard case .list(let cars) = browser.state.main else { throw EntityBrowserTests.Failure("no list of cars") }
        #expect(cars.count == 100)
        #expect(browser.state.breadcrumb == ["Person", "p17 Theodora Stone", "cars"])
        browser.apply(.browser(.open))
        browser.apply(.follow("owner"))
        #expect(browser.state.breadcrumb == ["Person", "p17 Theodora Stone", "cars", "Car p1 FIAT", "Person p17 Theodora Stone"])
    }

    /// Core Data keeps a value of an attribute that allows external storage in a file of its own once it is large,
    /// writing `0x02` and the file's UUID in the column; small ones stay inline after `0x01`.
    @Test func valuesKeptOutsideTheStoreAreNamedByTheirFile() throws {
        let folder = TemporaryFolder()
        let modelFolder = folder.path("Photos.xcdatamodel")
        try FileManager.default.createDirectory(atPath: modelFolder, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Photo" representedClassName="Photo" syncable="YES">
                    <attribute name="caption" optional="YES" attributeType="String"/>
                    <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                </entity>
            </model>
            """.utf8).write(to: URL(fileURLWithPath: modelFolder + "/contents"))
        let model = try ForeignModel.load(path: modelFolder)
        let path = folder.path("photos.sqlite")
        let name = "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"
        do {
            let coordinator = try PersistentStoreCoordinator(path: path, model: model.objectModel)
            let context = ObjectContext(coordinator: coordinator)
            let large = context.insert("Photo")
            large.setValue("large", forKey: "caption")
            large.setValue(Data([0x02]) + Data(name.utf8) + Data([0]), forKey: "image")
            let small = context.insert("Photo")
            small.setValue("small", forKey: "caption")
            small.setValue(Data([0x01, 0xFF, 0xD8, 0xFF]), forKey: "image")
            try context.save()
        }
        let external = folder.path(".photos_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(atPath: external, withIntermediateDirectories: true)
        try Data(count: 4_096).write(to: URL(fileURLWithPath: external + "/" + name))
        let store = try ForeignStore.open(path: path, model: model, writable: false, settings: BrowserSettings())
        let browser = EntityBrowserModel(store: store, settings: BrowserSettings(), width: 160, height: 30, activityClock: { 0 })
        browser.apply(.browser(.start))
        browser.apply(.entity("Photo"))
        guard case .list(let photos) = browser.state.main else { throw EntityBrowserTests.Failure("no list of photos") }
        #expect(photos.rows.map { $0.cells.map(\.text) } == [["large", "external file \(name)"], ["small", "3 B  ff d8 ff"]])
        browser.apply(.browser(.open))
        guard case .object(let photo) = browser.state.main else { throw EntityBrowserTests.Failure("no photo") }
        #expect(photo.rows.first { $0.name == "image" }?.value.text == "external file \(name) (4,096 B)")
        #expect(photo.rows.first { $0.name == "image" }?.type == "Binary, external storage")
    }
}
