import Foundation
import Testing

/// `faultline bench --sweep`: the sweep's cases on stores of growing size, each variant's figures per size. Times
/// are never asserted; the sizes, the cases, the statements and the checksums are.
@Suite struct BenchSweepTests {
    static let cases = ["chat-list", "open-chat", "fault-from-sqlite", "add-message"]
    static let variants: [String: Set<String>] = [
        "chat-list": ["faultline", "faultline-defaults", "faultline-coredata", "grdb", "grdb-query-interface", "raw-sqlite"],
        "open-chat": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite"],
        "fault-from-sqlite": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite"],
        "add-message": ["faultline", "faultline-small", "raw-sqlite"],
    ]

    /// A sweep of two small stores, as JSON and into a page's sweep section: every size and case is there, every
    /// variant agreed on the checksum at each size, and the page's other run is left alone.
    @Test func tinySweepReportsEachSizeCaseAndVariant() throws {
        let folder = TemporaryFolder()
        let page = folder.path("benchmarks.md")
        let run = "<!-- faultline bench: begin -->\nthe full run\n<!-- faultline bench: end -->\n"
        let head = "# Benchmarks\n\n" + run + "\n## Sweep\n\n<!-- faultline bench sweep: begin -->\n"
        let tail = "<!-- faultline bench sweep: end -->\n\nMore words.\n"
        try (head + "an older sweep\n" + tail).write(toFile: page, atomically: true, encoding: .utf8)

        let result = try FaultlineBinary.run(["bench", "--sweep", "--quick", "--json", "--sizes", "2000,6000", "--markdown", page])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["sizes", "cases", "checks", "met", "build", "quick"])
        #expect(object["quick"] as? Bool == true)

