import Foundation
import GRDB
@testable import GraphStore
import Testing

@Suite struct PredicateSQLTests {
    typealias P = GraphStore.Predicate

    private let schema: StoreSchema

    init() throws {
        schema = StoreSchema(model: try PredicateTestStore.chatModel())
    }

    private func sql(_ entity: String, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> PredicateSQL {
        var compiler = PredicateCompiler(schema: schema, entity: entity)
        return try compiler.compile(try P(format: format, arguments: arguments))
    }

    private func compileError(_ entity: String, _ predicate: P) -> GraphStore.PredicateError? {
        var compiler = PredicateCompiler(schema: schema, entity: entity)
        do {
            _ = try compiler.compile(predicate)
            return nil
        } catch {
            return error
        }
    }

    private func compileError(_ entity: String, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> GraphStore.PredicateError? {
        compileError(entity, try P(format: format, arguments: arguments))
    }

    // MARK: exact SQL

    @Test func plainComparisons() throws {
        let a = try sql("Chat", "title == %@ AND kind == 2", "x")
        #expect(a == PredicateSQL(joins: [], condition: "(t0.ZTITLE = ? AND t0.ZKIND = ?)", arguments: [.string("x"), .integer(2)]))
        #expect(try sql("Chat", "kind != 1").condition == "(t0.ZKIND <> ? OR t0.ZKIND IS NULL)")
        #expect(try sql("Chat", "kind < 1 OR kind <= 2 OR kind > 3 OR kind >= 4").condition
            == "(t0.ZKIND < ? OR t0.ZKIND <= ? OR t0.ZKIND > ? OR t0.ZKIND >= ?)")
        #expect(try sql("Chat", "3 < kind") == PredicateSQL(joins: [], condition: "t0.ZKIND > ?", arguments: [.integer(3)]))
        #expect(try sql("Chat", "title == nil").condition == "t0.ZTITLE IS NULL")
        #expect(try sql("Chat", "title != NULL").condition == "t0.ZTITLE IS NOT NULL")
        #expect(try sql("Chat", "TRUEPREDICATE") == PredicateSQL(joins: [], condition: "", arguments: []))
        #expect(try sql("Chat", "FALSEPREDICATE").condition == "0")
        #expect(try sql("Chat", "NOT (title == 'a' OR kind == 1)").condition == "NOT ((t0.ZTITLE = ? OR t0.ZKIND = ?))")
        #expect(try sql("User", "isBlocked == YES") == PredicateSQL(joins: [], condition: "t0.ZISBLOCKED = ?", arguments: [.boolean(true)]))
        #expect(try sql("Message", "score > 2").arguments == [.double(2)])
    }

    @Test func datesBindAsTheirValue() throws {
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000)
        #expect(try sql("Message", "sentAt > %@", date) == PredicateSQL(joins: [], condition: "t0.ZSENTAT > ?", arguments: [.date(date)]))
    }

