import Foundation
import GraphStore
import Testing

/// Statement, hit and miss counts for faults, as the published experiments measured them in Core Data.
@Suite struct FaultingTests {
    /// One class with three students; each student has an address and two of three subjects. Returns the IDs.
    private func populateStudents(_ fixture: GraphFixture) throws -> (students: [ObjectID], subjects: [ObjectID], classID: ObjectID) {
        let context = fixture.context("setup")
        let schoolClass = context.insert("Class")
        schoolClass.setValue("1-A", forKey: "name")
        let subjects = ["Math", "Art", "Music"].map { name -> ManagedObject in
            let subject = context.insert("Subject")
            subject.setValue(name, forKey: "name")
            return subject
        }
        var students: [ManagedObject] = []
        for (offset, name) in ["Aiko", "Budi", "Chaiya"].enumerated() {
            let student = context.insert("Student")
            student.setValue(name, forKey: "name")
            let address = context.insert("Address")
            address.setValue("\(offset + 1) Main St", forKey: "street")
            student.setObject(address, forKey: "address")
            student.setObject(schoolClass, forKey: "class")
            student.add(subjects[offset], toKey: "subjects")
            student.add(subjects[(offset + 1) % 3], toKey: "subjects")
            students.append(student)
        }
        try context.save()
        return (students.map(\.objectID), subjects.map(\.objectID), schoolClass.objectID)
    }

    @Test func attributeAccessOnAFaultIsAMissThenAHit() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let recorder = SQLRecorder(fixture.coordinator)
        let first = fixture.context("first")
        let cold = first.object(with: ids.students[0])
        #expect(cold.isFault)
        #expect(cold.value(forKey: "name") as? String == "Aiko")
        #expect(!cold.isFault)
        assertCost(recorder, statements: 1, hits: 0, misses: 1)
        assertSQL(recorder, ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZADDRESS, t0.ZMAILINGADDRESS, t0.ZCLASS FROM ZSTUDENT t0 WHERE t0.Z_PK = ?"])
        recorder.reset()
        let second = fixture.context("second")
        let warm = second.object(with: ids.students[0])
        #expect(warm.isFault)
        #expect(warm.value(forKey: "name") as? String == "Aiko")
        assertCost(recorder, statements: 0, hits: 1, misses: 0)
        withExtendedLifetime((first, second)) {}
    }

