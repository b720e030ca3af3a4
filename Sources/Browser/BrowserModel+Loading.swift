import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// The fetches behind the panes, and turning the visible part of them into rows.
extension BrowserModel {
    /// The chat list's request: pinned first, then by last message; batched and prefetching per the settings.
    func chatRequest() -> FetchRequest {
        var request = FetchRequest(entityName: "Chat", sortDescriptors: [
            .init("isPinned", ascending: false), .init("lastMessageAt", ascending: false), .init("SELF"),
        ])
        if !state.chatList.search.isEmpty,
           let predicate = try? GraphStore.Predicate(format: "title CONTAINS[cd] %@ OR ANY members.user.name CONTAINS[cd] %@",
                                                     state.chatList.search, state.chatList.search) {
            request.predicate = predicate
        }
        configure(&request, keyPaths: Self.chatListPrefetch, drawn: Self.chatListColumns)
        return request
    }

    /// What each pane's fetch prefetches when prefetching is on: what its rows draw beyond its own objects.
    static let chatListPrefetch = ["lastMessage.sender", "lastMessage.attachments"]
    static let messagesPrefetch = ["sender", "replyTo.sender", "reactions", "attachments"]
    static let membersPrefetch = ["user"]

    /// What each pane's rows draw (`chatRow`, `messageRow`, `memberRow`): the properties its fetch reads when
    /// only drawn columns are read, each prefetched key path's too. A direct or group chat is told by its entity,
    /// which every row carries; a member count by `membersCount` (derived counts) or the relationship. A user is
    /// read with its handle in every pane, though only the chat list draws it ("You:"): users are shared between
    /// the panes, and one the messages pane read must not fault when it becomes a chat's last sender.
    static let chatListColumns = [
        "title", "lastMessageAt", "isPinned", "isMuted", "membersCount", "lastMessage",
        "lastMessage.text", "lastMessage.kind", "lastMessage.sender", "lastMessage.sender.name", "lastMessage.sender.handle",
        "lastMessage.attachments.fileName",
    ]
    static let messageColumns = [
        "text", "kind", "sentAt", "isEdited", "sender", "replyTo",
        "sender.name", "sender.handle", "replyTo.text", "replyTo.kind", "replyTo.sender", "replyTo.sender.name", "replyTo.sender.handle", "reactions.emoji",
        "attachments.fileName",
    ]
    static let memberColumns = ["role", "joinedAt", "user", "user.name", "user.handle"]

    /// A chat's messages, newest first (the pane draws them oldest at the top).
    func messageRequest(for chat: ManagedObject) -> FetchRequest {
        var request = FetchRequest(entityName: "Message",
                                   predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
                                   sortDescriptors: [.init("sentAt", ascending: false), .init("SELF", ascending: false)])
        configure(&request, keyPaths: Self.messagesPrefetch, drawn: Self.messageColumns)
        // A batch is at least the pane's height: opening a chat fetches its first screen in one batch, so the
        // screen costs one statement for the messages with their senders and quotes, one for their reactions and
        // the count, whatever the batch size.
        if request.fetchBatchSize > 0 {
            request.fetchBatchSize = max(request.fetchBatchSize, Layout.contentRows(layout.main))
        }
        return request
    }

    /// Batching and prefetching per the settings, and with only drawn columns on, the properties of `drawn` the
    /// request can read: its own, and those of the key paths it prefetches.
    private func configure(_ request: inout FetchRequest, keyPaths: [String], drawn: [String]) {
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
        guard settings.drawnColumnsOnly else { return }
        // A name through a key path is read only when that key path is prefetched (with prefetching off, the
        // related objects are faults, read whole).
        let prefetched = Set(request.relationshipKeyPathsForPrefetching.flatMap { path in
            let components = path.split(separator: ".")
            return components.indices.map { components[...$0].joined(separator: ".") }
        })
        request.propertiesToFetch = drawn.filter { name in
            guard let dot = name.lastIndex(of: ".") else { return true }
            return prefetched.contains(String(name[..<dot]))
        }
    }

