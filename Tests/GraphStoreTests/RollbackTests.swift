import Foundation
import GRDB
import GraphStore
import Testing

/// `rollback()` discards every unsaved change; a failed save changes nothing on disk and keeps the context's changes.
@Suite struct RollbackTests {
    private struct School {
        let firstClass: ObjectID
        let secondClass: ObjectID
        let aiko: ObjectID
        let budi: ObjectID
        let address: ObjectID
        let math: ObjectID
    }

    /// Class 1-A with Aiko (who has an address and takes Math) and Budi; class 1-B is empty.
    private func populateSchool(_ fixture: GraphFixture) throws -> School {
        let context = fixture.context("setup")
        func make(_ entity: String, _ name: String) -> ManagedObject {
            let object = context.insert(entity)
            object.setValue(name, forKey: entity == "Address" ? "street" : "name")
            return object
        }
        let first = make("Class", "1-A")
        let second = make("Class", "1-B")
        let aiko = make("Student", "Aiko")
        let budi = make("Student", "Budi")
        let address = make("Address", "1 Main St")
        let math = make("Subject", "Math")
        aiko.setObject(first, forKey: "class")
        budi.setObject(first, forKey: "class")
        aiko.setObject(address, forKey: "address")
        aiko.add(math, toKey: "subjects")
        try context.save()
        return School(firstClass: first.objectID, secondClass: second.objectID, aiko: aiko.objectID, budi: budi.objectID,
                      address: address.objectID, math: math.objectID)
    }

    private func names(_ objects: [ManagedObject]) -> Set<String> {
        Set(objects.map { $0.value(forKey: "name") as? String ?? "?" })
    }

