import Foundation
import GRDB

// The chat store as GRDB's documentation introduces it, for the `grdb-query-interface` variants: one Codable record
// per table, named after the columns Faultline's model lays out (Core Data's Z names), with associations declared on
// explicit foreign keys (the tables declare none, so GRDB cannot infer them), and requests built with `including(…)`
// and `annotated(with:)`. Dates are Core Data's: seconds since 2001 in a TIMESTAMP column, so every record decodes
// them with GRDB's `.timeIntervalSinceReferenceDate` strategy. The records leave out the derived counts the chat
// table keeps (`ZMEMBERSCOUNT`, `ZMESSAGESCOUNT`) and count members with an association aggregate instead, as the
// documented path does: that is what this variant shows the cost of. The counts are there for any reader (the
// store's triggers keep them whichever library writes), and the `grdb` variants (`GRDBChatRows.swift`) read them.

/// A record whose dates are stored as Core Data stores them.
protocol CoreDataDatedRecord: FetchableRecord {}

extension CoreDataDatedRecord {
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }
}

/// A row of `ZUSER`.
struct UserRecord: Codable, CoreDataDatedRecord, TableRecord {
    static let databaseTableName = "ZUSER"

    var id: Int64
    var name: String
    var handle: String
    var statusMessage: String?
    var createdAt: Date
    var profileID: Int64?

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", name = "ZNAME", handle = "ZHANDLE", statusMessage = "ZSTATUSMESSAGE", createdAt = "ZCREATEDAT"
        case profileID = "ZPROFILE"
    }

    static let sentMessages = hasMany(MessageRecord.self, key: "sentMessages", using: MessageRecord.senderForeignKey)
    static let memberships = hasMany(ChatMemberRecord.self, key: "memberships", using: ChatMemberRecord.userForeignKey)
    static let reactions = hasMany(ReactionRecord.self, key: "reactions", using: ReactionRecord.userForeignKey)
}

/// A row of `ZCHAT`: a direct or group chat (`Z_ENT` tells which).
struct ChatRecord: Codable, CoreDataDatedRecord, TableRecord {
    static let databaseTableName = "ZCHAT"

    var id: Int64
    var entity: Int64
    var title: String
    var createdAt: Date
    var lastMessageAt: Date?
    var isPinned: Bool
    var isMuted: Bool
    var lastMessageID: Int64?
    /// Group chats only.
    var ownerID: Int64?
    var topic: String?

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", entity = "Z_ENT", title = "ZTITLE", createdAt = "ZCREATEDAT", lastMessageAt = "ZLASTMESSAGEAT"
        case isPinned = "ZISPINNED", isMuted = "ZISMUTED", lastMessageID = "ZLASTMESSAGE", ownerID = "ZOWNER", topic = "ZTOPIC"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let isPinned = Column(CodingKeys.isPinned)
        static let lastMessageAt = Column(CodingKeys.lastMessageAt)
    }

    static let lastMessageForeignKey = ForeignKey([CodingKeys.lastMessageID.rawValue], to: ["Z_PK"])
    static let ownerForeignKey = ForeignKey([CodingKeys.ownerID.rawValue], to: ["Z_PK"])

    static let members = hasMany(ChatMemberRecord.self, key: "members", using: ChatMemberRecord.chatForeignKey)
    static let messages = hasMany(MessageRecord.self, key: "messages", using: MessageRecord.chatForeignKey)
    static let lastMessage = belongsTo(MessageRecord.self, key: "lastMessage", using: lastMessageForeignKey)
    static let owner = belongsTo(UserRecord.self, key: "owner", using: ownerForeignKey)
}

/// A row of `ZCHATMEMBER`: a user's membership of a chat.
struct ChatMemberRecord: Codable, CoreDataDatedRecord, TableRecord {
    static let databaseTableName = "ZCHATMEMBER"

