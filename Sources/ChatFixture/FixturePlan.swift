import Foundation
import GraphStore

/// The fixture's content, decided from the seed as it is written: users, chats with their members, each chat's
/// messages (with replies, reactions, stickers, attachments, mentions and read receipts), and folders.
///
/// Only small per-user and per-chat tallies are kept; messages are written chat by chat and forgotten.
struct FixturePlan {
    let options: FixtureOptions
    let corpus: ChatCorpus
    let now: Date
    var random: SeededRandom
    var summary = FixtureSummary()

    // Entity numbers, for the IDs objects will get.
    private let userEntity: Int
    private let profileEntity: Int
    private let directEntity: Int
    private let groupEntity: Int
    private let messageEntity: Int

    /// Per user: language index into `corpus.languages`, display name.
    private var userLanguage: [Int] = []
    private var userName: [String] = []
    /// Per chat: whether a group, its members (user indexes, "me" first), creation time, and message count.
    private var chatIsGroup: [Bool] = []
    private var chatMembers: [[Int]] = []
    private var chatCreated: [Date] = []
    private var chatMessageCount: [Int] = []
    /// Index of each chat's first message in the whole store.
    private var chatFirstMessage: [Int] = []

    /// - Parameter model: the chat model the store was made with, whose entity numbers the plan's IDs carry.
    init(options: FixtureOptions, corpus: ChatCorpus, now: Date, model: ObjectModel) throws(FixtureError) {
        self.options = options
        self.corpus = corpus
        self.now = now
        self.random = SeededRandom(seed: options.seed)
        func number(_ name: String) throws(FixtureError) -> Int {
            guard let entity = model.entity(named: name) else { throw .store("the chat model has no entity '\(name)'") }
            return entity.number
        }
        userEntity = try number("User")
        profileEntity = try number("UserProfile")
        directEntity = try number("DirectChat")
        groupEntity = try number("GroupChat")
        messageEntity = try number("Message")
    }

    private func userID(_ index: Int) -> ObjectID { ObjectID(entityNumber: userEntity, primaryKey: Int64(index + 1)) }
    private func chatID(_ index: Int) -> ObjectID {
        ObjectID(entityNumber: chatIsGroup[index] ? groupEntity : directEntity, primaryKey: Int64(index + 1))
    }
    private func messageID(_ index: Int) -> ObjectID { ObjectID(entityNumber: messageEntity, primaryKey: Int64(index + 1)) }

    private func language(ofUser index: Int) -> ChatCorpus.Language { corpus.languages[userLanguage[index]] }

    private func days(_ count: Double) -> TimeInterval { count * 86_400 }

    // MARK: users

    mutating func writeUsers(_ writer: inout BatchWriter, progress: (FixtureProgress) -> Void) throws {
        // Languages weighted toward the messenger's home markets.
        let weights = cumulative([25, 15, 15, 15, 15, 15])
        var stems: [String: Int] = [:]
        var profilesSoFar = 0
        for index in 0..<options.users {
            let languageIndex = random.weightedIndex(weights)
            let language = corpus.languages[languageIndex]
            let given = random.pick(language.givenNames)
            let family = random.pick(language.familyNames)
            let name = language.familyNameFirst
                ? (language.code == "ja" ? "\(family) \(given)" : "\(family)\(given)")
                : "\(given) \(family)"
            userLanguage.append(languageIndex)
            userName.append(name)

            let user = writer.insert(User.self, as: userID(index))
            user.name = name
            if index == 0 {
                user.handle = "me"
            } else {
                let stem = random.pick(corpus.handles)
                let uses = stems[stem, default: 0]
                stems[stem] = uses + 1
                user.handle = uses == 0 ? stem : "\(stem)\(uses + 1)"
            }
            if random.chance(0.6) { user.statusMessage = random.pick(language.statuses) }
            user.createdAt = now.addingTimeInterval(-days(30 + random.unit() * 1_500))
            if index == 0 || random.chance(0.7) {
                let profile = writer.insert(UserProfile.self, as: ObjectID(entityNumber: profileEntity, primaryKey: Int64(profilesSoFar + 1)))
                profilesSoFar += 1
                if random.chance(0.6) { profile.bio = random.pick(language.bios) }
                if random.chance(0.5) {
                    // Born between 1965 and 2008.
                    profile.birthday = Date(timeIntervalSinceReferenceDate: -days(36 * 365.25) + random.unit() * days(43 * 365.25))
                }
                if random.chance(0.15) { profile.avatar = avatarBytes() }
                user.profile = profile
            }
            summary.users += 1
            try writer.checkpoint()
            if index % 1_000 == 999 { progress(FixtureProgress(phase: "users", done: index + 1, total: options.users)) }
        }
        summary.profiles = profilesSoFar
        try writer.flush()

        // Friendships, a self-inverse many-to-many: "me" knows a quarter of everyone (up to 200), others a few each.
        let myFriends = min(options.users - 1, max(1, min(200, options.users / 4)))
        var chosen = Set<Int>()
        while chosen.count < myFriends { chosen.insert(1 + random.below(options.users - 1)) }
        for friend in chosen.sorted() {
            writer.object(userID(0), as: User.self).add(writer.object(userID(friend), as: User.self), toKey: "friends")
            summary.friendships += 1
        }
        try writer.flush()
        if options.users > 2 {
            for index in 1..<options.users {
                for _ in 0..<random.int(in: 0...4) {
                    let other = 1 + random.below(options.users - 1)
                    guard other != index else { continue }
                    writer.object(userID(index), as: User.self).add(writer.object(userID(other), as: User.self), toKey: "friends")
                    summary.friendships += 1
                }
                if index % 2_000 == 0 { try writer.flush() }
            }
        }
        try writer.flush()
        progress(FixtureProgress(phase: "users", done: options.users, total: options.users))
    }

