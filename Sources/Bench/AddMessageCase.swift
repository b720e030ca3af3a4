import ChatFixture
import Foundation
import GRDBSQLite
import GraphStore

/// `add-message`: a message sent in the largest chat and in a small one, the way an app sends it.
///
/// The app already holds the chat (its row read, and its last message, which the chat list shows) and the sender
/// ("me", the user every generated chat has as a member). Sending inserts a `Message` with its text, `sentAt`,
/// chat and sender, points the chat's `lastMessage` and `lastMessageAt` at it, and saves. Nothing in that needs
/// the chat's messages: the inverse to-manys (`Chat.messages`, `User.sentMessages`) only record the change, and
/// the derived `messagesCount` is kept by the store's trigger. So the largest chat and a small one must cost the
/// same statements and about the same time; that is the point of the case.
///
/// Each run sends `messagesPerRun` messages, one save each, in a fresh context with an empty row cache; 11 runs a
/// variant (9 with `--quick`), since now and then a save's commit also checkpoints the write-ahead log into the
/// file and syncs it, which makes a run several times slower, and the median must not hang on one. The store
/// is never the shared one: preparation copies the chat store once per variant (untimed), and each variant keeps
/// adding to its own copy, so the copy grows by `messagesPerRun` messages a run. The raw peer writes what a save
/// writes, by hand, through statements prepared once: the key from `Z_PRIMARYKEY` (`Z_MAX`), the message row, the
/// chat's new last message (with its `Z_OPT` bump), and the previous last message's `lastMessageOf` cleared (the
/// other side of the one-to-one, also kept in a column, with its `Z_OPT` bump), in one transaction per message.
///
/// What a Faultline send runs (logged with `--sql-debug 2`): the save's four statements, `UPDATE Z_PRIMARYKEY SET
/// Z_MAX = Z_MAX + ? … RETURNING Z_MAX`, the message's `INSERT`, `UPDATE ZCHAT SET Z_OPT = Z_OPT + 1,
/// ZLASTMESSAGEAT = ?, ZLASTMESSAGE = ? WHERE Z_PK = ? AND Z_OPT = ?` and the same version-checked `UPDATE ZMESSAGE`
/// clearing the previous last message's `ZLASTMESSAGEOF`; and from the second send on, one `SELECT` of the chat's
/// row before it: a save turns the chat into a fault, since its trigger-kept counts moved, and pointing its
/// `lastMessage` elsewhere reads it again. So a run is 5 × messages − 1 statements in either chat, and the raw
/// peer's 4 × messages; the two differ by that re-read and by the version checks.
final class AddMessageCase {
    let folder: URL
    let quick: Bool
    let opened: (PersistentStoreCoordinator) -> Void
    let store: () throws -> ChatListStore

    /// The variant that sends to the small chat.
    static let smallChat = "faultline-small"

    init(folder: URL, quick: Bool, opened: @escaping (PersistentStoreCoordinator) -> Void, store: @escaping () throws -> ChatListStore) {
        self.folder = folder
        self.quick = quick
        self.opened = opened
        self.store = store
    }

    /// Messages sent per run, each with its own save.
    var messagesPerRun: Int { quick ? 20 : 100 }

    func prepare() throws -> PreparedCase {
        let shared = try store()
        let model = try ChatModel.make()
        let names = try AddMessageNames(model: model)
        let plan = try AddMessagePlan(connection: shared.raw, names: names, count: messagesPerRun)

        let largePath = try copy(shared.path, to: "add-message-faultline")
        let smallPath = try copy(shared.path, to: "add-message-small")
        let rawPath = try copy(shared.path, to: "add-message-raw")

        let faultline = try faultlineVariant(VariantName.faultline, path: largePath, chat: plan.largeChat, plan: plan, model: model, names: names)
        let small = try faultlineVariant(Self.smallChat, path: smallPath, chat: plan.smallChat, plan: plan, model: model, names: names)
        let raw = try rawVariant(path: rawPath, chat: plan.largeChat, plan: plan, names: names)
        return PreparedCase(
            name: BenchmarkCaseName.addMessage.rawValue,
            goals: [
                .sameStatements([faultline.name, small.name]),
                .ratio(faultline.name, over: small.name, atMost: 1.5),
                .ratio(faultline.name, over: raw.name, atMost: 2),
            ],
            variants: [faultline, small, raw],
            runs: quick ? 9 : 11,
            note: "\(messagesPerRun) messages a run, one save each: the largest chat (\(plan.largeChat.messages) messages) "
                + "and a small one (\(plan.smallChat.messages)); faultline and raw send to the largest")
    }

