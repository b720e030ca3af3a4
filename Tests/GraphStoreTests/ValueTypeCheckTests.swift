import Foundation
import GRDB
import GraphStore
import Testing

/// `check`'s `valueType` rule for every attribute type: what a save writes passes, and each value a column's affinity
/// keeps but the type cannot be read from is named, one violation per value, whichever of a row's columns hold one.
struct ValueTypeCheckTests {
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Sample") {
                Attribute("small", .integer16)
                Attribute("medium", .integer32)
                Attribute("large", .integer64)
                Attribute("flag", .boolean)
                Attribute("ratio", .double)
                Attribute("weight", .float)
                Attribute("price", .decimal)
                Attribute("name", .string)
                Attribute("when", .date)
                Attribute("blob", .binaryData)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
            }
        }
    }

    /// A store with one sample row holding a value of every type, written by a save.
    static func store(in folder: TemporaryDirectory) throws -> String {
        let path = folder.path("samples.sqlite")
        let coordinator = try PersistentStoreCoordinator(path: path, model: try model())
        let context = ObjectContext(coordinator: coordinator, name: "setup")
        let sample = context.insert("Sample")
        let values: [String: Any] = [
            "small": Int16(-300), "medium": Int32(70_000), "large": Int64(1) << 40, "flag": true, "ratio": 0.25, "weight": 2.5,
            "price": Decimal(string: "19.99") as Any, "name": "sample", "when": Date(timeIntervalSinceReferenceDate: 1_000),
            "blob": Data([1, 2, 3]), "identifier": UUID(), "link": URL(string: "https://example.com/a") as Any,
        ]
        for (key, value) in values { sample.setValue(value, forKey: key) }
        try context.save()
        return path
    }

    @Test func valuesASaveWroteOfEveryTypePass() throws {
        let folder = try TemporaryDirectory()
        let report = try StoreIntegrityCheck.run(path: try Self.store(in: folder))
        #expect(report.violations == [])
    }

    @Test(arguments: [
        ("small", "70000", "holds 70000, outside Integer 16's range"),
        ("medium", "3000000000", "holds 3000000000, outside Integer 32's range"),
        ("small", "1.5", "holds real 1.5, which an Integer 16 attribute cannot hold"),
        ("large", "'many'", #"holds text "many", which an Integer 64 attribute cannot hold"#),
        ("flag", "x'01'", "holds blob <1 byte>, which a Boolean attribute cannot hold"),
        ("ratio", "'half'", #"holds text "half", which a Double attribute cannot hold"#),
        ("weight", "x'00'", "holds blob <1 byte>, which a Float attribute cannot hold"),
        ("price", "x'1999'", "holds blob <2 bytes>, which a Decimal attribute cannot hold"),
        ("name", "x'6e616d65'", "holds blob <4 bytes>, which a String attribute cannot hold"),
        ("when", "'2024-01-01'", #"holds text "2024-01-01", which a Date attribute cannot hold"#),
        ("blob", "'text'", #"holds text "text", which a Binary attribute cannot hold"#),
        ("identifier", "x'0102'", "holds blob <2 bytes>, which a UUID attribute cannot hold"),
        ("identifier", "'00000000-0000-0000-0000-000000000000'",
         #"holds text "00000000-0000-0000-0000-000000000000", which a UUID attribute cannot hold"#),
        ("link", "x'00'", "holds blob <1 byte>, which a URI attribute cannot hold"),
    ])
    func aValueTheTypeCannotHoldIsNamed(key: String, literal: String, message: String) throws {
        let folder = try TemporaryDirectory()
        let path = try Self.store(in: folder)
        let column = "Z" + key.uppercased()
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "UPDATE ZSAMPLE SET \(column) = \(literal)") }
        try queue.close()
        let report = try StoreIntegrityCheck.run(path: path)
        #expect(report.violations.map(\.description) == ["valueType Sample.\(key) x-coredata://\(report.storeUUID)/Sample/p1: \(message)"])
    }

    /// One row wrong in two columns gives two violations, and the count goes on past the listing's limit.
    @Test func everyWrongValueIsCountedPastTheLimit() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.store(in: folder)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZSAMPLE SET ZLARGE = 'x', ZNAME = x'07'")
            // Two more rows, copies of the first with new keys.
            try db.execute(sql: "INSERT INTO ZSAMPLE (Z_PK, Z_ENT, Z_OPT, ZSMALL, ZMEDIUM, ZLARGE, ZFLAG, ZRATIO, ZWEIGHT, ZPRICE, ZNAME, ZWHEN, ZBLOB, ZIDENTIFIER, ZLINK) SELECT Z_PK + 1, Z_ENT, Z_OPT, ZSMALL, ZMEDIUM, ZLARGE, ZFLAG, ZRATIO, ZWEIGHT, ZPRICE, ZNAME, ZWHEN, ZBLOB, ZIDENTIFIER, ZLINK FROM ZSAMPLE")
            try db.execute(sql: "INSERT INTO ZSAMPLE (Z_PK, Z_ENT, Z_OPT, ZSMALL, ZMEDIUM, ZLARGE, ZFLAG, ZRATIO, ZWEIGHT, ZPRICE, ZNAME, ZWHEN, ZBLOB, ZIDENTIFIER, ZLINK) SELECT Z_PK + 2, Z_ENT, Z_OPT, ZSMALL, ZMEDIUM, ZLARGE, ZFLAG, ZRATIO, ZWEIGHT, ZPRICE, ZNAME, ZWHEN, ZBLOB, ZIDENTIFIER, ZLINK FROM ZSAMPLE WHERE Z_PK = 1")
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 3")
        }
        try queue.close()
        let all = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: nil))
        #expect(all.violations.map(\.key) == ["large", "name", "large", "name", "large", "name"])
        // Four rows' room holds all three rows; two rows' room leaves one row for SQLite to count.
        for limit in [4, 2] {
            let limited = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: limit))
            #expect(limited.violations.count == limit)
            #expect(limited.violationCount == 6)
        }
    }

    /// A table of more attributes than one statement tests (`valueTypeRulesPerStatement`) is read in several: a
    /// wrong value in the first and in the last attribute are both named.
    @Test func aWideTableIsTestedInSeveralStatements() throws {
        let model = try ObjectModel {
            EntityDescription("Wide") {
                for index in 0..<450 { Attribute("a\(index)", .integer64) }
            }
        }
        let folder = try TemporaryDirectory()
        let path = folder.path("wide.sqlite")
        let coordinator = try PersistentStoreCoordinator(path: path, model: model)
        let context = ObjectContext(coordinator: coordinator, name: "setup")
        let wide = context.insert("Wide")
        for index in 0..<450 { wide.setValue(Int64(index), forKey: "a\(index)") }
        try context.save()
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "UPDATE ZWIDE SET ZA0 = 'x', ZA449 = 'y'") }
        try queue.close()
        let report = try StoreIntegrityCheck.run(path: path)
        #expect(report.violations.map(\.key) == ["a0", "a449"])
    }
}
