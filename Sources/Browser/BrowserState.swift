import Foundation
import GraphStore

/// Everything the views draw, as plain values: the update reads the object graph (firing whatever faults it must,
/// which the activity panel then shows) and leaves here only what is on screen.
public struct BrowserState: Equatable, Sendable {
    public var width: Int
    public var height: Int
    /// The store's file name, for the status line.
    public var storeName: String
    public var settings: BrowserSettings
    public var focus = Pane.chats
    public var overlay = Overlay.none
    /// The first key row the help shows, when the window is too short for all of them.
    public var helpTop = 0

    public var chatList = ChatListState()
    public var openChat: OpenChatState?
    public var showMembers = false

    public var sqlSelected = 0
    /// `EXPLAIN QUERY PLAN` lines of the SQL log's selected statement, when asked for.
    public var explained: [String]?

    /// Long work under way (a save, an undo or redo written back, a delete preview), shown in place of the status
    /// line once it has run for `settings.progressAfterMilliseconds`; nil otherwise.
    public var progress: WorkProgress?
    /// What the last action did or why it did nothing, for the status line.
    public var message: String?
    public var messageIsError = false
    /// Unsaved changes, for the status line (`2 deleted`, `undo of 'Delete chat' queued`).
    public var pending: String?
    public var undoName: String?
    public var redoName: String?
    public var quitRequested = false
    /// Whether the simulated incoming-messages writer runs (`--live`).
    public var live = false
    /// Whether the store could only be opened read-only (the file or its folder cannot be written), `--read-only`
    /// or not.
    public var storeIsReadOnly = false

    public init(width: Int, height: Int, storeName: String, settings: BrowserSettings) {
        self.width = width
        self.height = height
        self.storeName = storeName
        self.settings = settings
    }
}

/// A pop-up over the panes.
public enum Overlay: Equatable, Sendable {
    case none
    case help
    /// The delete preview, waiting for `y`/`Enter` or `n`/`Esc`.
    case deletePreview(DeletePreview)
    /// Unsaved changes on quit: `y` discards and quits, `n` stays.
    case confirmQuit
    /// The search field being typed.
    case search(String)
    /// One statement of the SQL log in full (Enter on a log row).
    case sqlDetail(SQLDetail)
}

/// What deleting the selected object would take with it, from `deletionPlan(for:)`.
public struct DeletePreview: Equatable, Sendable {
    /// What is deleted: `chat "Ski trip"`.
    public var target: String
    public var deleted: [(String, Int)]
    public var nullified: [(String, Int)]
    /// Deny rules refusing it: `User.ownedGroups: 27`.
    public var denied: [String]
    /// Survivors it would leave without what a relationship requires, which the save refuses:
    /// `Book.author is required, and would be cleared: 2 objects (first x-coredata://…/Book/p1)`.
    public var invalid: [String] = []

    public init(target: String, deleted: [(String, Int)], nullified: [(String, Int)], denied: [String], invalid: [String] = []) {
        self.target = target
        self.deleted = deleted
        self.nullified = nullified
        self.denied = denied
        self.invalid = invalid
    }

    /// The preview of `plan` for the object named `target`.
    public init(target: String, plan: DeletionPlan) {
        self.init(target: target,
                  deleted: plan.deleted.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                  nullified: plan.nullified.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                  denied: plan.denied.map { "\($0.entity).\($0.relationship): \($0.count) \($0.count == 1 ? "object" : "objects")" },
                  invalid: plan.shortfalls.map(\.description))
    }

    /// Why the delete cannot go ahead, for the status line; nil when it can.
    public var refusal: String? {
        if !denied.isEmpty { return "not deleted: " + denied.joined(separator: "; ") + " (Deny)" }
        if !invalid.isEmpty { return "not deleted: the save would fail validation: " + invalid.joined(separator: "; ") }
        return nil
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.target == rhs.target && lhs.denied == rhs.denied && lhs.invalid == rhs.invalid
            && lhs.deleted.elementsEqual(rhs.deleted, by: ==) && lhs.nullified.elementsEqual(rhs.nullified, by: ==)
    }
}

public struct ChatListState: Equatable, Sendable {
    /// Chats in the list (the fetch's count).
    public var count = 0
    public var selected = 0
    /// The index of the first visible row.
    public var top = 0
    /// The visible rows, from `top`.
    public var rows: [ChatRow] = []
    /// The search applied to the list ("" for none).
    public var search = ""
    /// The filter in force when the search field opened: Esc goes back to it.
    public var searchBefore = ""
}

/// One chat of the chat list, as a messenger shows it (two lines: title, marks and time; then the last message).
public struct ChatRow: Equatable, Sendable {
    public var title: String
    public var isGroup: Bool
    public var membersCount: Int
    /// The last message as one line, by its kind (`[file] plan.pdf`, `[sticker] Kumo waves`); "" when the chat has
    /// no message.
    public var preview: String
    /// The last message's sender; nil when there is no last message or its sender was deleted.
    public var sender: String?
    /// Whether the store's own user (handle `me`) sent the last message: drawn as "You:".
    public var sentByOwner: Bool
    /// Whether the chat has a last message at all.
    public var hasMessages: Bool
    public var time: Date?
    public var isPinned: Bool
    public var isMuted: Bool
}

public struct OpenChatState: Equatable, Sendable {
    public var title: String
    public var messagesCount: Int
    /// The selected message: 0 is the newest.
    public var selected = 0
    /// The newest message shown at the bottom of the pane (0: the newest of all).
    public var bottom = 0
    /// Visible messages, oldest first (the newest at the bottom), with their indexes (0 newest).
    public var rows: [MessageRow] = []
    public var members: [MemberRow] = []
    /// Members listed when they are shown (the fetch's count), for the pane's position.
    public var membersCount = 0
    public var memberSelected = 0
    public var memberTop = 0
}

public struct MessageRow: Equatable, Sendable {
    public var index: Int
    public var sender: String
    /// The message as one line, by its kind: the text, or `[sticker] name`, `[image] caption`, `[file] name`.
    public var text: String
    public var sentAt: Date
    /// `Ana: see you there`, when the message replies to another.
    public var replyQuote: String?
    /// `👍2 ❤️1`
    public var reactions: String
    public var isEdited: Bool
}

public struct MemberRow: Equatable, Sendable {
    public var role: String
    public var name: String
    public var joinedAt: Date
}
