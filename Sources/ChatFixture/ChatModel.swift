import Foundation
import GraphStore

/// The chat model: a messenger's local store, declared once in code. `fixtures/Chat.xcdatamodeld` is its Xcode
/// twin (a test proves the two are the same model).
///
/// It uses every relationship kind the store supports: one-to-one (`User.profile`), one-to-many (`Chat.messages`),
/// many-to-many (`Message.readBy`), a self-inverse many-to-many (`User.friends`), reflexive to-one/to-many
/// (`Message.replyTo`/`replies`), an ordered to-many (`Message.attachments`) and an ordered many-to-many
/// (`Folder.chats`), many-to-nil (`Message.mentions`), one-to-nil (`Message.forwardedFrom`), a join entity
/// (`ChatMember`), an abstract entity with sub-entities (`Chat`), derived counts, a transient, and each delete rule.
public enum ChatModel {
    public static func make() throws(ModelError) -> ObjectModel {
        try ObjectModel {
            EntityDescription("User") {
                Attribute("name", .string).required()
                Attribute("handle", .string).required()
                Attribute("statusMessage", .string)
                Attribute("createdAt", .date).required()
                Relationship.toOne("profile", "UserProfile", inverse: "user", deleteRule: .cascade)
                Relationship.toMany("memberships", "ChatMember", inverse: "user", deleteRule: .cascade)
                Relationship.toMany("sentMessages", "Message", inverse: "sender", deleteRule: .nullify)
                Relationship.toMany("ownedGroups", "GroupChat", inverse: "owner", deleteRule: .deny)
                Relationship.toMany("friends", "User", inverse: "friends", deleteRule: .nullify)
                Relationship.toMany("readMessages", "Message", inverse: "readBy", deleteRule: .nullify)
                Relationship.toMany("reactions", "Reaction", inverse: "user", deleteRule: .cascade)
                Unique("handle")
            }
            EntityDescription("UserProfile") {
                Attribute("bio", .string)
                Attribute("birthday", .date)
                Attribute("avatar", .binaryData)
                Relationship.toOne("user", "User", inverse: "profile", deleteRule: .nullify)
            }
            EntityDescription("Chat", abstract: true) {
                Attribute("title", .string).required()
                Attribute("createdAt", .date).required()
                Attribute("lastMessageAt", .date).indexed()
                Attribute("isPinned", .boolean).required().defaultValue("NO")
                Attribute("isMuted", .boolean).required().defaultValue("NO")
                Attribute.derived("membersCount", "members.@count")
                Attribute.derived("messagesCount", "messages.@count")
                Relationship.toMany("members", "ChatMember", inverse: "chat", deleteRule: .cascade)
                Relationship.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
                Relationship.toOne("lastMessage", "Message", inverse: "lastMessageOf", deleteRule: .nullify)
                Relationship.toMany("folders", "Folder", inverse: "chats", deleteRule: .nullify)
                // The chat list's order: pinned first, then the newest last message. Both descending, so that
                // SQLite reads the list in order from the index; the primary key, which ends every index entry in
                // ascending order, breaks ties as the list's last sort key (`SELF`) does.
                FetchIndex(name: "byPinnedAndLastMessage", elements: [
                    .init(property: "isPinned", isAscending: false), .init(property: "lastMessageAt", isAscending: false),
                ])
            }
            EntityDescription("DirectChat", parent: "Chat") {}
            EntityDescription("GroupChat", parent: "Chat") {
                Attribute("topic", .string)
                Relationship.toOne("owner", "User", inverse: "ownedGroups", deleteRule: .nullify)
            }
            EntityDescription("ChatMember") {
                Attribute("role", .integer16).required().defaultValue("2")
                Attribute("joinedAt", .date).required()
                Attribute("lastReadAt", .date)
                Relationship.toOne("chat", "Chat", inverse: "members", deleteRule: .nullify)
                Relationship.toOne("user", "User", inverse: "memberships", deleteRule: .nullify)
            }
            EntityDescription("Message") {
                Attribute("text", .string).required()
                Attribute("sentAt", .date).required().indexed()
                Attribute("kind", .integer16).required().defaultValue("0")
                Attribute("isEdited", .boolean).required().defaultValue("NO")
                Attribute("preview", .string).transient()
                Relationship.toOne("chat", "Chat", inverse: "messages", deleteRule: .nullify)
                Relationship.toOne("sender", "User", inverse: "sentMessages", deleteRule: .nullify)
                Relationship.toOne("replyTo", "Message", inverse: "replies", deleteRule: .nullify)
                Relationship.toMany("replies", "Message", inverse: "replyTo", deleteRule: .nullify)
                Relationship.toMany("attachments", "Attachment", inverse: "message", ordered: true, deleteRule: .cascade)
                Relationship.toMany("reactions", "Reaction", inverse: "message", deleteRule: .cascade)
                Relationship.toMany("mentions", "User", inverse: nil, deleteRule: .nullify)
                Relationship.toOne("forwardedFrom", "Message", inverse: nil, deleteRule: .nullify)
                Relationship.toMany("readBy", "User", inverse: "readMessages", deleteRule: .nullify)
                Relationship.toOne("lastMessageOf", "Chat", inverse: "lastMessage", deleteRule: .nullify)
                // A chat's messages in time order: the query the message pane runs.
                FetchIndex("byChatAndTime", "chat", "sentAt")
            }
            EntityDescription("Attachment") {
                Attribute("fileName", .string).required()
                Attribute("mimeType", .string).required()
                Attribute("byteSize", .integer64).required().defaultValue("0")
                Relationship.toOne("message", "Message", inverse: "attachments", deleteRule: .nullify)
            }
            EntityDescription("Reaction") {
                Attribute("emoji", .string).required()
                Attribute("createdAt", .date).required()
                Relationship.toOne("message", "Message", inverse: "reactions", deleteRule: .nullify)
                Relationship.toOne("user", "User", inverse: "reactions", deleteRule: .nullify)
            }
            EntityDescription("Folder") {
                Attribute("name", .string).required()
                Relationship.toMany("chats", "Chat", inverse: "folders", ordered: true, deleteRule: .nullify)
            }
        }
    }

