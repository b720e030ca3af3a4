import Foundation
import GraphStore

/// Every case's figures, printable as a table for people or as JSON for scripts.
public struct BenchmarkReport: Sendable {
    public let cases: [CaseResult]
    /// "release" or "debug".
    public let build: String
    public let quick: Bool

    public init(cases: [CaseResult], build: String, quick: Bool) {
        self.cases = cases
        self.build = build
        self.quick = quick
    }

    /// Whether every case met its target.
    public var allMet: Bool { cases.allSatisfy(\.met) }

    // MARK: JSON

    /// `{"cases":[{"name":…,"variants":{"faultline":{"ms":…,"minMs":…,"maxMs":…,"statements":N},…},"ratio":…,
    /// "target":"…","met":…}],"build":"…","quick":…}`; `ms` is the median. A case whose target is a time per
    /// fault also carries `usPerFault`; one that writes rows carries `rows`, and `rowsPerSecond` per variant; a
    /// variant whose peak memory was measured carries `peakMB` (10^6 bytes); one that walks a result in batches
    /// carries `rssFirstBatchMB` and `rssLastBatchMB`; one that notes its memory before its work carries
    /// `peakGrowthMB` (how far the peak rose above it). A case whose target includes beating another variant carries
    /// `speedup` (that variant's median over the first's) and `speedupOver` (its name). A case that deletes carries
    /// `deleted` (objects per entity) and `nullified` (references surviving objects lost, per relationship).
    public func json() -> String {
        let caseTexts = cases.map { result -> String in
            let variantTexts = result.variants.map { variant in
                var fields = "\"ms\":\(Self.number(variant.medianMs)),\"minMs\":\(Self.number(variant.minMs)),"
                    + "\"maxMs\":\(Self.number(variant.maxMs)),\"statements\":\(variant.statements)"
                if let rate = result.rowsPerSecond(variant) { fields += ",\"rowsPerSecond\":\(Self.number(rate.rounded()))" }
                if let peak = variant.peakMegabytes { fields += ",\"peakMB\":\(Self.number(peak))" }
                if let growth = variant.peakGrowthMegabytes { fields += ",\"peakGrowthMB\":\(Self.number(growth))" }
                if let first = variant.firstBatchMegabytes, let last = variant.lastBatchMegabytes {
                    fields += ",\"rssFirstBatchMB\":\(Self.number(first)),\"rssLastBatchMB\":\(Self.number(last))"
                }
                return "\(Self.quoted(variant.name)):{\(fields)}"
            }
            var fields = [
                "\"name\":\(Self.quoted(result.name))",
                "\"variants\":{\(variantTexts.joined(separator: ","))}",
                "\"ratio\":\(Self.number(result.ratio))",
                "\"target\":\(Self.quoted(result.target))",
                "\"met\":\(result.met)",
            ]
            if let perOperation = result.microsecondsPerOperation {
                // usPerFault, usPerFrame.
                let key = "usPer" + (result.operation ?? "operation").capitalized
                fields.append("\(Self.quoted(key)):\(Self.number(perOperation))")
            }
            if let rows = result.rows {
                fields.append("\"rows\":\(rows)")
            }
            if let speedup = result.speedup, let over = result.speedupOver {
                fields.append("\"speedup\":\(Self.number(speedup))")
                fields.append("\"speedupOver\":\(Self.quoted(over))")
            }
            if let deletion = result.deletion {
                fields.append("\"deleted\":\(Self.object(deletion.deleted))")
                fields.append("\"nullified\":\(Self.object(deletion.nullified))")
            }
            return "{\(fields.joined(separator: ","))}"
        }
        return "{\"cases\":[\(caseTexts.joined(separator: ","))],\"build\":\(Self.quoted(build)),\"quick\":\(quick)}"
    }

    /// A JSON number with up to four decimals (µs resolution for milliseconds); never NaN or infinite.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A JSON object of counts, keys sorted.
    static func object(_ counts: [String: Int]) -> String {
        "{" + counts.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\($0.value)" }.joined(separator: ",") + "}"
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    // MARK: table

    /// A table with one line per variant; the ratio, target and verdict sit on each case's first line.
    public func table() -> String {
        // Rows per second and peak memory get columns only when some case has them.
        let writesRows = cases.contains { $0.rows != nil }
        let hasPeaks = cases.contains { $0.variants.contains { $0.peakMegabytes != nil } }
        let hasBatchMemory = cases.contains { $0.variants.contains { $0.firstBatchMegabytes != nil } }
        let hasPeakGrowth = cases.contains { $0.variants.contains { $0.peakGrowthMegabytes != nil } }
        var header = ["case", "variant", "median ms", "min ms", "max ms", "statements"]
        if writesRows { header.append("rows/s") }
        if hasPeaks { header.append("peak MB") }
        if hasPeakGrowth { header.append("peak growth MB") }
        if hasBatchMemory { header.append("RSS first→last batch MB") }
        header += ["ratio", "target", "met"]
        var rows: [[String]] = [header]
        for result in cases {
            for (index, variant) in result.variants.enumerated() {
                let first = index == 0
                var verdict = result.met ? "yes" : "NO"
                if let perOperation = result.microsecondsPerOperation {
                    verdict += String(format: " (%.3f µs per ", perOperation) + (result.operation ?? "operation") + ")"
                }
                if let speedup = result.speedup, let over = result.speedupOver {
                    verdict += String(format: " (%.1f× faster than ", speedup) + over + ")"
                }
                var row = [
                    first ? result.name : "",
                    variant.name,
                    String(format: "%.3f", variant.medianMs),
                    String(format: "%.3f", variant.minMs),
                    String(format: "%.3f", variant.maxMs),
                    String(variant.statements),
                ]
                if writesRows { row.append(result.rowsPerSecond(variant).map { String(format: "%.0f", $0) } ?? "") }
                if hasPeaks { row.append(variant.peakMegabytes.map { String(format: "%.1f", $0) } ?? "") }
                if hasPeakGrowth { row.append(variant.peakGrowthMegabytes.map { String(format: "%+.1f", $0) } ?? "") }
                if hasBatchMemory {
                    if let first = variant.firstBatchMegabytes, let last = variant.lastBatchMegabytes {
                        row.append(String(format: "%.1f → %.1f (%+.1f)", first, last, last - first))
                    } else {
                        row.append("")
                    }
                }
                row += [
                    first ? String(format: "%.2f×", result.ratio) : "",
                    first ? result.target : "",
                    first ? verdict : "",
                ]
                rows.append(row)
            }
        }
        let rightAligned = Set(2..<(header.count - 2))
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = ["faultline bench: \(build) build, \(quick ? "quick" : "full") run; times in ms, ratio = first variant's median / second's"]
        lines.append("")
        for row in rows {
            let cells = row.enumerated().map { column, cell -> String in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }
            var line = cells.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            lines.append(line)
        }
        lines.append("")
        for result in cases {
            guard let deletion = result.deletion else { continue }
            func listed(_ counts: [String: Int]) -> String {
                counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            lines.append("\(result.name): each run deletes \(listed(deletion.deleted)); references cleared: \(listed(deletion.nullified))")
        }
        if cases.contains(where: { $0.deletion != nil }) { lines.append("") }
        let missed = cases.filter { !$0.met }.map(\.name)
        lines.append(missed.isEmpty ? "all targets met" : "targets missed: \(missed.joined(separator: ", "))")
        return lines.joined(separator: "\n") + "\n"
    }
}
