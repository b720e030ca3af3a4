import ChatFixture
import Foundation
import GRDBSQLite
import GraphStore

/// `cascade-delete`: deleting one chat of 100,000 messages (10,000 with `--quick`) with everything that hangs off
/// it, and saving, four ways: Faultline's set-based delete, Core Data's object-by-object delete propagation
/// emulated with GraphStore's object API, and hand-written SQL through the C API twice: `raw-sqlite` collects the
/// chat's message keys once in a temporary table that every later statement reads, as Faultline collects the doomed
/// keys once, and `raw-sqlite-subqueries` repeats the subquery that finds them in each statement that needs them.
///
/// Preparation (untimed) generates a chat fixture whose busiest chat (the generator gives chat 1 a third of all
/// messages) has the wanted size, then adds through GraphStore what the generator leaves out of so large a group:
/// read receipts on its latest messages, replies to its messages from other chats, and the chat in two folders. So
/// the delete clears references from surviving rows (forwards and replies from other chats) and removes join-table
/// links (receipts, mentions, folders) besides deleting rows. Each run works on a fresh copy of that store, made
/// before it and removed after it, and the copy's fingerprint after the run is the run's checksum: every variant
/// must leave exactly the same rows.
final class CascadeDeleteCase {
    let folder: URL
    let quick: Bool
    let options: FixtureOptions
    /// Hears every coordinator the case opens.
    let opened: (PersistentStoreCoordinator) -> Void
    private var nextFileNumber = 0

    /// How far this process's resident memory may rise above what it was before the delete, in MB.
    static let peakGrowthLimit = 50.0
    /// The latest messages of the chat that get read receipts from every member but their sender.
    static let receiptMessages = 100
    /// Messages of other chats made replies to the chat's messages.
    static let foreignReplies = 100
    /// Folders the chat is put in.
    static let folders = 2

    init(folder: URL, quick: Bool, opened: @escaping (PersistentStoreCoordinator) -> Void = { _ in }) {
        self.folder = folder
        self.quick = quick
        self.opened = opened
        self.options = FixtureOptions(seed: 1, users: 1_000, chats: 300, messages: quick ? 30_000 : 300_000)
    }

    /// Messages in the chat that is deleted: the generator gives its first chat a third of all messages.
    var chatMessages: Int { options.messages / 3 }