    /// The typed classes, one per concrete entity, for `PersistentStoreCoordinator(classes:)`.
    public static let classes: [ManagedObject.Type] = [
        User.self, UserProfile.self, DirectChat.self, GroupChat.self, ChatMember.self, Message.self,
        Attachment.self, Reaction.self, Folder.self,
    ]
}

// MARK: typed objects

public final class User: ManagedObject {
    @Stored("name") public var name: String
    @Stored("handle") public var handle: String
    @Stored("statusMessage") public var statusMessage: String?
    @Stored("createdAt") public var createdAt: Date
    @ToOne("profile") public var profile: UserProfile?
    @ToMany("memberships") public var memberships: [ChatMember]
    @ToMany("sentMessages") public var sentMessages: [Message]
    @ToMany("ownedGroups") public var ownedGroups: [GroupChat]
    @ToMany("friends") public var friends: [User]
    @ToMany("readMessages") public var readMessages: [Message]
    @ToMany("reactions") public var reactions: [Reaction]
}

public final class UserProfile: ManagedObject {
    @Stored("bio") public var bio: String?
    @Stored("birthday") public var birthday: Date?
    @Stored("avatar") public var avatar: Data?
    @ToOne("user") public var user: User?
}

/// A direct or group chat (`Chat` itself is abstract).
public class Chat: ManagedObject {
    @Stored("title") public var title: String
    @Stored("createdAt") public var createdAt: Date
    @Stored("lastMessageAt") public var lastMessageAt: Date?
    @Stored("isPinned") public var isPinned: Bool
    @Stored("isMuted") public var isMuted: Bool
    /// Kept by the store's triggers: read-only.
    @Stored("membersCount") public private(set) var membersCount: Int
    @Stored("messagesCount") public private(set) var messagesCount: Int
    @ToMany("members") public var members: [ChatMember]
    @ToMany("messages") public var messages: [Message]
    @ToOne("lastMessage") public var lastMessage: Message?
    @ToMany("folders") public var folders: [Folder]
}

public final class DirectChat: Chat {}

public final class GroupChat: Chat {
    @Stored("topic") public var topic: String?
    @ToOne("owner") public var owner: User?
}

