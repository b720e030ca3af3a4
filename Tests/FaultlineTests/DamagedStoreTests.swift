import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh chat store damaged in many ways, one way per case, each given to every command that takes a store:
/// `check`, `trace` (opening chats and scrolling), `delete --dry-run`, `delete` and `simulate`. Whatever the damage,
/// a command ends with exit status 0 (for `check`, also 1 with its report), or with one `error:` line and a non-zero
/// status: never a signal, a trap or a backtrace. `check` and `delete --dry-run` leave the file byte for byte as it
/// was and put nothing beside it.
@Suite struct DamagedStoreTests {
    /// How a case damages the store: SQL run by the sqlite3 shell, or a query whose output rows are that SQL.
    enum Damage {
        case sql(String)
        case generated(String)
    }

    struct Case: Sendable {
        let name: String
        let damage: [Damage]
        init(_ name: String, _ sql: String) {
            self.name = name
            damage = [.sql(sql)]
        }
        init(_ name: String, generated query: String) {
            self.name = name
            damage = [.generated(query)]
        }
    }

    static let max = "9223372036854775807"
    static let min = "-9223372036854775808"
    /// Invalid UTF-8: a lone continuation byte, a truncated sequence, bytes that never occur in UTF-8.
    static let badUTF8 = "CAST(X'61C328FFFE80E282' AS TEXT)"
    /// 10 MB of text.
    static let huge = "replace(hex(zeroblob(5000000)), '0', 'x')"

