import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// The browser's update: it owns the store, one context and the fetches behind the panes, carries out each
/// `BrowserAction` through the graph store, and leaves in `state` only plain values for the views.
///
/// ```swift
/// let model = try BrowserModel(path: "fixtures/chat.sqlite", settings: BrowserSettings(), width: 120, height: 40)
/// model.apply(.start)
/// model.apply(.down)
/// print(BrowserView.frame(model.state, activity: model.activity).text)
/// ```
public final class BrowserModel {
    public internal(set) var state: BrowserState
    public let coordinator: PersistentStoreCoordinator
    let context: ObjectContext
    /// The chat list's fetch (batched, prefetching as the settings say), kept by `chatController` across merges.
    var chats: FetchedObjects?
    var chatController: FetchedResultsController?
    /// The IDs of the chat rows on screen, in `state.chatList.rows` order: a merge redraws only the changed ones.
    var visibleChatIDs: [ObjectID] = []
    /// Saves of other contexts (the live writer's) waiting to be merged.
    let inbox: SaveInbox
    /// The simulated incoming-messages writer of `--live`, when running.
    public private(set) var liveWriter: LiveWriter?
    /// The open chat and its messages, newest first.
    var openChat: ManagedObject?
    var messages: FetchedObjects?
    /// The open chat's members, batched like the other lists: only the batches shown are read.
    var members = FetchedObjects.empty
    /// The object the open delete preview is about.
    var pendingDeletion: ManagedObject?
    /// Records the graph's events action by action.
    let activityLog: ActivityLog
    /// What the graph did, for the panel and the SQL log: a value the views draw.
    public var activity: ActivityMonitor { activityLog.monitor }
    /// Called while long work runs, once `state.progress` is set (see `BrowserModel+Editing.swift`): the terminal
    /// draws the frame and reads keys without waiting; returning false cancels a delete preview.
    public var onProgress: ((BrowserState) -> Bool)?

    /// - Parameter activityClock: seconds from any fixed origin, read as each action ends to place it in the
    ///   activity sparklines' per-second buckets; nil (the default) for the monotonic clock, counted from now.
    ///   Tests pass a constant so that the screens do not depend on timing.
    /// - Parameter logCapacity: how many statements the SQL log keeps.
    public init(path: String, settings: BrowserSettings, width: Int, height: Int,
                activityClock: (() -> Double)? = nil, logCapacity: Int = ActivityMonitor.defaultLogCapacity) throws(StoreError) {
        let model: ObjectModel
        do {
            model = try ChatModel.make()
        } catch {
            throw .notAStore(path: path, reason: "the chat model is invalid: \(error)")
        }
        coordinator = try PersistentStoreCoordinator(
            path: path, model: model, options: .init(readOnly: settings.readOnly, createIfMissing: false, busyTimeout: settings.busyTimeout, checkBeforeFirstWrite: true),
            classes: ChatModel.classes)
        context = ObjectContext(coordinator: coordinator, name: "browser")
        context.undoLevels = 50
        context.tracksPrefetchUse = true
        inbox = SaveInbox(coordinator: coordinator, excluding: context.id, includesOtherConnections: false)
        state = BrowserState(width: width, height: height, storeName: (path as NSString).lastPathComponent, settings: settings)
        state.storeIsReadOnly = coordinator.store.isReadOnly
        activityLog = ActivityLog(coordinator: coordinator, clock: activityClock, logCapacity: logCapacity)
    }

    /// Carries out one action; returns what it cost in the object graph, with its warnings.
    @discardableResult
    public func apply(_ action: BrowserAction) -> ActionSummary {
        let start = ContinuousClock.now
        // The action's own work (a preview, a save) is no pane's; reading a pane's rows enters that pane's scope.
        activityLog.begin(action.name, scope: ActivityScope(rootEntity: rootEntity))
        state.message = nil
        state.messageIsError = false
        perform(action)
        refreshStatus()
        let prefetchUse = context.takePrefetchUse()
        activityLog.end(prefetchUse: action.movesWithinFetch ? [] : prefetchUse, duration: ContinuousClock.now - start)
        return activity.lastAction ?? ActionSummary(action: action.name, rootEntity: nil, counts: ActivityCounts(),
                                                            saveSucceeded: nil, warnings: [])
    }

