/// The joined prefetch strategy: key paths made only of to-ones are read with the main statement through
/// `LEFT JOIN`s (`LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER`),
/// each destination's columns after the fetched entity's. Other key paths are left to separate statements.
struct JoinedPrefetch {
    struct Node {
        let keyPath: String
        let alias: String
        let plan: RowReadPlan
        /// Where the destination's columns start in the result row.
        let offset: Int32
    }

    private(set) var nodes: [Node] = []
    private(set) var joins: [String] = []
    /// ", p1.Z_PK, …" (with its leading comma), or "" when nothing is joined.
    private(set) var selectList = ""
    /// Key paths left for separate statements.
    private(set) var remainingKeyPaths: [String] = []

    /// Nothing joined: every key path of `request` is prefetched by separate statements.
    init(request: FetchRequest) {
        remainingKeyPaths = request.relationshipKeyPathsForPrefetching
    }

    init(request: FetchRequest, mapping root: EntityMapping, coordinator: PersistentStoreCoordinator, firstColumn: Int32) throws(ContextError) {
        guard request.prefetchStrategy == .joined else {
            remainingKeyPaths = request.relationshipKeyPathsForPrefetching
            return
        }
        var next = firstColumn
        var terms: [String] = []
        for keyPath in request.relationshipKeyPathsForPrefetching {
            let components = keyPath.split(separator: ".").map(String.init)
            // Only chains of to-ones are joined; check the whole path before adding anything for it.
            var mapping = root
            var steps: [(prefix: String, toOne: EntityMapping.ToOne, destination: EntityMapping)] = []
            var prefix = ""
            for component in components {
                guard case .toOne(let index)? = mapping.slot(forKey: component) else { break }
                let toOne = mapping.toOnes[index]
                let destination = coordinator.mapping(forEntityNumber: toOne.destinationNumber)
                prefix += prefix.isEmpty ? component : "." + component
                steps.append((prefix, toOne, destination))
                mapping = destination
            }
            guard steps.count == components.count, !components.isEmpty else {
                remainingKeyPaths.append(keyPath)
                continue
            }
            var parentAlias = "t0"
            for step in steps {
                if let existing = nodes.first(where: { $0.keyPath == step.prefix }) {
                    parentAlias = existing.alias
                    continue
                }
                let alias = "p\(nodes.count + 1)"
                let tableRoot = coordinator.mapping(forEntityNumber: step.destination.rootNumber)
                let plan = RowReadPlan([tableRoot] + tableRoot.entity.descendantNames.compactMap { coordinator.mapping(forEntity: $0) })
                joins.append("LEFT JOIN \(step.destination.table) \(alias) ON \(alias).Z_PK = \(parentAlias).\(step.toOne.column)")
                terms.append(plan.selectList(alias: alias))
                nodes.append(Node(keyPath: step.prefix, alias: alias, plan: plan, offset: next))
                next += plan.columnCount
                parentAlias = alias
            }
        }
        selectList = terms.isEmpty ? "" : ", " + terms.joined(separator: ", ")
    }

    /// Hands each joined destination present in the current result row to `body`, with the key path it was
    /// prefetched for.
    func read(_ handle: OpaquePointer, _ body: (RowSnapshot, String) -> Void) {
        for node in nodes where !SQLiteValues.isNull(handle, node.offset + 1) {
            body(SQLiteValues.snapshot(handle, plan: node.plan, offset: node.offset), node.keyPath)
        }
    }
}
