/// Statements and SQL time per second over the last minute, for the activity panel's sparklines.
///
/// ```swift
/// var timeline = ActivityTimeline()
/// timeline.record(statements: 4, sqlTime: .milliseconds(2), at: 12.7)   // counted in second 12
/// timeline.record(statements: 0, sqlTime: .zero, at: 14.1)              // the window now ends at second 14
/// timeline.statementsPerSecond.suffix(3)                                // [4, 0, 0]
/// ```
/// Times are seconds from any fixed origin, passed in by the caller, so that tests are deterministic.
public struct ActivityTimeline: Equatable, Sendable {
    /// How many seconds the timeline keeps.
    public static let span = 60

    /// One second's figures.
    private struct Second: Equatable, Sendable {
        let second: Int
        var statements: Int
        var sqlTime: Duration
    }

    /// Seconds that saw something, oldest first, none older than the window.
    private var seconds: [Second] = []
    /// The second the window ends at: the latest time recorded.
    public private(set) var latestSecond: Int?

    public init() {}

    /// Adds `statements` and `sqlTime` to the second `time` falls in, moving the window on when it is the latest.
    public mutating func record(statements: Int, sqlTime: Duration, at time: Double) {
        let second = Int(time.rounded(.down))
        let latest = max(latestSecond ?? second, second)
        latestSecond = latest
        seconds.removeAll { $0.second <= latest - Self.span }
        guard second > latest - Self.span, statements > 0 || sqlTime > .zero else { return }
        if let index = seconds.firstIndex(where: { $0.second == second }) {
            seconds[index].statements += statements
            seconds[index].sqlTime += sqlTime
        } else {
            seconds.append(Second(second: second, statements: statements, sqlTime: sqlTime))
            seconds.sort { $0.second < $1.second }
        }
    }

    /// Statements in each of the last `span` seconds, oldest first (all zero before anything was recorded).
    public var statementsPerSecond: [Int] { window.map(\.statements) }

    /// SQL time in each of the last `span` seconds, oldest first.
    public var sqlTimePerSecond: [Duration] { window.map(\.sqlTime) }

    /// Every second of the window, quiet ones as zero.
    private var window: [Second] {
        guard let latestSecond else {
            return Array(repeating: Second(second: 0, statements: 0, sqlTime: .zero), count: Self.span)
        }
        let first = latestSecond - Self.span + 1
        var filled = (first...latestSecond).map { Second(second: $0, statements: 0, sqlTime: .zero) }
        for second in seconds { filled[second.second - first] = second }
        return filled
    }
}
