import Foundation
import GraphStore
import Testing

/// A link removed and added again before the save, or added and removed, ends as the last change left it, in memory
/// and in the store, whether or not the relationship's fault had fired.
@Suite struct RemovedAndAddedAgainTests {
    /// A member of an ordered to-many removed and added again goes to the end, also while the relationship fault
    /// has not fired (the removal and the addition cancelled out, and the member kept its stored position).
    @Test func anOrderedMemberRemovedAndAddedAgainGoesToTheEnd() throws {
        let fixture = try GraphFixture(try GraphPropertyTests.model())
        let setup = fixture.context("setup")
        let item = setup.insert("Item")
        let notes = (0..<3).map { index -> ManagedObject in
            let note = setup.insert("Note")
            note.setValue("n\(index)", forKey: "text")
            note.setObject(item, forKey: "item")
            return note
        }
        try setup.save()
        for readsFirst in [false, true] {
            let context = fixture.context()
            let first = context.object(with: notes[0].objectID)
            let owner = context.object(with: item.objectID)
            if readsFirst { _ = owner.objects(forKey: "notes") }
            first.setObject(nil, forKey: "item")
            first.setObject(owner, forKey: "item")
            #expect(owner.objects(forKey: "notes").map { $0.value(forKey: "text") as? String } == ["n1", "n2", "n0"])
            try context.save()
            let reader = try fixture.reader()
            #expect(try reader.existingObject(with: item.objectID).objects(forKey: "notes").map { $0.value(forKey: "text") as? String } == ["n1", "n2", "n0"])
            // Back to n0, n1, n2 for the second round.
            let again = fixture.context()
            let owned = again.object(with: item.objectID)
            owned.setObjects(["n0", "n1", "n2"].map { text in notes.first { $0.value(forKey: "text") as? String == text }! }.map { again.object(with: $0.objectID) },
                             forKey: "notes")
            try again.save()
        }
    }

    /// Removing an object from a to-many whose fault has not fired — though it was no member — and then adding it
    /// cancelled out, so it was never added: a many-to-many never linked it, and a delete's Nullify rule did not let
    /// go of it (its key was written after the delete, pointing at nothing).
    @Test func anObjectRemovedAndAddedBeforeTheFaultFiredIsAdded() throws {
        let fixture = try GraphFixture(try GraphPropertyTests.model())
        let setup = fixture.context("setup")
        let (tag, item, person) = (setup.insert("Tag"), setup.insert("Item"), setup.insert("Person"))
        try setup.save()
        let context = fixture.context()
        let (tagHere, itemHere, personHere) = (context.object(with: tag.objectID), context.object(with: item.objectID), context.object(with: person.objectID))
        tagHere.remove(itemHere, fromKey: "items")
        tagHere.add(itemHere, toKey: "items")
        personHere.remove(itemHere, fromKey: "owned")
        personHere.add(itemHere, toKey: "owned")
        #expect(tagHere.objects(forKey: "items") == [itemHere])
        #expect(itemHere.objects(forKey: "tags") == [tagHere])
        context.delete(personHere)
        try context.save()
        #expect(itemHere.object(forKey: "owner") == nil)
        let reader = try fixture.reader()
        #expect(try reader.existingObject(with: tag.objectID).objects(forKey: "items").map(\.objectID) == [item.objectID])
        #expect(try reader.existingObject(with: item.objectID).object(forKey: "owner") == nil)
        #expect(try StoreIntegrityCheck.run(path: fixture.path).violations.isEmpty)
    }

    @Test func removingAnExistingLinkAddedAgainRemovesIt() throws {
        let (fixture, context) = try GraphFixture.itemGraph()
        let tag = context.insert("Tag")
        let item = context.insert("Item")
        tag.add(item, toKey: "items")
        try context.save()
        let later = ObjectContext(coordinator: fixture.coordinator, name: "later")
        let (tagAgain, itemAgain) = (later.object(with: tag.objectID), later.object(with: item.objectID))
        tagAgain.add(itemAgain, toKey: "items")
        tagAgain.remove(itemAgain, fromKey: "items")
        #expect(tagAgain.objects(forKey: "items").isEmpty)
        try later.save()
        #expect(try fixture.reader().existingObject(with: tag.objectID).objects(forKey: "items").isEmpty)
    }
}