    static let cases: [Case] = [
        // Wrong types in keys, versions and entity numbers.
        Case("text in Z_ENT", "UPDATE ZCHAT SET Z_ENT = 'direct' WHERE Z_PK <= 3;"),
        Case("text in Z_OPT", "UPDATE ZCHAT SET Z_OPT = 'v1'; UPDATE ZMESSAGE SET Z_OPT = 'v1';"),
        Case("real in Z_OPT", "UPDATE ZCHAT SET Z_OPT = 2.5;"),
        Case("NULL in Z_ENT and Z_OPT", "UPDATE ZCHAT SET Z_ENT = NULL, Z_OPT = NULL WHERE Z_PK <= 3; UPDATE ZUSER SET Z_ENT = NULL;"),
        Case("text in foreign keys", "UPDATE ZMESSAGE SET ZCHAT = 'one', ZSENDER = 'me'; UPDATE ZCHATMEMBER SET ZUSER = 'x';"),
        Case("blobs in foreign keys", "UPDATE ZMESSAGE SET ZCHAT = X'DEADBEEF', ZREPLYTO = X'00'; UPDATE ZCHAT SET ZLASTMESSAGE = X'01';"),
        Case("reals in foreign keys", "UPDATE ZMESSAGE SET ZCHAT = ZCHAT + 0.5; UPDATE ZCHATMEMBER SET ZCHAT = 1e300;"),
        Case("text and reals in entity columns of keys", generated: """
            SELECT 'UPDATE ' || m.name || ' SET ' || p.name || ' = ''chat'';' FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND p.name GLOB 'Z[0-9]*_*';
            """),
        Case("text in Z_FOK order columns", generated: """
            SELECT 'UPDATE ' || m.name || ' SET ' || p.name || ' = ''first'';' FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND p.name GLOB 'Z_FOK_*';
            """),
        Case("text in join tables", generated: """
            SELECT 'UPDATE OR IGNORE ' || m.name || ' SET ' || p.name || ' = ''who'';' FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND m.name GLOB 'Z_[0-9]*' AND p.cid = 1;
            """),
        // Wrong types in attributes.
        Case("NULL where required", "UPDATE ZMESSAGE SET ZTEXT = NULL, ZSENTAT = NULL, ZKIND = NULL; UPDATE ZCHAT SET ZTITLE = NULL, ZCREATEDAT = NULL, ZISPINNED = NULL; UPDATE ZUSER SET ZNAME = NULL, ZHANDLE = NULL;"),
        Case("numbers and blobs in text", "UPDATE ZMESSAGE SET ZTEXT = 42; UPDATE ZCHAT SET ZTITLE = X'00FF10'; UPDATE ZUSER SET ZNAME = 1.5;"),
        Case("text in dates", "UPDATE ZMESSAGE SET ZSENTAT = 'yesterday'; UPDATE ZCHAT SET ZLASTMESSAGEAT = 'soon', ZCREATEDAT = X'00';"),
        Case("dates out of range", "UPDATE ZMESSAGE SET ZSENTAT = 1e300 WHERE Z_PK % 2 = 0; UPDATE ZMESSAGE SET ZSENTAT = -1e300 WHERE Z_PK % 2 = 1; UPDATE ZCHAT SET ZLASTMESSAGEAT = 1e18, ZCREATEDAT = -1e18;"),
        Case("infinite dates", "UPDATE ZMESSAGE SET ZSENTAT = 1e999; UPDATE ZCHAT SET ZLASTMESSAGEAT = -1e999; UPDATE ZCHATMEMBER SET ZJOINEDAT = 1e999, ZLASTREADAT = -1e999;"),
        Case("Int64.max and min in dates", "UPDATE ZMESSAGE SET ZSENTAT = \(max); UPDATE ZCHAT SET ZLASTMESSAGEAT = \(min); UPDATE ZUSER SET ZCREATEDAT = \(max);"),
        Case("text and blobs in integers and booleans", "UPDATE ZMESSAGE SET ZKIND = 'image', ZISEDITED = 'yes'; UPDATE ZCHATMEMBER SET ZROLE = X'02'; UPDATE ZCHAT SET ZISPINNED = 'no', ZISMUTED = 2.5;"),
        Case("integers out of range", "UPDATE ZMESSAGE SET ZKIND = \(max); UPDATE ZCHATMEMBER SET ZROLE = \(min); UPDATE ZATTACHMENT SET ZBYTESIZE = \(max); UPDATE ZCHAT SET ZISPINNED = \(min);"),
        Case("reals in integers", "UPDATE ZMESSAGE SET ZKIND = 1e300; UPDATE ZCHATMEMBER SET ZROLE = -1e300; UPDATE ZATTACHMENT SET ZBYTESIZE = 1e999;"),
        Case("text in blobs", "UPDATE ZUSERPROFILE SET ZAVATAR = 'picture';"),
        // Derived counts.
        Case("counts out of range", "UPDATE ZCHAT SET ZMESSAGESCOUNT = \(max), ZMEMBERSCOUNT = \(min);"),
        Case("text and negative counts", "UPDATE ZCHAT SET ZMESSAGESCOUNT = 'many', ZMEMBERSCOUNT = -5;"),
        // Keys, versions and entity numbers out of range.
        Case("Int64.max in Z_OPT", "UPDATE ZCHAT SET Z_OPT = \(max); UPDATE ZMESSAGE SET Z_OPT = \(max); UPDATE ZUSER SET Z_OPT = \(max);"),
        Case("Int64.min in Z_OPT", "UPDATE ZCHAT SET Z_OPT = \(min); UPDATE ZMESSAGE SET Z_OPT = -1;"),
        Case("Int64.max in Z_PK", "UPDATE ZMESSAGE SET Z_PK = \(max) WHERE Z_PK = (SELECT MAX(Z_PK) FROM ZMESSAGE); UPDATE ZCHAT SET Z_PK = \(max) WHERE Z_PK = 2;"),
        Case("Int64.min in Z_PK", "UPDATE ZMESSAGE SET Z_PK = \(min) WHERE Z_PK = 1; UPDATE ZCHAT SET Z_PK = \(min) WHERE Z_PK = 2;"),
        Case("negative and zero keys", "UPDATE ZCHAT SET Z_PK = -1 WHERE Z_PK = 1; UPDATE ZCHAT SET Z_PK = 0 WHERE Z_PK = 3; UPDATE ZMESSAGE SET ZCHAT = -1 WHERE ZCHAT = 1; UPDATE ZUSER SET Z_PK = -2 WHERE Z_PK = 2;"),
        Case("Int64.max and min in foreign keys", "UPDATE ZMESSAGE SET ZCHAT = \(max), ZSENDER = \(min); UPDATE ZCHAT SET ZLASTMESSAGE = \(max);"),
        Case("Int64.max in Z_ENT", "UPDATE ZCHAT SET Z_ENT = \(max) WHERE Z_PK <= 3; UPDATE ZMESSAGE SET Z_ENT = \(min) WHERE Z_PK <= 3;"),
        Case("unknown Z_ENT", "UPDATE ZCHAT SET Z_ENT = 99 WHERE Z_PK <= 5; UPDATE ZMESSAGE SET Z_ENT = 0 WHERE Z_PK <= 5; UPDATE ZUSER SET Z_ENT = -1 WHERE Z_PK = 2;"),
        Case("Z_ENT of another entity", "UPDATE ZCHAT SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Message') WHERE Z_PK <= 5; UPDATE ZMESSAGE SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'User') WHERE Z_PK <= 5;"),
        Case("Z_ENT of the abstract entity", "UPDATE ZCHAT SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Chat');"),
        // Z_PRIMARYKEY.
        Case("text in Z_MAX", "UPDATE Z_PRIMARYKEY SET Z_MAX = 'lots';"),
        Case("Int64.max in Z_MAX", "UPDATE Z_PRIMARYKEY SET Z_MAX = \(max);"),
        Case("Int64.min and NULL in Z_MAX", "UPDATE Z_PRIMARYKEY SET Z_MAX = \(min) WHERE Z_NAME = 'Message'; UPDATE Z_PRIMARYKEY SET Z_MAX = NULL WHERE Z_NAME <> 'Message';"),
        Case("Z_MAX behind the keys", "UPDATE Z_PRIMARYKEY SET Z_MAX = 1;"),
        Case("Z_PRIMARYKEY rows missing", "DELETE FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Message', 'Chat', 'User');"),
        Case("Z_PRIMARYKEY empty", "DELETE FROM Z_PRIMARYKEY;"),
        Case("Z_PRIMARYKEY names and numbers wrong", "UPDATE Z_PRIMARYKEY SET Z_NAME = 'Ghost' WHERE Z_NAME = 'Message'; UPDATE Z_PRIMARYKEY SET Z_SUPER = 'x'; INSERT INTO Z_PRIMARYKEY VALUES (99, 'Stranger', 0, 5);"),
        Case("Z_PRIMARYKEY entity numbers out of range", "UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 1000; INSERT INTO Z_PRIMARYKEY VALUES (\(max), 'Message', \(min), \(max));"),
        // Dangling keys.
        Case("dangling to-one keys", "UPDATE ZMESSAGE SET ZCHAT = 999999 WHERE Z_PK % 3 = 0; UPDATE ZMESSAGE SET ZSENDER = 888888; UPDATE ZCHAT SET ZLASTMESSAGE = 777777, ZOWNER = 666666; UPDATE ZUSER SET ZPROFILE = 555555;"),
        Case("dangling join-table keys", generated: """
            SELECT 'UPDATE OR IGNORE ' || name || ' SET ' || (SELECT name FROM pragma_table_info(m.name) WHERE cid = 1) || ' = 424242;'
            FROM sqlite_master m WHERE type = 'table' AND name GLOB 'Z_[0-9]*';
            """),
        Case("members and messages without chats", "UPDATE ZCHATMEMBER SET ZCHAT = NULL, ZUSER = NULL; UPDATE ZMESSAGE SET ZCHAT = NULL WHERE Z_PK % 2 = 0;"),
        Case("reply cycles", "UPDATE ZMESSAGE SET ZREPLYTO = Z_PK, ZFORWARDEDFROM = Z_PK + 1;"),
        Case("no chats", "DELETE FROM ZCHAT;"),
        Case("no members", "DELETE FROM ZCHATMEMBER;"),
        Case("no users", "DELETE FROM ZUSER;"),
        Case("no messages", "DELETE FROM ZMESSAGE;"),
        // Tables, triggers and indexes.
        Case("a table dropped", "DROP TABLE ZREACTION;"),
        Case("the main tables dropped", "DROP TABLE ZMESSAGE; DROP TABLE ZCHAT;"),
        Case("Z_PRIMARYKEY dropped", "DROP TABLE Z_PRIMARYKEY;"),
        Case("join tables dropped", generated: "SELECT 'DROP TABLE ' || name || ';' FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z_[0-9]*';"),
        Case("triggers dropped", generated: "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger';"),
        Case("indexes dropped", generated: "SELECT 'DROP INDEX ' || name || ';' FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL;"),
        Case("a column dropped", "DROP INDEX ZMESSAGE_ZSENDER_INDEX; ALTER TABLE ZMESSAGE DROP COLUMN ZSENDER;"),
        Case("a column added", "ALTER TABLE ZMESSAGE ADD COLUMN ZEXTRA TEXT;"),
        Case("duplicate Z_PK", """
            ALTER TABLE ZMESSAGE RENAME TO ZMESSAGE_OLD; CREATE TABLE ZMESSAGE AS SELECT * FROM ZMESSAGE_OLD;
            INSERT INTO ZMESSAGE SELECT * FROM ZMESSAGE_OLD WHERE Z_PK <= 20; DROP TABLE ZMESSAGE_OLD;
            """),
        Case("duplicate Z_PK in a table that keeps its types", """
            ALTER TABLE ZUSER RENAME TO ZUSER_OLD;
            CREATE TABLE ZUSER (Z_PK INTEGER, Z_ENT INTEGER, Z_OPT INTEGER, ZPROFILE INTEGER, ZCREATEDAT TIMESTAMP, ZHANDLE VARCHAR, ZNAME VARCHAR, ZSTATUSMESSAGE VARCHAR);
            INSERT INTO ZUSER SELECT Z_PK, Z_ENT, Z_OPT, ZPROFILE, ZCREATEDAT, ZHANDLE, ZNAME, ZSTATUSMESSAGE FROM ZUSER_OLD;
            INSERT INTO ZUSER SELECT Z_PK, Z_ENT, Z_OPT, ZPROFILE, ZCREATEDAT, ZHANDLE || 'b', ZNAME, ZSTATUSMESSAGE FROM ZUSER_OLD;
            DROP TABLE ZUSER_OLD;
            """),
        // Text.
        Case("invalid UTF-8 in text", "UPDATE ZMESSAGE SET ZTEXT = \(badUTF8); UPDATE ZCHAT SET ZTITLE = \(badUTF8); UPDATE ZUSER SET ZNAME = \(badUTF8), ZHANDLE = \(badUTF8) || Z_PK;"),
        Case("invalid UTF-8 in the store's own tables", "UPDATE Z_PRIMARYKEY SET Z_NAME = \(badUTF8) WHERE Z_NAME = 'Message'; UPDATE Z_METADATA SET Z_UUID = \(badUTF8);"),
        Case("huge text", "UPDATE ZCHAT SET ZTITLE = \(huge) WHERE Z_PK = 1; UPDATE ZMESSAGE SET ZTEXT = \(huge) WHERE Z_PK = (SELECT MAX(Z_PK) FROM ZMESSAGE WHERE ZCHAT = 1);"),
        Case("control characters in text", "UPDATE ZCHAT SET ZTITLE = char(27) || '[2J' || char(0) || char(10) || char(13) || char(8) || char(173) || char(8238) || 'x' || char(769); UPDATE ZMESSAGE SET ZTEXT = char(9, 10, 11, 12, 13, 27, 155, 65279);"),
        Case("empty text", "UPDATE ZCHAT SET ZTITLE = ''; UPDATE ZMESSAGE SET ZTEXT = ''; UPDATE ZUSER SET ZNAME = '', ZHANDLE = '' || Z_PK;"),
        // Z_METADATA and Z_MODELCACHE.
        Case("Z_METADATA plist damaged", "UPDATE Z_METADATA SET Z_PLIST = X'00';"),
        Case("Z_METADATA plist of another type", "UPDATE Z_METADATA SET Z_PLIST = 'text', Z_UUID = 42;"),
        Case("Z_METADATA values of other types", "UPDATE Z_METADATA SET Z_PLIST = 42, Z_UUID = X'00FF';"),
        Case("Z_METADATA UUID missing", "UPDATE Z_METADATA SET Z_UUID = NULL;"),
        Case("Z_METADATA UUID empty or with a slash", "UPDATE Z_METADATA SET Z_UUID = 'a/b';"),
        Case("Z_METADATA row missing", "DELETE FROM Z_METADATA;"),
        Case("Z_METADATA two rows", "INSERT INTO Z_METADATA SELECT 2, 'OTHER-UUID', Z_PLIST FROM Z_METADATA;"),
        Case("Z_METADATA dropped", "DROP TABLE Z_METADATA;"),
        Case("Z_MODELCACHE damaged", "UPDATE Z_MODELCACHE SET Z_CONTENT = X'7B7D';"),
        Case("Z_MODELCACHE not JSON", "UPDATE Z_MODELCACHE SET Z_CONTENT = X'00FF';"),
        Case("Z_MODELCACHE empty", "DELETE FROM Z_MODELCACHE;"),
        Case("Z_MODELCACHE dropped", "DROP TABLE Z_MODELCACHE;"),
    ]

