import Foundation
import GraphStore
import TerminalText

/// How the activity panel and the SQL log write durations, counts and bound values.
///
/// ```swift
/// ActivityFormat.duration(.microseconds(850))    // "850µs"
/// ActivityFormat.duration(.microseconds(1_340))  // "1.3ms"
/// ActivityFormat.count(12_345)                   // "12,345"
/// ```
public enum ActivityFormat {
    /// `duration` in the unit that keeps it short: whole µs under 1 ms, ms with one decimal under 10 ms, whole ms
    /// under 1 s, seconds with two decimals from there on. Rounded half up; a value that rounds up to the next
    /// unit is written in that unit (999.6 µs is `1.0ms`).
    public static func duration(_ duration: Duration) -> String {
        let nanoseconds = max(0, nanoseconds(of: duration))
        let microseconds = (nanoseconds + 500) / 1_000
        if microseconds < 1_000 { return "\(microseconds)µs" }
        let tenthsOfMilliseconds = (nanoseconds + 50_000) / 100_000
        if tenthsOfMilliseconds < 100 { return "\(tenthsOfMilliseconds / 10).\(tenthsOfMilliseconds % 10)ms" }
        let milliseconds = (nanoseconds + 500_000) / 1_000_000
        if milliseconds < 1_000 { return "\(milliseconds)ms" }
        let hundredthsOfSeconds = (nanoseconds + 5_000_000) / 10_000_000
        let fraction = hundredthsOfSeconds % 100
        return "\(hundredthsOfSeconds / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)s"
    }

    /// `number` with a comma between each group of three digits.
    public static func count(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return number < 0 ? "-" + grouped : grouped
    }

    /// `count` followed by `noun`, with an `s` unless it is one: `1 row`, `12,345 rows`.
    public static func count(_ number: Int, _ noun: String) -> String {
        "\(count(number)) \(noun)\(number == 1 ? "" : "s")"
    }

    /// A value bound to a statement, on one line: strings quoted, data by its size, dates in ISO 8601.
    public static func argument(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .decimal(let number): number.description
        case .string(let text): "\"\(oneLine(text))\""
        case .boolean(let flag): flag ? "true" : "false"
        case .date(let date): date.formatted(.iso8601)
        case .data(let data): "<\(count(data.count, "byte"))>"
        case .uuid(let uuid): uuid.uuidString
        case .uri(let url): "\"\(oneLine(url.absoluteString))\""
        }
    }

    /// Arguments as a bracketed list, `["Ana", 3]`, or nothing when there are none.
    public static func arguments(_ values: [AttributeValue]) -> String {
        values.isEmpty ? "" : "[" + values.map(argument).joined(separator: ", ") + "]"
    }

    /// `text` for one screen line: line breaks and other control characters become spaces.
    static func oneLine(_ text: String) -> String {
        ControlCharacters.replaced(in: text, by: " ")
    }

    private static func nanoseconds(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min / 2 : .max / 2) : scaled + attoseconds / 1_000_000_000
    }
}
