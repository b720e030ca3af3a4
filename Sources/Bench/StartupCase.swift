import Browser
import Foundation
import GraphStore

/// `startup`: a cold start of the browser to its first screen, as a whole process, against the `sqlite3` shell
/// running the first screen's query on the same store.
///
/// The Faultline variants run `faultline trace STORE --json` with no script: the program starts, loads the chat
/// model, opens the store (checking that it is one, for this model), fetches the chat list as the browser does and
/// draws its first screen, prints it as JSON, and exits. The peer starts `/usr/bin/sqlite3` on the same store with
/// the hand-written first-screen query (`ChatListColumns.screenSQL`, one row per chat the screen shows) and exits.
/// Each child is spawned and waited for; its whole life is timed, as a user waits for it.
///
/// The screen is 600 columns wide rather than the browser's usual 120, so that no title is cut short, and 40 rows
/// high as usual: the chat list shows the same 37 chats and runs the same statements at either width; only the
/// drawing is wider. Every variant must produce the titles of those chats in order, and the checksum is their
/// FNV-1a: the `sqlite3` variant hashes the titles it printed; a `trace` variant checks that each row of the chat
/// pane on its screen starts with the title the same query gives in-process (read once at preparation), row by row,
/// and hashes those (a row that shows another title fails the case, naming it).
///
/// `trace` does not report its own peak memory, so the case reports none.
///
/// The goal: the tuned browser at most 6× the `sqlite3` shell. Measured (release build, 2 cores shared with other
/// builds, medians of 10 runs): `trace` 22–24 ms against 4.1–4.8 ms on the full store (10,000 chats), 4.6× to 5.7× over
/// four runs; 19–22 ms against 3.8 ms on the quick one, 5.0× to 5.9×. Most of the gap is not GraphStore's: this program
/// exits after `--version` in about 10.5 ms (a 39 MB binary loading Foundation, ICU, SQLite and ncurses: relocations,
/// page faults and the Swift runtime's protocol-conformance scans), 2.6× the whole `sqlite3` run by itself, and parsing
/// `trace`'s arguments and printing its JSON add a few more. A profile puts what GraphStore and the browser do at
/// launch (building the model, checking the file is a store for it, opening the connection pool, the first screen's 4
/// statements and its frame) at about 4 ms, about what `sqlite3` takes for everything. So 6× is what this launch path
/// reaches when it adds no waste to that floor, and what it must keep: reading every chat or faulting each row on
/// screen (Core Data's defaults: 9–11× on the full store), or any scan of the store at open, would break it. It cannot
/// go much lower without making the executable itself start faster, which no change to the store can do.
final class StartupCase {
    let quick: Bool
    let executable: String?
    let store: () throws -> ChatListStore

    /// The `sqlite3` shell the peer runs.
    static let sqlite3 = "/usr/bin/sqlite3"
    /// The screen `trace` draws: wide enough that no title is shortened, as high as the browser's default.
    static let width = 600
    static let height = 40
    /// The tuned browser's limit, in multiples of the `sqlite3` shell's time.
    static let ratioLimit = 6.0

    init(quick: Bool, executable: String?, store: @escaping () throws -> ChatListStore) {
        self.quick = quick
        self.executable = executable
        self.store = store
    }

    /// Chats on the first screen: the chat pane's rows less its title row, `Layout.linesPerChat` rows a chat.
    static var screenRows: Int { Layout.chatsShown(Layout(width: width, height: height, chatIsOpen: false).chats) }

