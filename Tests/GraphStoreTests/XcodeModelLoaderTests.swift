import Foundation
import GraphStore
import Testing

/// Where the test models live: next to this file.
private enum Paths {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let models = testsFolder.appendingPathComponent("Models")

    static func model(_ relativePath: String) -> URL { models.appendingPathComponent(relativePath) }
}

/// The models of the published sources that have an Xcode twin under `Models/`.
enum ExperimentTwin: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case students = "Students.xcdatamodel"
    case associates = "Associates.xcdatamodel"
    case quakes = "Quakes.xcdatamodel"
    case employees = "Employees.xcdatamodel"
    case contacts = "Contacts.xcdatamodeld"

    var testDescription: String { rawValue }

    func declared() throws -> ObjectModel {
        switch self {
        case .students: try ExperimentModels.students()
        case .associates: try ExperimentModels.associates()
        case .quakes: try ExperimentModels.quakes()
        case .employees: try ExperimentModels.employees()
        case .contacts: try ExperimentModels.contacts()
        }
    }
}

/// The error `load` reports for `url`, or nil when the model loads.
private func loadFailure(_ url: URL) -> String? {
    do {
        _ = try XcodeModelLoader.load(contentsOf: url)
        return nil
    } catch {
        return error.description
    }
}

/// Runs `body` with the URL of a new temporary folder, removed afterwards.
private func withTemporaryFolder(_ body: (URL) throws -> Void) throws {
    try withTemporaryDirectory { folder in try body(folder.url) }
}

/// Writes `text` to `name` inside `folder` (creating folders on the way) and returns the file's URL.
@discardableResult
private func write(_ text: String, to name: String, in folder: URL) throws -> URL {
    let url = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: url)
    return url
}

