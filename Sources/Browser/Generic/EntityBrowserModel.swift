import Foundation
import GraphStore
import TerminalText

/// The entity browser's update, for a store whose model is not the chat model: it owns the store's context and the
/// fetches behind the panes (the entities with their counts, a list of objects, one object), carries out each
/// `EntityBrowserAction` through the graph store, and leaves in `state` only plain values for the views. The
/// activity panel and the SQL log are the chat browser's, fed the same way.
///
/// ```swift
/// let store = try ForeignStore.open(path: "Cars.sqlite", model: try ForeignModel.load(path: "Cars.xcdatamodeld"),
///                                   writable: false, settings: BrowserSettings())
/// let browser = EntityBrowserModel(store: store, settings: BrowserSettings(), width: 120, height: 40)
/// browser.apply(.browser(.start))
/// browser.apply(.entity("Person"))
/// print(EntityBrowserView.frame(browser.state, activity: browser.activity).text)
/// ```
public final class EntityBrowserModel {
    public internal(set) var state: EntityBrowserState
    public let coordinator: PersistentStoreCoordinator
    let context: ObjectContext
    let details: ModelFileDetails
    var model: ObjectModel { coordinator.model }
    /// The steps from an entity to what the main pane shows (empty until an entity is opened).
    var path: [PathLevel] = []
    /// Objects per entity (with its sub-entities'), counted as the entities pane shows them.
    var entityCounts: [String: Int] = [:]
    /// Goes up with every change of the graph (a delete, a save, an undo): lists read before are read again when
    /// shown, counts counted again.
    var generation = 0
    /// The object the open delete preview is about.
    var pendingDeletion: ManagedObject?
    let valueSetting: ValueText.Setting
    let activityLog: ActivityLog
    public var activity: ActivityMonitor { activityLog.monitor }
    /// Called while long work runs once `state.progress` is set: the terminal draws and reads keys; false cancels
    /// a delete preview.
    public var onProgress: ((EntityBrowserState) -> Bool)?

    /// - Parameter timeZone: the zone dates are shown in (the local one; tests pass a fixed one).
    /// - Parameter activityClock: as `BrowserModel`'s: seconds from a fixed origin for the sparklines.
    public init(store: ForeignStore, settings: BrowserSettings, width: Int, height: Int, timeZone: TimeZone = .current,
                activityClock: (() -> Double)? = nil, logCapacity: Int = ActivityMonitor.defaultLogCapacity) {
        coordinator = store.coordinator
        details = store.model.details
        context = ObjectContext(coordinator: coordinator, name: "browser")
        context.undoLevels = 50
        context.tracksPrefetchUse = true
        let path = coordinator.store.path
        state = EntityBrowserState(width: width, height: height, storeName: (path as NSString).lastPathComponent, settings: settings)
        state.storeIsReadOnly = coordinator.store.isReadOnly
        let storeName = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        valueSetting = ValueText.Setting(
            timeZone: timeZone,
            externalDataFolder: ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(".\(storeName)_SUPPORT/_EXTERNAL_DATA"))
        activityLog = ActivityLog(coordinator: coordinator, clock: activityClock, logCapacity: logCapacity)
        state.entities.rows = coordinator.model.entities.map { entity in
            EntityRow(name: entity.name, depth: coordinator.model.lineage(of: entity).count - 1, isAbstract: entity.isAbstract, count: nil)
        }
    }

    /// Carries out one action; returns what it cost in the object graph, with its warnings.
    @discardableResult
    public func apply(_ action: EntityBrowserAction) -> ActionSummary {
        let start = ContinuousClock.now
        activityLog.begin(action.name, scope: ActivityScope(rootEntity: focusedEntity))
        state.message = nil
        state.messageIsError = false
        perform(action)
        refreshStatus()
        let prefetchUse = context.takePrefetchUse()
        let moves = if case .browser(let shared) = action { shared.movesWithinFetch } else { false }
        activityLog.end(prefetchUse: moves ? [] : prefetchUse, duration: ContinuousClock.now - start)
        return activity.lastAction ?? ActionSummary(action: action.name, rootEntity: nil, counts: ActivityCounts(),
                                                    saveSucceeded: nil, warnings: [])
    }

    /// The action a key asks for, given what is on screen: an overlay's keys first, as in the chat browser.
    public func action(for key: Key) -> EntityBrowserAction? {
        if case .resize(let width, let height) = key { return .browser(.resize(width: width, height: height)) }
        let mode = keyMode
        if mode == .tooSmall, state.overlay != .none { return nil }
        guard let keys = KeyTable.keys(for: mode) else { return EntityKeyTable.action(for: key) }
        return keys.action(for: key).map(EntityBrowserAction.browser)
    }

