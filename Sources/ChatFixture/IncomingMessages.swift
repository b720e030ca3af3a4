import Foundation
import GraphStore

/// A seeded stream of incoming chat messages: each `deliver(in:)` inserts one message from a member of a chosen chat,
/// makes it the chat's last message, and saves.
///
/// ```swift
/// var incoming = IncomingMessages(seed: 7)
/// let delivery = try incoming.deliver(in: context)   // saved: delivery.message is a permanent ID
/// ```
///
/// **Which chat.** The chats are ranked once, busiest first (`messagesCount`, then key), and the chat of rank r
/// (from 1) is drawn with weight 1 / r^1.2, as in a messenger where a few chats carry most of the traffic: in a
/// store of 300 chats the busiest gets about a quarter of the messages and the ten busiest about 60%.
///
/// **Who and what.** The sender is drawn from the chat's members other than "me" (user 1 in a generated store;
/// "me" only when nobody else is a member). The text is a line of the message corpus (`Sources/ChatFixture/Corpus`), in one
/// language per chat; a few built-in lines stand in when the corpus cannot be read.
///
/// **When.** `sentAt` is the time of delivery, moved forward (by a fixed offset) only when the store's newest message
/// is later than the clock, and always at least a millisecond after the previous delivery and after the chat's
/// current last message as read for this delivery: each delivered message is the newest of its chat, so the chat's
/// `lastMessage` never goes back in time and the chat moves to the top of a list sorted by last-message time. Other
/// writers (another `simulate`, the browser's `--live` writer) do the same on the same clock: a store whose messages
/// are all in the past gets no offset, so two writers' messages are dated in the order of the wall clock, and the
/// chat's row is version-checked at the save, so a chat another writer changed meanwhile is read again.
///
/// **What it costs.** The same six statements every time, whatever the chat's size or what the row cache holds:
/// two reads (the chat's row with its last message's, in one joined fetch; the chat's members' user keys) and the
/// save's four writes (`Z_PRIMARYKEY` for the new key, the message's `INSERT`, the chat's version-checked `UPDATE`
/// of `lastMessage` and `lastMessageAt`, and the previous last message's `UPDATE` clearing `lastMessageOf`); the
/// first delivery adds two reads for the ranking and the newest time. `messagesCount` is kept by the store's trigger.
///
/// For the same seed and the same store, the chats, senders, texts and new keys come out the same; only `sentAt`
/// follows the clock. The context should be one kept for deliveries: `deliver` saves all its pending changes, and
/// rolls them all back when the save fails. When another writer changes the chosen chat between the reads and the
/// save (an optimistic locking conflict: nothing written), the delivery is drawn and tried again, up to eight times
/// in all, before the conflict is thrown.
public struct IncomingMessages: Sendable {
    /// The chats, busiest first, and their cumulative weights; nil until the first delivery reads them.
    private var ranking: Ranking?
    private var random: SeededRandom
    /// The latest `sentAt` handed out, or the store's newest message time before the first delivery.
    private var latest: Date?
    /// Added to the clock so that delivered messages come after everything in the store.
    private var offset: TimeInterval = 0

    private struct Ranking: Sendable {
        let chats: [ObjectID]
        let cumulative: [Double]
    }

    /// How steeply traffic falls from the busiest chat to the quietest: rank r gets weight 1 / r^skew.
    static let skew = 1.2
    /// The user a generated store makes "me": incoming messages come from others.
    static let meKey: Int64 = 1

    public init(seed: UInt64) {
        // Mixed so that seed n here and the fixture generator's seed n draw different streams.
        random = SeededRandom(seed: seed ^ 0x1CC0_311C_0000_0000)
    }

    /// Inserts one new message from a member of a chosen chat into that chat, updating what the chat list shows
    /// (the chat's `lastMessage` and `lastMessageAt`), and saves `context`. Returns what was saved.
    public mutating func deliver(in context: ObjectContext) throws(ContextError) -> Delivery {
        var attempts = 1
        while true {
            do {
                return try deliverOnce(in: context)
            } catch .optimisticLockingConflict where attempts < Self.attempts {
                // Another writer changed the chat between the read and the save (nothing was written, and the
                // context was rolled back): draw again, on rows read again.
                attempts += 1
            }
        }
    }

    /// Tries before an optimistic locking conflict is passed on.
    static let attempts = 8

    private mutating func deliverOnce(in context: ObjectContext) throws(ContextError) -> Delivery {
        var ranking: Ranking
        if let ready = self.ranking {
            ranking = ready
        } else {
            ranking = try prepare(in: context)
        }
        var chatID = ranking.chats[random.weightedIndex(ranking.cumulative)]
        var chat = try Self.chatWithLastMessage(chatID, in: context)
        if chat == nil {
            // The chat was deleted since the ranking was read: read it again, once.
            ranking = try prepare(in: context)
            chatID = ranking.chats[random.weightedIndex(ranking.cumulative)]
            chat = try Self.chatWithLastMessage(chatID, in: context)
        }
        guard let chat else { throw .objectNotFound(uri: context.uri(for: chatID)) }

        let senders = try Self.senderKeys(of: chatID, in: context)
        // The key's magnitude: a store's Z_PK may be negative. `texts` is never empty, nor any list in it (the corpus
        // refuses empty files, and the fallback has one list of six), so the index and `pick` stay in range.
        let texts = Self.texts[Int(chatID.primaryKey.magnitude % UInt64(Self.texts.count))]
        let text = random.pick(texts)
        let senderKey = senders.isEmpty ? nil : senders[random.below(senders.count)]
        // After the chat's last message as stored now, whoever wrote it: the chat's lastMessage only moves forward.
        let current: Date? = if case .date(let date) = chat.attributeValue(forKey: "lastMessageAt") { date } else { nil }
        let sentAt = nextSentAt(after: current)

        let message = context.insert("Message")
        message.setAttributeValue(.string(text), forKey: "text")
        message.setAttributeValue(.date(sentAt), forKey: "sentAt")
        message.setObject(chat, forKey: "chat")
        if let senderKey, let user = context.model.entity(named: "User") {
            message.setObject(context.object(with: ObjectID(entityNumber: user.number, primaryKey: senderKey)), forKey: "sender")
        }
        chat.setObject(message, forKey: "lastMessage")
        chat.setAttributeValue(.date(sentAt), forKey: "lastMessageAt")
        do {
            try context.save()
        } catch {
            context.rollback()
            throw error
        }
        latest = sentAt
        return Delivery(message: message.objectID, chat: chatID, text: text, sentAt: sentAt)
    }

