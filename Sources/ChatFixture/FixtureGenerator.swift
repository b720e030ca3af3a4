import Foundation
import GraphStore

/// The size and seed of a fixture.
public struct FixtureOptions: Sendable, Equatable {
    public var seed: UInt64
    public var users: Int
    public var chats: Int
    public var messages: Int

    /// The default fixture: about a thousand users, 300 chats, 60,000 messages.
    public static let defaults = FixtureOptions(seed: 1, users: 1_000, chats: 300, messages: 60_000)

    public init(seed: UInt64, users: Int, chats: Int, messages: Int) {
        self.seed = seed
        self.users = users
        self.chats = chats
        self.messages = messages
    }

    /// Checks the sizes make a fixture: "me" and at least one other user, at least one chat.
    public func validate() throws(FixtureError) {
        if users < 2 { throw .options("--users must be at least 2 (\"me\" and someone to talk to), not \(users)") }
        if users > 10_000_000 { throw .options("--users must be at most 10,000,000, not \(users)") }
        if chats < 1 { throw .options("--chats must be at least 1, not \(chats)") }
        if chats > 1_000_000 { throw .options("--chats must be at most 1,000,000, not \(chats)") }
        if messages < 0 { throw .options("--messages must not be negative, not \(messages)") }
        if messages > 100_000_000 { throw .options("--messages must be at most 100,000,000, not \(messages)") }
    }
}

/// How far generation has got, for a progress bar.
public struct FixtureProgress: Sendable {
    public let phase: String
    public let done: Int
    public let total: Int
}

/// What was written.
public struct FixtureSummary: Sendable, Equatable, Codable {
    public var users = 0
    public var profiles = 0
    public var friendships = 0
    public var chats = 0
    public var groups = 0
    public var members = 0
    public var messages = 0
    public var attachments = 0
    public var reactions = 0
    public var receipts = 0
    public var folders = 0
    /// Saves the generator made (one per batch) and the SQL statements they ran.
    public var saves = 0
    public var statements = 0
}

/// Makes a chat store with a messenger's shape, the same for the same seed and sizes.
///
/// Everything is written through the graph store's own insert-and-save path, in batches: each batch is one save,
/// after which the context is reset, so memory stays bounded whatever the size. Only IDs and small per-chat tallies
/// are kept between batches. The store is built in a temporary file beside the target and renamed into place when
/// complete, so a failed or interrupted run never leaves a half-written store at the target path.
public final class FixtureGenerator {
    public let options: FixtureOptions
    private let corpus: ChatCorpus
    /// Objects per save.
    public var batchSize = 5_000

    public init(options: FixtureOptions, corpus: ChatCorpus) {
        self.options = options
        self.corpus = corpus
    }

