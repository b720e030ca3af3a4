import ArgumentParser
import Browser

/// The store and the levers shared by `browse` and `trace`.
struct BrowserOptions: ParsableArguments {
    @Argument(help: "The chat store (default: the default chat store, ~/.local/share/faultline/chat.sqlite or as 'faultline --help' says, generated if missing).")
    var store: String?

    @Option(help: ArgumentHelp("Rows per batch of the chat list and the messages (0: no batching).", valueName: "n"))
    var batchSize = 20

    @Flag(help: "Start with prefetching off (each related object a fault: the N+1 to watch).")
    var noPrefetch = false

    @Flag(help: "Start with derived counts off (member counts fire the members relationship).")
    var noDerivedCounts = false

    @Flag(help: "Open the store read-only: browsing works, deletes and saves are refused.")
    var readOnly = false

    @Option(help: ArgumentHelp("Show the progress of a save, an undo or redo after a save, or a delete preview once it has run this long.", valueName: "ms"))
    var progressAfter = 200

    func validate() throws {
        guard BrowserSettings.batchSizeRange.contains(batchSize) else {
            throw ValidationError("--batch-size must be 0 or more, at most \(BrowserSettings.batchSizeRange.upperBound), not \(batchSize)")
        }
        guard BrowserSettings.progressAfterRange.contains(progressAfter) else {
            throw ValidationError("--progress-after must be 0 or more milliseconds, at most \(BrowserSettings.progressAfterRange.upperBound), not \(progressAfter)")
        }
    }

    var settings: BrowserSettings {
        BrowserSettings(batchSize: batchSize, prefetch: noPrefetch ? .off : .joined, derivedCounts: !noDerivedCounts, readOnly: readOnly,
                        progressAfterMilliseconds: progressAfter, busyTimeout: BusyTimeout.seconds)
    }
}
