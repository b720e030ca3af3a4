/// What a fetch of objects reads of each row, from `FetchRequest.propertiesToFetch`: per key path (`""` for the
/// fetched entity, `sender` or `replyTo.sender` for what is prefetched), the attributes and to-ones to read. A key
/// path the request names no property of is read whole, as is every key path of a request that names none.
///
/// A level named at all also reads the to-ones its prefetched key paths go through (`lastMessage` of
/// `lastMessage.sender`), so that following them needs nothing more.
struct PropertySelection: Sendable, Hashable {
    /// Key path → the names read there; a key path absent is read whole.
    private(set) var byKeyPath: [String: Set<String>] = [:]

    /// Every row read whole.
    static let wholeRows = PropertySelection(byKeyPath: [:])

    private init(byKeyPath: [String: Set<String>]) {
        self.byKeyPath = byKeyPath
    }

    var isEmpty: Bool { byKeyPath.isEmpty }

    /// The names read at `keyPath`; nil for whole rows.
    func names(at keyPath: String) -> Set<String>? {
        byKeyPath[keyPath]
    }

    /// The selection `request` asks for, checked against the model: each name must be a stored attribute or to-one
    /// of the entity it is read from (the fetched one or one of its sub-entities, or a prefetched key path's
    /// destination), and a dotted name must go through a key path the request prefetches.
    init(_ request: FetchRequest, mapping root: EntityMapping, coordinator: PersistentStoreCoordinator) throws(ContextError) {
        guard !request.propertiesToFetch.isEmpty else { return }
        let prefetched = Set(request.relationshipKeyPathsForPrefetching.flatMap(Self.prefixes))
        for name in request.propertiesToFetch {
            let components = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !components.contains(where: \.isEmpty) else {
                throw .invalidFetch("\(root.name): '\(name)' in propertiesToFetch is not a key path")
            }
            let keyPath = components.dropLast().joined(separator: ".")
            let property = components[components.count - 1]
            guard keyPath.isEmpty || prefetched.contains(keyPath) else {
                throw .invalidFetch("\(root.name): '\(name)' in propertiesToFetch reads through '\(keyPath)', which the request does not prefetch "
                    + "(add it to relationshipKeyPathsForPrefetching, or name only \(root.name)'s own properties)")
            }
            let family = try Self.destinations(of: keyPath, from: root, coordinator: coordinator)
            let isStored = family.contains { mapping in
                switch mapping.slot(forKey: property) {
                case .attribute?, .toOne?: true
                default: false
                }
            }
            guard isStored else {
                let entity = family.first?.name ?? root.name
                throw .invalidFetch("\(root.name): '\(name)' in propertiesToFetch: \(entity) has no stored attribute or to-one '\(property)'")
            }
            byKeyPath[keyPath, default: []].insert(property)
        }
        // The to-ones prefetching follows, at every level that is read partially.
        for keyPath in request.relationshipKeyPathsForPrefetching {
            let components = keyPath.split(separator: ".").map(String.init)
            for (position, component) in components.enumerated() {
                let parent = components[..<position].joined(separator: ".")
                guard byKeyPath[parent] != nil else { continue }
                byKeyPath[parent]?.insert(component)
            }
        }
    }

    /// `a`, `a.b`, `a.b.c` of `a.b.c`.
    private static func prefixes(_ keyPath: String) -> [String] {
        let components = keyPath.split(separator: ".").map(String.init)
        return components.indices.map { components[...$0].joined(separator: ".") }
    }

    /// The entities a key path from `root` reaches: the destination of its last relationship and that
    /// destination's sub-entities (`root` and its sub-entities for `""`).
    private static func destinations(of keyPath: String, from root: EntityMapping, coordinator: PersistentStoreCoordinator) throws(ContextError) -> [EntityMapping] {
        var mapping = root
        if !keyPath.isEmpty {
            for component in keyPath.split(separator: ".").map(String.init) {
                let number: Int
                switch mapping.slot(forKey: component) {
                case .toOne(let index)?: number = mapping.toOnes[index].destinationNumber
                case .toMany(let index)?: number = mapping.toManys[index].destinationNumber
                default: throw .invalidFetch("\(root.name): no relationship '\(component)' in the prefetched key path '\(keyPath)'")
                }
                mapping = coordinator.mapping(forEntityNumber: number)
            }
        }
        return [mapping] + mapping.entity.descendantNames.compactMap { coordinator.mapping(forEntity: $0) }
    }
}
