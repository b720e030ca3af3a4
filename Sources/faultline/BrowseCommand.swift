import ArgumentParser
import Browser
import Foundation
import ChatFixture
import GraphStore
import Terminal
import TerminalText

/// `faultline browse [STORE]`: the chat browser in the terminal. With no subcommand, `faultline` does the same on the
/// default chat store.
struct BrowseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Browse a chat store in the terminal, watching faults, the row cache and every SQL statement.",
        discussion: """
            Keys: ? shows them all. j/k or arrows move, Enter opens a chat, m shows its members, d previews and \
            deletes, w saves, u undoes, p/b/c flip prefetching, batching and derived counts, q quits. \
            Without a terminal, use 'faultline trace' for the same screens as text.

            With --model MODEL, a store whose model is not the chat model opens in the entity browser: its \
            entities with their counts, a list of objects (s sorts, S reverses, v changes the columns, / filters \
            with a predicate) and one object, whose relationships Enter follows. It is read-only unless --write.
            """
    )

    @OptionGroup var browser: BrowserOptions
    @OptionGroup var sqlDebug: SQLDebugOptions

    @Flag(help: """
        Run a simulated incoming-messages writer on a background context while browsing: watch the list reorder and \
        the merges. It writes into a temporary copy of the store, removed on quit, unless --live-in-place is given.
        """)
    var live = false

    @Flag(help: "With --live, write the simulated messages (and your saves) into the store itself, not a copy.")
    var liveInPlace = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Messages a second the --live writer delivers.", valueName: "n"))
    var liveRate = 3.0

    func validate() throws {
        if live, browser.readOnly { throw ValidationError("--live writes to the store; it cannot be combined with --read-only") }
        if live, browser.model != nil { throw ValidationError("--live writes chat messages; it goes with the chat store, not with --model") }
        if liveInPlace, !live { throw ValidationError("--live-in-place goes with --live") }
        // The writer pauses 1/rate seconds between deliveries, at most 10 (LiveWriter): slower rates are refused, not
        // quietly raised.
        guard liveRate >= 0.1, liveRate <= 1_000 else { throw ValidationError("--live-rate must be from 0.1 to 1000 messages a second, not \(liveRate)") }
    }

    func run() throws {
        try Self.browse(browser, sqlDebug: sqlDebug, liveRate: live ? liveRate : nil, liveInPlace: liveInPlace)
    }

    /// Milliseconds without a key after which the typed search filters the list.
    static let searchPause = 150

    /// - Parameter liveRate: messages a second for the simulated writer; nil for none.
    /// - Parameter liveInPlace: whether the writer writes into the store itself rather than a temporary copy.
    static func browse(_ options: BrowserOptions, sqlDebug: SQLDebugOptions, liveRate: Double? = nil, liveInPlace: Bool = false) throws {
        // A signal that ends the browser ends the process with its status, once the browser's store, copy and log
        // are let go: closing the store's connections is what removes the -wal and -shm a look made beside it.
        if let signal = try browseUntilEnded(options, sqlDebug: sqlDebug, liveRate: liveRate, liveInPlace: liveInPlace) {
            Foundation.exit(128 + signal)
        }
    }

    /// Browses until quit or an ending signal; returns that signal, if one ended it.
    private static func browseUntilEnded(_ options: BrowserOptions, sqlDebug: SQLDebugOptions, liveRate: Double?, liveInPlace: Bool) throws -> Int32? {
        // Without a usable terminal nothing else is worth doing (not even making the default store, or opening the
        // store).
        do {
            try TerminalScreen.checkUsable()
        } catch {
            throw CommandFailure(error.description)
        }
        if let foreign = try options.foreignModel() {
            return try browseForeign(options, model: foreign, sqlDebug: sqlDebug)
        }
        let original = try options.store ?? DefaultFixture.ensure()
        // --live browses a copy unless told otherwise: the simulated messages do not end up in the user's store.
        let copy = liveRate != nil && !liveInPlace ? try LiveCopy(of: original) : nil
        defer { copy?.remove() }
        let path = copy?.path ?? original
        // The SQL log's destination before the store, so a bad one leaves the store alone.
        if try sqlDebug.effectiveLevel() != nil, sqlDebug.logFile == nil {
            throw CommandFailure("--sql-debug: the browser owns the terminal; give --sql-log FILE for the SQL log")
        }
        try sqlDebug.checkLogFile(notOverwriting: [path])
        // The store first: a bad file is reported before the screen changes.
        let model: BrowserModel
        let settings = try options.settings()
        do {
            model = try BrowserModel(path: path, settings: settings, width: 80, height: 24)
        } catch {
            // A store of another model, given without --model: the entity browser, with the model inside it.
            guard liveRate == nil else { throw CommandFailure(error) }
            return try browseForeign(options, model: options.modelInside(storeAt: path, refusal: error), sqlDebug: sqlDebug)
        }
        if liveRate != nil, model.coordinator.store.isReadOnly {
            throw CommandFailure("\(path): --live writes to the store, which cannot be written (\(model.coordinator.store.readOnlyReason ?? "read-only"))")
        }
        let sink = try sqlDebug.effectiveLevel() == nil ? nil : try sqlDebug.openSink(notOverwriting: [path])
        let log = try sqlDebug.attach(to: model.coordinator, sink: sink)
        defer { model.stopLiveWriter() }
        return try run(model, log: log, afterStart: {
            guard let liveRate else { return }
            model.startLiveWriter(rate: liveRate)
            model.announce(copy == nil
                ? "live: writing into \((original as NSString).lastPathComponent) itself"
                : "live: writing into a copy of \((original as NSString).lastPathComponent), removed on quit (--live-in-place writes into the store)")
        }, beforeExit: {
            model.stopLiveWriter()
            copy?.remove()
        })
    }

    /// The entity browser on a store whose model is not the chat model: read-only unless `--write`.
    private static func browseForeign(_ options: BrowserOptions, model: ForeignModel, sqlDebug: SQLDebugOptions) throws -> Int32? {
        guard let path = options.store else { throw CommandFailure(TraceCommand.storeMissing) }
        if try sqlDebug.effectiveLevel() != nil, sqlDebug.logFile == nil {
            throw CommandFailure("--sql-debug: the browser owns the terminal; give --sql-log FILE for the SQL log")
        }
        try sqlDebug.checkLogFile(notOverwriting: [path])
        let browser: EntityBrowserModel
        let settings = try options.settings()
        do {
            let store = try ForeignStore.open(path: path, model: model, writable: options.write, settings: settings)
            browser = EntityBrowserModel(store: store, settings: settings, width: 80, height: 24)
        } catch {
            throw CommandFailure(error)
        }
        let sink = try sqlDebug.effectiveLevel() == nil ? nil : try sqlDebug.openSink(notOverwriting: [path])
        let log = try sqlDebug.attach(to: browser.coordinator, sink: sink)
        if options.write { Output.writeError(ChosenModel.writeWarning(store: path) + "\n") }
        return try run(browser, log: log, afterStart: {
            if options.write { browser.announce(ChosenModel.writeWarning(store: (path as NSString).lastPathComponent)) }
        }, beforeExit: {})
    }

    /// The terminal loop: draws the browser's frame, reads a key, applies its action, until the browser quits.
    /// `afterStart` runs once the first screen is read (what it announces shows on it); `beforeExit` when a signal
    /// ends the browser at once (the terminal is given back first). Returns that signal, if one ended it.
    private static func run(_ browser: some TerminalBrowser, log: SQLDebugLog?, afterStart: () -> Void, beforeExit: () -> Void) throws -> Int32? {
        let screen: TerminalScreen
        do {
            screen = try TerminalScreen.open()
        } catch {
            throw CommandFailure(error.description)
        }
        defer { screen.close() }
        let size = screen.size
        browser.resize(width: size.width, height: size.height)
        browser.start()
        afterStart()
        var lastKeyAt = ContinuousClock.now
        let progress = ProgressKeys(screen: screen, browser: browser)
        browser.showProgress { progress.show() }
        while !browser.quitRequested {
            screen.draw(browser.frame())
            // While a search is typed, the list follows once typing pauses (a dropped escape sequence is no pause).
            let key = screen.readKey(timeoutMilliseconds: browser.searchIsPending ? Self.searchPause : 250)
            let now = ContinuousClock.now
            if key != nil { lastKeyAt = now }
            if let signal = screen.takePendingSignal(), signal != SIGINT || browser.interrupt() {
                // Ctrl-C with unsaved changes asks first (browser.interrupt); a closed terminal or kill cannot.
                screen.close()
                withExtendedLifetime(log) {}
                beforeExit()
                return signal
            }
            if let key, browser.handle(key) {
                progress.settle()
            }
            if key == nil, browser.searchIsPending, now - lastKeyAt >= .milliseconds(Self.searchPause) { browser.refine() }
            // Between keys (or every quarter second when idle): other contexts' saves and other processes' commits
            // are merged, unless a dialog is open.
            if !browser.dialogIsOpen, browser.hasPendingChanges() { browser.merge() }
        }
        withExtendedLifetime(log) {}
        return nil
    }
}

