import ChatFixture
import Foundation
import GraphStore
import Terminal

/// Turning the visible part of the panes' fetches into the plain rows the views draw.
extension BrowserModel {
    /// - Parameter reusing: rows already drawn, by chat, that are still current (after a merge: every row whose
    ///   chat it did not change), so that only changed rows read the graph.
    func fillChatRows(visible: Int, reusing: [ObjectID: ChatRow] = [:]) {
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

    func chatRow(_ chat: ManagedObject) -> ChatRow {
        let last = chat.object(forKey: "lastMessage")
        let isGroup = chat.entityName == "GroupChat"
        let count: Int
        if !isGroup {
            count = 0 // A direct chat shows no member count, so none is read.
        } else if state.settings.derivedCounts {
            if case .integer(let value) = chat.attributeValue(forKey: "membersCount") { count = Int(value) } else { count = 0 }
        } else {
            count = chat.count(forKey: "members")
        }
        return ChatRow(
            title: chat.value(forKey: "title") as? String ?? "",
            isGroup: isGroup,
            membersCount: count,
            preview: (last?.value(forKey: "text") as? String).map(Self.oneLine) ?? "",
            sender: last?.object(forKey: "sender")?.value(forKey: "name") as? String,
            time: chat.value(forKey: "lastMessageAt") as? Date,
            isPinned: chat.value(forKey: "isPinned") as? Bool ?? false,
            isMuted: chat.value(forKey: "isMuted") as? Bool ?? false)
    }

    func fillMessageRows(visible: Int) {
        guard var open = state.openChat, let messages, !state.showMembers else { return }
        // Keep the selection within the lines shown; each message takes one line (day separators take more, so
        // allow some slack by keeping the selection well inside).
        let room = max(1, visible)
        if open.selected < open.bottom { open.bottom = open.selected }
        if open.selected >= open.bottom + room { open.bottom = open.selected - room + 1 }
        open.bottom = max(0, min(open.bottom, max(0, open.messagesCount - 1)))
        let end = min(open.messagesCount, open.bottom + room)
        var rows: [MessageRow] = []
        if open.bottom < end {
            for index in open.bottom..<end { rows.append(messageRow(messages[index], index: index)) }
        }
        open.rows = rows.reversed()
        state.openChat = open
    }

    private func messageRow(_ message: ManagedObject, index: Int) -> MessageRow {
        let reply = message.object(forKey: "replyTo")
        let quote = reply.map { reply -> String in
            let name = reply.object(forKey: "sender")?.value(forKey: "name") as? String ?? "?"
            return "\(name): " + Self.oneLine(reply.value(forKey: "text") as? String ?? "")
        }
        let kind = (message as? ChatFixture.Message)?.kind ?? .text
        return MessageRow(
            index: index,
            sender: message.object(forKey: "sender")?.value(forKey: "name") as? String ?? "(deleted user)",
            text: Self.oneLine(message.value(forKey: "text") as? String ?? ""),
            sentAt: message.value(forKey: "sentAt") as? Date ?? Date(timeIntervalSinceReferenceDate: 0),
            replyQuote: quote,
            reactions: Self.reactionSummary(message),
            placeholder: Self.placeholder(kind: kind))
    }

    func fillMemberRows(visible: Int) {
        guard var open = state.openChat, state.showMembers else { return }
        if open.memberSelected < open.memberTop { open.memberTop = open.memberSelected }
        if open.memberSelected >= open.memberTop + visible { open.memberTop = open.memberSelected - visible + 1 }
        open.memberTop = max(0, min(open.memberTop, max(0, members.count - visible)))
        let end = min(members.count, open.memberTop + visible)
        open.members = open.memberTop < end ? (open.memberTop..<end).map { memberRow(members[$0]) } : []
        state.openChat = open
    }

    private func memberRow(_ member: ManagedObject) -> MemberRow {
        let role = (member as? ChatMember)?.role ?? .member
        return MemberRow(role: "\(role)", name: member.object(forKey: "user")?.value(forKey: "name") as? String ?? "(gone)",
                         joinedAt: member.value(forKey: "joinedAt") as? Date ?? Date(timeIntervalSinceReferenceDate: 0))
    }

    /// A message's reactions as a messenger shows them: each emoji with its count, the most frequent first
    /// (`❤️3 😂1`); empty when there are none.
    static func reactionSummary(_ message: ManagedObject) -> String {
        let reactions = message.objects(forKey: "reactions")
        guard !reactions.isEmpty else { return "" }
        var counts: [String: Int] = [:]
        for reaction in reactions { counts[reaction.value(forKey: "emoji") as? String ?? "?", default: 0] += 1 }
        return counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key)\($0.value)" }.joined(separator: " ")
    }

    /// A message text for one row: line breaks and other control characters become spaces.
    static func oneLine(_ text: String) -> String {
        // No row is wider than this many characters: a damaged store's 10 MB message is not copied on every move.
        ControlCharacters.replaced(in: String(text.prefix(rowTextLimit)), by: " ")
    }

    static let rowTextLimit = 2_000

    /// What a message of a non-text kind shows instead of its text.
    static func placeholder(kind: ChatFixture.Message.Kind) -> String? {
        switch kind {
        case .text: nil
        case .sticker: "[sticker]"
        case .image: "[image]"
        case .file: "[file]"
        case .system: "[system]"
        }
    }
}
