import Foundation

/// A sweep's figures: the same cases run on stores of growing size, and how each variant's time grew from the
/// smallest store to the largest. Printable as a table, as JSON, or as Markdown.
public struct SweepReport: Sendable {
    /// One size's run: the store it was made at, and every case's result there.
    public struct Run: Sendable {
        public let size: SweepSize
        /// Items in `fault-from-sqlite`'s store (as many as the chat store has messages), and the faults it timed.
        public let items: Int
        public let faults: Int
        public let cases: [CaseResult]
    }

    /// One variant of one case across the sizes.
    public struct Line: Sendable {
        public let caseName: String
        public let variant: String
        /// Per size, smallest first: the variant's figures there (nil where it did not run).
        public let figures: [VariantResult?]

        /// The median at the largest size over the median at the smallest.
        public var growth: Double? {
            guard let first = figures.first??.medianMs, let last = figures.last??.medianMs else { return nil }
            return last / max(first, .leastNonzeroMagnitude)
        }
    }

    public let runs: [Run]
    public let build: String
    public let quick: Bool

    /// The cases whose `faultline` variant is what a user waits for on screen, and so must not slow down as the store
    /// grows: the chat list's first screen and an open chat's.
    public static let screenCases = [BenchmarkCaseName.chatList.rawValue, BenchmarkCaseName.openChat.rawValue]
    /// How much slower a screen case's `faultline` variant may be at the largest size than at the smallest.
    public static let growthLimit = 1.5
    /// The limit as the reports write it.
    public static var growthLimitText: String { GoalCheck.figure(growthLimit) }

    public init(runs: [Run], build: String, quick: Bool) {
        self.runs = runs
        self.build = build
        self.quick = quick
    }

    public var sizes: [SweepSize] { runs.map(\.size) }

    /// Every case's variants across the sizes, in the order the first size ran them.
    public var lines: [Line] {
        guard let first = runs.first else { return [] }
        var lines: [Line] = []
        for result in first.cases {
            for variant in result.variants {
                let figures = runs.map { run in
                    run.cases.first { $0.name == result.name }?.variants.first { $0.name == variant.name }
                }
                lines.append(Line(caseName: result.name, variant: variant.name, figures: figures))
            }
        }
        return lines
    }

    /// The sweep's goals, measured: each screen case's `faultline` at the largest size at most `growthLimit` times
    /// its time at the smallest.
    public var checks: [(caseName: String, check: CheckResult)] {
        guard let smallest = sizes.first, let largest = sizes.last else { return [] }
        return lines.filter { Self.screenCases.contains($0.caseName) && $0.variant == VariantName.faultline }.compactMap { line in
            guard let growth = line.growth else { return nil }
            let check = "faultline at \(SweepSize.grouped(largest.messages)) messages ≤ \(Self.growthLimitText)× "
                + "at \(SweepSize.grouped(smallest.messages))"
            return (line.caseName, CheckResult(check: check, measured: String(format: "%.2f×", growth), met: growth <= Self.growthLimit))
        }
    }

    /// Whether every sweep goal was met.
    public var allMet: Bool { checks.allSatisfy(\.check.met) }

    // MARK: table

    /// One line per case and variant: its median at each size, its statements, and the largest size's median over
    /// the smallest's.
    func tableRows() -> [[String]] {
        var header = ["case", "variant"]
        header += sizes.map { "\(SweepSize.grouped($0.messages)) ms" }
        header += ["statements", "× growth"]
        var rows = [header]
        var previous: String?
        for line in lines {
            var row = [line.caseName == previous ? "" : line.caseName, line.variant]
            previous = line.caseName
            row += line.figures.map { $0.map { String(format: "%.3f", $0.medianMs) } ?? "" }
            let counts = line.figures.map { $0.map { String($0.statements) } ?? "" }
            // One number when a variant ran the same statements at every size, else each size's.
            row.append(Set(counts).count == 1 ? counts[0] : counts.joined(separator: " → "))
            row.append(line.growth.map { String(format: "%.2f", $0) } ?? "")
            rows.append(row)
        }
        return rows
    }

    /// The stores, one line per size.
    func sizeLines(bullet: String = "") -> [String] {
        runs.map { run in
            "\(bullet)\(SweepSize.grouped(run.size.messages)) messages: \(SweepSize.grouped(run.size.chats)) chats, "
                + "\(SweepSize.grouped(run.size.users)) users; fault-from-sqlite: \(SweepSize.grouped(run.faults)) faults "
                + "on \(SweepSize.grouped(run.items)) items"
        }
    }

    /// The sweep's goals, one line each, then each size's case goals that were missed.
    func goalLines(bullet: String = "", code: (String) -> String = { $0 }) -> [String] {
        var lines = checks.map { "\(bullet)\(code($0.caseName)): \($0.check.check): \($0.check.measured), \($0.check.met ? "met" : "MISSED")" }
        for run in runs {
            for result in run.cases {
                for check in result.checks where !check.met {
                    lines.append("\(bullet)at \(SweepSize.grouped(run.size.messages)) messages, \(code(result.name)): \(check.check): "
                        + "\(check.measured), MISSED")
                }
            }
        }
        return lines
    }

