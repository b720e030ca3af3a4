import ChatFixture
import Foundation
import GRDB
import GraphStore

/// `open-chat` and `materialize-messages`: reads of the chat store `chat-list` generates (shared with it: one
/// coordinator, one raw connection, one GRDB queue).
///
/// - `open-chat` opens the chat with the most messages, as the browser's message pane does: its latest messages,
///   each with its sender's name, the message it replies to (text and sender's name) and its reaction count.
/// - `materialize-messages` loads the first messages by primary key whole (every attribute, every to-one key) and
///   reads every value, the kind of load an export or a sync pass makes; it reports peak memory.
final class ChatReadCases {
    let quick: Bool
    let store: () throws -> ChatListStore

    /// Messages an open chat shows.
    static let openChatMessages = 50
    /// Messages `materialize-messages` loads.
    var materializedMessages: Int { quick ? 10_000 : 100_000 }

    init(quick: Bool, store: @escaping () throws -> ChatListStore) {
        self.quick = quick
        self.store = store
    }

    func prepare(_ name: BenchmarkCaseName) throws -> PreparedCase {
        switch name {
        case .openChat: try openChat()
        case .materializeMessages: try materializeMessages()
        default: preconditionFailure("\(name.rawValue) is not a chat read case")
        }
    }

    // MARK: open-chat

