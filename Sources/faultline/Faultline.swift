import ArgumentParser
import ChatFixture
import Foundation
import GRDB
import GraphStore

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
        do {
            var command = try parseAsRoot()
            try BusyTimeout.applyEnvironment()
            try command.run()
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            Foundation.exit(failure.exitCode)
        } catch {
            reportParsingError(error)
        }
    }

    /// Help and version requests print as ArgumentParser prints them; a usage error becomes one `error:` line.
    private static func reportParsingError(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success {
            exit(withError: error)
        }
        let message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
        let text = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
        FileHandle.standardError.write(Data("error: \(text) (see 'faultline --help')\n".utf8))
        Foundation.exit(code.rawValue)
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

    /// Line breaks (in a path, or in a message quoting a file) would split the one `error:` line: shown escaped.
    static func oneLine(_ text: String) -> String { text.escapingLineBreaks }
}