    /// The table, the stores and the goals, for people.
    public func table() -> String {
        var lines = ["faultline bench --sweep: \(build) build, \(quick ? "quick" : "full") run; median ms per store size "
            + "(messages); × growth: the largest size's median over the smallest's"]
        lines.append("")
        lines += ReportTable.aligned(tableRows())
        lines.append("")
        lines += sizeLines()
        lines.append("")
        lines += goalLines()
        lines.append("")
        let missed = checks.filter { !$0.check.met }.map(\.caseName)
        lines.append(missed.isEmpty ? "all sweep targets met" : "sweep targets missed: \(missed.joined(separator: ", "))")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: JSON

    /// `{"sizes":[{"messages":…,"chats":…,"users":…,"items":…,"faults":…}],"cases":[{"name":…,"variants":{"faultline":
    /// {"ms":[…],"minMs":[…],"maxMs":[…],"statements":[…],"checksum":[…],"growth":…},…},"checks":[[…per size…]]}],
    /// "checks":[{"case":…,"check":…,"measured":…,"met":…}],"met":…,"build":"…","quick":…}`. Each array has one entry
    /// per size, smallest first (null where a variant did not run); `ms` is the median; `growth` is the largest
    /// size's median over the smallest's; a case's `checks` are its own goals at each size.
    public func json() -> String {
        let sizeTexts = runs.map { run in
            "{\"messages\":\(run.size.messages),\"chats\":\(run.size.chats),\"users\":\(run.size.users),"
                + "\"items\":\(run.items),\"faults\":\(run.faults)}"
        }
        var caseTexts: [String] = []
        var names: [String] = []
        for line in lines where !names.contains(line.caseName) { names.append(line.caseName) }
        for name in names {
            let variantTexts = lines.filter { $0.caseName == name }.map { line -> String in
                func list(_ value: (VariantResult) -> String) -> String {
                    "[" + line.figures.map { $0.map(value) ?? "null" }.joined(separator: ",") + "]"
                }
                var fields = "\"ms\":\(list { BenchmarkReport.number($0.medianMs) }),\"minMs\":\(list { BenchmarkReport.number($0.minMs) }),"
                    + "\"maxMs\":\(list { BenchmarkReport.number($0.maxMs) }),\"statements\":\(list { String($0.statements) }),"
                    + "\"checksum\":\(list { $0.checksum.map(String.init) ?? "null" })"
                if let growth = line.growth { fields += ",\"growth\":\(BenchmarkReport.number(growth))" }
                return "\(BenchmarkReport.quoted(line.variant)):{\(fields)}"
            }
            let perSize = runs.map { run -> String in
                let checks = run.cases.first { $0.name == name }?.checks ?? []
                return "[" + checks.map(Self.checkJSON).joined(separator: ",") + "]"
            }
            caseTexts.append("{\"name\":\(BenchmarkReport.quoted(name)),\"variants\":{\(variantTexts.joined(separator: ","))},"
                + "\"checks\":[\(perSize.joined(separator: ","))]}")
        }
        let checkTexts = checks.map { "{\"case\":\(BenchmarkReport.quoted($0.caseName))," + Self.checkJSON($0.check).dropFirst() }
        return "{\"sizes\":[\(sizeTexts.joined(separator: ","))],\"cases\":[\(caseTexts.joined(separator: ","))],"
            + "\"checks\":[\(checkTexts.joined(separator: ","))],\"met\":\(allMet),\"build\":\(BenchmarkReport.quoted(build)),"
            + "\"quick\":\(quick)}"
    }

    private static func checkJSON(_ check: CheckResult) -> String {
        "{\"check\":\(BenchmarkReport.quoted(check.check)),\"measured\":\(BenchmarkReport.quoted(check.measured)),\"met\":\(check.met)}"
    }

    // MARK: Markdown

    /// The sweep as Markdown, for a page's sweep section: where and when it ran, the stores, how to run it again, the
    /// table, and the goals.
    public func markdown(machine: String, date: String, command: String) -> String {
        let rows = tableRows()
        var lines = [
            "- **Machine:** \(machine)",
            "- **Date:** \(date)",
            "- **Build:** \(build); **run:** \(quick ? "quick (`--quick`)" : "full")",
        ]
        lines += sizeLines(bullet: "- **Store:** ")
        lines += ["- **Rerun:** `\(command)`", ""]
        lines += ReportTable.markdown(rows)
        lines.append("")
        lines += goalLines(bullet: "- ", code: { "`\($0)`" })
        return lines.joined(separator: "\n") + "\n"
    }
}
