import Foundation
import GRDB
import GraphStore
import Testing

/// At most one object per ID per context; unchanged objects are held weakly, changed ones strongly until saved.
@Suite struct UniquingTests {
    /// Saves `count` subjects named "S1"…; returns their IDs in insertion order.
    private func populateSubjects(_ fixture: GraphFixture, count: Int) throws -> [ObjectID] {
        let context = fixture.context("setup")
        let subjects = (1...count).map { number -> ManagedObject in
            let subject = context.insert("Subject")
            subject.setValue("S\(number)", forKey: "name")
            return subject
        }
        try context.save()
        return subjects.map(\.objectID)
    }

    @Test func objectWithTheSameIDTwiceIsTheSameInstance() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 2)
        let context = fixture.context()
        var first: ManagedObject?
        let cost = try fixture.measure {
            first = context.object(with: ids[0])
            #expect(context.object(with: ids[0]) === first)
            #expect(context.registeredObject(for: ids[0]) === first)
        }
        #expect(cost.statements == 0)
        let object = try #require(first)
        #expect(try context.existingObject(with: ids[0]) === object)
        #expect(context.object(with: ids[1]) !== object)
        // Another context has its own instance of the same row.
        let other = fixture.context("other")
        #expect(other.object(with: ids[0]) !== object)
        #expect(other.object(with: ids[0]).objectID == object.objectID)
    }

    @Test func aFetchReturnsTheRegisteredInstances() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 3)
        let context = fixture.context()
        let second = context.object(with: ids[1])
        let edited = try context.existingObject(with: ids[2])
        edited.setValue("edited", forKey: "name")

        let fetched = try context.fetch("Subject")
        #expect(fetched.map(\.objectID) == ids)
        #expect(fetched[1] === second)
        #expect(fetched[2] === edited)
        // A fetch does not overwrite pending changes, faulted or not.
        #expect(fetched[2].value(forKey: "name") as? String == "edited")
        let again = try context.fetch("Subject", returnsObjectsAsFaults: false)
        #expect(zip(again, fetched).allSatisfy { $0 === $1 })
        #expect(again[2].value(forKey: "name") as? String == "edited")
        #expect(again[0] === context.object(with: ids[0]))
        // A fetch matching on a value finds the same instance too.
        let byName = try context.fetch("Subject", where: [("name", .string("S2"))])
        #expect(byName.count == 1 && byName[0] === second)
    }

    @Test func destinationsOfRelationshipsAreTheRegisteredInstances() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let setup = fixture.context("setup")
        let schoolClass = setup.insert("Class")
        schoolClass.setValue("1-A", forKey: "name")
        let student = setup.insert("Student")
        student.setValue("Aiko", forKey: "name")
        student.setObject(schoolClass, forKey: "class")
        try setup.save()

        let context = fixture.context()
        let classObject = context.object(with: schoolClass.objectID)
        let studentObject = context.object(with: student.objectID)
        #expect(studentObject.object(forKey: "class") === classObject)
        #expect(classObject.objects(forKey: "students").first === studentObject)
        #expect(try context.fetch("Student").first === studentObject)
    }

    @Test func unchangedObjectsAreHeldWeakly() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 1_000)
        let context = fixture.context()
        // Fetch and read every object in a scope of its own, so nothing outlives it but what the context keeps.
        func browse() throws {
            let subjects = try context.fetch("Subject")
            #expect(subjects.count == 1_000)
            #expect(context.registeredObjects.count == 1_000)
            #expect(subjects.allSatisfy { ($0.value(forKey: "name") as? String)?.hasPrefix("S") == true })
        }
        let cost = try fixture.measure { try browse() }
        #expect(cost.statements == 1)
        #expect(context.registeredObjects.count < 1_000)
        #expect(context.registeredObjects.isEmpty)
        #expect(context.registeredObject(for: ids[0]) == nil)
        #expect(!context.hasChanges)
        // Asking again makes a new fault, from the row cache: no SQL.
        let again = try fixture.measure {
            #expect(context.object(with: ids[999]).value(forKey: "name") as? String == "S1000")
        }
        #expect(again.statements == 0)
    }

    @Test func aChangedObjectStaysRegisteredWhileNothingElseReferencesIt() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 3)
        let context = fixture.context()
        func change() throws {
            let subjects = try context.fetch("Subject")
            subjects[1].setValue("changed", forKey: "name")
            _ = subjects[0].value(forKey: "name")
        }
        func insert() -> ObjectID {
            let subject = context.insert("Subject")
            subject.setValue("inserted", forKey: "name")
            return subject.objectID
        }
        try change()
        let insertedID = insert()
        #expect(context.registeredObject(for: ids[0]) == nil)
        let changed = try #require(context.registeredObject(for: ids[1]))
        #expect(changed.value(forKey: "name") as? String == "changed")
        #expect(changed.hasChanges)
        #expect(context.registeredObject(for: insertedID)?.isInserted == true)
        #expect(context.registeredObjects.count == 2)
        #expect(context.hasChanges)

        try context.save()
        let stored = try fixture.sqlRows("SELECT ZNAME FROM ZSUBJECT ORDER BY Z_PK").map { $0[0] as String }
        #expect(stored == ["S1", "changed", "S3", "inserted"])
        // Saved, the objects are unchanged again and go as soon as nobody holds them.
        #expect(context.registeredObjects.count == 1)
        #expect(context.registeredObjects.first === changed)
    }

    @Test func aSaveGivesPermanentIDsAndRekeysTheRegistry() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let schoolClass = context.insert("Class")
        schoolClass.setValue("1-A", forKey: "name")
        let student = context.insert("Student")
        student.setValue("Aiko", forKey: "name")
        student.setObject(schoolClass, forKey: "class")
        let temporary = student.objectID
        #expect(temporary.isTemporary)
        #expect(context.object(with: temporary) === student)
        #expect(student.uriRepresentation.hasPrefix("x-coredata:///Student/t"))

        try context.save()
        #expect(!student.objectID.isTemporary)
        #expect(!schoolClass.objectID.isTemporary)
        #expect(!student.isInserted)
        #expect(student.objectID != temporary)
        #expect(context.object(with: student.objectID) === student)
        #expect(context.registeredObject(for: student.objectID) === student)
        #expect(context.registeredObject(for: temporary) == nil)
        #expect(student.uriRepresentation == "x-coredata://\(fixture.coordinator.store.storeUUID)/Student/p\(student.objectID.primaryKey)")
        // Links that named the temporary IDs now name the permanent ones, in memory and on disk.
        #expect(student.object(forKey: "class") === schoolClass)
        #expect(schoolClass.objects(forKey: "students").map(\.objectID) == [student.objectID])
        let row = try fixture.sqlRows("SELECT Z_PK, ZCLASS FROM ZSTUDENT").first
        #expect(row?[0] as Int64? == student.objectID.primaryKey)
        #expect(row?[1] as Int64? == schoolClass.objectID.primaryKey)
        // Another context finds the object under its new ID.
        let other = fixture.context("other")
        #expect(try other.existingObject(with: student.objectID).value(forKey: "name") as? String == "Aiko")
    }

    @Test func aSavedDeletionUnregistersTheObject() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 2)
        let context = fixture.context()
        let doomed = try context.existingObject(with: ids[0])
        context.delete(doomed)
        #expect(context.registeredObject(for: ids[0]) === doomed)
        try context.save()
        #expect(context.registeredObject(for: ids[0]) == nil)
        #expect(try context.fetch("Subject").map(\.objectID) == [ids[1]])
        #expect(throws: ContextError.objectNotFound(uri: fixture.coordinator.uri(for: ids[0]))) {
            try fixture.context("other").existingObject(with: ids[0])
        }
    }

    @Test func savedObjectsNobodyHoldsAreReleasedAndHeldOnesStayUnique() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let kept = context.insert("Subject")
        kept.setValue("Kept", forKey: "name")
        for number in 1...50 {
            context.insert("Subject").setValue("S\(number)", forKey: "name")
        }
        try context.save()
        // The fifty nobody referenced are gone; the one held is registered under its permanent ID.
        #expect(context.registeredObjects.map(\.objectID) == [kept.objectID])
        #expect(context.object(with: kept.objectID) === kept)
        let all = try context.fetch("Subject")
        #expect(all.count == 51)
        #expect(all.contains { $0 === kept })
        // The released ones come back as new instances whose values the save put in the row cache: no SQL.
        let cost = try fixture.measure {
            let names = Set(all.map { $0.value(forKey: "name") as? String ?? "?" })
            #expect(names.count == 51)
        }
        #expect(cost.statements == 0)
    }

    /// An object kept past its context's life finds no context (it does not keep the context alive), reads nothing
    /// new, and lets go cleanly, as do the changed and inserted objects only the context held.
    @Test func objectsThatOutliveTheirContextFindNone() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSubjects(fixture, count: 3)
        weak var gone: ObjectContext?
        var kept: [ManagedObject] = []
        do {
            let context = fixture.context()
            gone = context
            let read = try context.existingObject(with: ids[0])
            #expect(read.context === context)
            kept.append(read)
            kept.append(context.object(with: ids[1]))
            // Held only by the context: a change and an insert.
            try context.existingObject(with: ids[2]).setValue("changed", forKey: "name")
            context.insert("Subject").setValue("new", forKey: "name")
        }
        #expect(gone == nil)
        #expect(kept.allSatisfy { $0.context == nil })
        // What the object read stays readable; a fault it never filled has no context to fill it.
        #expect(kept[0].value(forKey: "name") as? String == "S1")
        #expect(kept[1].isFault)
        #expect(kept[1].value(forKey: "name") == nil)
        kept.removeAll()
    }
}