    /// Fetches the chat list again and reads its visible rows (only the list's: the other panes keep theirs).
    func reloadChats() {
        activityLog.enter(scope(of: .chats))
        do {
            let controller = FetchedResultsController(context: context, request: chatRequest())
            // Fetched again where the list stays (after a toggle, a delete, clearing the cache), the first statement
            // reads the rows on screen.
            try controller.performFetch(firstReading: state.chatList.top)
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
        fillChatRows(visible: Layout.contentRows(layout.chats))
    }

    /// Fetches again with the current settings (after a toggle, a delete or an undo) and keeps the selection.
    func reloadAll() {
        reloadChats()
        if let chat = openChat {
            if chat.isDeleted {
                closeChat()
            } else {
                reloadOpenChat(chat)
            }
        }
    }

    /// Reads the open chat's pane on screen again, keeping its selection. Only that pane: with the members showing,
    /// the messages are read again when they show.
    func reloadOpenChat(_ chat: ManagedObject) {
        if state.showMembers {
            messages = nil
            loadMembers(of: chat)
            fillOpenChatRows()
        } else {
            loadMessages(of: chat, keepSelection: true)
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
        activityLog.enter(scope(of: .messages))
        do {
            // Fetched again where the screen stays, the first statement reads the rows on screen.
            let fetched = try context.fetch(messageRequest(for: chat), firstReading: keepSelection ? previous?.bottom ?? 0 : 0)
            messages = fetched
            var open = OpenChatState(title: (chat as? Chat)?.title ?? "", messagesCount: fetched.count)
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
        fillOpenChatRows()
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
            // Messages left unread while the members showed (a reload then) are read now, where they show.
            if messages == nil {
                loadMessages(of: chat, keepSelection: true)
                return
            }
        }
        fillOpenChatRows()
    }

    /// Members through the join entity, their users prefetched (joined unless the settings say otherwise).
    func loadMembers(of chat: ManagedObject) {
        activityLog.enter(scope(of: .members))
        var request = FetchRequest(entityName: "ChatMember",
                                   predicate: .comparison(.init(.key("chat"), .equal, .constant(.object(chat)))),
                                   sortDescriptors: [.init("role"), .init("joinedAt"), .init("SELF")])
        configure(&request, keyPaths: Self.membersPrefetch, drawn: Self.memberColumns)
        // As for messages, a batch is at least the pane's height.
        if request.fetchBatchSize > 0 {
            request.fetchBatchSize = max(request.fetchBatchSize, Layout.contentRows(layout.main))
        }
        do {
            members = try context.fetch(request, firstReading: state.openChat?.memberTop ?? 0)
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
            state.sqlSelected = clamp(step(state.sqlSelected), max(1, activity.sqlLog.count))
            state.explained = nil
        }
        fillVisibleRows()
    }

    /// Reads the rows the panes show now; only these objects are touched, so only their faults fire, each pane's
    /// in its own scope.
    func fillVisibleRows() {
        activityLog.enter(scope(of: .chats))
        fillChatRows(visible: Layout.contentRows(layout.chats))
        fillOpenChatRows()
    }

    /// Reads the open chat's visible messages or members, in that pane's scope.
    func fillOpenChatRows() {
        guard state.openChat != nil else { return }
        if state.showMembers {
            activityLog.enter(scope(of: .members))
            fillMemberRows(visible: Layout.contentRows(layout.main))
        } else {
            activityLog.enter(scope(of: .messages))
            fillMessageRows(visible: Layout.contentRows(layout.main))
        }
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
        activityLog.enter(scope(of: .chats))
        fillChatRows(visible: Layout.contentRows(layout.chats), reusing: kept)
        if let chat = openChat {
            if chat.isDeleted || chat.faultError != nil {
                closeChat()
                state.message = "the open chat was deleted elsewhere"
            } else if everything || changed.contains(chat.objectID) {
                reloadOpenChat(chat)
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
        var summary = "merged from \(sources)\(notes.count == 1 ? "" : " (\(ActivityFormat.count(notes.count)) saves)"): "
            + "\(ActivityFormat.count(inserted)) new, \(ActivityFormat.count(updated)) changed"
        if deleted > 0 { summary += ", \(ActivityFormat.count(deleted)) deleted" }
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
}
