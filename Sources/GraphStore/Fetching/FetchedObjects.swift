import Collections

/// The objects a fetch returned, as a random-access collection. A batched fetch (`fetchBatchSize` > 0) loads the
/// batch holding an index when that index is first read, keeps the most recently used batches, and drops older
/// ones (reloading them, one statement each, if they are read again), so scrolling a long result keeps memory flat.
///
/// The collection keeps its objects (and the objects its prefetch loaded) alive while it exists.
public struct FetchedObjects: RandomAccessCollection {
    // Plain stored properties rather than an enum of the three kinds of result: reading an element or the end index
    // then retains only the element, where switching over an enum's payloads retained and released the arrays on
    // every step of a loop over the result.
    /// The objects of a result loaded at once (empty for a batched one).
    private let objects: [ManagedObject]
    /// What a result loaded at once keeps alive beside its objects (what its prefetch loaded).
    private let retained: [ManagedObject]
    /// The loader of a batched result.
    private let batches: BatchedFetch?
    /// Unsaved objects at their places in a batched result (ascending), which the store's rows leave out.
    private let placed: [(index: Int, object: ManagedObject)]
    public let endIndex: Int

    init(_ objects: [ManagedObject], retaining retained: [ManagedObject]) {
        self.objects = objects
        self.retained = retained
        batches = nil
        placed = []
        endIndex = objects.count
    }

    /// The objects as one array: the very one held when the result was loaded at once, a copy otherwise.
    var array: [ManagedObject] {
        batches == nil ? objects : Array(self)
    }

    init(batches: BatchedFetch) {
        self.init(batches: batches, placing: [])
    }

    /// `batches` with `placed` objects at their indexes in the result (ascending, each within the final count).
    init(batches: BatchedFetch, placing placed: [(index: Int, object: ManagedObject)]) {
        objects = []
        retained = []
        self.batches = batches
        self.placed = placed
        endIndex = batches.count + placed.count
    }

    /// No objects: a result to start from before anything is fetched.
    public static var empty: FetchedObjects { FetchedObjects([], retaining: []) }

    public var startIndex: Int { 0 }

    public subscript(position: Int) -> ManagedObject {
        guard let batches else { return objects[position] }
        if placed.isEmpty { return batches.object(at: position) }
        var before = 0
        for entry in placed {
            if entry.index == position { return entry.object }
            if entry.index > position { break }
            before += 1
        }
        return batches.object(at: position - before)
    }

    /// The IDs of the leading objects whose IDs are known without reading anything: every one for a result loaded at
    /// once or batched with all IDs first. When windowed, the rows read so far, from the first, without gaps: the
    /// batches loaded, and the keys read ahead of them when the fetched entity has no subentities (an entity
    /// hierarchy's later keys are read without their `Z_ENT`, so their IDs are known once their batch is loaded).
    public var knownObjectIDs: [ObjectID] {
        guard let batches else { return objects.map(\.objectID) }
        if placed.isEmpty { return batches.knownPrefix }
        var known: [ObjectID] = []
        var stored = batches.knownPrefix[...]
        var pending = placed[...]
        while true {
            if let next = pending.first, next.index == known.count {
                known.append(next.object.objectID)
                pending = pending.dropFirst()
            } else if let id = stored.first {
                known.append(id)
                stored = stored.dropFirst()
            } else {
                return known
            }
        }
    }

    /// How a batched result stands; nil for a result loaded at once.
    public var batching: BatchingStatus? {
        batches?.status
    }
}

/// A batched result's state, for tests and the browser's panel.
public struct BatchingStatus: Equatable, Sendable {
    public var batchSize: Int
    /// Loaded batches, least recently used first.
    public var loadedBatches: [Int]
    /// Batches read from the store so far (a batch read again after being dropped counts again).
    public var batchLoads: Int
    /// Batches dropped to stay within `maximumLoadedBatches`.
    public var evictions: Int
    /// How many of the ordered IDs are known (all of them in faithful mode).
    public var knownIDs: Int

    public init(batchSize: Int, loadedBatches: [Int], batchLoads: Int, evictions: Int, knownIDs: Int) {
        self.batchSize = batchSize
        self.loadedBatches = loadedBatches
        self.batchLoads = batchLoads
        self.evictions = evictions
        self.knownIDs = knownIDs
    }
}

