import ChatFixture
import Foundation
import GraphStore
import Testing

/// Did-save notifications and `mergeChanges(fromContextDidSave:)`: what a save tells other contexts, and how they
/// catch up without fetching.
@Suite struct MergeTests {
    struct Staff {
        let ann: ObjectID
        let bob: ObjectID
        let dave: ObjectID
    }

    /// Ann manages Bob and Dave.
    static func populateStaff(_ fixture: GraphFixture) throws -> Staff {
        let context = fixture.context("setup")
        let people = ["Ann", "Bob", "Dave"].map { name -> ManagedObject in
            let person = context.insert("Employee")
            person.setValue(name, forKey: "name")
            person.setValue(Decimal(100), forKey: "salary")
            return person
        }
        people[1].setValue(people[0], forKey: "manager")
        people[2].setValue(people[0], forKey: "manager")
        try context.save()
        return Staff(ann: people[0].objectID, bob: people[1].objectID, dave: people[2].objectID)
    }

    private func names(_ objects: [ManagedObject]) -> [String] {
        objects.compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    @Test func aSaveNotificationCarriesTheChangedIDsAndTheirValues() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try Self.populateStaff(fixture)
        let inbox = SaveInbox(coordinator: fixture.coordinator)
        let a = fixture.context("A")
        let carl = a.insert("Employee")
        carl.setValue("Carl", forKey: "name")
        carl.setValue(try a.existingObject(with: staff.ann), forKey: "manager")
        try a.existingObject(with: staff.bob).setValue("Bob B.", forKey: "name")
        a.delete(try a.existingObject(with: staff.dave))
        try a.save()

        let notes = inbox.take()
        try #require(notes.count == 1)
        let note = notes[0]
        #expect(note.source == a.id)
        #expect(note.storeUUID == fixture.coordinator.store.storeUUID)
        #expect(note.inserted == [carl.objectID])
        #expect(!carl.objectID.isTemporary)
        // Ann is updated too: her reports gained Carl and lost Dave (no column of hers changed, so no values).
        #expect(Set(note.updated) == [staff.ann, staff.bob])
        #expect(note.deleted == [staff.dave])
        #expect(note.changedKeys[staff.bob] == ["name"])
        #expect(note.changedKeys[staff.ann] == ["reports"])
        #expect(note.values[staff.ann] == nil)
        let carlRow = try #require(note.values[carl.objectID])
        #expect(carlRow.values.contains(.string("Carl")))
        #expect(carlRow.toOneKeys.contains(staff.ann))
        #expect(note.values[staff.bob]?.values.contains(.string("Bob B.")) == true)
        #expect(note.values[staff.bob]?.version == 2)
        // Ann gained Carl and lost Dave: her reports must be read again by whoever holds them.
        #expect(note.relationshipOwners == [staff.ann])
        #expect(inbox.take().isEmpty)
    }

    @Test func aMergeBringsInValuesAndMembersAndDeletionsWithoutFetching() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try Self.populateStaff(fixture)
        let b = fixture.context("B")
        let inbox = SaveInbox(coordinator: fixture.coordinator, excluding: b.id)
        let annB = try b.existingObject(with: staff.ann)
        let bobB = try b.existingObject(with: staff.bob)
        let daveB = try b.existingObject(with: staff.dave)
        #expect(names(annB.objects(forKey: "reports")) == ["Bob", "Dave"])

        let a = fixture.context("A")
        try a.existingObject(with: staff.bob).setValue("Bob B.", forKey: "name")
        let carl = a.insert("Employee")
        carl.setValue("Carl", forKey: "name")
        carl.setValue(try a.existingObject(with: staff.ann), forKey: "manager")
        a.delete(try a.existingObject(with: staff.dave))
        try a.save()

        // Before the merge B still shows what it read.
        #expect(bobB.value(forKey: "name") as? String == "Bob")
        let merge = try fixture.measure {
            for note in inbox.take() { b.mergeChanges(fromContextDidSave: note) }
            #expect(bobB.value(forKey: "name") as? String == "Bob B.")
        }
        #expect(merge.statements == 0)
        #expect(merge.cacheMisses == 0)
        #expect(daveB.isDeleted)
        #expect(b.registeredObject(for: staff.dave) == nil)
        // Ann's reports were refaulted: one relationship fault reads them, with Carl and without Dave.
        let reports = try fixture.measure { #expect(names(annB.objects(forKey: "reports")) == ["Bob B.", "Carl"]) }
        #expect(reports.relationshipFaults == 1)
        #expect(!b.hasChanges)
    }

