import Foundation
import GraphStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every bad input, in one table across all commands: each gives one `error:` line on stderr naming the file or
/// argument and the problem, a non-zero exit, no change to any file (no `-wal` or `-shm` appearing either), and never
/// a crash or a backtrace. See docs/errors.md for the same list in words.
///
/// The table is run by three tests, only because some cases need a tool the others do not: `browse` needs a terminal
/// (`script` gives it one), and a read-only file needs, when the tests run as root, a read-only bind mount.
@Suite struct BadInputTests {
    // MARK: - The table

    static let table: [BadInput] = storeCases + modelCases + fixtureCases + scriptCases + optionCases

    /// The commands that open a chat store, each with arguments that would work on a good one.
    enum StoreCommand: String, CaseIterable, Sendable {
        case check, delete, trace, browse, simulate

        func arguments(_ store: String) -> [String] {
            switch self {
            case .check: ["check", store]
            case .delete: ["delete", store, "--chat", "1"]
            case .trace: ["trace", store, "--script", "down; open", "--size", "100x30"]
            case .browse: ["browse", store]
            case .simulate: ["simulate", store, "--count", "1", "--rate", "0"]
            }
        }

        /// Opens the store for writing (trace and browse can save; GRDB's pool writes to an empty `-wal` as it opens).
        var writes: Bool { self != .check }

        /// The commands of this build: `simulate` once it exists.
        static let available: [StoreCommand] = allCases.filter { $0 != .simulate || Tools.hasSimulate }
    }

    /// The store-level bad inputs, each crossed with every command that takes a store.
    static let storeCases: [BadInput] = {
        struct StoreInput {
            let name: String
            let file: String
            let inputs: [Input]
            let expect: [String]
            var lock: Lock.Kind?
            var readOnly = false
            var environment = BadInput.quickBusyTimeout
            var waits: Double?
            /// Which commands refuse it (the rest read it fine: see the tests below the table).
            var refusedBy: (StoreCommand) -> Bool = { _ in true }
        }
        let inputs: [StoreInput] = [
            StoreInput(name: "missing path", file: "missing.sqlite", inputs: [], expect: ["no such file"]),
            StoreInput(name: "empty path", file: "", inputs: [], expect: ["the store path is empty"]),
            StoreInput(name: "directory", file: "folder.sqlite", inputs: [.folder("folder.sqlite")], expect: ["is a directory"]),
            StoreInput(name: "empty file", file: "empty.sqlite", inputs: [.text("empty.sqlite", "")], expect: ["is empty (0 bytes)"]),
            StoreInput(name: "text file", file: "notes.sqlite", inputs: [.text("notes.sqlite", Self.someText)],
                       expect: ["is not an SQLite database"]),
            StoreInput(name: "binary file", file: "noise.sqlite", inputs: [.noise("noise.sqlite", bytes: 8192)],
                       expect: ["is not an SQLite database"]),
            StoreInput(name: "truncated SQLite mid-page", file: "chat.sqlite", inputs: [.truncatedChatStore("chat.sqlite", bytes: 100_000)],
                       expect: ["is truncated (100000 of", "damaged"]),
            StoreInput(name: "truncated SQLite at a page boundary", file: "chat.sqlite",
                       inputs: [.truncatedChatStore("chat.sqlite", bytes: 8192)], expect: ["is truncated (8192 of", "damaged"]),
            StoreInput(name: "SQLite of another schema", file: "other.sqlite",
                       inputs: [.sqlite("other.sqlite", "CREATE TABLE t (x); INSERT INTO t VALUES (1);")],
                       expect: ["is an SQLite database but not a Faultline store", "no Z_METADATA table"]),
            StoreInput(name: "WAL-mode SQLite of another schema", file: "other.sqlite",
                       inputs: [.sqlite("other.sqlite", "PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);")],
                       expect: ["is an SQLite database but not a Faultline store", "no Z_METADATA table"]),
            // `check` reads any store by the model it records, `delete --object` deletes from any store (its chat
            // options are refused otherwise: `DeleteCommandTests`), and `browse` and `trace` open it in the entity
            // browser (`EntityTraceTests`), so this one is only bad for the chat simulation.
            StoreInput(name: "store of a different model", file: "notes.sqlite", inputs: [.otherModelStore("notes.sqlite")],
                       expect: ["was made for a different model"], refusedBy: { $0 == .simulate }),
            StoreInput(name: "path with a line break", file: "bad\nname.sqlite", inputs: [.text("bad\nname.sqlite", Self.someText)],
                       expect: ["bad\\nname.sqlite", "is not an SQLite database"]),
            StoreInput(name: "locked against readers too", file: "chat.sqlite", inputs: [.chatStore("chat.sqlite")],
                       expect: ["the database is locked by another connection", "still busy after 1 s"], lock: .readersAndWriters,
                       waits: 1),
            // Trace and browse open a store writable without writing to it (a -wal with frames or not), so a
            // writer's lock stops only the commands that write at once.
            StoreInput(name: "locked by a writer", file: "chat.sqlite", inputs: [.chatStore("chat.sqlite")],
                       expect: ["the database is locked by another connection", "still busy after 1 s"], lock: .writers, waits: 1,
                       refusedBy: { $0 == .delete || $0 == .simulate }),
            StoreInput(name: "locked by a writer with a -wal", file: "chat.sqlite", inputs: [.chatStore("chat.sqlite")],
                       expect: ["the database is locked by another connection", "still busy after 1 s"], lock: .writersWithWAL,
                       waits: 1, refusedBy: { $0 == .delete || $0 == .simulate }),
            StoreInput(name: "locked by a writer, default busy timeout", file: "chat.sqlite", inputs: [.chatStore("chat.sqlite")],
                       expect: ["the database is locked by another connection", "still busy after 5 s"], lock: .writers,
                       environment: [:], waits: 5, refusedBy: { $0 == .delete }),
            StoreInput(name: "read-only file", file: "chat.sqlite", inputs: [.chatStore("chat.sqlite")],
                       expect: ["cannot be written", "not writable"], readOnly: true,
                       refusedBy: { $0 == .delete || $0 == .simulate }),
        ]
        var cases: [BadInput] = []
        for input in inputs {
            for command in StoreCommand.available where input.refusedBy(command) {
                let path = input.file.isEmpty ? "" : "{dir}/\(input.file)"
                let shown = path.replacingOccurrences(of: "\n", with: "\\n")
                cases.append(BadInput(
                    name: "\(command.rawValue): \(input.name)", arguments: command.arguments(path), inputs: input.inputs,
                    expect: (path.isEmpty || input.file.contains("\n") ? [] : [shown]) + input.expect,
                    environment: input.environment, lock: input.lock.map { Lock(path: path, kind: $0) },
                    terminal: command == .browse, readOnly: input.readOnly ? path : nil, waits: input.waits))
            }
        }
        // A read-only folder: the -wal and -shm a write needs cannot be made beside the store.
        cases.append(BadInput(
            name: "delete: store in a read-only folder", arguments: ["delete", "{dir}/chats/chat.sqlite", "--chat", "1"],
            inputs: [.folder("chats"), .chatStore("chats/chat.sqlite")],
            expect: ["{dir}/chats/chat.sqlite", "cannot be written", "not writable"], readOnly: "{dir}/chats"))
        return cases
    }()