    // MARK: variants

    /// Sends the plan's messages to `chat` through GraphStore, one save each.
    private func faultlineVariant(_ name: String, path: String, chat target: AddMessagePlan.Target, plan: AddMessagePlan,
                                  model: ObjectModel, names: AddMessageNames) throws -> BenchmarkVariant {
        let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: ChatModel.classes)
        opened(coordinator)
        let probe = try AddMessageProbe(path: path, names: names)
        return BenchmarkVariant(name: name) { stopwatch in
            // An app that shows the chat holds it, its last message and the user sending: all read before the send.
            coordinator.rowCache.removeAll()
            let context = ObjectContext(coordinator: coordinator, name: "add-message")
            guard let chat = try context.existingObject(with: target.id) as? Chat,
                  let sender = try context.existingObject(with: plan.sender) as? User else {
                throw BenchmarkError("the chat or the sender is not of the expected class")
            }
            _ = chat.lastMessage?.text
            let before = try probe.state(chat: target.id.primaryKey, sender: plan.sender.primaryKey)
            let counters = coordinator.events.counters.total
            try stopwatch.time {
                for index in 0..<plan.count {
                    let message = context.insert(Message.self)
                    message.text = plan.texts[index]
                    message.sentAt = plan.dates[index]
                    message.chat = chat
                    message.sender = sender
                    chat.lastMessage = message
                    chat.lastMessageAt = plan.dates[index]
                    try context.save()
                }
            }
            let cost = coordinator.events.counters.total.difference(since: counters)
            guard !context.hasChanges, cost.saves == plan.count else {
                throw BenchmarkError("expected \(plan.count) saves and nothing left unsaved; counted \(cost.saves) saves")
            }
            let checksum = try probe.fingerprint(since: before, chat: target, sender: plan.sender.primaryKey, plan: plan)
            return RunOutcome(checksum: checksum, statements: cost.statements)
        }
    }

    /// The same sends to `chat`, hand-written: one transaction of four prepared statements per message.
    private func rawVariant(path: String, chat target: AddMessagePlan.Target, plan: AddMessagePlan, names: AddMessageNames) throws -> BenchmarkVariant {
        let connection = try RawConnection(path: path, readOnly: false)
        try connection.configureLikeAPool()
        let begin = try connection.prepare("BEGIN IMMEDIATE")
        let commit = try connection.prepare("COMMIT")
        let allocate = try connection.prepare(names.allocateSQL)
        let insert = try connection.prepare(names.insertSQL)
        let updateChat = try connection.prepare(names.updateChatSQL)
        let clearPrevious = try connection.prepare(names.clearLastMessageOfSQL)
        let readLast = try connection.prepare("SELECT \(names.chatLastMessage) FROM \(names.chatTable) WHERE Z_PK = ?1")
        let probe = try AddMessageProbe(path: path, names: names)
        let chatKey = target.id.primaryKey
        let chatEntity = Int64(target.id.entityNumber)
        let senderKey = plan.sender.primaryKey
        let messageEntity = Int64(names.messageEntity)
        return BenchmarkVariant(name: VariantName.raw) { stopwatch in
            // The app knows its chat's last message, as the Faultline variants have it loaded.
            readLast.bind(chatKey, at: 1)
            guard try readLast.step() else { throw BenchmarkError("chat \(chatKey) is gone") }
            var previous: Int64? = readLast.isNull(0) ? nil : readLast.int64(0)
            readLast.reset()
            let before = try probe.state(chat: chatKey, sender: senderKey)
            var statements = 0
            try stopwatch.time {
                for index in 0..<plan.count {
                    let sentAt = plan.dates[index].timeIntervalSinceReferenceDate
                    try begin.run()
                    begin.reset()
                    allocate.bind(messageEntity, at: 1)
                    guard try allocate.step() else { throw BenchmarkError("Z_PRIMARYKEY has no row for Message") }
                    let key = allocate.int64(0)
                    allocate.reset()
                    insert.bind(key, at: 1)
                    insert.bind(messageEntity, at: 2)
                    insert.bind(plan.texts[index], at: 3)
                    insert.bind(sentAt, at: 4)
                    insert.bind(chatKey, at: 5)
                    insert.bind(chatEntity, at: 6)
                    insert.bind(senderKey, at: 7)
                    try insert.run()
                    insert.reset()
                    updateChat.bind(key, at: 1)
                    updateChat.bind(sentAt, at: 2)
                    updateChat.bind(chatKey, at: 3)
                    try updateChat.run()
                    updateChat.reset()
                    statements += 3
                    if let previous {
                        clearPrevious.bind(previous, at: 1)
                        try clearPrevious.run()
                        clearPrevious.reset()
                        statements += 1
                    }
                    try commit.run()
                    commit.reset()
                    previous = key
                }
            }
            let checksum = try probe.fingerprint(since: before, chat: target, sender: senderKey, plan: plan)
            return RunOutcome(checksum: checksum, statements: statements)
        }
    }

    /// Copies the shared chat store (and its write-ahead log, if any) to a new file in the bench's folder.
    private func copy(_ source: String, to stem: String) throws -> String {
        let path = folder.appendingPathComponent("\(stem).sqlite").path
        GraphCases.removeStore(at: path)
        do {
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: path + suffix)
            }
        } catch {
            throw BenchmarkError("cannot copy the chat store to \(path): \(error.localizedDescription)")
        }
        return path
    }
}

