import ChatFixture
import Foundation
import GraphStore
import Testing

/// Writes by other processes, found through `PRAGMA data_version` and one scan, and merged.
@Suite struct ExternalChangesTests {
    @Test func anotherProcessesInsertUpdateAndDeleteAreFoundAndMerged() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try MergeTests.populateStaff(fixture)
        let main = fixture.context("main")
        let inbox = SaveInbox(coordinator: fixture.coordinator, excluding: main.id)
        #expect(try main.mergeChangesFromOtherConnections() == nil)
        let ann = try main.existingObject(with: staff.ann)
        let bob = try main.existingObject(with: staff.bob)
        let dave = try main.existingObject(with: staff.dave)
        #expect(ann.objects(forKey: "reports").count == 2)
        #expect(bob.value(forKey: "name") as? String == "Bob")
        #expect(dave.value(forKey: "name") as? String == "Dave")
        // Nothing written elsewhere: one pragma, no statement.
        let quiet = try fixture.measure { () throws in
            let found = try main.mergeChangesFromOtherConnections()
            #expect(found == nil)
        }
        #expect(quiet.statements == 0)

        let entity = fixture.coordinator.mapping(forEntity: "Employee")!.number
        try MergePolicyTests.sqlite3(fixture.path, """
            UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_ENT = \(entity);
            INSERT INTO ZEMPLOYEE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZMANAGER) VALUES \
            ((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(entity)), \(entity), 1, 'Eve', \(staff.ann.primaryKey));
            UPDATE ZEMPLOYEE SET ZNAME = 'Robert', Z_OPT = Z_OPT + 1 WHERE Z_PK = \(staff.bob.primaryKey);
            DELETE FROM ZEMPLOYEE WHERE Z_PK = \(staff.dave.primaryKey);
            """)
        let note = try #require(try main.mergeChangesFromOtherConnections())
        #expect(note.source == nil)
        let eve = ObjectID(entityNumber: entity, primaryKey: 4)
        #expect(note.inserted == [eve])
        #expect(note.updated == [staff.bob])
        #expect(note.changedKeys[staff.bob] == ["name"])
        #expect(note.deleted == [staff.dave])
        #expect(note.relationshipOwners.contains(staff.ann))
        // Bob's new name came with the scan: reading it costs nothing.
        let read = try fixture.measure { #expect(bob.value(forKey: "name") as? String == "Robert") }
        #expect(read.statements == 0)
        #expect(dave.isDeleted)
        #expect(ann.objects(forKey: "reports").compactMap { $0.value(forKey: "name") as? String }.sorted() == ["Eve", "Robert"])
        // Other contexts heard of it too.
        #expect(inbox.take().map(\.inserted) == [[eve]])
        // And it is reported once.
        #expect(try main.mergeChangesFromOtherConnections() == nil)
    }

    @Test func thisCoordinatorsOwnSavesAreNotReportedAsAnotherProcesss() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        _ = try MergeTests.populateStaff(fixture)
        let main = fixture.context("main")
        try fixture.coordinator.startWatchingOtherConnections()
        let writer = fixture.context("writer")
        for name in ["Fay", "Gus"] {
            writer.insert("Employee").setValue(name, forKey: "name")
            try writer.save()
        }
        #expect(try main.mergeChangesFromOtherConnections() == nil)

        // Another coordinator's rows after ours are found, ours are not.
        let elsewhere = ObjectContext(coordinator: try fixture.reopen(), name: "elsewhere")
        elsewhere.insert("Employee").setValue("Hal", forKey: "name")
        try elsewhere.save()
        writer.insert("Employee").setValue("Ivy", forKey: "name")
        try writer.save()
        let note = try #require(try main.mergeChangesFromOtherConnections())
        #expect(note.inserted.count == 1)
        #expect(note.values[note.inserted[0]]?.values.contains(.string("Hal")) == true)
    }

    /// Another process adds messages to a chat whose row this process holds: the chat's count follows.
    @Test func derivedCountsFollowAnotherProcesssMessages() throws {
        let fixture = try GraphFixture(try ChatModel.make())
        let (user, chat) = try MergeTests.populateChat(fixture, entity: "GroupChat")

        let main = fixture.context("main")
        let chatMain = try main.existingObject(with: chat.objectID)
        #expect(chatMain.attributeValue(forKey: "messagesCount") == .integer(0))
        try fixture.coordinator.startWatchingOtherConnections()

        let other = ObjectContext(coordinator: try fixture.reopen(), name: "other process")
        let chatThere = try other.existingObject(with: chat.objectID)
        let sent = Date(timeIntervalSince1970: 5_000)
        for text in ["a", "b", "c"] {
            let message = other.insert("Message")
            message.setValue(text, forKey: "text")
            message.setValue(sent, forKey: "sentAt")
            message.setValue(chatThere, forKey: "chat")
            message.setValue(try other.existingObject(with: user.objectID), forKey: "sender")
        }
        chatThere.setValue(sent, forKey: "lastMessageAt")
        try other.save()

        let note = try #require(try main.mergeChangesFromOtherConnections())
        #expect(note.inserted.count == 3)
        #expect(note.updated == [chat.objectID])
        #expect(note.refreshed.contains(chat.objectID))
        #expect(chatMain.value(forKey: "lastMessageAt") as? Date == sent)
        #expect(chatMain.attributeValue(forKey: "messagesCount") == .integer(3))
    }
}
