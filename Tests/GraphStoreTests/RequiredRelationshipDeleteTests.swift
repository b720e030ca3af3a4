import Foundation
import GraphStore
import Testing

/// A delete whose Nullify rules would leave a surviving object without what its relationships require — a required
/// to-one cleared, a to-many below its minimum — fails validation at save, as Core Data's does, and writes nothing;
/// the set-based delete asks the store, after the save's own inserts and updates, which may make up for it.
@Suite struct RequiredRelationshipDeleteTests {
    /// A book needs at least one page and an author; a shelf holds at least two books (a many-to-many).
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Book") {
                Attribute("title", .string)
                Relationship.toMany("pages", "Page", inverse: "book", deleteRule: .cascade).required()
                Relationship.toOne("author", "Writer", inverse: "books").required()
                Relationship.toMany("shelves", "Shelf", inverse: "books")
            }
            EntityDescription("Page") {
                Attribute("number", .integer64)
                Relationship.toOne("book", "Book", inverse: "pages")
            }
            EntityDescription("Writer") {
                Attribute("name", .string)
                Relationship.toMany("books", "Book", inverse: "author")
            }
            EntityDescription("Shelf") {
                Attribute("label", .string)
                Relationship.toMany("books", "Book", inverse: "shelves", minCount: 2)
            }
        }
    }

    /// Writer ann with books one (one page) and two (two pages), both on one shelf.
    private func store() throws -> (GraphFixture, [String: ObjectID]) {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context("setup")
        let writer = context.insert("Writer")
        writer.setValue("ann", forKey: "name")
        let shelf = context.insert("Shelf")
        var ids: [String: ManagedObject] = ["ann": writer, "shelf": shelf]
        for (title, pages) in [("one", 1), ("two", 2)] {
            let book = context.insert("Book")
            book.setValue(title, forKey: "title")
            book.setObject(writer, forKey: "author")
            book.add(shelf, toKey: "shelves")
            for number in 1...pages {
                let page = context.insert("Page")
                page.setValue(Int64(number), forKey: "number")
                page.setObject(book, forKey: "book")
                ids["\(title).p\(number)"] = page
            }
            ids[title] = book
        }
        try context.save()
        return (fixture, ids.mapValues(\.objectID))
    }

    private func failures(_ save: () throws -> Void) -> [String] {
        do {
            try save()
            return []
        } catch ContextError.validation(let failures) {
            return failures.map { "\($0.entity).\($0.key) \($0.reason)" }
        } catch {
            return ["\(error)"]
        }
    }

    @Test func deletingABooksOnlyPageFailsAndWritesNothing() throws {
        let (fixture, ids) = try store()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let context = fixture.context()
        context.delete(try context.existingObject(with: try #require(ids["one.p1"])))
        #expect(failures { try context.save() } == ["Book.pages has 0 members, at least 1 required"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
    }

    @Test func deletingOneOfTwoPagesSaves() throws {
        let (fixture, ids) = try store()
        let context = fixture.context()
        context.delete(try context.existingObject(with: try #require(ids["two.p1"])))
        try context.save()
        let again = fixture.context()
        #expect(try again.existingObject(with: try #require(ids["two"])).count(forKey: "pages") == 1)
    }

    /// The check runs after the save's inserts: a new page for the book in the same save makes up for the one
    /// deleted.
    @Test func aPageAddedInTheSameSaveMakesUpForTheOneDeleted() throws {
        let (fixture, ids) = try store()
        let context = fixture.context()
        context.delete(try context.existingObject(with: try #require(ids["one.p1"])))
        let page = context.insert("Page")
        page.setObject(try context.existingObject(with: try #require(ids["one"])), forKey: "book")
        try context.save()
    }

    /// Deleting the writer clears both books' required author (Writer.books is Nullify); deleting a book leaves the
    /// shelf one book short of its minimum (a join table's link removed).
    @Test func aClearedRequiredToOneAndAThinnedManyToManyFail() throws {
        let (fixture, ids) = try store()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let context = fixture.context()
        context.delete(try context.existingObject(with: try #require(ids["ann"])))
        #expect(failures { try context.save() } == ["Book.author is required", "Book.author is required"])
        context.rollback()
        context.delete(try context.existingObject(with: try #require(ids["two"])))
        #expect(failures { try context.save() } == ["Shelf.books has 1 member, at least 2 required"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
    }
}