/// What every variant sends: the chats, the sender, and each message's text and time.
private struct AddMessagePlan {
    /// A chat messages are sent to.
    struct Target {
        let id: ObjectID
        /// Messages it held when the case was prepared.
        let messages: Int
    }

    let largeChat: Target
    let smallChat: Target
    /// A member of both chats: the lowest-keyed member of the largest chat ("me" in a generated store).
    let sender: ObjectID
    let count: Int
    let texts: [String]
    /// A minute after the newest message in the store, then a second apart: "now" in the store's own time, the
    /// same on every run, so every run writes the same values.
    let dates: [Date]

    init(connection: RawConnection, names: AddMessageNames, count: Int) throws {
        let chats = names.chatTable
        let largest = try connection.prepare(
            "SELECT Z_PK, Z_ENT, \(names.messagesCount) FROM \(chats) ORDER BY \(names.messagesCount) DESC, Z_PK LIMIT 1")
        guard try largest.step() else { throw BenchmarkError("the chat store has no chats") }
        let large = ObjectID(entityNumber: Int(largest.int64(1)), primaryKey: largest.int64(0))
        let members = try connection.prepare(
            "SELECT \(names.memberUser) FROM \(names.memberTable) WHERE \(names.memberChat) = ?1 ORDER BY \(names.memberUser) LIMIT 1")
        members.bind(large.primaryKey, at: 1)
        guard try members.step() else { throw BenchmarkError("the largest chat has no members") }
        sender = ObjectID(entityNumber: names.userEntity, primaryKey: members.int64(0))
        // The chat with the fewest messages among those of the same kind the sender belongs to, with a last message
        // to replace as the largest chat has.
        let smallest = try connection.prepare(
            "SELECT Z_PK, Z_ENT FROM \(chats) WHERE Z_ENT = ?1 AND \(names.chatLastMessage) IS NOT NULL AND Z_PK <> ?2 "
                + "AND Z_PK IN (SELECT \(names.memberChat) FROM \(names.memberTable) WHERE \(names.memberUser) = ?3) "
                + "ORDER BY \(names.messagesCount), Z_PK LIMIT 1")
        smallest.bind(Int64(large.entityNumber), at: 1)
        smallest.bind(large.primaryKey, at: 2)
        smallest.bind(sender.primaryKey, at: 3)
        guard try smallest.step() else { throw BenchmarkError("the chat store has no small chat of the largest chat's kind with its sender") }
        let small = ObjectID(entityNumber: Int(smallest.int64(1)), primaryKey: smallest.int64(0))
        // The messages counted, not the derived count: the chats must really be that large and that small.
        let counted = try connection.prepare("SELECT COUNT(*) FROM \(names.messageTable) WHERE \(names.messageChat) = ?1")
        func messages(in chat: ObjectID) throws -> Int {
            counted.bind(chat.primaryKey, at: 1)
            defer { counted.reset() }
            guard try counted.step() else { return 0 }
            return Int(counted.int64(0))
        }
        largeChat = Target(id: large, messages: try messages(in: large))
        smallChat = Target(id: small, messages: try messages(in: small))
        guard smallChat.messages > 0, largeChat.messages >= 10 * smallChat.messages else {
            throw BenchmarkError("the largest chat has \(largeChat.messages) messages and the small one \(smallChat.messages): not far enough apart")
        }
        let newest = try connection.prepare("SELECT MAX(\(names.lastMessageAt)) FROM \(chats)")
        guard try newest.step() else { throw BenchmarkError("the chat store has no last message times") }
        let start = (newest.isNull(0) ? 0 : newest.double(0)).rounded(.down) + 60
        self.count = count
        dates = (0..<count).map { Date(timeIntervalSinceReferenceDate: start + Double($0)) }
        let lines = ["on my way 🚲", "see you at 7", "did you get the photos?", "了解、ありがとう！", "ok 👍"]
        texts = (0..<count).map { "\(lines[$0 % lines.count]) (\($0 + 1))" }
    }
}