/// What the terminal loop needs of a browser: the chat browser's or the entity browser's.
protocol TerminalBrowser: AnyObject {
    var quitRequested: Bool { get }
    /// Whether the search field holds text the list is not filtered by yet.
    var searchIsPending: Bool { get }
    /// Whether an overlay is up (no merge runs meanwhile).
    var dialogIsOpen: Bool { get }
    /// The long work under way, while its progress shows.
    var progressWork: WorkProgress.Work? { get }
    func frame() -> Frame
    /// Applies the action `key` asks for; returns whether there was one.
    func handle(_ key: Key) -> Bool
    func resize(width: Int, height: Int)
    func start()
    func refine()
    func interrupt() -> Bool
    func hasPendingChanges() -> Bool
    func merge()
    /// `show` is called while long work shows its progress: it draws and reads keys; false cancels a preview.
    func showProgress(_ show: @escaping () -> Bool)
}

extension BrowserModel: TerminalBrowser {
    var quitRequested: Bool { state.quitRequested }
    var dialogIsOpen: Bool { state.overlay != .none }
    var progressWork: WorkProgress.Work? { state.progress?.work }
    func frame() -> Frame { BrowserView.frame(state, activity: activity) }
    func handle(_ key: Key) -> Bool {
        guard let action = action(for: key) else { return false }
        apply(action)
        return true
    }
    func resize(width: Int, height: Int) { apply(.resize(width: width, height: height)) }
    func start() { apply(.start) }
    func refine() { apply(.refine) }
    func merge() { apply(.merge) }
    func showProgress(_ show: @escaping () -> Bool) { onProgress = { _ in show() } }
}

