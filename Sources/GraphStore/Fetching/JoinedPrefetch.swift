/// The joined prefetch strategy: key paths made only of to-ones are read with the main statement through
/// `LEFT JOIN`s (`LEFT JOIN ZMESSAGE p1 ON p1.Z_PK = t0.ZLASTMESSAGE LEFT JOIN ZUSER p2 ON p2.Z_PK = p1.ZSENDER`),
/// each destination's columns after the fetched entity's. With `joinsToManyPrefetch`, one key path ending in a
/// to-many is joined too (`LEFT JOIN ZREACTION p3 ON p3.ZMESSAGE = t0.Z_PK`), which repeats a fetched row once per
/// member. Other key paths are left to separate statements.
///
/// A layout depends only on the request's entity, its sub-entity choice and its prefetch settings, so it is made
/// once per mapping and settings (`PlanCache`), not on every fetch.
struct JoinedPrefetch: Sendable {
    struct Node: Sendable {
        let keyPath: String
        let alias: String
        let plan: RowReadPlan
        /// Where the destination's columns start in the result row.
        let offset: Int32
        /// The result column of the foreign key the join follows, when the node's row is read without its own
        /// `Z_PK` (`RowReadPlan.joinedSelectList(alias:keyElsewhere:)`); -1 when it selects its key.
        var keyColumn: Int32 = -1
    }

    /// A joined to-many: its destination node, and where the owners' columns are.
    struct ToManyNode: Sendable {
        let node: Node
        /// The relationship's name in the owner's entity.
        let relationship: String
        let ownerPlan: RowReadPlan
        let ownerOffset: Int32
    }

    private(set) var nodes: [Node] = []
    private(set) var toMany: ToManyNode?
    /// Per node, what reading a row's ID needs, in plain values: the row loop reads them for every node of every
    /// row, and copying a `Node` there would retain and release each of its strings and tables.
    private var keys: [RowKey] = []
    /// Per node, the reader of its rows when they are all of one entity (nil for a hierarchy's): a new row is read
    /// through it with one reference retained, where handing over the node's plan copied four.
    private var readers: [RowReadPlan.EntityReader?] = []
    /// The joined to-many's node index, and its owner's columns in plain values.
    private var toManyIndex = -1
    private var ownerKey = RowKey(offset: 0, hasEntityColumn: false, defaultEntity: 0, entityNumbers: 0...0)
    private(set) var joins: [String] = []
    /// ", p1.Z_OPT, …" (with its leading comma), or "" when nothing is joined.
    private(set) var selectList = ""
    /// Key paths left for separate statements.
    private(set) var remainingKeyPaths: [String] = []
    /// The first result column after the joined ones.
    private(set) var endColumn: Int32

    /// Whether a fetched row can come back more than once (once per member of a joined to-many).
    var repeatsRows: Bool { toMany != nil }

    /// Nothing joined: every key path of `request` is prefetched by separate statements.
    init(request: FetchRequest) {
        remainingKeyPaths = request.relationshipKeyPathsForPrefetching
        endColumn = 0
    }

    /// The layout for `plan`'s request, from the cache when it was made before.
    static func make(for plan: FetchPlan, coordinator: PersistentStoreCoordinator) -> JoinedPrefetch {
        let request = plan.request
        guard request.prefetchStrategy == .joined, !request.relationshipKeyPathsForPrefetching.isEmpty else {
            var separate = JoinedPrefetch(request: request)
            separate.endColumn = plan.rowPlan.columnCount
            return separate
        }
        return coordinator.planCache.joinedPrefetch(for: plan) {
            JoinedPrefetch(request: request, mapping: plan.mapping, rootPlan: plan.rowPlan, selection: plan.selection, coordinator: coordinator)
        }
    }