/// The chat model's SQL names, and the raw peer's statements.
private struct AddMessageNames {
    let messageTable: String
    let messageEntity: Int
    let messageChat: String
    let messageChatEntity: String?
    let lastMessageOf: String
    let lastMessageOfEntity: String?
    let sender: String
    let text: String
    let sentAt: String
    let kind: String
    let isEdited: String
    let chatTable: String
    let chatLastMessage: String
    let lastMessageAt: String
    let messagesCount: String
    let memberTable: String
    let memberChat: String
    let memberUser: String
    let userTable: String
    let userEntity: Int

    init(model: ObjectModel) throws {
        let names = SchemaNames(model)
        guard let message = model.entity(named: "Message")?.number, let user = model.entity(named: "User")?.number else {
            throw BenchmarkError("the chat model has no Message or User entity")
        }
        messageEntity = message
        userEntity = user
        messageTable = try names.table("Message")
        (messageChat, messageChatEntity) = try names.foreignKey("chat", of: "Message")
        (lastMessageOf, lastMessageOfEntity) = try names.foreignKey("lastMessageOf", of: "Message")
        sender = try names.foreignKey("sender", of: "Message").column
        text = try names.column("text", of: "Message")
        sentAt = try names.column("sentAt", of: "Message")
        kind = try names.column("kind", of: "Message")
        isEdited = try names.column("isEdited", of: "Message")
        chatTable = try names.table("Chat")
        chatLastMessage = try names.foreignKey("lastMessage", of: "Chat").column
        lastMessageAt = try names.column("lastMessageAt", of: "Chat")
        messagesCount = try names.column("messagesCount", of: "Chat")
        memberTable = try names.table("ChatMember")
        memberChat = try names.foreignKey("chat", of: "ChatMember").column
        memberUser = try names.foreignKey("user", of: "ChatMember").column
        userTable = try names.table("User")
    }

    /// Reserves the next message key (the entity number bound as ?1; Message is a root, so its own row holds it).
    var allocateSQL: String { "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_ENT = ?1 RETURNING Z_MAX" }