    @Test func unsavedChangesSurviveAMergeAndSaveWithoutAConflict() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try Self.populateStaff(fixture)
        let b = fixture.context("B")
        let inbox = SaveInbox(coordinator: fixture.coordinator, excluding: b.id)
        let bobB = try b.existingObject(with: staff.bob)
        bobB.setValue(Decimal(250), forKey: "salary")

        let a = fixture.context("A")
        try a.existingObject(with: staff.bob).setValue("Robert", forKey: "name")
        try a.save()
        for note in inbox.take() { b.mergeChanges(fromContextDidSave: note) }
        #expect(bobB.value(forKey: "name") as? String == "Robert")
        #expect(bobB.value(forKey: "salary") as? Decimal == 250)
        #expect(bobB.hasChanges)
        try b.save()

        let check = ObjectContext(coordinator: try fixture.reopen())
        let bob = try check.existingObject(with: staff.bob)
        #expect(bob.value(forKey: "name") as? String == "Robert")
        #expect(bob.value(forKey: "salary") as? Decimal == 250)
    }

    @Test func aMergeNeverTakesAnOlderRowOrItsOwnSaveOrAnotherStoresChanges() throws {
        let fixture = try GraphFixture(try ExperimentModels.employees())
        let staff = try Self.populateStaff(fixture)
        let a = fixture.context("A")
        let inbox = SaveInbox(coordinator: fixture.coordinator)
        let bobA = try a.existingObject(with: staff.bob)
        bobA.setValue("Bob 2", forKey: "name")
        try a.save()
        bobA.setValue("Bob 3", forKey: "name")
        try a.save()
        let notes = inbox.take()
        try #require(notes.count == 2)

        let b = fixture.context("B")
        let bobB = try b.existingObject(with: staff.bob)
        #expect(bobB.value(forKey: "name") as? String == "Bob 3")
        b.mergeChanges(fromContextDidSave: notes[0])
        #expect(bobB.value(forKey: "name") as? String == "Bob 3")
        // Its own save is nothing new to the saver.
        a.mergeChanges(fromContextDidSave: notes[1])
        #expect(bobA.value(forKey: "name") as? String == "Bob 3")

        let other = try GraphFixture(try ExperimentModels.employees())
        let stranger = other.context("stranger")
        _ = try Self.populateStaff(other)
        let bobThere = try stranger.existingObject(with: staff.bob)
        stranger.mergeChanges(fromContextDidSave: notes[1])
        #expect(bobThere.value(forKey: "name") as? String == "Bob")
    }

    /// A chat store with user Ana and one chat of `entity`, saved.
    static func populateChat(_ fixture: GraphFixture, entity: String) throws -> (user: ManagedObject, chat: ManagedObject) {
        let setup = fixture.context("setup")
        let user = setup.insert("User")
        user.setValue("Ana", forKey: "name")
        user.setValue("ana", forKey: "handle")
        user.setValue(Date(timeIntervalSince1970: 0), forKey: "createdAt")
        let chat = setup.insert(entity)
        chat.setValue("Trip", forKey: "title")
        chat.setValue(Date(timeIntervalSince1970: 0), forKey: "createdAt")
        try setup.save()
        return (user, chat)
    }

    /// A derived count the store's triggers keep comes along: the chat becomes a fault and reads its new count.
    @Test func derivedCountsFollowAMerge() async throws {
        let fixture = try GraphFixture(try ChatModel.make())
        let (user, chat) = try Self.populateChat(fixture, entity: "DirectChat")

        let main = fixture.context("main")
        let inbox = SaveInbox(coordinator: fixture.coordinator, excluding: main.id)
        let chatMain = try main.existingObject(with: chat.objectID)
        #expect(chatMain.attributeValue(forKey: "messagesCount") == .integer(0))

        let writer = ContextActor(coordinator: fixture.coordinator, name: "writer")
        let chatID = chat.objectID
        let userID = user.objectID
        let sent = Date(timeIntervalSince1970: 1_000)
        let sentAt = try await writer.perform { context in
                for text in ["hi", "there"] {
                    let message = context.insert("Message")
                    message.setValue(text, forKey: "text")
                    message.setValue(sent, forKey: "sentAt")
                    message.setValue(context.object(with: chatID), forKey: "chat")
                    message.setValue(context.object(with: userID), forKey: "sender")
                }
                let chat = context.object(with: chatID)
                chat.setValue(sent, forKey: "lastMessageAt")
                try context.save()
                return sent
        }
        let notes = inbox.take()
        try #require(notes.count == 1)
        #expect(notes[0].refreshed.contains(chatID))
        for note in notes { main.mergeChanges(fromContextDidSave: note) }
        #expect(chatMain.value(forKey: "lastMessageAt") as? Date == sentAt)
        #expect(chatMain.attributeValue(forKey: "messagesCount") == .integer(2))
    }
}