/// The loader behind a batched `FetchedObjects`.
final class BatchedFetch {
    private let context: ObjectContext
    private let plan: FetchPlan
    private let batchSize: Int
    private let joined: JoinedPrefetch
    let count: Int
    /// The ordered IDs, filled as they become known: as long as the last one known, not the whole result (a
    /// windowed fetch of a long list would otherwise make and clear an array of its every row for one screen).
    ///
    /// In windowed mode, the later IDs are read as keys alone: an index that serves the sort holds every key, but
    /// not the `Z_ENT` of an entity hierarchy's rows, which would cost a lookup in the table per row. Until its
    /// batch is loaded, such a row's entry holds its key with `unresolvedEntity`; the batch's statement, which
    /// selects by key, brings each row's entity.
    private var ids: [ObjectID?]
    /// The entity number of an entry whose key is known and whose entity is not yet (no entity has it).
    private static let unresolvedEntity = -1
    private var knownIDs = 0
    /// ID statements run so far (windowed mode).
    private var idReads = 0
    /// Loaded batches by number, least recently used first, with the objects each keeps alive.
    private var batches: OrderedDictionary<Int, FetchedObjects> = [:]
    /// The most recently used batch (the last of `batches`) and its number, kept beside them: a screen reads its rows
    /// one after another from it, and each read should not go through the ordered dictionary's views.
    private var recent: (number: Int, objects: [ManagedObject])?
    private var batchLoads = 0
    private var evictions = 0
    /// Where the batches are laid out from: batch 0 starts at `origin`, and the rows before it (if any) are batch
    /// -1. Zero unless the first statement read from a later row (`startIndex`).
    private var origin = 0

    /// - Parameter startIndex: in windowed mode, an index the caller reads first (a screen kept where it was): the
    ///   first statement reads the rows from it, so the batch at the top is not read for nothing.
    init(context: ObjectContext, plan: FetchPlan, startingAt startIndex: Int = 0) throws(ContextError) {
        let request = plan.request
        self.context = context
        self.plan = plan
        self.batchSize = request.fetchBatchSize
        self.joined = JoinedPrefetch.make(for: plan, coordinator: context.coordinator)
        let start = ContinuousClock.now
        switch request.batchingMode {
        case .faithful:
            // Every matching ID, in order, before any row.
            var all: [ObjectID?] = []
            try context.runQuery(plan.select(plan.idSelectList, limit: request.fetchLimit, offset: request.fetchOffset), plan.arguments,
                                 cause: .fetch(entity: plan.mapping.name)) { handle in
                all.append(plan.objectID(handle))
            }
            ids = all
            knownIDs = all.count
            count = all.count
        case .windowed:
            // The first batch's rows straight away; the total from a count only if the batch came back full (taken
            // by the same statement when the request asks). The first batch starts at `startIndex` (0 unless asked)
            // within the request's limit; the batches are laid out from there, the rows before it one shorter batch.
            let offset = request.fetchLimit > 0 && startIndex >= request.fetchLimit ? 0 : max(0, startIndex)
            origin = offset % batchSize
            let number = (offset - origin) / batchSize
            let first = request.fetchLimit > 0 ? min(batchSize, request.fetchLimit - offset) : batchSize
            let loaded = try context.loadObjects(plan, limit: first, offset: request.fetchOffset + offset, counting: request.countsWithFirstBatch)
            if loaded.objects.count < first, offset == 0 || !loaded.objects.isEmpty {
                count = offset + loaded.objects.count
            } else {
                var total = loaded.total ?? 0
                if loaded.total == nil {
                    try context.runQuery(plan.countSQL, plan.arguments, cause: .fetch(entity: plan.mapping.name)) { handle in
                        total = Int(handle.int64(0))
                    }
                }
                // A batch asked for past the end (the result shrank) leaves the count as the store gives it.
                count = loaded.objects.isEmpty ? total : max(total, offset + loaded.objects.count)
            }
            if loaded.objects.isEmpty { origin = 0 }
            ids = []
            for (position, object) in loaded.objects.enumerated() where offset + position < count { setID(object.objectID, at: offset + position) }
            knownIDs = min(loaded.objects.count, count - min(offset, count))
            if !loaded.objects.isEmpty {
                batches[number] = FetchedObjects(loaded.objects, retaining: loaded.retained)
                recent = (number, loaded.objects)
                batchLoads = 1
            }
        }
        context.coordinator.events.emit(.fetch(FetchEvent(entity: plan.mapping.name, rows: count, duration: ContinuousClock.now - start)), context: context.id)
    }