    /// A short browsing session: open chats, scroll both panes, look at members, search; then delete a message,
    /// save, undo and save again (the browser's own writes on a damaged store).
    static let script = "down 2; open; up 40; pageup; pagedown; back; bottom; open; members; back; top; open; tab; down 5; "
        + "search a; open; delete; confirm; save; undo; save"

    /// The store every case starts from, generated once.
    static let base: Result<String, Failure> = {
        let folder = ProcessFolders.make("damaged-base")
        do {
            let path = folder.appendingPathComponent("chat.sqlite").path
            let made = try Command.run(["fixture", "generate", "--out", path, "--users", "50", "--chats", "20", "--messages", "400"])
            guard made.status == 0 else { return .failure(Failure("fixture generate: \(made.stderr)")) }
            return .success(path)
        } catch {
            return .failure(Failure("fixture generate: \(error)"))
        }
    }()

    @Test(.timeLimit(.minutes(3)))
    func everyCommandEndsCleanlyOnEveryDamagedStore() throws {
        let base = try Self.base.get()
        #expect(Self.cases.count >= 40)
        let results = Results()
        // Two cases at a time: each runs five commands, one after another.
        let cases = Self.cases
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for index in stride(from: worker, to: cases.count, by: 2) {
                results.append(Self.run(cases[index], base: base))
            }
        }
        let problems = results.all.sorted()
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    /// The problems one case finds, one line each.
    static func run(_ damaged: Case, base: String) -> [String] {
        let folder = TemporaryFolder()
        let store = folder.path("chat.sqlite")
        var problems: [String] = []
        do {
            try FileManager.default.copyItem(atPath: base, toPath: store)
            try Shell.apply(damaged.damage, to: store)
        } catch {
            return ["\(damaged.name): could not damage the store: \(error)"]
        }
        let commands: [(name: String, arguments: [String], readOnly: Bool)] = [
            ("check", ["check", "STORE"], true),
            ("delete --dry-run", ["delete", "STORE", "--user", "3", "--dry-run", "--json"], true),
            ("trace", ["trace", "STORE", "--script", script, "--size", "100x30"], false),
            ("delete", ["delete", "STORE", "--chat", "2"], false),
            ("simulate", ["simulate", "STORE", "--count", "5", "--rate", "0"], false),
        ]
        for command in commands {
            let label = "\(damaged.name): \(command.name)"
            let target: String
            if command.readOnly {
                target = store
            } else {
                target = folder.path("\(command.name.replacingOccurrences(of: " ", with: "-")).sqlite")
                do { try FileManager.default.copyItem(atPath: store, toPath: target) } catch {
                    problems.append("\(label): could not copy the store: \(error)")
                    continue
                }
            }
            let before = command.readOnly ? Snapshot(folder: folder.url, file: store) : nil
            let ran: Command.Outcome
            do {
                ran = try Command.run(command.arguments.map { $0 == "STORE" ? target : $0 }, timeout: 30)
            } catch {
                problems.append("\(label): could not run: \(error)")
                continue
            }
            problems += ran.problems(label: label, isCheck: command.name.hasPrefix("check"))
            if let before, Snapshot(folder: folder.url, file: store) != before {
                problems.append("\(label): changed the file or the folder beside it")
            }
        }
        return problems
    }