    var id: Int64
    var chatID: Int64?
    var userID: Int64?
    var role: Int16
    var joinedAt: Date
    var lastReadAt: Date?

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", chatID = "ZCHAT", userID = "ZUSER", role = "ZROLE", joinedAt = "ZJOINEDAT", lastReadAt = "ZLASTREADAT"
    }

    static let chatForeignKey = ForeignKey([CodingKeys.chatID.rawValue], to: ["Z_PK"])
    static let userForeignKey = ForeignKey([CodingKeys.userID.rawValue], to: ["Z_PK"])

    static let chat = belongsTo(ChatRecord.self, key: "chat", using: chatForeignKey)
    static let user = belongsTo(UserRecord.self, key: "user", using: userForeignKey)
}

/// A row of `ZMESSAGE`, with every stored attribute and to-one key.
struct MessageRecord: Codable, CoreDataDatedRecord, TableRecord {
    static let databaseTableName = "ZMESSAGE"

    var id: Int64
    var chatID: Int64?
    var senderID: Int64?
    var replyToID: Int64?
    var forwardedFromID: Int64?
    var lastMessageOfID: Int64?
    var text: String
    var sentAt: Date
    var kind: Int16
    var isEdited: Bool

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", chatID = "ZCHAT", senderID = "ZSENDER", replyToID = "ZREPLYTO", forwardedFromID = "ZFORWARDEDFROM"
        case lastMessageOfID = "ZLASTMESSAGEOF", text = "ZTEXT", sentAt = "ZSENTAT", kind = "ZKIND", isEdited = "ZISEDITED"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let chatID = Column(CodingKeys.chatID)
        static let sentAt = Column(CodingKeys.sentAt)
    }

    static let chatForeignKey = ForeignKey([CodingKeys.chatID.rawValue], to: ["Z_PK"])
    static let senderForeignKey = ForeignKey([CodingKeys.senderID.rawValue], to: ["Z_PK"])
    static let replyToForeignKey = ForeignKey([CodingKeys.replyToID.rawValue], to: ["Z_PK"])

    static let chat = belongsTo(ChatRecord.self, key: "chat", using: chatForeignKey)
    static let sender = belongsTo(UserRecord.self, key: "sender", using: senderForeignKey)
    static let replyTo = belongsTo(MessageRecord.self, key: "replyTo", using: replyToForeignKey)
    static let replies = hasMany(MessageRecord.self, key: "replies", using: replyToForeignKey)
    static let reactions = hasMany(ReactionRecord.self, key: "reactions", using: ReactionRecord.messageForeignKey)
}

/// A row of `ZREACTION`.
struct ReactionRecord: Codable, CoreDataDatedRecord, TableRecord {
    static let databaseTableName = "ZREACTION"

    var id: Int64
    var messageID: Int64?
    var userID: Int64?
    var emoji: String
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", messageID = "ZMESSAGE", userID = "ZUSER", emoji = "ZEMOJI", createdAt = "ZCREATEDAT"
    }

    static let messageForeignKey = ForeignKey([CodingKeys.messageID.rawValue], to: ["Z_PK"])
    static let userForeignKey = ForeignKey([CodingKeys.userID.rawValue], to: ["Z_PK"])

    static let message = belongsTo(MessageRecord.self, key: "message", using: messageForeignKey)
    static let user = belongsTo(UserRecord.self, key: "user", using: userForeignKey)
}

// MARK: checking the names

/// The records' table and column names checked against the layout Faultline gives the chat model: the records
/// spell them out (as a GRDB app would), so a change to the model or the layout must fail the bench loudly rather
/// than let the GRDB variants read other columns than the rest.
enum GRDBChatSchema {
    /// One name a record uses: an attribute's column or a to-one's foreign key column.
    private struct Expected {
        let entity: String
        let property: String
        let column: String
        let isToOne: Bool
    }

    private static let tables: [(entity: String, table: String)] = [
        ("User", UserRecord.databaseTableName), ("Chat", ChatRecord.databaseTableName),
        ("ChatMember", ChatMemberRecord.databaseTableName), ("Message", MessageRecord.databaseTableName),
        ("Reaction", ReactionRecord.databaseTableName),
    ]