    /// An object does not keep its context alive: a fault fired after the context went reads nothing, runs no SQL,
    /// and says why instead of passing for an empty row.
    @Test func aFaultWhoseContextWasReleasedSaysSo() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        let recorder = SQLRecorder(fixture.coordinator)
        let student = fixture.context("released at once").object(with: ids.students[0])
        #expect(student.context == nil && student.isFault)
        #expect(student.value(forKey: "name") == nil)
        assertCost(recorder, statements: 0, hits: 0, misses: 0)
        let error = try #require(student.faultError)
        #expect(error == .contextReleased(object: "Student \(ids.students[0])"))
        #expect(error.description.hasSuffix("is a fault whose context was released: keep the context while its objects are read"))
    }

    /// A fault calls into its context without retaining it on the way in (every object's fault and release do). An
    /// observer is caller code that may let go of the last reference to the context while the fault is under way:
    /// the fault still finishes, from the row cache or by SQL, and the context goes once it returns.
    @Test(arguments: [true, false])
    func anObserverMayLetGoOfTheContextDuringAFault(cached: Bool) throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        if cached {
            let warming = fixture.context("warms the cache")
            withExtendedLifetime(warming) { _ = warming.object(with: ids.students[0]).value(forKey: "name") }
        }
        final class Holder: @unchecked Sendable { var context: ObjectContext? }
        let holder = Holder()
        holder.context = fixture.context("held by the observer's holder only")
        weak let released = holder.context
        let student = try #require(holder.context?.object(with: ids.students[0]))
        // The first event: a miss's statement, while the fault still has the row to take; a hit's fault event.
        let token = fixture.coordinator.events.addObserver { _ in holder.context = nil }
        defer { fixture.coordinator.events.removeObserver(token) }
        let recorder = SQLRecorder(fixture.coordinator)
        #expect(student.value(forKey: "name") as? String == "Aiko")
        assertCost(recorder, statements: cached ? 0 : 1, hits: cached ? 1 : 0, misses: cached ? 0 : 1)
        #expect(holder.context == nil && released == nil && student.context == nil)
        #expect(!student.isFault && student.faultError == nil)
    }

    @Test func toOneTraversalRunsNoSQLUntilTheDestinationIsRead() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let context = fixture.context()
        let student = context.object(with: ids.students[1])
        _ = student.value(forKey: "name")
        var address: ManagedObject?
        let traversal = try fixture.measure { address = student.object(forKey: "address") }
        #expect(traversal.statements == 0)
        #expect(address?.isFault == true)
        let read = try fixture.measure { #expect(address?.value(forKey: "street") as? String == "2 Main St") }
        #expect(read.statements == 1)
        #expect(read.cacheMisses == 1)
    }

    @Test func toManyFirstAccessIsOneIDQueryThenOneQueryPerObjectTouched() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let context = fixture.context()
        let schoolClass = context.object(with: ids.classID)
        var students: [ManagedObject] = []
        let ids1 = try fixture.measure { students = schoolClass.objects(forKey: "students") }
        #expect(ids1.statements == 1)
        #expect(ids1.relationshipFaults == 1)
        #expect(ids1.relationshipFaultRows == 3)
        #expect(students.allSatisfy { $0.isFault })
        let touched = try fixture.measure { for student in students.prefix(2) { _ = student.value(forKey: "name") } }
        #expect(touched.statements == 2)
        #expect(touched.cacheMisses == 2)
        let again = try fixture.measure { #expect(schoolClass.count(forKey: "students") == 3) }
        #expect(again.statements == 0)
    }

    @Test func relationshipFaultSQLIsCoreDatas() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateStudents(fixture)
        let context = fixture.context()
        let recorder = SQLRecorder(fixture.coordinator)
        _ = context.object(with: ids.classID).objects(forKey: "students")
        _ = context.object(with: ids.students[0]).objects(forKey: "subjects")
        _ = context.object(with: ids.subjects[0]).objects(forKey: "students")
        assertSQL(recorder, [
            "SELECT 0, t0.Z_PK FROM ZSTUDENT t0 WHERE t0.ZCLASS = ?",
            "SELECT 0, t0.Z_PK FROM Z_3SUBJECTS t1 JOIN ZSUBJECT t0 ON t0.Z_PK = t1.Z_4SUBJECTS WHERE t1.Z_3STUDENTS = ?",
            "SELECT 0, t0.Z_PK FROM Z_3SUBJECTS t1 JOIN ZSTUDENT t0 ON t0.Z_PK = t1.Z_3STUDENTS WHERE t1.Z_4SUBJECTS = ?",
        ])
    }

    /// From LINE's engineering blog on Core Data relationships: fetch students with their property values, touch `address.street`: 2 statements in all.
    @Test func articleToOneExampleCostsTwoStatements() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        _ = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let context = fixture.context()
        let cost = try fixture.measure {
            let student = try context.fetch("Student", returnsObjectsAsFaults: false).first!
            _ = student.object(forKey: "address")?.value(forKey: "street")
        }
        #expect(cost.statements == 2)
        #expect(cost.fetches == 1)
        #expect(cost.cacheMisses == 1)
    }

    /// From LINE's engineering blog on Core Data relationships: fetch students, touch `subjects`, then the first subject's name: 3 statements.
    @Test func articleToManyExampleCostsThreeStatements() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        _ = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let context = fixture.context()
        let cost = try fixture.measure {
            let student = try context.fetch("Student", returnsObjectsAsFaults: false).first!
            let subjects = student.objects(forKey: "subjects")
            _ = subjects.first?.value(forKey: "name")
        }
        #expect(cost.statements == 3)
        #expect(cost.relationshipFaults == 1)
    }

    @Test func fetchedObjectsAreFaultsServedByTheRowCache() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        _ = try populateStudents(fixture)
        fixture.coordinator.rowCache.removeAll()
        let context = fixture.context()
        let recorder = SQLRecorder(fixture.coordinator)
        let students = try context.fetch("Student")
        assertCost(recorder, statements: 1, hits: 0, misses: 0)
        #expect(students.count == 3 && students.allSatisfy { $0.isFault })
        recorder.reset()
        for student in students { _ = student.value(forKey: "name") }
        assertCost(recorder, statements: 0, hits: 3, misses: 0)
    }

    @Test func addingToAHugeToManyCostsTheSameStatementsAsToASmallOne() throws {
        let model = try ObjectModel {
            EntityDescription("Chat") {
                Attribute("title", .string)
                Relationship.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
            }
            EntityDescription("Message") {
                Attribute("text", .string)
                Relationship.toOne("chat", "Chat", inverse: "messages")
            }
        }
        let fixture = try GraphFixture(model)
        func chat(with messageCount: Int) throws -> ObjectID {
            let context = fixture.context("setup")
            let chat = context.insert("Chat")
            chat.setValue("\(messageCount)", forKey: "title")
            try context.save()
            let chatKey = chat.objectID.primaryKey
            // Bulk rows through SQL: the point is the size of the chat, not how it was filled.
            try fixture.coordinator.store.databaseWriter().write { db in
                try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(messageCount)) INSERT INTO ZMESSAGE (Z_ENT, Z_OPT, ZTEXT, ZCHAT) SELECT 2, 1, 'm' || i, \(chatKey) FROM n")
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZMESSAGE) WHERE Z_ENT = 2")
            }
            return chat.objectID
        }
        func costOfAddingOneMessage(to chatID: ObjectID) throws -> GraphCounters.Totals {
            let context = fixture.context()
            return try fixture.measure {
                let chat = try context.existingObject(with: chatID)
                let message = context.insert("Message")
                message.setValue("hello", forKey: "text")
                chat.add(message, toKey: "messages")
                try context.save()
            }
        }
        let small = try costOfAddingOneMessage(to: try chat(with: 10))
        let huge = try costOfAddingOneMessage(to: try chat(with: 100_000))
        #expect(small.statements == huge.statements)
        #expect(huge.relationshipFaults == 0)
        // Neither chat's to-many is read: ten messages or 100,000, the same two statements.
        #expect(huge.statements == 2)
    }
}
