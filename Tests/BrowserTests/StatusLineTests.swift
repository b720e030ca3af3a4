@testable import Browser
import Testing

/// The status line of a store that cannot be written: "read-only" once, whether the line shows the setting alone or
/// a refusal that starts with it (which used to give `read-only · read-only: chat.sqlite cannot be writt…`).
@Suite struct StatusLineTests {
    private let refusal = "read-only: chat.sqlite cannot be written (the file is not writable: Permission denied); deletes are refused"

    private func chatState(readOnlySetting: Bool, storeIsReadOnly: Bool, message: String?) -> BrowserState {
        var state = BrowserState(width: 120, height: 40, storeName: "chat.sqlite", settings: BrowserSettings(readOnly: readOnlySetting))
        state.storeIsReadOnly = storeIsReadOnly
        state.message = message
        state.messageIsError = message != nil
        return state
    }

    private func occurrences(of word: String, in text: String) -> Int {
        text.components(separatedBy: word).count - 1
    }

    @Test func aRefusalOnAReadOnlyFileSaysReadOnlyOnce() {
        let line = BrowserView.statusLine(chatState(readOnlySetting: false, storeIsReadOnly: true, message: refusal), width: 120).text
        #expect(occurrences(of: "read-only", in: line) == 1, "\(line)")
        #expect(line.contains("counts derived · read-only: chat.sqlite cannot be written"), "\(line)")
    }

    @Test func theReadOnlyOptionsRefusalSaysReadOnlyOnce() {
        let message = "read-only: deletes are refused (browse without --read-only to delete)"
        let line = BrowserView.statusLine(chatState(readOnlySetting: true, storeIsReadOnly: false, message: message), width: 120).text
        #expect(line.contains("counts derived · read-only: deletes are refused"), "\(line)")
        #expect(!line.contains("read-only · read-only"), "\(line)")
    }

    @Test func withoutARefusalTheSettingIsShown() {
        for message in [nil, "preview cancelled"] {
            let line = BrowserView.statusLine(chatState(readOnlySetting: false, storeIsReadOnly: true, message: message), width: 120).text
            #expect(line.contains("counts derived · read-only"), "\(line)")
        }
        let writable = BrowserView.statusLine(chatState(readOnlySetting: false, storeIsReadOnly: false, message: nil), width: 120).text
        #expect(!writable.contains("read-only"), "\(writable)")
    }

    @Test func theEntityBrowsersRefusalSaysReadOnlyOnce() {
        var state = EntityBrowserState(width: 120, height: 40, storeName: "cars.sqlite", settings: BrowserSettings())
        state.message = "read-only (the file is not writable: Permission denied; --write opens it for writing)"
        state.messageIsError = true
        let line = EntityBrowserView.statusLine(state, width: 120).text
        #expect(occurrences(of: "read-only", in: line) == 1, "\(line)")
        state.message = nil
        #expect(EntityBrowserView.statusLine(state, width: 120).text.contains("· read-only"))
    }
}