    func prepare() throws -> PreparedCase {
        let model = try ChatModel.make()
        let names = try CascadeNames(model: model)
        let prepared = newStorePath("cascade-prepared")
        GraphCases.removeStore(at: prepared)
        let summary = try FixtureGenerator(options: options, corpus: try ChatCorpus.load()).generate(to: prepared)
        guard summary.messages == options.messages else {
            throw BenchmarkError("the chat fixture has \(summary.messages) messages, expected \(options.messages)")
        }
        let chatID = try Self.busiestChat(in: prepared, names: names, expectedMessages: chatMessages)
        try enrich(prepared, chat: chatID, names: names, model: model)
        let expected = try expectedDeletion(of: chatID, in: prepared, names: names, model: model)

        let faultline = BenchmarkVariant(name: "faultline") { [self] stopwatch in
            try onCopy(of: prepared, "faultline") { path in
                let (coordinator, context, chat) = try open(path, model: model, chat: chatID)
                let before = coordinator.events.counters.total
                let memory = MemoryMark()
                try stopwatch.time {
                    context.delete(chat)
                    try context.save()
                }
                let cost = coordinator.events.counters.total.difference(since: before)
                guard context.lastDeletion == expected else {
                    throw BenchmarkError("the save deleted \(String(describing: context.lastDeletion)), the preview promised \(expected)")
                }
                return memory.outcome(statements: cost.statements)
            }
        }
        let objectByObject = BenchmarkVariant(name: "object-by-object") { [self] stopwatch in
            try onCopy(of: prepared, "object-by-object") { path in
                let (coordinator, context, chat) = try open(path, model: model, chat: chatID)
                let before = coordinator.events.counters.total
                let memory = MemoryMark()
                let marked = try stopwatch.time { () throws -> Int in
                    let marked = Self.deleteObjectByObject(chat, in: context)
                    try context.save()
                    return marked.count
                }
                let cost = coordinator.events.counters.total.difference(since: before)
                guard marked == expected.deletedCount, context.lastDeletion == expected else {
                    throw BenchmarkError("marked \(marked) objects and the save deleted \(String(describing: context.lastDeletion)); "
                        + "expected \(expected.deletedCount) objects, \(expected)")
                }
                return memory.outcome(statements: cost.statements)
            }
        }
        // A hand-written data layer makes its temporary table once per connection and prepares the statements that
        // read it once, as the subqueries peer prepares its own: both happen before the timed region. Timed: filling
        // the table, the delete's statements, and emptying the table for the connection's next delete, each counted.
        let raw = BenchmarkVariant(name: VariantName.raw) { [self] stopwatch in
            try onCopy(of: prepared, "raw") { path in
                let connection = try RawConnection(path: path, readOnly: false)
                try connection.configureLikeAPool()
                try connection.execute(names.createDoomedMessages)
                let statements = try (names.tempTableDeleteStatements + [names.clearDoomedMessages]).map { try connection.prepare($0) }
                let memory = MemoryMark()
                try stopwatch.time {
                    try connection.execute("BEGIN IMMEDIATE")
                    for statement in statements {
                        if sqlite3_bind_parameter_count(statement.handle) > 0 { statement.bind(chatID.primaryKey, at: 1) }
                        try statement.run()
                        statement.reset()
                    }
                    try connection.execute("COMMIT")
                }
                return memory.outcome(statements: statements.count)
            }
        }
        let subqueries = BenchmarkVariant(name: "raw-sqlite-subqueries") { [self] stopwatch in
            try onCopy(of: prepared, "raw-subqueries") { path in
                let connection = try RawConnection(path: path, readOnly: false)
                try connection.configureLikeAPool()
                let statements = try names.subqueryDeleteStatements.map { try connection.prepare($0) }
                let memory = MemoryMark()
                try stopwatch.time {
                    try connection.execute("BEGIN IMMEDIATE")
                    for statement in statements {
                        statement.bind(chatID.primaryKey, at: 1)
                        try statement.run()
                        statement.reset()
                    }
                    try connection.execute("COMMIT")
                }
                return memory.outcome(statements: statements.count)
            }
        }
        return PreparedCase(
            name: BenchmarkCaseName.cascadeDelete.rawValue,
            goals: [
                .ratio(faultline.name, over: raw.name, atMost: 2),
                .fasterThan(faultline.name, than: objectByObject.name, factor: 10),
                .peakGrowth(faultline.name, underMegabytes: Self.peakGrowthLimit),
            ],
            variants: [faultline, raw, subqueries, objectByObject],
            runs: quick ? nil : 3,
            deletion: expected)
    }

    // MARK: the object-by-object delete

    /// Core Data's delete propagation, one object at a time: each object's row is read (firing its fault, as Core
    /// Data must to learn the version its `DELETE` checks and the to-ones it follows), every to-many relationship
    /// fault it has is fired (one query each, as Core Data does to find what to cascade to or nullify), the inverse
    /// to-manys of its Nullify destinations are loaded (to take it out of them), the destinations of its Cascade
    /// relationships are deleted the same way, and the object is marked deleted. Returns
    /// the objects marked, which stay alive (held by the context too) until the save.
    static func deleteObjectByObject(_ root: ManagedObject, in context: ObjectContext) -> [ManagedObject] {
        var marked: [ManagedObject] = []
        var pending = [root]
        var seen: Set<ObjectID> = [root.objectID]
        /// Inverse to-manys already loaded: Core Data removes from a loaded set in place, at no further cost.
        var loadedInverses = Set<InverseKey>()
        while let object = pending.popLast() {
            let entity = object.entity
            if let attribute = entity.attributes.first(where: \.isPersistent) {
                _ = object.attributeValue(forKey: attribute.name)
            }
            for relationship in entity.relationships where relationship.isPersistent {
                let destinations: [ManagedObject]
                if relationship.isToMany {
                    destinations = object.objects(forKey: relationship.name)
                } else {
                    destinations = object.object(forKey: relationship.name).map { [$0] } ?? []
                }
                if relationship.deleteRule == .nullify, let inverse = relationship.inverse,
                   destinations.first?.entity.relationship(named: inverse)?.isToMany == true {
                    // Nullify takes the object out of each destination's inverse to-many, which Core Data must load
                    // to change (once per destination: later reads find it loaded).
                    for destination in destinations where !seen.contains(destination.objectID)
                        && loadedInverses.insert(InverseKey(object: destination.objectID, relationship: inverse)).inserted {
                        _ = destination.objects(forKey: inverse)
                    }
                }
                guard relationship.deleteRule == .cascade else { continue }
                for destination in destinations where seen.insert(destination.objectID).inserted {
                    pending.append(destination)
                }
            }
            context.delete(object)
            marked.append(object)
        }
        return marked
    }

