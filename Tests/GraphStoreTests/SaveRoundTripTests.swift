import Foundation
import GRDB
import GraphStore
import Testing

/// Every attribute type survives a save and a read through a fresh coordinator (cold row cache), and lands in the
/// columns `docs/store-layout.md` describes.
@Suite struct SaveRoundTripTests {
    /// One optional attribute of every stored type.
    static func everyTypeModel() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Sample") {
                Attribute("label", .string).required()
                Attribute("int16", .integer16)
                Attribute("int32", .integer32)
                Attribute("int64", .integer64)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("decimal", .decimal)
                Attribute("text", .string)
                Attribute("flag", .boolean)
                Attribute("when", .date)
                Attribute("blob", .binaryData)
                Attribute("uuid", .uuid)
                Attribute("link", .uri)
            }
        }
    }

    /// 2026-03-04 05:06:07.123456 UTC, built from its parts so the fraction is exactly the intended one.
    static let subMillisecondDate: Date = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let whole = calendar.date(from: DateComponents(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7))!
        return Date(timeIntervalSinceReferenceDate: whole.timeIntervalSinceReferenceDate + 0.123456)
    }()

    /// Every sample of a store read through a new coordinator (cold row cache), by label. The context comes back too:
    /// objects hold their context weakly, so the caller keeps it.
    private func reopenSamples(_ fixture: GraphFixture) throws -> (context: ObjectContext, samples: [String: ManagedObject]) {
        let coordinator = try fixture.reopen()
        let context = ObjectContext(coordinator: coordinator, name: "reopened")
        let samples = try context.fetch("Sample")
        let byLabel = Dictionary(uniqueKeysWithValues: samples.map { ($0.value(forKey: "label") as! String, $0) })
        return (context, byLabel)
    }

    /// After the save, an inserted object reads its values from the row it saved (no statement), keeps a transient
    /// value set before the save, and a later change to it saves as an update.
    @Test func savedInsertsReadTheirRowAndKeepTransientValues() throws {
        let model = try ObjectModel {
            EntityDescription("Note") {
                Attribute("title", .string)
                Attribute("draft", .string).transient()
            }
        }
        let fixture = try GraphFixture(model)
        let context = fixture.context()
        let plain = context.insert("Note")
        plain.setValue("plain", forKey: "title")
        let drafted = context.insert("Note")
        drafted.setValue("drafted", forKey: "title")
        drafted.setValue("unsent", forKey: "draft")
        try context.save()
        let reads = try fixture.measure {
            #expect(plain.value(forKey: "title") as? String == "plain")
            #expect(drafted.value(forKey: "title") as? String == "drafted")
            #expect(drafted.value(forKey: "draft") as? String == "unsent")
            #expect(plain.value(forKey: "draft") == nil)
        }
        #expect(reads.statements == 0)
        #expect(!plain.hasChanges && !drafted.hasChanges && !plain.isInserted)
        plain.setValue("renamed", forKey: "title")
        let update = try fixture.measure { try context.save() }
        #expect(update.statements == 1)
        let (_, samples) = try reopenNotes(fixture)
        #expect(samples == ["drafted", "renamed"])
    }

    /// A new object's row is the block its saved snapshot keeps: new objects share their entity's defaults until
    /// each writes its own, an undo step's copy of a row is not written through, and the cached row of a saved
    /// insert does not change when the object is changed again.
    @Test func newObjectsWriteTheirOwnRowsAndTheSavedRowStaysAsSaved() throws {
        let model = try ObjectModel {
            EntityDescription("Note") {
                Attribute("title", .string).defaultValue("untitled")
                Attribute("pages", .integer64).defaultValue("1")
            }
        }
        let fixture = try GraphFixture(model)
        let context = fixture.context()
        context.undoLevels = 10
        let first = context.insert("Note")
        let second = context.insert("Note")
        context.undoGroup(named: "title") { first.setValue("first", forKey: "title") }
        #expect(context.insert("Note").value(forKey: "pages") as? Int64 == 1)
        context.undoGroup(named: "retitle") { first.setValue("first again", forKey: "title") }
        #expect(second.value(forKey: "title") as? String == "untitled")
        context.undo()
        #expect(first.value(forKey: "title") as? String == "first")
        context.redo()
        #expect(first.value(forKey: "title") as? String == "first again")
        second.setValue(Int64(7), forKey: "pages")
        try context.save()

        let cached = try #require(fixture.coordinator.rowCache.snapshot(for: first.objectID))
        #expect(cached.objectID == first.objectID && cached.version == 1)
        #expect(cached.values.contains(.string("first again")) && cached.values.contains(.integer(1)))
        first.setValue("changed after the save", forKey: "title")
        let after = try #require(fixture.coordinator.rowCache.snapshot(for: first.objectID))
        #expect(after.values.contains(.string("first again")) && !after.values.contains(.string("changed after the save")))
        let (_, titles) = try reopenNotes(fixture)
        #expect(titles == ["first again", "untitled", "untitled"])
        let reopened = ObjectContext(coordinator: try fixture.reopen(), name: "pages")
        let pages = try reopened.fetch("Note").compactMap { $0.value(forKey: "pages") as? Int64 }.sorted()
        #expect(pages == [1, 1, 7])
    }

    private func reopenNotes(_ fixture: GraphFixture) throws -> (ObjectContext, [String]) {
        let context = ObjectContext(coordinator: try fixture.reopen(), name: "reopened")
        return (context, try context.fetch("Note").compactMap { $0.value(forKey: "title") as? String }.sorted())
    }

    @Test func integersKeepTheirExtremes() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        let highest = context.insert("Sample")
        highest.setValue("max", forKey: "label")
        highest.setValue(Int16.max, forKey: "int16")
        highest.setValue(Int32.max, forKey: "int32")
        highest.setValue(Int64.max, forKey: "int64")
        let lowest = context.insert("Sample")
        lowest.setValue("min", forKey: "label")
        lowest.setValue(Int16.min, forKey: "int16")
        lowest.setValue(Int32.min, forKey: "int32")
        lowest.setValue(Int64.min, forKey: "int64")
        let zero = context.insert("Sample")
        zero.setValue("zero", forKey: "label")
        zero.setValue(0, forKey: "int16")
        zero.setValue(0, forKey: "int32")
        zero.setValue(0, forKey: "int64")
        let cost = try fixture.measure { try context.save() }
        // One key allocation for the root entity, then one INSERT per object.
        #expect(cost.statements == 4)

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        #expect(samples["max"]?.value(forKey: "int16") as? Int64 == Int64(Int16.max))
        #expect(samples["max"]?.value(forKey: "int32") as? Int64 == Int64(Int32.max))
        #expect(samples["max"]?.value(forKey: "int64") as? Int64 == Int64.max)
        #expect(samples["min"]?.value(forKey: "int16") as? Int64 == Int64(Int16.min))
        #expect(samples["min"]?.value(forKey: "int32") as? Int64 == Int64(Int32.min))
        #expect(samples["min"]?.value(forKey: "int64") as? Int64 == Int64.min)
        #expect(samples["zero"]?.value(forKey: "int64") as? Int64 == 0)
        let stored = try fixture.sqlRows("SELECT ZINT64 FROM ZSAMPLE ORDER BY Z_PK")
        #expect(stored.map { $0[0] as Int64 } == [Int64.max, Int64.min, 0])
    }

    @Test func floatingPointAndDecimalValuesRoundTrip() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        let doubles: [String: Double] = [
            "pi": Double.pi, "tiny": Double.leastNonzeroMagnitude, "huge": -Double.greatestFiniteMagnitude, "third": 1.0 / 3.0,
        ]
        let floats: [String: Float] = ["pi": Float.pi, "tiny": Float.leastNormalMagnitude, "huge": -Float.greatestFiniteMagnitude, "third": 1 / 3]
        let decimals: [String: Decimal] = [
            "pi": Decimal(string: "3.14159")!, "tiny": Decimal(string: "0.1")!,
            "huge": Decimal(string: "-98765432.1")!, "third": Decimal(string: "12345678.90123")!,
        ]
        for label in doubles.keys {
            let sample = context.insert("Sample")
            sample.setValue(label, forKey: "label")
            sample.setValue(doubles[label], forKey: "double")
            sample.setValue(floats[label], forKey: "float")
            sample.setValue(decimals[label], forKey: "decimal")
        }
        try context.save()

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        for label in doubles.keys {
            #expect(samples[label]?.value(forKey: "double") as? Double == doubles[label], "double \(label)")
            let float = (samples[label]?.value(forKey: "float") as? Double).map(Float.init)
            #expect(float == floats[label], "float \(label)")
            #expect(samples[label]?.value(forKey: "decimal") as? Decimal == decimals[label], "decimal \(label)")
        }
    }

    @Test func stringsKeepEveryScriptAndTheEmptyString() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        let texts: [String: String] = [
            "emoji": "Grinning 😀 and family 👨‍👩‍👧‍👦", "cjk": "漢字かな交じり文", "thai": "ภาษาไทย", "empty": "",
            "mixed": "Ünïcödé — 漢字 ภาษาไทย 😀", "quotes": "it's \"quoted\"; DROP TABLE ZSAMPLE; --",
            "nul": "before\u{0}after",
        ]
        for (label, text) in texts {
            let sample = context.insert("Sample")
            sample.setValue(label, forKey: "label")
            sample.setValue(text, forKey: "text")
        }
        let none = context.insert("Sample")
        none.setValue("nil", forKey: "label")
        try context.save()

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        for (label, text) in texts {
            #expect(samples[label]?.value(forKey: "text") as? String == text, "\(label)")
        }
        #expect(samples["nil"]?.value(forKey: "text") == nil)
        #expect(samples["nil"]?.attributeValue(forKey: "text") == .null)
        // The empty string is a value, not NULL.
        let empty = try fixture.sqlRows("SELECT typeof(ZTEXT), length(ZTEXT) FROM ZSAMPLE WHERE ZLABEL = 'empty'")
        #expect(empty.first?[0] as String? == "text")
        #expect(empty.first?[1] as Int? == 0)
        let thai = try fixture.sqlRows("SELECT ZTEXT FROM ZSAMPLE WHERE ZLABEL = 'thai'")
        #expect(thai.first?[0] as String? == "ภาษาไทย")
    }

    @Test func booleansDatesUUIDsAndURIsRoundTrip() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        let uuid = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!
        let link = URL(string: "https://example.com/path?q=漢字&x=1#frag")!
        let yes = context.insert("Sample")
        yes.setValue("yes", forKey: "label")
        yes.setValue(true, forKey: "flag")
        yes.setValue(Self.subMillisecondDate, forKey: "when")
        yes.setValue(uuid, forKey: "uuid")
        yes.setValue(link, forKey: "link")
        let no = context.insert("Sample")
        no.setValue("no", forKey: "label")
        no.setValue(false, forKey: "flag")
        no.setValue(Date(timeIntervalSinceReferenceDate: -1_000_000.5), forKey: "when")
        let none = context.insert("Sample")
        none.setValue("nil", forKey: "label")
        try context.save()

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        #expect(samples["yes"]?.value(forKey: "flag") as? Bool == true)
        #expect(samples["no"]?.value(forKey: "flag") as? Bool == false)
        let when = try #require(samples["yes"]?.value(forKey: "when") as? Date)
        #expect(abs(when.timeIntervalSince(Self.subMillisecondDate)) < 0.000_001)
        let before2001 = try #require(samples["no"]?.value(forKey: "when") as? Date)
        #expect(before2001.timeIntervalSinceReferenceDate == -1_000_000.5)
        #expect(samples["yes"]?.value(forKey: "uuid") as? UUID == uuid)
        #expect(samples["yes"]?.value(forKey: "link") as? URL == link)
        for key in ["flag", "when", "uuid", "link", "blob", "decimal", "double", "int64"] {
            #expect(samples["nil"]?.attributeValue(forKey: key) == .null, "\(key)")
        }

        // A date is seconds since 2001-01-01 as a REAL in a TIMESTAMP column; a UUID is its 16 bytes.
        let columns = try fixture.sqlRows("SELECT name, type FROM pragma_table_info('ZSAMPLE')")
        let types = Dictionary(uniqueKeysWithValues: columns.map { ($0[0] as String, $0[1] as String) })
        #expect(types["ZWHEN"] == "TIMESTAMP")
        #expect(types["ZUUID"] == "BLOB")
        let row = try #require(try fixture.sqlRows("SELECT typeof(ZWHEN), ZWHEN, typeof(ZUUID), ZUUID, ZFLAG, ZLINK FROM ZSAMPLE WHERE ZLABEL = 'yes'").first)
        #expect(row[0] as String == "real")
        #expect(abs((row[1] as Double) - Self.subMillisecondDate.timeIntervalSinceReferenceDate) < 0.000_001)
        #expect(abs((row[1] as Double) - 794_293_567.123456) < 0.000_001)
        #expect(row[2] as String == "blob")
        #expect(row[3] as Data == withUnsafeBytes(of: uuid.uuid) { Data($0) })
        #expect(row[4] as Int64 == 1)
        #expect(row[5] as String == link.absoluteString)
        let nulls = try #require(try fixture.sqlRows("SELECT typeof(ZWHEN), typeof(ZUUID), typeof(ZFLAG) FROM ZSAMPLE WHERE ZLABEL = 'nil'").first)
        #expect([nulls[0], nulls[1], nulls[2]] as [String] == ["null", "null", "null"])
    }

    @Test func binaryDataRoundTripsEmptyAndOneMebibyte() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        var generator = SeededRandom(seed: 0x5EED_F00D)
        let large = generator.bytes(1 << 20)
        let empty = context.insert("Sample")
        empty.setValue("empty", forKey: "label")
        empty.setValue(Data(), forKey: "blob")
        let big = context.insert("Sample")
        big.setValue("big", forKey: "label")
        big.setValue(large, forKey: "blob")
        let none = context.insert("Sample")
        none.setValue("nil", forKey: "label")
        try context.save()

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        #expect(samples["empty"]?.value(forKey: "blob") as? Data == Data())
        let readBack = try #require(samples["big"]?.value(forKey: "blob") as? Data)
        #expect(readBack.count == 1 << 20)
        #expect(readBack == large)
        #expect(samples["nil"]?.value(forKey: "blob") == nil)
        let stored = try fixture.sqlRows("SELECT ZLABEL, typeof(ZBLOB), length(ZBLOB) FROM ZSAMPLE ORDER BY Z_PK")
        #expect(stored.map { "\($0[0] as String) \($0[1] as String) \(($0[2] as Int?) ?? -1)" } == [
            "empty blob 0", "big blob 1048576", "nil null -1",
        ])
    }

    @Test func updatesRoundTripAndClearingAValueWritesNull() throws {
        let fixture = try GraphFixture(try Self.everyTypeModel())
        let context = fixture.context()
        let sample = context.insert("Sample")
        sample.setValue("first", forKey: "label")
        sample.setValue("漢字", forKey: "text")
        sample.setValue(Int32(7), forKey: "int32")
        sample.setValue(UUID(), forKey: "uuid")
        try context.save()

        sample.setValue("😀", forKey: "text")
        sample.setValue(nil, forKey: "uuid")
        sample.setValue(Decimal(string: "19.99")!, forKey: "decimal")
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 1)

        let (reopened, samples) = try reopenSamples(fixture)
        defer { withExtendedLifetime(reopened) {} }
        let reread = try #require(samples["first"])
        #expect(reread.value(forKey: "text") as? String == "😀")
        #expect(reread.value(forKey: "uuid") == nil)
        #expect(reread.value(forKey: "decimal") as? Decimal == Decimal(string: "19.99")!)
        #expect(reread.value(forKey: "int32") as? Int64 == 7)
        let version = try fixture.sqlRows("SELECT Z_OPT FROM ZSAMPLE").first?[0] as Int64?
        #expect(version == 2)
    }

    @Test func changedAndCommittedValuesBeforeAndAfterSave() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let schoolClass = context.insert("Class")
        schoolClass.setValue("1-A", forKey: "name")
        let student = context.insert("Student")
        student.setValue("Aiko", forKey: "name")
        student.setObject(schoolClass, forKey: "class")

        // A new object: its changes are everything set; nothing is committed yet.
        #expect(student.changedValues()["name"] as? String == "Aiko")
        #expect(student.changedValues()["class"] as? ObjectID? == .some(schoolClass.objectID))
        #expect(student.committedValues(forKeys: ["name"]) == ["name": .null])
        try context.save()

        #expect(student.changedValues().isEmpty)
        #expect(schoolClass.changedValues().isEmpty)
        #expect(student.committedValues(forKeys: ["name"]) == ["name": .string("Aiko")])
        #expect(student.committedValues(forKeys: ["class"]) == ["class": .integer(schoolClass.objectID.primaryKey)])

        student.setValue("Aiko Tanaka", forKey: "name")
        #expect(student.changedValues().count == 1)
        #expect(student.changedValues()["name"] as? String == "Aiko Tanaka")
        #expect(student.committedValues(forKeys: ["name"]) == ["name": .string("Aiko")])
        let all = student.committedValues()
        #expect(Set(all.keys) == ["name", "address", "mailingAddress", "class"])
        try context.save()
        #expect(student.changedValues().isEmpty)
        #expect(student.committedValues(forKeys: ["name"]) == ["name": .string("Aiko Tanaka")])

        // A second context sees the committed values on its own copy.
        let otherContext = fixture.context("other")
        let other = otherContext.object(with: student.objectID)
        #expect(other.committedValues(forKeys: ["name"]) == ["name": .string("Aiko Tanaka")])
        #expect(other.changedValues().isEmpty)
    }
}

extension GraphFixture {
    /// Rows of a query, read straight from the file through the store's connections.
    func sqlRows(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try coordinator.store.database.read { db in try Row.fetchAll(db, sql: sql, arguments: arguments) }
    }

    /// Every row of every table (bookkeeping included), each value tagged with its storage class, in a stable order:
    /// equal dumps mean the tables hold the same bytes.
    func tableDump() throws -> [String] {
        try coordinator.store.database.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            var lines: [String] = []
            for table in tables {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table)") {
                    let values = row.databaseValues.map { value -> String in
                        switch value.storage {
                        case .null: "NULL"
                        case .int64(let number): "i\(number)"
                        case .double(let number): "r\(number.bitPattern)"
                        case .string(let text): "t\(text.debugDescription)"
                        case .blob(let data): "b\(data.base64EncodedString())"
                        }
                    }
                    lines.append("\(table): " + values.joined(separator: " | "))
                }
            }
            return lines.sorted()
        }
    }

    /// `Z_PRIMARYKEY.Z_MAX` by entity name.
    func primaryKeyMaxima() throws -> [String: Int64] {
        let rows = try sqlRows("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY")
        return Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as String, $0[1] as Int64) })
    }
}
