import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// The entity browser on a store made from a model declared in code (`LibraryStore`): what each step costs in
/// statements, faults and row-cache hits, sorting, filtering, following relationships, and writing only when asked.
@Suite(.serialized) struct EntityBrowserTests {
    /// The library, made once; tests that write take a copy.
    static let shared: (folder: TemporaryFolder, path: String) = {
        let folder = TemporaryFolder()
        do {
            return (folder, try LibraryStore.make(in: folder))
        } catch {
            preconditionFailure("the library store could not be made: \(error)")
        }
    }()

    static func browser(path: String = shared.path, writable: Bool = false, settings: BrowserSettings = BrowserSettings(),
                        width: Int = 140, height: Int = 40) throws -> EntityBrowserModel {
        let store = try ForeignStore.open(path: path, model: ForeignModel(objectModel: try LibraryStore.model()),
                                          writable: writable, settings: settings)
        let browser = EntityBrowserModel(store: store, settings: settings, width: width, height: height,
                                         timeZone: TimeZone(identifier: "UTC") ?? .current, activityClock: { 0 })
        browser.apply(.browser(.start))
        return browser
    }

    /// A second context on the same file, for answers the browser's own reads must match.
    static func reference(_ path: String = shared.path) throws -> ObjectContext {
        ObjectContext(coordinator: try PersistentStoreCoordinator(path: path, model: try LibraryStore.model(),
                                                                  options: .init(readOnly: true, createIfMissing: false)))
    }

    /// The statements of the last action, in order.
    static func statements(_ browser: EntityBrowserModel) -> [SQLLogEntry] {
        guard let numbers = browser.activity.lastAction?.entryNumbers else { return [] }
        return browser.activity.sqlLog.filter { numbers.contains($0.number) }.reversed()
    }

    static func list(_ browser: EntityBrowserModel) throws -> ObjectListState {
        guard case .list(let list) = browser.state.main else { throw Failure("the main pane shows no list: \(String(describing: browser.state.main))") }
        return list
    }

