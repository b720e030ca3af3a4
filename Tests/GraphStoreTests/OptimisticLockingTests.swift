import Foundation
import GRDB
import GraphStore
import Testing

/// Two contexts read the same row; the second to save a change to it is refused, and its save writes nothing.
@Suite struct OptimisticLockingTests {
    private struct SavedIDs {
        let aiko: ObjectID
        let budi: ObjectID
        let math: ObjectID
    }

    /// Students Aiko and Budi and subject Math, unlinked, each at `Z_OPT` 1.
    private func populate(_ fixture: GraphFixture) throws -> SavedIDs {
        let context = fixture.context("setup")
        let objects = [("Student", "Aiko"), ("Student", "Budi"), ("Subject", "Math")].map { entity, name -> ManagedObject in
            let object = context.insert(entity)
            object.setValue(name, forKey: "name")
            return object
        }
        try context.save()
        return SavedIDs(aiko: objects[0].objectID, budi: objects[1].objectID, math: objects[2].objectID)
    }

    private func row(_ fixture: GraphFixture, _ table: String, _ id: ObjectID) throws -> (name: String?, version: Int64?) {
        let row = try fixture.sqlRows("SELECT ZNAME, Z_OPT FROM \(table) WHERE Z_PK = ?", [id.primaryKey]).first
        return (row?[0], row?[1])
    }

    @Test func theSecondSaveConflictsWritesNothingAndSucceedsAfterARefresh() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populate(fixture)
        let a = fixture.context("A")
        let b = fixture.context("B")
        let aikoA = try a.existingObject(with: ids.aiko)
        let aikoB = try b.existingObject(with: ids.aiko)
        let mathB = try b.existingObject(with: ids.math)
        #expect(aikoA.value(forKey: "name") as? String == "Aiko")
        #expect(aikoB.value(forKey: "name") as? String == "Aiko")

        aikoA.setValue("Aiko (A)", forKey: "name")
        try a.save()
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (A)", 2))

        // B changes the same row, another row, inserts an object and links it.
        aikoB.setValue("Aiko (B)", forKey: "name")
        mathB.setValue("Math (B)", forKey: "name")
        let art = b.insert("Subject")
        art.setValue("Art", forKey: "name")
        aikoB.add(art, toKey: "subjects")
        let dump = try fixture.tableDump()
        let maxima = try fixture.primaryKeyMaxima()

        let uri = b.uri(for: ids.aiko)
        #expect(uri == "x-coredata://\(fixture.coordinator.store.storeUUID)/Student/p\(ids.aiko.primaryKey)")
        #expect(throws: ContextError.optimisticLockingConflict(uris: [uri])) { try b.save() }
        do {
            try b.save()
        } catch {
            #expect(error.description.contains(uri))
        }

        // Nothing of B's reached the store: A's value and version, Math untouched, no Art, no link.
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (A)", 2))
        #expect(try row(fixture, "ZSUBJECT", ids.math) == ("Math", 1))
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM ZSUBJECT").first?[0] as Int64? == 1)
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM Z_3SUBJECTS").first?[0] as Int64? == 0)
        #expect(try fixture.tableDump() == dump)
        #expect(try fixture.primaryKeyMaxima() == maxima)
        // Nor the row cache: another context reads what the store holds.
        let c = fixture.context("C")
        #expect(c.object(with: ids.aiko).value(forKey: "name") as? String == "Aiko (A)")
        #expect(c.object(with: ids.math).value(forKey: "name") as? String == "Math")
        // B keeps its changes.
        #expect(b.hasChanges)
        #expect(art.objectID.isTemporary && art.isInserted)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko (B)")
        #expect(Set(b.updatedObjects) == [aikoB, mathB])

