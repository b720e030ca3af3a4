import Browser
import Foundation
import GraphStore
import TerminalText
import Testing

/// Keys that could lose work or act on screens no one sees: a window too small takes only quit and resize, the quit
/// question offers saving, and Ctrl-C with unsaved changes asks as `q` does.
@Suite(.serialized) struct QuitAndSmallWindowTests {
    private func model(path: String = BrowserBudgetTests.fixture) throws -> BrowserModel {
        let model = try BrowserModel(path: path, settings: BrowserSettings(), width: 120, height: 40)
        model.apply(.start)
        return model
    }

    @Test func aWindowTooSmallTakesOnlyQuitAndResize() throws {
        let model = try model()
        model.apply(.resize(width: 40, height: 10))
        for key: Key in [.character("d"), .character("y"), .enter, .character("w"), .down, .character("/"), .escape] {
            #expect(model.action(for: key) == nil, "\(key) is ignored while nothing shows")
        }
        #expect(model.action(for: .character("q")) == .quit)
        #expect(model.action(for: .resize(width: 120, height: 40)) == .resize(width: 120, height: 40))
        model.apply(.resize(width: 120, height: 40))
        #expect(model.action(for: .character("d")) == .delete)
    }

    /// The notice is wrapped to the window, whole, and names the key that works.
    @Test func aWindowTooSmallSaysSoWholeAndHowToQuit() throws {
        let model = try model()
        model.apply(.resize(width: 20, height: 5))
        let text = BrowserView.frame(model.state, activity: model.activity).text
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(words == "window too small: 20×5, needs 60×15; q quits", "\(text)")
    }

    @Test func theQuitQuestionSavesAndQuits() throws {
        let path = try BrowserBudgetTests.copy()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let model = try model(path: path)
        let before = model.state.chatList.count
        model.apply(.delete)
        model.apply(.confirm)
        #expect(model.hasUnsavedChanges)
        model.apply(.quit)
        #expect(model.state.overlay == .confirmQuit)
        #expect(!model.state.quitRequested)
        #expect(model.action(for: .character("w")) == .saveAndQuit)
        model.apply(.saveAndQuit)
        #expect(model.state.quitRequested)
        #expect(!model.hasUnsavedChanges)
        // The save reached the file.
        let reopened = try self.model(path: path)
        #expect(reopened.state.chatList.count == before - 1)
    }

    @Test func ctrlCWithUnsavedChangesAsksThenASecondOneQuits() throws {
        let path = try BrowserBudgetTests.copy()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let model = try model(path: path)
        #expect(model.interrupt(), "nothing unsaved: Ctrl-C quits at once")
        model.apply(.delete)
        model.apply(.confirm)
        #expect(!model.interrupt(), "unsaved changes: Ctrl-C asks")
        #expect(model.state.overlay == .confirmQuit)
        #expect(model.interrupt(), "asked already: a second Ctrl-C quits without saving")
    }
}
