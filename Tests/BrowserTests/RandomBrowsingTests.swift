import Browser
import Foundation
import GraphStore
import Testing
import TerminalText

/// Random browsing: every kind of action in the chat browser (moving, opening, searching, typing, deleting and
/// confirming, saving, undoing and redoing, toggles, clicks, resizes) in a seeded random order. After each action the
/// frame is exactly as wide and as high as the terminal; after the last one the store passes `check`.
/// `BROWSER_RANDOM_SEEDS` (default 3) and `BROWSER_RANDOM_STEPS` (default 120) set how much runs.
@Suite(.serialized) struct RandomBrowsingTests {
    static let seeds: [UInt64] = (0..<(integer("BROWSER_RANDOM_SEEDS") ?? 3)).map { UInt64(integer("BROWSER_RANDOM_FIRST_SEED") ?? 0) + UInt64($0) }
    static let steps = integer("BROWSER_RANDOM_STEPS") ?? 120

    /// A count from the environment; nil when unset or not a whole number of at least 0.
    static func integer(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// A small linear congruential generator: the same actions for a seed on every machine.
    struct Random {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }
    }

    static func action(_ random: inout Random, width: Int, height: Int) -> BrowserAction {
        let plain: [BrowserAction] = [
            .up, .down, .down, .pageUp, .pageDown, .top, .bottom, .open, .open, .back, .nextPane, .previousPane, .members,
            .beginSearch, .refine, .keepSearch, .erase, .delete, .confirm, .cancel, .save, .undo, .redo, .togglePrefetch,
            .toggleBatchMode, .toggleDerived, .toggleColumns, .cycleBatch, .clearCache, .resetCounters, .merge, .explain, .help,
        ]
        switch random.next(10) {
        case 0: return .type(["a", "e", "é", "日", " ", "🎿", "x"][random.next(7)])
        case 1: return .search(["", "a", "ch", "zz", "é"][random.next(5)])
        case 2: return .click(row: random.next(height + 2), column: random.next(width + 2))
        case 3: return random.next(2) == 0 ? .scrollDown(row: random.next(height), column: random.next(width)) : .scrollUp(row: random.next(height), column: random.next(width))
        case 4 where random.next(4) == 0: return .resize(width: [20, 80, 120, 200][random.next(4)], height: [5, 24, 40, 60][random.next(4)])
        default: return plain[random.next(plain.count)]
        }
    }

    @Test(arguments: seeds)
    func aRandomSessionKeepsTheFrameWholeAndTheStoreSound(seed: UInt64) throws {
        let path = try BrowserBudgetTests.copy()
        var (width, height) = (120, 40)
        let model = try BrowserModel(path: path, settings: BrowserSettings(), width: width, height: height)
        model.apply(.start)
        var random = Random(seed: seed)
        var taken: [String] = []
        for _ in 0..<Self.steps {
            let action = Self.action(&random, width: width, height: height)
            taken.append(action.name)
            if case .resize(let newWidth, let newHeight) = action { (width, height) = (newWidth, newHeight) }
            model.apply(action)
            let frame = BrowserView.frame(model.state, activity: model.activity, now: Date(timeIntervalSince1970: 1_780_000_000))
            let wrong = frame.lines.enumerated().first { DisplayWidth.of($0.element.text) != width }
            #expect(frame.lines.count == height && wrong == nil,
                    "seed \(seed) after \(taken.suffix(8)): \(frame.lines.count) lines, line \(wrong?.offset ?? -1) is \(wrong.map { DisplayWidth.of($0.element.text) } ?? width) wide")
            if frame.lines.count != height || wrong != nil { return }
        }
        model.apply(.save)
        let violations = try StoreIntegrityCheck.run(path: path).violations
        #expect(violations.isEmpty, "seed \(seed) after \(taken): \(violations.prefix(5))")
    }
}