    /// A file's bytes and the names in its folder.
    struct Snapshot: Equatable {
        let bytes: Data?
        let names: [String]
        init(folder: URL, file: String) {
            bytes = FileManager.default.contents(atPath: file)
            names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        }
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var problems: [String] = []
        func append(_ more: [String]) { lock.withLock { problems += more } }
        var all: [String] { lock.withLock { problems } }
    }

    /// The sqlite3 shell on a store.
    enum Shell {
        static func apply(_ damage: [Damage], to path: String) throws {
            for step in damage {
                switch step {
                case .sql(let sql):
                    _ = try run(path, sql)
                case .generated(let query):
                    let sql = try run(path, query)
                    guard !sql.isEmpty else { throw Failure("the query made no SQL: \(query)") }
                    _ = try run(path, sql)
                }
            }
        }

        /// Runs `sql` and returns what it printed.
        static func run(_ path: String, _ sql: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Tools.sqlite3Path)
            process.arguments = ["-bail", path]
            let input = Pipe()
            let output = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let errorText = Data.readAsync(errors.fileHandleForReading)
            input.fileHandleForWriting.write(Data(sql.utf8))
            try input.fileHandleForWriting.close()
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let stderr = String(decoding: errorText.wait(), as: UTF8.self)
            guard process.terminationStatus == 0, stderr.isEmpty else {
                throw Failure("sqlite3 exited with \(process.terminationStatus): \(stderr) (\(sql.prefix(200)))")
            }
            return String(decoding: printed, as: UTF8.self)
        }
    }

    /// The faultline binary, killed if it runs past a time limit.
    enum Command {
        typealias Outcome = Ran

        static func run(_ arguments: [String], timeout: Double = 120) throws -> Outcome {
            // A trap still ends the process by a signal and prints "Fatal error"; without the backtracer it does
            // so at once rather than after seconds of symbolication.
            try Ran.run([FaultlineBinary.url.path] + arguments,
                        environment: ["FAULTLINE_BUSY_TIMEOUT": "1", "SWIFT_BACKTRACE": "enable=no"], timeout: timeout)
        }
    }
}

extension Ran {
    /// What is wrong with how the command ended.
    func problems(label: String, isCheck: Bool) -> [String] {
        let firstLines = stderr.split(separator: "\n", omittingEmptySubsequences: false).prefix(3).joined(separator: " | ")
        if timedOut { return ["\(label): still running after 30 s (killed)"] }
        if reason == .uncaughtSignal { return ["\(label): killed by signal \(status): \(firstLines.prefix(400))"] }
        for marker in ["Fatal error", "Crash", "backtrace", "💣", "Illegal instruction", "Segmentation fault"] where stderr.contains(marker) {
            return ["\(label): '\(marker)' on stderr (exit \(status)): \(firstLines.prefix(400))"]
        }
        if status == 0 || (isCheck && status == 1) {
            return stderr.isEmpty ? [] : ["\(label): exit \(status) with stderr: \(firstLines.prefix(400))"]
        }
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 2, lines[1].isEmpty, lines[0].hasPrefix("error: ") else {
            return ["\(label): exit \(status) without one error line: \(firstLines.prefix(400))"]
        }
        return []
    }
}
