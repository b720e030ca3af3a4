import ChatFixture
import Foundation
import GraphStore
import Testing

/// Seeded random reads of windowed results over an entity hierarchy (a chat is a `DirectChat` or a `GroupChat`),
/// whose later keys are read without their entities: random batch sizes, few loaded batches (so batches are dropped
/// and read again), a random first index, reads in any order, and chats deleted or inserted elsewhere between reads
/// (from the first read on for odd seeds, after sixty reads for even ones).
///
/// Until the store first changes, every index gives the row the plain fetch gave there, and the known IDs are a
/// prefix of the plain fetch's IDs. After that, keys read later come from the store as it is then (a windowed result
/// reads its later keys when it needs them, so rows may shift), but every object is still a row the store had, with
/// its own entity, or one that reports its row gone (as does a place past the end of a result that shrank before its
/// key was read, which trapped before); and every known ID is a row's real ID, never a key without its entity.
///
/// `WINDOWED_BATCH_SEEDS` (default 6) and `WINDOWED_BATCH_FIRST_SEED` (default 0) set which seeds run.
@Suite struct WindowedBatchPropertyTests {
    static let seeds: [UInt64] = {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["WINDOWED_BATCH_SEEDS"].flatMap(Int.init).map { max(0, $0) } ?? 6
        let first = environment["WINDOWED_BATCH_FIRST_SEED"].flatMap(UInt64.init) ?? 0
        return (0..<count).map { first &+ UInt64($0) }
    }()

    private static let order: [FetchRequest.SortDescriptor] = [.init("title"), .init("SELF")]

    @Test(arguments: seeds)
    func everyIndexIsThePlainFetchsRow(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let store = try ChatStore()
        let setup = store.fixture.context("more chats")
        for index in 0..<(20 + random.below(40)) {
            let chat = setup.insert(random.below(2) == 0 ? "DirectChat" : "GroupChat")
            // Few titles, so that many rows tie and the key decides.
            chat.setValue(["a", "b", "c", "d"][random.below(4)] + "\(index % 3)", forKey: "title")
            chat.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "createdAt")
        }
        try setup.save()

        let reference = try store.fixture.context("reference").fetch(FetchRequest(entityName: "Chat", sortDescriptors: Self.order)).map(\.objectID)
        var request = FetchRequest(entityName: "Chat", sortDescriptors: Self.order)
        request.fetchBatchSize = 1 + random.below(7)
        request.maximumLoadedBatches = 1 + random.below(3)
        request.batchingMode = .windowed
        let context = store.fixture.context("reader")
        let result = try context.fetch(request, firstReading: random.below(reference.count + 3))
        #expect(result.count == reference.count)
        // Every row's ID by key: the plain fetch's, then the chats inserted elsewhere.
        var idByKey = Dictionary(uniqueKeysWithValues: reference.map { ($0.primaryKey, $0) })
        var deleted = Set<ObjectID>()
        var changed = false
        for step in 0..<160 {
            if step >= (seed % 2 == 0 ? 60 : 0), random.below(10) == 0 {
                // A chat deleted elsewhere, or one inserted.
                let writer = store.fixture.context("writer")
                if random.below(3) == 0 {
                    let chat = writer.insert(random.below(2) == 0 ? "DirectChat" : "GroupChat")
                    chat.setValue(["a", "b", "c", "d"][random.below(4)] + "\(step % 3)", forKey: "title")
                    chat.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "createdAt")
                    try writer.save()
                    idByKey[chat.objectID.primaryKey] = chat.objectID
                    changed = true
                } else {
                    let doomed = reference[random.below(reference.count)]
                    if deleted.insert(doomed).inserted {
                        writer.delete(try writer.existingObject(with: doomed))
                        try writer.save()
                        changed = true
                    }
                }
            }
            let index = random.below(result.count)
            let object = result[index]
            let known = result.knownObjectIDs
            guard !changed else {
                #expect(known.allSatisfy { idByKey[$0.primaryKey] == $0 }, "seed \(seed): \(known)")
                // A place past the end of a result that shrank before its key was read: no row, and it says so.
                guard object.objectID.primaryKey != 0 else {
                    #expect(object.entityName == "Chat" && object.faultError != nil, "seed \(seed), index \(index): \(object)")
                    continue
                }
                let id = try #require(idByKey[object.objectID.primaryKey], "seed \(seed), index \(index): \(object)")
                if deleted.contains(id) {
                    #expect(object.objectID == id || (object.entityName == "Chat" && object.faultError != nil),
                            "seed \(seed), index \(index): \(object)")
                } else {
                    #expect(object.objectID == id, "seed \(seed), index \(index)")
                }
                continue
            }
            #expect(object.objectID == reference[index], "seed \(seed), index \(index)")
            #expect(["DirectChat", "GroupChat"].contains(object.entityName))
            #expect(known == Array(reference.prefix(known.count)), "seed \(seed): \(known)")
        }
    }
}
