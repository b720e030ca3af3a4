import Foundation
import GRDB
import GraphStore
import Testing

/// Setting either side of a relationship updates the other in memory, before and after save, and the store agrees
/// when read again through a fresh coordinator.
@Suite struct InverseRelationshipTests {
    // MARK: helpers

    /// A new object whose `key` (the name, or an address's street) is `text`.
    private func make(_ context: ObjectContext, _ entity: String, _ text: String, key: String = "name") -> ManagedObject {
        let object = context.insert(entity)
        object.setValue(text, forKey: key)
        return object
    }

    /// The one object of `entity` whose `key` is `text`.
    private func find(_ context: ObjectContext, _ entity: String, _ text: String, key: String = "name") throws -> ManagedObject {
        let found = try context.fetch(entity, where: [(key, .string(text))])
        try #require(found.count == 1, "one \(entity) named \(text)")
        return found[0]
    }

    private func names(_ objects: [ManagedObject], key: String = "name") -> [String] {
        objects.map { $0.value(forKey: key) as? String ?? "?" }
    }

    private func nameSet(_ objects: [ManagedObject], key: String = "name") -> Set<String> {
        Set(names(objects, key: key))
    }

    /// Runs `body` on a context of a new coordinator on the same file: nothing cached, every value from disk.
    private func reopened(_ fixture: GraphFixture, _ body: (ObjectContext) throws -> Void) throws {
        let context = ObjectContext(coordinator: try fixture.reopen(), name: "reopened")
        try withExtendedLifetime(context) { try body(context) }
    }

    private func pairs(_ fixture: GraphFixture, _ sql: String) throws -> [[Int64]] {
        try fixture.sqlRows(sql).map { row in row.databaseValues.map { Int64.fromDatabaseValue($0) ?? -1 } }
    }

    // MARK: one-to-one

