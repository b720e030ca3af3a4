import Foundation
import GraphStore
import Testing

/// `faultline check` end to end: stores made through GraphStore, damaged with the sqlite3 shell, checked by the
/// built binary.
@Suite struct CheckCommandTests {
    /// Chat 1 (title, messagesCount), Message 2, Person 3; Chat.members ↔ Person.chats in Z_1MEMBERS.
    private static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Chat") {
                Attribute("title", .string)
                Attribute.derived("messagesCount", "messages.@count")
                Relationship.toMany("messages", "Message", inverse: "chat")
                Relationship.toMany("members", "Person", inverse: "chats")
            }
            EntityDescription("Message") {
                Attribute("text", .string)
                Relationship.toOne("chat", "Chat", inverse: "messages")
            }
            EntityDescription("Person") {
                Attribute("name", .string)
                Relationship.toMany("chats", "Chat", inverse: "members")
            }
        }
    }

    /// A store with one chat, three messages in it and two members; returns its UUID. The coordinator is closed
    /// and the WAL folded in before returning, so the file alone is the whole store.
    private static func makeStore(at path: String) throws -> String {
        let uuid: String
        do {
            let coordinator = try PersistentStoreCoordinator(path: path, model: try model())
            let context = ObjectContext(coordinator: coordinator, name: "setup")
            let chat = context.insert("Chat")
            chat.setValue("lunch", forKey: "title")
            for text in ["hi", "noodles?", "yes"] {
                let message = context.insert("Message")
                message.setValue(text, forKey: "text")
                message.setObject(chat, forKey: "chat")
            }
            for name in ["ann", "ben"] {
                let person = context.insert("Person")
                person.setValue(name, forKey: "name")
                chat.add(person, toKey: "members")
            }
            try context.save()
            uuid = coordinator.store.storeUUID
        }
        try sqlite3(path, "PRAGMA wal_checkpoint(TRUNCATE);")
        return uuid
    }

    private static func sqlite3(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", path, sql]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
    }

    private func lines(_ text: String) -> [String] {
        Array(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(text.hasSuffix("\n") ? 1 : 0))
    }

    private func words(_ line: String) -> [String] {
        line.split(separator: " ").map(String.init)
    }

    @Test func aSoundStoreExitsZeroWithASummary() throws {
        let folder = TemporaryFolder()
        let path = folder.path("lunch.sqlite")
        let uuid = try Self.makeStore(at: path)
        let before = try #require(FileManager.default.contents(atPath: path))
        let result = try FaultlineBinary.run(["check", path])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let output = lines(result.stdout)
        #expect(output.first == "\(path): ok")
        #expect(output.contains("store \(uuid): 6 rows in 3 entities, 2 links in 1 join table"))
        #expect(output.contains { words($0) == ["entity", "table", "rows"] })
        #expect(output.contains { words($0) == ["Chat", "ZCHAT", "1"] })
        #expect(output.contains { words($0) == ["Message", "ZMESSAGE", "3"] })
        #expect(output.contains { words($0) == ["Person", "ZPERSON", "2"] })
        #expect(output.contains { words($0) == ["Z_1MEMBERS", "2"] })
        #expect(output.count < 24, "one screen")
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    @Test func violationsExitOneWithALineEach() throws {
        let folder = TemporaryFolder()
        let path = folder.path("lunch.sqlite")
        let uuid = try Self.makeStore(at: path)
        try Self.sqlite3(path, """
            UPDATE ZMESSAGE SET ZCHAT = 999;
            UPDATE ZCHAT SET ZMESSAGESCOUNT = 7;
            INSERT INTO Z_1MEMBERS (Z_1CHATS, Z_3MEMBERS) VALUES (1, 42);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Message';
            """)
        let before = try #require(FileManager.default.contents(atPath: path))
        let result = try FaultlineBinary.run(["check", path])
        #expect(result.status == 1)
        #expect(result.stderr == "")
        let output = lines(result.stdout)
        #expect(output == [
            "\(path): 6 violations",
            "primaryKey Message.Z_MAX x-coredata://\(uuid)/Message/p3: Z_PRIMARYKEY.Z_MAX is 1 but ZMESSAGE already holds Z_PK 3: new objects would get keys in use",
            "foreignKey Message.chat x-coredata://\(uuid)/Message/p1: points at Z_PK 999, which is not a row of ZCHAT",
            "foreignKey Message.chat x-coredata://\(uuid)/Message/p2: points at Z_PK 999, which is not a row of ZCHAT",
            "foreignKey Message.chat x-coredata://\(uuid)/Message/p3: points at Z_PK 999, which is not a row of ZCHAT",
            "joinTable Chat.members x-coredata://\(uuid)/Chat/p1: Z_1MEMBERS links it through Z_3MEMBERS to Z_PK 42, which is not a row of ZPERSON",
            "derived Chat.messagesCount x-coredata://\(uuid)/Chat/p1: is 7, but messages holds 0",
            "6 violations: 1 primaryKey, 3 foreignKey, 1 joinTable, 1 derived",
        ])
        #expect(FileManager.default.contents(atPath: path) == before)

        let capped = try FaultlineBinary.run(["check", path, "--limit", "1"])
        #expect(capped.status == 1)
        let cappedLines = lines(capped.stdout)
        #expect(cappedLines.filter { $0.hasPrefix("foreignKey ") }.count == 1)
        #expect(cappedLines.contains("  … and 2 more foreignKey"))
        #expect(cappedLines.last == "6 violations: 1 primaryKey, 3 foreignKey, 1 joinTable, 1 derived")
    }

    @Test func jsonHasTheDocumentedShape() throws {
        let folder = TemporaryFolder()
        let path = folder.path("lunch.sqlite")
        let uuid = try Self.makeStore(at: path)

        let clean = try FaultlineBinary.run(["check", path, "--json"])
        #expect(clean.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(clean.stdout.utf8)) as? [String: Any])
        #expect(report["store"] as? String == path)
        #expect(report["storeUUID"] as? String == uuid)
        #expect(report["ok"] as? Bool == true)
        let entities = try #require(report["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Chat", "Message", "Person"])
        #expect(entities.map { $0["rows"] as? Int } == [1, 3, 2])
        #expect((report["joinTables"] as? [[String: Any]])?.first?["rows"] as? Int == 2)
        #expect((report["violations"] as? [Any])?.isEmpty == true)
        #expect(report["violationCount"] as? Int == 0)

        try Self.sqlite3(path, "UPDATE ZMESSAGE SET ZCHAT = 999 WHERE Z_PK = 2; UPDATE Z_METADATA SET Z_PLIST = X'00';")
        let damaged = try FaultlineBinary.run(["check", path, "--json"])
        #expect(damaged.status == 1)
        #expect(damaged.stderr == "")
        let damagedReport = try #require(try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any])
        #expect(damagedReport["ok"] as? Bool == false)
        #expect(damagedReport["violationCount"] as? Int == 2)
        let violations = try #require(damagedReport["violations"] as? [[String: Any]])
        for violation in violations {
            #expect(Set(violation.keys) == ["kind", "entity", "object", "key", "message"])
        }
        #expect(violations.map { $0["kind"] as? String } == ["modelIdentity", "foreignKey"])
        #expect(violations[0]["entity"] is NSNull)
        #expect(violations[0]["object"] is NSNull)
        #expect(violations[1]["entity"] as? String == "Message")
        #expect(violations[1]["object"] as? String == "x-coredata://\(uuid)/Message/p2")
        #expect(violations[1]["key"] as? String == "chat")
        #expect(violations[1]["message"] as? String == "points at Z_PK 999, which is not a row of ZCHAT")
    }

    /// A file whose pages are damaged (bytes overwritten in the middle, as a bad disk or copy leaves them) gets its
    /// report: SQLite meets the damage again as the read ends, which must not turn the findings into an error.
    @Test func aFileWithDamagedPagesGetsItsReport() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "50", "--chats", "20", "--messages", "2000"])
        try #require(made.status == 0, "fixture generate: \(made.stderr)")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let middle = bytes.count / 2
        for index in middle..<(middle + 2_000) { bytes[index] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: path))

        let checked = try FaultlineBinary.run(["check", path, "--json"])
        #expect(checked.stderr == "")
        #expect(checked.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == false)
        let violations = try #require(report["violations"] as? [[String: Any]])
        #expect(violations.first?["kind"] as? String == "integrity")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["chat.sqlite"])
    }

    @Test func badInputGetsOneErrorLineAndLeavesTheFileAlone() throws {
        let folder = TemporaryFolder()
        let text = folder.path("notes.txt")
        try String(repeating: "not a database\n", count: 20).write(toFile: text, atomically: true, encoding: .utf8)
        let other = folder.path("other.sqlite")
        try Self.sqlite3(other, "CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        let missing = folder.path("missing.sqlite")
        let cases: [(String, String)] = [
            (missing, "error: \(missing): no such file"),
            (folder.url.path, "error: \(folder.url.path): is a directory, not a store file"),
            (text, "error: \(text): is not an SQLite database"),
            (other, "error: \(other): is an SQLite database but not a Faultline store (it has no Z_METADATA table)"),
        ]
        for (path, expected) in cases {
            for extra in [[], ["--json"]] {
                let files = [path, path + "-wal", path + "-shm", path + "-journal"]
                let before = files.map { FileManager.default.contents(atPath: $0) }
                let result = try FaultlineBinary.run(["check", path] + extra)
                #expect(result.status == 2)
                #expect(result.stdout == "")
                #expect(result.stderr == expected + "\n")
                #expect(files.map { FileManager.default.contents(atPath: $0) } == before, "\(path)")
            }
        }
        let usage = try FaultlineBinary.run(["check", "--limit", "-3", text])
        #expect(usage.status != 0)
        #expect(usage.stderr.hasPrefix("error: "))
        #expect(lines(usage.stderr).count == 1)
    }

    /// With no STORE the default chat store is checked, made first when missing: the default chat fixture passes.
    @Test func withoutAStoreTheDefaultChatStoreIsMadeAndPasses() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        let result = try FaultlineBinary.run(["check"], environment: ["FAULTLINE_DEFAULT_STORE": path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.hasPrefix("faultline: creating the default chat store at \(path)"))
        #expect(lines(result.stdout).first == "\(path): ok")
    }
}