    private struct InverseKey: Hashable {
        let object: ObjectID
        let relationship: String
    }

    // MARK: preparation

    /// The chat with the most messages, which must have `expectedMessages`.
    private static func busiestChat(in path: String, names: CascadeNames, expectedMessages: Int) throws -> ObjectID {
        let connection = try RawConnection(path: path, readOnly: true)
        let select = try connection.prepare(
            "SELECT c.Z_PK, c.Z_ENT, COUNT(*) AS n FROM \(names.chatTable) c JOIN \(names.messageTable) m ON m.\(names.messageChat) = c.Z_PK "
                + "GROUP BY c.Z_PK ORDER BY n DESC LIMIT 1")
        guard try select.step() else { throw BenchmarkError("the chat fixture has no messages") }
        let id = ObjectID(entityNumber: Int(select.int64(1)), primaryKey: select.int64(0))
        let count = Int(select.int64(2))
        guard count == expectedMessages else {
            throw BenchmarkError("the busiest chat has \(count) messages, expected \(expectedMessages)")
        }
        return id
    }

    /// Adds through GraphStore what the generator does not give so large a group: read receipts on its latest
    /// messages (every member but the sender), replies to its messages from messages of other chats, and the chat
    /// in the first folders.
    private func enrich(_ path: String, chat chatID: ObjectID, names: CascadeNames, model: ObjectModel) throws {
        var latest: [(message: Int64, sender: Int64)] = []
        var members: [Int64] = []
        var strangers: [Int64] = []
        var targets: [Int64] = []
        var folders: [Int64] = []
        do {
            let connection = try RawConnection(path: path, readOnly: true)
            let chat = chatID.primaryKey
            let latestSelect = try connection.prepare(
                "SELECT Z_PK, ZSENDER FROM \(names.messageTable) WHERE \(names.messageChat) = ?1 ORDER BY Z_PK DESC LIMIT \(Self.receiptMessages)")
            latestSelect.bind(chat, at: 1)
            while try latestSelect.step() { latest.append((latestSelect.int64(0), latestSelect.int64(1))) }
            let memberSelect = try connection.prepare(
                "SELECT \(names.memberUser) FROM \(names.memberTable) WHERE \(names.memberChat) = ?1 ORDER BY Z_PK")
            memberSelect.bind(chat, at: 1)
            while try memberSelect.step() { members.append(memberSelect.int64(0)) }
            // Messages of other chats that reply to nothing yet, spread over the store.
            let strangerSelect = try connection.prepare(
                "SELECT Z_PK FROM \(names.messageTable) WHERE \(names.messageChat) IS NOT ?1 AND \(names.replyTo) IS NULL "
                    + "AND Z_PK % 97 = 0 ORDER BY Z_PK LIMIT \(Self.foreignReplies)")
            strangerSelect.bind(chat, at: 1)
            while try strangerSelect.step() { strangers.append(strangerSelect.int64(0)) }
            // What they reply to: the chat's messages at an even stride.
            let messageSelect = try connection.prepare("SELECT Z_PK FROM \(names.messageTable) WHERE \(names.messageChat) = ?1 ORDER BY Z_PK")
            messageSelect.bind(chat, at: 1)
            var all: [Int64] = []
            while try messageSelect.step() { all.append(messageSelect.int64(0)) }
            let stride = max(1, all.count / max(1, Self.foreignReplies))
            targets = Swift.stride(from: 0, to: all.count, by: stride).prefix(Self.foreignReplies).map { all[$0] }
            let folderSelect = try connection.prepare("SELECT Z_PK FROM \(names.folderTable) ORDER BY Z_PK LIMIT \(Self.folders)")
            while try folderSelect.step() { folders.append(folderSelect.int64(0)) }
        }
        guard latest.count == Self.receiptMessages, members.count > 2, strangers.count == Self.foreignReplies,
              targets.count == Self.foreignReplies, folders.count == Self.folders else {
            throw BenchmarkError("the chat fixture is too small to prepare the delete: \(latest.count) latest messages, "
                + "\(members.count) members, \(strangers.count) messages in other chats, \(folders.count) folders")
        }

        let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: ChatModel.classes)
        let context = ObjectContext(coordinator: coordinator, name: "cascade-prepare")
        guard let messageEntity = model.entity(named: "Message")?.number, let userEntity = model.entity(named: "User")?.number,
              let folderEntity = model.entity(named: "Folder")?.number else {
            throw BenchmarkError("the chat model has no Message, User or Folder entity")
        }
        func object(_ entity: Int, _ key: Int64) -> ManagedObject {
            context.object(with: ObjectID(entityNumber: entity, primaryKey: key))
        }
        for (message, sender) in latest {
            let read = object(messageEntity, message)
            for user in members where user != sender { read.add(object(userEntity, user), toKey: "readBy") }
        }
        for (reply, target) in zip(strangers, targets) {
            object(messageEntity, reply).setObject(object(messageEntity, target), forKey: "replyTo")
        }
        let chat = context.object(with: chatID)
        let already = Set(chat.objects(forKey: "folders").map(\.objectID.primaryKey))
        for key in folders where !already.contains(key) {
            object(folderEntity, key).add(chat, toKey: "chats")
        }
        try context.save()
    }

    /// The delete's plan as `deletionPlan(for:)` previews it, checked against counts taken with plain SQL.
    private func expectedDeletion(of chatID: ObjectID, in path: String, names: CascadeNames, model: ObjectModel) throws -> DeletionPlan {
        let plan: DeletionPlan
        do {
            let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: ChatModel.classes)
            let context = ObjectContext(coordinator: coordinator, name: "cascade-preview")
            plan = try context.deletionPlan(for: [try context.existingObject(with: chatID)])
        }
        let connection = try RawConnection(path: path, readOnly: true)
        var counted: [String: Int] = [:]
        for (entity, sql) in names.countStatements {
            let select = try connection.prepare(sql)
            select.bind(chatID.primaryKey, at: 1)
            guard try select.step() else { throw BenchmarkError("no count from \(sql)") }
            let count = Int(select.int64(0))
            if count > 0 { counted[entity, default: 0] += count }
        }
        guard !plan.isDenied, plan.deleted == counted else {
            throw BenchmarkError("deletionPlan(for:) would delete \(plan.deleted) (denied: \(plan.denied)); the store holds \(counted)")
        }
        guard counted["Message"] == chatMessages else {
            throw BenchmarkError("the chat to delete has \(counted["Message"] ?? 0) messages, expected \(chatMessages)")
        }
        return plan
    }

    // MARK: runs

    /// Opens a coordinator on `path` and, in a new context, the chat with its row read: an app deletes a chat it
    /// shows, and holds it loaded.
    private func open(_ path: String, model: ObjectModel, chat: ObjectID) throws -> (PersistentStoreCoordinator, ObjectContext, ManagedObject) {
        let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: ChatModel.classes)
        opened(coordinator)
        let context = ObjectContext(coordinator: coordinator, name: "cascade-delete")
        return (coordinator, context, try context.existingObject(with: chat))
    }

    /// Runs `work` on a fresh copy of the prepared store, then fingerprints the copy (every connection `work` opened
    /// is closed by then) and removes it. `work` returns its outcome less the checksum, which is the fingerprint.
    private func onCopy(of prepared: String, _ stem: String, _ work: (String) throws -> RunOutcome) throws -> RunOutcome {
        let path = newStorePath("cascade-\(stem)")
        defer { GraphCases.removeStore(at: path) }
        GraphCases.removeStore(at: path)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: prepared + suffix) {
            try FileManager.default.copyItem(atPath: prepared + suffix, toPath: path + suffix)
        }
        var outcome = try work(path)
        outcome.checksum = try StoreRows.fingerprint(path: path)
        return outcome
    }

    private func newStorePath(_ stem: String) -> String {
        nextFileNumber += 1
        return folder.appendingPathComponent("\(stem)-\(nextFileNumber).sqlite").path
    }
}

