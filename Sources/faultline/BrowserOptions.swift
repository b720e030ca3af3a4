import ArgumentParser
import Browser
import GraphStore

/// The store and the levers shared by `browse` and `trace`.
struct BrowserOptions: ParsableArguments {
    @Argument(help: "The chat store (default: the default chat store, ~/.local/share/faultline/chat.sqlite or as 'faultline --help' says, generated if missing), or any Core Data store.")
    var store: String?

    // `.unconditional` on every numeric option: `--batch-size -5` is the option's value, which its own check then
    // refuses saying what it allows, not a missing value before an option named `-5` (see docs/errors.md, Usage).
    @Option(parsing: .unconditional, help: ArgumentHelp("Rows per batch of the chat list and the messages, or of the entity browser's lists of objects (0: no batching).", valueName: "n"))
    var batchSize = 20

    @Flag(help: "Start with prefetching off (each related object a fault: the N+1 to watch; in the entity browser, the to-ones a list shows).")
    var noPrefetch = false

    @Flag(help: "Start with derived counts off (member counts fire the members relationship; in the entity browser, no to-many counts).")
    var noDerivedCounts = false

    @Flag(help: "Start with whole rows: each pane's fetch reads every column, not only the columns it draws.")
    var wholeRows = false

    @Flag(help: "Open the store read-only: browsing works, deletes and saves are refused.")
    var readOnly = false

    @Option(help: ArgumentHelp("""
        The store's model: a .xcdatamodeld or .xcdatamodel folder, or its contents file (without it, a store the \
        chat model does not fit is read with the model inside it). A model other than the chat model opens the \
        entity browser on the store, read-only unless --write is given.
        """, valueName: "path"))
    var model: String?

    @Flag(help: "Open a store that is not the chat store for writing: deletes, saves and undo.")
    var write = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Show the progress of a save, an undo or redo after a save, or a delete preview once it has run this long.", valueName: "ms"))
    var progressAfter = 200

    func validate() throws {
        if write, readOnly { throw ValidationError("--write and --read-only cannot go together") }
        if write, store == nil {
            throw ValidationError("--write opens a store that is not the chat store for writing: give the STORE")
        }
        guard BrowserSettings.batchSizeRange.contains(batchSize) else {
            throw ValidationError("--batch-size must be 0 or more, at most \(BrowserSettings.batchSizeRange.upperBound), not \(batchSize)")
        }
        guard BrowserSettings.progressAfterRange.contains(progressAfter) else {
            throw ValidationError("--progress-after must be 0 or more milliseconds, at most \(BrowserSettings.progressAfterRange.upperBound), not \(progressAfter)")
        }
    }

    /// The model `--model` names when it is not the chat model (the entity browser's), or nil for the chat store.
    func foreignModel() throws(CommandFailure) -> ForeignModel? {
        guard let model else { return nil }
        try ModelFileArgument.checkOption(model)
        let loaded: ForeignModel
        do {
            loaded = try ForeignModel.load(path: model)
        } catch {
            throw CommandFailure("--model: \(error.description)")
        }
        return loaded.isChatModel ? nil : loaded
    }

    /// With no `--model`: the model inside a store the chat model was refused for (it was made for another model),
    /// when that is not the chat model; otherwise the refusal itself, as the one error line.
    func modelInside(storeAt path: String, refusal: StoreError) throws(CommandFailure) -> ForeignModel {
        guard model == nil, store != nil, case .modelMismatch = refusal else { throw CommandFailure(refusal) }
        let stored = try StoreModelSource.read(storeAt: path, suggestion: "give its model file with --model")
        let found = ForeignModel(objectModel: stored.model)
        guard !found.isChatModel else { throw CommandFailure(refusal) }
        return found
    }

    /// The levers as the browser takes them; fails only on a bad `FAULTLINE_BUSY_TIMEOUT`.
    func settings() throws(CommandFailure) -> BrowserSettings {
        BrowserSettings(batchSize: batchSize, prefetch: noPrefetch ? .off : .joined, derivedCounts: !noDerivedCounts, drawnColumnsOnly: !wholeRows, readOnly: readOnly,
                        progressAfterMilliseconds: progressAfter, busyTimeout: try BusyTimeout.seconds())
    }
}
