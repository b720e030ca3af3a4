import ChatFixture
import Foundation
import GraphStore

/// The sizes a run's cases work at.
struct BenchmarkScale {
    /// Items in the graph cases' shared store, and in each `insert-save` run.
    var items: Int
    /// Faults that each miss the row cache in `fault-from-sqlite`, spread evenly over the items.
    var sqliteFaults: Int
    /// The chat store the chat cases share.
    var chatStore: FixtureOptions

    /// `fault-from-sqlite`'s faults in a full or quick run.
    static let sqliteFaults = 10_000

    /// A full run's sizes, or `--quick`'s.
    static func standard(quick: Bool) -> BenchmarkScale {
        BenchmarkScale(
            items: quick ? 10_000 : 100_000, sqliteFaults: sqliteFaults,
            chatStore: quick
                ? FixtureOptions(seed: 1, users: 2_000, chats: 1_000, messages: 50_000)
                : SweepSize(messages: 1_000_000).fixtureOptions)
    }
}

/// One store size of a sweep: a chat store of `messages` messages, with chats and users in the full store's
/// proportions (10,000 chats and 20,000 users for 1,000,000 messages).
public struct SweepSize: Sendable, Equatable {
    public let messages: Int
    public var chats: Int { messages / 100 }
    public var users: Int { messages / 50 }

    /// The smallest sweep store: 20 chats and 40 users. In fewer chats `add-message` finds no chat a tenth the size of
    /// the largest.
    public static let smallest = 2_000
    /// The largest: 100,000 chats and 200,000 users.
    public static let largest = 10_000_000

    public init(messages: Int) {
        self.messages = messages
    }

    /// The generator's options for this size (seed 1, as every bench store).
    var fixtureOptions: FixtureOptions {
        FixtureOptions(seed: 1, users: users, chats: chats, messages: messages)
    }

    /// A count as the reports write it: 1,000,000.
    public static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (count < 0 ? "-" : "") + text
    }
}

/// The case builders of one run at one scale, their stores in one folder: each case is prepared by the builder
/// that knows it, and the chat cases share one chat store.
final class CaseBuilders {
    private let graph: GraphCases
    private let fixture: FixtureCase
    private let chatList: ChatListCases
    private let cascadeDelete: CascadeDeleteCase
    private let renderFrame: RenderFrameCase
    private let chatReads: ChatReadCases
    private let addMessage: AddMessageCase
    private let startup: StartupCase

    init(folder: URL, quick: Bool, scale: BenchmarkScale, executable: String?,
         opened: @escaping (PersistentStoreCoordinator) -> Void) throws {
        graph = try GraphCases(folder: folder, quick: quick, scale: scale, opened: opened)
        fixture = FixtureCase(folder: folder, quick: quick, executable: executable)
        chatList = ChatListCases(folder: folder, quick: quick, options: scale.chatStore, opened: opened)
        cascadeDelete = CascadeDeleteCase(folder: folder, quick: quick, opened: opened)
        renderFrame = RenderFrameCase(folder: folder, quick: quick, opened: opened)
        chatReads = ChatReadCases(quick: quick, store: chatList.sharedStore)
        addMessage = AddMessageCase(folder: folder, quick: quick, opened: opened, store: chatList.sharedStore)
        startup = StartupCase(quick: quick, executable: executable, store: chatList.sharedStore)
    }

    func prepare(_ name: BenchmarkCaseName) throws -> PreparedCase {
        switch name {
        case .fixtureGenerate: try fixture.prepare()
        case .chatList, .chatListScroll: try chatList.prepare(name)
        case .cascadeDelete: try cascadeDelete.prepare()
        case .renderFrame: try renderFrame.prepare()
        case .openChat, .materializeMessages: try chatReads.prepare(name)
        case .addMessage: try addMessage.prepare()
        case .startup: try startup.prepare()
        case .faultFromCache, .faultFromSQLite, .insertSave, .observerOverhead: try graph.prepare(name)
        }
    }
}