/// This process's resident memory before a timed region (after handing free pages back), with the peak started
/// afresh from it, so that the peak read afterwards tells how far the region's work raised it.
private struct MemoryMark {
    let resident: Int?

    init() {
        resident = ProcessMemory.settledResident()
        ProcessMemory.resetPeak()
    }

    /// The outcome of a run with this mark and the peak since; the checksum is filled in later.
    func outcome(statements: Int) -> RunOutcome {
        RunOutcome(checksum: 0, statements: statements, peakResidentBytes: ProcessMemory.peak(), residentBefore: resident)
    }
}

/// The chat model's SQL names, from the schema Faultline lays out, and the raw peers' statements.
struct CascadeNames {
    let chatTable: String
    let chatLastMessage: String
    let memberTable: String
    let memberChat: String
    let memberUser: String
    let messageTable: String
    let messageChat: String
    let replyTo: String
    let forwardedFrom: String
    let lastMessageOf: String
    let lastMessageOfEntity: String?
    let reactionTable: String
    let reactionMessage: String
    let attachmentTable: String
    let attachmentMessage: String
    let folderTable: String
    /// Join tables: (table, the column holding the message's or the chat's key).
    let readBy: (table: String, message: String)
    let mentions: (table: String, message: String)
    let chatFolders: (table: String, chat: String)

