@testable import Browser
import Foundation
import GraphStore
import Testing

/// Values as the entity browser shows them: bytes by size and first bytes, Core Data's external-storage markers,
/// dates in a given zone, and the model file's details that name a Transformable's class.
@Suite struct EntityValueTextTests {
    static let utc = ValueText.Setting(timeZone: TimeZone(identifier: "UTC") ?? .current, externalDataFolder: nil)

    static func text(_ value: AttributeValue, _ type: AttributeType, detail: ModelFileDetails.Attribute? = nil,
                     setting: ValueText.Setting = utc, full: Bool = false) -> String {
        ValueText.text(value, of: AttributeDescription(name: "value", type: type), detail: detail, setting: setting, full: full)
    }

    @Test func bytesShowTheirSizeAndFirstBytes() {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A] + Array(repeating: 0xFF, count: 42))
        #expect(Self.text(.data(png), .binaryData) == "48 B  89 50 4e 47 0d 0a ff ff…")
        #expect(Self.text(.data(png), .binaryData, full: true) == "48 B  89 50 4e 47 0d 0a ff ff ff ff ff ff ff ff ff ff…")
        #expect(Self.text(.data(Data([1, 2])), .binaryData) == "2 B  01 02")
        #expect(Self.text(.data(Data()), .binaryData) == "0 B")
        #expect(Self.text(.data(Data(count: 131_072)), .binaryData).hasPrefix("131,072 B  00 00"))
    }

    @Test func aTransformableNamesTheClassTheModelGives() {
        let bytes = Data("bplist00".utf8)
        let detail = ModelFileDetails.Attribute(valueClassName: "NSArray")
        #expect(Self.text(.data(bytes), .transformable, detail: detail) == "NSArray · 8 B  62 70 6c 69 73 74 30 30")
        #expect(Self.text(.data(bytes), .transformable) == "8 B  62 70 6c 69 73 74 30 30")
    }

    @Test func externalStorageMarkersSayWhereTheBytesAre() throws {
        let external = ModelFileDetails.Attribute(allowsExternalStorage: true)
        let name = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
        // 0x02, then the UUID naming the file (Core Data may end it with a NUL).
        let marker = Data([0x02]) + Data(name.utf8) + Data([0])
        #expect(Self.text(.data(marker), .binaryData, detail: external) == "external file \(name)")
        // 0x01, then the bytes themselves.
        let inline = Data([0x01, 0xCA, 0xFE])
        #expect(Self.text(.data(inline), .binaryData, detail: external) == "2 B  ca fe")
        #expect(Self.text(.data(inline), .binaryData, detail: external, full: true) == "2 B  ca fe  (kept in the store)")
        // Without the model's word that the value may be external, the bytes are only bytes.
        #expect(Self.text(.data(inline), .binaryData) == "3 B  01 ca fe")
        // In the object pane, whether the file is there and its size.
        let folder = TemporaryFolder()
        let support = folder.path(".store_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(atPath: support, withIntermediateDirectories: true)
        let setting = ValueText.Setting(timeZone: Self.utc.timeZone, externalDataFolder: support)
        #expect(Self.text(.data(marker), .binaryData, detail: external, setting: setting, full: true)
            == "external file \(name) (not found in _EXTERNAL_DATA)")
        try Data(count: 2_048).write(to: URL(fileURLWithPath: support + "/" + name))
        #expect(Self.text(.data(marker), .binaryData, detail: external, setting: setting, full: true)
            == "external file \(name) (2,048 B)")
        // A marker followed by anything but a UUID is not taken for one.
        #expect(Self.text(.data(Data([0x02, 0x41])), .binaryData, detail: external) == "2 B  02 41")
    }

    @Test func datesAreShownInTheGivenZone() throws {
        // 639503569.638733 seconds after 2001-01-01 UTC, as a Core Data store keeps it.
        let date = Date(timeIntervalSinceReferenceDate: 639_503_569.638_733)
        #expect(Self.text(.date(date), .date) == "2021-04-07 15:52:49")
        let berlin = ValueText.Setting(timeZone: try #require(TimeZone(secondsFromGMT: 7_200)), externalDataFolder: nil)
        #expect(Self.text(.date(date), .date, setting: berlin) == "2021-04-07 17:52:49")
        #expect(Self.text(.date(date), .date, setting: berlin, full: true) == "2021-04-07 17:52:49.638 +02:00")
        let west = ValueText.Setting(timeZone: try #require(TimeZone(secondsFromGMT: -16_200)), externalDataFolder: nil)
        #expect(Self.text(.date(date), .date, setting: west, full: true) == "2021-04-07 11:22:49.638 -04:30")
        #expect(Self.text(.date(Date(timeIntervalSinceReferenceDate: .infinity)), .date) == "inf s after 2001-01-01")
    }

    @Test func numbersFlagsAndIdentifiers() throws {
        #expect(Self.text(.decimal(try #require(Decimal(string: "12345.678"))), .decimal) == "12345.678")
        #expect(Self.text(.integer(1), .boolean) == "yes")
        #expect(Self.text(.boolean(false), .boolean) == "no")
        #expect(Self.text(.integer(-42), .integer64) == "-42")
        #expect(Self.text(.double(0.5), .double) == "0.5")
        let uuid = try #require(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))
        #expect(Self.text(.uuid(uuid), .uuid) == "6f9619ff-8b86-d011-b42d-00c04fc964ff")
        #expect(Self.text(.null, .string) == "—")
    }

    @Test func controlCharactersAreEscaped() throws {
        #expect(Self.text(.string("a\nb\u{1B}]0;title\u{07}c\u{9B}"), .string) == "a\\nb\\u{1B}]0;title\\u{7}c\\u{9B}")
        #expect(Self.text(.uri(try #require(URL(string: "https://example.com/a%0Ab"))), .uri) == "https://example.com/a%0Ab")
    }

    @Test func theModelFileNamesClassesAndExternalStorage() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Photo" representedClassName="Photo" syncable="YES">
                    <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="[String]"/>
                    <attribute name="title" optional="YES" attributeType="String"/>
                </entity>
                <entity name="Portrait" parentEntity="Photo" syncable="YES"/>
            </model>
            """
        let details = ModelFileDetails.parse(Data(xml.utf8))
        #expect(details.attributes.count == 2)
        #expect(details.attribute("image", of: ["Portrait", "Photo"])?.allowsExternalStorage == true)
        #expect(details.attribute("tags", of: ["Photo"]) == ModelFileDetails.Attribute(
            valueClassName: "[String]", valueTransformerName: "NSSecureUnarchiveFromData"))
        #expect(details.attribute("title", of: ["Photo"]) == nil)
    }
}
