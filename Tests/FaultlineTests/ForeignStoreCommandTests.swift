import Foundation
import Testing

/// `check` and `delete` on stores Core Data made, with the model read from inside them.
@Suite(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
struct ForeignStoreCommandTests {
    @Test(arguments: CoreDataCorpus.stores)
    func checkReadsTheModelInsideAndChangesNothing(name: String) throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy(name, into: folder)
        let before = try CoreDataCorpus.snapshot(folder)
        let result = try FaultlineBinary.run(["check", store, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CoreDataCorpus.snapshot(folder) == before)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == true)
        // Each entity's rows are the rows of its table with its Z_ENT (the report lists entities by number).
        let entities = try #require(report["entities"] as? [[String: Any]])
        #expect(!entities.isEmpty)
        for (position, entity) in entities.enumerated() {
            let table = try #require(entity["table"] as? String)
            let number = position + 1
            let counted = try FaultlineBinary.sqliteRows(store, "SELECT COUNT(*) FROM \(table) WHERE Z_ENT = \(number)")
            #expect(counted == ["\(entity["rows"] as? Int ?? -1)"], "\(name) \(table) \(number)")
        }
    }

    @Test func checkAgainstTheModelFile() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let same = try FaultlineBinary.run(["check", store, "--model", try CoreDataCorpus.modelFile("cars-people")])
        #expect(same.status == 0)
        #expect(same.stdout.hasPrefix("\(store): ok\n"))
        let other = try FaultlineBinary.run(["check", store, "--model", try CoreDataCorpus.modelFile("authors-books")])
        #expect(other.status == 1)
        #expect(other.stdout.contains("table ZAUTHOR is missing"))
    }

    @Test func dryRunOnAnyStoreChangesNothing() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("books-pages", into: folder)
        // Counted first: the sqlite3 shell may touch a -shm, which the snapshot must not see.
        let pages = try FaultlineBinary.sqliteRows(store, "SELECT COUNT(*) FROM ZPAGE WHERE ZBOOK = 1")
        let before = try CoreDataCorpus.snapshot(folder)
        let result = try FaultlineBinary.run(["delete", store, "--object", "Book/p1", "--dry-run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let deleted = try #require(report["deleted"] as? [String: Int])
        // Book.pages cascades: the book and its pages go.
        #expect(deleted["Book"] == 1)
        #expect(pages == ["\(deleted["Page"] ?? -1)"])
        #expect(try CoreDataCorpus.snapshot(folder) == before)
    }

    @Test func writingNeedsWriteAndWarns() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("books-pages", into: folder)
        let before = try CoreDataCorpus.snapshot(folder)
        let refused = try FaultlineBinary.run(["delete", store, "--object", "Book/p1"])
        #expect(refused.status != 0)
        #expect(refused.stderr == "error: \(store): is not a chat store, so it is only read: add --write to delete from it, or --dry-run to see the plan\n")
        let chatOption = try FaultlineBinary.run(["delete", store, "--chat", "1", "--dry-run"])
        #expect(chatOption.stderr == "error: \(store): is not a chat store (its model cache is another model), so it has no Chat: name the object with --object\n")
        #expect(try CoreDataCorpus.snapshot(folder) == before)

        let pagesBefore = try FaultlineBinary.sqliteRows(store, "SELECT COUNT(*), SUM(ZPAGESCOUNT) FROM ZPAGE, (SELECT SUM(ZPAGESCOUNT) AS ZPAGESCOUNT FROM ZBOOK)")
        let written = try FaultlineBinary.run(["delete", store, "--object", "Book/p1", "--write", "--undo"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stderr.hasPrefix("warning: \(store) is not a chat store and --write lets this command change it"))
        #expect(written.stdout.contains("undone and saved: 100 objects back with their keys"))
        // Core Data's own derived-count triggers ran through the delete and the undo.
        #expect(try FaultlineBinary.sqliteRows(store, "SELECT COUNT(*), SUM(ZPAGESCOUNT) FROM ZPAGE, (SELECT SUM(ZPAGESCOUNT) AS ZPAGESCOUNT FROM ZBOOK)") == pagesBefore)
        #expect(try FaultlineBinary.run(["check", store]).status == 0)
    }

    /// Rows are found by Z_ENT: a store whose Z_PRIMARYKEY numbers entities otherwise than the model is refused,
    /// naming the difference, before anything is read from it.
    /// A table and indexes of the app's own beside Core Data's are no reason to refuse the store (its model's tables
    /// are all there, as they were); a column the model does not have in one of its tables still is.
    @Test func anAppsOwnTableBesideTheModelsIsNoMismatch() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        _ = try FaultlineBinary.sqliteRows(store, "CREATE TABLE ZEXTRA (Z_PK INTEGER PRIMARY KEY, ZNOTE VARCHAR); "
            + "CREATE INDEX ZEXTRA_ZNOTE_INDEX ON ZEXTRA (ZNOTE); CREATE INDEX ZCAR_BY_VERSION ON ZCAR (Z_OPT)")
        for arguments in [["delete", store, "--object", "Car/p1", "--dry-run"], ["trace", store, "--size", "100x30"], ["check", store]] {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
        }
        _ = try FaultlineBinary.sqliteRows(store, "ALTER TABLE ZPERSON ADD COLUMN ZNICKNAME VARCHAR")
        let result = try FaultlineBinary.run(["delete", store, "--object", "Car/p1", "--dry-run"])
        #expect(result.stderr == "error: \(store): was made for a different model (table ZPERSON has unexpected ZNICKNAME)\n")
    }

    /// A key of the right table whose row is another entity is named as what it is.
    @Test func anObjectOfAnotherEntityOfTheTableIsNamedAsWhatItIs() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        try #require(try FaultlineBinary.sqliteRows(store, "SELECT Z_ENT FROM ZCAR WHERE Z_PK = 1") == ["1"])
        let result = try FaultlineBinary.run(["delete", store, "--object", "SportCar/p1", "--dry-run"])
        #expect(result.status != 0)
        #expect(result.stderr == "error: \(store): row 1 of ZCAR is a Car, not a SportCar (LuxuryCar)\n")
    }

    @Test func entityNumbersMustAgree() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        _ = try FaultlineBinary.sqliteRows(store, "UPDATE Z_PRIMARYKEY SET Z_SUPER = 0 WHERE Z_ENT = 2")
        let result = try FaultlineBinary.run(["delete", store, "--object", "Car/p1", "--dry-run"])
        #expect(result.status != 0)
        #expect(result.stderr == "error: \(store): was made for a different model (entity 2 (SportCar) has parent 1 in the model but 0 in Z_PRIMARYKEY (SportCar))\n")
    }
}