    /// The scope of a pane's reads: its name, the entity it lists, and the settings that change its fetch.
    func scope(of pane: Pane) -> ActivityScope {
        let settings = state.settings
        let rows = Layout.contentRows(pane == .chats ? layout.chats : layout.main)
        // The messages and members panes read at least a screenful per batch (see `messageRequest`).
        let smallest = pane == .chats ? Self.batchSizeOffered : max(Self.batchSizeOffered, rows)
        let batch = settings.batchSize == 0 ? 0 : (pane == .chats ? settings.batchSize : max(settings.batchSize, rows))
        func levers(_ keyPaths: [String]) -> ActivityScope.Levers {
            ActivityScope.Levers(
                prefetchKeyPaths: keyPaths, prefetchIsOn: settings.prefetch != .off, prefetchLabel: settings.prefetch.label,
                derivedCounts: settings.derivedCounts, batchSize: batch, smallestBatchSize: smallest,
                prefetchKey: KeyTable.keyLabel(for: .togglePrefetch), countsKey: KeyTable.keyLabel(for: .toggleDerived),
                batchKey: KeyTable.keyLabel(for: .cycleBatch))
        }
        switch pane {
        case .chats: return ActivityScope(pane: "chat list", rootEntity: "Chat", levers: levers(Self.chatListPrefetch))
        case .messages: return ActivityScope(pane: "messages", rootEntity: "Message", levers: levers(Self.messagesPrefetch))
        case .members: return ActivityScope(pane: "members", rootEntity: "ChatMember", levers: levers(Self.membersPrefetch))
        case .sqlLog: return ActivityScope()
        }
    }

    /// The smallest batch size `b` offers.
    static let batchSizeOffered = BrowserSettings.batchSizes.first { $0 > 0 } ?? 20

    /// The action a key asks for, given what is on screen: the key table of the mode the screen is in (an overlay,
    /// the search field, a window too small) takes keys first.
    public func action(for key: Key) -> BrowserAction? {
        if case .resize(let width, let height) = key { return .resize(width: width, height: height) }
        let mode = KeyMode(state)
        // A window too small shows no pane: only quitting (which asks first when changes are unsaved) is taken,
        // and only when no question is up that could not be seen.
        if mode == .tooSmall, state.overlay != .none { return nil }
        guard let keys = KeyTable.keys(for: mode) else { return KeyTable.action(for: key) }
        return keys.action(for: key)
    }

    /// The entity the focused pane lists (the panel names prefetch key paths from it).
    var rootEntity: String? {
        switch state.focus {
        case .chats: "Chat"
        case .messages: "Message"
        case .members: "ChatMember"
        case .sqlLog: nil
        }
    }

