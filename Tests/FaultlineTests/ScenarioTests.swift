import Foundation
import GraphStore
import Scenarios
import Testing

/// `faultline scenario`: the statement counts of the published experiments, measured by running them, and the command.
@Suite struct ScenarioTests {
    // MARK: associates (the Person/AssociateInfo experiment)

    @Test func associatesFaithfulCountsAreThePublishedOnes() throws {
        let folder = TemporaryFolder()
        let report = try AssociatesScenario(path: folder.path("associates.sqlite"), strategy: .faithful).run()
        #expect(report.scenario == "associates")
        #expect(report.strategy == "faithful")
        #expect(report.methods.map(\.name) == AssociatesScenario.methodNames)
        #expect(report.methods.map(\.queries) == [41, 11, 2, 1])

        let expected = AssociatesScenario.expectedFoeNames
        #expect(expected.count == 10)
        #expect(Set(expected).count == 10)
        for method in report.methods.prefix(3) {
            #expect(method.result == expected, "\(method.name)")
        }

        let navigation = report.methods[0]
        // One relationship fault, then a miss per AssociateInfo (30) and per foe (10).
        #expect(navigation.cacheMisses == 40)
        #expect(navigation.rows == 1 * 30 + 40)
        let fetchByType = report.methods[1]
        #expect(fetchByType.rows == 10 + 10)
        #expect(fetchByType.cacheMisses == 10)
        let prefetched = report.methods[2]
        #expect(prefetched.rows == 10 + 10)
        #expect(prefetched.cacheMisses == 0)

        // Every associate, whatever the type, in one statement; the names come from the row cache.
        let everyone = report.methods[3]
        #expect(everyone.result.count == 30)
        #expect(Set(everyone.result).count == 30)
        #expect(Set(expected).isSubset(of: Set(everyone.result)))
        #expect(everyone.rows == 30)
        #expect(everyone.cacheMisses == 0)
        #expect(everyone.cacheHits == 30)
    }

    @Test func associatesBatchedNavigationTakesAtMostThreeStatements() throws {
        let folder = TemporaryFolder()
        let scenario = try AssociatesScenario(path: folder.path("associates.sqlite"), strategy: .batched)
        let report = try scenario.run()
        #expect(report.strategy == "batched")
        let navigation = report.methods[0]
        #expect(navigation.queries <= 3, "\(navigation)")
        #expect(navigation.result == AssociatesScenario.expectedFoeNames)
        // The fetches do not fault their way to the names, so batching leaves them as they were.
        #expect(report.methods[1].result == AssociatesScenario.expectedFoeNames)
        #expect(report.methods[2].queries == 2)
        #expect(report.methods[3].queries == 1)
    }

    /// A method's figures do not depend on what ran before it: each starts on an empty row cache.
    @Test func associatesMethodsRepeatTheirCounts() throws {
        let folder = TemporaryFolder()
        let scenario = try AssociatesScenario(path: folder.path("associates.sqlite"), strategy: .faithful)
        let first = try scenario.navigation()
        _ = try scenario.fetchByType(prefetchingAssociate: true)
        let again = try scenario.navigation()
        #expect(first.queries == 41)
        #expect(again.queries == 41)
        #expect(again.result == first.result)
    }

    // MARK: students (LINE's engineering blog on Core Data relationships)

    @Test func studentsCountsAreThePublishedOnes() throws {
        let folder = TemporaryFolder()
        let report = try StudentsScenario(path: folder.path("students.sqlite"), strategy: .faithful).run()
        #expect(report.scenario == "students")
        #expect(report.methods.map(\.name) == StudentsScenario.methodNames)
        let size = StudentsScenario.classSize
        #expect(size == 10)
        #expect(Array(report.methods.prefix(4).map(\.queries)) == [2, 3, 1 + size, 1])

        #expect(report.methods[0].result == ["Aiko: 1 Birch Lane, Lyon"])
        #expect(report.methods[1].result.count == 1)
        #expect(report.methods[2].result == [StudentsScenario.searchedStudent])
        #expect(report.methods[2].cacheMisses == size)
        #expect(report.methods[3].result == [StudentsScenario.searchedStudent])
        #expect(report.methods[3].rows == 1)

        let manyToNil = report.methods[4]
        #expect(manyToNil.result == ["Student1: Subject1", "Student2: Subject1, Subject2"])
        #expect(manyToNil.note?.contains("Core Data") == true)
    }

