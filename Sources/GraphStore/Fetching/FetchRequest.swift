/// What to fetch and how: an entity, a predicate, an order, a window, and the levers that decide how many SQL
/// statements the result costs (batching, prefetching, faults or values).
///
/// ```swift
/// var request = FetchRequest(entityName: "Chat", sortDescriptors: [.init("lastMessageAt", ascending: false)])
/// request.fetchBatchSize = 20
/// request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
/// let chats = try context.fetch(request)        // a random-access collection; batches load as they are touched
/// ```
/// The result type is chosen by the method called: `fetch` (objects), `fetchObjectIDs`, `fetchDictionaries`
/// (chosen properties straight from the store) and `count(for:)` (one `SELECT COUNT(*)`).
public struct FetchRequest: Sendable, Hashable {
    /// How prefetched relationships are loaded.
    public enum PrefetchStrategy: String, Sendable, CaseIterable {
        /// Core Data's way: after the main statement, one `… WHERE … IN (…)` statement per key path and level.
        case separateQueries = "separate"
        /// Key paths made only of to-ones come with the main statement through `LEFT JOIN`s (as SQLAlchemy's
        /// `joinedload` and GRDB's `including(optional:)` do); to-many key paths still take one `IN` statement each.
        case joined
    }

    /// How a batched result (`fetchBatchSize > 0`) finds the rows of batches it has not loaded.
    public enum BatchingMode: String, Sendable, CaseIterable {
        /// Core Data's way: the first statement reads every matching ID in order; each batch is then one
        /// `WHERE t0.Z_PK IN (…)` statement.
        case faithful
        /// The first batch's rows come with the first statement (`LIMIT`), the total from a `COUNT`, and the
        /// ordered IDs beyond the first batch only when a later batch is touched (read in chunks of several
        /// batches from where the known IDs end).
        case windowed
    }

    /// An order by one key path (through to-ones: `lastMessage.sentAt`), done by SQLite.
    public struct SortDescriptor: Sendable, Hashable {
        public var keyPath: String
        public var ascending: Bool

        public init(_ keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    public var entityName: String
    public var predicate: Predicate?
    public var sortDescriptors: [SortDescriptor]
    /// At most this many results; 0 for no limit.
    public var fetchLimit = 0
    /// Skip this many results first.
    public var fetchOffset = 0
    /// Load objects in batches of this many, on demand; 0 loads every row with the first statement.
    public var fetchBatchSize = 0
    public var batchingMode = BatchingMode.windowed
    /// Windowed batching only: whether the first batch's statement also counts the matching rows (a `COUNT(*)`
    /// subquery in its select list, which SQLite runs once), so that opening a batched result costs one statement
    /// instead of the rows' and a separate `COUNT`. The count is then taken even when the first batch comes back
    /// short, where it is cheap (there are fewer rows than one batch).
    public var countsWithFirstBatch = false
    /// How many loaded batches a batched result keeps (least recently used ones are dropped first; a dropped batch
    /// reloads with one statement when touched again).
    public var maximumLoadedBatches = 8
    /// Whether objects of sub-entities match too.
    public var includesSubentities = true
    /// Whether object results come back as faults (their rows still go to the row cache, so a fault fired later
    /// is a cache hit) or with their values already in place.
    public var returnsObjectsAsFaults = true
    /// Whether the rows' values are read at all; false reads IDs only (later faults then each cost a statement).
    public var includesPropertyValues = true
    /// Relationship key paths to load with the result (`lastMessage.sender`, `members.user`), any depth.
    public var relationshipKeyPathsForPrefetching: [String] = []
    public var prefetchStrategy = PrefetchStrategy.separateQueries
    /// With the `.joined` strategy, whether one to-many key path is joined into the main statement too (the first
    /// one that ends in an unordered to-many kept by a foreign key in its destination, after any to-ones, and that
    /// no other key path goes through): each fetched row then comes back once per member, and is read once. So a
    /// fetch with `["sender", "replyTo.sender", "reactions"]` costs one statement instead of two. Off by default:
    /// the repeated rows cost more than a second statement when owners have many members; with a window (a limit,
    /// or a batch) only the window's rows are joined.
    public var joinsToManyPrefetch = false
    /// The properties to read, as Core Data's `propertiesToFetch`.
    ///
    /// - `fetch` (objects): the stored attributes and to-ones each object is loaded with, and, by key paths through
    ///   prefetched relationships (`sender.name`), what each prefetched object is loaded with; a level the list names
    ///   nothing of is read whole. The objects are *partial*: reading a property they lack, changing them or saving
    ///   them reads the rest of the row first, one statement by key (a partial fault, counted as
    ///   `GraphCounters.Totals.partialFaults`). The row cache keeps the partial rows and knows what they lack.
    /// - `fetchDictionaries`: attributes, to-ones (their destination's primary key) or key paths through to-ones
    ///   (`sender.name`, joined) that each dictionary holds.
    ///
    /// Empty: whole rows, and for dictionaries every stored attribute.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt", ascending: false)])
    /// request.relationshipKeyPathsForPrefetching = ["sender"]
    /// request.propertiesToFetch = ["text", "sentAt", "sender.name"]   // reads ZTEXT, ZSENTAT, ZSENDER; ZNAME
    /// ```
    public var propertiesToFetch: [String] = []
    /// Whether object results reflect the context's unsaved changes: inserted objects that match appear, deleted
    /// ones vanish, changed ones are judged by their values in memory.
    public var includesPendingChanges = true
    /// To-many relationships of the fetched entity whose sizes come with each row: one correlated
    /// `(SELECT COUNT(*) …)` column per name, and `count(forKey:)` on a fetched object answers from it without
    /// firing the relationship fault (its members stay unread). A count is the store's as of the fetch; once the
    /// context adds or removes members, or the fault fires, `count(forKey:)` counts the members as before.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt", ascending: false)])
    /// request.countsToFetch = ["reactions"]   // …, (SELECT COUNT(*) FROM ZREACTION c0 WHERE c0.ZMESSAGE = t0.Z_PK)
    /// message.count(forKey: "reactions")       // no statement
    /// ```
    public var countsToFetch: [String] = []

    public init(entityName: String, predicate: Predicate? = nil, sortDescriptors: [SortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}
