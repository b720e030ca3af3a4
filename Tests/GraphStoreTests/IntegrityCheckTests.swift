import Foundation
import GRDB
import GraphStore
import Testing

/// A model with every relationship kind the check treats differently.
///
/// Entity numbers: Chat 1, ChatSettings 2, Contact 3 (abstract), Bot 4, User 5, Message 6.
/// - one-to-one `Chat.settings` ↔ `ChatSettings.chat`: keys on both sides, ZCHAT.ZSETTINGS and ZCHATSETTINGS.ZCHAT;
/// - one-to-many `Chat.messages` ↔ `Message.chat`: ZMESSAGE.ZCHAT, counted by `Chat.messagesCount`;
/// - many-to-many `Chat.members` ↔ `Contact.chats`: Z_1MEMBERS (Z_1CHATS, Z_3MEMBERS), counted by `Chat.membersCount`;
/// - self-inverse many-to-many `User.friends`: Z_5FRIENDS (Z_5FRIENDS, REFLEXIVE), each link stored both ways;
/// - many-to-nil `Chat.pinned` → Message: Z_1PINNED (Z_1CHAT, Z_6PINNED);
/// - to-one to an entity with sub-entities `Message.sender` → Contact: ZMESSAGE.ZSENDER and Z3_SENDER;
/// - to-one to one sub-entity of a shared table `Bot.owner` → User: ZCONTACT.ZOWNER;
/// - a derived copy `Message.senderName` = `sender.name`.
enum CheckModel {
    static func make(messageTextRequired: Bool = true) throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Chat") {
                Attribute("title", .string).indexed()
                Attribute.derived("messagesCount", "messages.@count")
                Attribute.derived("membersCount", "members.@count")
                Relationship.toMany("messages", "Message", inverse: "chat")
                Relationship.toMany("members", "Contact", inverse: "chats")
                Relationship.toOne("settings", "ChatSettings", inverse: "chat")
                Relationship.toMany("pinned", "Message", inverse: nil)
            }
            EntityDescription("ChatSettings") {
                Attribute("muted", .boolean)
                Relationship.toOne("chat", "Chat", inverse: "settings")
            }
            EntityDescription("Contact", abstract: true) {
                Attribute("name", .string).required()
                Relationship.toMany("chats", "Chat", inverse: "members")
                Relationship.toMany("sentMessages", "Message", inverse: "sender")
            }
            EntityDescription("Bot", parent: "Contact") {
                Relationship.toOne("owner", "User", inverse: "bots")
            }
            EntityDescription("User", parent: "Contact") {
                Relationship.toMany("friends", "User", inverse: "friends")
                Relationship.toMany("bots", "Bot", inverse: "owner")
            }
            EntityDescription("Message") {
                if messageTextRequired {
                    Attribute("text", .string).required()
                } else {
                    Attribute("text", .string)
                }
                Attribute.derived("senderName", "sender.name", .string)
                Relationship.toOne("chat", "Chat", inverse: "messages")
                Relationship.toOne("sender", "Contact", inverse: "sentMessages")
            }
        }
    }
}

/// A clean store made through contexts and saves, closed so that its file alone is the whole store; corrupted
/// copies of it are made with plain SQL.
final class CheckFixture {
    let folder: TemporaryDirectory
    let model: ObjectModel
    let cleanPath: String
    let storeUUID: String

    init() throws {
        folder = try TemporaryDirectory()
        model = try CheckModel.make()
        cleanPath = folder.path("clean.sqlite")
        storeUUID = try Self.populate(path: cleanPath, model: model)
        // Fold anything left in the WAL into the file (the journal stays WAL, as in every store).
        let queue = try DatabaseQueue(path: cleanPath)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
    }