    private func perform(_ action: BrowserAction) {
        switch action {
        case .start:
            do {
                try coordinator.startWatchingOtherConnections()
            } catch {
                state.message = "changes from other processes will not be shown: \(error)"
                state.messageIsError = true
            }
            reloadChats()
        case .merge:
            mergePendingChanges()
        case .resize(let width, let height):
            state.width = width
            state.height = height
            fillVisibleRows()
        case .up where state.overlay == .help: scrollHelp(by: -1)
        case .down where state.overlay == .help: scrollHelp(by: 1)
        case .pageUp where state.overlay == .help: scrollHelp(by: -OverlayView.helpRowsShown(state))
        case .pageDown where state.overlay == .help: scrollHelp(by: OverlayView.helpRowsShown(state))
        case .up where isShowingSQLDetail: scrollSQLDetail(by: -1)
        case .down where isShowingSQLDetail: scrollSQLDetail(by: 1)
        case .pageUp where isShowingSQLDetail: scrollSQLDetail(by: -max(1, state.height - 8))
        case .pageDown where isShowingSQLDetail: scrollSQLDetail(by: max(1, state.height - 8))
        case .open where state.focus == .sqlLog: showSQLDetail()
        case .up: move(by: -1)
        case .down: move(by: 1)
        case .pageUp: move(by: -pageSize)
        case .pageDown: move(by: pageSize)
        case .top: move(by: Int.min / 2)
        case .bottom: move(by: Int.max / 2)
        case .open: openSelectedChat()
        case .back: goBack()
        case .nextPane: cycleFocus(by: 1)
        case .previousPane: cycleFocus(by: -1)
        case .members: toggleMembers()
        case .beginSearch:
            state.chatList.searchBefore = state.chatList.search
            state.overlay = .search(state.chatList.search)
        case .refine:
            if case .search(let text) = state.overlay, text != state.chatList.search { applySearch(text) }
        case .type(let character):
            if case .search(let text) = state.overlay { state.overlay = .search(text + String(character)) }
        case .erase:
            if case .search(let text) = state.overlay { state.overlay = .search(String(text.dropLast())) }
        case .keepSearch:
            if case .search(let text) = state.overlay { perform(.search(text)) }
        case .search(let text):
            state.overlay = .none
            if text != state.chatList.search { applySearch(text) }
            state.message = text.isEmpty ? "search cleared" : "\(Self.matching(state.chatList.count)) '\(text)'"
        case .delete: previewDelete()
        case .confirm: confirm()
        case .cancel:
            if case .search = state.overlay, state.chatList.search != state.chatList.searchBefore {
                // Esc leaves the list as it was before the field opened.
                applySearch(state.chatList.searchBefore)
            }
            if state.overlay == .none { goBack() } else { state.overlay = .none }
        case .save: save()
        case .undo: undo()
        case .redo: redo()
        case .togglePrefetch:
            state.settings.prefetch = state.settings.prefetch.next
            reloadAll()
            state.message = "prefetch: \(state.settings.prefetch.label) (rows already read come from the row cache; x empties the row cache to see it cold)"
        case .toggleBatchMode:
            state.settings.batchingMode = state.settings.batchingMode == .windowed ? .faithful : .windowed
            reloadAll()
            state.message = state.settings.batchingLabel
        case .toggleDerived:
            state.settings.derivedCounts.toggle()
            reloadAll()
            state.message = state.settings.derivedCounts ? "member counts: derived (stored)" : "member counts: counting the members relationship"
        case .toggleColumns:
            state.settings.drawnColumnsOnly.toggle()
            reloadAll()
            state.message = state.settings.drawnColumnsOnly
                ? "columns: only those drawn (partial objects; reading another property reads the rest of the row)"
                : "columns: whole rows"
        case .cycleBatch:
            state.settings.batchSize = state.settings.nextBatchSize
            reloadAll()
            state.message = state.settings.batchingLabel
        case .batch(let size):
            state.settings.batchSize = size
            reloadAll()
            state.message = state.settings.batchingLabel
        case .clearCache:
            coordinator.rowCache.removeAll()
            for object in context.registeredObjects where !object.isInserted { context.refresh(object, mergeChanges: true) }
            reloadAll()
            state.message = "row cache emptied: the rows on screen were read again"
        case .resetCounters:
            coordinator.events.resetCounters()
            activityLog.reset()
            state.message = "counters reset"
        case .explain: explainSelected()
        case .help:
            state.overlay = state.overlay == .help ? .none : .help
            state.helpTop = 0
        case .quit:
            if context.hasChanges {
                state.overlay = .confirmQuit
            } else {
                state.quitRequested = true
            }
        case .saveAndQuit:
            state.overlay = .none
            save()
            // A refused or failed save leaves its message up and the browser open.
            if !state.messageIsError, !context.hasChanges { state.quitRequested = true }
        case .click(let row, let column): click(row: row, column: column)
        case .scrollUp(let row, let column): scroll(by: -3, row: row, column: column)
        case .scrollDown(let row, let column): scroll(by: 3, row: row, column: column)
        }
    }

