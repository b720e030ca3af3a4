import Browser
import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// `render-frame`: the browser's whole 200×60 screen drawn from state, as it is after launch, opening a chat and
/// moving, with the activity panel and the SQL log full. Only the pure view is timed (no SQL runs while drawing);
/// the peer joins the same frame's finished lines into one text, the least any screen costs to hand to a terminal.
///
/// The store is the default fixture's size (300 chats, 60,000 messages), generated untimed into the bench's folder.
final class RenderFrameCase {
    let folder: URL
    let quick: Bool
    let opened: (PersistentStoreCoordinator) -> Void

    static let width = 200
    static let height = 60
    /// Each run draws this many frames; the target is per frame.
    var frames: Int { quick ? 200 : 1_000 }
    /// The frame's budget: well under the millisecond the issue gives, so a key press never waits on drawing.
    static let microsecondsPerFrame = 500.0

    init(folder: URL, quick: Bool, opened: @escaping (PersistentStoreCoordinator) -> Void = { _ in }) {
        self.folder = folder
        self.quick = quick
        self.opened = opened
    }

    func prepare() throws -> PreparedCase {
        let path = folder.appendingPathComponent("render-frame.sqlite").path
        _ = try FixtureGenerator(options: .defaults, corpus: try ChatCorpus.load()).generate(to: path)
        let model = try BrowserModel(path: path, settings: BrowserSettings(), width: Self.width, height: Self.height)
        opened(model.coordinator)
        for action in [BrowserAction.start, .down, .down, .down, .open, .up, .up] {
            model.apply(action)
        }
        let state = model.state
        let activity = model.activity
        guard state.openChat != nil, !activity.sqlLog.isEmpty else {
            throw BenchmarkError("render-frame: the browser did not open a chat on the fixture")
        }
        // A fixed clock: every frame shows the same times.
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let reference = BrowserView.frame(state, activity: activity, now: now)
        guard reference.lines.count == Self.height,
              reference.lines.allSatisfy({ DisplayWidth.of($0.text) == Self.width }) else {
            throw BenchmarkError("render-frame: the frame is not \(Self.width)×\(Self.height)")
        }
        let frames = frames
        // Both variants sum the lengths of the texts they produce, so a variant that skipped work would not agree.
        let expected = Int64(reference.text.utf8.count) * Int64(frames)
        let faultline = BenchmarkVariant(name: "faultline") { stopwatch in
            let total = stopwatch.time { () -> Int64 in
                var total: Int64 = 0
                for _ in 0..<frames {
                    total += Int64(BrowserView.frame(state, activity: activity, now: now).text.utf8.count)
                }
                return total
            }
            return RunOutcome(checksum: total, statements: 0)
        }
        // The lines as drawn (controls and zero-width joiners left out, as `Frame.text` leaves them).
        let lines = reference.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let join = BenchmarkVariant(name: "text-join") { stopwatch in
            let total = stopwatch.time { () -> Int64 in
                var total: Int64 = 0
                for _ in 0..<frames {
                    total += Int64(lines.joined(separator: "\n").utf8.count)
                }
                return total
            }
            return RunOutcome(checksum: total, statements: 0)
        }
        withExtendedLifetime(model) {}
        return PreparedCase(name: BenchmarkCaseName.renderFrame.rawValue,
                            goals: [.microsecondsPerOperation(faultline.name, atMost: Self.microsecondsPerFrame, operations: frames,
                                                              operation: "frame")],
                            variants: [faultline, join], expectedChecksum: expected)
    }
}
