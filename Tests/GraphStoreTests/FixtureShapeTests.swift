import ChatFixture
import Foundation
import GRDB
import GraphStore
import Testing

/// The generated store has a messenger's shape: "me" in every chat and owning a group, a heavy-tailed spread of
/// messages, consistent last messages, all six languages, and every relationship kind filled in.
@Suite struct FixtureShapeTests {
    static let options = FixtureOptions(seed: 11, users: 150, chats: 40, messages: 6_000)

    private func int(_ db: Database, _ sql: String) throws -> Int { try Int.fetchOne(db, sql: sql) ?? -1 }

    @Test func theStoreHasAMessengersShape() throws {
        let store = try GeneratedChatStore(Self.options)
        let summary = store.summary
        try store.read { db in
            #expect(try int(db, "SELECT COUNT(*) FROM ZUSER") == 150)
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHAT") == 40)
            #expect(try int(db, "SELECT COUNT(*) FROM ZMESSAGE") == 6_000)
            #expect(summary.messages == 6_000)
            // "me" is user 1, a member of every chat, and owns at least one group.
            #expect(try String.fetchOne(db, sql: "SELECT ZHANDLE FROM ZUSER WHERE Z_PK = 1") == "me")
            #expect(try int(db, "SELECT COUNT(DISTINCT ZCHAT) FROM ZCHATMEMBER WHERE ZUSER = 1") == 40)
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHAT WHERE ZOWNER = 1") >= 1)
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHATMEMBER WHERE ZROLE = 0 AND ZUSER = 1") >= 1)
            // Direct chats have two members, groups three to 500.
            let direct = try int(db, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'DirectChat'")
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHAT WHERE Z_ENT = \(direct) AND ZMEMBERSCOUNT != 2") == 0)
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHAT WHERE Z_ENT != \(direct) AND (ZMEMBERSCOUNT < 3 OR ZMEMBERSCOUNT > 500)") == 0)
            #expect(try int(db, "SELECT COUNT(*) FROM ZCHAT WHERE Z_ENT = \(direct)") > 0)
            // Heavy-tailed: the busiest chat holds about a third, the median chat far less.
            let counts = try Int.fetchAll(db, sql: "SELECT ZMESSAGESCOUNT FROM ZCHAT ORDER BY ZMESSAGESCOUNT DESC")
            #expect(counts[0] >= 1_900 && counts[0] <= 2_100)
            #expect(counts[counts.count / 2] < counts[0] / 10)
            // Derived counts equal the real counts.
            #expect(try int(db, """
                SELECT COUNT(*) FROM ZCHAT c WHERE c.ZMESSAGESCOUNT != (SELECT COUNT(*) FROM ZMESSAGE m WHERE m.ZCHAT = c.Z_PK)
                   OR c.ZMEMBERSCOUNT != (SELECT COUNT(*) FROM ZCHATMEMBER m WHERE m.ZCHAT = c.Z_PK)
                """) == 0)
            // Each chat's last message is its latest, and lastMessageAt its time; its inverse points back.
            #expect(try int(db, """
                SELECT COUNT(*) FROM ZCHAT c WHERE c.ZMESSAGESCOUNT > 0 AND (
                    c.ZLASTMESSAGE != (SELECT m.Z_PK FROM ZMESSAGE m WHERE m.ZCHAT = c.Z_PK ORDER BY m.ZSENTAT DESC, m.Z_PK DESC LIMIT 1)
                    OR c.ZLASTMESSAGEAT != (SELECT MAX(m.ZSENTAT) FROM ZMESSAGE m WHERE m.ZCHAT = c.Z_PK)
                    OR (SELECT m.ZLASTMESSAGEOF FROM ZMESSAGE m WHERE m.Z_PK = c.ZLASTMESSAGE) != c.Z_PK)
                """) == 0)
            // Senders are members of their chat; replies quote an earlier message of the same chat.
            #expect(try int(db, """
                SELECT COUNT(*) FROM ZMESSAGE m WHERE NOT EXISTS
                    (SELECT 1 FROM ZCHATMEMBER cm WHERE cm.ZCHAT = m.ZCHAT AND cm.ZUSER = m.ZSENDER)
                """) == 0)
            #expect(try int(db, """
                SELECT COUNT(*) FROM ZMESSAGE m JOIN ZMESSAGE r ON r.Z_PK = m.ZREPLYTO WHERE r.ZCHAT != m.ZCHAT OR r.ZSENTAT > m.ZSENTAT
                """) == 0)
            // Every relationship kind holds rows.
            for (table, minimum) in [("ZMESSAGE WHERE ZREPLYTO IS NOT NULL", 100), ("ZMESSAGE WHERE ZFORWARDEDFROM IS NOT NULL", 10),
                                     ("ZREACTION", 200), ("ZATTACHMENT", 100), ("ZUSERPROFILE", 50), ("Z_9FRIENDS", 100),
                                     ("Z_7READBY", 50), ("Z_7MENTIONS", 5), ("Z_2FOLDERS", 6), ("ZFOLDER", 6)] {
                #expect(try int(db, "SELECT COUNT(*) FROM \(table)") >= minimum, "\(table)")
            }
            // Attachments keep their order; stickers and files are there.
            #expect(try int(db, "SELECT COUNT(*) FROM ZATTACHMENT WHERE Z_FOK_MESSAGE IS NULL") == 0)
            #expect(try int(db, "SELECT COUNT(DISTINCT ZKIND) FROM ZMESSAGE") >= 4)
            // Handles are unique; texts come in all six scripts.
            #expect(try int(db, "SELECT COUNT(*) - COUNT(DISTINCT ZHANDLE) FROM ZUSER") == 0)
            let texts = try String.fetchAll(db, sql: "SELECT ZTEXT FROM ZMESSAGE").joined()
            for (script, range) in [("kana", 0x3040...0x30FF), ("Thai", 0x0E00...0x0E7F), ("Hangul", 0xAC00...0xD7A3),
                                    ("Han", 0x4E00...0x9FFF), ("emoji", 0x1F300...0x1FAFF)] {
                #expect(texts.unicodeScalars.contains { range.contains(Int($0.value)) }, "no \(script) in the messages")
            }
            // Every timestamp lies before the fixture's "now", which the seed fixes.
            let now = FixtureGenerator(options: Self.options, corpus: try ChatCorpus.load()).now.timeIntervalSinceReferenceDate
            #expect(try #require(try Double.fetchOne(db, sql: "SELECT MAX(ZSENTAT) FROM ZMESSAGE")) < now)
        }
    }

    @Test func theGeneratedStoreOpensWithTheChatModel() throws {
        let store = try GeneratedChatStore(Self.options)
        let context = ObjectContext(coordinator: store.coordinator)
        let me = try #require(try context.fetch(User.self, where: [("handle", .string("me"))]).first)
        #expect(me.memberships.count == 40)
        let busiest = try #require(me.ownedGroups.max { $0.messagesCount < $1.messagesCount })
        #expect(busiest.lastMessage?.chat === busiest)
        #expect(busiest.messagesCount == busiest.messages.count)
    }
}