    /// The latest 50 messages of the largest chat, newest first (`sentAt` descending, then the primary key
    /// descending, the browser's order), with senders, reply quotes and reaction counts, five ways:
    ///
    /// - `faultline`: the message pane's fetch with `sender` and `replyTo.sender` prefetched by joins, only the drawn
    ///   properties read, and the reactions counted in the same statement (`countsToFetch`).
    /// - `faultline-defaults`: the same fetch with Core Data's defaults: a fault per related object and to-many.
    /// - `raw-sqlite`: one hand-written statement (`MessageColumns.openChatSQL`), prepared once, six values a row.
    /// - `grdb`: that statement from GRDB's statement cache, rows decoded by column index.
    /// - `grdb-query-interface`: `MessageRecord` including its sender and its replied-to message with that one's
    ///   sender, annotated with its reaction count, which groups every message of the chat before the limit.
    ///
    /// Every Faultline run starts cold: a fresh context and an empty row cache, as when the chat is opened first
    /// after launch.
    private func openChat() throws -> PreparedCase {
        let store = try store()
        let coordinator = store.coordinator
        let names = try MessageColumns(model: coordinator.model)
        let limit = Self.openChatMessages
        let chat = try largestChat(store, names: names)
        let select = try store.raw.prepare(names.openChatSQL(limit: limit))
        select.bind(chat.id.primaryKey, at: 1)
        let shown = try Self.readOpenChat(select)
        guard shown.rows.count == min(limit, chat.messages) else {
            throw BenchmarkError("the raw peer read \(shown.rows.count) messages of chat \(chat.id.primaryKey), expected \(min(limit, chat.messages))")
        }
        let replies = shown.rows.filter { $0.replyText != nil }.count
        let reactions = shown.rows.reduce(0) { $0 + $1.reactions }
        if replies == 0 || reactions == 0 {
            throw BenchmarkError("the largest chat's latest \(limit) messages have \(replies) replies and \(reactions) reactions: "
                + "the case would not exercise reply quotes and reaction counts")
        }

        /// The request the browser's message pane makes for a chat, for its first screen.
        func request(tuned: Bool) -> GraphStore.FetchRequest {
            var request = GraphStore.FetchRequest(
                entityName: "Message", predicate: .comparison(.init(.key("chat"), .equal, .constant(.objectID(chat.id)))),
                sortDescriptors: [.init("sentAt", ascending: false), .init("SELF", ascending: false)])
            request.fetchLimit = limit
            if tuned {
                request.relationshipKeyPathsForPrefetching = ["sender", "replyTo.sender"]
                request.prefetchStrategy = .joined
                // What the pane draws (`MessageRow`). Reactions are only counted: their sizes come with the rows
                // (`countsToFetch`), and `count(forKey: "reactions")` reads no reaction.
                request.propertiesToFetch = ["text", "sentAt", "sender", "replyTo", "sender.name", "replyTo.text", "replyTo.sender",
                                             "replyTo.sender.name"]
                request.countsToFetch = ["reactions"]
            }
            return request
        }
        func faultlineVariant(_ name: String, tuned: Bool) -> BenchmarkVariant {
            BenchmarkVariant(name: name) { stopwatch in
                coordinator.rowCache.removeAll()
                let context = ObjectContext(coordinator: coordinator, name: "open-chat")
                let before = coordinator.events.counters.total
                var count = 0
                let (checksum, sql) = try SQLRecorder.recording(coordinator, if: stopwatch.recordsSQL) {
                    try stopwatch.time { () throws -> Int64 in
                        let messages = try context.fetch(request(tuned: tuned))
                        var hash = FNV1a()
                        for message in messages { try MessageRow(message).mix(into: &hash) }
                        count = messages.count
                        hash.mix(Int64(count))
                        return hash.value
                    }
                }
                guard count == shown.rows.count else { throw BenchmarkError("read \(count) messages, expected \(shown.rows.count)") }
                return RunOutcome(checksum: checksum, statements: coordinator.events.counters.total.difference(since: before).statements, sql: sql)
            }
        }

        let reader = try store.grdb()
        let key = chat.id.primaryKey
        let openChatSQL = names.openChatSQL(limit: limit)
        let grdbChecks = [try reader.read { db in try GRDBChatReader.openChat(db, chat: key, limit: limit) },
                          try reader.readHandWritten { db in try GRDBChatSQL.openChat(db, sql: openChatSQL, chat: key) }]
        guard grdbChecks.allSatisfy({ $0.rows == shown.rows.count }) else {
            throw BenchmarkError("the GRDB reads gave \(grdbChecks.map(\.rows)) messages, expected \(shown.rows.count)")
        }
        let grdb = reader.handWrittenVariant { db in try GRDBChatSQL.openChat(db, sql: openChatSQL, chat: key).checksum }
        let queryInterface = reader.queryInterfaceVariant { db in
            try GRDBChatReader.openChat(db, chat: key, limit: limit).checksum
        }

        let raw = BenchmarkVariant(name: VariantName.raw) { stopwatch in
            let ((checksum, count), sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { try select.fingerprintRows { MessageRow(select).mix(into: &$0) } }
            }
            guard count == shown.rows.count else { throw BenchmarkError("read \(count) messages, expected \(shown.rows.count)") }
            return RunOutcome(checksum: checksum, statements: 1, sql: sql)
        }

        let faultline = faultlineVariant(VariantName.faultline, tuned: true)
        let defaults = faultlineVariant(VariantName.defaults, tuned: false)
        return PreparedCase(
            name: BenchmarkCaseName.openChat.rawValue,
            goals: [.ratio(faultline.name, over: grdb.name, atMost: 1.1), .ratio(faultline.name, over: raw.name, atMost: 1.3),
                    .statementsAtMost(faultline.name, than: grdb.name)],
            variants: [faultline, defaults, grdb, queryInterface, raw],
            runs: quick ? 5 : 21,
            expectedChecksum: shown.checksum,
            note: "chat \(chat.id.primaryKey) (\(chat.messages) messages); its latest \(shown.rows.count): \(replies) replies, "
                + "\(reactions) reactions")
    }