    /// The known IDs from the first up to the first unknown one.
    var knownPrefix: [ObjectID] {
        var prefix: [ObjectID] = []
        for id in ids {
            guard let id, id.entityNumber != Self.unresolvedEntity else { break }
            prefix.append(id)
        }
        return prefix
    }

    var status: BatchingStatus {
        BatchingStatus(batchSize: batchSize, loadedBatches: Array(batches.keys), batchLoads: batchLoads, evictions: evictions, knownIDs: knownIDs)
    }

    func object(at index: Int) -> ManagedObject {
        precondition(index >= 0 && index < count, "index \(index) out of range 0..<\(count)")
        let number = batchNumber(of: index)
        let position = index - range(ofBatch: number).lowerBound
        // Reading on in the batch read last (a screen's rows, one after another): nothing to reorder.
        if let recent, recent.number == number { return recent.objects[position] }
        if let batch = batches.removeValue(forKey: number) {
            // Most recently used goes last.
            batches[number] = batch
            recent = (number, batch.array)
            return batch[position]
        }
        let batch = load(number)
        batches[number] = batch
        recent = (number, batch.array)
        while batches.count > max(1, plan.request.maximumLoadedBatches) {
            batches.removeFirst()
            evictions += 1
        }
        return batch[position]
    }

    /// The batch holding row `index`: -1 for the rows before `origin`.
    private func batchNumber(of index: Int) -> Int {
        index < origin ? -1 : (index - origin) / batchSize
    }

    /// The rows of batch `number`, cut at the end of the result.
    private func range(ofBatch number: Int) -> Range<Int> {
        guard number >= 0 else { return 0..<min(origin, count) }
        // Cannot overflow: a batch is asked for only for an index below `count`, so its start is at most that index;
        // its end is compared without adding a batch size that may be as large as Int.max.
        let start = origin + number * batchSize
        return start..<(count - start <= batchSize ? count : start + batchSize)
    }

    /// Reads batch `number` with one statement (plus the IDs it needs first in windowed mode, plus prefetches).
    /// A store error leaves the batch as faults, which report the error when fired.
    private func load(_ number: Int) -> FetchedObjects {
        let range = range(ofBatch: number)
        batchLoads += 1
        do {
            try readIDs(covering: range)
            // Keys past the end of a result that shrank since it was counted (rows deleted before their keys were
            // read) are unknown: their places hold objects that report no row, so every index still gives an object.
            let batchIDs = range.compactMap { id(at: $0) }
            guard !batchIDs.isEmpty else { return FetchedObjects(range.map { missingRow(at: $0) }, retaining: []) }
            // Written once per number of keys (a full batch, a short last one) and kept with the plan's statements.
            let sql = plan.statements.sql(.init(limit: batchIDs.count, offset: 0, counting: false, byKeys: true)) {
                "SELECT \(plan.rowPlan.selectList)\(joined.selectList)\(plan.countsSelectList) FROM \(plan.mapping.table) t0"
                    + (joined.joins.isEmpty ? "" : " " + joined.joins.joined(separator: " "))
                    + " WHERE t0.Z_PK IN (\(FetchPlan.placeholders(batchIDs.count)))"
            }
            let loaded = try context.loadRows(sql: sql, arguments: batchIDs.map { .integer($0.primaryKey) }, rowPlan: plan.rowPlan, joined: joined,
                                              request: plan.request, selection: plan.selection,
                                              cause: .fetch(entity: plan.mapping.name), counted: plan.counted,
                                              expectedRows: batchIDs.count)
            // Rows come back in the table's order; put them in the result's, by key (a key is one row of the table,
            // whatever its entity), and resolve the entries read as keys alone.
            var byKey = ObjectIDTable<ManagedObject>(minimumCapacity: loaded.objects.count)
            for object in loaded.objects { byKey[keyID(object.objectID.primaryKey)] = object }
            let objects = range.map { position -> ManagedObject in
                guard let id = id(at: position) else { return missingRow(at: position) }
                if let object = byKey[keyID(id.primaryKey)] {
                    if id.entityNumber == Self.unresolvedEntity { ids[position] = object.objectID }
                    return object
                }
                // The row is gone since its key was read. Its object is the fault that finds no row, as it was when
                // the key came with its entity; with the entity unknown, one that already knows it has none.
                guard id.entityNumber == Self.unresolvedEntity else { return context.object(with: id) }
                return missingRow(at: position)
            }
            return FetchedObjects(objects, retaining: loaded.retained)
        } catch {
            // Objects that report the failure when read (a subscript cannot throw).
            return FetchedObjects(range.map { failedObject(at: $0, error) }, retaining: [])
        }
    }

