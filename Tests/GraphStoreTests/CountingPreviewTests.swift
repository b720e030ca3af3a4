@testable import GraphStore
import ChatFixture
import Foundation
import Synchronization
import GRDB
import Testing

/// `deletionPlan(for:)` counts with `COUNT(*)` statements over doomed rows described in SQL. It must give the plan
/// the key-reading planner (which the save carries deletes out with) gives, on random graphs of every shape of
/// relationship and on generated chat stores; its statements are counted exactly; it reports progress and can be
/// cancelled.
@Suite struct CountingPreviewTests {
    /// Every shape a delete can meet: sub-entities sharing a table (Leaf and Branch under Node), a reflexive cascade
    /// (children), a self-inverse many-to-many cascade (peers), a many-to-many cascade one way (Tag.nodes), a cycle
    /// of cascades across three tables (Bundle → Node → Piece → Bundle), a one-to-one cascade (Leaf.card), Deny
    /// to-many and to-one rules, Nullify on every storage, and relationships without an inverse (to-one and
    /// many-to-many), one of them No Action.
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Bundle") {
                Attribute("name", .string)
                Relationship.toMany("nodes", "Node", inverse: "bundle", deleteRule: .cascade)
                Relationship.toMany("marks", "Piece", inverse: nil)
            }
            EntityDescription("Card") {
                Attribute("name", .string)
                Relationship.toOne("leaf", "Leaf", inverse: "card")
            }
            EntityDescription("Guard") {
                Attribute("name", .string)
                Relationship.toOne("leaf", "Leaf", inverse: "guards")
                Relationship.toMany("kept", "Branch", inverse: "keeper")
            }
            EntityDescription("Memo") {
                Attribute("name", .string)
                Relationship.toOne("about", "Node", inverse: nil, deleteRule: .noAction)
                Relationship.toOne("leaf", "Leaf", inverse: nil)
            }
            EntityDescription("Node") {
                Attribute("name", .string)
                Relationship.toOne("parent", "Node", inverse: "children")
                Relationship.toMany("children", "Node", inverse: "parent", deleteRule: .cascade)
                Relationship.toMany("peers", "Node", inverse: "peers", deleteRule: .cascade)
                Relationship.toMany("tags", "Tag", inverse: "nodes")
                Relationship.toOne("bundle", "Bundle", inverse: "nodes")
                Relationship.toOne("pinned", "Piece", inverse: nil)
            }
            EntityDescription("Leaf", parent: "Node") {
                Relationship.toMany("guards", "Guard", inverse: "leaf", deleteRule: .deny)
                Relationship.toOne("card", "Card", inverse: "leaf", deleteRule: .cascade)
            }
            EntityDescription("Branch", parent: "Node") {
                Relationship.toMany("pieces", "Piece", inverse: "branch", deleteRule: .cascade)
                Relationship.toOne("keeper", "Guard", inverse: "kept", deleteRule: .deny)
            }
            EntityDescription("Piece") {
                Attribute("name", .string)
                Relationship.toOne("branch", "Branch", inverse: "pieces")
                Relationship.toOne("bundle", "Bundle", inverse: nil, deleteRule: .cascade)
            }
            EntityDescription("Tag") {
                Attribute("name", .string)
                Relationship.toMany("nodes", "Node", inverse: "tags", deleteRule: .cascade)
            }
        }
    }

    /// A random graph over `model`: `count` objects of concrete entities, each to-one set (or not) and each to-many
    /// given a few members, saved.
    static func randomGraph(_ model: ObjectModel, count: Int, random: inout SeededRandom) throws -> (GraphFixture, [ObjectID]) {
        let fixture = try GraphFixture(model)
        let context = fixture.context("build")
        let concrete = model.entities.filter { !$0.isAbstract }
        var objects: [ManagedObject] = []
        for index in 0..<count {
            // cannot fail: the models here have concrete entities.
            let entity = random.pick(concrete)!
            let object = context.insert(entity.name)
            if entity.attribute(named: "name") != nil { object.setValue("o\(index)", forKey: "name") }
            objects.append(object)
        }
        for object in objects {
            guard let entity = model.entity(named: object.entity.name) else { continue }
            for relationship in entity.relationships {
                guard let destination = model.entity(named: relationship.destination) else { continue }
                let candidates = objects.filter { destination.includes($0.entity.name) }
                if relationship.isToMany {
                    for _ in 0..<random.below(4) {
                        if let member = random.pick(candidates) { object.add(member, toKey: relationship.name) }
                    }
                } else if random.chance(55), let target = random.pick(candidates) {
                    object.setObject(target, forKey: relationship.name)
                }
            }
        }
        try context.save()
        return (fixture, objects.map(\.objectID))
    }

    /// How the counting plan differs from the key-reading one, both when it lists the doomed objects to count the
    /// references to them and when it reads the referring keys instead; nil when all three agree.
    static func disagreement(_ context: ObjectContext, _ roots: [ManagedObject]) throws -> String? {
        let read = try context.keyReadingDeletionPlan(for: roots)
        var problems: [String] = []
        for limit in [Int.max, 0] {
            context.deletionListingLimit = limit
            let counted = try context.deletionPlan(for: roots)
            if counted != read { problems.append("listing up to \(limit): counted \(counted)") }
        }
        context.deletionListingLimit = DeletionCounter.defaultListingLimit
        guard !problems.isEmpty else { return nil }
        return "roots \(roots.map(\.objectID)): read \(read); " + problems.joined(separator: "; ")
    }

    static let seeds = TestEnvironment.seeds("COUNTING_PREVIEW", defaultCount: 40)

    @Test(arguments: seeds)
    func theCountingPlanIsTheKeyReadingPlan(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let models = [try Self.model(), try DeleteRuleTests.model(), try GraphPropertyTests.model()]
        // cannot fail: the list is not empty.
        let model = models[Int(seed % UInt64(models.count))]
        let (fixture, ids) = try Self.randomGraph(model, count: 20 + random.below(40), random: &random)
        let context = fixture.context()
        var problems: [String] = []
        for _ in 0..<12 {
            var roots: [ManagedObject] = []
            for _ in 0..<(1 + random.below(3)) {
                if let id = random.pick(ids) { roots.append(context.object(with: id)) }
            }
            if let problem = try Self.disagreement(context, roots) { problems.append(problem) }
        }
        // Unsaved deletes (as the browser makes them before a preview) leave both plans on the store as it is.
        if let id = random.pick(ids), let other = random.pick(ids) {
            context.delete(context.object(with: id))
            context.processPendingChanges()
            if let problem = try Self.disagreement(context, [context.object(with: other)]) { problems.append("after an unsaved delete: \(problem)") }
        }
        #expect(problems.isEmpty, "seed \(seed): \(problems.joined(separator: "\n"))")
    }

    /// Every chat, every user and a spread of messages of a generated chat store.
    @Test func theCountingPlanIsTheKeyReadingPlanOnAChatStore() throws {
        let store = try GeneratedChatStore(FixtureOptions(seed: 5, users: 60, chats: 25, messages: 3_000))
        let context = ObjectContext(coordinator: store.coordinator, name: "check")
        var problems: [String] = []
        var checked = 0
        for entity in ["Chat", "User", "Message", "ChatMember", "Folder"] {
            let objects = try context.fetch(FetchRequest(entityName: entity))
            for (index, object) in objects.enumerated() where entity != "Message" || index % 97 == 0 {
                if let problem = try Self.disagreement(context, [object]) { problems.append(problem) }
                checked += 1
            }
        }
        let chats = try context.fetch(FetchRequest(entityName: "Chat"))
        if let problem = try Self.disagreement(context, Array(chats.prefix(3))) { problems.append(problem) }
        #expect(checked > 100)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        withExtendedLifetime(store) {}
    }

    /// A chat's preview on the chat model: one statement per table the cascade reaches (chats, members, messages,
    /// attachments, reactions), counting its doomed rows and the references they hold to survivors, then one per
    /// reference survivors hold to the doomed rows (a chat's: its last message's back reference, folder links; a
    /// message's: replies, read receipts, chats' last message, forwards) — 11 statements, each a count. They return
    /// 9 rows: one per table with doomed rows (this store has no attachments or reactions) and one per reference.
    @Test func aChatsPreviewIsAFixedNumberOfCounts() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let recorder = SQLRecorder(store.coordinator)
        for id in store.chats {
            let chat = context.object(with: id)
            recorder.reset()
            let totals = try store.fixture.measure { _ = try context.deletionPlan(for: [chat]) }
            #expect(totals.statements == 11, "\(chat.entity.name)")
            #expect(totals.statementRows == 9)
            #expect(recorder.sql.count == totals.statements)
            assertSQL(recorder, Self.chatPreviewSQL(entity: chat.objectID.entityNumber))
            // The key-reading planner reads every doomed key: more rows, as many as the chat holds.
            let reading = try store.fixture.measure { _ = try context.keyReadingDeletionPlan(for: [chat]) }
            let plan = try context.deletionPlan(for: [chat])
            #expect(reading.statementRows > plan.deletedCount)
        }
    }

    /// The counts of a chat's preview, for a chat whose entity number is `entity` (a direct or a group chat): the
    /// chat, its messages and their reactions, its members, the messages' attachments, then the references from
    /// outside (the last message's back reference, folder links, chats' last message, replies, read receipts,
    /// forwards).
    static func chatPreviewSQL(entity: Int) -> [String] {
        [
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)) SELECT t.Z_ENT, COUNT(*), COUNT(CASE WHEN t.ZOWNER IS NOT NULL THEN 1 END) FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2) GROUP BY 1 UNION ALL SELECT e, COUNT(*), 0 FROM r2 WHERE k NOT IN (SELECT Z_PK FROM ZCHAT) GROUP BY e",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)) SELECT 7, COUNT(*), COUNT(CASE WHEN 0 THEN 1 END), COUNT(CASE WHEN t.ZSENDER IS NOT NULL THEN 1 END), COUNT(CASE WHEN t.ZREPLYTO IS NOT NULL AND NOT (EXISTS (SELECT 1 FROM ZMESSAGE m1 WHERE m1.Z_PK = t.ZREPLYTO AND ((m1.ZCHAT IS NOT NULL AND (m1.ZCHAT IN (SELECT k FROM r2)))))) THEN 1 END) FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2) GROUP BY 1",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT 8, COUNT(*), COUNT(CASE WHEN 0 THEN 1 END), COUNT(CASE WHEN t.ZUSER IS NOT NULL THEN 1 END) FROM ZREACTION t WHERE t.ZMESSAGE IN (SELECT k FROM d7) GROUP BY 1",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)) SELECT 5, COUNT(*), COUNT(CASE WHEN 0 THEN 1 END), COUNT(CASE WHEN t.ZUSER IS NOT NULL THEN 1 END) FROM ZCHATMEMBER t WHERE t.ZCHAT IN (SELECT k FROM d2) GROUP BY 1",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT 1, COUNT(*), COUNT(CASE WHEN 0 THEN 1 END) FROM ZATTACHMENT t WHERE t.ZMESSAGE IN (SELECT k FROM d7) GROUP BY 1",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)) SELECT COUNT(*) FROM ZMESSAGE x WHERE x.ZLASTMESSAGEOF IS NOT NULL AND x.ZLASTMESSAGEOF IN (SELECT k FROM d2 WHERE e = \(entity)) AND NOT ((x.ZCHAT IS NOT NULL AND (x.ZCHAT IN (SELECT k FROM r2))))",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)) SELECT COUNT(*) FROM Z_2FOLDERS j WHERE j.Z_2CHATS IN (SELECT k FROM d2 WHERE e = \(entity))",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT COUNT(*) FROM ZCHAT x WHERE x.ZLASTMESSAGE IS NOT NULL AND x.ZLASTMESSAGE IN (SELECT k FROM d7) AND NOT (x.Z_PK IN (SELECT k FROM r2))",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT COUNT(*) FROM ZMESSAGE x WHERE x.ZREPLYTO IS NOT NULL AND x.ZREPLYTO IN (SELECT k FROM d7) AND NOT ((x.ZCHAT IS NOT NULL AND (x.ZCHAT IN (SELECT k FROM r2))))",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT COUNT(*) FROM Z_7READBY j WHERE j.Z_7READMESSAGES IN (SELECT k FROM d7)",
            "WITH r2(k, e) AS (SELECT value AS k, \(entity) AS e FROM json_each(?)), d2(k, e) AS (SELECT t.Z_PK AS k, t.Z_ENT AS e FROM ZCHAT t WHERE t.Z_PK IN (SELECT k FROM r2)), d7(k, e) AS (SELECT t.Z_PK AS k, 7 AS e FROM ZMESSAGE t WHERE t.ZCHAT IN (SELECT k FROM d2)) SELECT COUNT(*) FROM ZMESSAGE x WHERE x.ZFORWARDEDFROM IS NOT NULL AND x.ZFORWARDEDFROM IN (SELECT k FROM d7) AND NOT ((x.ZCHAT IS NOT NULL AND (x.ZCHAT IN (SELECT k FROM r2))))",
        ]
    }

    @Test func thePreviewReportsProgressAfterEachStatement() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let chat = context.object(with: store.chats[5])
        let quiet = try context.deletionPlan(for: [chat])
        let reports = Reports()
        context.progressInterval = .zero
        context.progressHandler = { reports.add($0) }
        var plan = DeletionPlan()
        let totals = try store.fixture.measure { plan = try context.deletionPlan(for: [chat]) }
        #expect(plan == quiet)
        let last = try #require(reports.all.last)
        #expect(reports.all.allSatisfy { $0.work == .deletePreview && $0.what == "counting" })
        #expect(last.statementsSoFar == totals.statements)
        // Rows so far: the counts found, deleted and nullified.
        #expect(last.rowsSoFar == quiet.deletedCount + quiet.nullified.values.reduce(0, +))
        #expect(reports.all.count >= totals.statements)
    }

    @Test func aCancelledPreviewThrowsAndChangesNothing() throws {
        let store = try ChatStore()
        let rowsBefore = try store.fixture.coordinator.store.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE") }
        let context = store.fixture.context()
        let chat = context.object(with: store.chats[5])
        let expected = try context.deletionPlan(for: [chat])
        let reports = Reports(answer: false)
        context.progressInterval = .zero
        context.progressHandler = { reports.add($0) }
        #expect(throws: ContextError.cancelled("delete preview")) { try context.deletionPlan(for: [chat]) }
        // Asked once, then stopped.
        #expect(reports.all.count == 1)
        #expect(!context.hasChanges)
        #expect(try store.fixture.coordinator.store.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE") } == rowsBefore)
        // The connection keeps no trace of the cancelled work.
        context.progressHandler = nil
        #expect(try context.deletionPlan(for: [chat]) == expected)
    }

    @Test func savesAndUndoAfterASaveReportProgress() throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        context.undoLevels = 10
        let chat = context.object(with: store.chats[6])
        let reports = Reports()
        context.progressInterval = .zero
        context.progressHandler = { reports.add($0) }
        context.undoGroup(named: "Delete") { context.delete(chat) }
        let saving = try store.fixture.measure { try context.save() }
        #expect(Set(reports.all.map(\.work)) == [.save])
        #expect(reports.all.last?.statementsSoFar == saving.statements)
        #expect(reports.all.last?.rowsSoFar == saving.statementRows)
        reports.clear()
        context.undo()
        let undoing = try store.fixture.measure { try context.save() }
        #expect(Set(reports.all.map(\.work)) == [.undo])
        #expect(reports.all.last?.statementsSoFar == undoing.statements)
        #expect(reports.all.last?.description.hasPrefix("undoing: ") == true)
        // Without a handler nothing is reported.
        context.progressHandler = nil
        reports.clear()
        context.redo()
        try context.save()
        #expect(reports.all.isEmpty)
    }

    @Test func progressReadsAsALine() {
        let progress = WorkProgress(work: .save, rowsSoFar: 120_000, statementsSoFar: 9, elapsed: .milliseconds(420))
        #expect(progress.description == "saving: 120,000 rows, 0.4 s")
        #expect(WorkProgress(work: .deletePreview, rowsSoFar: 1, statementsSoFar: 1, elapsed: .seconds(2)).description == "counting: 1 row, 2.0 s")
        #expect(WorkProgress.grouped(999) == "999")
        #expect(WorkProgress.grouped(1_000) == "1,000")
        #expect(WorkProgress.grouped(-1_234_567) == "-1,234,567")
    }
}

/// Progress reports as a handler hears them, answering `answer`.
final class Reports: Sendable {
    private let list = Mutex<[WorkProgress]>([])
    let answer: Bool

    init(answer: Bool = true) { self.answer = answer }

    func add(_ progress: WorkProgress) -> Bool {
        list.withLock { $0.append(progress) }
        return answer
    }

    func clear() { list.withLock { $0.removeAll() } }

    var all: [WorkProgress] { list.withLock { $0 } }
}
