import Foundation
import GRDB
import GraphStore
import Testing

@Suite struct PersistentStoreOpeningTests {
    @Test func newStoreHasExactlyTheSchemaAndBookkeepingRows() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("contacts.sqlite")
        let model = try ExperimentModels.contacts()
        let uuid = UUID(uuidString: "00000000-0000-0000-0000-0000000000AB")!
        let store = try PersistentStore.open(path: path, model: model, options: .init(storeUUID: uuid))
        #expect(store.wasCreated)
        #expect(store.storeUUID == uuid.uuidString)
        try store.database.read { db in
            #expect(try StoreCatalog.read(db) == StoreCatalog(schema: store.schema))
            let sql = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
            #expect(sql == store.schema.createStatements)
            let keys = try String.fetchAll(db, sql: "SELECT Z_ENT || ' ' || Z_NAME || ' ' || Z_SUPER || ' ' || Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            #expect(keys == ["1 Contact 0 0", "2 Group 1 0", "3 User 1 0", "4 Message 0 0"])
            #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal")
            let cached = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE")!
            #expect(try ModelCache.decode(cached) == model)
        }
    }

    @Test func reopensAnExistingStore() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("quakes.sqlite")
        let first = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
        let uuid = first.storeUUID
        let again = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
        #expect(!again.wasCreated)
        #expect(again.storeUUID == uuid)
        #expect(!again.isReadOnly)
    }

    /// Opening a store again in the same process reads its header through the descriptor SQLite already has,
    /// never a new one: closing a descriptor drops every POSIX lock the process holds on the file, SQLite's shared
    /// lock on the database among them (held by every connection of a WAL store, and by a rollback store's readers
    /// in a transaction, whose pages another process could then rewrite under them). The kernel's list of locks shows
    /// the lock kept.
    @Test func openingAStoreAgainKeepsTheLocksItsOpenConnectionsHold() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("quakes.sqlite")
        let first = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
        let writer = try first.databaseWriter()
        try writer.write { db in try db.execute(sql: "CREATE TABLE probe (x); INSERT INTO probe VALUES (1)") }
        func holdsSharedLock() throws -> Bool {
            var info = stat()
            try #require(stat(path, &info) == 0)
            let locks = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
            // e.g. "2: POSIX  ADVISORY  READ 4242 fe:00:16224908 1073741826 1073742335": SQLite's shared bytes.
            return locks.split(separator: "\n").contains { line in
                let fields = line.split(separator: " ")
                return fields.count >= 8 && fields[4] == "\(getpid())" && fields[5].hasSuffix(":\(info.st_ino)")
                    && fields[6] == "1073741826"
            }
        }
        try #require(try holdsSharedLock(), "the first store's connection holds no shared lock to keep")
        for readOnly in [false, true] {
            _ = try PersistentStore.open(path: path, model: try ExperimentModels.quakes(), options: .init(readOnly: readOnly))
            #expect(try holdsSharedLock(), "opening again (read-only: \(readOnly)) dropped the first store's lock")
        }
        try writer.write { db in try db.execute(sql: "INSERT INTO probe VALUES (2)") }
        #expect(try first.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM probe") } == 2)
    }

    @Test(arguments: ["students", "associates", "quakes", "employees", "contacts"])
    func sqlite3RunsTheDDLAsIs(name: String) throws {
        let models = ["students": ExperimentModels.students, "associates": ExperimentModels.associates, "quakes": ExperimentModels.quakes,
                      "employees": ExperimentModels.employees, "contacts": ExperimentModels.contacts]
        let schema = StoreSchema(model: try models[name]!())
        let folder = try TemporaryDirectory()
        let path = folder.path("\(name).sqlite")
        let result = try run("/usr/bin/sqlite3", ["-bail", path], input: schema.ddl)
        #expect(result.status == 0, "\(result.output)")
        let catalog = try DatabaseQueue(path: path).read(StoreCatalog.read)
        #expect(catalog == StoreCatalog(schema: schema))
    }

    @Test func derivedCountTriggersKeepCountsWhateverWritesTheRows() throws {
        let folder = try TemporaryDirectory()
        let store = try PersistentStore.open(path: folder.path("c.sqlite"), model: try ExperimentModels.contacts())
        try store.databaseWriter().write { db in
            // Group (Z_ENT 2) and three users (Z_ENT 3), linked with plain SQL.
            try db.execute(sql: "INSERT INTO ZCONTACT (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 2, 1, 'g'), (2, 3, 1, 'a'), (3, 3, 1, 'b'), (4, 3, 1, 'c')")
            try db.execute(sql: "INSERT INTO Z_2MEMBERS (Z_2GROUPS, Z_3MEMBERS) VALUES (1, 2), (1, 3), (1, 4)")
            #expect(try Int.fetchOne(db, sql: "SELECT ZMEMBERSCOUNT FROM ZCONTACT WHERE Z_PK = 1") == 3)
            #expect(try Int.fetchOne(db, sql: "SELECT ZMEMBERSCOUNT FROM ZCONTACT WHERE Z_PK = 2") == nil)
            try db.execute(sql: "DELETE FROM Z_2MEMBERS WHERE Z_3MEMBERS = 3")
            #expect(try Int.fetchOne(db, sql: "SELECT ZMEMBERSCOUNT FROM ZCONTACT WHERE Z_PK = 1") == 2)
            // Copied attribute follows the to-one and the copied value.
            try db.execute(sql: "INSERT INTO ZMESSAGE (Z_PK, Z_ENT, Z_OPT, ZTEXT, ZCONTACT, Z1_CONTACT) VALUES (1, 4, 1, 'hi', 2, 3)")
            #expect(try String.fetchOne(db, sql: "SELECT ZCONTACTNAME FROM ZMESSAGE") == "a")
            try db.execute(sql: "UPDATE ZCONTACT SET ZNAME = 'renamed' WHERE Z_PK = 2")
            #expect(try String.fetchOne(db, sql: "SELECT ZCONTACTNAME FROM ZMESSAGE") == "renamed")
            try db.execute(sql: "UPDATE ZMESSAGE SET ZCONTACT = 4 WHERE Z_PK = 1")
            #expect(try String.fetchOne(db, sql: "SELECT ZCONTACTNAME FROM ZMESSAGE") == "c")
        }
    }

    @Test func countTriggersFollowForeignKeysToo() throws {
        let model = try ObjectModel {
            EntityDescription("Chat") {
                Attribute("title", .string)
                Relationship.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
                Attribute.derived("messagesCount", "messages.@count")
            }
            EntityDescription("Message") {
                Attribute("text", .string)
                Relationship.toOne("chat", "Chat", inverse: "messages")
            }
        }
        let folder = try TemporaryDirectory()
        let store = try PersistentStore.open(path: folder.path("c.sqlite"), model: model)
        try store.databaseWriter().write { db in
            try db.execute(sql: "INSERT INTO ZMESSAGE (Z_PK, Z_ENT, Z_OPT, ZCHAT) VALUES (1, 2, 1, 1), (2, 2, 1, 1)")
            try db.execute(sql: "INSERT INTO ZCHAT (Z_PK, Z_ENT, Z_OPT) VALUES (1, 1, 1), (2, 1, 1)")
            #expect(try Int.fetchAll(db, sql: "SELECT ZMESSAGESCOUNT FROM ZCHAT ORDER BY Z_PK") == [2, 0])
            try db.execute(sql: "UPDATE ZMESSAGE SET ZCHAT = 2 WHERE Z_PK = 1")
            #expect(try Int.fetchAll(db, sql: "SELECT ZMESSAGESCOUNT FROM ZCHAT ORDER BY Z_PK") == [1, 1])
            try db.execute(sql: "DELETE FROM ZMESSAGE")
            #expect(try Int.fetchAll(db, sql: "SELECT ZMESSAGESCOUNT FROM ZCHAT ORDER BY Z_PK") == [0, 0])
        }
    }

    // MARK: refusals leave every file as it was

    private func expectRefusal(_ path: String, model: ObjectModel, _ expected: String) throws {
        let paths = [path, path + "-wal", path + "-shm", path + "-journal"]
        let before = snapshot(paths)
        #expect(throws: StoreError.self) { try PersistentStore.open(path: path, model: model) }
        do {
            _ = try PersistentStore.open(path: path, model: model)
        } catch {
            #expect(error.description == expected)
        }
        #expect(snapshot(paths) == before)
    }

    @Test func refusesAStoreMadeForAnotherModel() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("students.sqlite")
        do { _ = try PersistentStore.open(path: path, model: try ExperimentModels.students()) }
        try checkpointAndClose(path)
        try expectRefusal(path, model: try ExperimentModels.quakes(), "\(path): was made for a different model (entity 'Address' is in the store but not in the model; entity 'Class' is in the store but not in the model; entity 'Country' is in the model but not in the store; entity 'Quake' is in the model but not in the store; entity 'Student' is in the store but not in the model; entity 'Subject' is in the store but not in the model)")

        var changed = try ExperimentModels.students().declarations
        changed[0].attributes.append(Attribute("zip", .string))
        try expectRefusal(path, model: try ObjectModel(changed), "\(path): was made for a different model (entity 'Address' differs)")
    }

    @Test func refusesSQLiteThatIsNotAStore() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("other.sqlite")
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        try expectRefusal(path, model: try ExperimentModels.quakes(), "\(path): is an SQLite database but not a Faultline store (it has no Z_METADATA table)")
    }

    @Test func refusesFilesThatAreNotWholeDatabases() throws {
        let folder = try TemporaryDirectory()
        let model = try ExperimentModels.quakes()
        let text = folder.path("notes.txt")
        try Data("hello, this is text\n".utf8).write(to: URL(fileURLWithPath: text))
        try expectRefusal(text, model: model, "\(text): is not an SQLite database")

        let empty = folder.path("empty.sqlite")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        try expectRefusal(empty, model: model, "\(empty): is empty (0 bytes), not a store")

        try expectRefusal(folder.url.path, model: model, "\(folder.url.path): is a directory, not a store file")

        let whole = folder.path("whole.sqlite")
        do { _ = try PersistentStore.open(path: whole, model: model) }
        try checkpointAndClose(whole)
        let bytes = FileManager.default.contents(atPath: whole)!
        let truncated = folder.path("truncated.sqlite")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        try expectRefusal(truncated, model: model, "\(truncated): is truncated (\(bytes.count / 2) of \(bytes.count) bytes): the file is damaged")
    }

    @Test func refusesToCreateWhenAskedNotTo() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("absent.sqlite")
        #expect(throws: StoreError.noSuchFile(path: path)) {
            try PersistentStore.open(path: path, model: try ExperimentModels.quakes(), options: .init(createIfMissing: false))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func readOnlyStoreRefusesWrites() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("q.sqlite")
        do { _ = try PersistentStore.open(path: path, model: try ExperimentModels.quakes()) }
        let store = try PersistentStore.open(path: path, model: try ExperimentModels.quakes(), options: .init(readOnly: true))
        #expect(store.isReadOnly)
        #expect(throws: StoreError.readOnly(path: path)) { try store.databaseWriter() }
        #expect(try store.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Z_PRIMARYKEY") } == 2)
    }

    /// Opening a store writable writes nothing: a WAL store's file (with no `-wal` beside it, as a closed store
    /// leaves it) is byte for byte what it was after an open and a read, and its folder holds nothing new.
    @Test func openingAStoreWritableChangesNothingUntilItIsWritten() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("q.sqlite")
        do { _ = try PersistentStore.open(path: path, model: try ExperimentModels.quakes()) }
        let listing = { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
        let files = try listing()
        try #require(files == ["q.sqlite"], "a closed store left \(files)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let store = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
            #expect(!store.isReadOnly)
            #expect(try store.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Z_PRIMARYKEY") } == 2)
            // SQLite's advice for WAL: sync at checkpoints (NORMAL, 1), not at every commit.
            #expect(try store.databaseWriter().read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 1)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "opening the store writable changed its file")
        #expect(try listing() == files)
    }

    /// A store in rollback-journal mode (Core Data's older stores) stays in it when opened writable and written:
    /// the open does not turn it into a WAL store, and its writer keeps SQLite's FULL sync, which that mode needs.
    @Test func aRollbackJournalStoreKeepsItsJournalModeWhenWritten() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("q.sqlite")
        do { _ = try PersistentStore.open(path: path, model: try ExperimentModels.quakes()) }
        try checkpointAndClose(path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "opening the store writable changed its file")
        do {
            let store = try PersistentStore.open(path: path, model: try ExperimentModels.quakes())
            let writer = try store.databaseWriter()
            #expect(try writer.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
            try writer.write { db in try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 7 WHERE Z_ENT = 1") }
        }
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(20)
        // Bytes 18 and 19: 1 for a rollback journal, 2 for WAL.
        #expect(Array(header.suffix(2)) == [1, 1])
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "delete")
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") } == 7)
        try queue.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["q.sqlite"])
    }

    /// Folds the WAL back into the main file so a copy of the file alone is a whole database.
    private func checkpointAndClose(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE") }
        try queue.close()
    }
}
