/// A fetch kept up to date across merges, reporting which rows were inserted, deleted, moved and updated, so that
/// a list redraws only what changed (Core Data's `NSFetchedResultsController`, driven by merge notifications).
///
/// ```swift
/// let chats = FetchedResultsController(context: main, request: request)
/// try chats.performFetch()
/// // … after merging other contexts' saves:
/// if let changes = try chats.update(after: notes) {
///     for index in changes.updated { redrawRow(index) }
/// }
/// ```
/// After a relevant change the controller fetches again (the request's own statements: one for the first batch
/// and one count, when windowed) and compares the new order with the old by object ID. The comparison covers the
/// IDs both results know: all of them for a result loaded at once or batched with all IDs first; the leading
/// batches read so far for a windowed one (`ResultsChanges.isComplete` says which), where a row moving in from
/// beyond them counts as inserted.
public final class FetchedResultsController {
    public let context: ObjectContext
    public private(set) var request: FetchRequest
    /// The key path whose value groups consecutive rows into sections (nil: one section). The request's first sort
    /// descriptor should order by it.
    public let sectionKeyPath: String?
    public private(set) var objects: FetchedObjects = .empty
    public private(set) var sections: [Section] = []
    /// The entities (by number) whose changes can move the results: the fetched entity and its family, and those
    /// the sort descriptors reach through to-ones. Nil when anything can (a predicate is set).
    private var relevantEntities: Set<Int>?

    /// Consecutive rows sharing the section key path's value.
    public struct Section: Equatable, Sendable {
        /// The value, as text ("" for nil).
        public let name: String
        public let range: Range<Int>

        public init(name: String, range: Range<Int>) {
            self.name = name
            self.range = range
        }
    }

    public init(context: ObjectContext, request: FetchRequest, sectionKeyPath: String? = nil) {
        self.context = context
        self.request = request
        self.sectionKeyPath = sectionKeyPath
        relevantEntities = Self.relevantEntities(of: request, coordinator: context.coordinator)
    }

    /// Fetches (again), reporting nothing: for a first fetch or after the request changed. A screen that stays
    /// where it was passes the first index it shows: a windowed batched result reads from there first (see
    /// `ObjectContext.fetch(_:firstReading:)`).
    public func performFetch(firstReading firstIndex: Int = 0) throws(ContextError) {
        objects = try context.fetch(request, firstReading: firstIndex)
        sections = try makeSections()
    }

    /// Replaces the request and fetches.
    public func setRequest(_ request: FetchRequest) throws(ContextError) {
        self.request = request
        relevantEntities = Self.relevantEntities(of: request, coordinator: context.coordinator)
        try performFetch()
    }

    /// Whether these merged changes could change the results.
    public func isAffected(by notes: [SaveNotification]) -> Bool {
        let touched = notes.reduce(into: Set<Int>()) { $0.formUnion($1.entityNumbers) }
        guard !touched.isEmpty else { return notes.contains(where: \.refreshesEverything) }
        guard let relevantEntities else { return true }
        return notes.contains(where: \.refreshesEverything) || !touched.isDisjoint(with: relevantEntities)
    }

    /// After the context merged `notes`: fetches again if they touch the results, and reports how the rows moved
    /// (nil when untouched). Rows whose objects the notes name, and that are in both results, are `updated`.
    public func update(after notes: [SaveNotification]) throws(ContextError) -> ResultsChanges? {
        guard isAffected(by: notes) else { return nil }
        let changed = notes.reduce(into: Set<ObjectID>()) { $0.formUnion($1.changedIDs) }
        return try refetch(changed: changed, everything: notes.contains(where: \.refreshesEverything))
    }