    private static var columns: [Expected] {
        func attribute(_ entity: String, _ property: String, _ key: some CodingKey) -> Expected {
            Expected(entity: entity, property: property, column: key.stringValue, isToOne: false)
        }
        func toOne(_ entity: String, _ property: String, _ key: some CodingKey) -> Expected {
            Expected(entity: entity, property: property, column: key.stringValue, isToOne: true)
        }
        typealias User = UserRecord.CodingKeys
        typealias Chat = ChatRecord.CodingKeys
        typealias Member = ChatMemberRecord.CodingKeys
        typealias Message = MessageRecord.CodingKeys
        typealias Reaction = ReactionRecord.CodingKeys
        return [
            attribute("User", "name", User.name), attribute("User", "handle", User.handle),
            attribute("User", "statusMessage", User.statusMessage), attribute("User", "createdAt", User.createdAt),
            toOne("User", "profile", User.profileID),
            attribute("Chat", "title", Chat.title), attribute("Chat", "createdAt", Chat.createdAt),
            attribute("Chat", "lastMessageAt", Chat.lastMessageAt), attribute("Chat", "isPinned", Chat.isPinned),
            attribute("Chat", "isMuted", Chat.isMuted), toOne("Chat", "lastMessage", Chat.lastMessageID),
            attribute("GroupChat", "topic", Chat.topic), toOne("GroupChat", "owner", Chat.ownerID),
            attribute("ChatMember", "role", Member.role), attribute("ChatMember", "joinedAt", Member.joinedAt),
            attribute("ChatMember", "lastReadAt", Member.lastReadAt), toOne("ChatMember", "chat", Member.chatID),
            toOne("ChatMember", "user", Member.userID),
            attribute("Message", "text", Message.text), attribute("Message", "sentAt", Message.sentAt),
            attribute("Message", "kind", Message.kind), attribute("Message", "isEdited", Message.isEdited),
            toOne("Message", "chat", Message.chatID), toOne("Message", "sender", Message.senderID),
            toOne("Message", "replyTo", Message.replyToID), toOne("Message", "forwardedFrom", Message.forwardedFromID),
            toOne("Message", "lastMessageOf", Message.lastMessageOfID),
            attribute("Reaction", "emoji", Reaction.emoji), attribute("Reaction", "createdAt", Reaction.createdAt),
            toOne("Reaction", "message", Reaction.messageID), toOne("Reaction", "user", Reaction.userID),
        ]
    }

    /// Throws unless every table and column the records name is the one `names` gives the model's property.
    static func verify(_ names: SchemaNames, columns chatList: ChatListColumns) throws {
        var differences: [String] = []
        for (entity, table) in tables {
            let expected = try names.table(entity)
            if expected != table { differences.append("\(entity): table \(expected), the record says \(table)") }
        }
        for name in columns {
            let expected = name.isToOne
                ? try names.foreignKey(name.property, of: name.entity).column
                : try names.column(name.property, of: name.entity)
            if expected != name.column {
                differences.append("\(name.entity).\(name.property): column \(expected), the record says \(name.column)")
            }
        }
        // The raw peers' names, taken from the same layout, must agree too.
        let shared: [(String, String)] = [
            (chatList.chatTable, ChatRecord.databaseTableName), (chatList.messageTable, MessageRecord.databaseTableName),
            (chatList.userTable, UserRecord.databaseTableName), (chatList.title, ChatRecord.CodingKeys.title.rawValue),
            (chatList.isPinned, ChatRecord.CodingKeys.isPinned.rawValue),
            (chatList.lastMessageAt, ChatRecord.CodingKeys.lastMessageAt.rawValue),
            (chatList.lastMessage, ChatRecord.CodingKeys.lastMessageID.rawValue),
            (chatList.text, MessageRecord.CodingKeys.text.rawValue), (chatList.sender, MessageRecord.CodingKeys.senderID.rawValue),
            (chatList.name, UserRecord.CodingKeys.name.rawValue),
        ]
        for (raw, record) in shared where raw != record {
            differences.append("the raw peers name \(raw) where the records name \(record)")
        }
        guard differences.isEmpty else {
            throw BenchmarkError("the GRDB records do not match the chat store's layout: " + differences.joined(separator: "; "))
        }
    }
}

// MARK: decoded rows

/// A chat-list row, decoded from `ChatRecord` annotated with its member count, with its last message and that
/// message's sender.
struct ChatListItem: Decodable, FetchableRecord {
    var chat: ChatRecord
    var memberCount: Int
    var lastMessage: MessageRecord?
    var sender: UserRecord?

