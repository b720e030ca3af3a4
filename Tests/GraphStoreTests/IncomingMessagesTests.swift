import ChatFixture
import Foundation
import GRDB
import GraphStore
import Synchronization
import Testing

/// The incoming-message simulator on a small generated chat store: what one delivery writes, what it costs, and
/// that a seed gives the same deliveries.
@Suite struct IncomingMessagesTests {
    static let options = FixtureOptions(seed: 5, users: 40, chats: 12, messages: 400)

    /// A generated store in its own folder, with a coordinator on it.
    private func makeStore() throws -> GeneratedChatStore { try GeneratedChatStore(Self.options) }

    @Test func aDeliveryIsSavedIntoItsChatAsItsLastMessage() throws {
        let store = try makeStore()
        let (newestBefore, messagesBefore) = try store.read { db in
            (try Double.fetchOne(db, sql: "SELECT MAX(ZSENTAT) FROM ZMESSAGE") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE") ?? 0)
        }
        let context = ObjectContext(coordinator: store.coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 1)
        var previous: Delivery?
        for _ in 0..<25 {
            let delivery = try incoming.deliver(in: context)
            #expect(!delivery.message.isTemporary)
            #expect(!context.hasChanges)
            #expect(!delivery.text.isEmpty)
            if let previous { #expect(delivery.sentAt > previous.sentAt) }
            try store.read { db in
                let row = try #require(try Row.fetchOne(db, sql: """
                    SELECT m.ZTEXT, m.ZSENTAT, m.ZCHAT, m.ZSENDER, m.ZLASTMESSAGEOF, c.ZLASTMESSAGE, c.ZLASTMESSAGEAT, c.ZMESSAGESCOUNT,
                           (SELECT COUNT(*) FROM ZMESSAGE WHERE ZCHAT = c.Z_PK) AS counted,
                           (SELECT COUNT(*) FROM ZCHATMEMBER WHERE ZCHAT = c.Z_PK AND ZUSER = m.ZSENDER) AS isMember,
                           (SELECT Z_PK FROM ZCHAT ORDER BY ZLASTMESSAGEAT DESC LIMIT 1) AS topChat
                    FROM ZMESSAGE m JOIN ZCHAT c ON c.Z_PK = m.ZCHAT WHERE m.Z_PK = ?
                    """, arguments: [delivery.message.primaryKey]))
                #expect(row["ZTEXT"] as String == delivery.text)
                #expect(row["ZSENTAT"] as Double == delivery.sentAt.timeIntervalSinceReferenceDate)
                #expect(row["ZSENTAT"] as Double > newestBefore)
                #expect(row["ZCHAT"] as Int64 == delivery.chat.primaryKey)
                // From a member of the chat, and not from "me" (user 1): these are incoming.
                #expect(row["isMember"] as Int == 1)
                #expect(row["ZSENDER"] as Int64 != 1)
                // The chat list's fields: the chat's last message is this one, both sides, at its time, and the
                // chat is at the top of a list sorted by last-message time.
                #expect(row["ZLASTMESSAGE"] as Int64 == delivery.message.primaryKey)
                #expect(row["ZLASTMESSAGEOF"] as Int64 == delivery.chat.primaryKey)
                #expect(row["ZLASTMESSAGEAT"] as Double == delivery.sentAt.timeIntervalSinceReferenceDate)
                #expect(row["topChat"] as Int64 == delivery.chat.primaryKey)
                #expect(row["ZMESSAGESCOUNT"] as Int == row["counted"] as Int)
                // A chat has one last message: the previous one let go of it.
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE WHERE ZLASTMESSAGEOF = ?", arguments: [delivery.chat.primaryKey]) == 1)
            }
            previous = delivery
        }
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE") } == messagesBefore + 25)
        let report = try StoreIntegrityCheck.run(path: store.path)
        #expect(report.isOK, "\(report.violations.map(\.description))")
    }

    @Test func aDeliveryCostsSixStatementsOfWhichTheSaveRunsFour() throws {
        let store = try makeStore()
        let recorder = SQLRecorder(store.coordinator)
        let context = ObjectContext(coordinator: store.coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 2)
        var chats: Set<ObjectID> = []
        for index in 0..<40 {
            recorder.reset()
            let delivery = try incoming.deliver(in: context)
            chats.insert(delivery.chat)
            let statements = recorder.statements
            let saves = recorder.saves
            // The first delivery also ranks the chats and reads the newest message time.
            #expect(statements.count == (index == 0 ? 8 : 6), "delivery \(index + 1): \(statements.map(\.sql))")
            #expect(statements.filter { $0.cause != .save }.count == (index == 0 ? 4 : 2))
            let save = try #require(saves.count == 1 ? saves.first : nil)
            #expect(save.succeeded)
            #expect(save.statements == 4)
            #expect(save.inserted == 1)
            // The chat and the message that was its last, both written; and the sender, whose `sentMessages`
            // gained the message in memory only (its row has nothing to write: the key is in the message's row).
            #expect(save.updated == 3)
            #expect(save.deleted == 0)
        }
        // Several chats, large and small, cost the same.
        #expect(chats.count >= 4)
    }

    @Test func aChatChangedByAnotherWriterBeforeTheSaveIsDrawnAgain() throws {
        let store = try makeStore()
        let recorder = SQLRecorder(store.coordinator)
        // Another process bumps the chat's version just after the first delivery read its members, before its save.
        let interfered = Mutex<Int64?>(nil)
        let path = store.path
        store.coordinator.events.addObserver { record in
            guard case .statement(let statement) = record.event, statement.sql.contains("FROM ZCHATMEMBER"),
                  case .integer(let chat)? = statement.arguments.first else { return }
            let first = interfered.withLock { done in
                if done != nil { return false }
                done = chat
                return true
            }
            guard first else { return }
            _ = try? DatabaseQueue(path: path).write { db in
                try db.execute(sql: "UPDATE ZCHAT SET Z_OPT = Z_OPT + 1, ZISMUTED = 1 - ZISMUTED WHERE Z_PK = ?", arguments: [chat])
            }
        }
        let context = ObjectContext(coordinator: store.coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 6)
        let delivery = try incoming.deliver(in: context)
        let bumped = try #require(interfered.withLock { $0 })
        let saves = recorder.saves
        // The first save found the chat changed and wrote nothing; the second, on rows read again, went through.
        #expect(saves.map(\.succeeded) == [false, true])
        #expect(!context.hasChanges)
        let (last, text, messages) = try store.read { db in
            (try Int64.fetchOne(db, sql: "SELECT ZLASTMESSAGE FROM ZCHAT WHERE Z_PK = ?", arguments: [delivery.chat.primaryKey]),
             try String.fetchOne(db, sql: "SELECT ZTEXT FROM ZMESSAGE WHERE Z_PK = ?", arguments: [delivery.message.primaryKey]),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZMESSAGE"))
        }
        #expect(last == delivery.message.primaryKey)
        #expect(text == delivery.text)
        // One message more in all: the failed attempt left nothing behind.
        #expect(messages == Self.options.messages + 1)
        #expect(bumped > 0)
        let report = try StoreIntegrityCheck.run(path: store.path)
        #expect(report.isOK, "\(report.violations.map(\.description))")
    }

    @Test func theSameSeedGivesTheSameDeliveriesAndAnotherSeedOthers() throws {
        func deliveries(seed: UInt64) throws -> [String] {
            let store = try makeStore()
            let context = ObjectContext(coordinator: store.coordinator, name: "incoming")
            var incoming = IncomingMessages(seed: seed)
            let saved = try (0..<30).map { _ in try incoming.deliver(in: context) }
            let senders = try store.read { db in
                try saved.map { try Int64.fetchOne(db, sql: "SELECT ZSENDER FROM ZMESSAGE WHERE Z_PK = ?", arguments: [$0.message.primaryKey]) }
            }
            return zip(saved, senders).map { delivery, sender in
                "\(delivery.message.primaryKey) \(delivery.chat) \(sender.map(String.init) ?? "-") \(delivery.text)"
            }
        }
        let first = try deliveries(seed: 9)
        #expect(try deliveries(seed: 9) == first)
        #expect(try deliveries(seed: 10) != first)
    }

    @Test func aFewChatsGetMostMessages() throws {
        let store = try makeStore()
        let context = ObjectContext(coordinator: store.coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 3)
        var perChat: [Int64: Int] = [:]
        for _ in 0..<300 {
            perChat[try incoming.deliver(in: context).chat.primaryKey, default: 0] += 1
        }
        let counts = perChat.values.sorted(by: >)
        // 12 chats with weights 1/r^1.2: the busiest about 39%, the three busiest about two thirds.
        #expect(counts[0] >= 90)
        #expect(counts.prefix(3).reduce(0, +) >= 170)
        // The busiest chat by stored messages is the one drawn most.
        let busiest = try store.read { db in try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZCHAT ORDER BY ZMESSAGESCOUNT DESC, Z_PK LIMIT 1") }
        #expect(perChat[try #require(busiest)] == counts[0])
    }

    @Test func deliveriesRunOnAContextActor() async throws {
        let store = try makeStore()
        let actor = ContextActor(coordinator: store.coordinator, name: "live")
        var incoming = IncomingMessages(seed: 4)
        var delivered: [Delivery] = []
        for _ in 0..<5 {
            let (delivery, next) = try await actor.perform { [incoming] context in
                var simulator = incoming
                return (try simulator.deliver(in: context), simulator)
            }
            incoming = next
            delivered.append(delivery)
        }
        #expect(Set(delivered.map(\.message)).count == 5)
        let main = ObjectContext(coordinator: store.coordinator, name: "main")
        for delivery in delivered {
            let message = try main.existingObject(with: delivery.message)
            #expect(message.value(forKey: "text") as? String == delivery.text)
            #expect(message.object(forKey: "chat")?.objectID == delivery.chat)
        }
    }

    @Test func aStoreWithoutChatsIsAnError() throws {
        let folder = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(path: folder.path("empty.sqlite"), model: try ChatModel.make())
        let context = ObjectContext(coordinator: coordinator, name: "incoming")
        var incoming = IncomingMessages(seed: 1)
        #expect(throws: ContextError.self) { try incoming.deliver(in: context) }
    }
}
