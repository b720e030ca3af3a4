import ChatFixture
import Foundation
import GraphStore
import Terminal

/// The fetches behind the panes, and turning the visible part of them into rows.
extension BrowserModel {
    /// The chat list's request: pinned first, then by last message; batched and prefetching per the settings.
    func chatRequest() -> FetchRequest {
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [
            .init("isPinned", ascending: false), .init("lastMessageAt", ascending: false), .init("SELF"),
        ])
        if !state.chatList.search.isEmpty, let predicate = try? GraphStore.Predicate(format: "title CONTAINS[cd] %@", state.chatList.search) {
            request.predicate = predicate
        }
        configure(&request, keyPaths: ["lastMessage.sender"])
        return request
    }

    /// A chat's messages, newest first (the pane draws them oldest at the top).
    func messageRequest(for chat: ManagedObject) -> FetchRequest {
        var request = FetchRequest(entityName: "Message",
                                   predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
                                   sortDescriptors: [.init("sentAt", ascending: false), .init("SELF", ascending: false)])
        configure(&request, keyPaths: ["sender", "replyTo.sender", "reactions"])
        // A batch is at least the pane's height: opening a chat fetches its first screen in one batch, so the
        // screen costs one statement for the messages with their senders and quotes, one for their reactions and
        // the count, whatever the batch size.
        if request.fetchBatchSize > 0 {
            request.fetchBatchSize = max(request.fetchBatchSize, Layout.contentRows(Layout(width: state.width, height: state.height).main))
        }
        return request
    }

    private func configure(_ request: inout FetchRequest, keyPaths: [String]) {
        let settings = state.settings
        request.fetchBatchSize = settings.batchSize
        request.batchingMode = settings.batchingMode
        switch settings.prefetch {
        case .joined:
            request.relationshipKeyPathsForPrefetching = keyPaths
            request.prefetchStrategy = .joined
        case .separate:
            request.relationshipKeyPathsForPrefetching = keyPaths
            request.prefetchStrategy = .separateQueries
        case .off:
            request.relationshipKeyPathsForPrefetching = []
        }
    }

    func reloadChats() {
        do {
            let controller = FetchedResultsController(context: context, request: chatRequest())
            try controller.performFetch()
            chatController = controller
            chats = controller.objects
            state.chatList.count = controller.objects.count
        } catch {
            chats = nil
            chatController = nil
            state.chatList.count = 0
            state.message = "chat list: \(error)"
            state.messageIsError = true
        }
        state.chatList.selected = min(state.chatList.selected, max(0, state.chatList.count - 1))
        fillVisibleRows()
    }

    /// Fetches again with the current settings (after a toggle, a delete or an undo) and keeps the selection.
    func reloadAll() {
        reloadChats()
        if let chat = openChat {
            if chat.isDeleted {
                closeChat()
            } else {
                loadMessages(of: chat, keepSelection: true)
            }
        }
    }

    func closeChat() {
        openChat = nil
        messages = nil
        members = .empty
        state.openChat = nil
        state.showMembers = false
        if state.focus == .messages || state.focus == .members { state.focus = .chats }
    }

    func openSelectedChat() {
        guard state.focus == .chats else { return }
        guard let chats, state.chatList.selected < chats.count else { return }
        let chat = chats[state.chatList.selected]
        openChat = chat
        state.showMembers = false
        loadMessages(of: chat, keepSelection: false)
        state.focus = .messages
    }

    func loadMessages(of chat: ManagedObject, keepSelection: Bool) {
        let previous = state.openChat
        do {
            let fetched = try context.fetch(messageRequest(for: chat))
            messages = fetched
            var open = OpenChatState(title: chat.value(forKey: "title") as? String ?? "", messagesCount: fetched.count)
            if keepSelection, let previous {
                open.selected = min(previous.selected, max(0, fetched.count - 1))
                open.bottom = min(previous.bottom, open.selected)
            }
            state.openChat = open
            if state.showMembers { loadMembers(of: chat) }
        } catch {
            state.message = "messages: \(error)"
            state.messageIsError = true
        }
        fillVisibleRows()
    }

    func toggleMembers() {
        if state.openChat == nil { openSelectedChat() }
        guard let chat = openChat else { return }
        state.showMembers.toggle()
        if state.showMembers {
            loadMembers(of: chat)
            state.focus = .members
        } else {
            state.focus = .messages
        }
        fillVisibleRows()
    }

    /// Members through the join entity, their users prefetched (joined unless the settings say otherwise).
    func loadMembers(of chat: ManagedObject) {
        var request = FetchRequest(entityName: "ChatMember",
                                   predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
                                   sortDescriptors: [.init("role"), .init("joinedAt"), .init("SELF")])
        configure(&request, keyPaths: ["user"])
        // As for messages, a batch is at least the pane's height.
        if request.fetchBatchSize > 0 {
            request.fetchBatchSize = max(request.fetchBatchSize, Layout.contentRows(Layout(width: state.width, height: state.height).main))
        }
        do {
            members = try context.fetch(request)
        } catch {
            members = .empty
            state.message = "members: \(error)"
            state.messageIsError = true
        }
        if var open = state.openChat {
            open.memberSelected = min(open.memberSelected, max(0, members.count - 1))
            state.openChat = open
        }
    }

    /// Moves the focused pane's selection, scrolling to keep it in view, and reads the rows now visible.
    func move(by delta: Int) {
        func clamp(_ value: Int, _ count: Int) -> Int { max(0, min(count - 1, value)) }
        func step(_ value: Int) -> Int {
            // Large jumps come as ±Int.max / 2; keep the arithmetic in range.
            delta > 0 ? (value > Int.max / 2 - delta ? Int.max / 2 : value + delta) : value + delta
        }
        switch state.focus {
        case .chats:
            guard state.chatList.count > 0 else { return }
            state.chatList.selected = clamp(step(state.chatList.selected), state.chatList.count)
        case .messages:
            guard var open = state.openChat, open.messagesCount > 0 else { return }
            // Down is newer (toward index 0), up is older.
            open.selected = clamp(open.selected - (delta > Int.max / 4 ? Int.max / 4 : delta < Int.min / 4 ? Int.min / 4 : delta), open.messagesCount)
            state.openChat = open
        case .members:
            guard var open = state.openChat, !members.isEmpty else { return }
            open.memberSelected = clamp(step(open.memberSelected), members.count)
            state.openChat = open
        case .sqlLog:
            state.sqlSelected = clamp(step(state.sqlSelected), max(1, activity.entries.count))
            state.explained = nil
        }
        fillVisibleRows()
    }

    /// Reads the rows the panes show now; only these objects are touched, so only their faults fire.
    func fillVisibleRows() {
        let layout = Layout(width: state.width, height: state.height)
        fillChatRows(visible: Layout.contentRows(layout.chats))
        fillMessageRows(visible: Layout.contentRows(layout.main))
        fillMemberRows(visible: Layout.contentRows(layout.main))
    }

    /// - Parameter reusing: rows already drawn, by chat, that are still current (after a merge: every row whose
    ///   chat it did not change), so that only changed rows read the graph.
    private func fillChatRows(visible: Int, reusing: [ObjectID: ChatRow] = [:]) {
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

    /// Merges what waits: other processes' commits (found by one scan) and other contexts' saves (the live
    /// writer's). The chat list fetches again and redraws only the rows whose chats changed, keeping the selected
    /// chat selected; the open chat reloads when its messages changed, and closes when it was deleted.
    func mergePendingChanges() {
        var notes: [SaveNotification] = []
        do {
            if let external = try context.mergeChangesFromOtherConnections() { notes.append(external) }
        } catch {
            state.message = "merge: \(error)"
            state.messageIsError = true
        }
        let saved = inbox.take()
        for note in saved { context.mergeChanges(fromContextDidSave: note) }
        notes += saved
        guard !notes.isEmpty else {
            if !state.messageIsError { state.message = "nothing to merge" }
            return
        }
        let changed = notes.reduce(into: Set<ObjectID>()) { $0.formUnion($1.changedIDs) }
        let everything = notes.contains(where: \.refreshesEverything)
        var kept: [ObjectID: ChatRow] = [:]
        if !everything {
            for (id, row) in zip(visibleChatIDs, state.chatList.rows) where !changed.contains(id) { kept[id] = row }
        }
        let selectedID = visibleChatIDs.indices.contains(state.chatList.selected - state.chatList.top)
            ? visibleChatIDs[state.chatList.selected - state.chatList.top] : nil
        var moves = ""
        if let chatController {
            do {
                if let changes = try chatController.update(after: notes) {
                    chats = chatController.objects
                    state.chatList.count = chatController.objects.count
                    // The selection stays on its chat when that chat is among the rows known.
                    // At the top of the list the view stays there (new activity shows above); further down the
                    // selected row keeps its place on screen.
                    if let selectedID, let index = chatController.objects.knownObjectIDs.firstIndex(of: selectedID) {
                        let offset = state.chatList.selected - state.chatList.top
                        state.chatList.top = state.chatList.top == 0 ? 0 : max(0, index - offset)
                        state.chatList.selected = index
                    }
                    state.chatList.selected = min(state.chatList.selected, max(0, state.chatList.count - 1))
                    moves = Self.describe(changes)
                }
            } catch {
                state.message = "chat list: \(error)"
                state.messageIsError = true
            }
        }
        let layout = Layout(width: state.width, height: state.height)
        fillChatRows(visible: Layout.contentRows(layout.chats), reusing: kept)
        if let chat = openChat {
            if chat.isDeleted || chat.faultError != nil {
                closeChat()
                state.message = "the open chat was deleted elsewhere"
            } else if everything || changed.contains(chat.objectID) {
                loadMessages(of: chat, keepSelection: true)
            }
        }
        // The refetch prefetched the first batch's last messages, but rows whose chats did not change keep what
        // they showed: that prefetch going unread is the price of keeping them, not a lever to warn about.
        _ = context.takePrefetchUse()
        guard !state.messageIsError, state.message == nil else { return }
        let inserted = notes.reduce(0) { $0 + $1.inserted.count }
        let updated = notes.reduce(0) { $0 + $1.updated.count }
        let deleted = notes.reduce(0) { $0 + $1.deleted.count }
        let sources = Set(notes.map { $0.source?.name ?? "another process" }).sorted().joined(separator: ", ")
        var summary = "merged from \(sources)\(notes.count == 1 ? "" : " (\(notes.count) saves)"): \(inserted) new, \(updated) changed"
        if deleted > 0 { summary += ", \(deleted) deleted" }
        if !moves.isEmpty { summary += "; list \(moves)" }
        state.message = summary
    }

    /// "2 moved, 1 redrawn" for the status line.
    static func describe(_ changes: ResultsChanges) -> String {
        var parts: [String] = []
        if !changes.moved.isEmpty { parts.append("\(changes.moved.count) moved") }
        if !changes.inserted.isEmpty { parts.append("\(changes.inserted.count) in") }
        if !changes.deleted.isEmpty { parts.append("\(changes.deleted.count) out") }
        if !changes.updated.isEmpty { parts.append("\(changes.updated.count) updated") }
        return parts.joined(separator: ", ")
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

    private func fillMessageRows(visible: Int) {
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

    private func fillMemberRows(visible: Int) {
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
