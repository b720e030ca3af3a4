import Foundation
import Testing

/// `faultline bench`: the report's shape and counts. Times are never asserted: they depend on the machine.
@Suite struct BenchCommandTests {
    /// The object-graph cases with --quick: each names its variants (GRDB written for speed and GRDB's query
    /// interface side by side), the peer its headline ratio is over, its goals, and the statements each variant ran.
    @Test func quickJSONReportHasTheSelectedCasesAndTheirStatementCounts() throws {
        let names = ["fault-from-cache", "fault-from-sqlite", "insert-save"]
        let result = try FaultlineBinary.run(["bench", "--quick", "--json"] + names.flatMap { ["--case", $0] })
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["cases", "build", "quick"])
        #expect(object["quick"] as? Bool == true)
        let build = try #require(object["build"] as? String)
        #expect(build == "debug" || build == "release")
        // A debug build says on stderr that its numbers mean little; a release build says nothing there.
        #expect(result.stderr.contains("debug build") == (build == "debug"))

        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.map { $0["name"] as? String } == names)
        let expectedVariants: [String: Set<String>] = [
            "fault-from-cache": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite", "dictionary"],
            "fault-from-sqlite": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite"],
            "insert-save": ["faultline", "grdb", "grdb-query-interface", "raw-sqlite"],
        ]
        // A cache hit's fair peer is a lookup in memory, not a query; the other cases' headline peer is raw SQLite.
        let headlinePeers = ["fault-from-cache": "dictionary", "fault-from-sqlite": "raw-sqlite", "insert-save": "raw-sqlite"]
        let expectedChecks: [String: [String]] = [
            "fault-from-cache": ["faultline ≤ 3× dictionary"],
            "fault-from-sqlite": ["faultline-defaults ≤ 1.2× grdb", "faultline-defaults ≤ 1.5× raw", "faultline faster than grdb"],
            "insert-save": ["faultline ≤ 1.2× grdb", "faultline ≤ 1.5× raw"],
        ]
        var statements: [String: [String: Int]] = [:]
        for entry in cases {
            let name = try #require(entry["name"] as? String)
            let ratio = try #require(entry["ratio"] as? Double)
            #expect(ratio > 0 && ratio.isFinite, "\(name): ratio \(ratio)")
            #expect(!(try #require(entry["target"] as? String)).isEmpty)
            #expect(entry["met"] is Bool)
            let peer = try #require(entry["ratioOver"] as? String)
            #expect(peer == headlinePeers[name], "\(name): ratio over \(peer)")
            #expect((entry["ratioToGRDB"] as? Double).map { $0 > 0 } == true)
            let checks = try #require(entry["checks"] as? [[String: Any]])
            #expect(!checks.isEmpty && checks.allSatisfy { $0["check"] is String && $0["measured"] is String && $0["met"] is Bool })
            #expect((entry["met"] as? Bool) == checks.allSatisfy { $0["met"] as? Bool == true })
            let checkNames = checks.compactMap { $0["check"] as? String }
            for expected in expectedChecks[name] ?? [] {
                #expect(checkNames.contains(expected), "\(name) lacks the goal \(expected): \(checkNames)")
            }
            let variants = try #require(entry["variants"] as? [String: [String: Any]])
            #expect(Set(variants.keys) == expectedVariants[name], "\(name): \(variants.keys.sorted())")
            for (variant, figures) in variants {
                // The read peers that run SQL also report the statements they ran.
                let recordsSQL = name != "insert-save" && ["grdb", "grdb-query-interface", "raw-sqlite"].contains(variant)
                #expect(Set(figures.keys) == Set(["ms", "minMs", "maxMs", "statements", "xRaw", "xGRDB"] + (recordsSQL ? ["sql"] : [])),
                        "\(name)/\(variant)")
                #expect((figures["xRaw"] as? Double).map { $0 > 0 } == true, "\(name)/\(variant)")
                let median = try #require(figures["ms"] as? Double)
                let minimum = try #require(figures["minMs"] as? Double)
                let maximum = try #require(figures["maxMs"] as? Double)
                #expect(minimum <= median && median <= maximum, "\(name)/\(variant)")
                statements[name, default: [:]][variant] = try #require(figures["statements"] as? Int)
            }
            // The fast GRDB peer runs the raw peer's very statement; the query interface its own.
            if name != "insert-save" {
                let grdbSQL = try #require(variants["grdb"]?["sql"] as? [String])
                #expect(grdbSQL.count == 1 && grdbSQL == variants["raw-sqlite"]?["sql"] as? [String], "\(name): \(grdbSQL)")
                #expect(grdbSQL.first?.hasSuffix("WHERE Z_PK = ?") == true)
                #expect(variants["grdb-query-interface"]?["sql"] as? [String] != grdbSQL)
            }
            // The headline ratio is the first variant's median over the named peer's.
            let first = try #require(variants["faultline"]?["ms"] as? Double)
            let over = try #require(variants[peer]?["ms"] as? Double)
            #expect(abs(ratio - first / over) <= 0.01 * ratio + 0.001, "\(name): ratio \(ratio), medians \(first) over \(over)")
        }
        // Faults served by the row cache run no SQL; the peers without a cache read each of the 10,000 rows by key,
        // GRDB either way: one cached statement stepped per key, or a query-interface request per key.
        #expect(statements["fault-from-cache"] == ["faultline": 0, "faultline-defaults": 0, "dictionary": 0, "raw-sqlite": 10_000,
                                                   "grdb": 10_000, "grdb-query-interface": 10_000])
        // With an empty row cache, tuned Faultline reads 100 rows a statement; every other variant one row a statement.
        #expect(statements["fault-from-sqlite"] == ["faultline": 100, "faultline-defaults": 10_000, "raw-sqlite": 10_000,
                                                    "grdb": 10_000, "grdb-query-interface": 10_000])
        // 10,000 rows with --quick: one INSERT each. Faultline also allocates its keys in one statement, and the
        // query interface runs one schema query on its first insert; GRDB's cached INSERT, like raw SQLite's, runs
        // nothing else.
        #expect(statements["insert-save"] == ["raw-sqlite": 10_000, "grdb": 10_000, "faultline": 10_001, "grdb-query-interface": 10_001])
        #expect((cases[0]["usPerFault"] as? Double).map { $0 > 0 } == true)
    }

    /// `render-frame` draws the browser's 200×60 screen from state: no SQL, both variants produced the same text
    /// (the runner compares their checksums), and the figure of merit is µs per frame.
    @Test func renderFrameReportsMicrosecondsPerFrameWithoutSQL() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "render-frame"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let entry = try #require((object["cases"] as? [[String: Any]])?.first)
        #expect(entry["name"] as? String == "render-frame")
        #expect((entry["usPerFrame"] as? Double).map { $0 > 0 } == true)
        #expect(entry["usPerFault"] == nil)
        let variants = try #require(entry["variants"] as? [String: [String: Any]])
        #expect(Set(variants.keys) == ["faultline", "text-join"])
        #expect(variants.values.allSatisfy { $0["statements"] as? Int == 0 })
    }

    /// `fixture-generate` runs `fixture generate` as a child: both variants wrote the same rows (the runner checks
    /// their fingerprints), the raw peer with one INSERT per row, and the child reported its peak memory.
    @Test func fixtureGenerateReportsRowsPerSecondAndPeakMemory() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "fixture-generate"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.count == 1)
        let entry = try #require(cases.first)
        #expect(entry["name"] as? String == "fixture-generate")
        let rows = try #require(entry["rows"] as? Int)
        // The quick fixture: 20,000 messages and everything hanging off them.
        #expect(rows > 20_000)
        let variants = try #require(entry["variants"] as? [String: [String: Any]])
        let faultline = try #require(variants["faultline"])
        let raw = try #require(variants["raw-sqlite"])
        #expect(Set(faultline.keys) == ["ms", "minMs", "maxMs", "statements", "rowsPerSecond", "peakMB", "xRaw"])
        #expect(Set(raw.keys) == ["ms", "minMs", "maxMs", "statements", "rowsPerSecond", "xRaw"])
        #expect(raw["statements"] as? Int == rows)
        let faultlineStatements = try #require(faultline["statements"] as? Int)
        #expect(faultlineStatements > rows, "the generator also moves Z_MAX and object versions")
        let peak = try #require(faultline["peakMB"] as? Double)
        #expect(peak > 1 && peak < 1_000, "peak \(peak) MB")
        for figures in [faultline, raw] {
            let rate = try #require(figures["rowsPerSecond"] as? Double)
            let median = try #require(figures["ms"] as? Double)
            #expect(abs(rate - Double(rows) / (median / 1000)) <= 1, "rows per second follow from rows and the median")
        }
    }

    /// The chat store's read cases on the quick chat fixture, run together so the fixture is generated once: every
    /// variant read the same values (the runner compares their checksums), with the statements each way costs.
    @Test func chatReadCasesCompareTheirVariantsOnOneFixture() throws {
        let names = ["chat-list", "chat-list-scroll", "open-chat", "materialize-messages"]
        let result = try FaultlineBinary.run(["bench", "--quick", "--json"] + names.flatMap { ["--case", $0] })
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.map { $0["name"] as? String } == names)
        // Every read case has Faultline, both GRDB peers and the raw peer, with ratios to raw SQLite and to the
        // competent GRDB peer; the scroll and the materialize cases also have the floor.
        let expectedVariants: [String: Set<String>] = [
            "chat-list": ["faultline", "faultline-defaults", "faultline-coredata", "grdb", "grdb-query-interface", "raw-sqlite"],
            "chat-list-scroll": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite", "raw-sqlite-floor",
                                 "raw-sqlite-keyset"],
            "open-chat": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite"],
            "materialize-messages": ["faultline", "faultline-defaults", "grdb", "grdb-query-interface", "raw-sqlite", "raw-sqlite-floor"],
        ]
        var byName: [String: [String: [String: Any]]] = [:]
        for entry in cases {
            let name = try #require(entry["name"] as? String)
            let variants = try #require(entry["variants"] as? [String: [String: Any]])
            #expect(Set(variants.keys) == expectedVariants[name], "\(name): \(variants.keys.sorted())")
            #expect(variants.values.allSatisfy { $0["xRaw"] is Double && $0["xGRDB"] is Double })
            #expect(entry["ratioOver"] as? String == "raw-sqlite")
            let checks = try #require(entry["checks"] as? [[String: Any]])
            #expect(checks.contains { ($0["check"] as? String)?.hasPrefix("faultline ≤ ") == true && ($0["check"] as? String)?.hasSuffix(" raw") == true },
                    "\(name): \(checks)")
            byName[name] = variants
        }

        let variants = try #require(byName["chat-list"])
        let statements = try variants.mapValues { try #require($0["statements"] as? Int) }
        // Tuned: the first batch's rows with their last messages and senders joined, and the total in the same statement.
        #expect(statements["faultline"] == 1)
        #expect(statements["raw-sqlite"] == 1)
        // GRDB written for speed: the raw peer's statement, the total as its last column. The query interface: its
        // joins with a GROUP BY, then the total by fetchCount.
        #expect(statements["grdb"] == 1)
        #expect(statements["grdb-query-interface"] == 2)
        // Core Data's tuned way: every ID, the batch's rows, one IN statement per prefetch level.
        #expect(statements["faultline-coredata"] == 4)
        // Defaults: the fetch, then per row a members fault and a last-message fault, and a sender fault for each
        // sender not already read.
        let defaults = try #require(statements["faultline-defaults"])
        #expect(defaults > 1 + 30 + 30 && defaults <= 1 + 30 * 3, "defaults ran \(defaults) statements")
        let list = try #require(cases.first)
        #expect(list["met"] is Bool)

        let scroll = try #require(byName["chat-list-scroll"])
        // 1,000 chats in batches of 20, windowed: the first batch with its total, 49 more batches, and the later IDs
        // in three reads of growing size (160, 320, 640). The raw peer and GRDB do it the same way: the keys once,
        // then 50 pages by key. The floor steps one statement; keyset pages are 50 and the empty one after.
        #expect(scroll["faultline"]?["statements"] as? Int == 1 + 49 + 3)
        #expect(scroll["raw-sqlite"]?["statements"] as? Int == 1 + 50)
        #expect(scroll["grdb"]?["statements"] as? Int == 1 + 50)
        #expect(scroll["raw-sqlite-floor"]?["statements"] as? Int == 1)
        #expect(scroll["raw-sqlite-keyset"]?["statements"] as? Int == 51)
        #expect(scroll["grdb-query-interface"]?["statements"] as? Int == 51)
        for (name, figures) in scroll {
            let first = try #require(figures["rssFirstBatchMB"] as? Double, "\(name)")
            let last = try #require(figures["rssLastBatchMB"] as? Double, "\(name)")
            #expect(first > 1 && last > 1, "\(name): \(first) → \(last) MB")
        }
        // Paging by key reads the list's keys in its order, then rows by key.
        for name in ["raw-sqlite", "grdb"] {
            let sql = try #require(scroll[name]?["sql"] as? [String], "\(name)")
            #expect(sql.count == 2 && sql.last?.contains(" IN (") == true, "\(name): \(sql)")
        }
        // In every read case the fast GRDB peer runs the raw peer's very statements; the query interface its own.
        for (name, variants) in byName {
            let raw = try #require(variants["raw-sqlite"]?["sql"] as? [String], "\(name)")
            #expect(variants["grdb"]?["sql"] as? [String] == raw, "\(name)")
            #expect(variants["grdb-query-interface"]?["sql"] as? [String] != raw, "\(name)")
        }

        // Materializing: every peer but the floor reads the 14 columns of a message row, as Faultline's fetch does.
        let materialize = try #require(byName["materialize-messages"])
        for name in ["faultline", "grdb", "raw-sqlite"] {
            let sql = try #require(materialize[name]?["sql"] as? [String], "\(name)")
            let select = try #require(sql.first, "\(name)")
            let columns = select.components(separatedBy: " FROM ").first?.split(separator: ",").count
            #expect(sql.count == 1 && columns == 14, "\(name): \(select)")
        }
        let floorSQL = try #require(materialize["raw-sqlite-floor"]?["sql"] as? [String])
        #expect(floorSQL.first?.components(separatedBy: " FROM ").first?.split(separator: ",").count == 7, "\(floorSQL)")
    }

    /// The chat list's member counts: Faultline, the competent GRDB peer and the raw peer all read the count the
    /// store keeps in `ZMEMBERSCOUNT` (its triggers keep it, whichever library writes); the query-interface GRDB peer
    /// is the only one that computes it, with `COUNT` over the member table. Core Data's defaults read the members.
    @Test func chatListPeersReadTheStoredMemberCount() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "chat-list"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let entry = try #require((object["cases"] as? [[String: Any]])?.first)
        let variants = try #require(entry["variants"] as? [String: [String: Any]])
        let sql = try variants.mapValues { try #require($0["sql"] as? [String]) }
        for name in ["faultline", "grdb", "raw-sqlite"] {
            let statements = try #require(sql[name])
            #expect(statements.count == 1, "\(name): \(statements)")
            #expect(statements.allSatisfy { $0.contains("ZMEMBERSCOUNT") && !$0.contains("ZCHATMEMBER") }, "\(name): \(statements)")
        }
        // GRDB's statement is the raw peer's, word for word.
        #expect(sql["grdb"] == sql["raw-sqlite"])
        let computing = sql.filter { _, statements in
            statements.contains { $0.uppercased().contains("COUNT(") && $0.contains("ZCHATMEMBER") }
        }
        #expect(Set(computing.keys) == ["grdb-query-interface"], "\(computing)")
        #expect(sql["faultline-defaults"]?.contains { $0.contains("FROM ZCHATMEMBER") && !$0.uppercased().contains("COUNT(") } == true)
    }

    /// `add-message` and `startup` on the quick chat store: the largest chat and a small one take the same statements
    /// per send, and `faultline trace`'s first screen shows the titles the sqlite3 shell printed (the runner compares
    /// both sides' checksums).
    @Test func addMessageAndStartupRunOnTheChatStore() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "add-message", "--case", "startup"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.map { $0["name"] as? String } == ["add-message", "startup"])
        let add = try #require(cases.first?["variants"] as? [String: [String: Any]])
        #expect(Set(add.keys) == ["faultline", "faultline-small", "raw-sqlite"])
        // 20 sends with --quick; each save inserts, updates the chat and the previous last message, and allocates a
        // key; the raw peer the same four statements per send.
        #expect(add["raw-sqlite"]?["statements"] as? Int == 80)
        let large = try #require(add["faultline"]?["statements"] as? Int)
        #expect(large == add["faultline-small"]?["statements"] as? Int)
        #expect(large >= 80 && large < 100, "\(large) statements for 20 sends")
        let checks = try #require(cases.first?["checks"] as? [[String: Any]])
        #expect(checks.first?["check"] as? String == "equal statements: faultline, faultline-small")
        #expect(checks.first?["met"] as? Bool == true)

        let startup = try #require(cases.last?["variants"] as? [String: [String: Any]])
        #expect(Set(startup.keys) == ["faultline", "raw-sqlite", "faultline-defaults"])
        #expect(startup["raw-sqlite"]?["statements"] as? Int == 1)
        let tuned = try #require(startup["faultline"]?["statements"] as? Int)
        let defaults = try #require(startup["faultline-defaults"]?["statements"] as? Int)
        #expect(tuned <= 4 && defaults > 30, "tuned \(tuned), defaults \(defaults)")
    }

    /// `cascade-delete` on the quick fixture (a chat of 10,000 messages): the four variants left the same rows (the
    /// runner compares the stores' fingerprints), Faultline in a few dozen set-based statements, raw SQLite by hand
    /// with the chat's message keys collected once in a temporary table and again with a subquery repeated in each
    /// statement, the object-by-object delete with a fault per object and per to-many, and each variant says how far
    /// its memory rose.
    @Test func cascadeDeleteComparesFourWaysOfDeletingOneChat() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "cascade-delete"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.count == 1)
        let entry = try #require(cases.first)
        #expect(entry["name"] as? String == "cascade-delete")
        #expect(entry["speedupOver"] as? String == "object-by-object")
        #expect((entry["speedup"] as? Double).map { $0 > 0 } == true)
        #expect(entry["met"] is Bool)

        let variants = try #require(entry["variants"] as? [String: [String: Any]])
        #expect(Set(variants.keys) == ["faultline", "raw-sqlite", "raw-sqlite-subqueries", "object-by-object"])
        #expect(entry["ratioOver"] as? String == "raw-sqlite")
        for (name, figures) in variants {
            #expect(Set(figures.keys) == ["ms", "minMs", "maxMs", "statements", "peakMB", "peakGrowthMB", "xRaw"], "\(name)")
            let peak = try #require(figures["peakMB"] as? Double)
            let growth = try #require(figures["peakGrowthMB"] as? Double)
            #expect(peak > 1 && growth >= 0 && growth < peak, "\(name): peak \(peak) MB, growth \(growth) MB")
        }
        let statements = try variants.mapValues { try #require($0["statements"] as? Int) }
        // The hand-written delete: clear references in other chats' messages (one UPDATE, so that a row moves one
        // version on) and in other chats, remove three kinds of link, delete five tables' rows: 10 statements, 9 of
        // them finding the chat's messages with the same subquery. The raw peer instead fills a temporary table
        // (made before the timed region, as statements are prepared) with the messages' keys in one INSERT…SELECT,
        // runs the same 10 statements reading it, and empties it: 12 statements (BEGIN and COMMIT are not counted
        // in either).
        #expect(statements["raw-sqlite-subqueries"] == 10)
        #expect(statements["raw-sqlite"] == 12)
        let faultline = try #require(statements["faultline"])
        #expect(faultline > 10 && faultline <= 40, "faultline ran \(faultline) statements")
        // Object by object: a fault per message, reaction, attachment and member, and five to-many faults per message.
        let byObject = try #require(statements["object-by-object"])
        #expect(byObject > 6 * 10_000, "object-by-object ran \(byObject) statements")

        let deleted = try #require(entry["deleted"] as? [String: Int])
        #expect(deleted["Message"] == 10_000)
        #expect(deleted["GroupChat"] == 1)
        #expect((deleted["ChatMember"] ?? 0) > 2 && (deleted["Reaction"] ?? 0) > 0 && (deleted["Attachment"] ?? 0) > 0)
        let nullified = try #require(entry["nullified"] as? [String: Int])
        // Preparation made 100 messages of other chats replies to the chat's, and read receipts on its latest 100.
        #expect(nullified["Message.replyTo"] == 100)
        #expect((nullified["Message.forwardedFrom"] ?? 0) > 0)
        #expect((nullified["User.readMessages"] ?? 0) > 100)
        #expect(nullified["User.sentMessages"] == 10_000)
    }

    @Test func unknownCaseIsOneErrorLine() throws {
        let result = try FaultlineBinary.run(["bench", "--quick", "--case", "fault-from-cache", "--case", "no-such-case"])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("error: unknown case 'no-such-case'") == true)
    }

    @Test func helpListsTheCases() throws {
        let result = try FaultlineBinary.run(["bench", "--help"])
        #expect(result.status == 0)
        for name in ["fault-from-cache", "fault-from-sqlite", "insert-save", "observer-overhead", "fixture-generate", "chat-list", "chat-list-scroll", "cascade-delete", "render-frame"] {
            #expect(result.stdout.contains(name), "help does not mention \(name)")
        }
    }

    @Test func sqlDebugLogGoesToTheGivenFile() throws {
        let folder = TemporaryFolder()
        let log = folder.path("sql.log")
        let result = try FaultlineBinary.run(["bench", "--quick", "--json", "--case", "fault-from-sqlite", "--sql-debug", "3", "--sql-log", log])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("the SQL debug log is on"))
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        // Level 3: statements with their timing, bound values, and one annotation per fault fulfilled from the database.
        #expect(lines.contains { $0.hasPrefix("CoreData: sql: SELECT ") && $0.hasSuffix("WHERE t0.Z_PK = ?") })
        #expect(lines.contains { $0.hasPrefix("CoreData: details: SQLite bind[0] = ") })
        #expect(lines.filter { $0.hasPrefix("CoreData: annotation: fault fulfilled from database for : x-coredata://") }.count >= 10_000)
    }

    /// `--markdown FILE` puts the run between the file's two marker lines and leaves the rest of the page alone.
    @Test func markdownRunGoesBetweenTheMarkers() throws {
        let folder = TemporaryFolder()
        let page = folder.path("benchmarks.md")
        let head = "# Benchmarks\n\nGoals, written by hand.\n\n<!-- faultline bench: begin -->\n"
        let tail = "<!-- faultline bench: end -->\n\nMore words.\n"
        try (head + "an older run\n" + tail).write(toFile: page, atomically: true, encoding: .utf8)
        // Named through a link, as a docs folder kept elsewhere may be: the page is rewritten, the link stays one.
        let link = folder.path("link.md")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: page)
        let result = try FaultlineBinary.run(["bench", "--quick", "--case", "render-frame", "--markdown", link])
        #expect(result.status == 0 || result.stdout.contains("targets missed"), "stderr: \(result.stderr)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == page)
        let text = try String(contentsOfFile: page, encoding: .utf8)
        #expect(text.hasPrefix(head))
        #expect(text.hasSuffix(tail))
        #expect(!text.contains("an older run"))
        for expected in ["- **Machine:** ", "- **Date:** ", "- **Scale:** ", "--quick --case render-frame --markdown \(link)`",
                         "| case | variant | median ms |", "| `render-frame` | faultline |", "- `render-frame`: faultline ≤ 500 µs per frame: "] {
            #expect(text.contains(expected), "the page lacks \(expected)")
        }
    }

    /// A page that cannot take the run is refused before the run starts, and is left as it was.
    @Test func badMarkdownFileIsOneErrorLineAndUntouched() throws {
        let folder = TemporaryFolder()
        let noMarkers = folder.path("plain.md")
        try "# no markers here\n".write(toFile: noMarkers, atomically: true, encoding: .utf8)
        #expect(mkfifo(folder.path("pipe.md"), 0o600) == 0)  // reading it would wait for a writer for ever
        for (path, message) in [
            (noMarkers, "error: \(noMarkers): needs the line <!-- faultline bench: begin -->"),
            (folder.path("missing.md"), "error: \(folder.path("missing.md")): no such file"),
            (folder.path(""), "error: \(folder.path("")): is a folder"),
            (folder.path("pipe.md"), "error: \(folder.path("pipe.md")): is not a regular file"),
        ] {
            let result = try FaultlineBinary.run(["bench", "--quick", "--case", "render-frame", "--markdown", path])
            #expect(result.status != 0)
            #expect(result.stdout.isEmpty)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix(message), "\(lines)")
        }
        #expect(try String(contentsOfFile: noMarkers, encoding: .utf8) == "# no markers here\n")
        #expect(!FileManager.default.fileExists(atPath: folder.path("missing.md")))
    }

    @Test func badSQLDebugLevelsAreOneErrorLine() throws {
        for (arguments, environment, message) in [
            (["--sql-debug", "9"], [String: String](), "error: --sql-debug must be a level from 1 to 4, not 9"),
            ([], ["FAULTLINE_SQL_DEBUG": "x"], "error: FAULTLINE_SQL_DEBUG must be a level from 1 to 4, not 'x'"),
            (["--sql-debug", "1", "--sql-log", "/nonexistent/folder/sql.log"], [:], "error: /nonexistent/folder/sql.log: cannot write the SQL log here"),
        ] {
            let result = try FaultlineBinary.run(["bench", "--quick", "--case", "fault-from-cache"] + arguments, environment: environment)
            #expect(result.status != 0)
            let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1)
            #expect(errors.first.map { $0.hasPrefix(message) } == true, "\(errors)")
        }
    }
}