    var row: ChatRow {
        ChatRow(title: chat.title, members: Int64(memberCount), text: lastMessage?.text, sender: sender?.name)
    }
}

/// A message as the open chat shows it: the message, its sender, the message it replies to with that one's sender,
/// and how many reactions it has.
struct OpenChatItem: Decodable, FetchableRecord {
    var message: MessageRecord
    var sender: UserRecord?
    var replyTo: MessageRecord?
    var replySender: UserRecord?
    var reactionCount: Int

    var row: MessageRow {
        MessageRow(text: message.text, sentAt: message.sentAt.timeIntervalSinceReferenceDate, sender: sender?.name,
                   replyText: replyTo?.text, replySender: replySender?.name, reactions: Int64(reactionCount))
    }
}

// MARK: the reads

/// A read-only GRDB queue on the chat store, and the reads the `grdb-query-interface` variants time, each written as
/// GRDB's documentation shows: a query-interface request built from the records' associations, decoded into a
/// `FetchableRecord`; and a second queue for the `grdb` variants, whose reads are `GRDBChatSQL`'s.
final class GRDBChatReader {
    /// The `grdb-query-interface` variants' connection.
    let queue: DatabaseQueue
    /// The `grdb` variants' own connection: each peer has its own, as the raw peer has, so that the query
    /// interface's scans never evict the other's pages from SQLite's cache.
    let handWrittenQueue: DatabaseQueue

    init(path: String, names: SchemaNames, columns: ChatListColumns) throws {
        try GRDBChatSchema.verify(names, columns: columns)
        queue = try GRDBPeer.queue(path: path, readOnly: true)
        handWrittenQueue = try GRDBPeer.queue(path: path, readOnly: true)
    }

    /// A `grdb` variant timing `read` on `handWrittenQueue`, each statement in SQLite's implicit transaction as the
    /// raw peer runs its own (statements counted on its first run).
    func handWrittenVariant(_ read: @escaping (Database) throws -> Int64) -> BenchmarkVariant {
        GRDBReadVariant(name: VariantName.grdb, queue: handWrittenQueue, scope: .asRaw, read: read).variant
    }

    /// A `grdb-query-interface` variant timing `read` on `queue`, in `queue.read` as GRDB's documentation reads.
    func queryInterfaceVariant(_ read: @escaping (Database) throws -> Int64) -> BenchmarkVariant {
        GRDBReadVariant(name: VariantName.grdbQueryInterface, queue: queue, scope: .ownTransaction, read: read).variant
    }

    /// Runs `work` in one read transaction on the query interface's queue.
    func read<T>(_ work: (Database) throws -> T) throws -> T {
        try queue.read(work)
    }

    /// Runs `work` on the `grdb` variants' queue, outside any transaction of GRDB's.
    func readHandWritten<T>(_ work: (Database) throws -> T) throws -> T {
        try handWrittenQueue.inDatabase(work)
    }

    // MARK: chat list

    /// The chat list: every chat with its member count (`annotated(with:)`), its last message and that message's
    /// sender (`including(optional:)`), in the list's order.
    static var chatList: QueryInterfaceRequest<ChatListItem> {
        ChatRecord
            .annotated(with: ChatRecord.members.count.forKey("memberCount"))
            .including(optional: ChatRecord.lastMessage.including(optional: MessageRecord.sender))
            .order(ChatRecord.Columns.isPinned.desc, ChatRecord.Columns.lastMessageAt.desc, ChatRecord.Columns.id)
            .asRequest(of: ChatListItem.self)
    }

    /// The first `rows` rows of the chat list, hashed as `ChatRow`s; returns the hash and the number of rows.
    static func chatListScreen(_ db: Database, rows: Int) throws -> (checksum: Int64, rows: Int) {
        let items = try chatList.limit(rows).fetchAll(db)
        var hash = FNV1a()
        // The list's total, which the pane's title shows: a second statement.
        hash.mix(Int64(try ChatRecord.fetchCount(db)))
        for item in items { item.row.mix(into: &hash) }
        hash.mix(Int64(items.count))
        return (hash.value, items.count)
    }

