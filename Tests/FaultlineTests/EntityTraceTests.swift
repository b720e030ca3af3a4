import Foundation
import Testing

/// `faultline trace STORE --model MODEL`: the entity browser on Core Data's own stores (the corpus), each action's
/// cost as `--json` reports it, the screen it leaves, read-only by default and writing only with `--write`.
@Suite(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
struct EntityTraceTests {
    struct Statement: Decodable {
        let pane: String?
        let cause: String
        let rows: Int
        let sql: String
    }

    struct Cost: Decodable {
        let action: String
        let sql, faults, cacheHits, cacheMisses, relationshipFaults, fetches: Int
        let warnings: [String]?
        let statements: [Statement]?
    }

    struct Report: Decodable {
        let screen: String
        let actions: [Cost]
    }

    let folder = TemporaryFolder()

    func trace(_ store: String, model: String, _ script: String, _ options: [String] = []) throws -> Report {
        let result = try FaultlineBinary.run(["trace", store, "--model", model, "--json", "--size", "140x40", "--script", script] + options)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
    }

    @Test func eachStepIsAFetchOrAFaultAndCostsWhatItShould() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let report = try trace(store, model: model, "open; open; follow owner; follow cars; down 40; back; back")
        let costs = report.actions
        #expect(costs.map(\.action) == ["start", "open", "open", "follow owner", "follow cars"]
            + Array(repeating: "down", count: 40) + ["back", "back"])
        // The entities: one count each, Car's of its table, its sub-entities' by their Z_ENT.
        #expect(costs[0].sql == 4)
        #expect(costs[0].statements?.map(\.sql) == [
            "SELECT COUNT(*) FROM ZCAR t0", "SELECT COUNT(*) FROM ZCAR t0 WHERE t0.Z_ENT IN (?, ?)",
            "SELECT COUNT(*) FROM ZCAR t0 WHERE t0.Z_ENT = ?", "SELECT COUNT(*) FROM ZPERSON t0",
        ])
        #expect(costs[0].statements?.allSatisfy { $0.pane == "entities" } == true)
        // Opening Car: the first batch (a screenful), then the count; each row shown a row-cache hit.
        #expect(costs[1].sql == 2)
        #expect(costs[1].fetches == 1)
        #expect(costs[1].statements?.first?.rows == 35)
        #expect(costs[1].faults == 35 && costs[1].cacheHits == 35 && costs[1].cacheMisses == 0)
        // Opening the first car: its row was read; a Car has no to-many to count.
        #expect(costs[2].sql == 0 && costs[2].cacheMisses == 0)
        // Following its owner: the owner's fault (a miss), then the count of the owner's cars.
        #expect(costs[3].sql == 2)
        #expect(costs[3].cacheMisses == 1)
        #expect(costs[3].statements?.map(\.cause) == ["fault of Person.firstName", "fetch Car"])
        #expect(costs[3].statements?.allSatisfy { $0.pane == "object" } == true)
        // Following cars: a batched fetch of Car by its inverse, owner == the person.
        #expect(costs[4].sql == 2)
        #expect(costs[4].statements?.first?.sql.contains("WHERE t0.ZOWNER = ?") == true)
        #expect(costs[4].relationshipFaults == 0)
        // Scrolling within the batch costs nothing; into the next, its IDs and its rows.
        let moves = costs[5..<45]
        #expect(moves.reduce(0) { $0 + $1.sql } == 2)
        #expect(moves.allSatisfy { $0.cacheMisses == 0 })
        // Back along the path: nothing is read again.
        #expect(costs[45].sql == 0 && costs[46].sql == 0)
        #expect(report.screen.contains(" Car › p1 FIAT "))
    }

    @Test func theScreenShowsThePathTheColumnsAndTheCosts() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let result = try FaultlineBinary.run(["trace", store, "--model", model, "--size", "140x40",
                                              "--script", "entity Person; sort -lastName; filter lastName == 'Stone'; open; follow cars"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 40)
        #expect(lines[0].contains("cars of Person p17 Theodora Stone · key ↑"))
        #expect(lines[1].contains(" Person › p17 Theodora Stone › cars "))
        #expect(lines[2].contains(" key      entity    maker              markedForDeletionAs… model "))
        #expect(lines[1].contains("last: follow cars"))
        #expect(lines[38].contains("cars-people.sqlite") && lines[38].contains("read-only"))
        #expect(lines[39].contains("s sort") && !lines[39].contains("d delete"))
    }

    @Test func prefetchingTheOwnerShownTurnsItsN1IntoAJoin() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let off = try trace(store, model: model, "open; columns owner,maker", ["--no-prefetch"])
        let unprefetched = try #require(off.actions.last)
        // One fault per owner among the 35 cars shown.
        let owners = try FaultlineBinary.sqlite3(store, "SELECT COUNT(DISTINCT ZOWNER) FROM (SELECT ZOWNER FROM ZCAR ORDER BY Z_PK LIMIT 35)")
        #expect(owners == "7")
        #expect(unprefetched.cacheMisses == 7)
        #expect(unprefetched.warnings == ["N+1 in objects: 7 faults of Person one by one — press p to prefetch owner"])
        let on = try trace(store, model: model, "open; columns owner,maker")
        let prefetched = try #require(on.actions.last)
        #expect(prefetched.cacheMisses == 0)
        #expect(prefetched.warnings == [])
        #expect(prefetched.statements?.first?.sql.contains("LEFT JOIN ZPERSON") == true)
    }

    @Test func aBadPredicateIsShownOnTheStatusLine() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let report = try trace(store, model: model, "open; filter maker == 'FIAT' AND; filter nosuch == 1")
        #expect(report.actions[2].sql == 0 && report.actions[3].sql == 0)
        let status = report.screen.split(separator: "\n").dropLast().last.map(String.init) ?? ""
        #expect(status.contains("filter 'nosuch == 1'"), "status line: \(status)")
        let first = try trace(store, model: model, "open; filter maker == 'FIAT' AND")
        let firstStatus = first.screen.split(separator: "\n").dropLast().last.map(String.init) ?? ""
        #expect(firstStatus.contains("filter 'maker == 'FIAT' AND': position"), "status line: \(firstStatus)")
    }

    @Test(arguments: CoreDataCorpus.withModelFiles)
    func readOnlyByDefaultTheStoreKeepsEveryByte(_ name: String) throws {
        let store = try CoreDataCorpus.copy(name, into: folder)
        let model = try CoreDataCorpus.modelFile(name)
        let before = try CoreDataCorpus.snapshot(folder)
        let report = try trace(store, model: model, "open; open; delete; confirm; save; tab; tab; back; down; open; toggle-prefetch; clear-cache")
        #expect(report.screen.contains("read-only"))
        #expect(try CoreDataCorpus.snapshot(folder) == before)
    }

    @Test func writingOnlyWithWriteAndSayingSo() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let result = try FaultlineBinary.run(["trace", store, "--model", model, "--write", "--script", "down 3; open; down; open; delete; confirm; save"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr == "warning: \(store) is not a chat store and --write lets this command change it: changes follow the model's "
            + "delete rules as GraphStore reads them and are not recorded in Core Data's persistent history; work on a copy if the store matters\n")
        #expect(try FaultlineBinary.sqlite3(store, "SELECT COUNT(*) FROM ZPERSON") == "19")
        // Person p2's one car is left without an owner (Nullify).
        #expect(try FaultlineBinary.sqlite3(store, "SELECT COUNT(*) FROM ZCAR WHERE ZOWNER IS NULL") == "8")
    }

    @Test func badInputGivesOneErrorLine() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let cases: [(arguments: [String], error: String)] = [
            (["trace", "--write"], "error: --write opens a store that is not the chat store for writing: give the STORE (see 'faultline --help')"),
            (["trace", store, "--model", model, "--write", "--read-only"], "error: --write and --read-only cannot go together (see 'faultline --help')"),
            (["trace", "--model", model], "error: --model names a model other than the chat model: give the STORE it describes"),
            (["trace", store, "--model", folder.path("nothing.xcdatamodel")], "error: --model: \(folder.path("nothing.xcdatamodel")): no such file or directory"),
            (["trace", store, "--model", model, "--script", "open; frobnicate"],
             "error: --script: action 2 'frobnicate': unknown action; known: back, backtab, bottom, cancel, clear-cache, confirm, cycle-batch, delete, down, explain, help, open, pagedown, pageup, quit, redo, reset, save, save-and-quit, tab, toggle-batch-mode, toggle-derived, toggle-prefetch, top, undo, up, batch N, columns [KEY,…|default], entity NAME, filter [PREDICATE], follow RELATIONSHIP, resize WxH, reverse, search [PREDICATE], sort [KEY|-KEY]"),
            (["trace", store, "--model", model, "--script", "follow"], "error: --script: action 1 'follow': follow takes the name of a relationship"),
            (["browse", store, "--model", model, "--live"], "error: --live writes chat messages; it goes with the chat store, not with --model (see 'faultline --help')"),
        ]
        for (arguments, error) in cases {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == error + "\n", "\(arguments)")
        }
        // A model the store was not made with is refused, and the store left alone.
        let mismatch = try FaultlineBinary.run(["trace", store, "--model", try CoreDataCorpus.modelFile("authors-books")])
        #expect(mismatch.status != 0)
        #expect(mismatch.stderr.hasPrefix("error: \(store): ") && mismatch.stderr.split(separator: "\n").count == 1)
    }

    /// With no model file: the model is read from inside each store of the corpus. The entities and their counts
    /// (each equal to `SELECT COUNT(*)` of the entity's rows, its sub-entities' included), an entity, an object, a
    /// to-one and a to-many, each a fetch or a fault the panel shows; the files keep every byte and none is added.
    /// `authors-books` holds no rows, so there only the entities and an empty list can be shown.
    @Test(arguments: [
        ("cars-people", "entity Car; open; follow owner; follow cars", "Car › p1 FIAT › owner › Person"),
        ("books-pages", "entity Book; open; follow author; follow books", "Book › p1"),
        ("authors-books", "entity Author; entity Book", nil),
    ] as [(String, String, String?)])
    func withTheModelInsideTheStore(name: String, script: String, path: String?) throws {
        let store = try CoreDataCorpus.copy(name, into: folder)
        let before = try CoreDataCorpus.snapshot(folder)
        let result = try FaultlineBinary.run(["trace", store, "--json", "--size", "140x40", "--script", script])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(try CoreDataCorpus.snapshot(folder) == before)
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let costs = report.actions
        // The entity counts, as the panel saw them, equal COUNT(*) over each entity's Z_ENT numbers.
        let counts = try #require(costs.first?.statements)
        #expect(!counts.isEmpty && counts.allSatisfy { $0.sql.hasPrefix("SELECT COUNT(*) FROM ") })
        // The entities pane as the first screen shows it: a name, then its count.
        let first = try FaultlineBinary.run(["trace", store, "--size", "140x40"])
        let paneLines = first.stdout.split(separator: "\n").compactMap { $0.split(separator: "│").first.map(String.init) }
        let stored = try FaultlineBinary.run(["model", store, "--json"])
        let model = try #require(try JSONSerialization.jsonObject(with: Data(stored.stdout.utf8)) as? [String: Any])
        let entities = try #require(model["entities"] as? [[String: Any]])
        for entity in entities {
            let entityName = try #require(entity["name"] as? String)
            let table = try #require(entity["table"] as? String)
            let numbers = [entity["number"] as? Int ?? -1] + (Self.descendants(of: entityName, in: entities))
            let expected = try FaultlineBinary.sqliteRows(store, "SELECT COUNT(*) FROM \(table) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
            let words = paneLines.map { $0.split(separator: " ").map(String.init) }
            // `Writer (abstract)  2`: the name first, the count last.
            let shown = words.first { $0.count >= 2 && $0[0] == entityName && $0.last?.first?.isNumber == true }?
                .last?.replacingOccurrences(of: ",", with: "")
            #expect(shown == expected.first, "\(name): \(entityName)")
        }
        guard let path else { return }
        #expect(costs.map(\.action) == ["start"] + script.components(separatedBy: "; "))
        // Each step read something and the panel counted it: the list a fetch, the object a fault or a hit, the
        // to-one a fault, the to-many a fetch.
        #expect(costs[1].fetches == 1 && costs[1].sql >= 1)
        // Opening an object of the list: its row came with the list's batch, so nothing is read again.
        #expect(costs[2].cacheMisses == 0)
        #expect(costs[3].sql >= 1 && costs[3].cacheMisses >= 1)
        #expect(costs[4].fetches >= 1 && costs[4].statements?.isEmpty == false)
        #expect(report.screen.contains(path) || costs.count == 5, "\(report.screen)")
    }

    /// The Z_ENT numbers of an entity's sub-entities, at any depth (the model's JSON names direct ones).
    static func descendants(of name: String, in entities: [[String: Any]]) -> [Int] {
        guard let entity = entities.first(where: { $0["name"] as? String == name }) else { return [] }
        return (entity["subentities"] as? [String] ?? []).flatMap { child in
            [entities.first { $0["name"] as? String == child }?["number"] as? Int ?? -1] + descendants(of: child, in: entities)
        }
    }

    @Test func theChatModelOpensTheChatBrowser() throws {
        let chat = FaultlineBinary.smallStore("entity-trace-chat", users: 20, chats: 5, messages: 50)
        let result = try FaultlineBinary.run(["trace", chat, "--model", packageRoot.appendingPathComponent("fixtures/Chat.xcdatamodeld").path,
                                              "--script", "down"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("─ Chats (5)"))
    }

    @Test func traceHelpListsTheEntityBrowsersActions() throws {
        let help = try FaultlineBinary.run(["trace", "--help"])
        for action in ["entity NAME", "sort KEY", "reverse", "columns KEY,KEY", "filter PREDICATE", "follow RELATIONSHIP"] {
            #expect(help.stdout.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ").contains(action), "\(action)")
        }
    }
}