    /// The mode the keys are in: an overlay's, a window too small, or the normal one.
    var keyMode: KeyMode {
        if Layout.isTooSmall(width: state.width, height: state.height) { return .tooSmall }
        switch state.overlay {
        case .none: return .normal
        case .help: return .help
        case .deletePreview: return .deletePreview
        case .confirmQuit: return .confirmQuit
        case .search: return .search
        case .sqlDetail: return .sqlDetail
        }
    }

    /// The layout of the panes as they will be drawn: the main pane is open while the path has a step.
    var layout: EntityLayout { EntityLayout(width: state.width, height: state.height, mainIsOpen: !path.isEmpty) }

    /// The entity the focused pane shows (warnings name key paths from it).
    var focusedEntity: String? {
        switch state.focus {
        case .entities, .sqlLog: nil
        case .objects, .object: currentEntity?.name
        }
    }

    /// The entity of what the main pane shows.
    var currentEntity: Entity? {
        switch path.last {
        case .list(let list): list.entity
        case .object(let shown): shown.object.entity
        case nil: nil
        }
    }

    var currentList: ListLevel? {
        if case .list(let list) = path.last { list } else { nil }
    }

    var currentObject: ObjectLevel? {
        if case .object(let shown) = path.last { shown } else { nil }
    }

    /// Shows `text` on the status line until the next action.
    public func announce(_ text: String) {
        state.message = text
        state.messageIsError = false
    }

    public var hasUnsavedChanges: Bool { context.hasChanges }

    /// Ctrl-C: as `q`, asking first when changes are unsaved; a second Ctrl-C at that question quits. Returns
    /// whether the browser should end now.
    public func interrupt() -> Bool {
        guard hasUnsavedChanges, state.overlay != .confirmQuit else { return true }
        apply(.browser(.quit))
        return false
    }

    private func perform(_ action: EntityBrowserAction) {
        switch action {
        case .browser(let shared): perform(shared)
        case .entity(let name): openEntity(named: name)
        case .cycleSort: changeSort { list in nextSort(after: list) }
        case .sort(let key, let ascending): changeSort { list in
            if key == "SELF" || key == "key" { return (.key, ascending) }
            return (.attribute(key), ascending)
        }
        case .reverseSort: changeSort { list in (list.sort, !list.ascending) }
        case .cycleColumns: changeColumns { list in
            list.chosenColumns = nil
            list.columnOffset += 1
        }
        case .columns(let keys): changeColumns { list in
            list.chosenColumns = keys.isEmpty ? nil : keys
            list.columnOffset = 0
        }
        case .filter(let text): applyFilter(text)
        case .follow(let name): follow(name)
        }
    }