    /// The new message: key ?1, entity ?2, text ?3, sentAt ?4, chat ?5 (its entity ?6), sender ?7. It is its chat's
    /// last message, so its side of the one-to-one points back at the chat. `kind` and `isEdited` take the model's
    /// defaults (0, NO), as a new object's do.
    var insertSQL: String {
        var columns = ["Z_PK", "Z_ENT", "Z_OPT", text, sentAt, kind, isEdited, messageChat, sender, lastMessageOf]
        var values = ["?1", "?2", "1", "?3", "?4", "0", "0", "?5", "?7", "?5"]
        if let messageChatEntity { columns.append(messageChatEntity); values.append("?6") }
        if let lastMessageOfEntity { columns.append(lastMessageOfEntity); values.append("?6") }
        return "INSERT INTO \(messageTable) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
    }

    /// The chat's new last message ?1 at ?2, for chat ?3, moving its version on as any update of a row does.
    var updateChatSQL: String {
        "UPDATE \(chatTable) SET Z_OPT = Z_OPT + 1, \(chatLastMessage) = ?1, \(lastMessageAt) = ?2 WHERE Z_PK = ?3"
    }

    /// The previous last message ?1 is no longer its chat's last.
    var clearLastMessageOfSQL: String {
        let entity = lastMessageOfEntity.map { ", \($0) = NULL" } ?? ""
        return "UPDATE \(messageTable) SET Z_OPT = Z_OPT + 1, \(lastMessageOf) = NULL\(entity) WHERE Z_PK = ?1"
    }
}

/// Reads a variant's copy, outside the timed region, through its own read-only connection: the state before a run,
/// and afterwards a fingerprint of what the run wrote.
private struct AddMessageProbe {
    /// The figures a run changes, read before it.
    struct State {
        let maximumKey: Int64
        let chatVersion: Int64
        let chatMessages: Int64
        let lastMessage: Int64?
        let lastMessageVersion: Int64
        let senderVersion: Int64
    }

    let names: AddMessageNames
    let maximumKey: RawStatement
    let chat: RawStatement
    let message: RawStatement
    let user: RawStatement
    let newMessages: RawStatement

    init(path: String, names: AddMessageNames) throws {
        let connection = try RawConnection(path: path, readOnly: true)
        self.names = names
        maximumKey = try connection.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(names.messageEntity)")
        chat = try connection.prepare(
            "SELECT Z_OPT, \(names.messagesCount), \(names.chatLastMessage), \(names.lastMessageAt), Z_ENT FROM \(names.chatTable) WHERE Z_PK = ?1")
        message = try connection.prepare("SELECT Z_OPT, \(names.lastMessageOf) FROM \(names.messageTable) WHERE Z_PK = ?1")
        user = try connection.prepare("SELECT Z_OPT FROM \(names.userTable) WHERE Z_PK = ?1")
        newMessages = try connection.prepare("SELECT * FROM \(names.messageTable) WHERE Z_PK > ?1 ORDER BY Z_PK")
    }

    func state(chat chatKey: Int64, sender: Int64) throws -> State {
        let key = try single(maximumKey) { $0.int64(0) }
        chat.bind(chatKey, at: 1)
        let (version, messages, last) = try single(chat) { ($0.int64(0), $0.int64(1), $0.isNull(2) ? nil : $0.int64(2)) }
        var lastVersion: Int64 = 0
        if let last {
            message.bind(last, at: 1)
            lastVersion = try single(message) { $0.int64(0) }
        }
        user.bind(sender, at: 1)
        let senderVersion = try single(user) { $0.int64(0) }
        return State(maximumKey: key, chatVersion: version, chatMessages: messages, lastMessage: last,
                     lastMessageVersion: lastVersion, senderVersion: senderVersion)
    }

