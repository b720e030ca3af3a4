import Browser
import Foundation
import TerminalText
import Testing

/// One key table per mode drives both what a key does and what the hint bar offers, so they cannot disagree; a
/// read-only browser does not offer the keys that write.
@Suite(.serialized) struct KeyModeTests {
    private func model(_ settings: BrowserSettings = BrowserSettings()) throws -> BrowserModel {
        let model = try BrowserModel(path: BrowserBudgetTests.fixture, settings: settings, width: 120, height: 40)
        model.apply(.start)
        return model
    }

    /// The hint bar's text, as drawn.
    private func hintBar(_ model: BrowserModel) -> String {
        BrowserView.frame(model.state, activity: model.activity).lines.last?.text ?? ""
    }

    @Test func eachOverlaysHintsAreItsKeys() throws {
        let model = try model()
        model.apply(.delete)
        #expect(hintBar(model).contains("y/Enter delete") && hintBar(model).contains("n/Esc cancel"))
        #expect(model.action(for: .character("y")) == .confirm && model.action(for: .enter) == .confirm)
        #expect(model.action(for: .escape) == .cancel && model.action(for: .character("d")) == nil)
        model.apply(.cancel)
        model.apply(.beginSearch)
        #expect(hintBar(model).contains("Enter keep") && hintBar(model).contains("Esc cancel"))
        #expect(model.action(for: .enter) == .keepSearch && model.action(for: .character("d")) == .type("d"))
        model.apply(.cancel)
        model.apply(.help)
        #expect(hintBar(model).contains("↑↓ scroll") && hintBar(model).contains("other keys close"))
        #expect(model.action(for: .character("j")) == .down && model.action(for: .character("z")) == .cancel)
    }

    @Test func readOnlyOffersNoKeyThatWrites() throws {
        let writable = hintBar(try model())
        #expect(writable.contains("d delete") && writable.contains("w save") && writable.contains("u undo"))
        let readOnly = hintBar(try model(BrowserSettings(readOnly: true)))
        #expect(!readOnly.contains("d delete") && !readOnly.contains("w save") && !readOnly.contains("u undo"), "\(readOnly)")
        #expect(readOnly.contains("? help") && readOnly.contains("q quit"))
    }
}