    // MARK: reading

    /// Ranks the chats and, the first time, reads the newest message time: two statements on the first delivery,
    /// one more whenever a chosen chat turns out to have been deleted.
    private mutating func prepare(in context: ObjectContext) throws(ContextError) -> Ranking {
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("messagesCount", ascending: false), .init("SELF")])
        request.includesPendingChanges = false
        let chats = try context.fetchObjectIDs(request)
        guard !chats.isEmpty else { throw .invalidFetch("the store has no chats to deliver messages to") }
        var cumulative: [Double] = []
        cumulative.reserveCapacity(chats.count)
        var total = 0.0
        for rank in 1...chats.count {
            total += 1 / pow(Double(rank), Self.skew)
            cumulative.append(total)
        }
        let ranking = Ranking(chats: chats, cumulative: cumulative)
        self.ranking = ranking

        if latest == nil {
            var newest = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt", ascending: false)])
            newest.fetchLimit = 1
            newest.propertiesToFetch = ["sentAt"]
            let row = try context.fetchDictionaries(newest).first
            if case .date(let date)? = row?["sentAt"] {
                latest = date
                // Only a store dated ahead of the clock moves the clock: a message saved a moment ago (by another
                // writer still running) is behind it, and nudging past it here would date this writer's messages
                // ahead of the other's for good. `nextSentAt` keeps each message after `latest` anyway.
                offset = max(0, date.timeIntervalSinceNow)
            } else {
                latest = .distantPast
            }
        }
        return ranking
    }

    /// The chat with its row and its last message's row read in one statement (both go to the row cache, so setting
    /// the chat's `lastMessage` and clearing the previous message's `lastMessageOf` read nothing more, and the save
    /// checks the versions just read); nil when the chat no longer exists.
    private static func chatWithLastMessage(_ id: ObjectID, in context: ObjectContext) throws(ContextError) -> ManagedObject? {
        // A fetch does not replace the values of objects the context already holds, so an unchanged chat still
        // alive in the context becomes a fault first, to take the row read now (no SQL).
        forget(id, in: context)
        var request = FetchRequest(entityName: "Chat", predicate: Predicate.evaluatedObject == id)
        request.relationshipKeyPathsForPrefetching = ["lastMessage"]
        request.prefetchStrategy = .joined
        request.includesPendingChanges = false
        guard let chat = try context.fetch(request).first else { return nil }
        // Likewise its last message, whose row the same statement read.
        if let last = chat.objectID(forToOneNamed: "lastMessage") { forget(last, in: context) }
        return chat
    }

    /// Turns a registered object without unsaved changes back into a fault.
    private static func forget(_ id: ObjectID, in context: ObjectContext) {
        if let object = context.registeredObject(for: id), !object.isFault, !object.hasChanges {
            context.refresh(object, mergeChanges: false)
        }
    }

    /// The keys of the chat's members' users, other than "me" unless "me" is the only one, in member order: one
    /// statement.
    private static func senderKeys(of chat: ObjectID, in context: ObjectContext) throws(ContextError) -> [Int64] {
        var request = FetchRequest(entityName: "ChatMember", predicate: Predicate.key("chat") == chat, sortDescriptors: [.init("SELF")])
        request.propertiesToFetch = ["user"]
        let users = try context.fetchDictionaries(request).compactMap { row -> Int64? in
            if case .integer(let key)? = row["user"] { return key }
            return nil
        }
        let others = users.filter { $0 != meKey }
        return others.isEmpty ? users : others
    }

    /// The clock (moved by `offset`), or a millisecond after the latest delivery or `chatLast` when the clock is not
    /// past them by that much.
    private func nextSentAt(after chatLast: Date?) -> Date {
        let now = Date(timeIntervalSinceNow: offset)
        let floor = [latest, chatLast].compactMap { $0 }.max()
        guard let floor, now.timeIntervalSince(floor) < 0.001 else { return now }
        return floor.addingTimeInterval(0.001)
    }

    // MARK: texts

    /// The corpus's message lines, one list per language; a few built-in lines when the corpus cannot be read.
    static let texts: [[String]] = {
        if let corpus = try? ChatCorpus.load() { return corpus.languages.map(\.messages) }
        return [["on my way", "see you soon", "did you get the photos?", "了解、ありがとう！", "ok 👍", "ㅋㅋㅋ"]]
    }()
}

/// One delivered message, as saved.
public struct Delivery: Sendable, Equatable {
    /// The new message's permanent ID.
    public let message: ObjectID
    /// The chat it was delivered to (a `DirectChat` or a `GroupChat`).
    public let chat: ObjectID
    public let text: String
    public let sentAt: Date

    public init(message: ObjectID, chat: ObjectID, text: String, sentAt: Date) {
        self.message = message
        self.chat = chat
        self.text = text
        self.sentAt = sentAt
    }
}