        // Refreshed without merging, B sees A's value and may change it again.
        b.refresh(aikoB, mergeChanges: false)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko (A)")
        #expect(!aikoB.hasChanges)
        aikoB.setValue("Aiko (A, then B)", forKey: "name")
        aikoB.add(art, toKey: "subjects")
        try b.save()
        #expect(!art.objectID.isTemporary)
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (A, then B)", 3))
        #expect(try row(fixture, "ZSUBJECT", ids.math) == ("Math (B)", 2))
        #expect(try row(fixture, "ZSUBJECT", art.objectID) == ("Art", 1))
        #expect(try fixture.sqlRows("SELECT Z_3STUDENTS, Z_4SUBJECTS FROM Z_3SUBJECTS").map { [$0[0], $0[1]] as [Int64] }
                == [[ids.aiko.primaryKey, art.objectID.primaryKey]])
        // A is now the stale one.
        aikoA.setValue("Aiko (A again)", forKey: "name")
        #expect(throws: ContextError.optimisticLockingConflict(uris: [uri])) { try a.save() }
    }

    /// The other writer is another coordinator (another process): this coordinator's row cache still holds the old
    /// row when the conflict is found.
    @Test func aConflictWithAnotherCoordinatorIsFoundAndResolvedByARefresh() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populate(fixture)
        let b = fixture.context("B")
        let aikoB = try b.existingObject(with: ids.aiko)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko")

        let elsewhere = ObjectContext(coordinator: try fixture.reopen(), name: "elsewhere")
        try elsewhere.existingObject(with: ids.aiko).setValue("Aiko (elsewhere)", forKey: "name")
        try elsewhere.save()

        aikoB.setValue("Aiko (B)", forKey: "name")
        #expect(throws: ContextError.optimisticLockingConflict(uris: [b.uri(for: ids.aiko)])) { try b.save() }
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (elsewhere)", 2))

        b.refresh(aikoB, mergeChanges: false)
        #expect(aikoB.value(forKey: "name") as? String == "Aiko (elsewhere)")
        aikoB.setValue("Aiko (B)", forKey: "name")
        try b.save()
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (B)", 3))
    }

    @Test func everyConflictingObjectIsNamed() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populate(fixture)
        let a = fixture.context("A")
        let b = fixture.context("B")
        let objectsB = try [ids.aiko, ids.budi, ids.math].map { try b.existingObject(with: $0) }
        _ = objectsB.map { $0.value(forKey: "name") }
        // A edits Aiko and deletes Math; B edits all three.
        try a.existingObject(with: ids.aiko).setValue("Aiko (A)", forKey: "name")
        a.delete(try a.existingObject(with: ids.math))
        try a.save()
        for object in objectsB { object.setValue("changed by B", forKey: "name") }
        let dump = try fixture.tableDump()
        do {
            try b.save()
            Issue.record("B's save should have failed")
        } catch let error {
            guard case .optimisticLockingConflict(let uris) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(Set(uris) == [b.uri(for: ids.aiko), b.uri(for: ids.math)])
        }
        #expect(try fixture.tableDump() == dump)
        #expect(try row(fixture, "ZSTUDENT", ids.budi) == ("Budi", 1))
    }

    @Test func deletingARowChangedSinceItWasReadConflicts() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populate(fixture)
        let a = fixture.context("A")
        let b = fixture.context("B")
        let budiB = try b.existingObject(with: ids.budi)
        _ = budiB.value(forKey: "name")
        try a.existingObject(with: ids.budi).setValue("Budi (A)", forKey: "name")
        try a.save()
        b.delete(budiB)
        #expect(throws: ContextError.optimisticLockingConflict(uris: [b.uri(for: ids.budi)])) { try b.save() }
        #expect(try row(fixture, "ZSTUDENT", ids.budi) == ("Budi (A)", 2))
        #expect(budiB.isDeleted)
    }

    @Test func changesToOtherRowsDoNotConflict() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try populate(fixture)
        let a = fixture.context("A")
        let b = fixture.context("B")
        let budiB = try b.existingObject(with: ids.budi)
        _ = try b.existingObject(with: ids.aiko).value(forKey: "name")
        try a.existingObject(with: ids.aiko).setValue("Aiko (A)", forKey: "name")
        try a.save()
        budiB.setValue("Budi (B)", forKey: "name")
        let cost = try fixture.measure { try b.save() }
        #expect(cost.statements == 1)
        #expect(try row(fixture, "ZSTUDENT", ids.budi) == ("Budi (B)", 2))
        #expect(try row(fixture, "ZSTUDENT", ids.aiko) == ("Aiko (A)", 2))
    }
}

@Suite struct FaultEditLockingTests {
    /// Editing an object that is still a fault reads its row first, so a later change by someone else conflicts.
    @Test func editingAFaultReadsItsVersionBeforeTheChange() throws {
        let fixture = try GraphFixture(try ExperimentModels.quakes())
        let setup = fixture.context("setup")
        let country = setup.insert("Country")
        country.setValue("Japan", forKey: "name")
        try setup.save()
        fixture.coordinator.rowCache.removeAll()

        let first = fixture.context("first")
        let fault = first.object(with: country.objectID)
        #expect(fault.isFault)
        let cost = try fixture.measure { fault.setValue("Nippon", forKey: "name") }
        #expect(cost.statements == 1)
        #expect(!fault.isFault)

        let second = fixture.context("second")
        let other = try second.existingObject(with: country.objectID)
        other.setValue("Nihon", forKey: "name")
        try second.save()

        #expect(throws: ContextError.optimisticLockingConflict(uris: [fixture.coordinator.uri(for: country.objectID)])) {
            try first.save()
        }
    }
}
