import Foundation
import GraphStore
import Testing

/// Each merge policy settling the same conflict, with the other writer a second context on the same coordinator or
/// another process (the `sqlite3` shell) writing the same file.
@Suite struct MergePolicyTests {
    enum Writer: String, CaseIterable, CustomTestStringConvertible {
        case context
        case process
        var testDescription: String { rawValue }
    }

    /// What the store's row of Ann holds.
    struct Row: Equatable, CustomStringConvertible {
        let name: String?
        let startDate: Date?
        let salary: Decimal?
        var description: String { "\(name ?? "nil"), \(startDate.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil"), \(salary.map { "\($0)" } ?? "nil")" }
    }

    static let otherStart = Date(timeIntervalSinceReferenceDate: 1_000)
    static let ourStart = Date(timeIntervalSinceReferenceDate: 2_000)

    static func sqlite3(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-cmd", ".timeout 5000", path, sql]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "sqlite3: \(message)")
    }

    /// The other writer renames Ann and sets her start date (one version on).
    private func otherWriterEdits(_ writer: Writer, _ fixture: GraphFixture, ann: ObjectID) throws {
        switch writer {
        case .context:
            let other = fixture.context("other")
            let annThere = try other.existingObject(with: ann)
            annThere.setValue("Ann (other)", forKey: "name")
            annThere.setValue(Self.otherStart, forKey: "startDate")
            try other.save()
        case .process:
            try Self.sqlite3(fixture.path, """
                UPDATE ZEMPLOYEE SET ZNAME = 'Ann (other)', ZSTARTDATE = \(Self.otherStart.timeIntervalSinceReferenceDate), \
                Z_OPT = Z_OPT + 1 WHERE Z_PK = \(ann.primaryKey)
                """)
        }
    }

    private func otherWriterDeletes(_ writer: Writer, _ fixture: GraphFixture, ann: ObjectID, staff: MergeTests.Staff) throws {
        switch writer {
        case .context:
            let other = fixture.context("other")
            // Her reports let go of her in the same save (the rule on `reports` is Deny).
            for id in [staff.bob, staff.dave] { try other.existingObject(with: id).setValue(nil, forKey: "manager") }
            other.delete(try other.existingObject(with: ann))
            try other.save()
        case .process:
            try Self.sqlite3(fixture.path, """
                UPDATE ZEMPLOYEE SET ZMANAGER = NULL, Z_OPT = Z_OPT + 1 WHERE ZMANAGER = \(ann.primaryKey); \
                DELETE FROM ZEMPLOYEE WHERE Z_PK = \(ann.primaryKey)
                """)
        }
    }

    private func row(_ fixture: GraphFixture, _ id: ObjectID) throws -> Row? {
        let context = ObjectContext(coordinator: try fixture.reopen(), name: "check")
        guard let object = try? context.existingObject(with: id) else { return nil }
        return Row(name: object.value(forKey: "name") as? String, startDate: object.value(forKey: "startDate") as? Date,
                   salary: object.value(forKey: "salary") as? Decimal)
    }

    /// This context read Ann (name Ann, no start date, salary 100); the other writer renamed her and set a start
    /// date; this context then set her start date and salary, and saves.
    @Test(arguments: MergePolicy.allCases, Writer.allCases)
    func eachPolicySettlesAnEditConflict(policy: MergePolicy, writer: Writer) throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try MergeTests.populateStaff(fixture)
        let ours = fixture.context("ours")
        ours.mergePolicy = policy
        let ann = try ours.existingObject(with: staff.ann)
        #expect(ann.value(forKey: "name") as? String == "Ann")

        try otherWriterEdits(writer, fixture, ann: staff.ann)
        ann.setValue(Self.ourStart, forKey: "startDate")
        ann.setValue(Decimal(300), forKey: "salary")

