import Foundation
import Testing

/// `faultline model STORE.sqlite`: the model a Core Data store keeps inside itself, printed as for its model file.
@Suite(.enabled(if: CoreDataCorpus.isPresent, CoreDataCorpus.absentReason))
struct StoreModelCommandTests {
    @Test(arguments: CoreDataCorpus.withModelFiles)
    func jsonEqualsTheModelFiles(name: String) throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy(name, into: folder)
        let before = try CoreDataCorpus.snapshot(folder)
        let fromStore = try FaultlineBinary.run(["model", store, "--json"])
        let fromFile = try FaultlineBinary.run(["model", try CoreDataCorpus.modelFile(name), "--json"])
        #expect(fromStore.status == 0 && fromFile.status == 0)
        #expect(fromStore.stderr == "")
        #expect(fromStore.stdout.contains("\"entities\""))
        #expect(fromStore.stdout == fromFile.stdout)
        // The DDL too: the same store would be made from either.
        #expect(try FaultlineBinary.run(["model", store, "--ddl"]).stdout == FaultlineBinary.run(["model", try CoreDataCorpus.modelFile(name), "--ddl"]).stdout)
        #expect(try CoreDataCorpus.snapshot(folder) == before)
    }

    @Test func summarySaysWhereTheModelCameFromAndWhatWasLeftOut() throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("books-pages", into: folder)
        let result = try FaultlineBinary.run(["model", store])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "\(store) (read from the store's model cache, written by Core Data): 6 entities, 0 warnings")
        #expect(lines.contains("  Author.feedbacks: a fetched property (it has no column; its fetch request is not read)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["books-pages.sqlite"])
    }

    /// A cache cut short, one whose compressed stream is broken, and a store without one: one `error:` line each,
    /// naming the file and the problem and pointing at the model file; nothing on standard output; the file as it was.
    @Test(arguments: [
        ("UPDATE Z_MODELCACHE SET Z_CONTENT = substr(Z_CONTENT, 1, length(Z_CONTENT) / 2)", "is damaged: its compressed model is cut short"),
        ("UPDATE Z_MODELCACHE SET Z_CONTENT = X'00000000' || substr(Z_CONTENT, 5)", "is damaged: its compressed model cannot be inflated (invalid stored block lengths)"),
        ("UPDATE Z_MODELCACHE SET Z_CONTENT = X''", "is empty"),
        ("DROP TABLE Z_MODELCACHE", "has no model inside it (no Z_MODELCACHE table, as in stores made by older Core Data versions)"),
    ])
    func badCacheIsOneErrorLine(damage: String, problem: String) throws {
        let folder = TemporaryFolder()
        let store = try CoreDataCorpus.copy("cars-people", into: folder)
        _ = try FaultlineBinary.sqliteRows(store, damage)
        let before = try CoreDataCorpus.snapshot(folder)
        let result = try FaultlineBinary.run(["model", store, "--json"])
        #expect(result.status != 0)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(result.stderr)")
        let cache = problem.hasPrefix("has no") ? "" : "its model cache (Z_MODELCACHE) "
        #expect(lines.first == "error: \(store): \(cache)\(problem); read its model file instead: faultline model MODEL.xcdatamodeld")
        #expect(try CoreDataCorpus.snapshot(folder) == before)
    }
}
