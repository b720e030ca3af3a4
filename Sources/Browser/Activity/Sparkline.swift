import TerminalText

/// Values as a row of block characters, one per value, the highest drawn full.
///
/// ```swift
/// Sparkline.bars([0, 1, 4, 8])   // " ▁▄█"
/// ```
enum Sparkline {
    private static let levels = Array("▁▂▃▄▅▆▇█")

    /// One character per value: zero (or less) as a space, anything above at least `▁`, the maximum as `█`.
    static func bars(_ values: [Double]) -> String {
        guard let highest = values.max(), highest > 0, highest.isFinite else { return Repeated.text(" ", count: values.count) }
        return String(values.map { value -> Character in
            guard value > 0 else { return " " }
            let level = Int((value / highest * Double(levels.count)).rounded(.up))
            return levels[min(max(level, 1), levels.count) - 1]
        })
    }
}