    /// A small deterministic picture-like blob.
    private mutating func avatarBytes() -> Data {
        var bytes = [UInt8](repeating: 0, count: random.int(in: 64...512))
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        return Data(bytes)
    }

    // MARK: chats and members

    mutating func writeChats(_ writer: inout BatchWriter, progress: (FixtureProgress) -> Void) throws {
        let others = options.users - 1
        // Chat 0 is the busiest: a group "me" owns. Then about 55% direct chats (one per other user at most).
        let directTarget = min(others, Int(Double(options.chats - 1) * 0.55))
        var directPartners = Array(1...others)
        shuffle(&directPartners)
        var rest = Array(repeating: false, count: directTarget) + Array(repeating: true, count: options.chats - 1 - directTarget)
        shuffle(&rest)
        chatIsGroup = [true] + rest
        chatMessageCount = messageCounts()
        var nextDirect = 0
        var memberCount = 0
        for index in 0..<options.chats {
            let created = now.addingTimeInterval(-days(7 + random.unit() * 720))
            chatCreated.append(created)
            var members: [Int]
            let chat: Chat
            if chatIsGroup[index] {
                let size = groupSize(busiest: index == 0)
                var set = Set([0])
                while set.count < size { set.insert(random.below(options.users)) }
                members = [0] + set.subtracting([0]).sorted().shuffledDeterministically(&random)
                // "me" owns the busiest group and about a fifth of the others.
                let owner = index == 0 || random.chance(0.2) ? 0 : members[1 + random.below(members.count - 1)]
                let group = writer.insert(GroupChat.self, as: ObjectID(entityNumber: groupEntity, primaryKey: Int64(index + 1)))
                group.title = random.pick(language(ofUser: owner).topics)
                if random.chance(0.4) { group.topic = random.pick(language(ofUser: owner).bios) }
                group.owner = writer.object(userID(owner), as: User.self)
                chat = group
                summary.groups += 1
                chatMembers.append(members)
                try addMembers(members, owner: owner, to: group, created: created, chatIndex: index, writer: &writer)
            } else {
                let partner = directPartners[nextDirect % directPartners.count]
                nextDirect += 1
                members = [0, partner]
                let direct = writer.insert(DirectChat.self, as: ObjectID(entityNumber: directEntity, primaryKey: Int64(index + 1)))
                direct.title = userName[partner]
                chat = direct
                chatMembers.append(members)
                try addMembers(members, owner: nil, to: direct, created: created, chatIndex: index, writer: &writer)
            }
            chat.createdAt = created
            chat.isPinned = index == 0 || random.chance(0.03)
            chat.isMuted = index != 0 && random.chance(0.12)
            memberCount += members.count
            summary.chats += 1
            try writer.checkpoint()
            if index % 50 == 49 { progress(FixtureProgress(phase: "chats", done: index + 1, total: options.chats)) }
        }
        summary.members = memberCount
        try writer.flush()
        var first = 0
        for count in chatMessageCount {
            chatFirstMessage.append(first)
            first += count
        }
        progress(FixtureProgress(phase: "chats", done: options.chats, total: options.chats))
    }

