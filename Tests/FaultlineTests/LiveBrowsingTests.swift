import Foundation
import Testing

/// The browser while something else writes: `browse --live` with its own background writer, and a plain browser
/// with `faultline simulate` writing from another process. Real terminal (tmux), real store, real processes.
@Suite(.enabled(if: TmuxSession.isAvailable, "tmux is not installed (CI installs it)"))
struct LiveBrowsingTests {
    private let folder = TemporaryFolder()

    private func store() throws -> String {
        let path = folder.path("chat-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: BrowserEndToEndTests.fixture, toPath: path)
        return path
    }

    /// The chat list's titles, top to bottom.
    private static func titles(_ screen: String) -> [String] {
        let lines = BrowserEndToEndTests.lines(screen)
        guard lines.count > 3 else { return [] }
        return lines[1..<(lines.count - 2)].map(BrowserEndToEndTests.chatTitle).filter { !$0.isEmpty }
    }

    /// Waits until the chat list's order differs from `before`; the screen then.
    private static func waitForReorder(_ session: TmuxSession, from before: [String], timeout: Duration) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let screen = try session.capture()
            if titles(screen) != before, screen.contains("merged") { return screen }
            Thread.sleep(forTimeInterval: 0.1)
        }
        Issue.record("the chat list did not reorder within \(timeout):\n\(try session.capture())")
        return try session.capture()
    }

    @Test(arguments: [false, true])
    func liveModeReordersTheListAsMessagesArrive(inPlace: Bool) throws {
        let path = try store()
        let folder = (path as NSString).deletingLastPathComponent
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let temporary = FileManager.default.temporaryDirectory.path
        let copiesBefore = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("faultline-live-") }
        let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse --live \(inPlace ? "--live-in-place " : "")--live-rate 8 '\(path)'",
                                      width: 160, height: 40)
        var screen = try session.waitFor("Chats (60)")
        #expect(screen.contains("· live"))
        #expect(screen.contains(inPlace ? "live: writing into" : "live: writing into a copy of"), "says where it writes:\n\(screen)")
        let before = Self.titles(screen)
        try #require(before.count > 20, "a chat list:\n\(screen)")

        screen = try Self.waitForReorder(session, from: before, timeout: .seconds(15))
        // The status line says what was merged and from where; the panel shows the merge as the last action.
        #expect(screen.contains("merged from live writer"), "status:\n\(screen)")
        #expect(screen.contains("last: merge"))
        let after = Self.titles(screen)
        // The same chats, in another order: a chat with a new message moved up past others.
        #expect(Set(after.prefix(10)) != Set(before.prefix(10)) || after.prefix(10) != before.prefix(10))
        // Today's time replaces a date on the rows that just received a message.
        let rows = BrowserEndToEndTests.lines(screen)[1..<10].map(BrowserEndToEndTests.chatColumn)
        #expect(rows.contains { $0.range(of: #" \d\d:\d\d ?$"#, options: .regularExpression) != nil }, "rows:\n\(rows.joined(separator: "\n"))")

        // The open chat's message count grows as its messages arrive (the first chat is the busiest).
        try session.send(keys: "g", "Enter")
        let opened = try session.waitFor(" messages ─")
        let count = try #require(Self.messageCount(opened), "a message count in:\n\(opened)")
        let deadline = ContinuousClock.now + .seconds(20)
        var grown = count
        while grown == count, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            grown = Self.messageCount(try session.capture()) ?? count
        }
        #expect(grown > count, "the open chat stayed at \(count) messages")

        // Quitting: nothing unsaved, a clean exit, a sound store.
        try session.send(keys: "q")
        #expect(try session.waitForExit(timeout: .seconds(10)) == 0)
        let check = try FaultlineBinary.run(["check", path])
        #expect(check.status == 0, "check after --live: \(check.stdout)\(check.stderr)")
        let copiesAfter = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("faultline-live-") }
        #expect(Set(copiesAfter).isSubset(of: copiesBefore), "the copy is removed on quit: \(copiesAfter)")
        if inPlace {
            // The messages are in the store: in its file, or in its -wal when no checkpoint ran before the exit.
            let wal = (try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data()
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) != bytesBefore || !wal.isEmpty, "--live-in-place wrote into the store")
        } else {
            // The messages went into a copy: the store and its folder are as they were.
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytesBefore)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == filesBefore)
        }
    }

    /// "· 2,029 messages" in the open chat's title.
    private static func messageCount(_ screen: String) -> Int? {
        guard let range = screen.range(of: #"· [0-9,]+ messages"#, options: .regularExpression) else { return nil }
        return Int(screen[range].dropFirst(2).prefix { $0 != " " }.filter(\.isNumber))
    }

    @Test func anotherProcessesMessagesAreMergedWhileBrowsing() throws {
        let path = try store()
        let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(path)'", width: 160, height: 40)
        let screen = try session.waitFor("Chats (60)")
        let before = Self.titles(screen)
        try #require(before.count > 20)

        let written = try FaultlineBinary.run(["simulate", path, "--count", "5", "--rate", "0", "--seed", "3"])
        try #require(written.status == 0, "simulate: \(written.stderr)")
        #expect(written.stdout.split(separator: "\n").count == 5)
        let start = ContinuousClock.now
        let merged = try session.waitFor("merged from another process", timeout: .seconds(10))
        let latency = ContinuousClock.now - start
        #expect(merged.contains("5 new"), "status:\n\(merged)")
        // The browser polls between keys every quarter second; allow for a loaded machine.
        #expect(latency < .seconds(5), "merged after \(latency)")
        _ = try Self.waitForReorder(session, from: before, timeout: .seconds(5))
        try session.send(keys: "q")
        #expect(try session.waitForExit(timeout: .seconds(10)) == 0)
    }
}