    /// The chat with the most messages (the lowest key among equals), found untimed with one `GROUP BY`.
    private func largestChat(_ store: ChatListStore, names: MessageColumns) throws -> (id: ObjectID, messages: Int) {
        let select = try store.raw.prepare(
            "SELECT c.Z_ENT, c.Z_PK, counts.n FROM (SELECT \(names.chat) AS chat, COUNT(*) AS n FROM \(names.messageTable) "
                + "GROUP BY \(names.chat) ORDER BY n DESC, \(names.chat) LIMIT 1) counts JOIN \(names.chatTable) c ON c.Z_PK = counts.chat")
        guard try select.step() else { throw BenchmarkError("the chat store has no messages") }
        return (ObjectID(entityNumber: Int(select.int64(0)), primaryKey: select.int64(1)), Int(select.int64(2)))
    }

    /// Every row of the raw open-chat statement, read once at preparation, and their checksum: the one every
    /// variant's runs must give.
    private static func readOpenChat(_ select: RawStatement) throws -> (rows: [MessageRow], checksum: Int64) {
        var rows: [MessageRow] = []
        var hash = FNV1a()
        select.reset()
        while try select.step() {
            let row = MessageRow(select)
            row.mix(into: &hash)
            rows.append(row)
        }
        select.reset()
        hash.mix(Int64(rows.count))
        return (rows, hash.value)
    }

    // MARK: materialize-messages