    private mutating func addMembers(_ members: [Int], owner: Int?, to chat: Chat, created: Date, chatIndex: Int, writer: inout BatchWriter) throws {
        let count = chatMessageCount[chatIndex]
        for user in members {
            let member = writer.insert(ChatMember.self)
            member.role = user == owner ? .owner : (random.chance(0.1) ? .admin : .member)
            member.joinedAt = created.addingTimeInterval(random.unit() * days(3))
            if count > 0 {
                // Most chats are read to the end; some have a few unread messages.
                let unread = random.chance(0.7) ? 0 : min(count - 1, random.int(in: 1...12))
                member.lastReadAt = messageTime(chat: chatIndex, index: count - 1 - unread)
            }
            member.user = writer.object(userID(user), as: User.self)
            member.chat = chat
        }
    }

    private mutating func groupSize(busiest: Bool) -> Int {
        let cap = min(options.users, 500)
        guard cap > 3 else { return cap }
        if busiest { return min(cap, 40) }
        // Heavy-tailed: most groups are small, a few are large.
        return min(cap, 3 + Int(pow(random.unit(), 6) * Double(cap - 3)))
    }

    /// Messages per chat: the busiest holds about a third, the rest follow a long tail (direct chats a little less).
    private mutating func messageCounts() -> [Int] {
        let total = options.messages
        var counts = Array(repeating: 0, count: options.chats)
        guard total > 0 else { return counts }
        guard options.chats > 1 else { return [total] }
        counts[0] = total / 3
        var ranks = Array(1..<options.chats)
        shuffle(&ranks)
        var weights: [Double] = []
        for chat in 1..<options.chats {
            let rank = Double(ranks[chat - 1])
            weights.append((chatIsGroup[chat] ? 1.0 : 0.6) / pow(rank, 1.1))
        }
        let rest = total - counts[0]
        let sum = weights.reduce(0, +)
        var assigned = 0
        for chat in 1..<options.chats {
            // Every weight is positive and finite, so the share is a finite number from 0 to `rest`.
            counts[chat] = Int(Double(rest) * weights[chat - 1] / sum)
            assigned += counts[chat]
        }
        // What rounding left over goes to the busiest chats after the first, one each.
        var chat = 1
        while assigned < rest {
            counts[chat] += 1
            assigned += 1
            chat = chat % (options.chats - 1) + 1
        }
        return counts
    }