    /// Chats general and random with their settings; users ann, ben, cat; bots echo (ann's) and ping (ben's);
    /// friends ann–ben and ben–cat; general's members ann, ben, echo and random's cat, ping; messages hello (ann),
    /// hi (ben) and beep (echo) in general, yo (cat) in random; general pins hello.
    private static func populate(path: String, model: ObjectModel) throws -> String {
        let coordinator = try PersistentStoreCoordinator(path: path, model: model)
        let context = ObjectContext(coordinator: coordinator, name: "setup")
        func make(_ entity: String, _ values: [String: Any]) -> ManagedObject {
            let object = context.insert(entity)
            for (key, value) in values { object.setValue(value, forKey: key) }
            return object
        }
        let general = make("Chat", ["title": "general"])
        let random = make("Chat", ["title": "random"])
        make("ChatSettings", ["muted": false]).setObject(general, forKey: "chat")
        make("ChatSettings", ["muted": true]).setObject(random, forKey: "chat")
        let ann = make("User", ["name": "ann"])
        let ben = make("User", ["name": "ben"])
        let cat = make("User", ["name": "cat"])
        let echo = make("Bot", ["name": "echo"])
        let ping = make("Bot", ["name": "ping"])
        echo.setObject(ann, forKey: "owner")
        ping.setObject(ben, forKey: "owner")
        ann.add(ben, toKey: "friends")
        ben.add(cat, toKey: "friends")
        for member in [ann, ben, echo] { general.add(member, toKey: "members") }
        for member in [cat, ping] { random.add(member, toKey: "members") }
        for (text, chat, sender) in [("hello", general, ann), ("hi", general, ben), ("beep", general, echo), ("yo", random, cat)] {
            let message = make("Message", ["text": text])
            message.setObject(chat, forKey: "chat")
            message.setObject(sender, forKey: "sender")
            if text == "hello" { general.add(message, toKey: "pinned") }
        }
        try context.save()
        return coordinator.store.storeUUID
    }

    /// A copy of the clean store with `sql` run on it through an ordinary read-write connection.
    func corrupted(_ sql: String, arguments: StatementArguments = StatementArguments(), name: String = "corrupt.sqlite") throws -> String {
        let path = folder.path(name)
        try FileManager.default.copyItem(atPath: cleanPath, toPath: path)
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.execute(sql: sql, arguments: arguments) }
        try queue.close()
        return path
    }

    /// The first column of the first row of a query on `path`.
    func value<T: DatabaseValueConvertible>(_ path: String, _ sql: String, as type: T.Type = Int64.self) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in try #require(try T.fetchOne(db, sql: sql)) }
    }

    func uri(_ entity: String, _ key: Int64) -> String {
        "x-coredata://\(storeUUID)/\(entity)/p\(key)"
    }
}

/// One way of damaging a store, the violations it must produce (exactly these kinds, in report order), and the
/// details of the first of them.
struct Corruption: Sendable, CustomTestStringConvertible {
    let name: String
    let sql: String
    let kinds: [IntegrityReport.Kind]
    let entity: String
    /// A query on the damaged copy giving the key of the object the first violation names; nil when it names none.
    let objectKey: String?
    let key: String?
    let fragment: String

    var testDescription: String { name }
}