    private init(request: FetchRequest, mapping root: EntityMapping, rootPlan: RowReadPlan, selection: PropertySelection,
                 coordinator: PersistentStoreCoordinator) {
        var next = rootPlan.columnCount
        var terms: [String] = []
        let keyPaths = request.relationshipKeyPathsForPrefetching
        for keyPath in keyPaths {
            let components = keyPath.split(separator: ".").map(String.init)
            // Only chains of to-ones are joined (and, when asked, one to-many at the end of such a chain); check the
            // whole path before adding anything for it.
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
            var last: (relationship: EntityMapping.ToMany, table: String, column: String)?
            if steps.count == components.count - 1, request.joinsToManyPrefetch, toMany == nil,
               !keyPaths.contains(where: { $0.hasPrefix(keyPath + ".") }),
               case .toMany(let index)? = mapping.slot(forKey: components[components.count - 1]),
               case .inverseForeignKey(let table, let column, nil) = mapping.toManys[index].storage {
                last = (mapping.toManys[index], table, column)
            }
            guard steps.count == components.count || last != nil, !components.isEmpty else {
                remainingKeyPaths.append(keyPath)
                continue
            }
            var parentAlias = "t0"
            var parentPlan = rootPlan
            var parentOffset: Int32 = 0
            for step in steps {
                if let existing = nodes.first(where: { $0.keyPath == step.prefix }) {
                    (parentAlias, parentPlan, parentOffset) = (existing.alias, existing.plan, existing.offset)
                    continue
                }
                let alias = "p\(nodes.count + 1)"
                let plan = coordinator.planCache.rowPlan(forTableOf: step.destination, properties: selection.names(at: step.prefix), coordinator: coordinator)
                joins.append("LEFT JOIN \(step.destination.table) \(alias) ON \(alias).Z_PK = \(parentAlias).\(step.toOne.column)")
                // The row's key is the foreign key the join follows, when the parent's columns hold it: selecting
                // the joined row's Z_PK as well would cost SQLite a value per row for nothing. A joined to-many's
                // owner is found by its own key, so with one joined every row keeps its key.
                let foreignKey = request.joinsToManyPrefetch ? nil
                    : parentPlan.columns.firstIndex(of: "t0." + step.toOne.column).map { parentOffset + Int32($0) }
                let (term, leading) = plan.joinedSelectList(alias: alias, keyElsewhere: foreignKey != nil)
                terms.append(term)
                nodes.append(Node(keyPath: step.prefix, alias: alias, plan: plan, offset: next - leading,
                                  keyColumn: leading == 2 ? foreignKey ?? -1 : -1))
                next += plan.columnCount - leading
                (parentAlias, parentPlan, parentOffset) = (alias, plan, nodes[nodes.count - 1].offset)
            }
            if let last {
                let alias = "p\(nodes.count + 1)"
                let destination = coordinator.mapping(forEntityNumber: last.relationship.destinationNumber)
                let plan = coordinator.planCache.rowPlan(forTableOf: destination, properties: selection.names(at: keyPath), coordinator: coordinator)
                joins.append("LEFT JOIN \(last.table) \(alias) ON \(alias).\(last.column) = \(parentAlias).Z_PK")
                let (term, leading) = plan.joinedSelectList(alias: alias)
                terms.append(term)
                let node = Node(keyPath: keyPath, alias: alias, plan: plan, offset: next - leading)
                nodes.append(node)
                toMany = ToManyNode(node: node, relationship: last.relationship.name, ownerPlan: parentPlan, ownerOffset: parentOffset)
                next += plan.columnCount - leading
            }
        }
        selectList = terms.isEmpty ? "" : ", " + terms.joined(separator: ", ")
        endColumn = next
        keys = nodes.map { RowKey(offset: $0.offset, plan: $0.plan, keyColumn: $0.keyColumn) }
        readers = nodes.map(\.plan.onlyReader)
        if let toMany {
            toManyIndex = nodes.firstIndex { $0.offset == toMany.node.offset } ?? -1
            ownerKey = RowKey(offset: toMany.ownerOffset, plan: toMany.ownerPlan)
        }
    }

    /// Where a row's ID is in a result row, and how to read its entity.
    private struct RowKey {
        let offset: Int32
        let hasEntityColumn: Bool
        let defaultEntity: Int
        let entityNumbers: ClosedRange<Int>
        /// The foreign key that gives the row's key, or -1: the row's own `Z_PK`, after `offset`.
        let keyColumn: Int32

