import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// Enter on a row of the SQL log: the statement in full, its bound values, its cause and its query plan, scrolled
/// with j/k and closed by any other key.
@Suite(.serialized) struct SQLDetailTests {
    private func model(width: Int, height: Int) throws -> BrowserModel {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: BrowserSettings(), width: width, height: height)
        model.apply(.start)
        model.apply(.open)
        // The open chat's messages → the SQL log.
        model.apply(.nextPane)
        return model
    }

    @Test(arguments: [(80, 24), (120, 40), (200, 60)])
    func enterShowsTheSelectedStatementInFull(width: Int, height: Int) throws {
        let model = try model(width: width, height: height)
        #expect(model.state.focus == .sqlLog)
        model.apply(.down)
        let entry = model.activity.sqlLog[model.state.sqlSelected]
        model.apply(.open)
        guard case .sqlDetail(let detail) = model.state.overlay else {
            Issue.record("no detail: \(model.state.overlay)")
            return
        }
        #expect(detail.entry == entry)
        #expect(detail.queryPlan?.isEmpty == false, "a read statement has a plan")
        let frame = BrowserView.frame(model.state, activity: model.activity).text
        #expect(frame.contains("Statement \(entry.number)"))
        #expect(frame.contains("pane    \(entry.pane ?? "none")"))
        #expect(frame.contains("FROM "), "the statement is there, from its FROM on: \(frame)")
        #expect(frame.split(separator: "\n").allSatisfy { DisplayWidth.of(String($0)) == width })

        // Every line of the detail, scrolled into view in turn: the whole statement and every bound value.
        var seen = ""
        for _ in 0..<80 {
            seen += BrowserView.frame(model.state, activity: model.activity).text
            model.apply(.down)
        }
        let words = entry.sql.split(separator: " ").map(String.init)
        #expect(words.allSatisfy { seen.contains($0) }, "every part of the SQL shows")
        for argument in entry.arguments { #expect(seen.contains(ActivityFormat.argument(argument))) }
        #expect(seen.contains("Query plan"))
        guard case .sqlDetail = model.state.overlay else {
            Issue.record("scrolling closed the detail")
            return
        }
        // Any other key closes it.
        #expect(model.action(for: .character("x")) == .cancel)
        model.apply(.cancel)
        #expect(model.state.overlay == .none)
    }
}
