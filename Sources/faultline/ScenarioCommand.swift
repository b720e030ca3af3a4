import ArgumentParser
import Foundation
import GraphStore
import Scenarios

/// `faultline scenario NAME`: rebuilds one of the published experiments in a temporary store and measures each method.
struct ScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Rebuild a published Core Data experiment in a temporary store and count the SQL each method runs.",
        discussion: """
            associates: 100 persons linked through the join entity AssociateInfo (10 friends, 10 foes and 10 \
            partners in crime each); the ordered names of one person's foes, found four ways. students: to-one and \
            to-many faults, finding a student through a relationship or with a fetch request, and what a many-to-nil \
            relationship keeps after a save. Each method starts from a new context on an empty row cache; what it \
            needs to start from is fetched before counting. --strategy batched lets a fault that misses the row \
            cache load its siblings with it. The store is removed afterwards.

            Scenarios: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", ")).
            """
    )

    @Argument(help: ArgumentHelp("The scenario to run.", valueName: "name"))
    var name: String

    @Option(help: ArgumentHelp(
        "How faults load rows: \(FaultStrategy.allCases.map(\.rawValue).joined(separator: " or ")).",
        valueName: "strategy"))
    var strategy: String = FaultStrategy.faithful.rawValue

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @OptionGroup var sqlDebug: SQLDebugOptions

    func run() throws {
        guard let scenario = ScenarioName(rawValue: name) else {
            throw CommandFailure("unknown scenario '\(name)' (known scenarios: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let faults = FaultStrategy(rawValue: strategy) else {
            throw CommandFailure("unknown strategy '\(strategy)' (use \(FaultStrategy.allCases.map(\.rawValue).joined(separator: " or ")))")
        }
        // Checked before any work, so a bad level or log file fails at once.
        let level = try sqlDebug.effectiveLevel()
        let sink = level == nil ? nil : try sqlDebug.openSink()

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-scenario-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure("\(folder.path): cannot create a temporary folder: \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }

        let report: ScenarioReport
        do {
            report = try Self.run(scenario, strategy: faults, storePath: folder.appendingPathComponent("\(scenario.rawValue).sqlite").path,
                                  sqlDebug: sqlDebug, sink: sink)
        } catch {
            throw CommandFailure("scenario \(scenario.rawValue): \(error.description)")
        }
        if json {
            try Output.write(report.json() + "\n")
        } else {
            try Output.write(report.table(title: scenario.title))
        }
    }

    /// Runs the scenario; with a SQL debug level, logs the statements of the methods (building the data is not
    /// logged: it is thousands of inserts).
    private static func run(_ scenario: ScenarioName, strategy: FaultStrategy, storePath: String, sqlDebug: SQLDebugOptions,
                            sink: FileHandle?) throws(ScenarioError) -> ScenarioReport {
        switch scenario {
        case .associates:
            let built = try AssociatesScenario(path: storePath, strategy: strategy)
            let log = try attachLog(sqlDebug, to: built.store.coordinator, sink: sink)
            defer { withExtendedLifetime(log) {} }
            return try built.run()
        case .students:
            let built = try StudentsScenario(path: storePath, strategy: strategy)
            let log = try attachLog(sqlDebug, to: built.store.coordinator, sink: sink)
            defer { withExtendedLifetime(log) {} }
            return try built.run()
        }
    }

    private static func attachLog(_ options: SQLDebugOptions, to coordinator: PersistentStoreCoordinator,
                                  sink: FileHandle?) throws(ScenarioError) -> SQLDebugLog? {
        guard let sink else { return nil }
        do {
            return try options.attach(to: coordinator, sink: sink)
        } catch {
            throw ScenarioError(error.message)
        }
    }
}