    /// A fingerprint (FNV-1a) of the run's writes that does not depend on which chat got the messages, nor on how
    /// many runs came before, so every variant's runs must all give the same one:
    /// - each new message row (those keyed above the `Z_MAX` read before the run), every column with its storage
    ///   class, except that its key is taken relative to that `Z_MAX`, its `chat` and `lastMessageOf` columns
    ///   (and their entity columns) only as "the chat", "another chat" or empty; so text, `sentAt`, `kind`,
    ///   `isEdited`, the sender, `Z_OPT` (2 for all but the last: each was its chat's last message until the next
    ///   one came) and the empty reply and forward keys all count;
    /// - how far `Z_MAX` moved;
    /// - the chat's `Z_OPT` and `messagesCount` growth (one per message), its `lastMessage` relative to that
    ///   `Z_MAX` (the run's last message) and its `lastMessageAt`;
    /// - the previous last message: whether its `lastMessageOf` was cleared, and its `Z_OPT` growth;
    /// - the sender's `Z_OPT` growth (none: a foreign key written by the message is no change to the user's row).
    func fingerprint(since before: State, chat target: AddMessagePlan.Target, sender: Int64, plan: AddMessagePlan) throws -> Int64 {
        var hash = FNV1a()
        let chatKey = target.id.primaryKey
        let chatEntity = Int64(target.id.entityNumber)
        let base = before.maximumKey
        func mixReference(_ statement: RawStatement, _ column: Int32, equals value: Int64) {
            hash.mix(statement.isNull(column) ? -1 : statement.int64(column) == value ? 1 : 0)
        }
        newMessages.bind(base, at: 1)
        var rows: Int64 = 0
        while try newMessages.step() {
            rows += 1
            for column in 0..<newMessages.columnCount {
                let name = newMessages.columnName(column)
                if name == "Z_PK" {
                    hash.mix(newMessages.int64(column) - base)
                } else if name == names.messageChat || name == names.lastMessageOf {
                    mixReference(newMessages, column, equals: chatKey)
                } else if name == names.messageChatEntity || name == names.lastMessageOfEntity {
                    mixReference(newMessages, column, equals: chatEntity)
                } else {
                    Self.mix(newMessages, column, into: &hash)
                }
            }
        }
        newMessages.reset()
        guard rows == Int64(plan.count) else {
            throw BenchmarkError("the run left \(rows) new messages, expected \(plan.count)")
        }
        hash.mix(rows)
        hash.mix(try single(maximumKey) { $0.int64(0) } - base)

        chat.bind(chatKey, at: 1)
        try single(chat) { row in
            hash.mix(row.int64(0) - before.chatVersion)
            hash.mix(row.int64(1) - before.chatMessages)
            hash.mix(row.isNull(2) ? -1 : row.int64(2) - base)
            Self.mix(row, 3, into: &hash)
        }
        if let last = before.lastMessage {
            message.bind(last, at: 1)
            try single(message) { row in
                hash.mix(row.isNull(1) ? 1 : 0)
                hash.mix(row.int64(0) - before.lastMessageVersion)
            }
        }
        user.bind(sender, at: 1)
        hash.mix(try single(user) { $0.int64(0) } - before.senderVersion)
        return hash.value
    }

    /// Steps `statement` to its one row, reads it, and resets it (so this connection holds no read transaction
    /// between runs).
    @discardableResult
    private func single<T>(_ statement: RawStatement, _ read: (RawStatement) throws -> T) throws -> T {
        defer { statement.reset() }
        guard try statement.step() else { throw BenchmarkError("a row the add-message check reads is missing") }
        return try read(statement)
    }

    /// Mixes a column's storage class and value.
    private static func mix(_ statement: RawStatement, _ column: Int32, into hash: inout FNV1a) {
        let storageClass = statement.storageClass(column)
        hash.mix(Int64(storageClass))
        switch storageClass {
        case SQLITE_INTEGER: hash.mix(statement.int64(column))
        case SQLITE_FLOAT: hash.mix(Int64(bitPattern: statement.double(column).bitPattern))
        case SQLITE_TEXT: hash.mix(statement.string(column).utf8)
        case SQLITE_BLOB: hash.mix(statement.data(column))
        default: break
        }
    }
}