    static let modelCases: [BadInput] = {
        let model = { (name: String, inputs: [Input], expect: [String]) in
            BadInput(name: "model: \(name)", arguments: ["model", "{dir}/\(inputs.first?.name ?? "missing.xcdatamodel")"],
                     inputs: inputs, expect: ["{dir}/\(inputs.first?.name ?? "missing.xcdatamodel")"] + expect)
        }
        return [
            model("missing path", [], ["no such file or directory"]),
            BadInput(name: "model: empty path", arguments: ["model", ""], inputs: [], expect: ["the model path is empty"]),
            model("folder without a contents file", [.folder("Plain.xcdatamodel")], ["without a 'contents' file"]),
            model(".xcdatamodeld without versions", [.folder("Empty.xcdatamodeld")], ["no '.xccurrentversion'"]),
            model("empty file", [.text("contents", "")], ["is empty"]),
            model("text file", [.text("contents", Self.someText)], ["is not XML"]),
            model("binary file", [.noise("contents", bytes: 3000)], ["is not XML"]),
            model("a file neither a model nor a store", [.noise("damaged.sqlite", bytes: 3000)],
                  ["is neither a model file nor an SQLite store"]),
            BadInput(name: "check: --model names a store", arguments: ["check", "{dir}/chat.sqlite", "--model", "{dir}/chat.sqlite"],
                     inputs: [.chatStore("chat.sqlite")], expect: ["--model: {dir}/chat.sqlite: is an SQLite store, not a model file"]),
            model("XML cut short", [.text("contents", "<?xml version=\"1.0\"?>\n<model><entity name=\"A\"><attribute")],
                  ["is not XML", "line 2"]),
            model("XML that is not a model", [.text("contents", "<?xml version=\"1.0\"?>\n<plist></plist>\n")],
                  ["is not a Core Data model", "'plist'"]),
            model("unknown attribute type", [.text("contents", Self.modelXML("""
                <entity name="A"><attribute name="x" attributeType="Quaternion"/></entity>
                """))], ["entity 'A': attribute 'x': unknown attributeType 'Quaternion'"]),
            model("unknown inverse", [.text("contents", Self.modelXML("""
                <entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" inverseName="nope" inverseEntity="B"/></entity>
                <entity name="B"><attribute name="x" attributeType="String"/></entity>
                """))], ["entity 'A': relationship 'b': unknown inverse 'nope' on entity 'B'"]),
            model("entity declared twice", [.text("contents", Self.modelXML("""
                <entity name="A"><attribute name="x" attributeType="String"/></entity>
                <entity name="A"><attribute name="y" attributeType="String"/></entity>
                """))], ["entity 'A' is declared more than once"]),
            // Derivation expressions are the only expressions a user writes (no command takes a predicate).
            model("derivation of an unsupported form", [.text("contents", Self.chatModelXML(derivation: "messages.@sum("))],
                  ["attribute 'count': derivation 'messages.@sum(' is not supported"]),
            model("derivation through an unknown relationship", [.text("contents", Self.chatModelXML(derivation: "posts.@count"))],
                  ["derivation 'posts.@count' names unknown relationship 'posts'"]),
            model("derivation counting a to-one", [.text("contents", Self.chatModelXML(derivation: "owner.@count"))],
                  ["derivation 'owner.@count' counts to-one relationship 'owner'"]),
            // `--model ''` is the same empty path, not the current folder; with no store given, the default store
            // is not made for it either (it would show in the folder's snapshot).
            BadInput(name: "check: --model is empty", arguments: ["check", "{dir}/chat.sqlite", "--model", ""],
                     inputs: [.chatStore("chat.sqlite")], expect: ["--model: the model path is empty"]),
            BadInput(name: "check: --model is empty, no store", arguments: ["check", "--model", ""], inputs: [],
                     expect: ["--model: the model path is empty"]),
            BadInput(name: "delete: --model is empty", arguments: ["delete", "{dir}/chat.sqlite", "--message", "3", "--model", ""],
                     inputs: [.chatStore("chat.sqlite")], expect: ["--model: the model path is empty"]),
            BadInput(name: "delete: --model is empty, no store", arguments: ["delete", "--message", "3", "--model", ""], inputs: [],
                     expect: ["--model: the model path is empty"]),
            BadInput(name: "trace: --model is empty", arguments: ["trace", "{dir}/chat.sqlite", "--model", "", "--script", "down"],
                     inputs: [.chatStore("chat.sqlite")], expect: ["--model: the model path is empty"]),
            BadInput(name: "trace: --model is empty, no store", arguments: ["trace", "--model", "", "--script", "down"], inputs: [],
                     expect: ["--model: the model path is empty"]),
            BadInput(name: "browse: --model is empty", arguments: ["browse", "{dir}/chat.sqlite", "--model", ""],
                     inputs: [.chatStore("chat.sqlite")], expect: ["--model: the model path is empty"], terminal: true),
            BadInput(name: "model: path with a line break", arguments: ["model", "{dir}/bad\nname.xml"],
                     inputs: [.text("bad\nname.xml", Self.someText)], expect: ["{dir}/bad\\nname.xml", "is not XML"]),
            BadInput(name: "model: --ddl with --json", arguments: ["model", "{dir}/contents", "--ddl", "--json"],
                     inputs: [.text("contents", Self.modelXML("<entity name=\"A\"/>"))], expect: ["--ddl and --json cannot be combined"]),
        ]
    }()