    /// The first 100,000 messages by primary key (10,000 with `--quick`), every attribute and to-one key loaded and
    /// read. Each variant resets the process's peak memory before its timed region and reports it.
    ///
    /// - `faultline`: a fetch that returns filled objects (`returnsObjectsAsFaults` off), read through the typed
    ///   properties; `faultline-defaults` returns faults filled from the row cache on first read.
    /// - `raw-sqlite`: the same 14 columns Faultline's fetch reads (`MessageColumns.storedColumns`), stepped into an
    ///   array of structs, then read.
    /// - `raw-sqlite-floor`: the least work with the same answer: the seven values the checksum needs, read into
    ///   locals as the statement steps, nothing kept.
    /// - `grdb`: the 14-column statement from GRDB's statement cache, into an array of structs decoded by column
    ///   index.
    /// - `grdb-query-interface`: `MessageRecord` (Codable) ordered and limited with the query interface.
    private func materializeMessages() throws -> PreparedCase {
        let store = try store()
        let coordinator = store.coordinator
        let names = try MessageColumns(model: coordinator.model)
        let count = materializedMessages
        let select = try store.raw.prepare(names.materializeSQL)
        select.bind(Int64(count), at: 1)

        func request(tuned: Bool) -> GraphStore.FetchRequest {
            var request = GraphStore.FetchRequest(entityName: "Message", sortDescriptors: [.init("SELF")])
            request.fetchLimit = count
            // Core Data's default hands back faults whose values wait in the row cache; the tuned fetch fills them.
            if tuned { request.returnsObjectsAsFaults = false }
            return request
        }
        func faultlineVariant(_ name: String, tuned: Bool) -> BenchmarkVariant {
            BenchmarkVariant(name: name) { stopwatch in
                coordinator.rowCache.removeAll()
                let context = ObjectContext(coordinator: coordinator, name: "materialize-messages")
                let before = coordinator.events.counters.total
                var read = 0
                let memory = MemoryBaseline()
                let (checksum, sql) = try SQLRecorder.recording(coordinator, if: stopwatch.recordsSQL) {
                    try stopwatch.time { () throws -> Int64 in
                        let messages = try context.fetch(request(tuned: tuned))
                        var hash = FNV1a()
                        for object in messages {
                            guard let message = object as? ChatFixture.Message else {
                                throw BenchmarkError("a message came back as \(type(of: object))")
                            }
                            MessageValues(message).mix(into: &hash)
                        }
                        read = messages.count
                        hash.mix(Int64(read))
                        return hash.value
                    }
                }
                guard read == count else { throw BenchmarkError("read \(read) messages, expected \(count)") }
                return memory.outcome(checksum: checksum, statements: coordinator.events.counters.total.difference(since: before).statements,
                                      sql: sql)
            }
        }

        let reader = try store.grdb()
        /// A GRDB variant that reads the messages into an array with `fetch` in `scope`, then hashes them as
        /// `MessageValues`.
        func grdbVariant<Message>(_ name: String, scope: GRDBReadVariant.Scope, _ fetch: @escaping (Database) throws -> [Message],
                                  values: @escaping (Message) -> MessageValues) throws -> BenchmarkVariant {
            func run<T>(_ work: (Database) throws -> T) throws -> T {
                switch scope {
                case .ownTransaction: try reader.read(work)
                case .asRaw: try reader.readHandWritten(work)
                }
            }
            // Counted after a first read: GRDB reads the schema on a connection's first use of a table.
            _ = try run(fetch)
            let (_, statements, sql) = try run { db in try GRDBPeer.recording(db) { try fetch(db) } }
            guard statements == 1 else { throw BenchmarkError("\(name) ran \(statements) statements, expected 1") }
            return BenchmarkVariant(name: name) { stopwatch in
                let memory = MemoryBaseline()
                var read = 0
                let checksum = try stopwatch.time { () throws -> Int64 in
                    let messages = try run(fetch)
                    var hash = FNV1a()
                    for message in messages { values(message).mix(into: &hash) }
                    read = messages.count
                    hash.mix(Int64(read))
                    return hash.value
                }
                guard read == count else { throw BenchmarkError("read \(read) messages, expected \(count)") }
                // One statement, checked untimed above (tracing would slow the timed run).
                return memory.outcome(checksum: checksum, statements: 1, sql: stopwatch.recordsSQL ? sql : nil)
            }
        }
        let storedSQL = try names.storedSQL(model: coordinator.model)
        let grdb = try grdbVariant(VariantName.grdb, scope: .asRaw, { db in try GRDBChatSQL.messages(db, sql: storedSQL, count: count) },
                                   values: MessageValues.init)
        let queryInterface = try grdbVariant(VariantName.grdbQueryInterface, scope: .ownTransaction,
                                             { db in try GRDBChatReader.messages(db, count: count) }, values: MessageValues.init)

        let stored = try store.raw.prepare(storedSQL)
        stored.bind(Int64(count), at: 1)
        let raw = BenchmarkVariant(name: VariantName.raw) { stopwatch in
            let memory = MemoryBaseline()
            var read = 0
            let (checksum, sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    var messages: [StoredMessage] = []
                    stored.reset()
                    while try stored.step() { messages.append(StoredMessage(stored)) }
                    stored.reset()
                    var hash = FNV1a()
                    for message in messages { MessageValues(message).mix(into: &hash) }
                    read = messages.count
                    hash.mix(Int64(read))
                    return hash.value
                }
            }
            guard read == count else { throw BenchmarkError("read \(read) messages, expected \(count)") }
            return memory.outcome(checksum: checksum, statements: 1, sql: sql)
        }
        let floor = BenchmarkVariant(name: VariantName.rawFloor) { stopwatch in
            let memory = MemoryBaseline()
            let ((checksum, read), sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { try select.fingerprintRows { MessageValues.mixRaw(select, into: &$0) } }
            }
            guard read == count else { throw BenchmarkError("read \(read) messages, expected \(count)") }
            return memory.outcome(checksum: checksum, statements: 1, sql: sql)
        }

        let faultline = faultlineVariant(VariantName.faultline, tuned: true)
        let defaults = faultlineVariant(VariantName.defaults, tuned: false)
        return PreparedCase(
            name: BenchmarkCaseName.materializeMessages.rawValue,
            goals: [.ratio(faultline.name, over: grdb.name, atMost: 1.3), .ratio(faultline.name, over: raw.name, atMost: 2),
                    .peakGrowthRatio(faultline.name, over: grdb.name, atMost: 2)],
            variants: [faultline, defaults, grdb, queryInterface, raw, floor],
            runs: quick ? 5 : nil,
            note: "\(count) messages")
    }
}