    @Test func oneToOneSetFromEitherSideUpdatesBothSides() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let aiko = make(context, "Student", "Aiko")
        let budi = make(context, "Student", "Budi")
        let first = make(context, "Address", "1 Main St", key: "street")
        let second = make(context, "Address", "2 Main St", key: "street")
        aiko.setObject(first, forKey: "address")
        second.setObject(budi, forKey: "student")
        func check() {
            #expect(aiko.object(forKey: "address") === first)
            #expect(first.object(forKey: "student") === aiko)
            #expect(budi.object(forKey: "address") === second)
            #expect(second.object(forKey: "student") === budi)
        }
        check()
        try context.save()
        check()
        // A one-to-one keeps a key on both sides.
        let linked = try fixture.sqlRows("""
            SELECT s.ZNAME, a.ZSTREET FROM ZSTUDENT s JOIN ZADDRESS a ON a.Z_PK = s.ZADDRESS AND a.ZSTUDENT = s.Z_PK ORDER BY s.ZNAME
            """)
        #expect(linked.map { "\($0[0] as String)@\($0[1] as String)" } == ["Aiko@1 Main St", "Budi@2 Main St"])
        try reopened(fixture) { context throws in
            let aiko = try find(context, "Student", "Aiko")
            let address = try #require(aiko.object(forKey: "address"))
            #expect(address.value(forKey: "street") as? String == "1 Main St")
            #expect(address.object(forKey: "student") === aiko)
            let second = try find(context, "Address", "2 Main St", key: "street")
            #expect(second.object(forKey: "student")?.value(forKey: "name") as? String == "Budi")
        }
    }

    /// Aiko has the first address and Budi the second; giving Budi the first takes it from Aiko and frees the second.
    @Test(arguments: [false, true]) func movingAnAddressToAnotherStudentTakesItFromTheFirst(fromAddressSide: Bool) throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let setup = fixture.context("setup")
        let savedAiko = make(setup, "Student", "Aiko")
        let savedBudi = make(setup, "Student", "Budi")
        let savedFirst = make(setup, "Address", "1 Main St", key: "street")
        let savedSecond = make(setup, "Address", "2 Main St", key: "street")
        savedAiko.setObject(savedFirst, forKey: "address")
        savedBudi.setObject(savedSecond, forKey: "address")
        try setup.save()
        fixture.coordinator.rowCache.removeAll()

        let context = fixture.context()
        let budi = context.object(with: savedBudi.objectID)
        let first = context.object(with: savedFirst.objectID)
        if fromAddressSide {
            first.setObject(budi, forKey: "student")
        } else {
            budi.setObject(first, forKey: "address")
        }
        // Aiko and the second address were never asked for: the context reached them through the inverse.
        let aiko = context.object(with: savedAiko.objectID)
        let second = context.object(with: savedSecond.objectID)
        func check() {
            #expect(budi.object(forKey: "address") === first)
            #expect(first.object(forKey: "student") === budi)
            #expect(aiko.object(forKey: "address") == nil)
            #expect(second.object(forKey: "student") == nil)
        }
        check()
        #expect(Set(context.updatedObjects) == [aiko, budi, first, second])
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 4)
        check()
        let students = try fixture.sqlRows("SELECT ZNAME, ZADDRESS FROM ZSTUDENT ORDER BY ZNAME")
        #expect(students.map { $0[1] as Int64? } == [nil, savedFirst.objectID.primaryKey])
        let addresses = try fixture.sqlRows("SELECT ZSTREET, ZSTUDENT FROM ZADDRESS ORDER BY ZSTREET")
        #expect(addresses.map { $0[1] as Int64? } == [savedBudi.objectID.primaryKey, nil])
        try reopened(fixture) { context throws in
            #expect(try find(context, "Student", "Aiko").object(forKey: "address") == nil)
            let budi = try find(context, "Student", "Budi")
            #expect(budi.object(forKey: "address")?.value(forKey: "street") as? String == "1 Main St")
            #expect(budi.object(forKey: "address")?.object(forKey: "student") === budi)
            #expect(try find(context, "Address", "2 Main St", key: "street").object(forKey: "student") == nil)
        }
    }

    @Test func clearingAOneToOneClearsBothSides() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let aiko = make(context, "Student", "Aiko")
        let address = make(context, "Address", "1 Main St", key: "street")
        aiko.setObject(address, forKey: "address")
        try context.save()
        aiko.setObject(nil, forKey: "address")
        #expect(address.object(forKey: "student") == nil)
        try context.save()
        #expect(address.object(forKey: "student") == nil)
        let row = try #require(try fixture.sqlRows("SELECT (SELECT ZADDRESS FROM ZSTUDENT), (SELECT ZSTUDENT FROM ZADDRESS)").first)
        #expect(row[0] as Int64? == nil && row[1] as Int64? == nil)
    }

    // MARK: one-to-many and many-to-one

    @Test func oneToManySetFromEitherSide() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let schoolClass = make(context, "Class", "1-A")
        let aiko = make(context, "Student", "Aiko")
        let budi = make(context, "Student", "Budi")
        aiko.setObject(schoolClass, forKey: "class")
        schoolClass.add(budi, toKey: "students")
        func check() {
            #expect(nameSet(schoolClass.objects(forKey: "students")) == ["Aiko", "Budi"])
            #expect(aiko.object(forKey: "class") === schoolClass)
            #expect(budi.object(forKey: "class") === schoolClass)
        }
        check()
        try context.save()
        check()
        #expect(try pairs(fixture, "SELECT ZCLASS FROM ZSTUDENT") == [[schoolClass.objectID.primaryKey], [schoolClass.objectID.primaryKey]])
        try reopened(fixture) { context throws in
            let schoolClass = try find(context, "Class", "1-A")
            #expect(nameSet(schoolClass.objects(forKey: "students")) == ["Aiko", "Budi"])
            #expect(try find(context, "Student", "Budi").object(forKey: "class") === schoolClass)
        }
    }

    @Test func movingAStudentBetweenClassesUpdatesBothClasses() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let setup = fixture.context("setup")
        let savedFirst = make(setup, "Class", "1-A")
        let savedSecond = make(setup, "Class", "1-B")
        let savedStudents = ["Aiko", "Budi", "Chaiya"].map { make(setup, "Student", $0) }
        for student in savedStudents { student.setObject(savedFirst, forKey: "class") }
        try setup.save()
        fixture.coordinator.rowCache.removeAll()

        let context = fixture.context()
        let first = context.object(with: savedFirst.objectID)
        let second = context.object(with: savedSecond.objectID)
        #expect(first.count(forKey: "students") == 3)
        let aiko = context.object(with: savedStudents[0].objectID)
        let budi = context.object(with: savedStudents[1].objectID)
        // From the to-one side, then from the to-many side (the second class's to-many never fired).
        aiko.setObject(second, forKey: "class")
        #expect(nameSet(first.objects(forKey: "students")) == ["Budi", "Chaiya"])
        second.add(budi, toKey: "students")
        #expect(budi.object(forKey: "class") === second)
        func check() {
            #expect(nameSet(first.objects(forKey: "students")) == ["Chaiya"])
            #expect(nameSet(second.objects(forKey: "students")) == ["Aiko", "Budi"])
            #expect(aiko.object(forKey: "class") === second)
        }
        check()
        #expect(first.hasChanges && second.hasChanges)
        // The foreign keys are the links: one UPDATE per moved student, nothing read, nothing for the classes.
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 2)
        check()
        #expect(!context.hasChanges)
        #expect(!first.hasChanges && !second.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        let rows = try fixture.sqlRows("SELECT s.ZNAME, c.ZNAME FROM ZSTUDENT s JOIN ZCLASS c ON c.Z_PK = s.ZCLASS ORDER BY s.ZNAME")
        #expect(rows.map { "\($0[0] as String) \($0[1] as String)" } == ["Aiko 1-B", "Budi 1-B", "Chaiya 1-A"])
        try reopened(fixture) { context throws in
            #expect(try nameSet(find(context, "Class", "1-A").objects(forKey: "students")) == ["Chaiya"])
            #expect(try nameSet(find(context, "Class", "1-B").objects(forKey: "students")) == ["Aiko", "Budi"])
        }
    }

    @Test func removingFromTheToManySideClearsTheToOne() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let schoolClass = make(context, "Class", "1-A")
        let aiko = make(context, "Student", "Aiko")
        aiko.setObject(schoolClass, forKey: "class")
        try context.save()
        schoolClass.remove(aiko, fromKey: "students")
        #expect(aiko.object(forKey: "class") == nil)
        #expect(schoolClass.objects(forKey: "students").isEmpty)
        try context.save()
        #expect(try fixture.sqlRows("SELECT ZCLASS FROM ZSTUDENT").first?[0] as Int64? == nil)
        try reopened(fixture) { context throws in
            #expect(try find(context, "Class", "1-A").objects(forKey: "students").isEmpty)
        }
    }

    // MARK: many-to-many

    @Test func manyToManyAddAndRemoveFromEitherSide() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let setup = fixture.context("setup")
        let savedObjects = [make(setup, "Student", "Aiko"), make(setup, "Student", "Budi"), make(setup, "Subject", "Math"), make(setup, "Subject", "Art")]
        try setup.save()
        let (aikoKey, budiKey, mathKey, artKey) = (savedObjects[0].objectID.primaryKey, savedObjects[1].objectID.primaryKey,
                                                   savedObjects[2].objectID.primaryKey, savedObjects[3].objectID.primaryKey)
        fixture.coordinator.rowCache.removeAll()

        let context = fixture.context()
        let (aiko, budi, math, art) = (context.object(with: savedObjects[0].objectID), context.object(with: savedObjects[1].objectID),
                                       context.object(with: savedObjects[2].objectID), context.object(with: savedObjects[3].objectID))
        aiko.add(math, toKey: "subjects")
        art.add(aiko, toKey: "students")
        budi.add(math, toKey: "subjects")
        func checkAdded() {
            #expect(nameSet(aiko.objects(forKey: "subjects")) == ["Math", "Art"])
            #expect(nameSet(budi.objects(forKey: "subjects")) == ["Math"])
            #expect(nameSet(math.objects(forKey: "students")) == ["Aiko", "Budi"])
            #expect(nameSet(art.objects(forKey: "students")) == ["Aiko"])
        }
        // Three links on objects never read: three INSERTs into the join table, nothing else.
        let added = try fixture.measure { try context.save() }
        #expect(added.statements == 3)
        let joinTable = "SELECT Z_3STUDENTS, Z_4SUBJECTS FROM Z_3SUBJECTS ORDER BY 1, 2"
        #expect(try pairs(fixture, joinTable) == [[aikoKey, mathKey], [aikoKey, artKey], [budiKey, mathKey]])
        checkAdded()
        try reopened(fixture) { context throws in
            #expect(try nameSet(find(context, "Student", "Aiko").objects(forKey: "subjects")) == ["Math", "Art"])
            #expect(try nameSet(find(context, "Subject", "Math").objects(forKey: "students")) == ["Aiko", "Budi"])
        }

        math.remove(aiko, fromKey: "students")
        budi.remove(math, fromKey: "subjects")
        func checkRemoved() {
            #expect(nameSet(aiko.objects(forKey: "subjects")) == ["Art"])
            #expect(budi.objects(forKey: "subjects").isEmpty)
            #expect(math.objects(forKey: "students").isEmpty)
            #expect(nameSet(art.objects(forKey: "students")) == ["Aiko"])
        }
        checkRemoved()
        let removed = try fixture.measure { try context.save() }
        #expect(removed.statements == 2)
        #expect(try pairs(fixture, joinTable) == [[aikoKey, artKey]])
        checkRemoved()
        try reopened(fixture) { context throws in
            #expect(try nameSet(find(context, "Student", "Aiko").objects(forKey: "subjects")) == ["Art"])
            #expect(try find(context, "Subject", "Math").objects(forKey: "students").isEmpty)
            #expect(try nameSet(find(context, "Subject", "Art").objects(forKey: "students")) == ["Aiko"])
        }
    }

    /// Two stored objects may be linked already: with neither relationship fault fired, adding and removing the
    /// link leaves it removed, which costs one DELETE (that finds nothing here).
    @Test func aStoredPairLinkedThenUnlinkedBeforeSaveWritesOneDelete() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let aiko = make(context, "Student", "Aiko")
        let math = make(context, "Subject", "Math")
        try context.save()
        aiko.add(math, toKey: "subjects")
        math.remove(aiko, fromKey: "students")
        #expect(aiko.objects(forKey: "subjects").isEmpty)
        #expect(math.objects(forKey: "students").isEmpty)
        let recorder = SQLRecorder(fixture.coordinator)
        let cost = try fixture.measure { try context.save() }
        #expect(cost.statements == 1)
        assertSQL(recorder, [
            "DELETE FROM Z_3SUBJECTS WHERE Z_3STUDENTS = ? AND Z_4SUBJECTS = ?",
        ])
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM Z_3SUBJECTS").first?[0] as Int64? == 0)
    }

    /// A new object cannot be linked in the store: adding and removing its link cancel out and write nothing.
    @Test func aNewObjectLinkedThenUnlinkedBeforeSaveWritesNothing() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let math = make(context, "Subject", "Math")
        try context.save()
        let aiko = make(context, "Student", "Aiko")
        aiko.add(math, toKey: "subjects")
        math.remove(aiko, fromKey: "students")
        #expect(aiko.objects(forKey: "subjects").isEmpty)
        let recorder = SQLRecorder(fixture.coordinator)
        try context.save()
        assertSQL(recorder, [
            "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ?1 WHERE Z_ENT = ?2 AND typeof(Z_MAX) = 'integer' AND Z_MAX >= 0 AND Z_MAX <= 9223372036854775807 - ?1 RETURNING Z_MAX",
            "INSERT INTO ZSTUDENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZADDRESS, ZMAILINGADDRESS, ZCLASS) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ])
        #expect(try fixture.sqlRows("SELECT COUNT(*) FROM Z_3SUBJECTS").first?[0] as Int64? == 0)
    }

    /// `objects(forKey:)` documents unordered to-manys as coming back by object ID, whatever order they were added in.
    @Test func unorderedToManysComeBackInObjectIDOrder() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let students = ["Aiko", "Budi", "Chaiya"].map { make(context, "Student", $0) }
        let math = make(context, "Subject", "Math")
        let schoolClass = make(context, "Class", "1-A")
        try context.save()
        for student in students.reversed() {
            math.add(student, toKey: "students")
            schoolClass.add(student, toKey: "students")
        }
        let ids = students.map(\.objectID)
        #expect(math.objects(forKey: "students").map(\.objectID) == ids)
        #expect(schoolClass.objects(forKey: "students").map(\.objectID) == ids)
        #expect((math.value(forKey: "students") as? [ManagedObject])?.map(\.objectID) == ids)
        try context.save()
        #expect(math.objects(forKey: "students").map(\.objectID) == ids)
        try reopened(fixture) { context throws in
            #expect(try find(context, "Subject", "Math").objects(forKey: "students").map(\.objectID) == ids)
            #expect(try find(context, "Class", "1-A").objects(forKey: "students").map(\.objectID) == ids)
        }
    }

    // MARK: many-to-nil

    /// Core Data keeps a to-many without inverse as a key on the destination, so the second link overwrites the first.
    /// Faultline keeps a join table: both links survive.
    @Test func manyToNilKeepsEveryLink() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let context = fixture.context()
        let aiko = make(context, "Student", "Aiko")
        let budi = make(context, "Student", "Budi")
        let chaiya = make(context, "Student", "Chaiya")
        let math = make(context, "Subject", "Math")
        let art = make(context, "Subject", "Art")
        aiko.add(math, toKey: "favoriteSubjects")
        try context.save()
        budi.add(math, toKey: "favoriteSubjects")
        try context.save()
        // And both in one save.
        chaiya.add(art, toKey: "favoriteSubjects")
        aiko.add(art, toKey: "favoriteSubjects")
        try context.save()
        #expect(nameSet(aiko.objects(forKey: "favoriteSubjects")) == ["Math", "Art"])
        #expect(nameSet(budi.objects(forKey: "favoriteSubjects")) == ["Math"])
        let rows = try fixture.sqlRows("""
            SELECT s.ZNAME, f.ZNAME FROM Z_3FAVORITESUBJECTS j JOIN ZSTUDENT s ON s.Z_PK = j.Z_3STUDENT
            JOIN ZSUBJECT f ON f.Z_PK = j.Z_4FAVORITESUBJECTS ORDER BY 1, 2
            """)
        #expect(rows.map { "\($0[0] as String) \($0[1] as String)" } == ["Aiko Art", "Aiko Math", "Budi Math", "Chaiya Art"])
        try reopened(fixture) { context throws in
            #expect(try nameSet(find(context, "Student", "Aiko").objects(forKey: "favoriteSubjects")) == ["Math", "Art"])
            #expect(try nameSet(find(context, "Student", "Budi").objects(forKey: "favoriteSubjects")) == ["Math"])
            #expect(try nameSet(find(context, "Student", "Chaiya").objects(forKey: "favoriteSubjects")) == ["Art"])
            // Removing one student's link leaves the other's.
            let budi = try find(context, "Student", "Budi")
            budi.remove(try find(context, "Subject", "Math"), fromKey: "favoriteSubjects")
            try context.save()
        }
        try reopened(fixture) { context throws in
            #expect(try find(context, "Student", "Budi").objects(forKey: "favoriteSubjects").isEmpty)
            #expect(try nameSet(find(context, "Student", "Aiko").objects(forKey: "favoriteSubjects")) == ["Math", "Art"])
        }
    }

    // MARK: reflexive

    @Test func reflexiveManagerAndReports() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let context = fixture.context()
        let boss = make(context, "Employee", "Boss")
        let lead = make(context, "Employee", "Lead")
        let dev = make(context, "Employee", "Dev")
        lead.setObject(boss, forKey: "manager")
        boss.add(dev, toKey: "reports")
        #expect(nameSet(boss.objects(forKey: "reports")) == ["Lead", "Dev"])
        #expect(dev.object(forKey: "manager") === boss)
        try context.save()
        #expect(nameSet(boss.objects(forKey: "reports")) == ["Lead", "Dev"])
        let managers = "SELECT e.ZNAME, m.ZNAME FROM ZEMPLOYEE e LEFT JOIN ZEMPLOYEE m ON m.Z_PK = e.ZMANAGER ORDER BY e.ZNAME"
        #expect(try fixture.sqlRows(managers).map { "\($0[0] as String)>\(($0[1] as String?) ?? "-")" } == ["Boss>-", "Dev>Boss", "Lead>Boss"])

        // Dev moves under Lead, from the to-many side.
        lead.add(dev, toKey: "reports")
        func check() {
            #expect(nameSet(boss.objects(forKey: "reports")) == ["Lead"])
            #expect(nameSet(lead.objects(forKey: "reports")) == ["Dev"])
            #expect(dev.object(forKey: "manager") === lead)
        }
        check()
        try context.save()
        check()
        #expect(try fixture.sqlRows(managers).map { "\($0[0] as String)>\(($0[1] as String?) ?? "-")" } == ["Boss>-", "Dev>Lead", "Lead>Boss"])
        try reopened(fixture) { context throws in
            let boss = try find(context, "Employee", "Boss")
            #expect(names(boss.objects(forKey: "reports")) == ["Lead"])
            #expect(boss.object(forKey: "manager") == nil)
            let lead = try find(context, "Employee", "Lead")
            #expect(names(lead.objects(forKey: "reports")) == ["Dev"])
            #expect(lead.object(forKey: "manager") === boss)
        }
    }

    @Test func selfInversePeersLinkBothWays() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let context = fixture.context()
        let ana = make(context, "Employee", "Ana")
        let ben = make(context, "Employee", "Ben")
        let cai = make(context, "Employee", "Cai")
        ana.add(ben, toKey: "peers")
        cai.add(ana, toKey: "peers")
        func check() {
            #expect(nameSet(ana.objects(forKey: "peers")) == ["Ben", "Cai"])
            #expect(nameSet(ben.objects(forKey: "peers")) == ["Ana"])
            #expect(nameSet(cai.objects(forKey: "peers")) == ["Ana"])
        }
        check()
        try context.save()
        check()
        let (a, b, c) = (ana.objectID.primaryKey, ben.objectID.primaryKey, cai.objectID.primaryKey)
        let table = "SELECT Z_1PEERS, REFLEXIVE FROM Z_1PEERS ORDER BY 1, 2"
        #expect(try pairs(fixture, table) == [[a, b], [a, c], [b, a], [c, a]].sorted { ($0[0], $0[1]) < ($1[0], $1[1]) })
        try reopened(fixture) { context throws in
            #expect(try nameSet(find(context, "Employee", "Ana").objects(forKey: "peers")) == ["Ben", "Cai"])
            #expect(try nameSet(find(context, "Employee", "Ben").objects(forKey: "peers")) == ["Ana"])
            #expect(try nameSet(find(context, "Employee", "Cai").objects(forKey: "peers")) == ["Ana"])
        }

        // Removing from the other side, on objects never read, removes both directions.
        fixture.coordinator.rowCache.removeAll()
        let fresh = fixture.context("fresh")
        let freshBen = fresh.object(with: ben.objectID)
        let freshAna = fresh.object(with: ana.objectID)
        freshBen.remove(freshAna, fromKey: "peers")
        #expect(names(freshAna.objects(forKey: "peers")) == ["Cai"])
        #expect(freshBen.objects(forKey: "peers").isEmpty)
        let cost = try fixture.measure { try fresh.save() }
        #expect(cost.statements == 2)
        #expect(try pairs(fixture, table) == [[a, c], [c, a]].sorted { ($0[0], $0[1]) < ($1[0], $1[1]) })
        try reopened(fixture) { context throws in
            #expect(try names(find(context, "Employee", "Ana").objects(forKey: "peers")) == ["Cai"])
            #expect(try find(context, "Employee", "Ben").objects(forKey: "peers").isEmpty)
        }
    }

    // MARK: ordered

    /// A user with messages "m1"… in order, saved; returns the user's ID.
    private func populateConversation(_ fixture: GraphFixture, messages count: Int) throws -> ObjectID {
        let context = fixture.context("setup")
        let user = make(context, "User", "Ana")
        for number in 1...count {
            let message = make(context, "Message", "m\(number)", key: "text")
            message.setValue(Date(timeIntervalSinceReferenceDate: Double(number)), forKey: "sentAt")
            user.add(message, toKey: "messages")
        }
        try context.save()
        return user.objectID
    }

    private func messageOrder(_ fixture: GraphFixture) throws -> [String] {
        try fixture.sqlRows("SELECT ZTEXT, Z_FOK_CONTACT FROM ZMESSAGE WHERE ZCONTACT IS NOT NULL ORDER BY Z_FOK_CONTACT")
            .map { "\($0[0] as String)#\(($0[1] as Int64?) ?? -1)" }
    }

    @Test func orderedOneToManyKeepsItsOrder() throws {
        let fixture = try GraphFixture(try ExperimentModels.contacts())
        let context = fixture.context()
        let ana = make(context, "User", "Ana")
        var messages: [ManagedObject] = []
        for text in ["c", "a", "d"] {
            let message = make(context, "Message", text, key: "text")
            message.setValue(Date(), forKey: "sentAt")
            ana.add(message, toKey: "messages")
            messages.append(message)
        }
        // From the to-one side: appended last.
        let last = make(context, "Message", "b", key: "text")
        last.setValue(Date(), forKey: "sentAt")
        last.setObject(ana, forKey: "contact")
        #expect(names(ana.objects(forKey: "messages"), key: "text") == ["c", "a", "d", "b"])
        #expect(messages.allSatisfy { $0.object(forKey: "contact") === ana })
        try context.save()
        #expect(names(ana.objects(forKey: "messages"), key: "text") == ["c", "a", "d", "b"])
        #expect(try messageOrder(fixture) == ["c#1", "a#2", "d#3", "b#4"])
        // The contact is a User, one of Contact's sub-entities: its Z_ENT sits next to the key.
        let userEntity = Int64(fixture.coordinator.mapping(forEntity: "User")!.number)
        #expect(try fixture.sqlRows("SELECT DISTINCT Z1_CONTACT FROM ZMESSAGE").map { $0[0] as Int64 } == [userEntity])
        try reopened(fixture) { context throws in
            let ana = try find(context, "User", "Ana")
            #expect(names(ana.objects(forKey: "messages"), key: "text") == ["c", "a", "d", "b"])
            #expect(ana.objects(forKey: "messages").allSatisfy { $0.object(forKey: "contact") === ana })
        }
    }

    @Test func reorderingAnOrderedOneToManyIsPersisted() throws {
        let fixture = try GraphFixture(try ExperimentModels.contacts())
        let userID = try populateConversation(fixture, messages: 4)
        let context = fixture.context()
        let ana = try context.existingObject(with: userID)
        let messages = ana.objects(forKey: "messages")
        ana.setObjects([messages[3], messages[1], messages[0], messages[2]], forKey: "messages")
        #expect(names(ana.objects(forKey: "messages"), key: "text") == ["m4", "m2", "m1", "m3"])
        #expect(context.hasChanges)
        try context.save()
        #expect(try messageOrder(fixture) == ["m4#1", "m2#2", "m1#3", "m3#4"])
        try reopened(fixture) { context throws in
            #expect(try names(context.existingObject(with: userID).objects(forKey: "messages"), key: "text") == ["m4", "m2", "m1", "m3"])
        }

        // Reordering while dropping one and adding one.
        let extra = make(context, "Message", "m5", key: "text")
        extra.setValue(Date(), forKey: "sentAt")
        ana.setObjects([extra, messages[0], messages[3]], forKey: "messages")
        #expect(messages[1].object(forKey: "contact") == nil)
        #expect(extra.object(forKey: "contact") === ana)
        try context.save()
        #expect(try messageOrder(fixture) == ["m5#1", "m1#2", "m4#3"])
        try reopened(fixture) { context throws in
            #expect(try names(context.existingObject(with: userID).objects(forKey: "messages"), key: "text") == ["m5", "m1", "m4"])
        }
    }

    @Test func appendingToANeverFaultedOrderedOneToManyDoesNotFireIt() throws {
        let fixture = try GraphFixture(try ExperimentModels.contacts())
        let userID = try populateConversation(fixture, messages: 3)
        let context = fixture.context()
        let cost = try fixture.measure {
            let ana = try context.existingObject(with: userID)
            let added = make(context, "Message", "m4", key: "text")
            added.setValue(Date(), forKey: "sentAt")
            ana.add(added, toKey: "messages")
            let other = make(context, "Message", "m5", key: "text")
            other.setValue(Date(), forKey: "sentAt")
            other.setObject(ana, forKey: "contact")
            try context.save()
        }
        #expect(cost.relationshipFaults == 0)
        #expect(try messageOrder(fixture) == ["m1#1", "m2#2", "m3#3", "m4#4", "m5#5"])
        #expect(try names(context.existingObject(with: userID).objects(forKey: "messages"), key: "text") == ["m1", "m2", "m3", "m4", "m5"])
        try reopened(fixture) { context throws in
            #expect(try names(context.existingObject(with: userID).objects(forKey: "messages"), key: "text") == ["m1", "m2", "m3", "m4", "m5"])
        }
    }

    @Test func movingAMessageToAnotherContactKeepsBothOrders() throws {
        let fixture = try GraphFixture(try ExperimentModels.contacts())
        let anaID = try populateConversation(fixture, messages: 3)
        let setup = fixture.context("setup 2")
        let ben = make(setup, "User", "Ben")
        for text in ["b1", "b2"] {
            let message = make(setup, "Message", text, key: "text")
            message.setValue(Date(), forKey: "sentAt")
            ben.add(message, toKey: "messages")
        }
        try setup.save()

        // Neither to-many fired: the move is recorded on both sides and appended on Ben's.
        let context = fixture.context()
        let ana = context.object(with: anaID)
        let benObject = context.object(with: ben.objectID)
        let moved = try find(context, "Message", "m2", key: "text")
        moved.setObject(benObject, forKey: "contact")
        #expect(names(ana.objects(forKey: "messages"), key: "text") == ["m1", "m3"])
        #expect(names(benObject.objects(forKey: "messages"), key: "text") == ["b1", "b2", "m2"])
        try context.save()
        try reopened(fixture) { context throws in
            #expect(names(try context.existingObject(with: anaID).objects(forKey: "messages"), key: "text") == ["m1", "m3"])
            #expect(names(try context.existingObject(with: ben.objectID).objects(forKey: "messages"), key: "text") == ["b1", "b2", "m2"])
        }
    }

    @Test func orderedManyToManyKeepsItsOrder() throws {
        let fixture = try GraphFixture(try ExperimentModels.contacts())
        let context = fixture.context()
        let team = make(context, "Group", "Team")
        let users = ["Ana", "Ben", "Cai", "Dee"].map { make(context, "User", $0) }
        team.add(users[2], toKey: "members")
        team.add(users[0], toKey: "members")
        team.add(users[3], toKey: "members")
        // From the unordered inverse side: appended last.
        users[1].add(team, toKey: "groups")
        func check(_ team: ManagedObject) {
            #expect(names(team.objects(forKey: "members")) == ["Cai", "Ana", "Dee", "Ben"])
            #expect(team.objects(forKey: "members").allSatisfy { names($0.objects(forKey: "groups")) == ["Team"] })
        }
        check(team)
        try context.save()
        check(team)
        #expect(team.value(forKey: "membersCount") as? Int64 == 4)
        let order = "SELECT u.ZNAME, j.Z_FOK_2GROUPS FROM Z_2MEMBERS j JOIN ZCONTACT u ON u.Z_PK = j.Z_3MEMBERS ORDER BY j.Z_FOK_2GROUPS"
        func stored() throws -> [String] { try fixture.sqlRows(order).map { "\($0[0] as String)#\(($0[1] as Int64?) ?? -1)" } }
        #expect(try stored() == ["Cai#1", "Ana#2", "Dee#3", "Ben#4"])
        try reopened(fixture) { context throws in check(try find(context, "Group", "Team")) }

        // Reordering the same members.
        team.setObjects([users[0], users[1], users[2], users[3]], forKey: "members")
        #expect(context.hasChanges)
        try context.save()
        #expect(try stored() == ["Ana#1", "Ben#2", "Cai#3", "Dee#4"])
        try reopened(fixture) { context throws in
            #expect(try names(find(context, "Group", "Team").objects(forKey: "members")) == ["Ana", "Ben", "Cai", "Dee"])
        }

        // Appending to a never-faulted ordered many-to-many in another context.
        let other = fixture.context("other")
        let cost = try fixture.measure {
            let team = try other.existingObject(with: team.objectID)
            team.add(make(other, "User", "Eve"), toKey: "members")
            try other.save()
        }
        #expect(cost.relationshipFaults == 0)
        #expect(try stored() == ["Ana#1", "Ben#2", "Cai#3", "Dee#4", "Eve#5"])
        try reopened(fixture) { context throws in
            let team = try find(context, "Group", "Team")
            #expect(names(team.objects(forKey: "members")) == ["Ana", "Ben", "Cai", "Dee", "Eve"])
            #expect(team.value(forKey: "membersCount") as? Int64 == 5)
        }
    }

    @Test func addingTwiceToAnUnfaultedToManyAddsOnce() throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let setup = fixture.context("setup")
        _ = make(setup, "Class", "1-A")
        _ = make(setup, "Student", "Aiko")
        _ = make(setup, "Subject", "Art")
        try setup.save()

        let context = fixture.context()
        let schoolClass = try find(context, "Class", "1-A")
        let aiko = try find(context, "Student", "Aiko")
        let art = try find(context, "Subject", "Art")
        let budi = make(context, "Student", "Budi")
        for _ in 0..<2 {
            schoolClass.add(aiko, toKey: "students")
            schoolClass.add(budi, toKey: "students")
            art.add(aiko, toKey: "students")
            art.add(budi, toKey: "students")
        }
        #expect(schoolClass.count(forKey: "students") == 2)
        #expect(art.count(forKey: "students") == 2)
        #expect(aiko.count(forKey: "subjects") == 1)
        try context.save()
        try reopened(fixture) { fresh in
            let classMates = try find(fresh, "Class", "1-A").objects(forKey: "students")
            let artStudents = try find(fresh, "Subject", "Art").objects(forKey: "students")
            #expect(nameSet(classMates) == ["Aiko", "Budi"])
            #expect(nameSet(artStudents) == ["Aiko", "Budi"])
        }
        #expect(try fixture.sqlRows("SELECT * FROM Z_3SUBJECTS").count == 2)
    }
}