    /// The object for `position` when its row cannot be had: of the fetched entity, not registered, reporting
    /// `error`, named by `placeID(at:)`.
    private func failedObject(at position: Int, _ error: ContextError) -> ManagedObject {
        let object = plan.mapping.objectClass.init(objectID: placeID(at: position), context: context, mapping: plan.mapping)
        object.state.fail(error)
        return object
    }

    /// `failedObject` for a row that does not exist.
    private func missingRow(at position: Int) -> ManagedObject {
        failedObject(at: position, .objectNotFound(uri: context.coordinator.uri(for: placeID(at: position))))
    }

    /// The ID an object made for `position` without its row carries: the ID known there; for a key read without its
    /// entity, the key with the fetched entity (no entity has `unresolvedEntity`); for an unknown key (past the end
    /// of a result that shrank), key 0, which no row has.
    private func placeID(at position: Int) -> ObjectID {
        guard let id = id(at: position) else { return keyID(0) }
        return id.entityNumber == Self.unresolvedEntity ? keyID(id.primaryKey) : id
    }

    /// Windowed mode: reads the ordered IDs of `range` (and a few batches beyond, for scrolling on) if unknown.
    private func readIDs(covering range: Range<Int>) throws(ContextError) {
        guard range.contains(where: { id(at: $0) == nil }) else { return }
        // Each read sorts the matching rows again to reach its offset, so reads grow geometrically: scrolling the
        // whole result costs a handful of them, not one per few batches.
        let start = range.lowerBound
        // Saturating: a batch size given on the command line may be as large as Int.max.
        let (ahead, overflow) = batchSize.multipliedReportingOverflow(by: Self.batchesPerIDRead << min(idReads, 20))
        let end = start + min(count - start, max(range.count, overflow ? Int.max : ahead))
        idReads += 1
        // Read into a local array first: the row closure then writes no property of this object (each such write
        // is a runtime exclusivity check), and the known stretch grows once.
        var read: [ObjectID] = []
        read.reserveCapacity(end - start)
        let limit = end - start
        // Keys alone (see `ids`): the entity is the fetched one's when it has no subentities, else unresolved.
        let entity = plan.soleEntityNumber ?? Self.unresolvedEntity
        try context.runQuery(plan.select("t0.Z_PK", limit: limit, offset: plan.request.fetchOffset + start), plan.arguments,
                             cause: .fetch(entity: plan.mapping.name)) { handle in
            // A negative key would pass for a temporary ID: read as 0, a key no row has (as `ObjectID.stored` does).
            if read.count < limit { read.append(ObjectID(entityNumber: entity, primaryKey: max(0, handle.int64(0)))) }
        }
        if start == ids.count {
            // The usual case: the rows just past the known stretch.
            ids.append(contentsOf: read.lazy.map(Optional.some))
            knownIDs += read.count
            return
        }
        for (offset, id) in read.enumerated() {
            let position = start + offset
            guard let known = self.id(at: position) else {
                knownIDs += 1
                setID(id, at: position)
                continue
            }
            // A key read again keeps the entity its loaded batch gave it; a different key (the rows moved) replaces it.
            if known.primaryKey != id.primaryKey || known.entityNumber == Self.unresolvedEntity { setID(id, at: position) }
        }
    }

    /// The key in the form the loaded batch's table is searched by: one entity number for every key.
    private func keyID(_ key: Int64) -> ObjectID {
        ObjectID(entityNumber: plan.mapping.number, primaryKey: key)
    }

    /// The ID at `position` of the result, if known (its entity may be `unresolvedEntity`).
    private func id(at position: Int) -> ObjectID? {
        position < ids.count ? ids[position] : nil
    }

    /// Records the ID at `position` (below `count`), growing the known stretch to reach it.
    private func setID(_ id: ObjectID, at position: Int) {
        if position >= ids.count {
            ids.append(contentsOf: repeatElement(nil, count: position + 1 - ids.count))
        }
        ids[position] = id
    }

    /// How many batches' IDs the first later ID statement reads in windowed mode; each one after reads twice as many.
    static let batchesPerIDRead = 8
}