/// This process's resident memory before a timed region, with the peak restarted from it.
private struct MemoryBaseline {
    let resident: Int?

    init() {
        resident = ProcessMemory.settledResident()
        ProcessMemory.resetPeak()
    }

    func outcome(checksum: Int64, statements: Int, sql: [String]? = nil) -> RunOutcome {
        RunOutcome(checksum: checksum, statements: statements, peakResidentBytes: ProcessMemory.peak(), residentBefore: resident, sql: sql)
    }
}

// MARK: rows

extension FNV1a {
    /// Mixes a string preceded by its length in UTF-8 bytes, or -1 for a missing one.
    mutating func mix(text: String?) {
        guard let text else { return mix(-1 as Int64) }
        mix(Int64(text.utf8.count))
        mix(text.utf8)
    }

    /// Mixes a floating-point number's bits.
    mutating func mix(bits number: Double) {
        mix(Int64(bitPattern: number.bitPattern))
    }
}

/// One message of an open chat, as every variant reads it.
struct MessageRow {
    var text: String
    /// Seconds since 2001, as the store keeps them.
    var sentAt: Double
    var sender: String?
    var replyText: String?
    var replySender: String?
    var reactions: Int64

    init(text: String, sentAt: Double, sender: String?, replyText: String?, replySender: String?, reactions: Int64) {
        self.text = text
        self.sentAt = sentAt
        self.sender = sender
        self.replyText = replyText
        self.replySender = replySender
        self.reactions = reactions
    }

    /// Reads a message through the object graph, by the model's typed properties (as a Core Data user reads through
    /// `@NSManaged` ones): its attributes, its sender, the message it replies to and that message's sender (to-ones:
    /// faults unless prefetched), and the size of its `reactions` to-many (a relationship fault unless prefetched or
    /// counted).
    init(_ object: ManagedObject) throws {
        guard let message = object as? Message else { throw BenchmarkError("an open-chat row is a \(object.entityName), not a Message") }
        text = message.text
        sentAt = message.sentAt.timeIntervalSinceReferenceDate
        sender = message.sender?.name
        let reply = message.replyTo
        replyText = reply?.text
        replySender = reply?.sender?.name
        reactions = Int64(message.count(forKey: "reactions"))
    }

    /// Reads the raw open-chat statement's row: text, sentAt, sender name, reply text, reply sender name, reactions.
    init(_ statement: RawStatement) {
        text = statement.string(0)
        sentAt = statement.double(1)
        sender = statement.isNull(2) ? nil : statement.string(2)
        replyText = statement.isNull(3) ? nil : statement.string(3)
        replySender = statement.isNull(4) ? nil : statement.string(4)
        reactions = statement.int64(5)
    }

    func mix(into hash: inout FNV1a) {
        hash.mix(text: text)
        hash.mix(bits: sentAt)
        hash.mix(text: sender)
        hash.mix(text: replyText)
        hash.mix(text: replySender)
        hash.mix(reactions)
    }
}

/// Every stored value of a message `materialize-messages` reads: its key, attributes and the keys of its chat and
/// sender.
struct MessageValues {
    var id: Int64
    var text: String
    var sentAt: Double
    var kind: Int64
    var isEdited: Bool
    var chat: Int64?
    var sender: Int64?

    /// Through the typed properties of Faultline's `Message` class, and the keys of its to-ones without making
    /// objects for them (`objectID(forToOneNamed:)`).
    init(_ message: ChatFixture.Message) {
        id = message.objectID.primaryKey
        text = message.text
        sentAt = message.sentAt.timeIntervalSinceReferenceDate
        kind = Int64(message.kind.rawValue)
        isEdited = message.isEdited
        chat = message.objectID(forToOneNamed: "chat")?.primaryKey
        sender = message.objectID(forToOneNamed: "sender")?.primaryKey
    }

