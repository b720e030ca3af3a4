import Foundation
import TerminalText
import Testing

/// `faultline browse STORE --model MODEL` in a real terminal (tmux, 120×40, UTF-8) on a Core Data store of the
/// corpus: the keys walk entities, objects and relationships, the panel counts what each step read, and the store
/// is left as it was.
@Suite(.enabled(if: TmuxSession.isAvailable && CoreDataCorpus.isPresent,
                "needs tmux and the Core Data corpus (\(CoreDataCorpus.variable))"))
struct EntityBrowserEndToEndTests {
    let folder = TemporaryFolder()

    @Test func browsingCarsAndPeopleWithTheKeys() throws {
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        let model = try CoreDataCorpus.modelFile("cars-people")
        let before = try CoreDataCorpus.snapshot(folder)
        let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse '\(store)' --model '\(model)'", width: 120, height: 40)
        var screen = try session.waitFor("Entities (4)")
        var lines = BrowserEndToEndTests.lines(screen)
        #expect(lines.count == 40)
        #expect(lines[1].hasPrefix(" Car ") && lines[1].contains(" 125 "))
        #expect(lines[2].hasPrefix("   SportCar ") && lines[3].hasPrefix("     LuxuryCar "))
        #expect(lines[38].contains("read-only"))

        // Enter opens Car: a batched fetch, its figures those `trace` reports for the same action.
        try session.send(keys: "Enter")
        screen = try session.waitFor("last: open")
        lines = BrowserEndToEndTests.lines(screen)
        #expect(lines[0].contains("─ Car · key ↑ "))
        let panel = try #require(BrowserEndToEndTests.panelFigures(screen, after: "last: open"))
        let trace = try FaultlineBinary.run(["trace", store, "--model", model, "--script", "open", "--json", "--size", "120x40"])
        let traced = try #require(try BrowserEndToEndTests.traceCosts(trace.stdout)["open"], "trace: \(trace.stderr)")
        #expect(panel.statements == traced["sql"])
        #expect(panel.faults == traced["faults"] && panel.hits == traced["cacheHits"] && panel.misses == traced["cacheMisses"])
        // Read-only: the keys that write are not offered.
        #expect(!lines[39].contains("d delete") && lines[39].contains("s sort"))

        // The third car, then its owner (the last row of the object pane): the owner's fault, a miss.
        try session.send(keys: "j", "j", "Enter")
        screen = try session.waitFor("─ Car p3 FIAT ")
        try session.send(keys: "G", "Enter")
        screen = try session.waitFor("─ Person p17 Theodora Stone ")
        lines = BrowserEndToEndTests.lines(screen)
        #expect(lines[1].contains(" Car › p3 FIAT › Person p17 Theodora Stone "))
        #expect(screen.contains("⇉ 100 Car"))
        let owner = try #require(BrowserEndToEndTests.panelFigures(screen, after: "last: open"))
        #expect(owner.misses == 1)

        // Back along the path (Backspace, then h), and the list filtered with a predicate typed after `/`.
        try session.send(keys: "BSpace")
        try session.waitFor("─ Car p3 FIAT ")
        try session.send(keys: "h")
        try session.waitFor("─ Car · key ↑ ")
        try session.send(keys: "/")
        try session.type("maker == 'BMW'")
        try session.waitFor(" / maker == 'BMW'▏")
        try session.send(keys: "Enter")
        screen = try session.waitFor("2 objects match maker == 'BMW'")
        #expect(screen.contains("─ Car · key ↑ · where maker == 'BMW' "))
        // A predicate that does not parse: its error on the status line, the list as it was.
        try session.send(keys: "/")
        try session.type(" AND")
        try session.send(keys: "Enter")
        // (The status line is 120 columns: the position follows, cut.)
        screen = try session.waitFor("filter 'maker == 'BMW' AND': ")
        #expect(screen.contains("where maker == 'BMW' "))
        // Sorting by the next attribute, then reversed.
        try session.send(keys: "s")
        try session.waitFor("─ Car · maker ↑ ")
        try session.send(keys: "S")
        try session.waitFor("─ Car · maker ↓ ")

        try session.send(keys: "q")
        #expect(try session.waitForExit() == 0)
        #expect(try session.modes() == .restored)
        #expect(try CoreDataCorpus.snapshot(folder) == before)
    }
}