public final class ChatMember: ManagedObject {
    public enum Role: Int16, Sendable, CaseIterable {
        case owner = 0, admin = 1, member = 2
    }

    @Stored("role") var roleValue: Int16
    @Stored("joinedAt") public var joinedAt: Date
    @Stored("lastReadAt") public var lastReadAt: Date?
    @ToOne("chat") public var chat: Chat?
    @ToOne("user") public var user: User?

    public var role: Role {
        get { Role(rawValue: roleValue) ?? .member }
        set { roleValue = newValue.rawValue }
    }
}

public final class Message: ManagedObject {
    public enum Kind: Int16, Sendable, CaseIterable {
        case text = 0, sticker = 1, image = 2, file = 3, system = 4
    }

    @Stored("text") public var text: String
    @Stored("sentAt") public var sentAt: Date
    @Stored("kind") var kindValue: Int16
    @Stored("isEdited") public var isEdited: Bool
    /// Transient: a one-line form of the message for lists, kept in memory only.
    @Stored("preview") public var preview: String?
    @ToOne("chat") public var chat: Chat?
    @ToOne("sender") public var sender: User?
    @ToOne("replyTo") public var replyTo: Message?
    @ToMany("replies") public var replies: [Message]
    @ToMany("attachments") public var attachments: [Attachment]
    @ToMany("reactions") public var reactions: [Reaction]
    @ToMany("mentions") public var mentions: [User]
    @ToOne("forwardedFrom") public var forwardedFrom: Message?
    @ToMany("readBy") public var readBy: [User]
    /// The chat this message is the last message of, if it is.
    @ToOne("lastMessageOf") public var lastMessageOf: Chat?

    public var kind: Kind {
        get { Kind(rawValue: kindValue) ?? .text }
        set { kindValue = newValue.rawValue }
    }

    /// Deleting a chat's last message makes the newest message left its last message, with that message's time
    /// (nil and nil when none is left), so the chat list's preview and order fall back to it. The Nullify rule of
    /// `lastMessageOf` alone would leave the chat with no last message and the deleted one's time. A chat being
    /// deleted itself is left alone (its messages go with it without coming here). If the store cannot be read
    /// here, the chat is left as the Nullify rule leaves it; the save that follows reports the store's error.
    override public func prepareForDeletion() {
        guard let chat = lastMessageOf, !chat.isDeleted, let context else { return }
        let previous: Message?
        do {
            previous = try Self.newestMessage(of: chat, other: self, in: context)
        } catch {
            return
        }
        chat.lastMessage = previous
        chat.lastMessageAt = previous?.sentAt
    }

    /// The newest message of `chat` that is neither `excluded` nor deleted in the context: a few of the newest rows
    /// as saved, then (when all of those are deleted) the chat's messages with the unsaved changes applied.
    private static func newestMessage(of chat: Chat, other excluded: Message, in context: ObjectContext) throws -> Message? {
        var request = FetchRequest(entityName: "Message",
                                   predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
                                   sortDescriptors: [.init("sentAt", ascending: false), .init("SELF", ascending: false)])
        request.includesPendingChanges = false
        request.fetchLimit = 4
        func first(_ request: FetchRequest) throws -> Message? {
            let found = try context.fetch(request)
            for index in 0..<found.count {
                if let message = found[index] as? Message, message !== excluded, !message.isDeleted { return message }
            }
            return nil
        }
        if let message = try first(request) { return message }
        request.includesPendingChanges = true
        request.fetchLimit = 0
        return try first(request)
    }
}

public final class Attachment: ManagedObject {
    @Stored("fileName") public var fileName: String
    @Stored("mimeType") public var mimeType: String
    @Stored("byteSize") public var byteSize: Int64
    @ToOne("message") public var message: Message?
}

public final class Reaction: ManagedObject {
    @Stored("emoji") public var emoji: String
    @Stored("createdAt") public var createdAt: Date
    @ToOne("message") public var message: Message?
    @ToOne("user") public var user: User?
}

public final class Folder: ManagedObject {
    @Stored("name") public var name: String
    @ToMany("chats") public var chats: [Chat]
}
