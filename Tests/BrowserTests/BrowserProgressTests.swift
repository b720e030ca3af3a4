import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// Long work in the browser: the progress line the status row shows, the hook the terminal draws it through, and
/// Esc (the hook answering false) cancelling a delete preview. With `progressAfterMilliseconds` 0, progress shows
/// from the first statement, whatever the machine's speed.
@Suite struct BrowserProgressTests {
    /// What the hook was shown, answering `answer`.
    final class Shown {
        var states: [BrowserState] = []
        var frames: [String] = []
        let answer: Bool

        init(answer: Bool) { self.answer = answer }
    }

    private func model(path: String, progressAfter: Int, answer: Bool) throws -> (BrowserModel, Shown) {
        let model = try BrowserModel(path: path, settings: BrowserSettings(progressAfterMilliseconds: progressAfter), width: 120, height: 40)
        let shown = Shown(answer: answer)
        model.onProgress = { [unowned model] state in
            shown.states.append(state)
            shown.frames.append(BrowserView.frame(state, activity: model.activity).text)
            return shown.answer
        }
        model.apply(.start)
        return (model, shown)
    }

    @Test func escCancelsAPreviewLeavingNoOverlayAndNoChanges() throws {
        let path = try BrowserBudgetTests.copy()
        let (model, shown) = try model(path: path, progressAfter: 0, answer: false)
        model.apply(.delete)
        #expect(model.state.overlay == .none)
        #expect(model.state.message == "preview cancelled")
        #expect(!model.state.messageIsError)
        #expect(model.state.pending == nil)
        #expect(model.state.progress == nil)
        // Asked once: the answer stopped the counting.
        #expect(shown.states.count == 1)
        #expect(shown.states.first?.progress?.work == .deletePreview)
        #expect(shown.frames.first?.contains("counting: ") == true)
        #expect(shown.frames.first?.contains("Esc cancels") == true)
        // `y` now deletes nothing: there is no preview to confirm.
        model.apply(.confirm)
        #expect(model.state.pending == nil)
        // Answering true, the same preview opens with the counts a preview without the hook shows.
        let (plain, _) = try self.model(path: path, progressAfter: 60_000, answer: true)
        plain.apply(.delete)
        guard case .deletePreview(let expected) = plain.state.overlay else {
            Issue.record("no preview: \(plain.state.message ?? "")")
            return
        }
        let (patient, patience) = try self.model(path: path, progressAfter: 0, answer: true)
        patient.apply(.delete)
        #expect(patient.state.overlay == .deletePreview(expected))
        #expect(patience.states.count >= 1)
        #expect(patience.states.allSatisfy { $0.progress?.work == .deletePreview })
    }

    @Test func aSaveAndAnUndoShowProgressWhileTheyRun() throws {
        let path = try BrowserBudgetTests.copy()
        let (model, shown) = try model(path: path, progressAfter: 0, answer: true)
        model.apply(.delete)
        model.apply(.confirm)
        // Previewing and deleting in memory: only the preview showed progress.
        #expect(Set(shown.states.compactMap { $0.progress?.work }) == [.deletePreview])
        shown.states.removeAll()
        shown.frames.removeAll()
        model.apply(.save)
        #expect(model.state.message?.hasPrefix("saved, deleted ") == true)
        #expect(!shown.states.isEmpty)
        #expect(shown.states.allSatisfy { $0.progress?.work == .save })
        // The frame drawn meanwhile has the progress line in the status row, and the rows so far never go back.
        let statusRows = shown.frames.compactMap { $0.split(separator: "\n").dropLast().last.map(String.init) }
        #expect(statusRows.count == shown.frames.count)
        #expect(statusRows.allSatisfy { $0.hasPrefix(" saving: ") && $0.contains("keys are ignored until it ends") })
        let rows = shown.states.compactMap { $0.progress?.rowsSoFar }
        #expect(rows == rows.sorted())
        #expect(model.state.progress == nil)
        #expect(!BrowserView.frame(model.state, activity: model.activity).text.contains("saving: "))
        shown.states.removeAll()
        model.apply(.undo)
        #expect(model.state.message?.hasPrefix("undid ") == true)
        #expect(!shown.states.isEmpty)
        #expect(shown.states.allSatisfy { $0.progress?.work == .undo })
    }

    @Test func aSaveShorterThanTheDelayShowsNothing() throws {
        let path = try BrowserBudgetTests.copy()
        let (model, shown) = try model(path: path, progressAfter: 60_000, answer: true)
        model.apply(.delete)
        model.apply(.confirm)
        model.apply(.save)
        #expect(model.state.message?.hasPrefix("saved, deleted ") == true)
        #expect(shown.states.isEmpty)
    }
}