    var layout: Layout { Layout(state) }

    /// Shows `text` on the status line until the next action (what the command line set up, say).
    public func announce(_ text: String) {
        state.message = text
        state.messageIsError = false
    }

    /// Whether the context holds changes not saved yet (quitting asks first).
    public var hasUnsavedChanges: Bool { context.hasChanges }

    /// Ctrl-C: quits like `q`, asking first when changes are unsaved; a second Ctrl-C at that question quits without
    /// saving. Returns whether the browser should end now.
    public func interrupt() -> Bool {
        guard hasUnsavedChanges, state.overlay != .confirmQuit else { return true }
        apply(.quit)
        return false
    }

    /// Whether anything waits to be merged: a save of another context, or another process's commit (one
    /// `PRAGMA data_version`). The browser asks between keys and runs `.merge` when it is true.
    public func hasPendingChanges() -> Bool {
        if let error = liveWriter?.takeError() {
            state.message = "live writer: a delivery failed: \(error)"
            state.messageIsError = true
        }
        return !inbox.isEmpty || coordinator.hasChangesFromOtherConnections()
    }

    /// Starts the simulated incoming-messages writer (`--live`): a background context delivering `rate` messages a
    /// second across the chats.
    public func startLiveWriter(rate: Double = 3, seed: UInt64 = 1) {
        guard liveWriter == nil, !coordinator.store.isReadOnly else { return }
        liveWriter = LiveWriter(coordinator: coordinator, rate: rate, seed: seed)
        state.live = true
    }

    public func stopLiveWriter() {
        liveWriter?.stop()
        liveWriter = nil
        state.live = false
    }

    private func scrollHelp(by rows: Int) {
        let last = max(0, KeyTable.helpRows().count - OverlayView.helpRowsShown(state))
        state.helpTop = max(0, min(last, state.helpTop + rows))
    }

    private var pageSize: Int {
        max(1, (state.focus == .chats ? Layout.chatsShown(layout.chats) : Layout.contentRows(layout.main)) - 1)
    }

    /// Moves the focus `step` panes on (1 for Tab, -1 for Shift-Tab), round the panes on screen.
    private func cycleFocus(by step: Int) {
        var order: [Pane] = [.chats]
        if state.openChat != nil { order.append(state.showMembers ? .members : .messages) }
        order.append(.sqlLog)
        let position = order.firstIndex(of: state.focus) ?? 0
        state.focus = order[((position + step) % order.count + order.count) % order.count]
    }

    private func goBack() {
        switch state.focus {
        case .chats:
            if !state.chatList.search.isEmpty { perform(.search("")) }
        case .messages, .members, .sqlLog:
            state.focus = .chats
            state.explained = nil
        }
    }

    private func click(row: Int, column: Int) {
        let layout = self.layout
        if layout.chats.contains(row: row, column: column), row > layout.chats.row {
            state.focus = .chats
            let index = state.chatList.top + (row - layout.chats.row - 1) / ChatListView.linesPerChat
            if index < state.chatList.top + state.chatList.rows.count { move(by: index - state.chatList.selected) }
        } else if layout.main.contains(row: row, column: column), let open = state.openChat {
            state.focus = state.showMembers ? .members : .messages
            let line = row - layout.main.row
            if state.showMembers {
                let index = open.memberTop + line - 1
                if line > 0, index < members.count { move(by: index - open.memberSelected) }
            } else if let index = MessagesView.messageIndex(state, height: layout.main.height, line: line) {
                move(by: open.selected - index) // the messages pane moves toward index 0 (newer) on +1
            }
        } else if layout.sqlLog.contains(row: row, column: column), row > layout.sqlLog.row {
            state.focus = .sqlLog
            state.sqlSelected = min(max(0, activity.sqlLog.count - 1), row - layout.sqlLog.row - 1)
            state.explained = nil
        }
    }

