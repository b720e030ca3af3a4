import Foundation
import GRDB
import GraphStore
import Testing

/// The four delete rules on every shape of relationship, carried out set-based at save; the preview's counts against
/// what the delete then removes, counted with SQL.
@Suite struct DeleteRuleTests {
    /// Folders cascade to items and locks; items cascade to notes (ordered), children (reflexive) and related items
    /// (a self-inverse many-to-many, so cascades can cycle); items are tagged (many-to-many, Nullify), owned by a
    /// person who may not lose them (Deny), locked (Deny), logged (No Action), and may pin a note (no inverse).
    /// A person and a badge are one-to-one.
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Badge") {
                Attribute("label", .string)
                Relationship.toOne("person", "Person", inverse: "badge")
            }
            EntityDescription("Folder") {
                Attribute("name", .string)
                Relationship.toMany("items", "Item", inverse: "folder", deleteRule: .cascade)
                Relationship.toMany("locks", "Lock", inverse: "folder", deleteRule: .cascade)
            }
            EntityDescription("Item") {
                Attribute("name", .string)
                Relationship.toOne("folder", "Folder", inverse: "items")
                Relationship.toOne("owner", "Person", inverse: "owned")
                Relationship.toOne("parent", "Item", inverse: "children")
                Relationship.toMany("children", "Item", inverse: "parent", deleteRule: .cascade)
                Relationship.toMany("notes", "Note", inverse: "item", ordered: true, deleteRule: .cascade)
                Relationship.toMany("related", "Item", inverse: "related", deleteRule: .cascade)
                Relationship.toMany("tags", "Tag", inverse: "items")
                Relationship.toMany("locks", "Lock", inverse: "item", deleteRule: .deny)
                Relationship.toMany("logs", "Log", inverse: "item", deleteRule: .noAction)
                Relationship.toOne("pinnedNote", "Note", inverse: nil)
            }
            EntityDescription("Lock") {
                Relationship.toOne("item", "Item", inverse: "locks")
                Relationship.toOne("folder", "Folder", inverse: "locks")
            }
            EntityDescription("Log") {
                Attribute("text", .string)
                Relationship.toOne("item", "Item", inverse: "logs")
            }
            EntityDescription("Note") {
                Attribute("text", .string)
                Relationship.toOne("item", "Item", inverse: "notes")
            }
            EntityDescription("Person") {
                Attribute("name", .string)
                Relationship.toMany("owned", "Item", inverse: "owner", deleteRule: .deny)
                Relationship.toOne("badge", "Badge", inverse: "person")
            }
            EntityDescription("Tag") {
                Attribute("name", .string)
                Relationship.toMany("items", "Item", inverse: "tags")
            }
        }
    }

    /// A store with named objects, saved; `objects` maps names to IDs.
    final class Store {
        let fixture: GraphFixture
        private(set) var ids: [String: ObjectID] = [:]

        init(_ build: (ObjectContext, inout [String: ManagedObject]) -> Void) throws {
            fixture = try GraphFixture(try DeleteRuleTests.model())
            let context = fixture.context("setup")
            var named: [String: ManagedObject] = [:]
            build(context, &named)
            try context.save()
            ids = named.mapValues(\.objectID)
        }

        func object(_ name: String, in context: ObjectContext) throws -> ManagedObject {
            try context.existingObject(with: try #require(ids[name], "no object named \(name)"))
        }

        /// Rows per table and join table, straight from SQL.
        func rowCounts() throws -> [String: Int] {
            let queue = try DatabaseQueue(path: fixture.path)
            return try queue.read { db in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'Z%') AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')")
                var counts: [String: Int] = [:]
                for table in tables { counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
                return counts
            }
        }

        func count(_ sql: String) throws -> Int {
            try DatabaseQueue(path: fixture.path).read { try Int.fetchOne($0, sql: sql) ?? -1 }
        }

        func table(_ entity: String) -> String { fixture.coordinator.mapping(forEntity: entity)!.table }

        func column(_ key: String, of entity: String) -> String {
            let mapping = fixture.coordinator.mapping(forEntity: entity)!
            if let toOne = mapping.toOnes.first(where: { $0.name == key }) { return toOne.column }
            return mapping.attributes.first { $0.name == key }!.column
        }

        func violations() throws -> [IntegrityReport.Violation] {
            try StoreIntegrityCheck.run(path: fixture.path).violations
        }
    }

    @discardableResult
    static func make(_ context: ObjectContext, _ entity: String, _ name: String, _ named: inout [String: ManagedObject]) -> ManagedObject {
        let object = context.insert(entity)
        if let key = ["Folder": "name", "Item": "name", "Person": "name", "Tag": "name", "Note": "text", "Log": "text", "Badge": "label"][entity] {
            object.setValue(name, forKey: key)
        }
        named[name] = object
        return object
    }

    /// A folder with two items; item a has two children (one with a grandchild) and three ordered notes.
    private func folderStore() throws -> Store {
        try Store { context, named in
            let folder = Self.make(context, "Folder", "folder", &named)
            for name in ["a", "b"] { Self.make(context, "Item", name, &named).setObject(folder, forKey: "folder") }
            for name in ["a1", "a2"] { Self.make(context, "Item", name, &named).setObject(named["a"], forKey: "parent") }
            Self.make(context, "Item", "a1x", &named).setObject(named["a1"], forKey: "parent")
            for name in ["n1", "n2", "n3"] { named["a"]!.add(Self.make(context, "Note", name, &named), toKey: "notes") }
            Self.make(context, "Item", "outside", &named)
        }
    }

    @Test func cascadesFollowToManysOrderedAndReflexiveAndThePreviewCountsMatch() throws {
        let store = try folderStore()
        let context = store.fixture.context()
        let folder = try store.object("folder", in: context)
        let before = try store.rowCounts()
        let plan = try context.deletionPlan(for: [folder])
        #expect(plan.deleted == ["Folder": 1, "Item": 5, "Note": 3])
        #expect(plan.nullified.isEmpty)
        #expect(try store.rowCounts() == before)
        context.delete(folder)
        try context.save()
        #expect(context.lastDeletion == plan)
        let after = try store.rowCounts()
        #expect(before[store.table("Folder")]! - after[store.table("Folder")]! == 1)
        #expect(before[store.table("Item")]! - after[store.table("Item")]! == 5)
        #expect(before[store.table("Note")]! - after[store.table("Note")]! == 3)
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item"))") == 1)
        #expect(try store.violations().isEmpty)
    }

    @Test func aCascadeIsAHandfulOfStatementsWhateverItsSize() throws {
        let store = try Store { context, named in
            let folder = Self.make(context, "Folder", "folder", &named)
            for index in 0..<300 {
                let item = Self.make(context, "Item", "i\(index)", &named)
                item.setObject(folder, forKey: "folder")
                item.add(Self.make(context, "Note", "n\(index)", &named), toKey: "notes")
            }
        }
        let context = store.fixture.context()
        let folder = try store.object("folder", in: context)
        let small = try store.fixture.measure { context.delete(folder); try context.save() }
        #expect(context.lastDeletion?.deleted == ["Folder": 1, "Item": 300, "Note": 300])
        // Closure, Deny and Nullify queries per entity and relationship, and one DELETE per table: no statement per
        // object.
        #expect(small.statements < 60, "\(small.statements) statements")
    }

    @Test func nullifyClearsForeignKeysJoinTableLinksAndOneToOnes() throws {
        let store = try Store { context, named in
            let person = Self.make(context, "Person", "ann", &named)
            let badge = Self.make(context, "Badge", "gold", &named)
            person.setObject(badge, forKey: "badge")
            let tag = Self.make(context, "Tag", "red", &named)
            for name in ["x", "y", "z"] {
                let item = Self.make(context, "Item", name, &named)
                item.add(tag, toKey: "tags")
                if name != "z" { item.setObject(person, forKey: "owner") }
            }
            let note = Self.make(context, "Note", "pinned", &named)
            named["x"]!.setObject(note, forKey: "pinnedNote")
            named["y"]!.setObject(note, forKey: "pinnedNote")
        }
        let context = store.fixture.context()
        // A tag: its items stay, the links go.
        let tag = try store.object("red", in: context)
        #expect(try context.deletionPlan(for: [tag]) == DeletionPlan(deleted: ["Tag": 1], nullified: ["Item.tags": 3]))
        // A one-to-one: the person's key back to the badge goes too.
        let badge = try store.object("gold", in: context)
        // A note pinned through a relationship with no inverse: the pins are cleared, not left dangling.
        let note = try store.object("pinned", in: context)
        // An item whose owner keeps others: the owner just loses it.
        let z = try store.object("z", in: context)
        let x = try store.object("x", in: context)
        #expect(try context.deletionPlan(for: [x]) == DeletionPlan(deleted: ["Item": 1], nullified: ["Person.owned": 1, "Tag.items": 1]))
        for object in [tag, badge, note, z] { context.delete(object) }
        try context.save()
        #expect(context.lastDeletion?.deleted == ["Tag": 1, "Badge": 1, "Note": 1, "Item": 1])
        #expect(context.lastDeletion?.nullified == ["Item.tags": 2, "Person.badge": 1, "Item.pinnedNote": 2])
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Person")) WHERE \(store.column("badge", of: "Person")) IS NOT NULL") == 0)
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item")) WHERE \(store.column("pinnedNote", of: "Item")) IS NOT NULL") == 0)
        #expect(try store.violations().isEmpty)
        // In memory: the survivors read the cleared keys, the deleted objects are flagged.
        #expect(x.object(forKey: "pinnedNote") == nil)
        #expect(x.objects(forKey: "tags").isEmpty)
        #expect(tag.isDeleted && badge.isDeleted && note.isDeleted && z.isDeleted)
        let person = try store.object("ann", in: context)
        #expect(person.object(forKey: "badge") == nil)
    }

    @Test func denyRefusesTheWholeDeleteAndNamesWhatBlocksIt() throws {
        let store = try Store { context, named in
            let person = Self.make(context, "Person", "ann", &named)
            for name in ["x", "y"] { Self.make(context, "Item", name, &named).setObject(person, forKey: "owner") }
        }
        let context = store.fixture.context()
        let person = try store.object("ann", in: context)
        let plan = try context.deletionPlan(for: [person])
        #expect(plan.denied == [DeletionPlan.Blocker(object: person.uriRepresentation, entity: "Person", relationship: "owned", count: 2)])
        let before = try Data(contentsOf: URL(fileURLWithPath: store.fixture.path))
        context.delete(person)
        #expect(throws: ContextError.deleteDenied(plan.denied)) { try context.save() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.fixture.path)) == before)
        #expect("\(ContextError.deleteDenied(plan.denied))".contains("Person.owned still holds 2 objects"))
    }

    /// Deny looks at the relationship as the context has it: objects that let go of the deleted one in the same
    /// save do not block it, and their keys are written as NULL.
    @Test func denyLetsTheDeleteGoWhenUnsavedChangesEmptiedTheRelationship() throws {
        let store = try Store { context, named in
            let person = Self.make(context, "Person", "ann", &named)
            for name in ["x", "y"] { Self.make(context, "Item", name, &named).setObject(person, forKey: "owner") }
        }
        let context = store.fixture.context()
        let person = try store.object("ann", in: context)
        let x = try store.object("x", in: context)
        x.setObject(nil, forKey: "owner")
        context.delete(person)
        #expect(throws: ContextError.self) { try context.save() }
        let y = try store.object("y", in: context)
        y.setObject(nil, forKey: "owner")
        try context.save()
        #expect(person.isDeleted && !x.isDeleted && !y.isDeleted)
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Person"))") == 0)
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item")) WHERE \(store.column("owner", of: "Item")) IS NOT NULL") == 0)
        #expect(try store.violations().isEmpty)
    }

    /// Deny counts the objects unsaved changes put in the relationship, stored or new.
    @Test func denyCountsObjectsAddedSinceTheSave() throws {
        let store = try Store { context, named in
            Self.make(context, "Person", "ann", &named)
            Self.make(context, "Item", "x", &named)
        }
        let context = store.fixture.context()
        let person = try store.object("ann", in: context)
        try store.object("x", in: context).setObject(person, forKey: "owner")
        context.insert("Item").setObject(person, forKey: "owner")
        context.delete(person)
        #expect(throws: ContextError.deleteDenied([DeletionPlan.Blocker(object: person.uriRepresentation, entity: "Person", relationship: "owned", count: 2)])) {
            try context.save()
        }
    }

    /// A new object's Deny rules hold too, though it never reached the store: deleting a new person who owns an item
    /// is refused (and writes nothing) until the item goes with it or leaves.
    @Test func denyRefusesDeletingANewObjectThatHoldsSurvivors() throws {
        let store = try Store { _, _ in }
        let context = store.fixture.context()
        let person = context.insert("Person")
        let item = context.insert("Item")
        item.setObject(person, forKey: "owner")
        context.delete(person)
        let blocker = DeletionPlan.Blocker(object: person.uriRepresentation, entity: "Person", relationship: "owned", count: 1)
        #expect(throws: ContextError.deleteDenied([blocker])) { try context.save() }
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item"))") == 0)
        #expect(item.object(forKey: "owner") === person)
        item.setObject(nil, forKey: "owner")
        try context.save()
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item"))") == 1)
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Person"))") == 0)
    }

    /// A folder whose cascade reaches an item guarded by a lock elsewhere (Deny): deleting the folder is refused.
    private func guardedFolder() throws -> Store {
        try Store { context, named in
            let folder = Self.make(context, "Folder", "folder", &named)
            let item = Self.make(context, "Item", "item", &named)
            item.setObject(folder, forKey: "folder")
            context.insert("Lock").setObject(item, forKey: "item")
        }
    }

    /// A refused save changes nothing in memory either: a new note that the store's cascade would have taken
    /// (through its unsaved link to the item) stays, and is saved once the delete is given up.
    @Test func aRefusedDeleteLeavesNewObjectsItWouldHaveTakenAsTheyWere() throws {
        let store = try guardedFolder()
        let context = store.fixture.context()
        let folder = try store.object("folder", in: context)
        let item = try store.object("item", in: context)
        let note = context.insert("Note")
        note.setObject(item, forKey: "item")
        context.delete(folder)
        #expect(throws: ContextError.self) { try context.save() }
        #expect(!note.isDeleted)
        #expect(item.objects(forKey: "notes").contains { $0 === note })
        context.refresh(folder, mergeChanges: false)
        try context.save()
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Note"))") == 1)
    }

    /// …and leaves the undo steps as they were.
    @Test func aRefusedDeleteLeavesTheUndoStepsAsTheyWere() throws {
        let store = try guardedFolder()
        let context = store.fixture.context()
        context.undoLevels = 10
        let folder = try store.object("folder", in: context)
        let item = try store.object("item", in: context)
        let note = context.undoGroup(named: "Add note") { () -> ManagedObject in
            let note = context.insert("Note")
            note.setObject(item, forKey: "item")
            return note
        }
        context.undoGroup(named: "Delete folder") { context.delete(folder) }
        #expect(throws: ContextError.self) { try context.save() }
        #expect(context.undoActionName == "Delete folder")
        context.undo()
        #expect(!folder.isDeleted && !note.isDeleted)
        #expect(context.undoActionName == "Add note")
    }

    @Test func aDenyMetInsideACascadeRefusesItUnlessItsObjectsGoToo() throws {
        let store = try Store { context, named in
            let folder = Self.make(context, "Folder", "folder", &named)
            let item = Self.make(context, "Item", "a", &named)
            item.setObject(folder, forKey: "folder")
            let lock = context.insert("Lock")
            lock.setObject(item, forKey: "item")
            named["lock"] = lock
            let other = Self.make(context, "Folder", "other", &named)
            let guarded = Self.make(context, "Item", "b", &named)
            guarded.setObject(other, forKey: "folder")
            let shared = context.insert("Lock")
            shared.setObject(guarded, forKey: "item")
            shared.setObject(other, forKey: "folder")
        }
        let context = store.fixture.context()
        let before = try store.rowCounts()
        let folder = try store.object("folder", in: context)
        let plan = try context.deletionPlan(for: [folder])
        #expect(plan.denied.map(\.relationship) == ["locks"])
        #expect(plan.denied.first?.entity == "Item")
        context.delete(folder)
        #expect(throws: ContextError.self) { try context.save() }
        #expect(try store.rowCounts() == before)
        context.rollback()
        // The other folder cascades to its lock as well as its item: the Deny is satisfied.
        let other = try store.object("other", in: context)
        #expect(try context.deletionPlan(for: [other]).deleted == ["Folder": 1, "Item": 1, "Lock": 1])
        context.delete(other)
        try context.save()
        #expect(try store.violations().isEmpty)
    }

    @Test func cyclicCascadesEnd() throws {
        let store = try Store { context, named in
            let items = ["p", "q", "r", "s"].map { Self.make(context, "Item", $0, &named) }
            // p–q–r–p is a cycle; s stands alone.
            items[0].add(items[1], toKey: "related")
            items[1].add(items[2], toKey: "related")
            items[2].add(items[0], toKey: "related")
            // And a parent cycle through children: r's child is p's parent.
            items[0].setObject(items[2], forKey: "parent")
        }
        let context = store.fixture.context()
        let q = try store.object("q", in: context)
        let plan = try context.deletionPlan(for: [q])
        #expect(plan.deleted == ["Item": 3])
        context.delete(q)
        try context.save()
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Item"))") == 1)
        #expect(try store.violations().isEmpty)
    }

    @Test func noActionLeavesReferencesThatTheCheckReports() throws {
        let store = try Store { context, named in
            let item = Self.make(context, "Item", "a", &named)
            Self.make(context, "Log", "created", &named).setObject(item, forKey: "item")
        }
        let context = store.fixture.context()
        let item = try store.object("a", in: context)
        #expect(try context.deletionPlan(for: [item]) == DeletionPlan(deleted: ["Item": 1]))
        context.delete(item)
        try context.save()
        #expect(try store.count("SELECT COUNT(*) FROM \(store.table("Log")) WHERE \(store.column("item", of: "Log")) IS NOT NULL") == 1)
        let dangling = try store.violations()
        #expect(dangling.count == 1)
        #expect(dangling.first?.kind == .foreignKey)
        #expect(dangling.first?.entity == "Log")
    }

    @Test func loadedObjectsFollowTheDeleteInMemory() throws {
        let store = try folderStore()
        let context = store.fixture.context()
        let folder = try store.object("folder", in: context)
        let a = try store.object("a", in: context)
        let n2 = try store.object("n2", in: context)
        let outside = try store.object("outside", in: context)
        #expect(folder.objects(forKey: "items").count == 2)
        // Marked before the save for what the context knows in memory: the folder's loaded items.
        context.delete(folder)
        context.processPendingChanges()
        #expect(a.isDeleted)
        try context.save()
        #expect(n2.isDeleted)
        #expect(!outside.isDeleted)
        #expect(context.registeredObject(for: a.objectID) == nil)
    }

    @Test func unsavedObjectsCascadeInMemoryAndWriteNothing() throws {
        let store = try folderStore()
        let before = try store.rowCounts()
        let context = store.fixture.context()
        var named: [String: ManagedObject] = [:]
        let folder = Self.make(context, "Folder", "new", &named)
        let item = Self.make(context, "Item", "new item", &named)
        item.setObject(folder, forKey: "folder")
        let note = Self.make(context, "Note", "new note", &named)
        item.add(note, toKey: "notes")
        context.delete(folder)
        context.processPendingChanges()
        #expect(item.isDeleted && note.isDeleted)
        try context.save()
        #expect(try store.rowCounts() == before)
    }

    @Test func aDeletedRowsUniqueValueIsFreeForTheSameSave() throws {
        let fixture = try GraphFixture(try ExperimentModels.quakes())
        let setup = fixture.context("setup")
        setup.insert("Country").setValue("Japan", forKey: "name")
        try setup.save()
        let context = fixture.context()
        let old = try #require(try context.fetch(FetchRequest(entityName: "Country")).first)
        context.delete(old)
        let replacement = context.insert("Country")
        replacement.setValue("Japan", forKey: "name")
        // The delete runs before the insert in the save's transaction, so the unique index never sees two.
        try context.save()
        let reader = fixture.context()
        let names = try reader.fetch(FetchRequest(entityName: "Country")).map { $0.value(forKey: "name") as? String }
        #expect(names == ["Japan"])
        #expect(replacement.objectID.primaryKey != old.objectID.primaryKey)
    }

    @Test func derivedCountsStayRightThroughACascade() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chats = try context.fetch(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        let victim = chats[0]
        let plan = try context.deletionPlan(for: [victim])
        #expect(plan.deleted["Message"] == victim.attributeValue(forKey: "messagesCount").integerValue)
        #expect(plan.deleted["ChatMember"] == victim.attributeValue(forKey: "membersCount").integerValue)
        // Its messages were the last messages of nothing else; their senders lose them.
        #expect(plan.nullified["User.sentMessages"] == plan.deleted["Message"])
        context.delete(victim)
        try context.save()
        #expect(context.lastDeletion == plan)
        let report = try StoreIntegrityCheck.run(path: store.fixture.path)
        #expect(report.isOK, "\(report.violations)")
    }
}

private extension AttributeValue {
    var integerValue: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }
}