        init(offset: Int32, hasEntityColumn: Bool, defaultEntity: Int, entityNumbers: ClosedRange<Int>, keyColumn: Int32 = -1) {
            self.offset = offset
            self.hasEntityColumn = hasEntityColumn
            self.defaultEntity = defaultEntity
            self.entityNumbers = entityNumbers
            self.keyColumn = keyColumn
        }

        init(offset: Int32, plan: RowReadPlan, keyColumn: Int32 = -1) {
            self.init(offset: offset, hasEntityColumn: plan.hasEntityColumn, defaultEntity: plan.defaultEntity, entityNumbers: plan.entityNumbers,
                      keyColumn: keyColumn)
        }

        /// The row's ID; nil when its columns are NULL (a left join that found nothing).
        func objectID(_ handle: borrowing RowView) -> ObjectID? {
            if keyColumn >= 0 {
                // Read without its key: its version, the first column it has, is NULL when the join found nothing.
                // (A row whose version is NULL, which no store writes, is left unread: a fault reads it later.)
                if handle.isNull(offset + 2) { return nil }
                return ObjectID.stored(entity: Int64(defaultEntity), of: entityNumbers, key: handle.int64(keyColumn))
            }
            if handle.isNull(offset + 1) { return nil }
            let entity = hasEntityColumn ? handle.int64(offset) : Int64(defaultEntity)
            return ObjectID.stored(entity: entity, of: entityNumbers, key: handle.int64(offset + 1))
        }
    }

    /// What the joined columns of one statement's rows brought: each destination row once (under the first node
    /// that reached it), and for a joined to-many, each owner's members in the order read.
    struct Rows {
        /// Per node (`nodes`' order), the destination rows first reached through it, in the order read.
        var byNode: [[RowSnapshot]]
        /// Every destination row read so far, whichever node reached it.
        var seen = ObjectIDTable<Void>()
        /// Owners of the joined to-many, in the order first read (those without members included).
        var owners: [ObjectID] = []
        var members: [ObjectID: [ObjectID]] = [:]
        /// Members of the joined to-many already given to their owner.
        var membersSeen: Set<ObjectID> = []

        init(nodeCount: Int) {
            byNode = Array(repeating: [], count: nodeCount)
            // Room for a screenful of joined rows from the start, rather than growing through small tables.
            if nodeCount > 0 { seen.reserveCapacity(64) }
        }

        var isEmpty: Bool { seen.isEmpty }
    }

    /// An empty `Rows` for this layout's nodes.
    func makeRows() -> Rows { Rows(nodeCount: nodes.count) }

    /// Takes the joined destinations of the current result row into `found`. A destination already read by this
    /// statement (a sender of many messages, say) is not read again.
    func read(_ handle: borrowing RowView, into found: inout Rows) {
        var owner: ObjectID?
        if toManyIndex >= 0, let id = ownerKey.objectID(handle) {
            if found.members[id] == nil {
                found.members[id] = []
                found.owners.append(id)
            }
            owner = id
        }
        for index in keys.indices {
            guard let id = keys[index].objectID(handle) else { continue }
            if found.seen.value(forKey: id, orInsert: {}).inserted {
                let snapshot = if let reader = readers[index] {
                    handle.snapshot(reader, offset: keys[index].offset, key: id.primaryKey)
                } else {
                    handle.snapshot(nodes[index].plan, offset: keys[index].offset, key: id.primaryKey)
                }
                found.byNode[index].append(snapshot)
            }
            // A member comes once per row of its owner (its owner's own row repeats with every member of it).
            if index == toManyIndex, let owner, found.membersSeen.insert(id).inserted {
                found.members[owner]?.append(id)
            }
        }
    }
}

extension RowReadPlan {
    /// The ID of the row whose columns (selected with this plan's `selectList`) start at `offset`, without reading
    /// its values.
    func objectID(_ handle: borrowing RowView, offset: Int32) -> ObjectID {
        let entity = hasEntityColumn ? handle.int64(offset) : Int64(defaultEntity)
        return ObjectID.stored(entity: entity, of: entityNumbers, key: handle.int64(offset + 1))
    }
}