    /// When message `index` of a chat was sent: spread over the chat's life up to shortly before "now", in order,
    /// with a jitter that depends only on the chat and the index (so it is known before the message is written).
    private func messageTime(chat: Int, index: Int) -> Date {
        let start = chatCreated[chat].addingTimeInterval(days(0.5))
        let end = now.addingTimeInterval(-days(Double(chat % 5) * 0.3) - 600)
        let count = max(1, chatMessageCount[chat])
        let step = max(1, end.timeIntervalSince(start)) / Double(count)
        var mix = UInt64(truncatingIfNeeded: chat) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: index) &* 0xC2B2_AE3D_27D4_EB4F
        mix ^= mix >> 29
        let jitter = Double(mix % 1_000) / 1_000 * 0.8
        // Whole milliseconds, as apps store them.
        let seconds = (step * (Double(index) + jitter) * 1_000).rounded() / 1_000
        return start.addingTimeInterval(seconds)
    }

    // MARK: messages

    mutating func writeMessages(_ writer: inout BatchWriter, progress: (FixtureProgress) -> Void) throws {
        let total = options.messages
        var written = 0
        let reportEvery = max(1, total / 200)
        for chat in 0..<options.chats {
            let count = chatMessageCount[chat]
            let members = chatMembers[chat]
            let isGroup = chatIsGroup[chat]
            let talkative = Array(members.prefix(max(2, members.count / 5)))
            for index in 0..<count {
                let global = chatFirstMessage[chat] + index
                let message = writer.insert(Message.self, as: messageID(global))
                let sender: Int
                if !isGroup {
                    sender = random.chance(0.5) ? 0 : members[1]
                } else if random.chance(0.15) {
                    sender = 0
                } else {
                    sender = random.chance(0.5) ? random.pick(talkative) : random.pick(members)
                }
                let sentAt = messageTime(chat: chat, index: index)
                let language = language(ofUser: sender)
                let roll = random.unit()
                let kind: Message.Kind = roll < 0.86 ? .text : roll < 0.92 ? .sticker : roll < 0.96 ? .image : roll < 0.99 ? .file
                    : (isGroup ? .system : .text)
                message.kind = kind
                message.sentAt = sentAt
                switch kind {
                case .text: message.text = random.pick(language.messages)
                case .sticker: message.text = random.pick(corpus.stickers)
                case .image: message.text = random.chance(0.5) ? random.pick(language.messages) : ""
                case .file: message.text = ""
                case .system: message.text = "\(userName[sender]) joined"
                }
                message.isEdited = kind == .text && random.chance(0.03)
                message.sender = writer.object(userID(sender), as: User.self)
                message.chat = writer.object(chatID(chat), as: Chat.self)
                if index > 0, random.chance(0.07) {
                    let back = 1 + random.below(min(index, 30))
                    message.replyTo = writer.object(messageID(global - back), as: Message.self)
                }
                if global > 0, random.chance(0.01) {
                    message.forwardedFrom = writer.object(messageID(random.below(global)), as: Message.self)
                }
                if isGroup, kind == .text, members.count > 2, random.chance(0.04) {
                    for _ in 0..<random.int(in: 1...2) {
                        message.add(writer.object(userID(random.pick(members)), as: User.self), toKey: "mentions")
                    }
                }
                if kind == .image || kind == .file {
                    for _ in 0..<(kind == .image ? random.int(in: 1...4) : 1) {
                        let attachment = writer.insert(Attachment.self)
                        attachment.fileName = kind == .image ? "IMG_\(random.int(in: 1_000...9_999)).jpg" : random.pick(corpus.fileNames)
                        attachment.mimeType = Self.mimeType(of: attachment.fileName)
                        attachment.byteSize = Int64(kind == .image ? random.int(in: 80_000...5_000_000) : random.int(in: 10_000...50_000_000))
                        message.add(attachment, toKey: "attachments")
                        summary.attachments += 1
                    }
                }
                if random.chance(0.09) {
                    var reacted = Set<Int>()
                    for _ in 0..<random.int(in: 1...3) {
                        let user = random.pick(members)
                        guard reacted.insert(user).inserted else { continue }
                        let reaction = writer.insert(Reaction.self)
                        reaction.emoji = random.pick(corpus.reactions)
                        reaction.createdAt = sentAt.addingTimeInterval(Double(random.int(in: 5...7_200)))
                        reaction.user = writer.object(userID(user), as: User.self)
                        reaction.message = message
                        summary.reactions += 1
                    }
                }
                // Read receipts for the recent messages of small chats.
                if members.count <= 8, index >= count - 40 {
                    for user in members where user != sender && random.chance(0.8) {
                        message.add(writer.object(userID(user), as: User.self), toKey: "readBy")
                        summary.receipts += 1
                    }
                }
                if index == count - 1 {
                    let owner = writer.object(chatID(chat), as: Chat.self)
                    owner.lastMessage = message
                    owner.lastMessageAt = sentAt
                }
                summary.messages += 1
                written += 1
                try writer.checkpoint()
                if written % reportEvery == 0 { progress(FixtureProgress(phase: "messages", done: written, total: total)) }
            }
        }
        try writer.flush()
        progress(FixtureProgress(phase: "messages", done: total, total: total))
    }

    static func mimeType(of fileName: String) -> String {
        // The text after the last dot (none for a name without one, or only a leading one).
        let dot = fileName.lastIndex(of: ".")
        let suffix = dot.map { $0 == fileName.startIndex ? "" : fileName[fileName.index(after: $0)...].lowercased() } ?? ""
        return switch suffix {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        case "mp4", "mov": "video/mp4"
        case "m4a", "mp3": "audio/mp4"
        case "txt": "text/plain"
        case "csv": "text/csv"
        case "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        case "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        case "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"
        default: "application/octet-stream"
        }
    }

    // MARK: folders

    mutating func writeFolders(_ writer: inout BatchWriter) throws {
        let names = Array(corpus.folders.prefix(6))
        for name in names {
            let folder = writer.insert(Folder.self)
            folder.name = name
            var chats = Array(0..<options.chats)
            shuffle(&chats)
            for chat in chats.prefix(min(options.chats, random.int(in: 3...30))) {
                folder.add(writer.object(chatID(chat), as: Chat.self), toKey: "chats")
            }
            summary.folders += 1
        }
        try writer.flush()
    }

    // MARK: helpers

    private func cumulative(_ weights: [Double]) -> [Double] {
        var total = 0.0
        return weights.map { total += $0; return total }
    }

    private mutating func shuffle<Element>(_ elements: inout [Element]) {
        guard elements.count > 1 else { return }
        for index in stride(from: elements.count - 1, to: 0, by: -1) {
            elements.swapAt(index, random.below(index + 1))
        }
    }
}

extension Array {
    /// A Fisher–Yates shuffle driven by the fixture's generator.
    func shuffledDeterministically(_ random: inout SeededRandom) -> [Element] {
        var copy = self
        guard copy.count > 1 else { return copy }
        for index in stride(from: copy.count - 1, to: 0, by: -1) {
            copy.swapAt(index, random.below(index + 1))
        }
        return copy
    }
}