@Suite struct IntegrityCheckTests {
    private static let corruptions: [Corruption] = [
        // 2. to-one keys
        Corruption(name: "dangling foreign key", sql: "UPDATE ZMESSAGE SET ZCHAT = 999 WHERE ZTEXT = 'hello'",
                   kinds: [.foreignKey], entity: "Message", objectKey: "SELECT Z_PK FROM ZMESSAGE WHERE ZTEXT = 'hello'",
                   key: "chat", fragment: "points at Z_PK 999, which is not a row of ZCHAT"),
        Corruption(name: "dangling key to an entity with sub-entities", sql: "UPDATE ZMESSAGE SET ZSENDER = 999 WHERE ZTEXT = 'yo'",
                   kinds: [.foreignKey], entity: "Message", objectKey: "SELECT Z_PK FROM ZMESSAGE WHERE ZTEXT = 'yo'",
                   key: "sender", fragment: "not a row of ZCONTACT"),
        Corruption(name: "foreign key to a row of the wrong entity",
                   sql: "UPDATE ZCONTACT SET ZOWNER = (SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ping') WHERE ZNAME = 'echo'",
                   kinds: [.foreignKey], entity: "Bot", objectKey: "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'echo'",
                   key: "owner", fragment: "but owner may only point at User"),
        Corruption(name: "entity column disagreeing with the row", sql: "UPDATE ZMESSAGE SET Z3_SENDER = 4 WHERE ZTEXT = 'hello'",
                   kinds: [.foreignKey], entity: "Message", objectKey: "SELECT Z_PK FROM ZMESSAGE WHERE ZTEXT = 'hello'",
                   key: "sender", fragment: "Z3_SENDER says the destination is entity 4"),
        // 3. join tables
        Corruption(name: "dangling join row",
                   sql: "INSERT INTO Z_1MEMBERS (Z_1CHATS, Z_3MEMBERS) SELECT Z_PK, 999 FROM ZCHAT WHERE ZTITLE = 'general'",
                   kinds: [.joinTable], entity: "Chat", objectKey: "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'general'",
                   key: "members", fragment: "Z_1MEMBERS links it through Z_3MEMBERS to Z_PK 999, which is not a row of ZCONTACT"),
        Corruption(name: "join row pointing at a row of the wrong entity", sql: """
                   INSERT INTO Z_5FRIENDS (Z_5FRIENDS, REFLEXIVE) SELECT u.Z_PK, b.Z_PK FROM ZCONTACT u, ZCONTACT b WHERE u.ZNAME = 'ann' AND b.ZNAME = 'echo';
                   INSERT INTO Z_5FRIENDS (Z_5FRIENDS, REFLEXIVE) SELECT b.Z_PK, u.Z_PK FROM ZCONTACT u, ZCONTACT b WHERE u.ZNAME = 'ann' AND b.ZNAME = 'echo'
                   """,
                   kinds: [.joinTable, .joinTable], entity: "User", objectKey: "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ann'",
                   key: "friends", fragment: "links it through REFLEXIVE to Bot p"),
        Corruption(name: "many-to-nil link to a missing member", sql: "UPDATE Z_1PINNED SET Z_6PINNED = 999",
                   kinds: [.joinTable], entity: "Chat", objectKey: "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'general'",
                   key: "pinned", fragment: "Z_1PINNED links it through Z_6PINNED to Z_PK 999, which is not a row of ZMESSAGE"),
        Corruption(name: "many-to-nil link from a missing owner",
                   sql: "INSERT INTO Z_1PINNED (Z_1CHAT, Z_6PINNED) SELECT 999, Z_PK FROM ZMESSAGE WHERE ZTEXT = 'yo'",
                   kinds: [.joinTable], entity: "Chat", objectKey: nil,
                   key: "pinned", fragment: "through Z_1CHAT to Z_PK 999, which is not a row of ZCHAT"),
        // 4. both sides
        Corruption(name: "one-to-one sides disagreeing",
                   sql: "UPDATE ZCHATSETTINGS SET ZCHAT = (SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'random') WHERE ZMUTED = 0",
                   kinds: [.inverse, .inverse], entity: "Chat", objectKey: "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'general'",
                   key: "settings", fragment: "whose chat is Chat p"),
        Corruption(name: "self-inverse link stored one way only", sql: """
                   DELETE FROM Z_5FRIENDS WHERE Z_5FRIENDS = (SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ann')
                   AND REFLEXIVE = (SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ben')
                   """,
                   kinds: [.inverse], entity: "User", objectKey: "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ann'",
                   key: "friends", fragment: "lacks User p"),
        // 5. derived attributes (the triggers keep them right, so the columns are set directly)
        Corruption(name: "wrong count through a foreign key", sql: "UPDATE ZCHAT SET ZMESSAGESCOUNT = 42 WHERE ZTITLE = 'general'",
                   kinds: [.derived], entity: "Chat", objectKey: "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'general'",
                   key: "messagesCount", fragment: "is 42, but messages holds 3"),
        Corruption(name: "wrong count through a join table", sql: "UPDATE ZCHAT SET ZMEMBERSCOUNT = 0 WHERE ZTITLE = 'random'",
                   kinds: [.derived], entity: "Chat", objectKey: "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'random'",
                   key: "membersCount", fragment: "is 0, but members holds 2"),
        Corruption(name: "stale derived copy", sql: "UPDATE ZMESSAGE SET ZSENDERNAME = 'mallory' WHERE ZTEXT = 'hi'",
                   kinds: [.derived], entity: "Message", objectKey: "SELECT Z_PK FROM ZMESSAGE WHERE ZTEXT = 'hi'",
                   key: "senderName", fragment: #"is "mallory", but sender.name is "ben""#),
        // value types (the columns' affinity keeps what no save would write)
        Corruption(name: "text in a Boolean", sql: "UPDATE ZCHATSETTINGS SET ZMUTED = 'yes' WHERE ZMUTED = 1",
                   kinds: [.valueType], entity: "ChatSettings", objectKey: "SELECT Z_PK FROM ZCHATSETTINGS WHERE ZMUTED = 'yes'",
                   key: "muted", fragment: #"holds text "yes", which a Boolean attribute cannot hold"#),
        Corruption(name: "blob in a sub-entity's String", sql: "UPDATE ZCONTACT SET ZNAME = x'00ff' WHERE ZNAME = 'cat'",
                   kinds: [.valueType], entity: "User", objectKey: "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = x'00ff'",
                   key: "name", fragment: "holds blob <2 bytes>, which a String attribute cannot hold"),
        // 6. key allocation
        Corruption(name: "Z_MAX below the largest key", sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Contact'",
                   kinds: [.primaryKey], entity: "Contact", objectKey: "SELECT MAX(Z_PK) FROM ZCONTACT",
                   key: "Z_MAX", fragment: "Z_PRIMARYKEY.Z_MAX is 1 but ZCONTACT already holds Z_PK 5"),
        // 8. entity numbers
        Corruption(name: "Z_ENT of another table's entity", sql: "UPDATE ZMESSAGE SET Z_ENT = 1 WHERE ZTEXT = 'yo'",
                   kinds: [.entityNumber], entity: "Message", objectKey: "SELECT Z_PK FROM ZMESSAGE WHERE ZTEXT = 'yo'",
                   key: "Z_ENT", fragment: "Z_ENT is 1, entity Chat, whose rows belong in ZCHAT, not ZMESSAGE"),
        Corruption(name: "Z_ENT of no entity", sql: "UPDATE ZCHATSETTINGS SET Z_ENT = 42 WHERE ZMUTED = 1",
                   kinds: [.entityNumber], entity: "ChatSettings", objectKey: "SELECT Z_PK FROM ZCHATSETTINGS WHERE ZMUTED = 1",
                   key: "Z_ENT", fragment: "Z_ENT is 42, which is no entity of the model"),
    ]

    @Test func aCleanStorePasses() throws {
        let fixture = try CheckFixture()
        let report = try StoreIntegrityCheck.run(path: fixture.cleanPath)
        #expect(report.violations == [])
        #expect(report.isOK)
        #expect(report.violationCount == 0)
        #expect(report.storeUUID == fixture.storeUUID)
        #expect(report.model == fixture.model)
        #expect(report.entities.map { "\($0.name) \($0.table) \($0.rows)" } == [
            "Chat ZCHAT 2", "ChatSettings ZCHATSETTINGS 2", "Contact ZCONTACT 0", "Bot ZCONTACT 2", "User ZCONTACT 3",
            "Message ZMESSAGE 4",
        ])
        #expect(report.joinTables.map { "\($0.name) \($0.rows)" } == ["Z_1MEMBERS 5", "Z_1PINNED 1", "Z_5FRIENDS 4"])
    }