        let theirs = Row(name: "Ann (other)", startDate: Self.otherStart, salary: 100)
        let expected: Row
        switch policy {
        case .error:
            #expect(throws: ContextError.optimisticLockingConflict(uris: [ours.uri(for: staff.ann)])) { try ours.save() }
            #expect(try row(fixture, staff.ann) == theirs)
            #expect(ann.hasChanges)
            return
        case .rollback: expected = theirs
        case .overwrite: expected = Row(name: "Ann", startDate: Self.ourStart, salary: 300)
        case .storeTrump: expected = Row(name: "Ann (other)", startDate: Self.otherStart, salary: 300)
        case .objectTrump: expected = Row(name: "Ann (other)", startDate: Self.ourStart, salary: 300)
        }
        try ours.save()
        #expect(try row(fixture, staff.ann) == expected)
        // The object now holds what was saved, and nothing is left to save.
        #expect(!ours.hasChanges)
        #expect(Row(name: ann.value(forKey: "name") as? String, startDate: ann.value(forKey: "startDate") as? Date,
                    salary: ann.value(forKey: "salary") as? Decimal) == expected)
        // Bob, untouched by either writer, kept his row.
        #expect(try row(fixture, staff.bob) == Row(name: "Bob", startDate: nil, salary: 100))
        // A further change saves cleanly at the new version.
        ann.setValue(Decimal(301), forKey: "salary")
        try ours.save()
        #expect(try row(fixture, staff.ann)?.salary == 301)
    }

    /// This context deletes Dave after the other writer renamed him.
    @Test(arguments: MergePolicy.allCases, Writer.allCases)
    func eachPolicySettlesADeleteConflict(policy: MergePolicy, writer: Writer) throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try MergeTests.populateStaff(fixture)
        let ours = fixture.context("ours")
        ours.mergePolicy = policy
        let dave = try ours.existingObject(with: staff.dave)
        #expect(dave.value(forKey: "name") as? String == "Dave")
        switch writer {
        case .context:
            let other = fixture.context("other")
            try other.existingObject(with: staff.dave).setValue("Dave (other)", forKey: "name")
            try other.save()
        case .process:
            try Self.sqlite3(fixture.path, "UPDATE ZEMPLOYEE SET ZNAME = 'Dave (other)', Z_OPT = Z_OPT + 1 WHERE Z_PK = \(staff.dave.primaryKey)")
        }
        ours.delete(dave)
        switch policy {
        case .error:
            #expect(throws: ContextError.optimisticLockingConflict(uris: [ours.uri(for: staff.dave)])) { try ours.save() }
            #expect(try row(fixture, staff.dave)?.name == "Dave (other)")
        case .rollback:
            // The store's row wins: Dave stays, as the other writer left him.
            try ours.save()
            #expect(try row(fixture, staff.dave)?.name == "Dave (other)")
            #expect(!dave.isDeleted)
            #expect(dave.value(forKey: "name") as? String == "Dave (other)")
        case .overwrite, .storeTrump, .objectTrump:
            // There is no property to settle: the delete goes ahead.
            try ours.save()
            #expect(try row(fixture, staff.dave) == nil)
        }
        #expect(!ours.hasChanges || policy == .error)
    }

    /// The other writer deleted Ann's row; this context's edit of her has nowhere to go.
    @Test(arguments: MergePolicy.allCases, Writer.allCases)
    func anEditOfARowDeletedElsewhere(policy: MergePolicy, writer: Writer) throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try MergeTests.populateStaff(fixture)
        let ours = fixture.context("ours")
        ours.mergePolicy = policy
        let ann = try ours.existingObject(with: staff.ann)
        #expect(ann.value(forKey: "name") as? String == "Ann")
        try otherWriterDeletes(writer, fixture, ann: staff.ann, staff: staff)
        ann.setValue(Decimal(300), forKey: "salary")
        if policy == .error {
            #expect(throws: ContextError.optimisticLockingConflict(uris: [ours.uri(for: staff.ann)])) { try ours.save() }
        } else {
            try ours.save()
            #expect(ann.isDeleted)
            #expect(!ours.hasChanges)
        }
        #expect(try row(fixture, staff.ann) == nil)
    }
}