    private func perform(_ action: BrowserAction) {
        switch action {
        case .start:
            fillVisibleRows()
        case .resize(let width, let height):
            state.width = width
            state.height = height
            fillVisibleRows()
        case .up where state.overlay == .help: scrollHelp(by: -1)
        case .down where state.overlay == .help: scrollHelp(by: 1)
        case .pageUp where state.overlay == .help: scrollHelp(by: -helpRowsShown)
        case .pageDown where state.overlay == .help: scrollHelp(by: helpRowsShown)
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
        case .open: openSelected()
        case .back: goBack()
        case .nextPane: cycleFocus(by: 1)
        case .previousPane: cycleFocus(by: -1)
        case .beginSearch:
            guard let list = currentList, state.focus == .objects else {
                state.message = "/ filters a list of objects: open an entity first"
                return
            }
            state.overlay = .search(list.filter)
        case .type(let character):
            if case .search(let text) = state.overlay { state.overlay = .search(text + String(character)) }
        case .erase:
            if case .search(let text) = state.overlay { state.overlay = .search(String(text.dropLast())) }
        case .keepSearch, .refine:
            // A predicate half typed does not parse: it applies on Enter only.
            if action == .keepSearch, case .search(let text) = state.overlay {
                state.overlay = .none
                applyFilter(text)
            }
        case .search(let text):
            state.overlay = .none
            applyFilter(text)
        case .cancel:
            if state.overlay == .none { goBack() } else { state.overlay = .none }
        case .members:
            state.message = "no members here: Enter on a to-many lists its objects"
        case .delete: previewDelete()
        case .confirm: confirm()
        case .save: save()
        case .undo: undo()
        case .redo: redo()
        case .togglePrefetch:
            state.settings.prefetch = state.settings.prefetch.next
            leverChanged("prefetch of the to-ones shown: \(state.settings.prefetch.label)", appliesTo: .objects)
            if let list = currentList, !columns(of: list).contains(where: { $0.kind == .toOne }) {
                state.message = "prefetch of the to-ones shown: \(state.settings.prefetch.label) (this list shows no to-one: v brings them into view)"
            }
        case .toggleBatchMode:
            state.settings.batchingMode = state.settings.batchingMode == .windowed ? .faithful : .windowed
            leverChanged("object lists: \(state.settings.batchingLabel)", appliesTo: .objects)
        case .cycleBatch:
            state.settings.batchSize = state.settings.nextBatchSize
            leverChanged("object lists: \(state.settings.batchingLabel)", appliesTo: .objects)
        case .batch(let size):
            state.settings.batchSize = size
            leverChanged("object lists: \(state.settings.batchingLabel)", appliesTo: .objects)
        case .toggleDerived:
            state.settings.derivedCounts.toggle()
            leverChanged("to-many counts in the object pane: \(state.settings.derivedCounts ? "on, one COUNT each" : "off")",
                         appliesTo: .object)
        case .toggleColumns:
            state.message = "columns: this browser reads whole rows (the object pane shows every property)"
        case .clearCache:
            coordinator.rowCache.removeAll()
            for object in context.registeredObjects where !object.isInserted { context.refresh(object, mergeChanges: true) }
            generation += 1
            fillVisibleRows()
            state.message = "row cache emptied: what is on screen was read again"
        case .resetCounters:
            coordinator.events.resetCounters()
            activityLog.reset()
            state.message = "counters reset"
        case .merge:
            state.message = "nothing to merge: this browser does not watch other writers"
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
            if !state.messageIsError, !context.hasChanges { state.quitRequested = true }
        case .click(let row, let column): click(row: row, column: column)
        case .scrollUp(let row, let column): scroll(by: -3, row: row, column: column)
        case .scrollDown(let row, let column): scroll(by: 3, row: row, column: column)
        }
    }

    /// After a lever changed: the list shown is read again with it; where it means nothing the message says so.
    private func leverChanged(_ description: String, appliesTo pane: EntityPane) {
        let shown: EntityPane? = switch path.last {
        case .list: .objects
        case .object: .object
        case nil: nil
        }
        if shown == pane {
            fillVisibleRows()
            state.message = description
        } else {
            state.message = description + (pane == .objects
                ? " (it applies to lists of objects; nothing shown now is one)"
                : " (it applies to the object pane; nothing shown now is one)")
        }
    }

    // MARK: panes and focus

    /// The panes Tab goes round: the entities, the main pane when something is open, the SQL log.
    private func cycleFocus(by step: Int) {
        var order: [EntityPane] = [.entities]
        switch path.last {
        case .list: order.append(.objects)
        case .object: order.append(.object)
        case nil: break
        }
        order.append(.sqlLog)
        let position = order.firstIndex(of: state.focus) ?? 0
        state.focus = order[((position + step) % order.count + order.count) % order.count]
        state.explained = nil
    }

    /// The main pane's focus for what it shows.
    var mainFocus: EntityPane? {
        switch path.last {
        case .list: .objects
        case .object: .object
        case nil: nil
        }
    }

    private func goBack() {
        switch state.focus {
        case .entities:
            state.message = "the entities are the top: Enter opens one"
        case .sqlLog:
            state.focus = mainFocus ?? .entities
            state.explained = nil
        case .objects, .object:
            path.removeLast()
            if path.isEmpty {
                state.main = nil
                state.breadcrumb = []
                state.focus = .entities
            } else {
                state.focus = mainFocus ?? .entities
                fillVisibleRows()
            }
        }
    }

    private var pageSize: Int {
        let layout = self.layout
        switch state.focus {
        case .entities: return max(1, layout.entityRows - 1)
        case .objects: return max(1, layout.listRows - 1)
        case .object: return max(1, layout.objectRows - 1)
        case .sqlLog: return max(1, layout.sqlLog.height - 2)
        }
    }

