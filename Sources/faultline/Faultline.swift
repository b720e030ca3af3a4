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
            var command = try parseAsRoot(try checkHelpRequest(Array(CommandLine.arguments.dropFirst())))
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

    /// `help NAME…` must name a command: ArgumentParser shows the help of the last name it knows and ignores the
    /// rest (`help nope` shows faultline's, `help delete extra` delete's), exiting 0 as though that was asked for.
    /// A name that leads to no command is a usage error here instead. `help` after a command (`fixture help
    /// generate`, which ArgumentParser would read from the top, as `help generate`) is read under that command:
    /// the arguments come back as `help fixture generate`, for ArgumentParser to parse.
    static func checkHelpRequest(_ arguments: [String]) throws(CommandFailure) -> [String] {
        let root = CommandNames(Faultline.self)
        var node = root
        var rest = arguments[...]
        var before: [String] = []
        while let word = rest.first, let next = node.subcommand(named: word) {
            node = next
            before.append(word)
            rest = rest.dropFirst()
        }
        guard rest.first == "help", !node.subcommands.isEmpty else { return arguments }
        let request = ["help"] + before + rest.dropFirst()
        var command = root
        var owner = [root.name]
        var given = ["help"]
        for name in request.dropFirst() where !["-h", "--help", "-help"].contains(name) {
            given.append(name)
            if let next = command.subcommand(named: name) {
                command = next
            } else if name == "help", !command.subcommands.isEmpty {
                // ArgumentParser's own help command (`help help`), which has no subcommands.
                command = CommandNames(name: name, aliases: [], subcommands: [])
            } else {
                let known = command.subcommands.isEmpty
                    ? "it has none" : "its commands: " + command.subcommands.map { $0.name }.joined(separator: ", ")
                throw CommandFailure("\(given.joined(separator: " ")): \(owner.joined(separator: " ")) has no command '\(name)' (\(known))",
                                     exitCode: ExitCode.validationFailure.rawValue)
            }
            owner.append(name)
        }
        return request
    }

    /// A command's name, aliases and subcommands, as `checkHelpRequest` walks them.
    private struct CommandNames {
        let name: String
        let aliases: [String]
        let subcommands: [CommandNames]

        init(name: String, aliases: [String], subcommands: [CommandNames]) {
            self.name = name
            self.aliases = aliases
            self.subcommands = subcommands
        }

        init(_ command: any ParsableCommand.Type) {
            let configuration = command.configuration
            self.init(name: command._commandName, aliases: configuration.aliases,
                      subcommands: configuration.subcommands.map { CommandNames($0) })
        }

        func subcommand(named word: String) -> CommandNames? {
            subcommands.first { $0.name == word || $0.aliases.contains(word) }
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