    @Test func inAndBetween() throws {
        #expect(try sql("Chat", "kind IN {1, 2, 3}") == PredicateSQL(joins: [], condition: "t0.ZKIND IN (?, ?, ?)", arguments: [.integer(1), .integer(2), .integer(3)]))
        #expect(try sql("Chat", "kind IN %@", [4, 5]).condition == "t0.ZKIND IN (?, ?)")
        #expect(try sql("Chat", "kind IN {}").condition == "0")
        #expect(try sql("Chat", "kind IN {1, nil}").condition == "(t0.ZKIND IN (?) OR t0.ZKIND IS NULL)")
        #expect(try sql("Chat", "kind BETWEEN {1, 5}") == PredicateSQL(joins: [], condition: "t0.ZKIND BETWEEN ? AND ?", arguments: [.integer(1), .integer(5)]))
        #expect(try sql("Chat", "title IN[c] {'a', 'b'}").condition
            == "(GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, '==', 1) OR GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, '==', 1))")
    }

    @Test func stringOperatorsGoThroughTheFunction() throws {
        #expect(try sql("Chat", "title BEGINSWITH 'a'") == PredicateSQL(
            joins: [], condition: "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 0)", arguments: [.string("a")]))
        #expect(try sql("Chat", "title ENDSWITH[c] 'a'").condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'ENDSWITH', 1)")
        #expect(try sql("Chat", "title CONTAINS[d] 'a'").condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'CONTAINS', 2)")
        #expect(try sql("Chat", "title LIKE[cd] 'a*'").condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'LIKE', 3)")
        #expect(try sql("Chat", "title MATCHES '[a-z]+'").condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'MATCHES', 0)")
        #expect(try sql("Chat", "title ==[c] 'a'").condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, '==', 1)")
        #expect(try sql("Chat", "title !=[cd] 'a'").condition == "NOT GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, '==', 3)")
    }

    @Test func toOneKeyPathsJoinOncePerPath() throws {
        let compiled = try sql("Message", "sender.name == 'A' AND sender.age > 3 AND chat.title == 'c'")
        #expect(compiled == PredicateSQL(
            joins: ["LEFT JOIN ZUSER t1 ON t0.ZSENDER = t1.Z_PK", "LEFT JOIN ZCHAT t2 ON t0.ZCHAT = t2.Z_PK"],
            condition: "(t1.ZNAME = ? AND t1.ZAGE > ? AND t2.ZTITLE = ?)",
            arguments: [.string("A"), .integer(3), .string("c")]))

        // Joins are shared between key paths asked for sorting and predicates.
        var compiler = PredicateCompiler(schema: schema, entity: "Message")
        #expect(try compiler.column(forKeyPath: "sender.name") == "t1.ZNAME")
        #expect(try compiler.column(forKeyPath: "sentAt") == "t0.ZSENTAT")
        #expect(try compiler.column(forKeyPath: "sender") == "t0.ZSENDER")
        let again = try compiler.compile(P.key("sender.age") > 1)
        #expect(again.joins == ["LEFT JOIN ZUSER t1 ON t0.ZSENDER = t1.Z_PK"])
        #expect(again.condition == "t1.ZAGE > ?")
    }

    @Test func toOneComparedWithObjects() throws {
        let user = ObjectID(entityNumber: 3, primaryKey: 7)
        #expect(try sql("Message", "sender == %@", user) == PredicateSQL(joins: [], condition: "t0.ZSENDER = ?", arguments: [.integer(7)]))
        #expect(try sql("Message", "sender != %@", user).condition == "(t0.ZSENDER <> ? OR t0.ZSENDER IS NULL)")
        #expect(try sql("Message", "sender == nil").condition == "t0.ZSENDER IS NULL")
        #expect(try sql("Message", "sender IN %@", [user, ObjectID(entityNumber: 3, primaryKey: 8)])
            == PredicateSQL(joins: [], condition: "t0.ZSENDER IN (?, ?)", arguments: [.integer(7), .integer(8)]))
        #expect(try sql("User", "SELF == %@", user).condition == "t0.Z_PK = ?")
        #expect(try compileError("Message", "sender == %@", ObjectID(entityNumber: 1, primaryKey: 7))?.kind == .typeMismatch)
    }

    @Test func toManyQuantifiersUseExists() throws {
        #expect(try sql("Chat", "ANY members.name == 'A'") == PredicateSQL(
            joins: [],
            condition: "EXISTS (SELECT 1 FROM Z_1MEMBERS t1 JOIN ZUSER t2 ON t2.Z_PK = t1.Z_3MEMBERS WHERE t1.Z_1CHATS = t0.Z_PK AND t2.ZNAME = ?)",
            arguments: [.string("A")]))
        #expect(try sql("User", "ANY messages.text CONTAINS 'x'").condition
            == "EXISTS (SELECT 1 FROM ZMESSAGE t1 WHERE t1.ZSENDER = t0.Z_PK AND GRAPHSTORE_STRING_SEARCH(t1.ZTEXT, ?, 'CONTAINS', 0))")
        #expect(try sql("User", "ALL messages.score > 1").condition
            == "NOT EXISTS (SELECT 1 FROM ZMESSAGE t1 WHERE t1.ZSENDER = t0.Z_PK AND NOT (t1.ZSCORE > ?))")
        #expect(try sql("User", "NONE messages.score > 1").condition
            == "NOT EXISTS (SELECT 1 FROM ZMESSAGE t1 WHERE t1.ZSENDER = t0.Z_PK AND t1.ZSCORE > ?)")
        #expect(try sql("User", "ANY messages.chat.title == 'c'").condition
            == "EXISTS (SELECT 1 FROM ZMESSAGE t1 LEFT JOIN ZCHAT t2 ON t1.ZCHAT = t2.Z_PK WHERE t1.ZSENDER = t0.Z_PK AND t2.ZTITLE = ?)")
        let builder = P.any("members", .key("age") > 30 && .key("isBlocked") == false)
        var compiler = PredicateCompiler(schema: schema, entity: "Chat")
        #expect(try compiler.compile(builder).condition
            == "EXISTS (SELECT 1 FROM Z_1MEMBERS t1 JOIN ZUSER t2 ON t2.Z_PK = t1.Z_3MEMBERS WHERE t1.Z_1CHATS = t0.Z_PK AND (t2.ZAGE > ? AND t2.ZISBLOCKED = ?))")
        let user = ObjectID(entityNumber: 3, primaryKey: 7)
        #expect(try sql("Chat", "members CONTAINS %@", user) == PredicateSQL(
            joins: [],
            condition: "EXISTS (SELECT 1 FROM Z_1MEMBERS t1 JOIN ZUSER t2 ON t2.Z_PK = t1.Z_3MEMBERS WHERE t1.Z_1CHATS = t0.Z_PK AND t2.Z_PK = ?)",
            arguments: [.integer(7)]))
        #expect(try sql("Chat", "%@ IN members", user).condition == (try sql("Chat", "members CONTAINS %@", user).condition))
    }

    @Test func countsAreCorrelatedSubqueries() throws {
        #expect(try sql("Chat", "members.@count > 3") == PredicateSQL(
            joins: [], condition: "(SELECT COUNT(*) FROM Z_1MEMBERS t1 WHERE t1.Z_1CHATS = t0.Z_PK) > ?", arguments: [.integer(3)]))
        #expect(try sql("User", "messages.@count == 0").condition == "(SELECT COUNT(*) FROM ZMESSAGE t1 WHERE t1.ZSENDER = t0.Z_PK) = ?")
        #expect(try sql("Message", "sender.chats.@count >= 2").condition == "(SELECT COUNT(*) FROM Z_1MEMBERS t2 WHERE t2.Z_3MEMBERS = t1.Z_PK) >= ?")
        #expect(try sql("Message", "sender.chats.@count >= 2").joins == ["LEFT JOIN ZUSER t1 ON t0.ZSENDER = t1.Z_PK"])
        #expect(try sql("Chat", "SUBQUERY(members, $m, $m.age > 30).@count >= 1") == PredicateSQL(
            joins: [],
            condition: "(SELECT COUNT(*) FROM Z_1MEMBERS t1 JOIN ZUSER t2 ON t2.Z_PK = t1.Z_3MEMBERS WHERE t1.Z_1CHATS = t0.Z_PK AND t2.ZAGE > ?) >= ?",
            arguments: [.integer(30), .integer(1)]))
    }

    @Test func injectionStaysOneBoundValue() throws {
        let compiled = try sql("Chat", #"title == "x'); DROP TABLE ZCHAT; --""#)
        #expect(compiled == PredicateSQL(joins: [], condition: "t0.ZTITLE = ?", arguments: [.string("x'); DROP TABLE ZCHAT; --")]))
        let search = try sql("Chat", "title BEGINSWITH[c] %@", "' OR 1=1 --")
        #expect(search.condition == "GRAPHSTORE_STRING_SEARCH(t0.ZTITLE, ?, 'BEGINSWITH', 1)")
        #expect(search.arguments == [.string("' OR 1=1 --")])
    }

    // MARK: compile errors

    @Test func compileErrorsNameEntityAndKey() throws {
        #expect(try compileError("Message", "sendr.name == 'A'")?.description == "Message has no key 'sendr'")
        #expect(try compileError("Message", "sender.nme == 'A'")?.description == "User has no key 'nme'")
        #expect(try compileError("Message", "sender.name == 'A'")?.kind == nil)
        #expect(try compileError("Chat", "members.name == 'A'")?.description == "Chat: to-many 'members' in 'members.name' needs ANY, ALL, NONE or @count")
        #expect(try compileError("Chat", "members.name == 'A'")?.kind == .toManyWithoutQuantifier)
        #expect(try compileError("Message", "sentAt > 'yesterday'")?.description == #"Message.sentAt: cannot compare it with "yesterday" using '>'"#)
        #expect(try compileError("Chat", "kind == 'one'")?.kind == .typeMismatch)
        #expect(try compileError("Chat", "title == $TITLE")?.description == "Chat: variable $TITLE is not bound; substitute it with substituting(_:)")
        #expect(try compileError("Chat", "title == $TITLE")?.kind == .unboundVariable)
        #expect(try compileError("Message", "draft == 'a'")?.kind == .unsupported)
        #expect(try compileError("Chat", "ANY title == 'a'")?.kind == .typeMismatch)
        #expect(try compileError("Chat", "title MATCHES '(['")?.kind == .typeMismatch)
        #expect(try compileError("Nope", "title == 'a'")?.description == "the model has no entity 'Nope'")
        // Substituting the variable makes the same predicate compile.
        var compiler = PredicateCompiler(schema: schema, entity: "Chat")
        let bound = try P(format: "title == $TITLE").substituting(["TITLE": "a"])
        #expect(try compiler.compile(bound).arguments == [.string("a")])
    }

    // MARK: against a real store

    /// Users ann (30), bob (41, blocked), Élodie (25); chats "Team" (ann, bob) and "Family" (ann, élodie) and
    /// "Empty"; messages from ann and bob.
    private func populatedStore() throws -> (TemporaryDirectory, PersistentStore) {
        let folder = try TemporaryDirectory()
        let store = try PersistentStore.open(path: folder.path("chat.sqlite"), model: try PredicateTestStore.chatModel())
        try store.databaseWriter().write { db in
            try db.execute(sql: """
                INSERT INTO ZUSER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE, ZISBLOCKED) VALUES
                    (1, 3, 1, 'ann', 30, 0), (2, 3, 1, 'bob', 41, 1), (3, 3, 1, 'Élodie', 25, 0), (4, 3, 1, NULL, NULL, 0);
                INSERT INTO ZCHAT (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZKIND) VALUES (1, 1, 1, 'Team', 1), (2, 1, 1, 'Family', 2), (3, 1, 1, 'Empty', NULL);
                INSERT INTO Z_1MEMBERS (Z_1CHATS, Z_3MEMBERS) VALUES (1, 1), (1, 2), (2, 1), (2, 3);
                INSERT INTO ZMESSAGE (Z_PK, Z_ENT, Z_OPT, ZTEXT, ZSENTAT, ZSCORE, ZSENDER, ZCHAT) VALUES
                    (1, 2, 1, 'hello team', 100, 1.5, 1, 1), (2, 2, 1, 'Hi there', 200, 3.0, 2, 1),
                    (3, 2, 1, 'dinner?', 300, NULL, 1, 2), (4, 2, 1, 'note to self', 400, 0.5, NULL, NULL);
                """)
        }
        return (folder, store)
    }

    /// The primary keys of `entity`'s rows the predicate matches, in order.
    private func matches(_ store: PersistentStore, _ entity: String, _ predicate: P) throws -> [Int64] {
        try PredicateTestStore.selectedKeys(entity, predicate, schema: store.schema, path: store.path)
    }

    private func matches(_ store: PersistentStore, _ entity: String, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> [Int64] {
        try matches(store, entity, try P(format: format, arguments: arguments))
    }

    @Test func compiledSQLSelectsTheRightRows() throws {
        let (folder, store) = try populatedStore()
        defer { withExtendedLifetime(folder) {} }
        #expect(try matches(store, "User", "name == 'ann'") == [1])
        #expect(try matches(store, "User", "name != 'ann'") == [2, 3, 4])
        #expect(try matches(store, "User", "name == nil") == [4])
        #expect(try matches(store, "User", "age > 26 AND isBlocked == NO") == [1])
        #expect(try matches(store, "User", "age BETWEEN {25, 30}") == [1, 3])
        #expect(try matches(store, "User", "name IN {'bob', 'ann', 'zed'}") == [1, 2])
        #expect(try matches(store, "User", "name BEGINSWITH 'A'") == [])
        #expect(try matches(store, "User", "name BEGINSWITH[c] 'A'") == [1])
        #expect(try matches(store, "User", "name ==[c] 'élodie'") == [3])
        #expect(try matches(store, "User", "name ==[cd] 'elodie'") == [3])
        #expect(try matches(store, "User", "name ENDSWITH 'b'") == [2])
        #expect(try matches(store, "User", "name CONTAINS[cd] 'LOD'") == [3])
        #expect(try matches(store, "User", "name LIKE '?o*'") == [2])
        #expect(try matches(store, "User", "name LIKE[c] '*E'") == [3])
        #expect(try matches(store, "User", "name MATCHES '[a-z]{3}'") == [1, 2])
        #expect(try matches(store, "User", "NOT name BEGINSWITH 'a'") == [2, 3, 4], "a NULL name does not begin with 'a'")
        #expect(try matches(store, "Message", "sender.name == 'ann'") == [1, 3])
        #expect(try matches(store, "Message", "sender == nil OR sender.name == 'bob'") == [2, 4], "left joins keep rows without a sender")
        #expect(try matches(store, "Message", "sender == %@", ObjectID(entityNumber: 3, primaryKey: 2)) == [2])
        #expect(try matches(store, "Message", "sentAt >= %@", Date(timeIntervalSinceReferenceDate: 200)) == [2, 3, 4])
        #expect(try matches(store, "Message", "chat.title CONTAINS[c] 'TEAM' AND score > 2") == [2])
        #expect(try matches(store, "Chat", "ANY members.name == 'bob'") == [1])
        #expect(try matches(store, "Chat", "ALL members.age < 35") == [2, 3], "ALL holds for a chat without members")
        #expect(try matches(store, "Chat", "NONE members.isBlocked == YES") == [2, 3])
        #expect(try matches(store, "Chat", "members.@count == 2") == [1, 2])
        #expect(try matches(store, "Chat", "messages.@count > 0") == [1, 2])
        #expect(try matches(store, "Chat", "members CONTAINS %@", ObjectID(entityNumber: 3, primaryKey: 3)) == [2])
        #expect(try matches(store, "User", "ANY chats.title == 'Family'") == [1, 3])
        #expect(try matches(store, "User", "SUBQUERY(messages, $m, $m.score > 1).@count == 2") == [])
        #expect(try matches(store, "User", "SUBQUERY(messages, $m, $m.score >= 1.5 OR $m.score == nil).@count == 2") == [1])
        #expect(try matches(store, "User", "SELF IN %@", [ObjectID(entityNumber: 3, primaryKey: 2), ObjectID(entityNumber: 3, primaryKey: 4)]) == [2, 4])
        #expect(try matches(store, "Chat", "TRUEPREDICATE") == [1, 2, 3])
    }

    @Test func injectionAttemptsMatchLiterallyAndLeaveTablesAlone() throws {
        let (folder, store) = try populatedStore()
        defer { withExtendedLifetime(folder) {} }
        #expect(try matches(store, "Chat", #"title == "x'); DROP TABLE ZCHAT; --""#) == [])
        #expect(try matches(store, "Chat", "title == %@ OR title LIKE %@", "' OR 1=1 --", "%") == [])
        #expect(try matches(store, "Chat", "TRUEPREDICATE") == [1, 2, 3])
    }

    @Test func stringSearchFunctionIsNullSafe() throws {
        let queue = try DatabaseQueue()
        let cases: [(String, Int)] = [
            ("NULL, 'a', 'CONTAINS', 0", 0), ("'abc', NULL, 'CONTAINS', 0", 0), ("'abc', '', 'BEGINSWITH', 0", 0),
            ("'Crème', 'CREME', '==', 3", 1), ("'Crème', 'CREME', '==', 1", 0), ("'a.c', 'a.c', 'LIKE', 0", 1),
            ("'abc', 'a.c', 'LIKE', 0", 0), ("'a*c', 'a\\*c', 'LIKE', 0", 1), ("'abcX', 'a.c', 'MATCHES', 0", 0),
            ("'ABC', 'a.c', 'MATCHES', 1", 1), ("'abc', '([', 'MATCHES', 0", 0), ("12345, '234', 'CONTAINS', 0", 1),
        ]
        for (arguments, expected) in cases {
            let result = try queue.read { db -> Int? in
                PredicateFunctions.install(on: db)
                return try Int.fetchOne(db, sql: "SELECT GRAPHSTORE_STRING_SEARCH(\(arguments))")
            }
            #expect(result == expected, "\(arguments)")
        }
    }
}