    static let fixtureCases: [BadInput] = {
        let generate = ["fixture", "generate", "--users", "5", "--chats", "2", "--messages", "10"]
        return [
            BadInput(name: "fixture generate: unwritable output folder", arguments: generate + ["--out", "{dir}/out/chat.sqlite"],
                     inputs: [.folder("out")], expect: ["{dir}/out/chat.sqlite", "the folder {dir}/out is not writable"],
                     readOnly: "{dir}/out"),
            BadInput(name: "fixture generate: missing output folder", arguments: generate + ["--out", "{dir}/nowhere/chat.sqlite"],
                     inputs: [], expect: ["{dir}/nowhere/chat.sqlite", "the folder {dir}/nowhere does not exist"]),
            BadInput(name: "fixture generate: output folder is a file", arguments: generate + ["--out", "{dir}/notes.txt/chat.sqlite"],
                     inputs: [.text("notes.txt", Self.someText)], expect: ["{dir}/notes.txt/chat.sqlite", "does not exist"]),
            BadInput(name: "fixture generate: --out is a folder", arguments: generate + ["--out", "{dir}/out"],
                     inputs: [.folder("out")], expect: ["{dir}/out", "is a folder, not a store file"]),
            BadInput(name: "fixture generate: --out exists", arguments: generate + ["--out", "{dir}/chat.sqlite"],
                     inputs: [.chatStore("chat.sqlite")], expect: ["{dir}/chat.sqlite", "already exists", "--force"]),
            // The name of a side file of a file that is there: SQLite would take the new store for that file's
            // log, index or journal. Refused with --force too, and whether or not the side file exists yet.
            BadInput(name: "fixture generate: --out is a store's -wal", arguments: generate + ["--out", "{dir}/chat.sqlite-wal"],
                     inputs: [.chatStore("chat.sqlite")],
                     expect: ["{dir}/chat.sqlite-wal: cannot write a store here", "the -wal file of {dir}/chat.sqlite"]),
            BadInput(name: "fixture generate: --out is a store's -shm, with --force",
                     arguments: generate + ["--out", "{dir}/chat.sqlite-shm", "--force"], inputs: [.chatStore("chat.sqlite")],
                     expect: ["{dir}/chat.sqlite-shm: cannot write a store here", "the -shm file of {dir}/chat.sqlite"]),
            BadInput(name: "fixture generate: --out is an existing -journal, with --force",
                     arguments: generate + ["--out", "{dir}/chat.sqlite-journal", "--force"],
                     inputs: [.chatStore("chat.sqlite"), .text("chat.sqlite-journal", "")],
                     expect: ["{dir}/chat.sqlite-journal: cannot write a store here", "the -journal file of {dir}/chat.sqlite"]),
            BadInput(name: "fixture generate: --out is a text file's -wal", arguments: generate + ["--out", "{dir}/notes.txt-wal"],
                     inputs: [.text("notes.txt", Self.someText)],
                     expect: ["{dir}/notes.txt-wal: cannot write a store here", "the -wal file of {dir}/notes.txt"]),
            BadInput(name: "fixture generate: --out is empty", arguments: generate + ["--out", ""], inputs: [],
                     expect: ["--out is empty"]),
            BadInput(name: "fixture generate: no --out", arguments: generate, inputs: [], expect: ["--out", "Missing"]),
            BadInput(name: "fixture generate: too few users", arguments: ["fixture", "generate", "--out", "{dir}/chat.sqlite", "--users", "1"],
                     inputs: [], expect: ["--users", "at least 2"]),
            BadInput(name: "fixture generate: no chats", arguments: ["fixture", "generate", "--out", "{dir}/chat.sqlite", "--chats", "0"],
                     inputs: [], expect: ["--chats", "at least 1"]),
            BadInput(name: "fixture generate: a count that is not a number",
                     arguments: ["fixture", "generate", "--out", "{dir}/chat.sqlite", "--messages", "many"],
                     inputs: [], expect: ["--messages", "'many' is invalid"]),
        ]
    }()

    /// `trace --script` and `--size`, on a good store that must stay as it is.
    static let scriptCases: [BadInput] = {
        let trace = { (name: String, extra: [String], expect: [String]) in
            BadInput(name: "trace: \(name)", arguments: ["trace", "{dir}/chat.sqlite"] + extra, inputs: [.chatStore("chat.sqlite")],
                     expect: expect)
        }
        return [
            trace("unknown --script action", ["--script", "down; jump 3"], ["--script", "action 2 'jump 3'", "unknown action"]),
            trace("--script repeat count not a number", ["--script", "down x"], ["--script", "'down x'", "repeat count"]),
            trace("--script repeat count out of range", ["--script", "up 0"], ["--script", "'up 0'", "from 1 to 10000"]),
            trace("--script argument to a plain action", ["--script", "open 3"], ["--script", "'open 3'", "takes no argument"]),
            trace("--script batch without a size", ["--script", "batch"], ["--script", "'batch'", "batch takes a size"]),
            trace("--script batch of a negative size", ["--script", "batch -3"], ["--script", "'batch -3'", "batch takes a size"]),
            trace("--script resize malformed", ["--script", "resize 80by24"], ["--script", "'resize 80by24'", "resize takes a size"]),
            trace("--size malformed", ["--size", "120"], ["--size '120'", "WIDTHxHEIGHT"]),
            trace("--size too large", ["--size", "5000x40"], ["--size '5000x40'", "WIDTHxHEIGHT"]),
            trace("--batch-size negative", ["--batch-size=-1"], ["--batch-size", "0 or more"]),
        ]
    }()

