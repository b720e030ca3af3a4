import Foundation
import GraphStore
import Testing

/// Contexts on other threads: an actor-confined context and `performBackgroundTask`, sharing one coordinator with
/// a context on the test's own task, each event tagged with the context that caused it.
@Suite struct BackgroundContextTests {
    /// Inserts subjects with these names and saves; their (permanent) IDs.
    private static func saveSubjects(_ names: [String], in context: ObjectContext) throws -> [ObjectID] {
        let subjects = names.map { name -> ManagedObject in
            let subject = context.insert("Subject")
            subject.setValue(name, forKey: "name")
            return subject
        }
        try context.save()
        return subjects.map(\.objectID)
    }

    @Test func anActorContextSavesWhileAnotherContextReads() async throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let recorder = SQLRecorder(fixture.coordinator)
        let writer = ContextActor(coordinator: fixture.coordinator, name: "writer")
        let reader = fixture.context("reader")

        // The writer saves ten batches of twenty subjects on its actor while the reader fetches and reads names.
        async let written: [ObjectID] = {
            var ids: [ObjectID] = []
            for batch in 0..<10 {
                ids += try await writer.perform { context in
                    try Self.saveSubjects((0..<20).map { "S\(batch)-\($0)" }, in: context)
                }
            }
            return ids
        }()
        var seen = 0
        for _ in 0..<20 {
            let subjects = try reader.fetch("Subject")
            #expect(subjects.allSatisfy { ($0.value(forKey: "name") as? String)?.hasPrefix("S") == true })
            seen = max(seen, subjects.count)
            await Task.yield()
        }
        let ids = try await written
        #expect(ids.count == 200)
        #expect(Set(ids).count == 200)
        #expect(ids.allSatisfy { !$0.isTemporary })
        #expect(try reader.fetch("Subject").count == 200)
        #expect(seen <= 200)

        // Saves came from the writer's context, fetches and faults from the reader's.
        let records = recorder.records
        let saves = records.filter { if case .save = $0.event { true } else { false } }
        #expect(saves.count == 10)
        #expect(saves.allSatisfy { $0.context == writer.contextID })
        let fetches = records.filter { if case .fetch = $0.event { true } else { false } }
        #expect(fetches.count == 21)
        #expect(fetches.allSatisfy { $0.context == reader.id })
    }

    @Test func twoActorContextsSavingAtOnceGetDistinctKeys() async throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let writers = [ContextActor(coordinator: fixture.coordinator, name: "a"), ContextActor(coordinator: fixture.coordinator, name: "b")]
        let ids = try await withThrowingTaskGroup(of: [ObjectID].self) { group in
            for (index, writer) in writers.enumerated() {
                group.addTask {
                    var ids: [ObjectID] = []
                    for batch in 0..<5 {
                        ids += try await writer.perform { context in
                            try Self.saveSubjects((0..<50).map { "W\(index)-\(batch)-\($0)" }, in: context)
                        }
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 500)
        #expect(Set(ids.map(\.primaryKey)) == Set(1...500))
        let rows = try fixture.sqlRows("SELECT COUNT(*), MAX(Z_PK) FROM ZSUBJECT")
        #expect(rows.first?[0] as Int64? == 500)
        let maximum = try fixture.sqlRows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Subject'")
        #expect(maximum.first?[0] as Int64? == 500)
    }

    @Test func aBackgroundTaskSavesAndTheMainContextReadsFromTheRowCache() async throws {
        let fixture = try GraphFixture(try ExperimentModels.students())
        let ids = try await fixture.coordinator.performBackgroundTask(name: "import") { context in
            try Self.saveSubjects(["Art", "Biology", "Chemistry"], in: context)
        }
        let main = fixture.context("main")
        let cost = try fixture.measure {
            let names = try ids.map { try main.existingObject(with: $0).value(forKey: "name") as? String }
            #expect(names == ["Art", "Biology", "Chemistry"])
        }
        // The save put the rows in the shared row cache: three hits, no SQL.
        #expect(cost.statements == 0)
        #expect(cost.cacheHits == 3)
    }
}