    /// Fetches again and compares; `changed` names objects whose rows changed (reported as updated when they stay).
    public func refetch(changed: Set<ObjectID>, everything: Bool = false) throws(ContextError) -> ResultsChanges {
        let oldIDs = objects.knownObjectIDs
        let oldCount = objects.count
        let oldComplete = oldIDs.count == oldCount
        let oldSections = sections
        objects = try context.fetch(request)
        sections = try makeSections()
        var newIDs = objects.knownObjectIDs
        let complete = oldComplete && newIDs.count == objects.count
        var compared = oldIDs
        if !complete {
            let length = min(oldIDs.count, newIDs.count)
            compared = Array(oldIDs.prefix(length))
            newIDs = Array(newIDs.prefix(length))
        }
        var changes = ResultsChanges(oldCount: oldCount, newCount: objects.count, isComplete: complete)
        changes.sectionsChanged = oldSections != sections
        let difference = newIDs.difference(from: compared).inferringMoves()
        for change in difference {
            switch change {
            case .remove(let offset, _, let associated):
                if let associated {
                    changes.moved.append(.init(from: offset, to: associated))
                } else {
                    changes.deleted.append(offset)
                }
            case .insert(let offset, _, let associated):
                if associated == nil { changes.inserted.append(offset) }
            }
        }
        let before = Set(compared)
        for (index, id) in newIDs.enumerated() where before.contains(id) && (everything || changed.contains(id)) {
            changes.updated.append(index)
        }
        changes.deleted.sort()
        changes.inserted.sort()
        changes.moved.sort { $0.to < $1.to }
        return changes
    }

    private func makeSections() throws(ContextError) -> [Section] {
        guard let sectionKeyPath else { return objects.isEmpty ? [] : [Section(name: "", range: 0..<objects.count)] }
        var sectioned = request
        sectioned.propertiesToFetch = [sectionKeyPath]
        sectioned.fetchBatchSize = 0
        sectioned.relationshipKeyPathsForPrefetching = []
        var result: [Section] = []
        var start = 0
        var current: String?
        let rows = try context.fetchDictionaries(sectioned)
        for (index, row) in rows.enumerated() {
            let name = row[sectionKeyPath].map { "\($0.swiftValue ?? "")" } ?? ""
            if name != current {
                if let current { result.append(Section(name: current, range: start..<index)) }
                current = name
                start = index
            }
        }
        if let current { result.append(Section(name: current, range: start..<rows.count)) }
        return result
    }

    private static func relevantEntities(of request: FetchRequest, coordinator: PersistentStoreCoordinator) -> Set<Int>? {
        guard request.predicate == nil, let mapping = coordinator.mapping(forEntity: request.entityName) else { return nil }
        var numbers = Set<Int>()
        func addFamily(_ mapping: EntityMapping) {
            numbers.insert(mapping.number)
            for name in mapping.entity.descendantNames {
                if let descendant = coordinator.mapping(forEntity: name) { numbers.insert(descendant.number) }
            }
        }
        addFamily(mapping)
        for descriptor in request.sortDescriptors {
            var current = mapping
            for step in descriptor.keyPath.split(separator: ".").dropLast() {
                guard let toOne = current.toOnes.first(where: { $0.name == step }) else { return nil }
                current = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
                addFamily(current)
            }
        }
        return numbers
    }
}

/// How a fetched result changed: indexes of deleted rows in the old result, of inserted and updated rows in the
/// new one, and moves from old to new.
public struct ResultsChanges: Equatable, Sendable {
    public struct Move: Equatable, Sendable {
        public let from: Int
        public let to: Int

        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    public var inserted: [Int] = []
    public var deleted: [Int] = []
    public var moved: [Move] = []
    public var updated: [Int] = []
    public var oldCount: Int
    public var newCount: Int
    /// False when only the leading rows both results knew were compared (windowed batches).
    public var isComplete: Bool
    public var sectionsChanged = false

    public init(oldCount: Int, newCount: Int, isComplete: Bool) {
        self.oldCount = oldCount
        self.newCount = newCount
        self.isComplete = isComplete
    }

    /// Whether no row moved, came, went or changed.
    public var isEmpty: Bool {
        inserted.isEmpty && deleted.isEmpty && moved.isEmpty && updated.isEmpty && oldCount == newCount && !sectionsChanged
    }
}