    @Test func insertedObjectsVanish() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSchool(fixture)
        let context = fixture.context()
        let schoolClass = context.object(with: ids.firstClass)
        let aiko = context.object(with: ids.aiko)
        #expect(names(schoolClass.objects(forKey: "students")) == ["Aiko", "Budi"])
        let chaiya = context.insert("Student")
        chaiya.setValue("Chaiya", forKey: "name")
        chaiya.setObject(schoolClass, forKey: "class")
        let art = context.insert("Subject")
        art.setValue("Art", forKey: "name")
        aiko.add(art, toKey: "subjects")
        let (chaiyaID, artID) = (chaiya.objectID, art.objectID)
        #expect(names(schoolClass.objects(forKey: "students")) == ["Aiko", "Budi", "Chaiya"])
        #expect(context.insertedObjects.count == 2)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty)
        #expect(context.registeredObject(for: chaiyaID) == nil)
        #expect(context.registeredObject(for: artID) == nil)
        #expect(!context.registeredObjects.contains(chaiya))
        #expect(names(try context.fetch("Student")) == ["Aiko", "Budi"])
        #expect(names(try context.fetch("Subject")) == ["Math"])
        // Neither side of a relationship remembers the vanished objects.
        #expect(names(schoolClass.objects(forKey: "students")) == ["Aiko", "Budi"])
        #expect(names(aiko.objects(forKey: "subjects")) == ["Math"])
        #expect(!schoolClass.hasChanges && !aiko.hasChanges)
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 0)
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM ZSTUDENT").first?[0] as Int64? == 2)
    }

    @Test func editsRevertToTheCommittedValues() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSchool(fixture)
        let context = fixture.context()
        let aiko = context.object(with: ids.aiko)
        let first = context.object(with: ids.firstClass)
        let second = context.object(with: ids.secondClass)
        let address = context.object(with: ids.address)
        let math = context.object(with: ids.math)
        #expect(math.count(forKey: "students") == 1)
        aiko.setValue("Aiko Tanaka", forKey: "name")
        aiko.setObject(second, forKey: "class")
        aiko.setObject(nil, forKey: "address")
        aiko.remove(math, fromKey: "subjects")
        #expect(second.objects(forKey: "students") == [aiko])
        #expect(address.object(forKey: "student") == nil)
        #expect(math.objects(forKey: "students").isEmpty)
        #expect(context.updatedObjects.count >= 4)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        #expect(aiko.changedValues().isEmpty)
        #expect(aiko.value(forKey: "name") as? String == "Aiko")
        #expect(aiko.object(forKey: "class") === first)
        #expect(aiko.object(forKey: "address") === address)
        #expect(address.object(forKey: "student") === aiko)
        #expect(names(aiko.objects(forKey: "subjects")) == ["Math"])
        #expect(names(math.objects(forKey: "students")) == ["Aiko"])
        #expect(names(first.objects(forKey: "students")) == ["Aiko", "Budi"])
        #expect(second.objects(forKey: "students").isEmpty)
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 0)
        #expect(try fixture.sqlRows("SELECT ZNAME, Z_OPT FROM ZSTUDENT WHERE Z_PK = ?", [ids.aiko.primaryKey]).first.map { [$0[0], "\($0[1] as Int64)"] as [String] } == ["Aiko", "1"])
    }

    @Test func deletionsAreUndone() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSchool(fixture)
        let context = fixture.context()
        let budi = try context.existingObject(with: ids.budi)
        context.delete(budi)
        #expect(budi.isDeleted)
        #expect(context.deletedObjects == [budi])

        context.rollback()
        #expect(!budi.isDeleted)
        #expect(context.deletedObjects.isEmpty)
        #expect(!context.hasChanges)
        #expect(budi.value(forKey: "name") as? String == "Budi")
        #expect(try context.fetch("Student").contains(budi))
        #expect(try context.existingObject(with: ids.budi) === budi)
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 0)
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM ZSTUDENT").first?[0] as Int64? == 2)
    }

    @Test func aConflictingSaveLeavesTheStoreUnchangedAndTheContextItsChanges() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populateSchool(fixture)
        let a = fixture.context("A")
        let b = fixture.context("B")
        let budiB = try b.existingObject(with: ids.budi)
        _ = budiB.value(forKey: "name")
        try a.existingObject(with: ids.budi).setValue("Budi (A)", forKey: "name")
        try a.save()

        // B inserts into several entities, links, edits, deletes and edits the row A changed.
        let aikoB = b.object(with: ids.aiko)
        let chaiya = b.insert("Student")
        chaiya.setValue("Chaiya", forKey: "name")
        let street = b.insert("Address")
        street.setValue("3 Side St", forKey: "street")
        chaiya.setObject(street, forKey: "address")
        chaiya.add(b.object(with: ids.math), toKey: "subjects")
        aikoB.setValue("Aiko (B)", forKey: "name")
        b.delete(b.object(with: ids.address))
        budiB.setValue("Budi (B)", forKey: "name")
        let temporaryIDs = [chaiya.objectID, street.objectID]
        let dump = try fixture.tableDump()
        let maxima = try fixture.primaryKeyMaxima()

        #expect(throws: ContextError.optimisticLockingConflict(uris: [b.uri(for: ids.budi)])) { try b.save() }
        #expect(try fixture.tableDump() == dump)
        #expect(try fixture.primaryKeyMaxima() == maxima)
        #expect(chaiya.objectID == temporaryIDs[0] && street.objectID == temporaryIDs[1])
        #expect(temporaryIDs.allSatisfy { $0.isTemporary })
        #expect(b.registeredObject(for: temporaryIDs[0]) === chaiya)
        #expect(b.hasChanges)
        #expect(b.insertedObjects.count == 2 && b.deletedObjects.count == 1 && b.updatedObjects.count >= 2)
        #expect(chaiya.object(forKey: "address") === street)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko (B)")

        // Rolled back, B is clean and the store still unchanged.
        b.rollback()
        #expect(!b.hasChanges)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko")
        try b.save()
        #expect(try fixture.tableDump() == dump)
    }

    @Test func aUniquenessViolationLeavesTheStoreUnchangedAndTheContextItsChanges() throws {
        let fixture = try GraphFixture(try ExperimentModels.quakes())
        let setup = fixture.context("setup")
        let japan = setup.insert("Country")
        japan.setValue("Japan", forKey: "name")
        let quake = setup.insert("Quake")
        for (key, value) in [("code", "q1"), ("place", "Off Honshu")] { quake.setValue(value, forKey: key) }
        quake.setValue(6.1, forKey: "magnitude")
        quake.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "time")
        quake.add(japan, toKey: "countries")
        try setup.save()

        let context = fixture.context()
        let chile = context.insert("Country")
        chile.setValue("Chile", forKey: "name")
        let duplicate = context.insert("Country")
        duplicate.setValue("Japan", forKey: "name")
        let second = context.insert("Quake")
        for (key, value) in [("code", "q2"), ("place", "Pacific")] { second.setValue(value, forKey: key) }
        second.setValue(7.0, forKey: "magnitude")
        second.setValue(Date(timeIntervalSinceReferenceDate: 800_000_100), forKey: "time")
        second.add(chile, toKey: "countries")
        second.add(context.object(with: japan.objectID), toKey: "countries")
        let first = try context.existingObject(with: quake.objectID)
        first.setValue(6.3, forKey: "magnitude")
        let temporary = [chile.objectID, duplicate.objectID, second.objectID]
        let dump = try fixture.tableDump()
        let maxima = try fixture.primaryKeyMaxima()

        do {
            try context.save()
            Issue.record("a duplicate country name must not be saved")
        } catch let error {
            // Validation finds the duplicate before the transaction starts.
            guard case .validation(let failures) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failures.map(\.reason) == ["is not unique: another Country has name 'Japan'"])
        }
        #expect(try fixture.tableDump() == dump)
        #expect(try fixture.primaryKeyMaxima() == maxima)
        #expect([chile.objectID, duplicate.objectID, second.objectID] == temporary)
        #expect(temporary.allSatisfy { $0.isTemporary })
        #expect(context.hasChanges && context.insertedObjects.count == 3)
        #expect(first.value(forKey: "magnitude") as? Double == 6.3)
        #expect(Set(second.objects(forKey: "countries").map { $0.value(forKey: "name") as? String }) == ["Chile", "Japan"])
        // Another context still reads the committed values.
        let other = fixture.context("other")
        #expect(other.object(with: quake.objectID).value(forKey: "magnitude") as? Double == 6.1)

        // Corrected, the same changes save: the IDs become permanent and the keys continue from Z_MAX.
        duplicate.setValue("Peru", forKey: "name")
        try context.save()
        #expect(!chile.objectID.isTemporary && !duplicate.objectID.isTemporary && !second.objectID.isTemporary)
        #expect(try fixture.primaryKeyMaxima() == ["Country": maxima["Country"]! + 2, "Quake": maxima["Quake"]! + 1])
        #expect(try fixture.sqlRows("SELECT ZNAME FROM ZCOUNTRY ORDER BY Z_PK").map { $0[0] as String } == ["Japan", "Chile", "Peru"])
        #expect(try fixture.sqlRows("SELECT ZMAGNITUDE FROM ZQUAKE ORDER BY Z_PK").map { $0[0] as Double } == [6.3, 7.0])
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM Z_1QUAKES WHERE Z_2QUAKES = ?", [second.objectID.primaryKey]).first?[0] as Int64? == 2)
    }

    @Test func rollingBackAfterAFailedSaveRestoresTheCommittedGraph() throws {
        let fixture = try GraphFixture(try ExperimentModels.quakes())
        let setup = fixture.context("setup")
        let japan = setup.insert("Country")
        japan.setValue("Japan", forKey: "name")
        try setup.save()

        let context = fixture.context()
        let existing = try context.existingObject(with: japan.objectID)
        let chile = context.insert("Country")
        chile.setValue("Chile", forKey: "name")
        let duplicate = context.insert("Country")
        duplicate.setValue("Japan", forKey: "name")
        let quake = context.insert("Quake")
        for (key, value) in [("code", "q1"), ("place", "Andes")] { quake.setValue(value, forKey: key) }
        quake.setValue(5.5, forKey: "magnitude")
        quake.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "time")
        quake.add(chile, toKey: "countries")
        quake.add(existing, toKey: "countries")
        let dump = try fixture.tableDump()
        #expect(throws: ContextError.self) { try context.save() }
        #expect(try fixture.tableDump() == dump)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.registeredObject(for: duplicate.objectID) == nil)
        #expect(context.registeredObject(for: quake.objectID) == nil)
        #expect(existing.objects(forKey: "quakes").isEmpty)
        #expect(try context.fetch("Country").map { $0.value(forKey: "name") as? String } == ["Japan"])
        #expect(try context.fetch("Quake").isEmpty)
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 0)
        #expect(try fixture.tableDump() == dump)
    }
}