    /// The whole chat list, `batch` rows a page, each page the list's request with a keyset filter (the rows after
    /// the last one shown) and a limit. `afterPage` hears each page's number as it is hashed.
    static func chatListScroll(_ db: Database, batch: Int, afterPage: (Int) -> Void) throws -> (checksum: Int64, rows: Int, pages: Int) {
        var hash = FNV1a()
        var rows = 0
        var pages = 0
        var request = chatList.limit(batch)
        while true {
            let items = try request.fetchAll(db)
            pages += 1
            for item in items { item.row.mix(into: &hash) }
            rows += items.count
            afterPage(pages)
            guard items.count == batch, let last = items.last?.chat else { break }
            request = chatList.filter(after(last)).limit(batch)
        }
        hash.mix(Int64(rows))
        return (hash.value, rows, pages)
    }

    /// What a scroll of the whole chat list read.
    struct Scroll {
        var checksum: Int64
        var rows: Int
        var pages: Int
        /// The statements it ran, when counted, and their SQL.
        var statements: Int?
        var sql: [String]?
    }

    /// The whole chat list a page at a time (`chatListScroll`), in one read transaction; with `counting`, its
    /// statements are counted too (which slows it).
    func scrollChatList(batch: Int, counting: Bool, afterPage: (Int) -> Void) throws -> Scroll {
        func scroll(_ db: Database) throws -> Scroll {
            let read = try Self.chatListScroll(db, batch: batch, afterPage: afterPage)
            return Scroll(checksum: read.checksum, rows: read.rows, pages: read.pages)
        }
        guard counting else { return try read(scroll) }
        var (result, statements, sql) = try queue.read { db in try GRDBPeer.recording(db) { try scroll(db) } }
        result.statements = statements
        result.sql = sql
        return result
    }

    /// The rows after `chat` in the list's order. NULL `lastMessageAt`s sort last (SQLite puts NULL below every
    /// value, so it comes last in descending order). Dates are bound as the store keeps them (seconds since 2001):
    /// GRDB would bind a `Date` as text.
    private static func after(_ chat: ChatRecord) -> SQLExpression {
        let pinned = ChatRecord.Columns.isPinned
        let lastMessageAt = ChatRecord.Columns.lastMessageAt
        let id = ChatRecord.Columns.id
        let sameKey: SQLExpression
        if let at = chat.lastMessageAt?.timeIntervalSinceReferenceDate {
            sameKey = lastMessageAt < at || lastMessageAt == nil || (lastMessageAt == at && id > chat.id)
        } else {
            sameKey = lastMessageAt == nil && id > chat.id
        }
        return pinned < chat.isPinned || (pinned == chat.isPinned && sameKey)
    }

    // MARK: open chat

    /// A chat's latest `limit` messages, newest first, each with its sender, the message it replies to and that
    /// message's sender (distinct association keys: `sender`, `replyTo`, `replySender`), and its reaction count.
    static func openChat(chat: Int64, limit: Int) -> QueryInterfaceRequest<OpenChatItem> {
        MessageRecord
            .filter(MessageRecord.Columns.chatID == chat)
            .including(optional: MessageRecord.sender)
            .including(optional: MessageRecord.replyTo.including(optional: MessageRecord.sender.forKey("replySender")))
            .annotated(with: MessageRecord.reactions.count.forKey("reactionCount"))
            .order(MessageRecord.Columns.sentAt.desc, MessageRecord.Columns.id.desc)
            .limit(limit)
            .asRequest(of: OpenChatItem.self)
    }

    /// The open chat's rows, hashed as `MessageRow`s.
    static func openChat(_ db: Database, chat: Int64, limit: Int) throws -> (checksum: Int64, rows: Int) {
        let items = try openChat(chat: chat, limit: limit).fetchAll(db)
        var hash = FNV1a()
        for item in items { item.row.mix(into: &hash) }
        hash.mix(Int64(items.count))
        return (hash.value, items.count)
    }

    // MARK: materialize

    /// The first `count` messages by primary key, as plain records.
    static func messages(_ db: Database, count: Int) throws -> [MessageRecord] {
        try MessageRecord.order(MessageRecord.Columns.id).limit(count).fetchAll(db)
    }
}