    /// From every stored column of the message's row.
    init(_ message: StoredMessage) {
        id = message.key
        text = message.text
        sentAt = message.sentAt
        kind = message.kind
        isEdited = message.isEdited
        chat = message.chat
        sender = message.sender
    }

    /// From a GRDB record.
    init(_ record: MessageRecord) {
        id = record.id
        text = record.text
        sentAt = record.sentAt.timeIntervalSinceReferenceDate
        kind = Int64(record.kind)
        isEdited = record.isEdited
        chat = record.chatID
        sender = record.senderID
    }

    func mix(into hash: inout FNV1a) {
        hash.mix(id)
        hash.mix(text: text)
        hash.mix(bits: sentAt)
        hash.mix(kind)
        hash.mix(isEdited ? 1 : 0)
        hash.mix(chat ?? -1)
        hash.mix(sender ?? -1)
    }

    /// Mixes the floor's row (Z_PK, text, sentAt, kind, isEdited, chat, sender: `MessageColumns.materializeSQL`) into
    /// `hash` as `mix(into:)` mixes the same values, without making them or the text's string: the least work.
    static func mixRaw(_ statement: RawStatement, into hash: inout FNV1a) {
        hash.mix(statement.int64(0))
        statement.mixText(1, into: &hash, nullAsEmpty: true)
        hash.mix(bits: statement.double(2))
        hash.mix(statement.int64(3))
        hash.mix(statement.int64(4) != 0 ? 1 : 0)
        hash.mix(statement.isNull(5) ? -1 : statement.int64(5))
        hash.mix(statement.isNull(6) ? -1 : statement.int64(6))
    }
}

/// Every stored column of a message's row, as plain values: what a Faultline fetch of messages reads, kept as a
/// hand-written data layer keeps rows.
struct StoredMessage {
    var key: Int64
    var entity: Int64
    var version: Int64
    var text: String
    /// Seconds since 2001, as the store keeps them.
    var sentAt: Double
    var kind: Int64
    var isEdited: Bool
    var chat: Int64?
    /// The chat's entity number (`Z_ENT`): `chat` may be a direct or a group chat.
    var chatEntity: Int64?
    var sender: Int64?
    var replyTo: Int64?
    var forwardedFrom: Int64?
    var lastMessageOf: Int64?
    var lastMessageOfEntity: Int64?

    init(key: Int64, entity: Int64, version: Int64, text: String, sentAt: Double, kind: Int64, isEdited: Bool, chat: Int64?,
         chatEntity: Int64?, sender: Int64?, replyTo: Int64?, forwardedFrom: Int64?, lastMessageOf: Int64?, lastMessageOfEntity: Int64?) {
        self.key = key
        self.entity = entity
        self.version = version
        self.text = text
        self.sentAt = sentAt
        self.kind = kind
        self.isEdited = isEdited
        self.chat = chat
        self.chatEntity = chatEntity
        self.sender = sender
        self.replyTo = replyTo
        self.forwardedFrom = forwardedFrom
        self.lastMessageOf = lastMessageOf
        self.lastMessageOfEntity = lastMessageOfEntity
    }

    /// The current row of a statement selecting `MessageColumns.storedColumns`.
    init(_ statement: RawStatement) {
        func optional(_ column: Int32) -> Int64? { statement.isNull(column) ? nil : statement.int64(column) }
        self.init(key: statement.int64(0), entity: statement.int64(1), version: statement.int64(2), text: statement.string(3),
                  sentAt: statement.double(4), kind: statement.int64(5), isEdited: statement.int64(6) != 0, chat: optional(7),
                  chatEntity: optional(8), sender: optional(9), replyTo: optional(10), forwardedFrom: optional(11),
                  lastMessageOf: optional(12), lastMessageOfEntity: optional(13))
    }
}

/// The SQL names the two cases' raw peers use, from the layout Faultline gives the chat model.
struct MessageColumns {
    let chatTable: String
    let messageTable: String
    let userTable: String
    let reactionTable: String
    let text: String
    let sentAt: String
    let kind: String
    let isEdited: String
    let chat: String
    let sender: String
    let replyTo: String
    let name: String
    let reactionMessage: String

