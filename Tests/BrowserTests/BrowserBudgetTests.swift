import Browser
import ChatFixture
import Foundation
import GraphStore
import Testing

/// Where `BrowserBudgetTests` keeps its fixture and the copies tests write to.
private let budgetFolder = FileManager.default.temporaryDirectory.appendingPathComponent("browser-tests-\(UUID().uuidString)")

/// The browser's SQL budgets on the default fixture (1,000 users, 300 chats, 60,000 messages), through the same
/// model `faultline trace` drives: counted statements, not timings.
@Suite(.serialized) struct BrowserBudgetTests {
    /// The default fixture, generated once for the suite into a temporary folder.
    static let fixture: String = {
        let folder = budgetFolder
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The fixture and the copies beside it go when the test process exits.
        atexit { try? FileManager.default.removeItem(at: budgetFolder) }
        let path = folder.appendingPathComponent("chat.sqlite").path
        _ = try! FixtureGenerator(options: .defaults, corpus: try ChatCorpus.load()).generate(to: path)
        return path
    }()

    /// A copy of the fixture for tests that write.
    static func copy() throws -> String {
        let source = fixture
        let path = budgetFolder.appendingPathComponent("copy-\(UUID().uuidString).sqlite").path
        try FileManager.default.copyItem(atPath: source, toPath: path)
        return path
    }

    private func model(_ settings: BrowserSettings = BrowserSettings(), path: String = fixture) throws -> BrowserModel {
        try BrowserModel(path: path, settings: settings, width: 120, height: 40)
    }

    @Test func theFirstScreenOpeningAChatAndMovingStayWithinBudget() throws {
        let model = try model()
        let start = model.apply(.start)
        #expect(start.counts.statements <= 4, "first chat-list screen: \(start.counts.statements) statements")
        #expect(model.state.chatList.rows.count > 10)
        // Within the loaded batch: no SQL at all.
        for _ in 0..<5 {
            #expect(model.apply(.down).counts.statements == 0)
        }
        let open = model.apply(.open)
        #expect(open.counts.statements <= 4, "opening a chat: \(open.counts.statements) statements")
        #expect(!(model.state.openChat?.rows.isEmpty ?? true))
        #expect(model.apply(.up).counts.statements == 0)
        // Paging the chat list into the next batch.
        _ = model.apply(.back)
        var next = 0
        for _ in 0..<4 { next = max(next, model.apply(.pageDown).counts.statements) }
        #expect(next <= 3, "the next batch: \(next) statements")
    }

    @Test func aBatchLargerThanTheScreenWarnsOfAnUnusedPrefetch() throws {
        let model = try model()
        model.apply(.start)
        model.apply(.open)
        // Default settings: what is prefetched is what the screen shows.
        #expect(!(model.activity.lastAction?.warnings.contains { $0.kind == .unusedPrefetch } ?? true))
        _ = model.apply(.back)
        // 100 chats a batch with 37 rows on screen: the other chats' last messages and senders come for nothing.
        let shown = model.state.chatList.rows.count
        model.apply(.batch(100))
        #expect(model.state.chatList.rows.count == shown)
        let warnings = try #require(model.activity.lastAction).warnings.filter { $0.kind == .unusedPrefetch }
        // The rows on screen came from the two batches of 20 read at the start; the batch of 100 filled the last
        // messages of the other 60 chats, and none of those is on screen.
        let loadedBefore = (shown + 19) / 20 * 20
        let filled = 100 - loadedBefore
        #expect(warnings.contains { $0.message == "unused prefetch of lastMessage in chat list: \(filled) of \(filled) Message unread "
                    + "— press b for smaller batches (now 100)" }, "\(warnings)")
        #expect(warnings.contains { $0.message.hasPrefix("unused prefetch of lastMessage.sender in chat list: ") })
    }

    @Test func withPrefetchOffTheNPlusOneWarningAppears() throws {
        let model = try model(BrowserSettings(prefetch: .off))
        model.apply(.start)
        let summary = try #require(model.activity.lastAction)
        #expect(summary.warnings.contains { $0.message.contains("N+1") }, "\(summary.warnings)")
        // The same screen with prefetching joined: no warning.
        let tuned = try self.model()
        tuned.apply(.start)
        #expect(!(tuned.activity.lastAction?.warnings.contains { $0.message.contains("N+1") } ?? true))
    }

    @Test func countingMembersWithoutTheDerivedCountFiresTheRelationship() throws {
        let model = try model(BrowserSettings(derivedCounts: false))
        let start = model.apply(.start)
        #expect(start.counts.relationshipFaults > 0)
        #expect(model.activity.lastAction?.warnings.contains { $0.message.contains("membersCount") } == true)
    }

    @Test func theDeleteDemoPreviewsDeletesSavesAndUndoesAfterTheSave() throws {
        let path = try Self.copy()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let model = try model(path: path)
        model.apply(.start)
        let title = try #require(model.state.chatList.rows.first?.title)
        let count = model.state.chatList.count
        model.apply(.delete)
        guard case .deletePreview(let preview) = model.state.overlay else {
            Issue.record("no preview: \(model.state.overlay)")
            return
        }
        #expect(preview.denied.isEmpty)
        #expect(preview.deleted.contains { $0.0 == "Message" && $0.1 > 0 })
        model.apply(.confirm)
        #expect(model.state.chatList.count == count - 1)
        #expect(model.state.chatList.rows.first?.title != title)
        #expect(model.state.pending != nil)
        let save = model.apply(.save)
        #expect(save.counts.saves == 1)
        #expect(try StoreIntegrityCheck.run(path: path).violations.isEmpty)
        model.apply(.undo)
        #expect(model.state.chatList.count == count)
        #expect(model.state.chatList.rows.first?.title == title)
        #expect(model.state.pending == nil)
        #expect(try StoreIntegrityCheck.run(path: path).violations.isEmpty)
    }

    @Test func readOnlyRefusesDeletes() throws {
        let model = try model(BrowserSettings(readOnly: true))
        model.apply(.start)
        model.apply(.delete)
        #expect(model.state.overlay == .none)
        #expect(model.state.messageIsError && model.state.message?.contains("read-only") == true)
    }

    @Test func scriptsParseAndBadActionsAreNamed() throws {
        #expect(try BrowserAction.script("down 3; open; search ski; batch 100; resize 80x24") ==
            [.down, .down, .down, .open, .search("ski"), .batch(100), .resize(width: 80, height: 24)])
        #expect(throws: ScriptError.self) { try BrowserAction.script("down; fly") }
        #expect(throws: ScriptError.self) { try BrowserAction.script("open 2") }
    }
}
