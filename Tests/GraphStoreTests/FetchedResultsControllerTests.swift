import ChatFixture
import Foundation
import GraphStore
import Testing

/// A fetch kept current across merges, and the rows it reports as inserted, deleted, moved and updated.
@Suite struct FetchedResultsControllerTests {
    /// Employees named `names`, each with salary 100.
    private func populate(_ fixture: GraphFixture, _ names: [String]) throws -> [String: ObjectID] {
        let context = fixture.context("setup")
        let objects = names.map { name -> ManagedObject in
            let object = context.insert("Employee")
            object.setValue(name, forKey: "name")
            object.setValue(Decimal(100), forKey: "salary")
            return object
        }
        try context.save()
        return Dictionary(uniqueKeysWithValues: zip(names, objects.map(\.objectID)))
    }

    private func names(_ controller: FetchedResultsController) -> [String] {
        controller.objects.map { $0.value(forKey: "name") as? String ?? "?" }
    }

    /// Saves `work` in a context of its own and brings the notification into `main`.
    private func saveElsewhere(_ fixture: GraphFixture, into main: ObjectContext, _ work: (ObjectContext) throws -> Void) throws -> [SaveNotification] {
        let inbox = SaveInbox(coordinator: fixture.coordinator, excluding: main.id)
        let writer = fixture.context("writer")
        try work(writer)
        try writer.save()
        let notes = inbox.take()
        for note in notes { main.mergeChanges(fromContextDidSave: note) }
        return notes
    }

    @Test func insertsDeletesMovesAndUpdatesAreReportedByIndex() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let ids = try populate(fixture, ["Bob", "Cid", "Dee", "Eve"])
        let main = fixture.context("main")
        let controller = FetchedResultsController(context: main, request: FetchRequest(entityName: "Employee", sortDescriptors: [.init("name")]))
        try controller.performFetch()
        #expect(names(controller) == ["Bob", "Cid", "Dee", "Eve"])

        let notes = try saveElsewhere(fixture, into: main) { writer in
            writer.insert("Employee").setValue("Ada", forKey: "name")
            try writer.existingObject(with: ids["Bob"]!).setValue("Zed", forKey: "name")
            writer.delete(try writer.existingObject(with: ids["Dee"]!))
            try writer.existingObject(with: ids["Eve"]!).setValue(Decimal(200), forKey: "salary")
        }
        let changes = try #require(try controller.update(after: notes))
        #expect(names(controller) == ["Ada", "Cid", "Eve", "Zed"])
        #expect(changes.isComplete)
        #expect(changes.oldCount == 4 && changes.newCount == 4)
        #expect(changes.inserted == [0])
        #expect(changes.deleted == [2])
        #expect(changes.moved == [.init(from: 0, to: 3)])
        // Eve's salary and Bob-now-Zed's name changed; Cid is untouched.
        #expect(changes.updated == [2, 3])
        #expect(!changes.isEmpty)

        // Nothing relevant: no refetch, no report.
        #expect(try controller.update(after: []) == nil)
    }

    @Test func aWindowedResultComparesTheRowsItHasRead() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let names = (0..<30).map { String(format: "E%02d", $0) }
        let ids = try populate(fixture, names)
        let main = fixture.context("main")
        var request = FetchRequest(entityName: "Employee", sortDescriptors: [.init("name")])
        request.fetchBatchSize = 10
        request.batchingMode = .windowed
        let controller = FetchedResultsController(context: main, request: request)
        try controller.performFetch()
        #expect(controller.objects.knownObjectIDs.count == 10)

        // E25 is renamed to the front: it was beyond the rows read, so it arrives as an insertion.
        let notes = try saveElsewhere(fixture, into: main) { writer in
            try writer.existingObject(with: ids["E25"]!).setValue("A25", forKey: "name")
        }
        let statements = try fixture.measure {
            let changes = try #require(try controller.update(after: notes))
            #expect(!changes.isComplete)
            #expect(changes.inserted == [0])
            #expect(changes.deleted == [9])
            #expect(changes.updated.isEmpty)
            #expect(changes.newCount == 30)
        }.statements
        // The request's own: the first batch and the count.
        #expect(statements == 2)
        #expect(controller.objects[0].value(forKey: "name") as? String == "A25")
    }

    @Test func sectionsFollowTheSectionKeyPath() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let ids = try populate(fixture, ["Bob", "Cid", "Dee"])
        let main = fixture.context("main")
        let request = FetchRequest(entityName: "Employee", sortDescriptors: [.init("salary"), .init("name")])
        let controller = FetchedResultsController(context: main, request: request, sectionKeyPath: "salary")
        try controller.performFetch()
        #expect(controller.sections == [.init(name: "100", range: 0..<3)])
        let notes = try saveElsewhere(fixture, into: main) { writer in
            try writer.existingObject(with: ids["Bob"]!).setValue(Decimal(300), forKey: "salary")
        }
        let changes = try #require(try controller.update(after: notes))
        #expect(changes.sectionsChanged)
        #expect(controller.sections == [.init(name: "100", range: 0..<2), .init(name: "300", range: 2..<3)])
        #expect(changes.moved == [.init(from: 0, to: 2)])
    }

    /// The chat list sorts by chat attributes: a user's rename cannot move it, a new message can.
    @Test func onlyChangesThatCanMoveTheResultsRefetch() throws {
        let fixture = try GraphFixture(try ChatModel.make())
        let setup = fixture.context("setup")
        let user = setup.insert("User")
        user.setValue("Ana", forKey: "name")
        user.setValue("ana", forKey: "handle")
        user.setValue(Date(timeIntervalSince1970: 0), forKey: "createdAt")
        var chats: [ManagedObject] = []
        for (index, title) in ["Old", "New"].enumerated() {
            let chat = setup.insert("DirectChat")
            chat.setValue(title, forKey: "title")
            chat.setValue(Date(timeIntervalSince1970: 0), forKey: "createdAt")
            chat.setValue(Date(timeIntervalSince1970: Double(100 * (index + 1))), forKey: "lastMessageAt")
            chats.append(chat)
        }
        try setup.save()
        let main = fixture.context("main")
        let request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("lastMessageAt", ascending: false)])
        let controller = FetchedResultsController(context: main, request: request)
        try controller.performFetch()
        #expect(controller.objects.map { $0.value(forKey: "title") as? String } == ["New", "Old"])

        let rename = try saveElsewhere(fixture, into: main) { writer in
            try writer.existingObject(with: user.objectID).setValue("Ana B.", forKey: "name")
        }
        #expect(!controller.isAffected(by: rename))
        #expect(try controller.update(after: rename) == nil)

        let oldID = chats[0].objectID
        let message = try saveElsewhere(fixture, into: main) { writer in
            let message = writer.insert("Message")
            message.setValue("hello", forKey: "text")
            message.setValue(Date(timeIntervalSince1970: 500), forKey: "sentAt")
            message.setValue(writer.object(with: oldID), forKey: "chat")
            message.setValue(writer.object(with: user.objectID), forKey: "sender")
            writer.object(with: oldID).setValue(Date(timeIntervalSince1970: 500), forKey: "lastMessageAt")
        }
        let changes = try #require(try controller.update(after: message))
        #expect(controller.objects.map { $0.value(forKey: "title") as? String } == ["Old", "New"])
        // Two rows swapped: one move says it (either one's).
        #expect(changes.moved.count == 1)
        #expect(changes.inserted.isEmpty && changes.deleted.isEmpty)
        #expect(changes.updated == [0])
        #expect(controller.objects[0].attributeValue(forKey: "messagesCount") == .integer(1))
    }
}
