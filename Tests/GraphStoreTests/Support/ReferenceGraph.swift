import GraphStore

/// What the reference graph needs to know of a model: each entity's stored attributes, derived attributes and
/// relationships with their inverses and delete rules.
struct ReferenceSchema {
    struct Relationship {
        let name: String
        let destination: String
        let inverse: String?
        let isToMany: Bool
        let isOrdered: Bool
        let deleteRule: DeleteRule
    }

    enum Derived {
        /// `toMany.@count`
        case count(relationship: String)
        /// `toOne.attribute`
        case copy(relationship: String, attribute: String)
    }

    struct Shape {
        let name: String
        /// Stored attributes a test may set, in declaration order.
        let attributes: [(name: String, type: AttributeType)]
        let derived: [(name: String, derivation: Derived)]
        let relationships: [Relationship]

        func relationship(_ name: String) -> Relationship? { relationships.first { $0.name == name } }
    }

    let shapes: [String: Shape]
    /// Entity names, sorted: the order the generator and the reports use.
    let entityNames: [String]

    init(_ model: ObjectModel) {
        var shapes: [String: Shape] = [:]
        for entity in model.entities where !entity.isAbstract {
            var attributes: [(String, AttributeType)] = []
            var derived: [(String, Derived)] = []
            for attribute in entity.attributes where !attribute.isTransient {
                guard let expression = attribute.derivation else {
                    attributes.append((attribute.name, attribute.type))
                    continue
                }
                let parts = expression.split(separator: ".").map(String.init)
                precondition(parts.count == 2, "unsupported derivation \(expression)")
                derived.append((attribute.name, parts[1] == "@count" ? .count(relationship: parts[0]) : .copy(relationship: parts[0], attribute: parts[1])))
            }
            let relationships = entity.relationships.filter { !$0.isTransient }.map {
                Relationship(name: $0.name, destination: $0.destination, inverse: $0.inverse, isToMany: $0.isToMany,
                             isOrdered: $0.isOrdered, deleteRule: $0.deleteRule)
            }
            shapes[entity.name] = Shape(name: entity.name, attributes: attributes, derived: derived, relationships: relationships)
        }
        self.shapes = shapes
        entityNames = shapes.keys.sorted()
    }

    subscript(entity: String) -> Shape { shapes[entity]! }
}

/// A plain in-memory object graph with Core Data's relationship semantics: both sides of every relationship are
/// kept, setting one side updates the other, and a delete follows the delete rules. Objects are named by handles
/// (small integers the test hands out), so graphs compare with `==` whatever IDs a store gave the objects.
struct ReferenceGraph: Equatable {
    struct Object: Equatable {
        var entity: String
        /// Stored attributes; a missing key is nil.
        var attributes: [String: AttributeValue] = [:]
        /// To-one destinations; a missing key is nil.
        var toOnes: [String: Int] = [:]
        /// To-many members: in order for ordered relationships, ascending otherwise; a missing key is empty.
        var toManys: [String: [Int]] = [:]
    }

    var objects: [Int: Object] = [:]

    func attribute(_ handle: Int, _ key: String) -> AttributeValue { objects[handle]?.attributes[key] ?? .null }
    func toOne(_ handle: Int, _ key: String) -> Int? { objects[handle]?.toOnes[key] }
    func toMany(_ handle: Int, _ key: String) -> [Int] { objects[handle]?.toManys[key] ?? [] }

    /// The value a derived attribute has when the store's triggers have kept it.
    func derivedValue(_ handle: Int, _ derivation: ReferenceSchema.Derived) -> AttributeValue {
        switch derivation {
        case .count(let relationship):
            return .integer(Int64(toMany(handle, relationship).count))
        case .copy(let relationship, let attribute):
            return toOne(handle, relationship).map { self.attribute($0, attribute) } ?? .null
        }
    }

    // MARK: changes, as a context makes them

    mutating func insert(_ handle: Int, entity: String, attributes: [String: AttributeValue]) {
        precondition(objects[handle] == nil, "handle \(handle) is taken")
        objects[handle] = Object(entity: entity, attributes: attributes.filter { $0.value != .null })
    }

    mutating func setAttribute(_ handle: Int, _ key: String, _ value: AttributeValue) {
        objects[handle]!.attributes[key] = value == .null ? nil : value
    }

    /// Sets a to-one and keeps the inverse: the object leaves its old destination's inverse and joins the new one's;
    /// in a one-to-one, the new destination's old partner lets go of it.
    mutating func setToOne(_ handle: Int, _ key: String, to destination: Int?, schema: ReferenceSchema) {
        let relationship = schema[objects[handle]!.entity].relationship(key)!
        let old = toOne(handle, key)
        guard old != destination else { return }
        assign(handle, key, destination)
        guard let inverseName = relationship.inverse else { return }
        let inverse = schema[relationship.destination].relationship(inverseName)!
        if let old {
            if inverse.isToMany {
                removeMember(old, inverseName, handle)
            } else if toOne(old, inverseName) == handle {
                assign(old, inverseName, nil)
            }
        }
        if let destination {
            if inverse.isToMany {
                appendMember(destination, inverseName, handle, ordered: inverse.isOrdered)
            } else {
                if let previous = toOne(destination, inverseName), previous != handle, toOne(previous, key) == destination {
                    assign(previous, key, nil)
                }
                if toOne(destination, inverseName) != handle { assign(destination, inverseName, handle) }
            }
        }
    }

