/// Who caused what runs next: the pane whose rows are being read, the entity it lists (key paths to prefetch start
/// there), and the settings the user can change for it, so that advice names a key that helps.
///
/// ```swift
/// monitor.begin(action: "open", scope: ActivityScope(pane: "messages", rootEntity: "Message"))
/// monitor.enter(ActivityScope(pane: "chat list", rootEntity: "Chat"))   // what runs now is the list's
/// ```
public struct ActivityScope: Equatable, Sendable {
    /// What the browser lets the user change for a pane's fetch, with the keys that change it.
    public struct Levers: Equatable, Sendable {
        /// The key paths the pane's fetch prefetches when prefetching is on.
        public var prefetchKeyPaths: [String]
        /// Whether prefetching is on, and how it is done, as the status line says it (`joined`, `IN statements`).
        public var prefetchIsOn: Bool
        public var prefetchLabel: String
        public var derivedCounts: Bool
        /// Rows per batch; 0 when the fetch is not batched.
        public var batchSize: Int
        /// The smallest batch size the batch key offers.
        public var smallestBatchSize: Int
        /// The keys, as the help names them: prefetch, derived counts, batch size.
        public var prefetchKey: String
        public var countsKey: String
        public var batchKey: String

        public init(prefetchKeyPaths: [String], prefetchIsOn: Bool, prefetchLabel: String, derivedCounts: Bool, batchSize: Int,
                    smallestBatchSize: Int, prefetchKey: String, countsKey: String, batchKey: String) {
            self.prefetchKeyPaths = prefetchKeyPaths
            self.prefetchIsOn = prefetchIsOn
            self.prefetchLabel = prefetchLabel
            self.derivedCounts = derivedCounts
            self.batchSize = batchSize
            self.smallestBatchSize = smallestBatchSize
            self.prefetchKey = prefetchKey
            self.countsKey = countsKey
            self.batchKey = batchKey
        }

        /// Whether prefetching `keyPath` is something the pane's fetch does (it or a longer path through it).
        func prefetches(_ keyPath: String) -> Bool {
            prefetchKeyPaths.contains { $0 == keyPath || $0.hasPrefix(keyPath + ".") }
        }
    }

    /// The pane (`chat list`, `messages`, `members`); nil for work that is no pane's (a save, a preview).
    public var pane: String?
    /// The entity the pane lists; warnings name key paths from it.
    public var rootEntity: String?
    /// nil when no setting of the browser applies (a library's own use): advice is then about the fetch request.
    public var levers: Levers?

    public init(pane: String? = nil, rootEntity: String? = nil, levers: Levers? = nil) {
        self.pane = pane
        self.rootEntity = rootEntity
        self.levers = levers
    }
}