    /// Other commands' options, the SQL log, the environment, and usage errors.
    static let optionCases: [BadInput] = {
        let good: [Input] = [.chatStore("chat.sqlite")]
        var cases: [BadInput] = [
            BadInput(name: "scenario: unknown name", arguments: ["scenario", "nope"], inputs: [], expect: ["'nope'", "unknown scenario"]),
            BadInput(name: "scenario: unknown strategy", arguments: ["scenario", "students", "--strategy", "lazy"], inputs: [],
                     expect: ["'lazy'", "unknown strategy"]),
            BadInput(name: "bench: unknown case", arguments: ["bench", "--case", "nope"], inputs: [], expect: ["'nope'", "unknown case"]),
            BadInput(name: "bench: --markdown missing", arguments: ["bench", "--quick", "--case", "startup", "--markdown", "{dir}/run.md"],
                     inputs: [], expect: ["{dir}/run.md", "no such file"]),
            BadInput(name: "bench: --markdown without its markers", arguments: ["bench", "--quick", "--case", "startup", "--markdown", "{dir}/run.md"],
                     inputs: [.text("run.md", "# Benchmarks\n\nno markers here\n")], expect: ["{dir}/run.md", "needs the line"]),
            BadInput(name: "bench: --markdown is a folder", arguments: ["bench", "--quick", "--case", "startup", "--markdown", "{dir}/run"],
                     inputs: [.folder("run")], expect: ["{dir}/run", "is a folder"]),
            BadInput(name: "bench: --markdown is empty", arguments: ["bench", "--quick", "--case", "startup", "--markdown", ""],
                     inputs: [], expect: ["--markdown is empty"]),
            // The SQL log: checked before the store is opened (which stays as it was), made only after it opened.
            BadInput(name: "trace: --sql-log is a folder", arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", "{dir}"],
                     inputs: good, expect: ["{dir}: cannot write the SQL log here", "it is a folder"]),
            BadInput(name: "trace: --sql-log in a missing folder",
                     arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", "{dir}/nowhere/sql.log"],
                     inputs: good, expect: ["{dir}/nowhere/sql.log: cannot write the SQL log here", "the folder {dir}/nowhere does not exist"]),
            BadInput(name: "trace: --sql-log is the store", arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", "{dir}/chat.sqlite"],
                     inputs: good, expect: ["{dir}/chat.sqlite: cannot write the SQL log here", "it is the store"]),
            BadInput(name: "delete: --sql-log is the store",
                     arguments: ["delete", "{dir}/chat.sqlite", "--chat", "1", "--sql-debug", "2", "--sql-log", "{dir}/./chat.sqlite"],
                     inputs: good, expect: ["{dir}/./chat.sqlite: cannot write the SQL log here", "it is the store"]),
            // Another SQLite database, or a side file of one: emptying it for the log would destroy it.
            BadInput(name: "trace: --sql-log is another SQLite database",
                     arguments: ["trace", "{dir}/chat.sqlite", "--read-only", "--sql-debug", "1", "--sql-log", "{dir}/other.sqlite", "--script", "down"],
                     inputs: good + [.sqlite("other.sqlite", "CREATE TABLE t (x); INSERT INTO t VALUES (1);")],
                     expect: ["{dir}/other.sqlite: cannot write the SQL log here", "it is an SQLite database, which the log would overwrite"]),
            BadInput(name: "delete: --sql-log is another SQLite database's -wal",
                     arguments: ["delete", "{dir}/chat.sqlite", "--chat", "1", "--sql-debug", "1", "--sql-log", "{dir}/other.sqlite-wal"],
                     inputs: good + [.sqlite("other.sqlite", "CREATE TABLE t (x);"), .text("other.sqlite-wal", "")],
                     expect: ["{dir}/other.sqlite-wal: cannot write the SQL log here",
                              "it is the -wal file of the SQLite database {dir}/other.sqlite, which the log would overwrite"]),
            BadInput(name: "trace: --sql-log is the name of another SQLite database's -journal",
                     arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", "{dir}/other.sqlite-journal"],
                     inputs: good + [.sqlite("other.sqlite", "CREATE TABLE t (x);")],
                     expect: ["{dir}/other.sqlite-journal: cannot write the SQL log here",
                              "SQLite keeps the -journal file of the database {dir}/other.sqlite under that name"]),
            BadInput(name: "trace: --sql-log is empty", arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", ""],
                     inputs: good, expect: ["--sql-log is empty"]),
            BadInput(name: "trace: a bad store with --sql-log makes no log",
                     arguments: ["trace", "{dir}/notes.sqlite", "--sql-debug", "1", "--sql-log", "{dir}/sql.log"],
                     inputs: [.text("notes.sqlite", Self.someText)], expect: ["{dir}/notes.sqlite", "is not an SQLite database"]),
            BadInput(name: "delete: a bad store with --sql-log makes no log",
                     arguments: ["delete", "{dir}/notes.sqlite", "--chat", "1", "--sql-debug", "1", "--sql-log", "{dir}/sql.log"],
                     inputs: [.text("notes.sqlite", Self.someText)], expect: ["{dir}/notes.sqlite", "is not an SQLite database"]),
            BadInput(name: "scenario: --sql-log is a folder", arguments: ["scenario", "students", "--sql-debug", "1", "--sql-log", "{dir}"],
                     inputs: [], expect: ["{dir}: cannot write the SQL log here", "it is a folder"]),
            BadInput(name: "trace: --sql-debug out of range", arguments: ["trace", "{dir}/chat.sqlite", "--sql-debug", "7"], inputs: good,
                     expect: ["--sql-debug", "from 1 to 4", "not 7"]),
            BadInput(name: "browse: --sql-debug without --sql-log", arguments: ["browse", "{dir}/chat.sqlite", "--sql-debug", "1"],
                     inputs: good, expect: ["--sql-debug", "--sql-log FILE"], terminal: true),
            BadInput(name: "browse: --sql-log is the store",
                     arguments: ["browse", "{dir}/chat.sqlite", "--sql-debug", "1", "--sql-log", "{dir}/chat.sqlite"],
                     inputs: good, expect: ["{dir}/chat.sqlite: cannot write the SQL log here", "it is the store"], terminal: true),
            BadInput(name: "browse: without a terminal", arguments: ["browse", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["not a terminal", "faultline trace"]),
            // The environment.
            BadInput(name: "trace: FAULTLINE_SQL_DEBUG not a level", arguments: ["trace", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["FAULTLINE_SQL_DEBUG", "'loud'"], environment: ["FAULTLINE_SQL_DEBUG": "loud"]),
            BadInput(name: "check: FAULTLINE_BUSY_TIMEOUT not a number", arguments: ["check", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["FAULTLINE_BUSY_TIMEOUT", "'soon'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "soon"]),
            // Only a plain decimal number: Double alone would take these.
            BadInput(name: "check: FAULTLINE_BUSY_TIMEOUT in hexadecimal", arguments: ["check", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["FAULTLINE_BUSY_TIMEOUT", "'0x10'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "0x10"]),
            BadInput(name: "trace: FAULTLINE_BUSY_TIMEOUT with an exponent", arguments: ["trace", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["FAULTLINE_BUSY_TIMEOUT", "'1e1'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "1e1"]),
            BadInput(name: "model: FAULTLINE_BUSY_TIMEOUT not a number, reading a store", arguments: ["model", "{dir}/chat.sqlite"],
                     inputs: good, expect: ["FAULTLINE_BUSY_TIMEOUT", "'soon'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "soon"]),
            // With no store given, the default one is not made first (it would show in the snapshot).
            BadInput(name: "check: FAULTLINE_BUSY_TIMEOUT not a number, default store", arguments: ["check"], inputs: [],
                     expect: ["FAULTLINE_BUSY_TIMEOUT", "'soon'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "soon"]),
            BadInput(name: "delete: FAULTLINE_BUSY_TIMEOUT negative", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "1"], inputs: good,
                     expect: ["FAULTLINE_BUSY_TIMEOUT", "'-1'"], environment: ["FAULTLINE_BUSY_TIMEOUT": "-1"]),
            // IDs that cannot name an object are refused before the store is opened.
            BadInput(name: "delete: ID not a number", arguments: ["delete", "{dir}/chat.sqlite", "--user", "one"], inputs: good,
                     expect: ["--user 'one'", "give a primary key"]),
            BadInput(name: "delete: ID zero", arguments: ["delete", "{dir}/chat.sqlite", "--message", "0"], inputs: good,
                     expect: ["--message '0'", "give a primary key"]),
            BadInput(name: "delete: malformed URI", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "x-coredata://ABC/Chat"], inputs: good,
                     expect: ["--chat x-coredata://ABC/Chat", "not an object URI"]),
            BadInput(name: "delete: temporary ID", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "x-coredata:///Chat/t3"], inputs: good,
                     expect: ["--chat x-coredata:///Chat/t3", "temporary ID"]),
            // IDs that need the store to be refused: the look at it leaves no -wal or -shm behind.
            BadInput(name: "delete: no such row", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "99999"], inputs: good,
                     expect: ["chat.sqlite", "no Chat with primary key 99999"]),
            BadInput(name: "delete: URI of another store",
                     arguments: ["delete", "{dir}/chat.sqlite", "--user", "x-coredata://00000000-0000-0000-0000-000000000000/User/p1"],
                     inputs: good, expect: ["--user x-coredata://00000000-0000-0000-0000-000000000000/User/p1", "names store"]),
            BadInput(name: "delete: no such row, dry run", arguments: ["delete", "{dir}/chat.sqlite", "--message", "99999999", "--dry-run"],
                     inputs: good, expect: ["no Message with primary key 99999999"]),
            // Usage errors.
            BadInput(name: "unknown subcommand", arguments: ["frobnicate"], inputs: [], expect: ["'frobnicate'", "Unexpected argument"]),
            // `help` with a name that leads to no command: not some other command's help and exit status 0.
            BadInput(name: "help: unknown command", arguments: ["help", "nope"], inputs: [],
                     expect: ["help nope: faultline has no command 'nope' (its commands: model, fixture, check, delete"]),
            BadInput(name: "help: a name after a command without subcommands", arguments: ["help", "delete", "extra"], inputs: [],
                     expect: ["help delete extra: faultline delete has no command 'extra' (it has none)"]),
            BadInput(name: "help: unknown subcommand, help after the command", arguments: ["fixture", "help", "nope"], inputs: [],
                     expect: ["help fixture nope: faultline fixture has no command 'nope' (its commands: generate)"]),
            BadInput(name: "delete: nothing to delete", arguments: ["delete", "{dir}/chat.sqlite"], inputs: good,
                     expect: ["--chat", "--user", "--message"]),
            BadInput(name: "delete: two objects", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "1", "--user", "2"], inputs: good,
                     expect: ["cannot be combined"]),
            BadInput(name: "delete: --undo with --dry-run", arguments: ["delete", "{dir}/chat.sqlite", "--chat", "1", "--undo", "--dry-run"],
                     inputs: good, expect: ["--undo and --dry-run cannot be combined"]),
            BadInput(name: "check: --limit negative", arguments: ["check", "{dir}/chat.sqlite", "--limit=-3"], inputs: good,
                     expect: ["--limit", "0 or more"]),
        ]
        if Tools.hasSimulate {
            cases.append(BadInput(name: "simulate: --count zero", arguments: ["simulate", "{dir}/chat.sqlite", "--count", "0"], inputs: good,
                                  expect: ["--count", "at least 1"]))
        }
        return cases
    }()

    // MARK: - The tests

    @Test(arguments: BadInputTests.table.filter { !$0.terminal && $0.readOnly == nil })
    func everyBadInput(_ input: BadInput) throws {
        try input.verify()
    }

    @Test(.enabled(if: Tools.script != nil, "needs util-linux 'script' to give browse a terminal"),
          arguments: BadInputTests.table.filter { $0.terminal && $0.readOnly == nil })
    func everyBadInputToTheBrowser(_ input: BadInput) throws {
        try input.verify()
    }

    @Test(.enabled(if: ReadOnlyFiles.isAvailable,
                   "running as root, whom file modes do not stop, where 'unshare -m' and 'mount --bind -o ro' are not allowed"),
          arguments: BadInputTests.table.filter { $0.readOnly != nil })
    func everyBadInputOnAReadOnlyFile(_ input: BadInput) throws {
        try input.verify()
    }

    @Test func theTableCoversEveryCommand() {
        let commands = Set(Self.table.compactMap { $0.arguments.first })
        #expect(commands.isSuperset(of: ["model", "fixture", "check", "delete", "bench", "scenario", "trace", "browse"]))
        if Tools.hasSimulate { #expect(commands.contains("simulate")) }
        #expect(Set(Self.table.map(\.name)).count == Self.table.count, "case names are unique")
    }

    // MARK: - What still works

    /// A file this process may not write: trace, check and a dry run read it; deletes and saves in the browser are
    /// refused on the status line; the file stays as it was.
    @Test(.enabled(if: ReadOnlyFiles.isAvailable,
                   "running as root, whom file modes do not stop, where 'unshare -m' and 'mount --bind -o ro' are not allowed"))
    func aReadOnlyStoreIsReadButNeverChanged() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        try Input.chatStore("chat.sqlite").make(in: folder.url.path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let restore = try ReadOnlyFiles.prepare(path)
        defer { restore() }

        func run(_ arguments: [String]) throws -> Ran {
            try Ran.run(ReadOnlyFiles.wrap([FaultlineBinary.url.path] + arguments, readOnly: path), environment: BadInput.quickBusyTimeout)
        }
        let screen = try run(["trace", path, "--size", "220x30"])
        #expect(screen.status == 0, "\(screen.stderr)")
        #expect(screen.stdout.contains("Chats (12)"))
        for (script, refusal) in [("delete", "deletes are refused"), ("save", "nothing is saved")] {
            let refused = try run(["trace", path, "--script", script, "--size", "220x30"])
            #expect(refused.status == 0, "\(refused.stderr)")
            #expect(refused.stderr == "")
            let status = refused.stdout.split(separator: "\n").first { $0.contains("chat.sqlite  batch") } ?? ""
            #expect(status.contains("read-only: chat.sqlite cannot be written (the file is not writable"), "\(status)")
            #expect(status.contains(refusal), "\(status)")
        }
        for arguments in [["check", path], ["delete", path, "--chat", "1", "--dry-run"], ["trace", path, "--read-only"]] {
            let result = try run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }

        if TmuxSession.isAvailable {
            let command = ReadOnlyFiles.wrap([FaultlineBinary.url.path, "browse", path], readOnly: path).map(Ran.quoted).joined(separator: " ")
            let session = try TmuxSession(command: command, width: 200, height: 30)
            try session.waitFor("Chats (12)")
            try session.send(keys: "d")
            try session.waitFor("deletes are refused")
            try session.send(keys: "w")
            let screen = try session.waitFor("nothing is saved")
            #expect(screen.contains("read-only: chat.sqlite cannot be written"), "\(screen)")
            try session.send(keys: "q")
            #expect(try session.waitForExit() == 0)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store is left as it was")
    }

    /// While another connection holds the write lock, the reading commands read (in WAL mode readers do not wait for
    /// writers) and leave every file as it was; a save in the browser waits the busy timeout and says why it failed.
    @Test func aStoreAnotherConnectionWritesToIsStillRead() throws {
        for kind in [Lock.Kind.writers, .writersWithWAL] {
            let folder = TemporaryFolder()
            let path = folder.path("chat.sqlite")
            try Input.chatStore("chat.sqlite").make(in: folder.url.path)
            let lock = try StoreLock(path, kind)
            defer { lock.release() }
            let before = Snapshot(folder.url.path)
            var readers = [["check", path], ["delete", path, "--chat", "1", "--dry-run"], ["trace", path, "--read-only"]]
            if kind == .writersWithWAL { readers.append(["trace", path]) }
            for arguments in readers {
                let result = try Ran.run([FaultlineBinary.url.path] + arguments, environment: BadInput.quickBusyTimeout)
                #expect(result.status == 0, "\(kind) \(arguments): \(result.stderr)")
                #expect(result.seconds < 1, "\(kind) \(arguments) waited \(result.seconds) s for a lock it does not need")
            }
            if kind == .writersWithWAL {
                let result = try Ran.run([FaultlineBinary.url.path, "trace", path, "--script", "delete; confirm; save", "--size", "220x30"],
                                         environment: BadInput.quickBusyTimeout)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.contains("save failed: the database is locked by another connection (still busy after 1 s)"),
                        "\(result.stdout)")
            }
            let after = Snapshot(folder.url.path)
            #expect(after == before, "\(kind): \(after.difference(from: before))")
        }
    }

    /// `FAULTLINE_BUSY_TIMEOUT` is read only by what opens a store: help and the commands that open none run
    /// whatever it holds; a plain decimal number is taken.
    @Test func aBadBusyTimeoutStopsOnlyWhatOpensAStore() throws {
        let folder = TemporaryFolder()
        let model = testModels.appendingPathComponent("Students.xcdatamodel").path
        let soon = ["FAULTLINE_BUSY_TIMEOUT": "soon"]
        for arguments in [["--help"], ["help"], ["help", "check"], ["check", "--help"], ["model", model],
                          ["fixture", "generate", "--out", folder.path("chat.sqlite"), "--users", "5", "--chats", "2", "--messages", "10"]] {
            let result = try Ran.run([FaultlineBinary.url.path] + arguments, environment: soon)
            #expect(result.status == 0 && !result.stderr.contains("error:"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.isEmpty, "\(arguments)")
        }
        for value in ["2", "0.5", " 1 ", "0"] {
            let result = try Ran.run([FaultlineBinary.url.path, "check", folder.path("chat.sqlite")], environment: ["FAULTLINE_BUSY_TIMEOUT": value])
            #expect(result.status == 0, "\(value.debugDescription): \(result.stderr)")
        }
    }

    /// `help` after a command is read under it (ArgumentParser alone read `fixture help generate` as `help
    /// generate`, and showed faultline's help); every way of asking shows the same text.
    @Test func helpForACommandIsTheSameHoweverItIsAsked() throws {
        var texts: [String] = []
        for arguments in [["fixture", "generate", "--help"], ["help", "fixture", "generate"], ["fixture", "help", "generate"]] {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(arguments): \(result.stderr)")
            texts.append(result.stdout)
        }
        #expect(texts[0].contains("--users") && texts[0].contains("--out"))
        #expect(Set(texts).count == 1, "\(texts)")
    }

    /// `check` reads any Faultline store by the model it records: a store of another model is fine for it.
    @Test func checkReadsAStoreOfAnyModel() throws {
        let folder = TemporaryFolder()
        try Input.otherModelStore("notes.sqlite").make(in: folder.url.path)
        let result = try FaultlineBinary.run(["check", folder.path("notes.sqlite")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(folder.path("notes.sqlite")): ok"))
    }

    /// No command takes a predicate; the one place text reaches a predicate is the browser's search, whose text is a
    /// value (`title CONTAINS[cd] %@`), never parsed: predicate syntax in it is searched for, not an error.
    @Test func searchTextIsAValueNotAPredicate() throws {
        let folder = TemporaryFolder()
        try Input.chatStore("chat.sqlite").make(in: folder.url.path)
        for text in ["title == 'x' OR TRUEPREDICATE", "%@ %K (", "ANY members.name BEGINSWITH[cd] \"", "\\"] {
            let result = try FaultlineBinary.run(["trace", folder.path("chat.sqlite"), "--script", "search \(text)", "--size", "120x30"])
            #expect(result.status == 0, "\(text): \(result.stderr)")
            #expect(result.stderr == "", "\(text)")
            #expect(result.stdout.contains("Chats ("), "\(text)")
        }
    }

    // MARK: - Inputs

    static let someText = String(repeating: "Not a database, just notes about lunch.\n", count: 8)

    static func modelXML(_ entities: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        \(entities)
        </model>
        """
    }

    /// A chat whose `count` attribute is derived by `derivation`.
    static func chatModelXML(derivation: String) -> String {
        modelXML("""
            <entity name="Chat">
                <attribute name="count" attributeType="Integer 64" derived="YES" derivationExpression="\(derivation)"/>
                <relationship name="messages" toMany="YES" destinationEntity="Message" inverseName="chat" inverseEntity="Message"/>
                <relationship name="owner" maxCount="1" destinationEntity="Person" inverseName="owned" inverseEntity="Person"/>
            </entity>
            <entity name="Message">
                <relationship name="chat" maxCount="1" destinationEntity="Chat" inverseName="messages" inverseEntity="Chat"/>
            </entity>
            <entity name="Person">
                <relationship name="owned" toMany="YES" destinationEntity="Chat" inverseName="owner" inverseEntity="Chat"/>
            </entity>
            """)
    }
}

// MARK: - A case

/// One bad input: the files to make in a fresh folder, the command line (`{dir}` is that folder), and the fragments
/// its one `error:` line must hold: the file or argument, and the problem.
struct BadInput: Sendable, CustomTestStringConvertible {
    let name: String
    let arguments: [String]
    let inputs: [Input]
    let expect: [String]
    /// Added to the environment (from which every other `FAULTLINE_` variable is removed).
    var environment: [String: String] = BadInput.quickBusyTimeout
    /// Another connection holding the store's lock while the command runs.
    var lock: Lock?
    /// Run in a terminal (`script`), stderr to a file outside the folder.
    var terminal = false
    /// A file or folder that is read-only for the command.
    var readOnly: String?
    /// The busy timeout the command must wait out, in seconds.
    var waits: Double?

    /// One second, so the locked cases stay quick; the default (5 s) is tested once.
    static let quickBusyTimeout = ["FAULTLINE_BUSY_TIMEOUT": "1"]

    var testDescription: String { name }

    func verify() throws {
        let folder = TemporaryFolder()
        let scratch = TemporaryFolder()
        defer { withExtendedLifetime((folder, scratch)) {} }
        let dir = folder.url.path
        func expand(_ text: String) -> String { text.replacingOccurrences(of: "{dir}", with: dir) }

        for input in inputs { try input.make(in: dir) }
        var restore: () -> Void = {}
        defer { restore() }
        if let readOnly { restore = try ReadOnlyFiles.prepare(expand(readOnly)) }
        let holder = try lock.map { try StoreLock(expand($0.path), $0.kind) }
        defer { holder?.release() }

        // Should a case fall back to the default store, it would be made here, and show in the snapshot.
        var environment = environment
        environment["FAULTLINE_DEFAULT_STORE"] = environment["FAULTLINE_DEFAULT_STORE"] ?? "\(dir)/default-store.sqlite"
        let before = Snapshot(dir)
        var commandLine = [FaultlineBinary.url.path] + arguments.map(expand)
        let errors = scratch.path("stderr")
        if terminal, let script = Tools.script {
            let shell = commandLine.map(Ran.quoted).joined(separator: " ") + " 2>" + Ran.quoted(errors)
            commandLine = [script, "-qec", shell, "/dev/null"]
        }
        if let readOnly { commandLine = ReadOnlyFiles.wrap(commandLine, readOnly: expand(readOnly)) }
        let result = try Ran.run(commandLine, environment: environment)
        let after = Snapshot(dir)
        holder?.release()

        let stderr = terminal ? ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "") : result.stderr
        #expect(result.reason == .exit, "ended by a signal: \(result.status)")
        #expect(result.status != 0, "exit status 0; stdout: \(result.stdout)")
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(stderr.hasSuffix("\n") && lines.count == 2, "not one line on stderr: \(stderr.debugDescription)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("error: "), "\(line)")
        for fragment in expect.map(expand) {
            #expect(line.contains(fragment), "\(fragment.debugDescription) is not in \(line.debugDescription)")
        }
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout.debugDescription)")
        if terminal { #expect(result.stderr.isEmpty, "script: \(result.stderr)") }
        let everything = (result.stdout + result.stderr + stderr).lowercased()
        for word in ["fatal error", "backtrace", "crash", "stack dump"] {
            #expect(!everything.contains(word), "\(word): \(everything)")
        }
        #expect(after == before, "files changed: \(after.difference(from: before))")
        if let waits {
            #expect(result.seconds >= waits - 0.2, "gave up after \(result.seconds) s, before the busy timeout of \(waits) s")
            #expect(result.seconds < waits + 4, "waited \(result.seconds) s; the busy timeout is \(waits) s")
        }
    }
}

/// A file or folder a case makes, by its name in the case's folder.
enum Input: Sendable {
    case chatStore(String)
    case truncatedChatStore(String, bytes: Int)
    case otherModelStore(String)
    /// SQL run by the sqlite3 shell on a new file.
    case sqlite(String, String)
    case text(String, String)
    /// Bytes from a fixed pseudo-random sequence.
    case noise(String, bytes: Int)
    case folder(String)

    var name: String {
        switch self {
        case .chatStore(let name), .truncatedChatStore(let name, _), .otherModelStore(let name), .sqlite(let name, _),
             .text(let name, _), .noise(let name, _), .folder(let name):
            name
        }
    }

    func make(in folder: String) throws {
        let path = folder + "/" + name
        let manager = FileManager.default
        switch self {
        case .chatStore:
            try manager.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
        case .truncatedChatStore(_, let bytes):
            try manager.copyItem(atPath: Fixtures.shared.chatStore, toPath: path)
            guard truncate(path, off_t(bytes)) == 0 else { throw Failure("truncate \(path): \(String(cString: strerror(errno)))") }
        case .otherModelStore:
            try manager.copyItem(atPath: Fixtures.shared.otherModelStore, toPath: path)
        case .sqlite(_, let sql):
            try Tools.sqlite3(path, sql)
        case .text(_, let text):
            guard manager.createFile(atPath: path, contents: Data(text.utf8)) else { throw Failure("cannot write \(path)") }
        case .noise(_, let count):
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            let bytes = (0..<count).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            guard manager.createFile(atPath: path, contents: Data(bytes)) else { throw Failure("cannot write \(path)") }
        case .folder:
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }
}

/// The stores cases copy: made once, each a single file (no -wal or -shm beside it).
struct Fixtures: Sendable {
    let chatStore: String
    let otherModelStore: String

    static let shared: Fixtures = {
        let folder = ProcessFolders.make("bad-input-fixtures").path
        // 12 chats, as the tests that read it expect.
        let chat = folder + "/chat.sqlite"
        let made = try! FaultlineBinary.run(["fixture", "generate", "--out", chat, "--users", "40", "--chats", "12", "--messages", "400"])
        precondition(made.status == 0, "fixture generate failed: \(made.stderr)")
        // A GraphStore store of a notes model; the sqlite3 shell, closing last, folds the -wal in and removes it.
        let notes = folder + "/notes.sqlite"
        do {
            let model = try! ObjectModel { EntityDescription("Note") { Attribute("text", .string) } }
            let coordinator = try! PersistentStoreCoordinator(path: notes, model: model)
            let context = ObjectContext(coordinator: coordinator)
            context.insert("Note").setValue("lunch at noon", forKey: "text")
            try! context.save()
        }
        try! Tools.sqlite3(notes, "PRAGMA wal_checkpoint(TRUNCATE);")
        return Fixtures(chatStore: chat, otherModelStore: notes)
    }()
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Locks

/// Which store a case locks, and how.
struct Lock: Sendable {
    enum Kind: Sendable, CustomStringConvertible {
        /// `PRAGMA locking_mode = EXCLUSIVE` and a write transaction: nobody else may even read.
        case readersAndWriters
        /// A write transaction (`BEGIN EXCLUSIVE` in WAL mode): readers go on, writers wait; the -wal is empty.
        case writers
        /// The same after a commit left frames in the -wal (as a writer at work leaves it).
        case writersWithWAL

        var description: String {
            switch self {
            case .readersAndWriters: "locked against readers and writers"
            case .writers: "locked by a writer"
            case .writersWithWAL: "locked by a writer with a -wal"
            }
        }
    }

    let path: String
    let kind: Kind
}

/// The sqlite3 shell holding a store's lock until released.
final class StoreLock {
    private let process = Process()
    private let input = Pipe()
    private var released = false

    init(_ path: String, _ kind: Lock.Kind) throws {
        let statements = switch kind {
        case .readersAndWriters: "PRAGMA locking_mode = EXCLUSIVE;\nBEGIN EXCLUSIVE;\nSELECT COUNT(*) FROM Z_PRIMARYKEY;\n"
        case .writers: "BEGIN EXCLUSIVE;\n"
        case .writersWithWAL: "PRAGMA wal_autocheckpoint = 0;\nCREATE TABLE scratch (x);\nDROP TABLE scratch;\nBEGIN EXCLUSIVE;\n"
        }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: Tools.sqlite3Path)
        process.arguments = ["-bail", path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((statements + "SELECT 'locked';\n").utf8))
        // The shell answers each statement as it runs it; the last answer means the lock is held.
        var seen = ""
        while !seen.contains("locked\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else {
                release()
                throw Failure("sqlite3 could not lock \(path) (\(kind))")
            }
            seen += String(decoding: data, as: UTF8.self)
        }
    }

    func release() {
        guard !released else { return }
        released = true
        if process.isRunning {
            input.fileHandleForWriting.write(Data("COMMIT;\n.quit\n".utf8))
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { release() }
}

// MARK: - Running

/// A finished process: how it ended, what it printed, how long it took.
struct Ran {
    let status: Int32
    let reason: Process.TerminationReason
    let stdout: String
    let stderr: String
    let seconds: Double
    /// Whether it was still running after the time limit, and was killed.
    var timedOut = false

    /// Runs `commandLine` with stdin at /dev/null, in the test's environment without its `FAULTLINE_` variables, plus
    /// `environment`; with a `timeout`, killed (SIGKILL) once it has run that many seconds.
    static func run(_ commandLine: [String], environment: [String: String], timeout: Double? = nil) throws -> Ran {
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FAULTLINE_") }
        merged.merge(environment) { _, new in new }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: commandLine[0])
        process.arguments = Array(commandLine.dropFirst())
        process.environment = merged
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let start = ContinuousClock.now
        try process.run()
        let errData = Data.readAsync(err.fileHandleForReading)
        let outData = Data.readAsync(out.fileHandleForReading)
        var timedOut = false
        if let timeout {
            let finished = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                process.waitUntilExit()
                finished.signal()
            }
            if finished.wait(timeout: .now() + timeout) == .timedOut {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                finished.wait()
            }
        } else {
            process.waitUntilExit()
        }
        let elapsed = ContinuousClock.now - start
        return Ran(status: process.terminationStatus, reason: process.terminationReason,
                   stdout: String(decoding: outData.wait(), as: UTF8.self), stderr: String(decoding: errData.wait(), as: UTF8.self),
                   seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, timedOut: timedOut)
    }

    /// `text` as one word for the shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

enum Tools {
    static let sqlite3Path = "/usr/bin/sqlite3"

    /// util-linux `script`, which runs a command on a new pseudo-terminal.
    static let script: String? = executable("script")

    /// Whether this build has `faultline simulate`.
    static let hasSimulate: Bool = (try? FaultlineBinary.run(["simulate", "--help"]).status == 0) ?? false

    static func executable(_ name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func sqlite3(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlite3Path)
        process.arguments = ["-bail", path, sql]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure("sqlite3 \(path) \(sql) exited with \(process.terminationStatus)") }
    }
}

/// Making a file or folder read-only for one command. Not root: its mode (0444, a folder 0555). Root, whom modes do
/// not stop: a read-only bind mount of it, in a mount namespace of the command's own (`unshare -m`), so nothing
/// outside the command sees it; where that is not allowed (a container without CAP_SYS_ADMIN), the cases are skipped.
enum ReadOnlyFiles {
    enum Method { case mode, bindMount }

    static let method: Method? = {
        if getuid() != 0 { return .mode }
        guard Tools.executable("unshare") != nil else { return nil }
        // A probe: inside the namespace, writing the bound file must fail.
        let folder = TemporaryFolder()
        let probe = folder.path("probe")
        guard FileManager.default.createFile(atPath: probe, contents: Data("probe".utf8)),
              let ran = try? Ran.run(wrap(["/bin/sh", "-c", "! (echo x >> \"$1\") 2>/dev/null", "sh", probe], readOnly: probe, method: .bindMount),
                                     environment: [:]),
              ran.status == 0, ran.stderr.isEmpty,
              FileManager.default.contents(atPath: probe) == Data("probe".utf8)
        else { return nil }
        return .bindMount
    }()

    static var isAvailable: Bool { method != nil }

    /// Makes `path` read-only (by its mode, where that is the method); returns what puts it back.
    static func prepare(_ path: String) throws -> () -> Void {
        guard method == .mode else { return {} }
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure("stat \(path): \(String(cString: strerror(errno)))") }
        let isFolder = info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR)
        guard chmod(path, isFolder ? 0o555 : 0o444) == 0 else { throw Failure("chmod \(path): \(String(cString: strerror(errno)))") }
        return { _ = chmod(path, info.st_mode & 0o7777) }
    }

    /// `commandLine`, run so that `path` is read-only for it.
    static func wrap(_ commandLine: [String], readOnly path: String, method: Method? = ReadOnlyFiles.method) -> [String] {
        guard method == .bindMount, let unshare = Tools.executable("unshare") else { return commandLine }
        return [unshare, "-m", "/bin/sh", "-c", "mount --bind -o ro \"$1\" \"$1\" && shift && exec \"$@\"", "sh", path] + commandLine
    }
}

/// Every file and folder under a folder: files by their bytes (-wal and -shm included), folders by name.
struct Snapshot: Equatable {
    enum Entry: Equatable {
        case folder
        case file(Data)
        case other(mode_t)
    }

    let entries: [String: Entry]

    init(_ folder: String) {
        var entries: [String: Entry] = [:]
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? [] {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & mode_t(S_IFMT) {
            case mode_t(S_IFREG): entries[name] = .file(FileManager.default.contents(atPath: path) ?? Data())
            case mode_t(S_IFDIR): entries[name] = .folder
            default: entries[name] = .other(info.st_mode)
            }
        }
        self.entries = entries
    }

    func difference(from before: Snapshot) -> String {
        let created = Set(entries.keys).subtracting(before.entries.keys).sorted()
        let removed = Set(before.entries.keys).subtracting(entries.keys).sorted()
        let changed = entries.keys.filter { name in before.entries[name].map { $0 != entries[name] } ?? false }.sorted()
        return "created \(created), removed \(removed), changed \(changed)"
    }
}
