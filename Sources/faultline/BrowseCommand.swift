import ArgumentParser
import Browser
import Foundation
import GraphStore
import Terminal

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
            """
    )

    @OptionGroup var browser: BrowserOptions
    @OptionGroup var sqlDebug: SQLDebugOptions

    func run() throws {
        try Self.browse(browser, sqlDebug: sqlDebug)
    }

    static func browse(_ options: BrowserOptions, sqlDebug: SQLDebugOptions) throws {
        // Without a terminal nothing else is worth doing (not even making the default store).
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw CommandFailure(TerminalError.notATerminal.description)
        }
        let path = try options.store ?? DefaultFixture.ensure()
        // The store first: a bad file is reported before the screen changes.
        let model: BrowserModel
        do {
            model = try BrowserModel(path: path, settings: options.settings, width: 80, height: 24)
        } catch {
            throw CommandFailure(error)
        }
        let sink = try sqlDebug.effectiveLevel() == nil ? nil : try sqlDebug.openSink()
        if sink === FileHandle.standardError {
            throw CommandFailure("--sql-debug: the browser owns the terminal; give --sql-log FILE for the SQL log")
        }
        let log = try sqlDebug.attach(to: model.coordinator, sink: sink)
        let screen: TerminalScreen
        do {
            screen = try TerminalScreen.open()
        } catch {
            throw CommandFailure(error.description)
        }
        defer { screen.close() }
        let size = screen.size
        model.apply(.resize(width: size.width, height: size.height))
        model.apply(.start)
        while !model.state.quitRequested {
            screen.draw(BrowserView.frame(model.state, activity: model.activity))
            let key = screen.readKey(timeoutMilliseconds: 250)
            if let signal = screen.pendingSignal {
                screen.close()
                withExtendedLifetime(log) {}
                Foundation.exit(128 + signal)
            }
            guard let key, let action = model.action(for: key) else { continue }
            model.apply(action)
        }
        withExtendedLifetime(log) {}
    }
}