    private mutating func assign(_ handle: Int, _ key: String, _ destination: Int?) {
        objects[handle]!.toOnes[key] = destination
    }

    /// Adds a member to a to-many (at the end when ordered); through a to-one inverse this moves the member.
    mutating func add(_ handle: Int, _ key: String, _ member: Int, schema: ReferenceSchema) {
        let relationship = schema[objects[handle]!.entity].relationship(key)!
        if let inverseName = relationship.inverse, !schema[relationship.destination].relationship(inverseName)!.isToMany {
            setToOne(member, inverseName, to: handle, schema: schema)
            return
        }
        guard !toMany(handle, key).contains(member) else { return }
        appendMember(handle, key, member, ordered: relationship.isOrdered)
        if let inverseName = relationship.inverse {
            appendMember(member, inverseName, handle, ordered: schema[relationship.destination].relationship(inverseName)!.isOrdered)
        }
    }

    mutating func remove(_ handle: Int, _ key: String, _ member: Int, schema: ReferenceSchema) {
        let relationship = schema[objects[handle]!.entity].relationship(key)!
        guard toMany(handle, key).contains(member) else { return }
        if let inverseName = relationship.inverse, !schema[relationship.destination].relationship(inverseName)!.isToMany {
            setToOne(member, inverseName, to: nil, schema: schema)
            return
        }
        removeMember(handle, key, member)
        if let inverseName = relationship.inverse { removeMember(member, inverseName, handle) }
    }

    private mutating func appendMember(_ handle: Int, _ key: String, _ member: Int, ordered: Bool) {
        var members = toMany(handle, key)
        guard !members.contains(member) else { return }
        if ordered {
            members.append(member)
        } else {
            members.insert(member, at: members.firstIndex { $0 > member } ?? members.count)
        }
        objects[handle]!.toManys[key] = members
    }

    private mutating func removeMember(_ handle: Int, _ key: String, _ member: Int) {
        var members = toMany(handle, key)
        members.removeAll { $0 == member }
        objects[handle]!.toManys[key] = members.isEmpty ? nil : members
    }

    // MARK: deleting

    /// `roots` and everything their Cascade rules reach, through the relationships as they are in this graph.
    func cascadeClosure(of roots: Set<Int>, schema: ReferenceSchema) -> Set<Int> {
        var doomed = Set<Int>()
        var queue = roots.filter { objects[$0] != nil }.sorted()
        while let handle = queue.popLast() {
            guard doomed.insert(handle).inserted, let object = objects[handle] else { continue }
            for relationship in schema[object.entity].relationships where relationship.deleteRule == .cascade {
                if relationship.isToMany {
                    queue += toMany(handle, relationship.name)
                } else if let destination = toOne(handle, relationship.name) {
                    queue.append(destination)
                }
            }
        }
        return doomed
    }

    /// Whether a Deny rule refuses deleting `doomed`: one of them holds, through a Deny relationship, an object that
    /// survives.
    func denies(_ doomed: Set<Int>, schema: ReferenceSchema) -> Bool {
        doomed.contains { handle in
            guard let object = objects[handle] else { return false }
            return schema[object.entity].relationships.contains { relationship in
                guard relationship.deleteRule == .deny else { return false }
                let held = relationship.isToMany ? toMany(handle, relationship.name) : toOne(handle, relationship.name).map { [$0] } ?? []
                return held.contains { !doomed.contains($0) }
            }
        }
    }

    /// The graph with `doomed` gone and every reference to them cleared (Nullify; GraphStore also clears
    /// references without an inverse).
    func removing(_ doomed: Set<Int>) -> ReferenceGraph {
        guard !doomed.isEmpty else { return self }
        var result = self
        for handle in doomed { result.objects[handle] = nil }
        for (handle, object) in result.objects {
            var object = object
            object.toOnes = object.toOnes.filter { !doomed.contains($0.value) }
            object.toManys = object.toManys.compactMapValues { members in
                let kept = members.filter { !doomed.contains($0) }
                return kept.isEmpty ? nil : kept
            }
            result.objects[handle] = object
        }
        return result
    }

    // MARK: saved steps

    /// How `other` differs from this graph, object by object: each changed handle with its object here (nil: it
    /// is new in `other`).
    func changes(to other: ReferenceGraph) -> [Int: Object?] {
        var changed: [Int: Object?] = [:]
        for handle in Set(objects.keys).union(other.objects.keys) where objects[handle] != other.objects[handle] {
            changed[handle] = .some(objects[handle])
        }
        return changed
    }

    /// Puts the objects of `before` back as they were (removing those that were nil).
    mutating func restore(_ before: [Int: Object?]) {
        for (handle, object) in before { objects[handle] = object }
    }
}