    @Test(arguments: corruptions) func eachCorruptionIsReported(_ corruption: Corruption) throws {
        let fixture = try CheckFixture()
        let path = try fixture.corrupted(corruption.sql)
        let report = try StoreIntegrityCheck.run(path: path)
        #expect(!report.isOK)
        #expect(report.violations.map(\.kind) == corruption.kinds, "\(report.violations)")
        #expect(report.violationCount == corruption.kinds.count)
        let first = try #require(report.violations.first)
        #expect(first.entity == corruption.entity)
        if let objectKey = corruption.objectKey {
            let key = try fixture.value(path, objectKey)
            #expect(first.object?.hasSuffix("/p\(key)") == true, "\(first)")
            #expect(first.object?.hasPrefix("x-coredata://\(fixture.storeUUID)/") == true, "\(first)")
        } else {
            #expect(first.object == nil)
        }
        #expect(first.key == corruption.key)
        #expect(first.message.contains(corruption.fragment), "\(first.message)")
    }

    /// The exact URIs, for the cases where which object is named matters most.
    @Test func violationsNameTheObjectAtFault() throws {
        let fixture = try CheckFixture()
        // One-to-one: general's settings now claims random; both general and that settings row are at fault.
        let path = try fixture.corrupted("UPDATE ZCHATSETTINGS SET ZCHAT = (SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'random') WHERE ZMUTED = 0")
        let report = try StoreIntegrityCheck.run(path: path)
        let general = try fixture.value(path, "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'general'")
        let random = try fixture.value(path, "SELECT Z_PK FROM ZCHAT WHERE ZTITLE = 'random'")
        let settings = try fixture.value(path, "SELECT Z_PK FROM ZCHATSETTINGS WHERE ZMUTED = 0")
        let randomSettings = try fixture.value(path, "SELECT Z_PK FROM ZCHATSETTINGS WHERE ZMUTED = 1")
        #expect(report.violations.map(\.description) == [
            "inverse Chat.settings \(fixture.uri("Chat", general)): is ChatSettings p\(settings), whose chat is Chat p\(random), not this object",
            "inverse ChatSettings.chat \(fixture.uri("ChatSettings", settings)): is Chat p\(random), whose settings is ChatSettings p\(randomSettings), not this object",
        ])

        // Self-inverse: ann's side of the ann–ben link is gone, so ann's friends lack ben.
        let friends = try fixture.corrupted("""
            DELETE FROM Z_5FRIENDS WHERE Z_5FRIENDS = (SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ann')
            AND REFLEXIVE = (SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ben')
            """, name: "friends.sqlite")
        let ann = try fixture.value(friends, "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ann'")
        let ben = try fixture.value(friends, "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'ben'")
        #expect(try StoreIntegrityCheck.run(path: friends).violations.map(\.description) == [
            "inverse User.friends \(fixture.uri("User", ann)): lacks User p\(ben), whose friends holds this object (Z_5FRIENDS has the row \(ben) → \(ann) but not \(ann) → \(ben))",
        ])
    }

    @Test func aRowOfAnAbstractEntityIsReported() throws {
        let fixture = try CheckFixture()
        let path = try fixture.corrupted("UPDATE ZCONTACT SET Z_ENT = 3 WHERE ZNAME = 'cat'")
        let report = try StoreIntegrityCheck.run(path: path)
        let cat = try fixture.value(path, "SELECT Z_PK FROM ZCONTACT WHERE ZNAME = 'cat'")
        let violation = try #require(report.violations(of: .entityNumber).first)
        #expect(violation.entity == "Contact")
        #expect(violation.object == fixture.uri("Contact", cat))
        #expect(violation.message == "Z_ENT is 3, the abstract entity Contact, which can have no objects of its own")
        // Keys that expect a User, or the entity column that says cat is one, now disagree with the row too.
        #expect(Set(report.violations.map(\.kind)) == [.entityNumber, .foreignKey, .joinTable])
    }

    @Test func aTamperedModelIdentityIsReported() throws {
        let fixture = try CheckFixture()
        // The identity of a model whose Message differs: only Message's hash changes.
        let other = ModelIdentity(model: try CheckModel.make(messageTextRequired: false)).metadataPropertyList()
        let path = try fixture.corrupted("UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [other])
        let report = try StoreIntegrityCheck.run(path: path)
        #expect(report.violations.map(\.kind) == [.modelIdentity])
        let violation = try #require(report.violations.first)
        #expect(violation.entity == "Message")
        #expect(violation.key == "Z_PLIST")
        #expect(violation.message.hasPrefix("the recorded version hash "))
        // Opening the store for its model would refuse it; the check reports it instead.
        #expect(throws: StoreError.self) { try PersistentStore.open(path: path, model: fixture.model, options: .init(readOnly: true)) }

        let garbage = try fixture.corrupted("UPDATE Z_METADATA SET Z_PLIST = X'00'", name: "garbage.sqlite")
        let garbageReport = try StoreIntegrityCheck.run(path: garbage)
        #expect(garbageReport.violations.map(\.description) == ["modelIdentity Z_PLIST: Z_METADATA.Z_PLIST is not a property list"])
    }

    /// An index whose definition no longer matches its entries: `PRAGMA integrity_check` finds every row missing
    /// from it. (The index on ZCHAT.ZTITLE is used by no other check, so only the file-level check fires.)
    @Test func aDamagedIndexFailsTheIntegrityCheck() throws {
        let fixture = try CheckFixture()
        let path = try fixture.corrupted("""
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE INDEX ZCHAT_ZTITLE_INDEX ON ZCHAT (Z_OPT)' WHERE name = 'ZCHAT_ZTITLE_INDEX';
            PRAGMA writable_schema = OFF;
            """)
        let report = try StoreIntegrityCheck.run(path: path)
        #expect(Set(report.violations.map(\.kind)) == [.integrity], "\(report.violations)")
        #expect(report.violations.contains { $0.message.contains("ZCHAT_ZTITLE_INDEX") })
    }

    @Test func missingTriggersAndTablesAreReported() throws {
        let fixture = try CheckFixture()
        let noTrigger = try fixture.corrupted("DROP TRIGGER Z_DA_ZMESSAGE_Chat_messagesCount_PARAMETER_INSERT")
        let report = try StoreIntegrityCheck.run(path: noTrigger)
        #expect(report.violations.map(\.description) == [
            "schema Z_DA_ZMESSAGE_Chat_messagesCount_PARAMETER_INSERT: trigger Z_DA_ZMESSAGE_Chat_messagesCount_PARAMETER_INSERT is missing, so a derived attribute is no longer kept up to date",
        ])

        // Without a table the row checks cannot run; the layout problems are reported and the checks skipped.
        let noTable = try fixture.corrupted("DROP TABLE Z_5FRIENDS", name: "no-table.sqlite")
        let skipped = try StoreIntegrityCheck.run(path: noTable)
        #expect(skipped.violations.map(\.message) == [
            "table Z_5FRIENDS is missing", "index Z_5FRIENDS_REFLEXIVE_INDEX on Z_5FRIENDS is missing",
            "the row checks were skipped: the tables lack what the model calls for",
        ])
        #expect(skipped.entities.first { $0.name == "User" }?.rows == 3)

        // A join table rebuilt without its primary key could hold a link twice.
        let noKey = try fixture.corrupted("""
            CREATE TABLE copy AS SELECT * FROM Z_5FRIENDS; DROP TABLE Z_5FRIENDS;
            CREATE TABLE Z_5FRIENDS ( Z_5FRIENDS INTEGER, REFLEXIVE INTEGER ); INSERT INTO Z_5FRIENDS SELECT * FROM copy; DROP TABLE copy;
            CREATE INDEX Z_5FRIENDS_REFLEXIVE_INDEX ON Z_5FRIENDS (REFLEXIVE, Z_5FRIENDS);
            """, name: "no-key.sqlite")
        #expect(try StoreIntegrityCheck.run(path: noKey).violations.map(\.message) == [
            "table Z_5FRIENDS has primary key (rowid), not (Z_5FRIENDS, REFLEXIVE)",
        ])
    }


    /// A store an earlier GraphStore made names its count triggers as that version did (`…_INSERT_INCREMENT`,
    /// `…_DELETE_DECREMENT`, one `…_UPDATE` moving both counts): they keep the count, so `check` finds nothing
    /// missing, and it still names what such a store lacks.
    @Test func countTriggersUnderEarlierNamesAreNotReportedMissing() throws {
        let fixture = try CheckFixture()
        let prefix = "Z_DA_ZMESSAGE_Chat_messagesCount"
        let adjust = { (sign: String, row: String) in
            "UPDATE ZCHAT SET ZMESSAGESCOUNT = IFNULL(ZMESSAGESCOUNT, 0) \(sign) 1 WHERE Z_PK = \(row).ZCHAT;"
        }
        let earlier = """
            DROP TRIGGER \(prefix)_PARAMETER_INSERT;
            DROP TRIGGER \(prefix)_PARAMETER_UPDATE_INCREMENT;
            DROP TRIGGER \(prefix)_PARAMETER_UPDATE_DECREMENT;
            DROP TRIGGER \(prefix)_PARAMETER_DELETE;
            CREATE TRIGGER \(prefix)_PARAMETER_INSERT_INCREMENT AFTER INSERT ON ZMESSAGE FOR EACH ROW WHEN NEW.ZCHAT IS NOT NULL BEGIN \(adjust("+", "NEW")) END;
            CREATE TRIGGER \(prefix)_PARAMETER_DELETE_DECREMENT AFTER DELETE ON ZMESSAGE FOR EACH ROW WHEN OLD.ZCHAT IS NOT NULL BEGIN \(adjust("-", "OLD")) END;
            CREATE TRIGGER \(prefix)_PARAMETER_UPDATE AFTER UPDATE OF ZCHAT ON ZMESSAGE FOR EACH ROW WHEN OLD.ZCHAT IS NOT NEW.ZCHAT BEGIN \(adjust("-", "OLD")) \(adjust("+", "NEW")) END;
            """
        let made = try fixture.corrupted(earlier, name: "earlier.sqlite")
        #expect(try StoreIntegrityCheck.run(path: made).violations.map(\.description) == [])

        // The earlier update trigger stood for both of today's: without it, both are missing.
        let lacking = try fixture.corrupted(earlier + "DROP TRIGGER \(prefix)_PARAMETER_UPDATE;", name: "earlier-lacking.sqlite")
        #expect(try StoreIntegrityCheck.run(path: lacking).violations.map(\.key) == [
            "\(prefix)_PARAMETER_UPDATE_DECREMENT", "\(prefix)_PARAMETER_UPDATE_INCREMENT",
        ])
    }
    @Test func listingIsCappedPerKindButEveryViolationIsCounted() throws {
        let fixture = try CheckFixture()
        let path = try fixture.corrupted("UPDATE ZMESSAGE SET ZCHAT = 999; UPDATE ZCHAT SET ZMESSAGESCOUNT = 7")
        let capped = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: 3))
        #expect(capped.violations.map(\.kind) == [.foreignKey, .foreignKey, .foreignKey, .derived, .derived])
        #expect(capped.violationCounts == [.foreignKey: 4, .derived: 2])
        #expect(capped.violationCount == 6)
        #expect(capped.unlistedCount(of: .foreignKey) == 1)
        #expect(capped.unlistedCount(of: .derived) == 0)

        let all = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: nil))
        #expect(all.violations.count == 6)
        let none = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: 0))
        #expect(none.violations.isEmpty)
        #expect(none.violationCount == 6)
    }

    /// The check reads through a read-only connection: the store file keeps every byte, clean or damaged, and
    /// nothing is left pending in a WAL.
    @Test func theStoreFileIsLeftByteForByte() throws {
        let fixture = try CheckFixture()
        let damaged = try fixture.corrupted("UPDATE ZMESSAGE SET ZCHAT = 999; UPDATE Z_PRIMARYKEY SET Z_MAX = 0")
        for path in [fixture.cleanPath, damaged] {
            let before = try #require(FileManager.default.contents(atPath: path))
            _ = try StoreIntegrityCheck.run(path: path)
            _ = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: nil))
            #expect(FileManager.default.contents(atPath: path) == before)
            // SQLite's WAL readers may create an empty -wal and a -shm index beside the file; nothing is written to them.
            let wal = FileManager.default.contents(atPath: path + "-wal")
            #expect(wal == nil || wal!.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        }
    }

    @Test func filesThatAreNotStoresAreRefusedUnchanged() throws {
        let fixture = try CheckFixture()
        let folder = fixture.folder
        let text = folder.path("notes.txt")
        try "just some text, long enough to fill an SQLite header's hundred bytes, and then some more words\n"
            .write(toFile: text, atomically: true, encoding: .utf8)
        let other = folder.path("other.sqlite")
        try DatabaseQueue(path: other).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        let noCache = try fixture.corrupted("DROP TABLE Z_MODELCACHE", name: "no-cache.sqlite")
        let badCache = try fixture.corrupted("UPDATE Z_MODELCACHE SET Z_CONTENT = X'0102'", name: "bad-cache.sqlite")
        let cases: [(String, StoreError)] = [
            (folder.path("missing.sqlite"), .noSuchFile(path: folder.path("missing.sqlite"))),
            (folder.url.path, .isDirectory(path: folder.url.path)),
            (text, .notSQLite(path: text)),
            (other, .notAStore(path: other, reason: "it has no Z_METADATA table")),
            (noCache, .notAStore(path: noCache, reason: "it has no Z_MODELCACHE table")),
            (badCache, .notAStore(path: badCache, reason: "its model cache (Z_MODELCACHE) is damaged: its compressed model is cut short")),
        ]
        for (path, expected) in cases {
            // The file itself and any rollback journal keep every byte. (Refusing a WAL-mode file that is not a
            // store takes a read-only look inside it, which may leave SQLite's empty -wal and -shm beside it.)
            let files = [path, path + "-journal"]
            let before = snapshot(files)
            #expect(throws: expected) { try StoreIntegrityCheck.run(path: path) }
            #expect(snapshot(files) == before, "\(path)")
            let wal = FileManager.default.contents(atPath: path + "-wal")
            #expect(wal == nil || wal!.isEmpty)
        }
    }
}