    private func scroll(by delta: Int, row: Int, column: Int) {
        let layout = self.layout
        if layout.chats.contains(row: row, column: column) {
            state.focus = .chats
        } else if layout.main.contains(row: row, column: column), state.openChat != nil {
            state.focus = state.showMembers ? .members : .messages
        } else if layout.sqlLog.contains(row: row, column: column) {
            state.focus = .sqlLog
        }
        move(by: delta)
    }

    /// "1 chat matches", "12 chats match".
    static func matching(_ count: Int) -> String {
        ActivityFormat.count(count, "chat") + (count == 1 ? " matches" : " match")
    }

    /// Whether the search field holds text the list is not filtered by yet: the terminal loop sends `.refine`
    /// once typing pauses.
    public var searchIsPending: Bool {
        if case .search(let text) = state.overlay { text != state.chatList.search } else { false }
    }

    /// Filters the chat list by `text` (titles and members' names), from the top; the open chat closes, as it may
    /// no longer be in the list.
    private func applySearch(_ text: String) {
        state.chatList.search = text
        state.chatList.selected = 0
        state.chatList.top = 0
        if openChat != nil { closeChat() }
        reloadChats()
    }

    private var isShowingSQLDetail: Bool {
        if case .sqlDetail = state.overlay { true } else { false }
    }

    /// The selected log row's statement in full, with its query plan.
    private func showSQLDetail() {
        let entries = activity.sqlLog
        guard entries.indices.contains(state.sqlSelected) else {
            state.message = "no statement selected"
            return
        }
        let entry = entries[state.sqlSelected]
        // A plan is asked for reads only; the store explains without running the statement.
        let plan = try? coordinator.explain(entry.sql, arguments: entry.arguments)
        state.overlay = .sqlDetail(SQLDetail(entry: entry, queryPlan: plan))
    }

    private func scrollSQLDetail(by rows: Int) {
        guard case .sqlDetail(var detail) = state.overlay else { return }
        let width = min(state.width - 4, 104) - 4
        let last = SQLDetailView.lastTop(detail, width: width, height: max(3, state.height - 4))
        detail.top = max(0, min(last, detail.top + rows))
        state.overlay = .sqlDetail(detail)
    }

    private func explainSelected() {
        let entries = activity.sqlLog
        guard state.sqlSelected < entries.count else {
            state.message = "no statement selected: Tab to the SQL log first"
            return
        }
        let entry = entries[state.sqlSelected]
        do {
            state.explained = try coordinator.explain(entry.sql, arguments: entry.arguments)
        } catch {
            state.message = "explain: \(error)"
            state.messageIsError = true
        }
    }

    private func refreshStatus() {
        state.undoName = context.canUndo ? context.undoActionName : nil
        state.redoName = context.canRedo ? context.redoActionName : nil
        var parts: [String] = []
        let inserted = context.insertedObjects.count
        let deleted = context.deletedObjects.count
        let updated = context.updatedObjects.count
        if inserted > 0 { parts.append("\(ActivityFormat.count(inserted)) new") }
        if updated > 0 { parts.append("\(ActivityFormat.count(updated)) changed") }
        if deleted > 0 { parts.append("\(ActivityFormat.count(deleted)) deleted") }
        parts += context.pendingUndoNames.map { "undo of '\($0)'" }
        state.pending = parts.isEmpty ? nil : parts.joined(separator: ", ")
        state.sqlSelected = min(state.sqlSelected, max(0, activity.sqlLog.count - 1))
    }
}