    static func object(_ browser: EntityBrowserModel) throws -> ObjectDetailState {
        guard case .object(let object) = browser.state.main else { throw Failure("the main pane shows no object: \(String(describing: browser.state.main))") }
        return object
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: entities

    @Test func theEntitiesAreCountedOneCountEachSubEntitiesUnderTheirParents() throws {
        let browser = try Self.browser()
        let start = try #require(browser.activity.lastAction)
        let rows = browser.state.entities.rows
        #expect(rows.map(\.name) == ["Author", "Chapter", "Item", "Book", "Magazine", "Shelf"])
        #expect(rows.map(\.depth) == [0, 0, 0, 1, 1, 0])
        // An entity's count is of its objects and its sub-entities': every Book and Magazine is an Item.
        let chapters = (1...LibraryStore.books).reduce(0) { $0 + LibraryStore.chapterCount(ofBook: $1) }
        #expect(rows.map(\.count) == [LibraryStore.authors, chapters, LibraryStore.books + LibraryStore.magazines,
                                      LibraryStore.books, LibraryStore.magazines, LibraryStore.shelves])
        #expect(start.counts.statements == rows.count)
        #expect(Self.statements(browser).allSatisfy { $0.sql.hasPrefix("SELECT COUNT(*)") })
        // The sub-entities' counts are of their own Z_ENT numbers in the shared table.
        let book = try #require(Self.statements(browser).first { $0.sql.contains("ZITEM") && $0.arguments.count == 1 })
        #expect(book.sql.contains("Z_ENT"))
    }

    // MARK: lists

    @Test func openingAnEntityIsOneBatchedFetchAndItsRowsAreCacheHits() throws {
        let browser = try Self.browser()
        let open = browser.apply(.entity("Book"))
        let list = try Self.list(browser)
        #expect(list.count == LibraryStore.books)
        // 40 rows less the status line and the hint bar, the pane's title, the breadcrumb and the headings.
        #expect(list.rows.count == 35)
        // Windowed batching: the first batch's rows, then the count.
        #expect(open.counts.statements == 2)
        #expect(open.counts.fetches == 1)
        // Each row shown reads its object: a fault served by the row cache, which the fetch filled.
        #expect(open.counts.objectFaults == list.rows.count)
        #expect(open.counts.cacheHits == list.rows.count)
        #expect(open.counts.cacheMisses == 0)
        #expect(browser.state.breadcrumb == ["Book"])
        // Moving within the rows read costs nothing; past them, the next IDs in order, then the next batch's rows.
        #expect(browser.apply(.browser(.down)).counts.statements == 0)
        let next = browser.apply(.browser(.pageDown))
        let statements = Self.statements(browser)
        #expect(next.counts.statements == 2)
        #expect(statements.first?.sql.hasPrefix("SELECT t0.Z_PK FROM ZITEM t0") == true)
        #expect(statements.last?.sql.contains("t0.Z_PK IN (") == true)
        #expect(next.counts.cacheMisses == 0)
    }

    @Test func batchingOffReadsTheWholeListInOneStatement() throws {
        let browser = try Self.browser(settings: BrowserSettings(batchSize: 0))
        let open = browser.apply(.entity("Item"))
        #expect(open.counts.statements == 1)
        #expect(Self.statements(browser).first?.rows == LibraryStore.books + LibraryStore.magazines)
        let list = try Self.list(browser)
        // Item has sub-entities: the list says which each object is.
        #expect(list.columns.first?.kind == .entity)
        #expect(Set(list.rows.map { $0.cells[0].text }) == ["Book"])
    }

    @Test func sortingByAnAttributeAndReversingIt() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        let sorted = browser.apply(.sort("title", ascending: true))
        #expect(sorted.counts.statements == 2)
        #expect(Self.statements(browser).contains { $0.sql.contains("ORDER BY t0.ZTITLE") })
        var list = try Self.list(browser)
        #expect(list.sortLabel == "title ↑")
        // The sorted attribute is the first column (after the entity's own).
        let titleColumn = try #require(list.columns.firstIndex { $0.key == "title" })
        let titles = list.rows.map { $0.cells[titleColumn].text }
        #expect(titles == titles.sorted())
        #expect(titles.first == "Book 00")
        browser.apply(.reverseSort)
        list = try Self.list(browser)
        #expect(list.rows.first?.cells[titleColumn].text == "Book 59")
        #expect(list.sortLabel == "title ↓")
        // `s` goes on to the next attribute, ascending.
        browser.apply(.cycleSort)
        #expect(try Self.list(browser).sortLabel == "addedAt ↑")
        // A key the entity cannot be sorted by is refused, and the list stays.
        let refused = browser.apply(.sort("cover", ascending: true))
        #expect(refused.counts.statements == 0)
        #expect(browser.state.messageIsError)
        #expect(try Self.list(browser).sortLabel == "addedAt ↑")
    }

    @Test func filteringWithAPredicate() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        let filtered = browser.apply(.filter("pages > 300 AND isLoaned == NO"))
        let expected = (1...LibraryStore.books).filter { $0 * 10 > 300 && $0 % 4 != 0 }.count
        #expect(try Self.list(browser).count == expected)
        // Fewer matches than a batch: the first batch's statement tells the count too.
        #expect(expected < 35)
        #expect(filtered.counts.statements == 1)
        #expect(Self.statements(browser).allSatisfy { $0.sql.contains("ZPAGES > ?") })
        #expect(browser.state.message == "\(expected) objects match pages > 300 AND isLoaned == NO")
        #expect(try Self.list(browser).filter == "pages > 300 AND isLoaned == NO")
        // Cleared, the list is whole again.
        browser.apply(.filter(""))
        #expect(try Self.list(browser).count == LibraryStore.books)
    }

    @Test func aBadPredicateShowsItsErrorAndLeavesTheListAsItWas() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        browser.apply(.filter("pages > 300"))
        let before = try Self.list(browser)
        // It does not parse: nothing runs.
        let unparsed = browser.apply(.filter("pages >"))
        #expect(unparsed.counts.statements == 0)
        #expect(browser.state.messageIsError)
        #expect(browser.state.message?.hasPrefix("filter 'pages >': position 7") == true)
        #expect(try Self.list(browser) == before)
        // It parses, but names no key of Book: the fetch refuses it before any statement.
        let unknown = browser.apply(.filter("shelf.nosuch == 'A'"))
        #expect(unknown.counts.statements == 0)
        #expect(browser.state.messageIsError)
        #expect(browser.state.message?.contains("nosuch") == true)
        #expect(try Self.list(browser).filter == "pages > 300")
        #expect(try Self.list(browser).count == before.count)
    }

    @Test func theFilterFieldAppliesOnEnterAndEscLeavesTheList() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Magazine"))
        #expect(browser.action(for: .character("/")) == .browser(.beginSearch))
        browser.apply(.browser(.beginSearch))
        for character in "issue > 65" {
            let action = try #require(browser.action(for: .character(character)))
            #expect(browser.apply(action).counts.statements == 0)
        }
        #expect(browser.state.overlay == .search("issue > 65"))
        browser.apply(try #require(browser.action(for: .enter)))
        #expect(browser.state.overlay == .none)
        #expect(try Self.list(browser).count == 5)
        browser.apply(.browser(.beginSearch))
        browser.apply(.browser(.type("x")))
        browser.apply(try #require(browser.action(for: .escape)))
        #expect(try Self.list(browser).filter == "issue > 65")
    }

    @Test func prefetchingTheToOnesShown() throws {
        // Joined: the shelves come with the batch, and naming them is a row-cache hit each.
        let joined = try Self.browser()
        joined.apply(.entity("Book"))
        let withPrefetch = joined.apply(.columns(["title", "shelf"]))
        #expect(withPrefetch.counts.statements == 2)
        #expect(withPrefetch.counts.cacheMisses == 0)
        #expect(Self.statements(joined).contains { $0.sql.contains("LEFT JOIN ZSHELF") })
        #expect(withPrefetch.warnings.isEmpty)
        // Off: each shelf is a fault of its own, one statement each (two shelves), and the panel says what to press.
        let off = try Self.browser(settings: BrowserSettings(prefetch: .off))
        off.apply(.entity("Book"))
        let without = off.apply(.columns(["title", "shelf"]))
        #expect(without.counts.cacheMisses == 2)
        #expect(off.state.focus == .objects)
        let shelves = try Self.list(off).rows.map { $0.cells[1].text }
        #expect(Set(shelves) == ["p1 A", "p2 B", "—"])
    }

    @Test func aLeverThatMeansNothingWhereItIsPressedSaysSo() throws {
        let browser = try Self.browser()
        // No list is open: the batch size is set, and nothing is read again.
        let batch = browser.apply(.browser(.cycleBatch))
        #expect(batch.counts.statements == 0)
        #expect(browser.state.message == "object lists: batch 100 windowed (it applies to lists of objects; nothing shown now is one)")
        // A list showing no to-one has nothing to prefetch: its hint says so, and toggling reads nothing again.
        browser.apply(.entity("Author"))
        let hints = EntityBrowserView.frame(browser.state, activity: browser.activity).lines.last?.text ?? ""
        #expect(hints.contains("p nothing to prefetch"))
        let prefetch = browser.apply(.browser(.togglePrefetch))
        #expect(prefetch.counts.statements == 0)
        #expect(browser.state.message == "prefetch of the to-ones shown: off (this list shows no to-one: v brings them into view)")
        // Counts are the object pane's.
        let counts = browser.apply(.browser(.toggleDerived))
        #expect(counts.counts.statements == 0)
        #expect(browser.state.message == "to-many counts in the object pane: off (it applies to the object pane; nothing shown now is one)")
        #expect(!hints.contains("c counts"))
    }

    @Test func columnsCycleFromTheNextAttributeOn() throws {
        let browser = try Self.browser(width: 200)
        browser.apply(.entity("Author"))
        #expect(try Self.list(browser).columns.map(\.key) == ["name", "born"])
        browser.apply(.cycleColumns)
        #expect(try Self.list(browser).columns.map(\.key) == ["born"])
        browser.apply(.cycleColumns)
        #expect(try Self.list(browser).columns.map(\.key) == ["name", "born"])
        let unknown = browser.apply(.columns(["name", "nosuch"]))
        #expect(unknown.counts.statements == 0)
        #expect(browser.state.message == "Author has no attribute or to-one 'nosuch'")
    }

    // MARK: one object and its relationships

    @Test func openingAnObjectCountsItsToManysWhenCountsAreOn() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        let open = browser.apply(.browser(.open))
        let object = try Self.object(browser)
        #expect(object.title == "Book p1 Book 37")
        // Its row was read by the list: no fault of its own; each to-many counted by its inverse.
        #expect(open.counts.cacheMisses == 0)
        #expect(open.counts.statements == 2)
        #expect(Self.statements(browser).allSatisfy { $0.sql.hasPrefix("SELECT COUNT(*)") })
        let rows = Dictionary(uniqueKeysWithValues: object.rows.map { ($0.name, $0) })
        #expect(rows["authors"]?.value.text == "⇉ \(LibraryStore.authors(ofBook: 1).count) Author")
        #expect(rows["chapters"]?.value.text == "⇉ \(LibraryStore.chapterCount(ofBook: 1)) Chapter")
        #expect(rows["shelf"]?.value.text == "→ Shelf p2")
        #expect(browser.state.breadcrumb == ["Book", "p1 Book 37"])
        // Counts off: no statement at all.
        browser.apply(.browser(.back))
        browser.apply(.browser(.toggleDerived))
        let uncounted = browser.apply(.browser(.open))
        #expect(uncounted.counts.statements == 0)
        #expect(try Self.object(browser).rows.first { $0.name == "authors" }?.value.text == "⇉ Author (Enter lists them; c counts)")
    }

    @Test func followingAToOneFiresItsDestinationsFault() throws {
        let browser = try Self.browser(settings: BrowserSettings(derivedCounts: false))
        browser.apply(.entity("Book"))
        browser.apply(.browser(.open))
        let followed = browser.apply(.follow("shelf"))
        #expect(followed.counts.statements == 1)
        #expect(followed.counts.objectFaults == 1)
        #expect(followed.counts.cacheMisses == 1)
        let fault = try #require(Self.statements(browser).first)
        #expect(fault.cause == .objectFault(entity: "Shelf", key: "label"))
        #expect(try Self.object(browser).title == "Shelf p2 B")
        #expect(browser.state.breadcrumb == ["Book", "p1 Book 37", "Shelf p2 B"])
        // Back along the path: the book again, nothing read.
        #expect(browser.apply(.browser(.back)).counts.statements == 0)
        #expect(try Self.object(browser).title == "Book p1 Book 37")
    }

    @Test func followingAManyToManyListsItsMembersBatched() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        browser.apply(.browser(.down))
        browser.apply(.browser(.open))
        let followed = browser.apply(.follow("authors"))
        let list = try Self.list(browser)
        #expect(list.title == "authors of Book p2 Book 14")
        // The members by their inverse, ANY books == the book, through the join table: one batch, short, which
        // tells the count too.
        #expect(followed.counts.statements == 1)
        #expect(followed.counts.relationshipFaults == 0)
        #expect(Self.statements(browser).first?.sql.contains("Z_1BOOKS") == true)
        let reference = try Self.reference()
        let book = try #require(try reference.fetch("Book", where: [("pages", .integer(20))]).first)
        let expected = book.objectIDs(forRelationshipNamed: "authors").map { "p\($0.primaryKey)" }
        #expect(list.rows.map(\.key) == expected)
        #expect(browser.state.breadcrumb == ["Book", "p2 Book 14", "authors"])
        browser.apply(.browser(.open))
        #expect(browser.state.breadcrumb.last?.hasPrefix("Author p") == true)
    }

    @Test func anOrderedToManyListsItsMembersInItsOwnOrder() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        for _ in 0..<3 { browser.apply(.browser(.down)) }
        browser.apply(.browser(.open))
        let followed = browser.apply(.follow("chapters"))
        // The relationship fault reads the IDs in order; one fetch reads their batch.
        #expect(followed.counts.relationshipFaults == 1)
        #expect(followed.counts.statements == 2)
        #expect(followed.counts.cacheMisses == 0)
        let list = try Self.list(browser)
        #expect(list.sortLabel == "relationship order")
        let keys = list.rows.map { Int($0.key.dropFirst()) ?? 0 }
        #expect(keys.count == LibraryStore.chapterCount(ofBook: 4))
        // Made in one order, kept in the reverse: the list follows the relationship, not the keys.
        #expect(keys == keys.sorted(by: >))
        // Sorted by an attribute, it is a batched fetch by the inverse instead.
        browser.apply(.sort("number", ascending: true))
        #expect(Self.statements(browser).contains { $0.sql.contains("ZBOOK = ?") })
        #expect(try Self.list(browser).rows.map { Int($0.key.dropFirst()) ?? 0 } == keys.sorted())
        // `s` comes round to the relationship's order after the key and each attribute.
        browser.apply(.sort("SELF", ascending: true))
        for _ in 0..<3 { browser.apply(.cycleSort) }
        #expect(try Self.list(browser).sortLabel == "relationship order")
        // With batching off, each member is a fault of its own: the N+1 the panel warns of.
        browser.apply(.browser(.batch(0)))
        let unbatched = browser.apply(.browser(.clearCache))
        // The row cache emptied: the book's own fault (its title names the list), its relationship fault, and one
        // fault per chapter.
        #expect(unbatched.counts.statements == 2 + keys.count)
        #expect(unbatched.counts.relationshipFaults == 1)
        #expect(unbatched.counts.cacheMisses == 1 + keys.count)
        #expect(unbatched.warnings.map(\.kind) == [.nPlusOne])
    }

    @Test func aToManyWithNoInverseIsListedFromItsRelationshipFault() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Shelf"))
        let open = browser.apply(.browser(.open))
        #expect(open.counts.statements == 1)
        let rows = try Self.object(browser).rows
        #expect(rows.first { $0.name == "featured" }?.value.text == "⇉ Item (no inverse to count by; Enter lists them)")
        let followed = browser.apply(.follow("featured"))
        #expect(followed.counts.relationshipFaults == 1)
        #expect(try Self.list(browser).rows.map(\.key) == ["p3", "p5", "p61"])
    }

    @Test func followingWhatIsNotThereSaysSo() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        browser.apply(.browser(.open))
        let missing = browser.apply(.follow("nosuch"))
        #expect(missing.counts.statements == 0)
        #expect(browser.state.message == "Book has no relationship 'nosuch'; it has: shelf, authors, chapters")
        #expect(browser.state.messageIsError)
    }

    // MARK: values

    @Test func valuesAreShownReadably() throws {
        let browser = try Self.browser(width: 200)
        browser.apply(.entity("Book"))
        for _ in 0..<3 { browser.apply(.browser(.down)) }
        browser.apply(.browser(.open))
        let rows = Dictionary(uniqueKeysWithValues: try Self.object(browser).rows.map { ($0.name, $0.value.text) })
        #expect(rows["addedAt"] == "2023-03-09 00:26:40.000 +00:00")
        #expect(rows["price"] == "4.25")
        #expect(rows["code"] == "00000000-0000-4000-8000-000000000004")
        #expect(rows["isLoaned"] == "yes")
        #expect(rows["pages"] == "40")
        #expect(rows["cover"] == "48 B  89 50 4e 47 0d 0a 1a 0a 00 00 00 00 00 00 00 00…")
        #expect(rows["extras"] == "7 B  65 78 74 72 61 20 34")
        // Control characters reach the screen escaped, never raw.
        #expect(rows["notes"] == "first line\\nsecond\\u{1B}[31m red")
        let frame = EntityBrowserView.frame(browser.state, activity: browser.activity).text
        #expect(!frame.unicodeScalars.contains { $0.value == 0x1B })
    }

    // MARK: read-only and writing

    @Test func aReadOnlyStoreOffersNoKeyThatWrites() throws {
        let browser = try Self.browser()
        browser.apply(.entity("Book"))
        let hints = EntityBrowserView.frame(browser.state, activity: browser.activity).lines.last?.text ?? ""
        #expect(hints.contains("s sort"))
        #expect(!hints.contains("d delete") && !hints.contains("w save") && !hints.contains("u undo"))
        let refused = browser.apply(.browser(.delete))
        #expect(refused.counts.statements == 0)
        #expect(browser.state.overlay == .none)
        #expect(browser.state.messageIsError)
        #expect(EntityBrowserView.frame(browser.state, activity: browser.activity).lines.dropLast().last?.text.contains("read-only") == true)
    }

    @Test func deletingByTheDeleteRulesThenUndoing() throws {
        let folder = TemporaryFolder()
        let path = folder.path("library.sqlite")
        try FileManager.default.copyItem(atPath: Self.shared.path, toPath: path)
        let browser = try Self.browser(path: path, writable: true)
        browser.apply(.entity("Book"))
        let hints = EntityBrowserView.frame(browser.state, activity: browser.activity).lines.last?.text ?? ""
        #expect(hints.contains("d delete"))
        browser.apply(.browser(.delete))
        guard case .deletePreview(let preview) = browser.state.overlay else {
            Issue.record("no delete preview: \(browser.state.message ?? "")")
            return
        }
        // Book p4 (book 1) takes its chapters with it (Cascade) and leaves its authors (Nullify).
        #expect(preview.deleted.map(\.0) == ["Book", "Chapter"])
        #expect(preview.deleted.map(\.1) == [1, LibraryStore.chapterCount(ofBook: 1)])
        #expect(preview.denied.isEmpty)
        browser.apply(.browser(.confirm))
        #expect(try Self.list(browser).count == LibraryStore.books - 1)
        #expect(browser.state.pending == "1 changed, \(1 + LibraryStore.chapterCount(ofBook: 1)) deleted"
            || browser.state.pending?.contains("deleted") == true)
        let saved = browser.apply(.browser(.save))
        #expect(saved.saveSucceeded == true)
        #expect(try Self.reference(path).count(for: FetchRequest(entityName: "Book")) == LibraryStore.books - 1)
        #expect(browser.state.entities.rows.first { $0.name == "Book" }?.count == LibraryStore.books - 1)
        browser.apply(.browser(.undo))
        #expect(try Self.reference(path).count(for: FetchRequest(entityName: "Book")) == LibraryStore.books)
        #expect(try Self.list(browser).count == LibraryStore.books)
    }

    @Test func aDenyRuleRefusesTheDelete() throws {
        let folder = TemporaryFolder()
        let path = folder.path("library.sqlite")
        try FileManager.default.copyItem(atPath: Self.shared.path, toPath: path)
        let browser = try Self.browser(path: path, writable: true)
        browser.apply(.entity("Shelf"))
        browser.apply(.browser(.open))
        browser.apply(.browser(.delete))
        guard case .deletePreview(let preview) = browser.state.overlay else {
            Issue.record("no delete preview: \(browser.state.message ?? "")")
            return
        }
        #expect(preview.denied.count == 1)
        browser.apply(.browser(.confirm))
        #expect(browser.state.messageIsError)
        #expect(browser.state.pending == nil)
    }

    /// A delete the save's validation would refuse (a survivor's required to-one cleared) is refused at the preview,
    /// as a Deny rule's is: the overlay names the relationship and the first object, and confirming deletes nothing.
    @Test func aDeleteLeavingARequiredRelationshipEmptyIsRefusedAtThePreview() throws {
        let folder = TemporaryFolder()
        let path = folder.path("books.sqlite")
        let model = try ObjectModel {
            EntityDescription("Writer") {
                Attribute("name", .string)
                Relationship.toMany("books", "Book", inverse: "author")
            }
            EntityDescription("Book") {
                Attribute("title", .string)
                Relationship.toOne("author", "Writer", inverse: "books").required()
            }
        }
        do {
            let context = ObjectContext(coordinator: try PersistentStoreCoordinator(path: path, model: model))
            let writer = context.insert("Writer")
            writer.setValue("ann", forKey: "name")
            let book = context.insert("Book")
            book.setValue("one", forKey: "title")
            book.setObject(writer, forKey: "author")
            try context.save()
        }
        let store = try ForeignStore.open(path: path, model: ForeignModel(objectModel: model), writable: true, settings: BrowserSettings())
        let browser = EntityBrowserModel(store: store, settings: BrowserSettings(), width: 140, height: 40,
                                         timeZone: TimeZone(identifier: "UTC") ?? .current, activityClock: { 0 })
        browser.apply(.browser(.start))
        browser.apply(.entity("Writer"))
        browser.apply(.browser(.delete))
        guard case .deletePreview(let preview) = browser.state.overlay else {
            Issue.record("no delete preview: \(browser.state.message ?? "")")
            return
        }
        #expect(preview.denied.isEmpty)
        #expect(preview.invalid.count == 1)
        #expect(preview.invalid.first?.hasPrefix("Book.author is required, and would be cleared: 1 object (first x-coredata://") == true)
        let frame = EntityBrowserView.frame(browser.state, activity: browser.activity).text
        #expect(frame.contains("Refused: the save would fail validation"))
        #expect(frame.contains("Nothing will change. Esc closes."))
        browser.apply(.browser(.confirm))
        #expect(browser.state.messageIsError)
        #expect(browser.state.message?.hasPrefix("not deleted: the save would fail validation: Book.author is required") == true)
        #expect(browser.state.pending == nil)
    }
}