    init(model: ObjectModel) throws {
        let names = SchemaNames(model)
        chatTable = try names.table("Chat")
        messageTable = try names.table("Message")
        userTable = try names.table("User")
        reactionTable = try names.table("Reaction")
        text = try names.column("text", of: "Message")
        sentAt = try names.column("sentAt", of: "Message")
        kind = try names.column("kind", of: "Message")
        isEdited = try names.column("isEdited", of: "Message")
        chat = try names.foreignKey("chat", of: "Message").column
        sender = try names.foreignKey("sender", of: "Message").column
        replyTo = try names.foreignKey("replyTo", of: "Message").column
        name = try names.column("name", of: "User")
        reactionMessage = try names.foreignKey("message", of: "Reaction").column
    }

    /// A chat's latest messages (the chat's key bound as ?1), hand-written as one flat statement: SQLite walks the
    /// (chat, sentAt) index backwards, joins each message to its sender, the message it replies to and that one's
    /// sender, counts its reactions, and stops at the limit, with nothing to sort. (Choosing the window first in a
    /// subquery sorts its rows again after the joins: slower, measured, while that index serves the order.)
    func openChatSQL(limit: Int) -> String {
        "SELECT m.\(text), m.\(sentAt), u.\(name), r.\(text), ru.\(name), "
            + "(SELECT COUNT(*) FROM \(reactionTable) x WHERE x.\(reactionMessage) = m.Z_PK) "
            + "FROM \(messageTable) m "
            + "LEFT JOIN \(userTable) u ON u.Z_PK = m.\(sender) "
            + "LEFT JOIN \(messageTable) r ON r.Z_PK = m.\(replyTo) "
            + "LEFT JOIN \(userTable) ru ON ru.Z_PK = r.\(sender) "
            + "WHERE m.\(chat) = ?1 ORDER BY m.\(sentAt) DESC, m.Z_PK DESC LIMIT \(limit)"
    }

    /// Every column of the message table, in `StoredMessage`'s order; throws if the table has a column this list
    /// lacks, so that the peers never read less than a Faultline fetch reads.
    func storedColumns(model: ObjectModel) throws -> [String] {
        let names = SchemaNames(model)
        let chatKey = try names.foreignKey("chat", of: "Message")
        let lastMessageOf = try names.foreignKey("lastMessageOf", of: "Message")
        guard let chatEntity = chatKey.entityColumn, let lastMessageOfEntity = lastMessageOf.entityColumn else {
            throw BenchmarkError("the message table keeps no entity column for its chat or lastMessageOf keys")
        }
        let columns = ["Z_PK", "Z_ENT", "Z_OPT", text, sentAt, kind, isEdited, chat, chatEntity, sender, replyTo,
                       try names.foreignKey("forwardedFrom", of: "Message").column, lastMessageOf.column, lastMessageOfEntity]
        guard let table = names.schema.table(for: "Message"), Set(table.columns.map(\.name)) == Set(columns),
              table.columns.count == columns.count else {
            throw BenchmarkError("the message table's columns are not the \(columns.count) the peers read: \(columns)")
        }
        return columns
    }

    /// The first messages by primary key (their number bound as ?1), every stored column.
    func storedSQL(model: ObjectModel) throws -> String {
        "SELECT \(try storedColumns(model: model).joined(separator: ", ")) FROM \(messageTable) ORDER BY Z_PK LIMIT ?1"
    }

    /// The first messages by primary key (their number bound as ?1), the values `MessageValues` holds.
    var materializeSQL: String {
        "SELECT Z_PK, \(text), \(sentAt), \(kind), \(isEdited), \(chat), \(sender) FROM \(messageTable) ORDER BY Z_PK LIMIT ?1"
    }
}

