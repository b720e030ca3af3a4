import GraphStore

/// A way from one entity to another through relationships, named as a prefetch key path (`lastMessage.sender`).
///
/// ```swift
/// let routes = RelationshipRoute.routes(in: model, from: "Chat", to: "User", maxDepth: 2)
/// routes.map(\.keyPath)   // ["lastMessage.sender", "members.user", "messages.sender", …]
/// ```
struct RelationshipRoute: Equatable {
    /// One relationship followed, from the entity it was looked up on.
    struct Hop: Equatable {
        let source: String
        let relationship: RelationshipDescription
    }

    let hops: [Hop]

    var keyPath: String { hops.map(\.relationship.name).joined(separator: ".") }

    /// How many hops follow a to-many.
    var toManyCount: Int { hops.count(where: { $0.relationship.isToMany }) }

    /// Every route of at most `maxDepth` hops from `root` whose last hop leads to `target` or to an entity above it
    /// (a route to `Chat` reaches a `GroupChat`). Transient relationships are skipped: nothing prefetches them.
    static func routes(in model: ObjectModel, from root: String, to target: String, maxDepth: Int) -> [RelationshipRoute] {
        var found: [RelationshipRoute] = []
        func follow(from entityName: String, after hops: [Hop]) {
            guard hops.count < maxDepth, let entity = model.entity(named: entityName) else { return }
            for relationship in entity.relationships where relationship.isPersistent {
                let route = hops + [Hop(source: entityName, relationship: relationship)]
                if model.entity(named: relationship.destination)?.includes(target) == true {
                    found.append(RelationshipRoute(hops: route))
                }
                follow(from: relationship.destination, after: route)
            }
        }
        follow(from: root, after: [])
        return found
    }
}