    /// The store's UUID: derived from the seed, so two runs with one seed give identical files.
    public var storeUUID: UUID {
        var random = SeededRandom(seed: options.seed ^ 0x5EED_0000_0000_0000)
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The fixture's "now": every timestamp lies before it. Fixed per seed, never the clock.
    public var now: Date {
        // 2026-06-01 00:00 UTC, minus up to 90 days depending on the seed.
        Date(timeIntervalSinceReferenceDate: 801_964_800 - Double(options.seed % 91) * 86_400)
    }

    /// Writes the fixture to `path`, built in a temporary file beside it and put in place only when complete.
    ///
    /// Without `replacing`, nothing at `path` is ever replaced: the finished file is linked into place, which fails
    /// if `path` appeared meanwhile (`FixtureError.alreadyExists`; another process made it first). With `replacing`,
    /// only a regular file that is empty or an SQLite database is replaced, and only while no other process has it
    /// open; its old `-wal`, `-shm` and `-journal` go first, so nothing of the old store is replayed into the new
    /// one. See `FixturePlacement`.
    @discardableResult
    public func generate(to path: String, replacing: Bool = false,
                         progress: (FixtureProgress) -> Void = { _ in }) throws(FixtureError) -> FixtureSummary {
        try options.validate()
        try FixturePlacement.checkTarget(path, replacing: replacing)
        let target = URL(fileURLWithPath: path)
        let folder = target.deletingLastPathComponent()
        FixturePlacement.removeAbandonedTemporaries(of: path)
        let temporary = folder.appendingPathComponent(FixturePlacement.temporaryName(of: target.lastPathComponent,
                                                                                    process: getpid()))
        Self.removeStoreFiles(at: temporary.path)
        defer { Self.removeStoreFiles(at: temporary.path) }
        let summary: FixtureSummary
        do {
            summary = try write(to: temporary.path, progress: progress)
        } catch let error as FixtureError {
            throw error.naming(path, for: temporary.path)
        } catch let error as StoreError {
            throw FixtureError.store(error.description).naming(path, for: temporary.path)
        } catch {
            throw FixtureError.store("\(path): \(error)").naming(path, for: temporary.path)
        }
        try FixturePlacement.place(temporary.path, at: path, replacing: replacing)
        return summary
    }

    /// Removes `-wal`, `-shm` and `-journal` files left at `path` by a store that is no longer there, unless another
    /// process has them open (then `FixtureError.output` says which). Nothing happens when a file is at `path`.
    public static func removeLeftovers(of path: String) throws(FixtureError) {
        try FixturePlacement.removeLeftovers(of: path)
    }

    /// Refuses a path that is the name of a side file (`-wal`, `-shm`, `-journal`) of a file that exists; the
    /// generator checks this itself, and a command may check it before its other checks of the path.
    public static func checkNotSideFileName(_ path: String) throws(FixtureError) {
        try FixturePlacement.checkNotSideFileName(path)
    }

    static func removeStoreFiles(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    // MARK: writing

    private func write(to path: String, progress: (FixtureProgress) -> Void) throws -> FixtureSummary {
        let model = try ChatModel.make()
        let store = try PersistentStore.open(path: path, model: model, options: .init(storeUUID: storeUUID))
        let coordinator = try PersistentStoreCoordinator(store: store, classes: ChatModel.classes, rowCacheCapacity: 20_000)
        var writer = BatchWriter(context: ObjectContext(coordinator: coordinator, name: "fixture"), batchSize: batchSize)
        var plan = try FixturePlan(options: options, corpus: corpus, now: now, model: model)
        let before = coordinator.events.counters.total
        try plan.writeUsers(&writer, progress: progress)
        try plan.writeChats(&writer, progress: progress)
        try plan.writeMessages(&writer, progress: progress)
        try plan.writeFolders(&writer)
        try writer.flush()
        let cost = coordinator.events.counters.total.difference(since: before)
        var summary = plan.summary
        summary.saves = cost.saves
        summary.statements = cost.statements
        return summary
    }
}

/// Inserts through one context and saves every `batchSize` objects, then resets the context so finished objects can
/// go. Objects are named by the permanent IDs they will get (keys are handed out in insertion order in a new store,
/// so they are known in advance): until their batch is saved the writer hands back the new object itself, after
/// that a fault for its ID. A flush only happens at `checkpoint()`, so no object is held across one.
struct BatchWriter {
    let context: ObjectContext
    let batchSize: Int
    private var pending: [ObjectID: ManagedObject] = [:]
    private var untracked = 0

    init(context: ObjectContext, batchSize: Int) {
        self.context = context
        self.batchSize = batchSize
    }

    mutating func insert<Object: ManagedObject>(_ type: Object.Type, as id: ObjectID) -> Object {
        let object = context.insert(type)
        pending[id] = object
        return object
    }

    /// A new object nothing will look up by ID (a member, an attachment, a reaction): counted toward the batch.
    mutating func insert<Object: ManagedObject>(_ type: Object.Type) -> Object {
        untracked += 1
        return context.insert(type)
    }

    func object<Object: ManagedObject>(_ id: ObjectID, as type: Object.Type) -> Object {
        // The coordinator maps each entity to its class, so the object is always of the right type (the cast cannot
        // fail for the fixture's own IDs, the only ones passed here).
        (pending[id] ?? context.object(with: id)) as! Object
    }

    mutating func checkpoint() throws {
        if pending.count + untracked >= batchSize { try flush() }
    }

    mutating func flush() throws {
        try context.save()
        for (expected, object) in pending where object.objectID != expected {
            throw FixtureError.store("internal error: \(object.entityName) saved as \(object.objectID), expected \(expected)")
        }
        pending.removeAll(keepingCapacity: true)
        untracked = 0
        context.reset()
    }
}
