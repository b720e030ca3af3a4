import ArgumentParser
import ChatFixture
import Foundation
import TerminalText

/// `faultline fixture generate`: a chat store with a messenger's shape, the same for the same seed.
struct FixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture",
        abstract: "Make chat stores to browse and measure.",
        subcommands: [Generate.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate a chat store: users, direct and group chats, members, messages and all that hangs off them.",
            discussion: """
                The same seed and sizes give the same store, byte for byte (its UUID and every timestamp come from the \
                seed, not the clock). Names and messages are in Japanese, Thai, Traditional Chinese, Indonesian, \
                Korean and English. The store is built in a temporary file beside PATH and moved into place when \
                complete.
                """
        )

        @Option(help: ArgumentHelp("Where to write the store.", valueName: "path"))
        var out: String

        @Option(parsing: .unconditional, help: "Seed of the generator.")
        var seed: UInt64 = FixtureOptions.defaults.seed

        @Option(parsing: .unconditional, help: "Number of users (user 1 is \"me\").")
        var users: Int = FixtureOptions.defaults.users

        @Option(parsing: .unconditional, help: "Number of chats, direct and group.")
        var chats: Int = FixtureOptions.defaults.chats

        @Option(parsing: .unconditional, help: "Number of messages in all.")
        var messages: Int = FixtureOptions.defaults.messages

        @Flag(help: ArgumentHelp(
            "Replace PATH if it exists.",
            discussion: """
                Only a regular file that is empty or an SQLite database, and only while no other process has it open; \
                its old -wal, -shm and -journal are removed first. A device, link, folder or other file is refused.
                """))
        var force = false

        @Flag(help: "Print what was written as JSON: the path and every count, with the saves and SQL statements it took.")
        var json = false

        func run() throws {
            let options = FixtureOptions(seed: seed, users: users, chats: chats, messages: messages)
            let summary = try FixtureWriting.generate(options, to: out, replacing: force)
            try Output.write((json ? try FixtureWriting.json(summary, path: out) : FixtureWriting.describe(summary, path: out)) + "\n")
        }
    }
}

/// Generation as the commands run it: checks, progress on stderr, one-line errors.
enum FixtureWriting {
    /// - Parameter clearingLeftovers: remove `-wal`, `-shm` and `-journal` files at `path` that no process has open
    ///   (the default store's own folder); otherwise they are refused unless `replacing`.
    static func generate(_ options: FixtureOptions, to path: String, replacing: Bool,
                         clearingLeftovers: Bool = false) throws(CommandFailure) -> FixtureSummary {
        do {
            try options.validate()
        } catch {
            throw CommandFailure(error.description)
        }
        guard !path.isEmpty else { throw CommandFailure("--out is empty: give the path of the store to write") }
        // Before "already exists": --force must not be suggested for a live store's -wal.
        do {
            try FixtureGenerator.checkNotSideFileName(path)
        } catch {
            throw CommandFailure(error.description)
        }
        let target = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue { throw CommandFailure("\(path): is a folder, not a store file") }
            if !replacing { throw CommandFailure("\(path): already exists (use --force to replace it)") }
        }
        let folder = target.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CommandFailure("\(path): the folder \(folder) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw CommandFailure("\(path): the folder \(folder) is not writable")
        }
        let corpus: ChatCorpus
        do {
            if clearingLeftovers { try FixtureGenerator.removeLeftovers(of: path) }
            corpus = try ChatCorpus.load()
        } catch {
            throw CommandFailure(error.description)
        }
        let bar = ProgressBar()
        do {
            let summary = try FixtureGenerator(options: options, corpus: corpus).generate(to: path, replacing: replacing) { bar.show($0) }
            bar.finish()
            return summary
        } catch {
            bar.finish()
            throw CommandFailure(error.description)
        }
    }

    /// `{"path":"…","peakMemoryBytes":…,"summary":{"users":…,…,"saves":…,"statements":…}}` on one line, keys
    /// sorted; `peakMemoryBytes` (this process's peak resident set size) only where the system reports it.
    static func json(_ summary: FixtureSummary, path: String) throws(CommandFailure) -> String {
        struct Written: Encodable {
            let path: String
            let summary: FixtureSummary
            let peakMemoryBytes: Int?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let written = Written(path: path, summary: summary, peakMemoryBytes: peakResidentBytes())
            return String(decoding: try encoder.encode(written), as: UTF8.self)
        } catch {
            throw CommandFailure("cannot write the summary as JSON: \(error)")
        }
    }

    /// This process's peak resident set size since it started: Linux's `VmHWM`, which (unlike `getrusage`) does not
    /// count what the parent held when this process was spawned. Nil where `/proc` has no such line.
    static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, let amount = Int(fields[1]), fields[2] == "kB" else { return nil }
            return amount * 1024
        }
        return nil
    }

    static func describe(_ summary: FixtureSummary, path: String) -> String {
        // `1 chat (1 group, …)`, `2 chats`: every noun follows its count.
        func count(_ value: Int, _ noun: String) -> String {
            "\(value.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) \(noun)\(value == 1 ? "" : "s")"
        }
        return "\(ControlCharacters.escaped(path)): \(count(summary.users, "user")), \(count(summary.chats, "chat")) (\(count(summary.groups, "group")), "
            + "\(count(summary.members, "member"))), \(count(summary.messages, "message")), \(count(summary.reactions, "reaction")), "
            + "\(count(summary.attachments, "attachment")), \(count(summary.receipts, "read receipt")), \(count(summary.folders, "folder"))"
    }
}

/// Progress on stderr: a bar redrawn in place on a terminal, a plain line per phase step otherwise.
final class ProgressBar {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastLine = ""
    private var drawn = false

    func show(_ progress: FixtureProgress) {
        // Clamped: a phase's count past its total must not draw a bar longer than its width.
        let fraction = progress.total <= 0 ? 1 : min(max(Double(progress.done) / Double(progress.total), 0), 1)
        if isTerminal {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let line = "\(progress.phase.padding(toLength: 8, withPad: " ", startingAt: 0)) \(bar) \(Int(fraction * 100))% (\(progress.done)/\(progress.total))"
            guard line != lastLine else { return }
            lastLine = line
            drawn = true
            Output.writeError("\r\u{1B}[2K\(line)")
        } else {
            // Plain lines: each phase at every tenth.
            let line = "\(progress.phase): \(Int(fraction * 10) * 10)%"
            guard line != lastLine else { return }
            lastLine = line
            Output.writeError("\(line)\n")
        }
    }

    func finish() {
        if drawn { Output.writeError("\r\u{1B}[2K") }
        drawn = false
    }
}
