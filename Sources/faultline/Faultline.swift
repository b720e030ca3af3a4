import ArgumentParser
import ChatFixture
import Foundation
import GRDB
import GraphStore
import TerminalText

/// The `faultline` command: a terminal browser for chat data in a Core Data–style object-graph store.
@main
struct Faultline: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "Browse chat data in an object-graph store and watch its faults, row cache and SQL.",
        discussion: """
            Faultline's store, GraphStore, keeps objects in SQLite laid out as Core Data lays out its stores.

            \(DefaultFixture.helpText)

            Run 'faultline help <command>' for the options of a command.
            """,
        version: "faultline \(version)",
        subcommands: [ModelCommand.self, FixtureCommand.self, CheckCommand.self, DeleteCommand.self, BenchCommand.self, ScenarioCommand.self,
                      TraceCommand.self, BrowseCommand.self, SimulateCommand.self]
    )

    /// With no subcommand: the browser on the default chat store, with its default settings (`faultline browse`
    /// takes a store and options).
    func run() throws {
        try BrowseCommand.browse(try BrowserOptions.parse([]), sqlDebug: try SQLDebugOptions.parse([]))
    }

    static func main() {
        // Before anything is opened or written: a write to a closed or broken stdout becomes an error, not a crash.
        Output.prepare()
        do {
            var command = try parseAsRoot()
            // Checked before a command that opens a store runs, so a bad value fails before the default store is
            // made; help and the commands that open no store never read it.
            if command is any OpensStore { _ = try BusyTimeout.parse() }
            try command.run()
            try Output.finish()
            if let logFailure = SQLDebugOptions.logFailure { fail(CommandFailure(logFailure)) }
        } catch let failure as CommandFailure {
            fail(failure)
        } catch {
            reportParsingError(error)
        }
    }

    /// Writes the failure's `error:` line and exits with its status.
    static func fail(_ failure: CommandFailure) -> Never {
        Output.writeError("error: \(failure.message)\n")
        Foundation.exit(failure.exitCode)
    }

    /// Help and version requests print what ArgumentParser would print, through `Output` (so a help text that cannot
    /// be written is an error, not a success); a usage error becomes one `error:` line.
    private static func reportParsingError(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success {
            let text = fullMessage(for: error)
            do {
                if !text.isEmpty { try Output.write(text + "\n") }
                try Output.finish()
            } catch {
                fail(error)
            }
            Foundation.exit(code.rawValue)
        }
        let message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
        let text = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
        fail(CommandFailure("\(text) (see 'faultline --help')", exitCode: code.rawValue))
    }
}

/// A failure to report as one `error:` line and a non-zero exit.
struct CommandFailure: Error {
    let message: String
    var exitCode: Int32 = 1

    init(_ message: String, exitCode: Int32 = 1) {
        self.message = Self.oneLine(message)
        self.exitCode = exitCode
    }

    init(_ error: ModelError) { self.init(error.description) }
    init(_ error: StoreError) { self.init(error.description) }

    /// Line breaks (in a path, or in a message quoting a file) would split the one `error:` line, and other control
    /// characters would reach the terminal: all are shown escaped (`\n`, `\u{1B}`).
    static func oneLine(_ text: String) -> String { ControlCharacters.escaped(text) }
}