    init(model: ObjectModel) throws {
        let names = SchemaNames(model)
        chatTable = try names.table("Chat")
        chatLastMessage = try names.foreignKey("lastMessage", of: "Chat").column
        memberTable = try names.table("ChatMember")
        memberChat = try names.foreignKey("chat", of: "ChatMember").column
        memberUser = try names.foreignKey("user", of: "ChatMember").column
        messageTable = try names.table("Message")
        messageChat = try names.foreignKey("chat", of: "Message").column
        replyTo = try names.foreignKey("replyTo", of: "Message").column
        forwardedFrom = try names.foreignKey("forwardedFrom", of: "Message").column
        (lastMessageOf, lastMessageOfEntity) = try names.foreignKey("lastMessageOf", of: "Message")
        reactionTable = try names.table("Reaction")
        reactionMessage = try names.foreignKey("message", of: "Reaction").column
        attachmentTable = try names.table("Attachment")
        attachmentMessage = try names.foreignKey("message", of: "Attachment").column
        folderTable = try names.table("Folder")
        readBy = try names.joinTable("readBy", of: "Message")
        mentions = try names.joinTable("mentions", of: "Message")
        chatFolders = try names.joinTable("folders", of: "Chat")
    }

    /// The chat's messages as a subquery, for `IN`; the chat's key is bound as ?1.
    private var doomedMessages: String { "(SELECT Z_PK FROM \(messageTable) WHERE \(messageChat) = ?1)" }

    /// The temporary table in which `raw-sqlite` collects the keys of the chat's messages, for `IN`.
    private static let doomedMessagesTable = "temp.doomed_messages"

    /// Makes `doomedMessagesTable`; its rowid is the message key, so each `IN` is a lookup by rowid.
    var createDoomedMessages: String { "CREATE TEMP TABLE \(Self.doomedMessagesTable) (pk INTEGER PRIMARY KEY)" }

    /// Empties `doomedMessagesTable` once the delete is done, so the connection can delete another chat.
    var clearDoomedMessages: String { "DELETE FROM \(Self.doomedMessagesTable)" }

    /// The `raw-sqlite-subqueries` delete: `deleteStatements` with the subquery that finds the chat's messages
    /// repeated wherever they are needed (9 times), each statement with the chat's key bound as ?1.
    var subqueryDeleteStatements: [String] { deleteStatements(doomedMessages: doomedMessages) }

    /// The `raw-sqlite` delete, run once `createDoomedMessages` has made the table, before `clearDoomedMessages`: one INSERT…SELECT
    /// collects the chat's message keys in `doomedMessagesTable`, then `deleteStatements` read that table instead
    /// of finding the messages again. The chat's key is bound as ?1 where a statement still names the chat.
    var tempTableDeleteStatements: [String] {
        ["INSERT INTO \(Self.doomedMessagesTable) (pk) SELECT Z_PK FROM \(messageTable) WHERE \(messageChat) = ?1"]
            + deleteStatements(doomedMessages: Self.doomedMessagesTable)
    }