        // A chat per 100 messages and a user per 50; fault-from-sqlite's item store as large as the chat store, with
        // the same faults at both sizes (as many as the smaller store has items).
        let sizes = try #require(object["sizes"] as? [[String: Int]])
        #expect(sizes == [["messages": 2_000, "chats": 20, "users": 40, "items": 2_000, "faults": 2_000],
                          ["messages": 6_000, "chats": 60, "users": 120, "items": 6_000, "faults": 2_000]])

        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.map { $0["name"] as? String } == Self.cases)
        var statements: [String: [String: [Int]]] = [:]
        for entry in cases {
            let name = try #require(entry["name"] as? String)
            let variants = try #require(entry["variants"] as? [String: [String: Any]])
            #expect(Set(variants.keys) == Self.variants[name], "\(name): \(variants.keys.sorted())")
            for (variant, figures) in variants {
                let medians = try #require(figures["ms"] as? [Double], "\(name)/\(variant)")
                let minimums = try #require(figures["minMs"] as? [Double], "\(name)/\(variant)")
                let maximums = try #require(figures["maxMs"] as? [Double], "\(name)/\(variant)")
                #expect(medians.count == 2 && medians.allSatisfy { $0 > 0 }, "\(name)/\(variant): \(medians)")
                #expect(zip(zip(minimums, medians), maximums).allSatisfy { $0.0 <= $0.1 && $0.1 <= $1 }, "\(name)/\(variant)")
                // The growth is the largest size's median over the smallest's.
                let growth = try #require(figures["growth"] as? Double, "\(name)/\(variant)")
                #expect(abs(growth - medians[1] / medians[0]) <= 0.01 * growth + 0.001, "\(name)/\(variant): \(growth)")
                statements[name, default: [:]][variant] = try #require(figures["statements"] as? [Int], "\(name)/\(variant)")
                let checksums = try #require(figures["checksum"] as? [Int], "\(name)/\(variant)")
                #expect(checksums.count == 2, "\(name)/\(variant)")
            }
            // At each size every variant gave the same checksum: they did the same work.
            for size in 0..<2 {
                let checksums = Set(variants.values.compactMap { ($0["checksum"] as? [Int])?[size] })
                #expect(checksums.count == 1, "\(name) at size \(size): \(checksums)")
            }
            let perSize = try #require(entry["checks"] as? [[[String: Any]]], "\(name)")
            #expect(perSize.count == 2 && perSize.allSatisfy { !$0.isEmpty }, "\(name): each size has the case's goals")
        }
        // The statements do not depend on the store's size where the work does not: the first screen in one
        // statement, the open chat in one, a fault batch of 100 rows, and 20 sends.
        #expect(statements["chat-list"]?["faultline"] == [1, 1])
        #expect(statements["open-chat"]?["faultline"] == [1, 1])
        #expect(statements["fault-from-sqlite"]?["faultline"] == [20, 20])
        #expect(statements["fault-from-sqlite"]?["raw-sqlite"] == [2_000, 2_000])
        #expect(statements["add-message"]?["raw-sqlite"] == [80, 80])
        #expect(statements["add-message"]?["faultline"] == statements["add-message"]?["faultline-small"])

        // The sweep's goals: the two screens' faultline variant at the largest size against the smallest.
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.map { $0["case"] as? String } == ["chat-list", "open-chat"])
        #expect(checks.allSatisfy { $0["check"] as? String == "faultline at 6,000 messages ≤ 1.5× at 2,000" && $0["met"] is Bool })
        #expect(object["met"] as? Bool == checks.allSatisfy { $0["met"] as? Bool == true })

        // The page: the sweep between its own markers, the full run's section as it was.
        let text = try String(contentsOfFile: page, encoding: .utf8)
        #expect(text.hasPrefix(head))
        #expect(text.hasSuffix(tail))
        #expect(!text.contains("an older sweep"))
        for expected in ["- **Store:** 2,000 messages: 20 chats, 40 users", "--sweep --quick --sizes 2000,6000 --markdown \(page)`",
                         "| case | variant | 2,000 ms | 6,000 ms | statements | × growth |", "| `chat-list` | faultline |",
                         "- `chat-list`: faultline at 6,000 messages ≤ 1.5× at 2,000: "] {
            #expect(text.contains(expected), "the page lacks \(expected)")
        }
    }

    /// Sizes and cases a sweep cannot take are one `error:` line naming the option, before anything runs.
    @Test func badSweepArgumentsAreOneErrorLine() throws {
        let cases: [([String], [String])] = [
            (["--sizes", "2000,6000"], ["--sizes needs --sweep"]),
            (["--sweep", "--sizes", "2000"], ["--sizes", "at least two sizes"]),
            (["--sweep", "--sizes", "4000,2000"], ["--sizes", "2000 follows 4000"]),
            (["--sweep", "--sizes", "2000,2000"], ["--sizes", "2000 follows 2000"]),
            (["--sweep", "--sizes", "2000,lots"], ["--sizes", "'lots' is not a whole number"]),
            (["--sweep", "--sizes", "2000,"], ["--sizes", "'' is not a whole number"]),
            (["--sweep", "--sizes", "100,2000"], ["--sizes", "from 2000 to 10000000", "not 100"]),
            (["--sweep", "--sizes", "2000,99999999999999999999"], ["--sizes", "'99999999999999999999'"]),
            (["--sweep", "--case", "startup"], ["--case startup is not one of the sweep's cases"]),
            (["--sweep", "--case", "no-such-case"], ["unknown case 'no-such-case'"]),
        ]
        for (arguments, expected) in cases {
            let result = try FaultlineBinary.run(["bench", "--quick"] + arguments)
            let what = arguments.joined(separator: " ")
            #expect(result.status != 0 && result.status < 128, "\(what): exit \(result.status)")
            #expect(result.stdout.isEmpty, "\(what): \(result.stdout)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && result.stderr.hasPrefix("error: "), "\(what): \(result.stderr)")
            for text in expected { #expect(result.stderr.contains(text), "\(what): \(result.stderr) lacks \(text)") }
        }
    }
}