/// A model document around `body`, with the header Xcode writes.
private func modelXML(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" \
    systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
    \(body)
    </model>
    """
}

private func declarations(_ body: String) throws(ModelError) -> [EntityDescription] {
    try XcodeModelLoader.declarations(fromXML: Data(modelXML(body).utf8), file: "test.xml")
}

private func declarationFailure(_ body: String) -> String? {
    do {
        _ = try declarations(body)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct XcodeModelLoaderTests {
    // MARK: The published sources' models' twins

    @Test(arguments: ExperimentTwin.allCases)
    func xcodeTwinMatchesTheModelDeclaredInCode(_ twin: ExperimentTwin) throws {
        let loaded = try XcodeModelLoader.load(contentsOf: Paths.model(twin.rawValue))
        let declared = try twin.declared()
        #expect(loaded.entities.map(\.name) == declared.entities.map(\.name))
        for (mine, theirs) in zip(loaded.declarations, declared.declarations) {
            #expect(mine == theirs, "entity '\(theirs.name)' differs")
        }
        #expect(loaded.declarations == declared.declarations)
        #expect(loaded == declared)
        #expect(loaded.warnings == declared.warnings)
    }

    @Test func versionedModelLoadsItsCurrentVersion() throws {
        let current = try XcodeModelLoader.load(contentsOf: Paths.model("Contacts.xcdatamodeld"))
        #expect(current.entities.map(\.name) == ["Contact", "Group", "User", "Message"])
        #expect(current.entity(named: "Message") != nil)

        let older = try XcodeModelLoader.load(contentsOf: Paths.model("Contacts.xcdatamodeld/Contacts.xcdatamodel"))
        #expect(older.entities.map(\.name) == ["Contact", "Group", "User"])
        #expect(older.entity(named: "Message") == nil)
        #expect(older.entity(named: "User")?.attributes.map(\.name) == ["name", "phone"])
        #expect(older != current)

        let direct = try XcodeModelLoader.load(contentsOf: Paths.model("Contacts.xcdatamodeld/Contacts 2.xcdatamodel/contents"))
        #expect(direct == current)
    }

    // MARK: Real Core Data models

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func loadsTheCarsPeopleModel() throws {
        let model = try XcodeModelLoader.load(
            contentsOf: try CoreDataCorpus.file("cars-people/model.xcdatamodel"))
        #expect(model.entities.map(\.name) == ["Car", "SportCar", "LuxuryCar", "Person"])
        #expect(model.entity(named: "LuxuryCar")?.parentName == "SportCar")

        let car = try #require(model.entity(named: "Car"))
        let index = try #require(car.declaration.fetchIndexes.first { $0.name == "byMakerAndNumberPlate" })
        #expect(index.elements.count == 2)
        #expect(index.elements.map(\.property) == ["maker", "numberPlate"])
        #expect(car.declaration.uniquenessConstraints == [["numberPlate"]])
        #expect(car.relationship(named: "owner") == .toOne("owner", "Person", inverse: "cars"))

        let limited = try #require(model.entity(named: "LuxuryCar")?.attribute(named: "isLimitedEdition"))
        #expect(limited.type == .boolean)
        #expect(limited.defaultValue == "NO")
        #expect(model.entity(named: "Person")?.declaration.uniquenessConstraints == [["firstName", "lastName"]])
    }

    @Test(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
    func loadsTheAuthorsBooksModel() throws {
        let model = try XcodeModelLoader.load(
            contentsOf: try CoreDataCorpus.file("authors-books/model.xcdatamodel"))
        #expect(model.entities.map(\.name) == ["Author", "Book"])
        #expect(model.entity(named: "Author")?.relationship(named: "books") == .toMany("books", "Book", inverse: "authors"))
        #expect(model.entity(named: "Book")?.attribute(named: "title") == Attribute("title", .string))
    }

    // MARK: Files that are not models

    @Test func missingPathKeepsTheSpellingItWasGiven() {
        #expect(loadFailure(URL(fileURLWithPath: "no/such/Model.xcdatamodel"))
            == "no/such/Model.xcdatamodel: no such file or directory")
    }

    @Test func missingAbsolutePath() throws {
        try withTemporaryFolder { folder in
            let url = folder.appendingPathComponent("Gone.xcdatamodel")
            #expect(loadFailure(url) == "\(url.path): no such file or directory")
        }
    }

    @Test func directoryWithoutContents() throws {
        try withTemporaryFolder { folder in
            let url = folder.appendingPathComponent("Empty.xcdatamodel")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            #expect(loadFailure(url) == "\(url.path): is a directory without a 'contents' file")
        }
    }

    @Test func emptyFile() throws {
        try withTemporaryFolder { folder in
            let url = try write("", to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): is empty")
        }
    }

    @Test func problemsInsideAFolderNameTheContentsFile() throws {
        try withTemporaryFolder { folder in
            try write("", to: "Blank.xcdatamodel/contents", in: folder)
            let url = folder.appendingPathComponent("Blank.xcdatamodel")
            #expect(loadFailure(url) == "\(url.path)/contents: is empty")
        }
    }

    @Test func textThatIsNotXML() throws {
        try withTemporaryFolder { folder in
            let url = try write("Car: maker, model\nPerson: name\n", to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): is not XML (line 1: expected a start tag ('<'))")
        }
    }

    @Test func brokenXMLNamesTheLine() throws {
        try withTemporaryFolder { folder in
            let text = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model>
                    <entity name="Car"></attribute>
                </model>
                """
            let url = try write(text, to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): is not XML (line 3: a closing tag does not match the open element)")
        }
    }

    @Test func propertyListIsNotAModel() throws {
        try withTemporaryFolder { folder in
            let text = """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0">
                <dict>
                    <key>_XCCurrentVersionName</key>
                    <string>Model.xcdatamodel</string>
                </dict>
                </plist>
                """
            let url = try write(text, to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): is not a Core Data model (the root element is 'plist', expected 'model')")
        }
    }

    @Test func unknownAttributeType() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <attribute name="x" optional="YES" attributeType="Integer 99"/>
                </entity>
                """), to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): entity 'Car': attribute 'x': unknown attributeType 'Integer 99'")
        }
    }

    @Test func badBoolean() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <attribute name="plate" optional="maybe" attributeType="String"/>
                </entity>
                """), to: "contents", in: folder)
            #expect(loadFailure(url) == "\(url.path): entity 'Car': attribute 'plate': 'optional' must be YES or NO, not 'maybe'")
        }
    }

    @Test func inverseMismatchFromModelValidationNamesTheFile() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                    <relationship name="driver" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                </entity>
                <entity name="Person" representedClassName="Person" syncable="YES">
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
                """), to: "contents", in: folder)
            #expect(loadFailure(url)
                == "\(url.path): entity 'Car': relationship 'driver': its inverse 'Person.cars' names 'owner' as its inverse, not 'driver'")
        }
    }

    @Test func inverseEntityThatDiffersFromTheDestination() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Dog"/>
                </entity>
                """), to: "contents", in: folder)
            #expect(loadFailure(url)
                == "\(url.path): entity 'Car': relationship 'owner': inverseEntity 'Dog' differs from destinationEntity 'Person'")
        }
    }

    @Test func unknownAndUnusedElementsAreSkipped() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <somethingNew/>
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <attribute name="plate" attributeType="String">
                        <userInfo>
                            <entry key="note" value="printed on both ends"/>
                        </userInfo>
                    </attribute>
                    <somethingNew kind="unknown"><entity name="Ghost"/></somethingNew>
                    <userInfo>
                        <entry key="owner" value="fleet"/>
                    </userInfo>
                </entity>
                <configuration name="Cloud" usedWithCloudKit="YES">
                    <memberEntity name="Car"/>
                </configuration>
                <userInfo>
                    <entry key="schema" value="2"/>
                </userInfo>
                <elements>
                    <element name="Car" positionX="-63" positionY="-18" width="128" height="44"/>
                </elements>
                """), to: "contents", in: folder)
            let model = try XcodeModelLoader.load(contentsOf: url)
            #expect(model == (try ObjectModel { EntityDescription("Car") { Attribute("plate", .string).required() } }))
        }
    }

    @Test func fetchedPropertiesAndFetchRequestsAreSkipped() throws {
        let found = try declarations("""
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchedProperty name="namesakes" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Person" predicateString="name == $FETCH_SOURCE.name"/>
                </fetchedProperty>
            </entity>
            <fetchRequest name="everyone" entity="Person"/>
            <fetchRequest name="byName" entity="Person" predicateString="name == $NAME" fetchLimit="10"/>
            """)
        #expect(found == [EntityDescription("Person") { Attribute("name", .string) }])
    }

    // MARK: Versioned models

    @Test func versionedModelWithoutMarkerUsesItsOnlyVersion() throws {
        try withTemporaryFolder { folder in
            try write(modelXML("""
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="text" optional="YES" attributeType="String"/>
                </entity>
                """), to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents", in: folder)
            let model = try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Notes.xcdatamodeld"))
            #expect(model.entities.map(\.name) == ["Note"])
        }
    }

    @Test func versionedModelWithoutMarkerAndTwoVersions() throws {
        try withTemporaryFolder { folder in
            let text = modelXML(#"<entity name="Note"><attribute name="text" attributeType="String"/></entity>"#)
            try write(text, to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents", in: folder)
            try write(text, to: "Notes.xcdatamodeld/Notes 2.xcdatamodel/contents", in: folder)
            let url = folder.appendingPathComponent("Notes.xcdatamodeld")
            #expect(loadFailure(url)
                == "\(url.path): has no '.xccurrentversion' to choose among 2 versions ('Notes 2.xcdatamodel', 'Notes.xcdatamodel')")
        }
    }

    @Test func versionedModelNamingAMissingVersion() throws {
        try withTemporaryFolder { folder in
            try write(modelXML(#"<entity name="Note"><attribute name="text" attributeType="String"/></entity>"#),
                      to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents", in: folder)
            try write("""
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Notes 3.xcdatamodel</string></dict></plist>
                """, to: "Notes.xcdatamodeld/.xccurrentversion", in: folder)
            let url = folder.appendingPathComponent("Notes.xcdatamodeld")
            #expect(loadFailure(url)
                == "\(url.path): '.xccurrentversion' names version 'Notes 3.xcdatamodel', which is not a folder here")
        }
    }

    @Test func versionedModelWithAnUnreadableMarker() throws {
        try withTemporaryFolder { folder in
            try write(modelXML(#"<entity name="Note"><attribute name="text" attributeType="String"/></entity>"#),
                      to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents", in: folder)
            let marker = try write("<plist><dict><key>", to: "Notes.xcdatamodeld/.xccurrentversion", in: folder)
            let url = folder.appendingPathComponent("Notes.xcdatamodeld")
            #expect(loadFailure(url) == "\(url.path): '.xccurrentversion' is not a property list")

            // A bare word is a valid old-style property list, but not one that names a version.
            try Data("Notes.xcdatamodel".utf8).write(to: marker)
            #expect(loadFailure(url) == "\(url.path): '.xccurrentversion' does not name a version (no '_XCCurrentVersionName')")
        }
    }

    // MARK: Mapping details

    @Test func readsEveryAttributeField() throws {
        let found = try declarations("""
            <entity name="Trip" representedClassName="Trip" isAbstract="NO" syncable="YES" codeGenerationType="class">
                <attribute name="startsAt" optional="YES" attributeType="Date" defaultDateTimeInterval="694224000" usesScalarValueType="NO"/>
                <attribute name="seats" attributeType="Integer 32" minValueString="1" maxValueString="9" defaultValueString="4" indexed="true" usesScalarValueType="YES"/>
                <attribute name="code" optional="true" transient="YES" attributeType="String" regularExpressionString="[A-Z]{3}"/>
                <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="[String]"/>
                <attribute name="stopCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="stops.@count" usesScalarValueType="YES"/>
            </entity>
            """)
        #expect(found == [
            EntityDescription(name: "Trip", attributes: [
                AttributeDescription(name: "startsAt", type: .date, defaultValue: "694224000"),
                AttributeDescription(
                    name: "seats", type: .integer32, isOptional: false, defaultValue: "4", minValue: "1", maxValue: "9",
                    isIndexed: true),
                AttributeDescription(name: "code", type: .string, isTransient: true, regularExpression: "[A-Z]{3}"),
                AttributeDescription(name: "photo", type: .binaryData),
                AttributeDescription(name: "tags", type: .transformable),
                AttributeDescription(name: "stopCount", type: .integer64, derivation: "stops.@count"),
            ])
        ])
    }

    @Test func readsEveryRelationshipField() throws {
        let found = try declarations("""
            <entity name="Trip" representedClassName="Trip" syncable="YES">
                <relationship name="driver" maxCount="1" deletionRule="Deny" ordered="YES" destinationEntity="Person"/>
                <relationship name="stops" optional="YES" toMany="YES" minCount="2" maxCount="20" deletionRule="Cascade" ordered="YES" destinationEntity="Stop" inverseName="trip" inverseEntity="Stop"/>
                <relationship name="notes" optional="YES" toMany="YES" transient="YES" deletionRule="No Action" destinationEntity="Note"/>
                <relationship name="planner" optional="YES" maxCount="1" destinationEntity="Person" inverseName="trips"/>
            </entity>
            <entity name="Bus" representedClassName="Bus" parentEntity="Trip" isAbstract="YES" syncable="YES"/>
            """)
        #expect(found == [
            EntityDescription(name: "Trip", relationships: [
                RelationshipDescription(name: "driver", destination: "Person", inverse: nil, isToMany: false, isOptional: false, deleteRule: .deny),
                RelationshipDescription(
                    name: "stops", destination: "Stop", inverse: "trip", isToMany: true, isOrdered: true, deleteRule: .cascade,
                    minCount: 2, maxCount: 20),
                RelationshipDescription(name: "notes", destination: "Note", inverse: nil, isToMany: true, isTransient: true, deleteRule: .noAction),
                RelationshipDescription(name: "planner", destination: "Person", inverse: "trips", isToMany: false),
            ]),
            EntityDescription(name: "Bus", isAbstract: true, parent: "Trip"),
        ])
    }

    @Test func readsFetchIndexesAndUniquenessConstraints() throws {
        let found = try declarations("""
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="latitude" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="longitude" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchIndex name="byName">
                    <fetchIndexElement property="name" type="Binary" order="descending"/>
                </fetchIndex>
                <fetchIndex name="byLocation">
                    <fetchIndexElement property="latitude" type="RTree"/>
                    <fetchIndexElement property="longitude" type="RTree"/>
                </fetchIndex>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="latitude"/>
                        <constraint value="longitude"/>
                    </uniquenessConstraint>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            """)
        #expect(found.first?.fetchIndexes == [
            FetchIndexDescription(name: "byName", elements: [.init(property: "name", isAscending: false)]),
            FetchIndexDescription(name: "byLocation", elements: [
                .init(property: "latitude", kind: "RTree"), .init(property: "longitude", kind: "RTree"),
            ]),
        ])
        #expect(found.first?.uniquenessConstraints == [["latitude", "longitude"], ["name"]])
    }

    @Test func declarationsComeOutInFileOrder() throws {
        let found = try declarations("""
            <entity name="Zebra" syncable="YES"/>
            <entity name="Ant" parentEntity="Zebra" syncable="YES"/>
            <entity name="Mole" syncable="YES"/>
            """)
        #expect(found.map(\.name) == ["Zebra", "Ant", "Mole"])
    }

    @Test func collectsEveryProblemInTheFile() {
        let failure = declarationFailure("""
            <entity representedClassName="Nameless" syncable="YES">
                <attribute name="a" attributeType="String"/>
            </entity>
            <entity name="Car" isAbstract="sometimes" syncable="YES">
                <attribute optional="YES" attributeType="String"/>
                <attribute name="b" optional="YES"/>
                <attribute name="c" attributeType="Integer 16" derived="YES"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Explode"/>
                <relationship name="wheels" toMany="YES" minCount="-1" maxCount="four" destinationEntity="Wheel"/>
                <fetchIndex name="byExpression">
                    <fetchIndexElement expression="length:(b)" expressionType="Integer 64" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="sideways">
                    <fetchIndexElement property="b" order="sideways"/>
                    <fetchIndexElement type="Binary"/>
                </fetchIndex>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            """)
        let expected = [
            "entity at line 3: missing 'name'",
            "entity 'Car': 'isAbstract' must be YES or NO, not 'sometimes'",
            "entity 'Car': attribute at line 7: missing 'name'",
            "entity 'Car': attribute 'b': missing 'attributeType'",
            "entity 'Car': attribute 'c': derived=\"YES\" without a derivationExpression",
            "entity 'Car': relationship 'owner': missing 'destinationEntity'",
            "entity 'Car': relationship 'owner': unknown deletionRule 'Explode'",
            "entity 'Car': relationship 'wheels': 'minCount' must be a non-negative integer, not '-1'",
            "entity 'Car': relationship 'wheels': 'maxCount' must be a non-negative integer, not 'four'",
            "entity 'Car': fetch index 'byExpression': expression elements are not supported",
            "entity 'Car': fetch index 'sideways': element 'b': order 'sideways' is not ascending or descending",
            "entity 'Car': fetch index 'sideways': an element is missing 'property'",
            "entity 'Car': a uniqueness constraint element is missing 'value'",
        ]
        #expect(failure == "test.xml: " + expected.joined(separator: "; "))
    }

    @Test func errorDescriptionIsOneLine() throws {
        try withTemporaryFolder { folder in
            let url = try write(modelXML("""
                <entity name="Car">
                    <attribute name="x" attributeType="Integer 99"/>
                    <attribute name="y" attributeType="String" optional="maybe"/>
                </entity>
                """), to: "contents", in: folder)
            let failure = try #require(loadFailure(url))
            #expect(!failure.contains("\n"))
        }
    }
}