    /// Moves the focused pane's selection, keeping it in view, and reads the rows now visible.
    func move(by delta: Int) {
        func clamp(_ value: Int, _ count: Int) -> Int { max(0, min(count - 1, value)) }
        func step(_ value: Int) -> Int {
            delta > 0 ? (value > Int.max / 2 - delta ? Int.max / 2 : value + delta) : value + delta
        }
        func scrolled(top: Int, selected: Int, rows: Int) -> Int {
            if selected < top { return selected }
            if selected >= top + rows { return selected - rows + 1 }
            return top
        }
        switch state.focus {
        case .entities:
            let count = state.entities.rows.count
            guard count > 0 else { return }
            state.entities.selected = clamp(step(state.entities.selected), count)
            state.entities.top = scrolled(top: state.entities.top, selected: state.entities.selected, rows: layout.entityRows)
        case .objects:
            guard let list = currentList, list.objects.count > 0 else { return }
            list.selected = clamp(step(list.selected), list.objects.count)
            list.top = scrolled(top: list.top, selected: list.selected, rows: layout.listRows)
        case .object:
            guard let shown = currentObject, case .object(let detail) = state.main, !detail.rows.isEmpty else { return }
            shown.selected = clamp(step(shown.selected), detail.rows.count)
            shown.top = scrolled(top: shown.top, selected: shown.selected, rows: layout.objectRows)
        case .sqlLog:
            state.sqlSelected = clamp(step(state.sqlSelected), max(1, activity.sqlLog.count))
            state.explained = nil
        }
        fillVisibleRows()
    }

    /// Enter: opens the selected entity or object, or follows the selected relationship.
    private func openSelected() {
        switch state.focus {
        case .entities:
            guard state.entities.rows.indices.contains(state.entities.selected) else { return }
            openEntity(named: state.entities.rows[state.entities.selected].name)
        case .objects:
            guard let list = currentList, list.selected < list.objects.count else {
                state.message = "no object selected"
                return
            }
            openObject(list.objects.object(at: list.selected))
        case .object:
            guard case .object(let detail) = state.main, detail.rows.indices.contains(detail.selected) else { return }
            let row = detail.rows[detail.selected]
            guard row.kind != .attribute else {
                state.message = "\(row.name) is an attribute: Enter follows relationships"
                return
            }
            follow(row.name)
        case .sqlLog:
            showSQLDetail()
        }
    }

    private func click(row: Int, column: Int) {
        let layout = self.layout
        if layout.entities.contains(row: row, column: column), row > layout.entities.row {
            state.focus = .entities
            let index = state.entities.top + row - layout.entities.row - 1
            if index < state.entities.rows.count { move(by: index - state.entities.selected) }
        } else if layout.main.contains(row: row, column: column), let focus = mainFocus {
            state.focus = focus
            switch path.last {
            case .list(let list):
                let index = list.top + row - layout.main.row - EntityLayout.listHeaderLines
                if row - layout.main.row >= EntityLayout.listHeaderLines, index < list.objects.count { move(by: index - list.selected) }
            case .object(let shown):
                let index = shown.top + row - layout.main.row - EntityLayout.objectHeaderLines
                if row - layout.main.row >= EntityLayout.objectHeaderLines, case .object(let detail) = state.main,
                   index < detail.rows.count { move(by: index - shown.selected) }
            case nil:
                break
            }
        } else if layout.sqlLog.contains(row: row, column: column), row > layout.sqlLog.row {
            state.focus = .sqlLog
            state.sqlSelected = min(max(0, activity.sqlLog.count - 1), row - layout.sqlLog.row - 1)
            state.explained = nil
        }
    }

    private func scroll(by delta: Int, row: Int, column: Int) {
        let layout = self.layout
        if layout.entities.contains(row: row, column: column) {
            state.focus = .entities
        } else if layout.main.contains(row: row, column: column), let focus = mainFocus {
            state.focus = focus
        } else if layout.sqlLog.contains(row: row, column: column) {
            state.focus = .sqlLog
        }
        move(by: delta)
    }

    // MARK: help and the SQL log

    var helpRowsShown: Int { EntityBrowserView.helpRowsShown(state) }

    private func scrollHelp(by rows: Int) {
        let last = max(0, EntityKeyTable.helpRows().count - helpRowsShown)
        state.helpTop = max(0, min(last, state.helpTop + rows))
    }

    private var isShowingSQLDetail: Bool {
        if case .sqlDetail = state.overlay { true } else { false }
    }

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
        guard state.focus == .sqlLog, state.sqlSelected < entries.count else {
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
        var parts: [String] = []
        let inserted = context.insertedObjects.count
        let updated = context.updatedObjects.count
        let deleted = context.deletedObjects.count
        if inserted > 0 { parts.append("\(ActivityFormat.count(inserted)) new") }
        if updated > 0 { parts.append("\(ActivityFormat.count(updated)) changed") }
        if deleted > 0 { parts.append("\(ActivityFormat.count(deleted)) deleted") }
        parts += context.pendingUndoNames.map { "undo of '\($0)'" }
        state.pending = parts.isEmpty ? nil : parts.joined(separator: ", ")
        state.sqlSelected = min(state.sqlSelected, max(0, activity.sqlLog.count - 1))
    }
}
