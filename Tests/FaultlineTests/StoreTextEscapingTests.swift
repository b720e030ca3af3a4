import Foundation
import Testing

/// Text from a store or a model file reaching the output: escape sequences in it (a window title, the clipboard,
/// clearing the screen) never reach the terminal as such, and a line break in it never makes a line of its own.
@Suite struct StoreTextEscapingTests {
    /// A window-title OSC, a clipboard OSC 52, a screen clear and C1 controls (CSI U+009B, OSC U+009D), in SQL.
    static let hostileSQL = "char(27) || ']0;pwned' || char(7) || char(27) || ']52;c;ZXZpbA==' || char(7) || char(27) || '[2J' || char(155) || '31m' || char(157) || '0;t' || char(156)"

    /// A store whose chat 1 has a hostile title and whose messages in it have hostile texts, and whose UUID holds a
    /// line break followed by a forged `simulate` line.
    private static func hostileStore(in folder: TemporaryFolder) throws -> String {
        let path = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "20", "--chats", "4", "--messages", "80"])
        try #require(made.status == 0, "fixture generate: \(made.stderr)")
        try sqlite(path, """
            UPDATE ZCHAT SET ZTITLE = 'Title' || \(hostileSQL) WHERE Z_PK = 1;
            UPDATE ZMESSAGE SET ZTEXT = 'Text' || \(hostileSQL) WHERE ZCHAT = 1;
            UPDATE Z_METADATA SET Z_UUID = 'AB' || char(10) || 'saved x-coredata://forged/Message/p1 chat 1 forged' || char(27) || '[2J';
            """)
        return path
    }

    private static func sqlite(_ path: String, _ statements: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", path, statements]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "sqlite3 \(statements)")
    }

    /// The control characters (C0 but the line feed, DEL, C1) in `text`.
    static func controls(in text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
        }.map { String(format: "U+%04X", $0.value) }
    }

    @Test func traceShowsStoreTextWithoutItsControlCharacters() throws {
        let folder = TemporaryFolder()
        let store = try Self.hostileStore(in: folder)
        for script in ["top", "top; open", "top; members", "top; delete"] {
            let result = try FaultlineBinary.run(["trace", store, "--script", script])
            #expect(result.status == 0, "\(script): \(result.stderr)")
            #expect(Self.controls(in: result.stdout).isEmpty, "trace '\(script)' printed \(Self.controls(in: result.stdout))")
            // What is left of the title is its printable rest, as the browser's cells show it.
            #expect(result.stdout.contains("Title]0;pw"), "\(script): \(result.stdout)")
        }
        let opened = try FaultlineBinary.run(["trace", store, "--script", "top; open"])
        #expect(opened.stdout.contains("]52;c;ZXZpbA=="), "the message's printable rest: \(opened.stdout)")

        let json = try FaultlineBinary.run(["trace", store, "--json", "--script", "top; open"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let screen = try #require(object["screen"] as? String)
        #expect(Self.controls(in: screen).isEmpty, "trace --json's screen holds \(Self.controls(in: screen))")
        #expect(Self.controls(in: json.stdout).isEmpty, "trace --json printed \(Self.controls(in: json.stdout))")
    }

    @Test func simulateWritesOneLinePerSaveWhateverTheStoreUUIDHolds() throws {
        let folder = TemporaryFolder()
        let store = try Self.hostileStore(in: folder)
        let result = try FaultlineBinary.run(["simulate", store, "--count", "3", "--rate", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 3, "\(result.stdout)")
        for line in lines {
            #expect(line.hasPrefix("saved x-coredata://AB\\nsaved x-coredata://forged/Message/p1 chat 1 forged\\u{1B}[2J/Message/p"), "\(line)")
        }
        #expect(Self.controls(in: result.stdout).isEmpty)
    }

    @Test func deleteAndCheckEscapeTheStoreUUIDAndPath() throws {
        let folder = TemporaryFolder()
        let store = try Self.hostileStore(in: folder)
        let linked = folder.path("chat\n\u{1B}]0;x\u{07}.sqlite")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: store)

        let dryRun = try FaultlineBinary.run(["delete", linked, "--message", "3", "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        let first = try #require(dryRun.stdout.split(separator: "\n").first)
        #expect(first.hasSuffix("chat\\n\\u{1B}]0;x\\u{7}.sqlite: delete x-coredata://AB\\nsaved x-coredata://forged/Message/p1 chat 1 forged\\u{1B}[2J/Message/p3 (Message)"),
                "\(first)")
        #expect(Self.controls(in: dryRun.stdout).isEmpty)

        let check = try FaultlineBinary.run(["check", linked])
        #expect(check.status == 0, "\(check.stderr)")
        let lines = check.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasSuffix("chat\\n\\u{1B}]0;x\\u{7}.sqlite: ok") == true, "\(check.stdout)")
        #expect(lines.dropFirst().first?.hasPrefix("store AB\\nsaved x-coredata://forged/Message/p1 chat 1 forged\\u{1B}[2J: ") == true, "\(check.stdout)")
        #expect(Self.controls(in: check.stdout).isEmpty)

        // An error line quoting the path escapes its escape sequence too.
        let missing = try FaultlineBinary.run(["check", folder.path("gone\u{1B}]0;x\u{07}.sqlite")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("gone\\u{1B}]0;x\\u{7}.sqlite"), "\(missing.stderr)")
        #expect(Self.controls(in: missing.stderr).isEmpty)
    }

    @Test func modelEscapesTextFromTheModelFile() throws {
        let folder = TemporaryFolder()
        let model = folder.path("Notes.xcdatamodel")
        try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="body" optional="YES" attributeType="String" defaultValueString="a&#10;warnings:&#x9B;2J&#13;x"/>
                </entity>
            </model>
            """.write(toFile: model + "/contents", atomically: true, encoding: .utf8)
        let result = try FaultlineBinary.run(["model", model])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("default a\\nwarnings:\\u{9B}2J\\rx"), "\(result.stdout)")
        #expect(!result.stdout.contains("\nwarnings:"))
        #expect(Self.controls(in: result.stdout).isEmpty)
    }
}
