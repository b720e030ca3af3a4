import Foundation
import GraphStore

/// A store the entity browser's tests make themselves from a model declared in code, so that they do not depend
/// on the Core Data corpus: a library with sub-entities (`Book` and `Magazine` are `Item`s), an ordered to-many
/// (`Book.chapters`), a many-to-many (`Book.authors` ↔ `Author.books`), a to-many with no inverse
/// (`Shelf.featured`), a Deny rule (`Shelf.items`), and attributes of every kind the browser shows.
///
/// ```swift
/// let folder = TemporaryFolder()
/// let path = try LibraryStore.make(in: folder)
/// ```
enum LibraryStore {
    static let books = 60
    static let magazines = 10
    static let authors = 30
    static let shelves = 3

    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Item") {
                Attribute("title", .string)
                Attribute("addedAt", .date)
                Attribute("price", .decimal)
                Attribute("code", .uuid)
                Attribute("isLoaned", .boolean)
                Attribute("cover", .binaryData)
                Attribute("extras", .transformable)
                Attribute("notes", .string)
                Relationship.toOne("shelf", "Shelf", inverse: "items")
            }
            EntityDescription("Book", parent: "Item") {
                Attribute("pages", .integer32)
                Relationship.toMany("authors", "Author", inverse: "books")
                Relationship.toMany("chapters", "Chapter", inverse: "book", ordered: true, deleteRule: .cascade)
            }
            EntityDescription("Magazine", parent: "Item") {
                Attribute("issue", .integer16)
            }
            EntityDescription("Author") {
                Attribute("name", .string)
                Attribute("born", .date)
                Relationship.toMany("books", "Book", inverse: "authors")
            }
            EntityDescription("Chapter") {
                Attribute("heading", .string)
                Attribute("number", .integer32)
                Relationship.toOne("book", "Book", inverse: "chapters")
            }
            EntityDescription("Shelf") {
                Attribute("label", .string)
                Relationship.toMany("items", "Item", inverse: "shelf", deleteRule: .deny)
                Relationship.toMany("featured", "Item", inverse: nil)
            }
        }
    }

    /// How many chapters book `number` (from 1) has: 1 to 5.
    static func chapterCount(ofBook number: Int) -> Int { number % 5 + 1 }

    /// The shelf book or magazine `number` stands on (0 for A, 1 for B), or nil for every seventh.
    static func shelf(ofItem number: Int) -> Int? { number % 7 == 0 ? nil : number % 2 }

    /// The authors of book `number`: one to three, by their numbers (from 1).
    static func authors(ofBook number: Int) -> [Int] {
        Array(Set((0...(number % 3)).map { (number * 7 + $0 * 11) % authors + 1 })).sorted()
    }

    /// Makes the store as `library.sqlite` in `folder` and returns its path.
    static func make(in folder: TemporaryFolder) throws -> String {
        let path = folder.path("library.sqlite")
        let coordinator = try PersistentStoreCoordinator(path: path, model: model())
        let context = ObjectContext(coordinator: coordinator)
        let shelves = (0..<Self.shelves).map { index -> ManagedObject in
            let shelf = context.insert("Shelf")
            shelf.setValue(["A", "B", "C"][index], forKey: "label")
            return shelf
        }
        let authors = (1...Self.authors).map { number -> ManagedObject in
            let author = context.insert("Author")
            author.setValue("Author \(number)", forKey: "name")
            author.setValue(Date(timeIntervalSinceReferenceDate: Double(number) * -86_400 * 365), forKey: "born")
            return author
        }
        var items: [ManagedObject] = []
        for number in 1...(books + magazines) {
            let isBook = number <= books
            let item = context.insert(isBook ? "Book" : "Magazine")
            item.setValue(isBook ? "Book \(String(format: "%02d", (number * 37) % books))" : "Magazine \(number)", forKey: "title")
            item.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number) * 3_600), forKey: "addedAt")
            item.setValue(Decimal(number * 100 + 25) / 100, forKey: "price")
            item.setValue(UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(number))), forKey: "code")
            item.setValue(number % 4 == 0, forKey: "isLoaned")
            if number % 2 == 0 { item.setValue(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 40)), forKey: "cover") }
            item.setValue(Data("extra \(number)".utf8), forKey: "extras")
            item.setValue("first line\nsecond\u{1B}[31m red", forKey: "notes")
            if let shelf = shelf(ofItem: number) { item.setObject(shelves[shelf], forKey: "shelf") }
            if isBook {
                item.setValue(Int64(number * 10), forKey: "pages")
                for author in Self.authors(ofBook: number) { item.add(authors[author - 1], toKey: "authors") }
                let chapters = (1...chapterCount(ofBook: number)).map { index -> ManagedObject in
                    let chapter = context.insert("Chapter")
                    chapter.setValue("Chapter \(index) of book \(number)", forKey: "heading")
                    chapter.setValue(Int64(index), forKey: "number")
                    return chapter
                }
                // The relationship's order is the reverse of the order the chapters were made in (their keys).
                item.setObjects(chapters.reversed(), forKey: "chapters")
            } else {
                item.setValue(Int64(number), forKey: "issue")
            }
            items.append(item)
        }
        shelves[0].setObjects([items[4], items[2], items[60]], forKey: "featured")
        try context.save()
        return path
    }
}

/// A folder of its own under the temporary directory, removed with everything in it when released.
final class TemporaryFolder: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-browser-\(UUID().uuidString)")
    init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