extension EntityBrowserModel: TerminalBrowser {
    var quitRequested: Bool { state.quitRequested }
    /// The filter is a predicate: it applies on Enter, never half typed.
    var searchIsPending: Bool { false }
    var dialogIsOpen: Bool { state.overlay != .none }
    var progressWork: WorkProgress.Work? { state.progress?.work }
    func frame() -> Frame { EntityBrowserView.frame(state, activity: activity) }
    func handle(_ key: Key) -> Bool {
        guard let action = action(for: key) else { return false }
        apply(action)
        return true
    }
    func resize(width: Int, height: Int) { apply(.browser(.resize(width: width, height: height))) }
    func start() { apply(.browser(.start)) }
    func refine() {}
    /// The entity browser does not watch other writers.
    func hasPendingChanges() -> Bool { false }
    func merge() {}
    func showProgress(_ show: @escaping () -> Bool) { onProgress = { _ in show() } }
}

/// A temporary copy of a store for `--live` to write into, made with SQLite's backup (a consistent copy even while
/// another process writes), and removed with its `-wal` and `-shm` files when the browser ends.
struct LiveCopy {
    let path: String

    init(of source: String) throws {
        let name = ((source as NSString).lastPathComponent as NSString).deletingPathExtension
        path = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-live-\(name)-\(UUID().uuidString).sqlite").path
        let busyTimeout = try BusyTimeout.seconds()
        do {
            // Opened read-only, the store is copied without anything made or changed beside it.
            let original = try PersistentStoreCoordinator(path: source, model: ChatModel.make(),
                                                          options: .init(readOnly: true, createIfMissing: false, busyTimeout: busyTimeout))
            try original.copyStore(to: path)
        } catch StoreError.modelMismatch {
            remove()
            // Not a chat store: every difference of its tables from the chat model's would say only that.
            throw CommandFailure("\(source): --live writes chat messages, and this is not a chat store; browse it without --live")
        } catch {
            remove()
            throw CommandFailure("\(source): cannot copy it for --live (\(error)); --live-in-place writes into the store itself")
        }
    }

    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// The terminal's side of long work: while it runs, the frame is drawn with its progress line and keys are read
/// without waiting. Esc cancels a delete preview; other keys are dropped, not applied afterwards to a screen the
/// user never saw; a resize is kept and applied once the work ends, when typeahead is flushed too.
final class ProgressKeys {
    private let screen: TerminalScreen
    private unowned let browser: any TerminalBrowser
    /// Whether the last action showed progress (it ran long).
    private var shown = false
    /// The long work the last action showed progress for.
    private var work: WorkProgress.Work?
    private var resize: (width: Int, height: Int)?

    init(screen: TerminalScreen, browser: any TerminalBrowser) {
        self.screen = screen
        self.browser = browser
    }

    /// Draws the browser with its progress and reads the keys typed meanwhile; returns false when Esc asks a
    /// preview to stop.
    func show() -> Bool {
        shown = true
        work = browser.progressWork
        screen.draw(browser.frame())
        var goOn = true
        while screen.pendingSignal == nil, let key = screen.readKey(timeoutMilliseconds: 0) {
            switch key {
            case .escape where browser.progressWork == .deletePreview: goOn = false
            case .resize(let width, let height): resize = (width, height)
            default: continue
            }
        }
        return goOn
    }

    /// After an action: when it showed progress, the keys typed since are dropped and a resize seen meanwhile is
    /// applied. An Esc typed while a delete preview was counting, too late for its last look at the keys, still
    /// cancels it: the preview it would have stopped is closed.
    func settle() {
        guard shown else { return }
        shown = false
        var cancelsPreview = false
        while screen.pendingSignal == nil, let key = screen.readKey(timeoutMilliseconds: 0) {
            switch key {
            case .resize(let width, let height): resize = (width, height)
            case .escape where work == .deletePreview: cancelsPreview = true
            default: continue
            }
        }
        if cancelsPreview, browser.dialogIsOpen { _ = browser.handle(.escape) }
        work = nil
        if let resize { browser.resize(width: resize.width, height: resize.height) }
        resize = nil
    }
}
