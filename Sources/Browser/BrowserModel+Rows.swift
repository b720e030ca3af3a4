import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// Turning the visible part of the panes' fetches into the plain rows the views draw.
extension BrowserModel {
    /// - Parameters:
    ///   - visible: the chat pane's rows below its title; each chat takes `ChatListView.linesPerChat` of them, and
    ///     only the chats drawn are read.
    ///   - reusing: rows already drawn, by chat, that are still current (after a merge: every row whose chat it did
    ///     not change), so that only changed rows read the graph.
    func fillChatRows(visible lines: Int, reusing: [ObjectID: ChatRow] = [:]) {
        let visible = max(1, lines / ChatListView.linesPerChat)
        var list = state.chatList
        if list.selected < list.top { list.top = list.selected }
        if list.selected >= list.top + visible { list.top = list.selected - visible + 1 }
        list.top = max(0, min(list.top, max(0, list.count - visible)))
        list.rows = []
        visibleChatIDs = []
        if let chats {
            let end = min(list.count, list.top + visible)
            if list.top < end {
                for index in list.top..<end {
                    let chat = chats[index]
                    list.rows.append(reusing[chat.objectID] ?? chatRow(chat))
                    visibleChatIDs.append(chat.objectID)
                }
            }
        }
        state.chatList = list
    }

    /// The row of a chat, read through the chat model's typed properties (the list fetches `Chat`, whose objects
    /// are `ChatFixture.Chat` subclasses).
    func chatRow(_ object: ManagedObject) -> ChatRow {
        guard let chat = object as? Chat else {
            return ChatRow(title: "", isGroup: false, membersCount: 0, preview: "", sender: nil, sentByOwner: false,
                           hasMessages: false, time: nil, isPinned: false, isMuted: false)
        }
        let last = chat.lastMessage
        let isGroup = chat is GroupChat
        let count: Int
        if !isGroup {
            count = 0 // A direct chat shows no member count, so none is read.
        } else if state.settings.derivedCounts {
            count = chat.membersCount
        } else {
            count = chat.count(forKey: "members") // the relationship's count: what derived counts spare
        }
        let sender = last?.sender
        return ChatRow(
            title: chat.title,
            isGroup: isGroup,
            membersCount: count,
            preview: last.map(Self.contentLine) ?? "",
            sender: sender?.name,
            sentByOwner: sender.map(Self.isOwner) ?? false,
            hasMessages: last != nil,
            time: chat.lastMessageAt,
            isPinned: chat.isPinned,
            isMuted: chat.isMuted)
    }

    /// Whether `user` is the store's own user, the one whose device the chats are on (the handle `me`, as the
    /// fixture writes it).
    static func isOwner(_ user: User) -> Bool {
        user.handle == ownerHandle
    }

    static let ownerHandle = "me"

    /// Reads the open chat's messages that fit the pane, with the day headers they need: one tops the pane, and one
    /// more comes wherever the day changes. The selection stays in view: the oldest messages are left out first,
    /// unless the selection is the oldest, then the newest; and older ones fill any line left.
    func fillMessageRows(visible: Int) {
        guard var open = state.openChat, let messages, !state.showMembers else { return }
        let room = max(1, visible)
        if open.selected < open.bottom { open.bottom = open.selected }
        if open.selected >= open.bottom + room { open.bottom = open.selected - room + 1 }
        open.bottom = max(0, min(open.bottom, max(0, open.messagesCount - 1)))
        var range = open.bottom..<min(open.messagesCount, open.bottom + room)
        // Days of the candidates, newest first (index order); their rows are read only once they are known to fit.
        var days = range.map { TimeText.Parts(Self.sentAt(messages[$0])).dayNumber }
        func linesNeeded() -> Int {
            range.count + days.indices.filter { $0 == 0 || days[$0] != days[$0 - 1] }.count
        }
        while range.count > 1, linesNeeded() > room {
            if range.upperBound - 1 != open.selected {
                range = range.lowerBound..<(range.upperBound - 1)
                days.removeLast()
            } else {
                range = (range.lowerBound + 1)..<range.upperBound
                days.removeFirst()
            }
        }
        // Leaving out a message alone on its day frees its header's line too: older messages may take it.
        while range.upperBound < open.messagesCount {
            let day = TimeText.Parts(Self.sentAt(messages[range.upperBound])).dayNumber
            guard linesNeeded() + (day == days.last ? 1 : 2) <= room else { break }
            range = range.lowerBound..<(range.upperBound + 1)
            days.append(day)
        }
        open.bottom = range.lowerBound
        open.rows = range.reversed().map { messageRow(messages[$0], index: $0) }
        state.openChat = open
    }

