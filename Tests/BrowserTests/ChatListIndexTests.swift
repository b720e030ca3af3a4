import Browser
import ChatFixture
import Foundation
import GraphStore
import Testing

/// The chat list's order (pinned first, then the newest last message, then the primary key) is the order of the
/// chat model's fetch index `byPinnedAndLastMessage`, so SQLite reads the list's IDs from it instead of sorting the
/// chat table: checked with `EXPLAIN QUERY PLAN` on the statements the browser ran, on the default fixture.
@Suite(.serialized) struct ChatListIndexTests {
    static let index = "Z_Chat_byPinnedAndLastMessage"

    /// The statements that read the list's IDs in order: `SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 ORDER BY …` (all
    /// IDs first, as Core Data reads them), or the keys alone, `SELECT t0.Z_PK FROM ZCHAT t0 ORDER BY …` (windowed).
    private func orderedIDStatements(_ model: BrowserModel) -> [String] {
        let sql = model.activity.sqlLog.map(\.sql).filter {
            $0.hasPrefix("SELECT t0.Z_ENT, t0.Z_PK FROM ZCHAT t0 ORDER BY ") || $0.hasPrefix("SELECT t0.Z_PK FROM ZCHAT t0 ORDER BY ")
        }
        var seen = Set<String>()
        return sql.filter { seen.insert($0).inserted }
    }

    @Test func theIndexIsDeclaredInTheListsDirections() throws {
        let statements = StoreSchema(model: try ChatModel.make()).createStatements
        #expect(statements.contains(
            "CREATE INDEX \(Self.index) ON ZCHAT (ZISPINNED COLLATE BINARY DESC, ZLASTMESSAGEAT COLLATE BINARY DESC)"), "\(statements)")
    }

    /// Windowed batching reads the keys after the first screen in reads that grow (`LIMIT … OFFSET …`); Core Data's
    /// way (all IDs first) reads every ID before the first screen. Either way SQLite walks the index in order: no
    /// temporary B-tree sorts the table. The windowed reads take the keys from the index alone (a chat's `Z_ENT`,
    /// which Core Data's way reads, is in the table).
    @Test(arguments: [false, true])
    func orderedIDStatementsReadTheIndexWithoutSorting(allIDsFirst: Bool) throws {
        // A copy of its own: suites that run beside this one open the shared fixture at the same moment.
        let model = try BrowserModel(path: try BrowserBudgetTests.copy(), settings: BrowserSettings(), width: 120, height: 40)
        model.apply(.start)
        if allIDsFirst {
            model.apply(.toggleBatchMode)
            #expect(model.state.settings.batchingMode == .faithful)
        }
        model.apply(.bottom)
        let statements = orderedIDStatements(model)
        #expect(!statements.isEmpty, "no ordered-ID statement ran: \(model.activity.sqlLog.map(\.sql))")
        #expect(statements.contains { $0.contains(" LIMIT ") } == !allIDsFirst, "\(statements)")
        for sql in statements {
            let plan = try model.coordinator.explain(sql)
            let scan = allIDsFirst ? "SCAN t0 USING INDEX \(Self.index)" : "SCAN t0 USING COVERING INDEX \(Self.index)"
            #expect(plan.contains { $0.contains(scan) }, "\(sql): \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(sql): \(plan)")
        }
    }

    /// The first screen's statement joins its chats' last messages and senders in one flat statement: SQLite walks
    /// the index in the list's order, joins each chat as it comes and stops at the batch's limit, so nothing is
    /// sorted at all (with the window chosen in a subquery first, its joined rows were sorted again).
    @Test func theFirstBatchIsReadFromTheIndexWithNothingSorted() throws {
        // A copy of its own: suites that run beside this one open the shared fixture at the same moment.
        let model = try BrowserModel(path: try BrowserBudgetTests.copy(), settings: BrowserSettings(), width: 120, height: 40)
        model.apply(.start)
        let first = try #require(model.activity.sqlLog.map(\.sql).last { $0.contains(" FROM ZCHAT t0 LEFT JOIN ") && $0.contains(" LIMIT ") },
                                 "\(model.activity.sqlLog.map(\.sql))")
        #expect(!first.contains("FROM (SELECT"), "\(first)")
        let plan = try model.coordinator.explain(first)
        #expect(plan.first { $0.contains("SCAN") } == "SCAN t0 USING INDEX \(Self.index)", "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