    /// Student1 keeps Subject1 after Student2 takes it too, as read by a coordinator opened afresh on the file.
    @Test func manyToNilLinkSurvivesReopeningTheStore() throws {
        let folder = TemporaryFolder()
        let path = folder.path("students.sqlite")
        let scenario = try StudentsScenario(path: path, strategy: .faithful)
        _ = try scenario.manyToNil()

        let coordinator = try PersistentStoreCoordinator(path: path, model: try ScenarioModels.students())
        let context = ObjectContext(coordinator: coordinator)
        func favorites(of name: String) throws -> [String] {
            let student = try #require(try context.fetch("Student", where: [("name", .string(name))]).first)
            return student.objects(forKey: "favoriteSubjects").compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(try favorites(of: "Student1") == ["Subject1"])
        #expect(try favorites(of: "Student2") == ["Subject1", "Subject2"])
        withExtendedLifetime(context) {}
    }

    @Test func aStoreIsNeverReused() throws {
        let folder = TemporaryFolder()
        let path = folder.path("students.sqlite")
        _ = try StudentsScenario(path: path, strategy: .faithful)
        #expect(throws: ScenarioError.self) { try StudentsScenario(path: path, strategy: .faithful) }
    }

    // MARK: the command

    @Test func jsonThroughTheBinary() throws {
        for (arguments, scenario, strategy, methodCount) in [
            (["scenario", "associates", "--json"], "associates", "faithful", 4),
            (["scenario", "associates", "--strategy", "batched", "--json"], "associates", "batched", 4),
            (["scenario", "students", "--json"], "students", "faithful", 5),
        ] {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["scenario", "strategy", "methods"])
            #expect(object["scenario"] as? String == scenario)
            #expect(object["strategy"] as? String == strategy)
            let methods = try #require(object["methods"] as? [[String: Any]])
            #expect(methods.count == methodCount)
            for method in methods {
                #expect(Set(method.keys).isSuperset(of: ["name", "queries", "rows", "cacheHits", "cacheMisses", "ms", "result"]))
                #expect(Set(method.keys).subtracting(["name", "queries", "rows", "cacheHits", "cacheMisses", "ms", "result", "note"]).isEmpty)
                #expect(method["name"] is String)
                #expect(method["queries"] is Int)
                #expect(method["rows"] is Int)
                #expect(method["cacheHits"] is Int)
                #expect(method["cacheMisses"] is Int)
                #expect((method["ms"] as? Double).map { $0 >= 0 } == true)
                #expect(method["result"] is [String])
            }
            let queries = methods.compactMap { $0["queries"] as? Int }
            switch (scenario, strategy) {
            case ("associates", "faithful"): #expect(queries == [41, 11, 2, 1])
            case ("associates", _): #expect(queries[0] <= 3)
            default: #expect(queries.prefix(4) == [2, 3, 11, 1])
            }
        }
    }

    @Test func textTableThroughTheBinary() throws {
        let result = try FaultlineBinary.run(["scenario", "associates"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("associates (the Person/AssociateInfo experiment)") == true)
        #expect(lines.contains { $0.contains("object-graph navigation") && $0.contains(" 41 ") })
        #expect(lines.contains("1. object-graph navigation: \(AssociatesScenario.expectedFoeNames.joined(separator: ", "))"))
    }

    @Test func badNamesGetOneErrorLine() throws {
        let cases: [([String], String)] = [
            (["scenario", "teachers"], "error: unknown scenario 'teachers'"),
            (["scenario", "associates", "--strategy", "lazy"], "error: unknown strategy 'lazy'"),
            (["scenario"], "error: "),
        ]
        for (arguments, prefix) in cases {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stdout == "", "\(arguments)")
            #expect(result.stderr.hasPrefix(prefix), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }
}
