import ChatFixture
import Foundation
import GraphStore
import Terminal

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
    public let activity: ActivityLog
    /// Called while long work runs, once `state.progress` is set (see `BrowserModel+Editing.swift`): the terminal
    /// draws the frame and reads keys without waiting; returning false cancels a delete preview.
    public var onProgress: ((BrowserState) -> Bool)?

    /// - Parameter activityClock: seconds from any fixed origin, read as each action ends to place it in the
    ///   activity sparklines' per-second buckets; nil (the default) for the monotonic clock, counted from now.
    ///   Tests pass a constant so that the screens do not depend on timing.
    public init(path: String, settings: BrowserSettings, width: Int, height: Int,
                activityClock: (() -> Double)? = nil) throws(StoreError) {
        let model: ObjectModel
        do {
            model = try ChatModel.make()
        } catch {
            throw .notAStore(path: path, reason: "the chat model is invalid: \(error)")
        }
        coordinator = try PersistentStoreCoordinator(
            path: path, model: model, options: .init(readOnly: settings.readOnly, createIfMissing: false, checkBeforeFirstWrite: true),
            classes: ChatModel.classes)
        context = ObjectContext(coordinator: coordinator, name: "browser")
        context.undoLevels = 50
        context.tracksPrefetchUse = true
        inbox = SaveInbox(coordinator: coordinator, excluding: context.id, includesOtherConnections: false)
        state = BrowserState(width: width, height: height, storeName: (path as NSString).lastPathComponent, settings: settings)
        state.storeIsReadOnly = coordinator.store.isReadOnly
        activity = ActivityLog(coordinator: coordinator, clock: activityClock)
    }

    /// Carries out one action; returns what it cost in the object graph.
    @discardableResult
    public func apply(_ action: BrowserAction) -> ActionCost {
        let before = coordinator.events.counters.total
        let start = ContinuousClock.now
        activity.begin(action.name, rootEntity: rootEntity)
        state.message = nil
        state.messageIsError = false
        perform(action)
        refreshStatus()
        let cost = ActionCost(action: action.name, totals: coordinator.events.counters.total.difference(since: before),
                              duration: ContinuousClock.now - start)
        activity.end(prefetchUse: context.takePrefetchUse())
        return cost
    }

    /// The action a key asks for, given what is on screen: overlays and the search field take keys first.
    public func action(for key: Key) -> BrowserAction? {
        if case .resize(let width, let height) = key { return .resize(width: width, height: height) }
        switch state.overlay {
        case .deletePreview:
            switch key {
            case .character("y"), .enter: return .confirm
            case .character("n"), .escape: return .cancel
            default: return nil
            }
        case .confirmQuit:
            switch key {
            case .character("y"): return .confirm
            case .character("n"), .escape: return .cancel
            default: return nil
            }
        case .help:
            // The help scrolls when the window is too short for it; any other key closes it.
            switch key {
            case .up, .character("k"): return .up
            case .down, .character("j"): return .down
            case .pageUp: return .pageUp
            case .pageDown, .character(" "): return .pageDown
            default: return .cancel
            }
        case .search(let text):
            switch key {
            case .enter: return .search(text)
            case .escape: return .cancel
            case .backspace: return .erase
            case .character(let character): return .type(character)
            default: return nil
            }
        case .none:
            return KeyTable.action(for: key)
        }
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
            try? coordinator.startWatchingOtherConnections()
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
        case .up: move(by: -1)
        case .down: move(by: 1)
        case .pageUp: move(by: -pageSize)
        case .pageDown: move(by: pageSize)
        case .top: move(by: Int.min / 2)
        case .bottom: move(by: Int.max / 2)
        case .open: openSelectedChat()
        case .back: goBack()
        case .nextPane: cycleFocus()
        case .members: toggleMembers()
        case .beginSearch: state.overlay = .search(state.chatList.search)
        case .type(let character):
            if case .search(let text) = state.overlay { state.overlay = .search(text + String(character)) }
        case .erase:
            if case .search(let text) = state.overlay { state.overlay = .search(String(text.dropLast())) }
        case .search(let text):
            state.overlay = .none
            state.chatList.search = text
            state.chatList.selected = 0
            state.chatList.top = 0
            reloadChats()
            state.message = text.isEmpty ? "search cleared" : "\(state.chatList.count) chats match '\(text)'"
        case .delete: previewDelete()
        case .confirm: confirm()
        case .cancel:
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
            coordinator.rowCache.resetStatistics()
            activity.reset()
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
        case .click(let row, let column): click(row: row, column: column)
        case .scrollUp(let row, let column): scroll(by: -3, row: row, column: column)
        case .scrollDown(let row, let column): scroll(by: 3, row: row, column: column)
        }
    }

    private var layout: Layout { Layout(width: state.width, height: state.height) }

    /// Whether anything waits to be merged: a save of another context, or another process's commit (one
    /// `PRAGMA data_version`). The browser asks between keys and runs `.merge` when it is true.
    public func hasPendingChanges() -> Bool {
        !inbox.isEmpty || coordinator.hasChangesFromOtherConnections()
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
        max(1, Layout.contentRows(state.focus == .chats ? layout.chats : layout.main) - 1)
    }

    private func cycleFocus() {
        var order: [Pane] = [.chats]
        if state.openChat != nil { order.append(state.showMembers ? .members : .messages) }
        order.append(.sqlLog)
        let position = order.firstIndex(of: state.focus) ?? 0
        state.focus = order[(position + 1) % order.count]
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
            let index = state.chatList.top + row - layout.chats.row - 1
            if index < state.chatList.count { move(by: index - state.chatList.selected) }
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
            state.sqlSelected = min(max(0, activity.entries.count - 1), row - layout.sqlLog.row - 1)
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

    private func explainSelected() {
        let entries = activity.entries
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
        if inserted > 0 { parts.append("\(inserted) new") }
        if updated > 0 { parts.append("\(updated) changed") }
        if deleted > 0 { parts.append("\(deleted) deleted") }
        parts += context.pendingUndoNames.map { "undo of '\($0)'" }
        state.pending = parts.isEmpty ? nil : parts.joined(separator: ", ")
        state.sqlSelected = min(state.sqlSelected, max(0, activity.entries.count - 1))
    }
}

/// What one action cost: the graph's counters over it and its wall time.
public struct ActionCost: Sendable {
    public let action: String
    public let totals: GraphCounters.Totals
    public let duration: Duration
}