    func prepare() throws -> PreparedCase {
        guard let executable else {
            throw BenchmarkError("startup runs this program's `trace` command as a child process, and the bench was not told where the program is")
        }
        guard FileManager.default.isExecutableFile(atPath: Self.sqlite3) else {
            throw BenchmarkError("startup compares with the sqlite3 shell, and there is none at \(Self.sqlite3)")
        }
        let shared = try store()
        let path = shared.path
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let rows = Self.screenRows
        let sql = shared.columns.screenSQL(limit: rows)
        let titles = try Self.titles(sql, on: shared.raw)
        guard titles.count == min(rows, shared.chatCount) else {
            throw BenchmarkError("the first-screen query gave \(titles.count) rows, expected \(min(rows, shared.chatCount))")
        }
        let expected = Self.checksum(titles)

        func trace(_ name: String, _ options: [String]) -> BenchmarkVariant {
            BenchmarkVariant(name: name) { stopwatch in
                let child = ChildProcess(executable: executable, arguments: [
                    "trace", path, "--json", "--size", "\(Self.width)x\(Self.height)",
                ] + options)
                let outcome = try stopwatch.time { try child.run(outputIn: folder) }
                return try Self.check(outcome, expecting: titles, chats: shared.chatCount)
            }
        }
        let tuned = trace(VariantName.faultline, [])
        let defaults = trace(VariantName.defaults, ["--batch-size", "0", "--no-prefetch", "--no-derived-counts"])
        let raw = BenchmarkVariant(name: VariantName.raw) { stopwatch in
            // No start-up file, ASCII separators between fields (0x1F) and rows (0x1E), so any title reads back whole.
            let child = ChildProcess(executable: Self.sqlite3, arguments: ["-init", "/dev/null", "-ascii", path, sql])
            let outcome = try stopwatch.time { try child.run(outputIn: folder) }
            guard outcome.status == 0 else {
                throw BenchmarkError("sqlite3 exited with status \(outcome.status): \(outcome.standardError.prefix(300))")
            }
            return RunOutcome(checksum: Self.checksum(Self.firstFields(of: outcome.standardOutput)), statements: 1)
        }
        return PreparedCase(
            name: BenchmarkCaseName.startup.rawValue,
            goals: [.ratio(tuned.name, over: raw.name, atMost: Self.ratioLimit)],
            variants: [tuned, raw, defaults],
            runs: quick ? 5 : 10,
            expectedChecksum: expected,
            note: "launch to the first screen (\(rows) chats of \(shared.chatCount)), whole processes: faultline trace against the sqlite3 shell")
    }

    /// Reads a `trace --json` run: it must have succeeded and its chat pane must show `titles` in order. Returns the
    /// titles' checksum and the statements of its `start` action (the launch up to the first screen).
    private static func check(_ outcome: ChildProcess.Outcome, expecting titles: [String], chats: Int) throws -> RunOutcome {
        guard outcome.status == 0 else {
            let message = outcome.standardError.split(separator: "\n").last.map(String.init) ?? "no message"
            throw BenchmarkError("faultline trace exited with status \(outcome.status): \(message)")
        }
        struct Trace: Decodable {
            struct Action: Decodable {
                let action: String
                let sql: Int
            }
            let screen: String
            let actions: [Action]
        }
        guard let trace = try? JSONDecoder().decode(Trace.self, from: Data(outcome.standardOutput.utf8)),
              let start = trace.actions.first, start.action == "start" else {
            throw BenchmarkError("faultline trace printed no report: \(outcome.standardOutput.prefix(200))")
        }
        // The chat pane is each line's text before the first pane border; its first line is the pane's title.
        let pane = trace.screen.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            guard let border = line.firstIndex(of: "│") else { return line }
            return line[..<border]
        }
        guard pane.count > titles.count * Layout.linesPerChat, pane[0].contains("Chats (\(ActivityFormat.count(chats)))") else {
            throw BenchmarkError("trace's screen has no chat pane listing \(chats) chats: \(pane.first ?? "")")
        }
        // Each chat's first line starts with its title.
        for (row, title) in titles.enumerated() {
            let line = 1 + row * Layout.linesPerChat
            guard pane.indices.contains(line), pane[line].hasPrefix(" \(title) ") else {
                throw BenchmarkError("chat \(row + 1) of trace's chat list shows '\(pane.indices.contains(line) ? pane[line] : "")', expected the title '\(title)'")
            }
        }
        return RunOutcome(checksum: checksum(titles), statements: start.sql)
    }

    /// The titles the first-screen query gives, through the C API.
    private static func titles(_ sql: String, on connection: RawConnection) throws -> [String] {
        let select = try connection.prepare(sql)
        var titles: [String] = []
        while try select.step() { titles.append(select.string(0)) }
        return titles
    }

    /// The first field of each row of the shell's ASCII-mode output.
    private static func firstFields(of output: String) -> [String] {
        let bytes = Array(output.utf8)
        return bytes.split(separator: 0x1E).compactMap { row in
            row.split(separator: 0x1F, omittingEmptySubsequences: false).first.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// FNV-1a of the titles in order, each preceded by its length in bytes, then their count.
    private static func checksum(_ titles: [String]) -> Int64 {
        var hash = FNV1a()
        for title in titles {
            hash.mix(Int64(title.utf8.count))
            hash.mix(title.utf8)
        }
        hash.mix(Int64(titles.count))
        return hash.value
    }
}