    /// The delete, hand-written from the model's rules, run in one transaction in this order, with `doomedMessages`
    /// the set of the chat's messages for `IN` (a subquery or a table) and the chat's key as ?1. Surviving rows that
    /// pointed at a deleted row have the key cleared and `Z_OPT` moved on (as any update of a row does); links in join
    /// tables go; then the rows, children before parents, so a subquery still finds the chat's messages. The
    /// derived-count triggers fire on the deletes as they do for Faultline.
    private func deleteStatements(doomedMessages: String) -> [String] {
        // Each CASE reads the row as it was before the UPDATE, so the entity column is cleared with its key.
        let lastMessageOfClears = (lastMessageOfEntity.map { [$0] } ?? []) + [lastMessageOf]
        return [
            // From messages of other chats: Message.forwardedFrom (no inverse), Message.replyTo (inverse of the
            // deleted messages' `replies`, Nullify) and the one-to-one Message.lastMessageOf, in one statement, so
            // that a message losing two of them moves one version on, as a save writes a changed row once.
            "UPDATE \(messageTable) SET Z_OPT = Z_OPT + 1, "
                + "\(forwardedFrom) = CASE WHEN \(forwardedFrom) IN \(doomedMessages) THEN NULL ELSE \(forwardedFrom) END, "
                + "\(replyTo) = CASE WHEN \(replyTo) IN \(doomedMessages) THEN NULL ELSE \(replyTo) END, "
                + lastMessageOfClears.map { "\($0) = CASE WHEN \(lastMessageOf) = ?1 THEN NULL ELSE \($0) END" }.joined(separator: ", ")
                + " WHERE (\(forwardedFrom) IN \(doomedMessages) OR \(replyTo) IN \(doomedMessages) OR \(lastMessageOf) = ?1)"
                + " AND \(messageChat) IS NOT ?1",
            // The one-to-one Chat.lastMessage ↔ Message.lastMessageOf, from the chats' side, on surviving rows.
            "UPDATE \(chatTable) SET Z_OPT = Z_OPT + 1, \(chatLastMessage) = NULL WHERE \(chatLastMessage) IN \(doomedMessages) AND Z_PK <> ?1",
            // Many-to-many links: receipts, mentions, folders.
            "DELETE FROM \(readBy.table) WHERE \(readBy.message) IN \(doomedMessages)",
            "DELETE FROM \(mentions.table) WHERE \(mentions.message) IN \(doomedMessages)",
            "DELETE FROM \(chatFolders.table) WHERE \(chatFolders.chat) = ?1",
            // The rows: Cascade from the chat to members and messages, from messages to reactions and attachments.
            "DELETE FROM \(reactionTable) WHERE \(reactionMessage) IN \(doomedMessages)",
            "DELETE FROM \(attachmentTable) WHERE \(attachmentMessage) IN \(doomedMessages)",
            "DELETE FROM \(messageTable) WHERE \(messageChat) = ?1",
            "DELETE FROM \(memberTable) WHERE \(memberChat) = ?1",
            "DELETE FROM \(chatTable) WHERE Z_PK = ?1",
        ]
    }

    /// Per entity, a count of the rows the delete removes (the chat's key bound as ?1), by plain SQL.
    var countStatements: [(String, String)] {
        [
            ("GroupChat", "SELECT COUNT(*) FROM \(chatTable) c WHERE c.Z_PK = ?1 AND c.Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'GroupChat')"),
            ("DirectChat", "SELECT COUNT(*) FROM \(chatTable) c WHERE c.Z_PK = ?1 AND c.Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'DirectChat')"),
            ("ChatMember", "SELECT COUNT(*) FROM \(memberTable) WHERE \(memberChat) = ?1"),
            ("Message", "SELECT COUNT(*) FROM \(messageTable) WHERE \(messageChat) = ?1"),
            ("Reaction", "SELECT COUNT(*) FROM \(reactionTable) WHERE \(reactionMessage) IN \(doomedMessages)"),
            ("Attachment", "SELECT COUNT(*) FROM \(attachmentTable) WHERE \(attachmentMessage) IN \(doomedMessages)"),
        ]
    }
}