    private static func sentAt(_ message: ManagedObject) -> Date {
        (message as? Message)?.sentAt ?? Date(timeIntervalSinceReferenceDate: 0)
    }

    private func messageRow(_ object: ManagedObject, index: Int) -> MessageRow {
        let message = object as? Message
        let quote = message?.replyTo.map { reply -> String in
            "\(reply.sender?.name ?? "?"): " + Self.oneLine(reply.text)
        }
        return MessageRow(
            index: index,
            sender: message?.sender?.name ?? "(deleted user)",
            text: Self.contentLine(object),
            sentAt: Self.sentAt(object),
            replyQuote: quote,
            reactions: message.map(Self.reactionSummary) ?? "",
            isEdited: message?.isEdited ?? false)
    }

    func fillMemberRows(visible: Int) {
        guard var open = state.openChat, state.showMembers else { return }
        if open.memberSelected < open.memberTop { open.memberTop = open.memberSelected }
        if open.memberSelected >= open.memberTop + visible { open.memberTop = open.memberSelected - visible + 1 }
        open.memberTop = max(0, min(open.memberTop, max(0, members.count - visible)))
        let end = min(members.count, open.memberTop + visible)
        open.members = open.memberTop < end ? (open.memberTop..<end).map { memberRow(members[$0]) } : []
        open.membersCount = members.count
        state.openChat = open
    }

    private func memberRow(_ object: ManagedObject) -> MemberRow {
        let member = object as? ChatMember
        return MemberRow(role: "\(member?.role ?? .member)", name: member?.user?.name ?? "(gone)",
                         joinedAt: member?.joinedAt ?? Date(timeIntervalSinceReferenceDate: 0))
    }

    /// A message's reactions as a messenger shows them: each emoji with its count, the most frequent first
    /// (`❤️3 😂1`); empty when there are none.
    static func reactionSummary(_ message: Message) -> String {
        let reactions = message.reactions
        guard !reactions.isEmpty else { return "" }
        var counts: [String: Int] = [:]
        for reaction in reactions { counts[reaction.emoji, default: 0] += 1 }
        return counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key)\($0.value)" }.joined(separator: " ")
    }

    /// A message text for one row: line breaks and other control characters become spaces.
    static func oneLine(_ text: String) -> String {
        // No row is wider than this many characters: a damaged store's 10 MB message is not copied on every move.
        ControlCharacters.replaced(in: String(text.prefix(rowTextLimit)), by: " ")
    }

    static let rowTextLimit = 2_000

    /// A message as one line, by its kind, as both the chat list and the message pane show it: the text;
    /// `[sticker] Kumo waves`, `[image] caption` (or `[image]`), `[file] plan.pdf` (its first attachment's name,
    /// the one extra read, for files only); a system message's own words (`Ana joined`).
    static func contentLine(_ object: ManagedObject) -> String {
        let message = object as? Message
        let text = oneLine(message?.text ?? "")
        let kind = message?.kind ?? .text
        switch kind {
        case .text, .system:
            return text
        case .sticker, .image:
            let label = kind == .sticker ? "[sticker]" : "[image]"
            return text.isEmpty ? label : "\(label) \(text)"
        case .file:
            let name = message?.attachments.first.map { oneLine($0.fileName) } ?? ""
            return name.isEmpty ? "[file]" : "[file] \(name)"
        }
    }
}
