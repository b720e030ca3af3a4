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

    /// `{"cases":[{"name":…,"variants":{"faultline":{"ms":…,"minMs":…,"maxMs":…,"statements":N,"xRaw":…,"xGRDB":…},…},
    /// "ratio":…,"ratioOver":"raw-sqlite","ratioToGRDB":…,"target":"…","met":…,"checks":[{"check":…,"measured":…,
    /// "met":…}]}],"build":"…","quick":…}`; `ms` is the median; `xRaw` and `xGRDB` are a variant's median over raw
    /// SQLite's and GRDB's, where the case has them; `ratio` is the first variant's over `ratioOver`'s. A case whose target is a time per
    /// fault also carries `usPerFault`; one that writes rows carries `rows`, and `rowsPerSecond` per variant; a
    /// variant whose peak memory was measured carries `peakMB` (10^6 bytes); one that walks a result in batches
    /// carries `rssFirstBatchMB` and `rssLastBatchMB`; one that notes its memory before its work carries
    /// `peakGrowthMB` (how far the peak rose above it); one that records its statements carries `sql` (the distinct
    /// statements of its warm-up run, in the order first run). A case whose target includes beating another variant carries
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
                if let toRaw = result.ratio(of: variant, to: VariantName.raw) { fields += ",\"xRaw\":\(Self.number(toRaw))" }
                if let toGRDB = result.ratio(of: variant, to: VariantName.grdb) { fields += ",\"xGRDB\":\(Self.number(toGRDB))" }
                if let sql = variant.sql { fields += ",\"sql\":[" + sql.map(Self.quoted).joined(separator: ",") + "]" }
                return "\(Self.quoted(variant.name)):{\(fields)}"
            }
            var fields = [
                "\"name\":\(Self.quoted(result.name))",
                "\"variants\":{\(variantTexts.joined(separator: ","))}",
                "\"ratio\":\(Self.number(result.ratio))",
                "\"ratioOver\":\(Self.quoted(result.ratioOver))",
                "\"target\":\(Self.quoted(result.target))",
                "\"met\":\(result.met)",
                "\"checks\":[" + result.checks.map {
                    "{\"check\":\(Self.quoted($0.check)),\"measured\":\(Self.quoted($0.measured)),\"met\":\($0.met)}"
                }.joined(separator: ",") + "]",
            ]
            if let toGRDB = result.ratioToGRDB { fields.append("\"ratioToGRDB\":\(Self.number(toGRDB))") }
            if let note = result.note { fields.append("\"note\":\(Self.quoted(note))") }
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

    /// The rows of the table, a header first: one row per variant, with each variant's median over raw SQLite's and
    /// over GRDB's.
    func tableRows() -> [[String]] {
        // Rows per second and memory get columns only when some case has them.
        let writesRows = cases.contains { $0.rows != nil }
        let hasPeaks = cases.contains { $0.variants.contains { $0.peakMegabytes != nil } }
        let hasBatchMemory = cases.contains { $0.variants.contains { $0.firstBatchMegabytes != nil } }
        let hasPeakGrowth = cases.contains { $0.variants.contains { $0.peakGrowthMegabytes != nil } }
        var header = ["case", "variant", "median ms", "min ms", "max ms", "statements", "× raw", "× grdb"]
        if writesRows { header.append("rows/s") }
        if hasPeaks { header.append("peak MB") }
        if hasPeakGrowth { header.append("peak growth MB") }
        if hasBatchMemory { header.append("RSS first→last batch MB") }
        var rows: [[String]] = [header]
        for result in cases {
            for (index, variant) in result.variants.enumerated() {
                var row = [
                    index == 0 ? result.name : "",
                    variant.name,
                    String(format: "%.3f", variant.medianMs),
                    String(format: "%.3f", variant.minMs),
                    String(format: "%.3f", variant.maxMs),
                    String(variant.statements),
                    result.ratio(of: variant, to: VariantName.raw).map { String(format: "%.2f", $0) } ?? "",
                    result.ratio(of: variant, to: VariantName.grdb).map { String(format: "%.2f", $0) } ?? "",
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
                rows.append(row)
            }
        }
        return rows
    }

    /// Each case's goals with what was measured, one line per goal, then its note and what it deleted.
    func goalLines(bullet: String = "", code: (String) -> String = { $0 }) -> [String] {
        var lines: [String] = []
        for result in cases {
            for check in result.checks {
                lines.append("\(bullet)\(code(result.name)): \(check.check): \(check.measured), \(check.met ? "met" : "MISSED")")
            }
            if let note = result.note { lines.append("\(bullet)\(code(result.name)): \(note)") }
            if let deletion = result.deletion {
                func listed(_ counts: [String: Int]) -> String {
                    counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                }
                lines.append("\(bullet)\(code(result.name)): each run deletes \(listed(deletion.deleted)); references cleared: \(listed(deletion.nullified))")
            }
        }
        return lines
    }

    /// A table with one line per variant, then each case's goals and whether they were met.
    public func table() -> String {
        var lines = ["faultline bench: \(build) build, \(quick ? "quick" : "full") run; times in ms; "
            + "× raw and × grdb: a variant's median over raw SQLite's and GRDB's"]
        lines.append("")
        lines += ReportTable.aligned(tableRows())
        lines.append("")
        lines += goalLines()
        lines.append("")
        let missed = cases.filter { !$0.met }.map(\.name)
        lines.append(missed.isEmpty ? "all targets met" : "targets missed: \(missed.joined(separator: ", "))")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Markdown

    /// The run as Markdown, for docs/benchmarks.md: where and when it ran, at what scale, how to run it again, the
    /// table, and the goals.
    public func markdown(machine: String, date: String, scale: String, command: String) -> String {
        let rows = tableRows()
        var lines = [
            "- **Machine:** \(machine)",
            "- **Date:** \(date)",
            "- **Build:** \(build); **run:** \(quick ? "quick (`--quick`)" : "full")",
            "- **Scale:** \(scale)",
            "- **Rerun:** `\(command)`",
            "",
        ]
        lines += ReportTable.markdown(rows)
        lines.append("")
        lines += goalLines(bullet: "- ", code: { "`\($0)`" })
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A report's table, a header row first, laid out for a terminal or as Markdown.
enum ReportTable {
    /// Columns padded to their widest cell, the first two left-aligned and the figures after them right-aligned.
    static func aligned(_ rows: [[String]]) -> [String] {
        guard let header = rows.first else { return [] }
        let rightAligned = Set(2..<max(2, header.count))
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let cells = row.enumerated().map { column, cell -> String in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }
            var line = cells.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// A Markdown table: the figures right-aligned, each row's first cell (a case's name, where it starts) as code.
    static func markdown(_ rows: [[String]]) -> [String] {
        guard let header = rows.first else { return [] }
        func cells(_ row: [String]) -> String { "| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |" }
        var lines = [cells(header), "| " + header.indices.map { $0 < 2 ? "---" : "---:" }.joined(separator: " | ") + " |"]
        for row in rows.dropFirst() {
            var row = row
            if !row[0].isEmpty { row[0] = "`\(row[0])`" }
            lines.append(cells(row))
        }
        return lines
    }
}
