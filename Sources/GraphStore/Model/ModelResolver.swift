import Foundation

/// Turns declarations into numbered entities, checking everything a store relies on.
///
/// All problems are collected before throwing, so a model file with three mistakes reports three.
struct ModelResolver {
    private let declarations: [EntityDescription]
    private var byName: [String: EntityDescription] = [:]
    private var problems: [String] = []
    private var warnings: [ModelWarning] = []

    init(_ declarations: [EntityDescription]) {
        self.declarations = declarations
    }

    mutating func resolve() throws(ModelError) -> (entities: [Entity], warnings: [ModelWarning]) {
        checkEntityNames()
        checkInheritance()
        guard problems.isEmpty else { throw ModelError(problems: problems) }

        // The unwraps here cannot fail: parents are filtered to non-nil, every name in `ordered` gets a subtree end and
        // is a declared name (declared once, checked above), and a chain always holds its first name.
        let children = Dictionary(grouping: declarations.filter { $0.parent != nil }, by: { $0.parent! })
            .mapValues { $0.map(\.name).sorted() }
        // Roots alphabetically, each followed by its sub-entities depth-first. A loop with a stack of its own, not
        // recursion: a model file may chain thousands of entities. An entity's descendants are the entities after
        // it up to the end of its subtree (asking every entity for its ancestry instead made a chain of 2,000
        // entities take billions of steps).
        var ordered: [String] = []
        var subtreeEnds: [String: Int] = [:]
        var pending: [(name: String, isEnd: Bool)] = declarations.filter { $0.parent == nil }.map(\.name).sorted().reversed().map { ($0, false) }
        while let (name, isEnd) = pending.popLast() {
            if isEnd {
                subtreeEnds[name] = ordered.count
                continue
            }
            ordered.append(name)
            pending.append((name, true))
            pending += (children[name] ?? []).reversed().map { ($0, false) }
        }

        var entities: [Entity] = []
        for (offset, name) in ordered.enumerated() {
            let chain = ancestry(of: name)
            let descendants = Array(ordered[(offset + 1)..<subtreeEnds[name]!])
            entities.append(Entity(
                declaration: byName[name]!,
                number: offset + 1,
                rootName: chain.last!,
                subentityNames: children[name] ?? [],
                descendantNames: descendants,
                attributes: chain.reversed().flatMap { byName[$0]!.attributes },
                relationships: chain.reversed().flatMap { byName[$0]!.relationships }
            ))
        }
        let lookup = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
        for entity in entities {
            checkProperties(of: entity, in: lookup)
        }
        guard problems.isEmpty else { throw ModelError(problems: problems) }
        return (entities, warnings)
    }

    /// The entity's name, then its parent's, up to the root.
    private func ancestry(of name: String) -> [String] {
        var chain = [name]
        while let parent = byName[chain.last!]?.parent { chain.append(parent) }  // cannot fail: never empty
        return chain
    }

    private mutating func checkEntityNames() {
        if declarations.isEmpty { problems.append("the model has no entities") }
        for declaration in declarations {
            if !Self.isValidName(declaration.name) {
                problems.append("entity '\(declaration.name)': the name must start with a letter and hold only letters, digits and '_'")
            }
            if byName[declaration.name] != nil {
                problems.append("entity '\(declaration.name)' is declared more than once")
            } else {
                byName[declaration.name] = declaration
            }
        }
        for (first, second) in Self.caseCollisions(declarations.map(\.name)) {
            problems.append("entities '\(first)' and '\(second)' differ only in case: SQLite names ignore case, so both would be "
                + "stored as Z\(first.uppercased())")
        }
    }

    /// Pairs of distinct names that are the same once upper-cased, as Core Data upper-cases names into tables and
    /// columns (and SQLite compares names without case), in the order the second of each pair appears.
    static func caseCollisions(_ names: [String]) -> [(String, String)] {
        var seen: [String: String] = [:]
        var pairs: [(String, String)] = []
        var reported: Set<String> = []
        for name in names {
            let folded = name.uppercased()
            guard let earlier = seen[folded] else {
                seen[folded] = name
                continue
            }
            if earlier != name, reported.insert(name).inserted { pairs.append((earlier, name)) }
        }
        return pairs
    }

    /// How many levels of parents an entity may have. Every entity keeps its inherited properties and its
    /// descendants, which grow with the depth of the chain, so a model file chaining thousands of entities would
    /// take minutes and gigabytes to build; no real model comes near this.
    static let maximumInheritanceDepth = 100

    private mutating func checkInheritance() {
        // How many parents each entity has, for entities whose chain is known to end at a root: a walk that reaches
        // one stops there, so a long chain is walked once, not once per entity in it.
        var depths: [String: Int] = [:]
        for declaration in declarations {
            guard let parent = declaration.parent else { continue }
            if byName[parent] == nil {
                problems.append("entity '\(declaration.name)': unknown parent entity '\(parent)'")
                continue
            }
            var path: [String] = [declaration.name]
            var seen: Set<String> = [declaration.name]
            var current = parent
            // The depth of the parent of `path.last`: -1 while the walk has not found it (`path.last` is a root).
            var depthAbove = -1
            var isCycle = false
            while true {
                if let known = depths[current] {
                    depthAbove = known
                    break
                }
                if seen.contains(current) {
                    let cycle = (path + [current]).joined(separator: " → ")
                    problems.append("entity '\(declaration.name)': inheritance cycle \(cycle)")
                    isCycle = true
                    break
                }
                path.append(current)
                seen.insert(current)
                guard let next = byName[current]?.parent, byName[next] != nil else { break }
                current = next
            }
            guard !isCycle else { continue }
            for (offset, name) in path.reversed().enumerated() where depths[name] == nil {
                let depth = depthAbove + 1 + offset
                depths[name] = depth
                if depth == Self.maximumInheritanceDepth + 1 {
                    problems.append("entity '\(name)': inherits through more than \(Self.maximumInheritanceDepth) levels of parent entities")
                }
            }
        }
    }

    private mutating func checkProperties(of entity: Entity, in lookup: [String: Entity]) {
        let label = "entity '\(entity.name)'"
        var names: Set<String> = []
        for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
            if !Self.isValidName(name) {
                problems.append("\(label): property '\(name)': the name must start with a letter and hold only letters, digits and '_'")
            }
            if !names.insert(name).inserted {
                problems.append("\(label): property '\(name)' is declared more than once (own or inherited)")
            }
        }
        // Reported where the second of the two is declared, so an inherited pair is reported once, on the entity
        // that brings it in. Sibling sub-entities may share a name: their columns are numbered, as Core Data does.
        let ownNames = Set(entity.declaration.attributes.map(\.name) + entity.declaration.relationships.map(\.name))
        for (first, second) in Self.caseCollisions(entity.attributes.map(\.name) + entity.relationships.map(\.name))
        where ownNames.contains(first) || ownNames.contains(second) {
            problems.append("\(label): properties '\(first)' and '\(second)' differ only in case: SQLite names ignore case, so both "
                + "would be stored as Z\(first.uppercased())")
        }
        for (first, second) in Self.caseCollisions(entity.declaration.fetchIndexes.map(\.name)) {
            problems.append("\(label): fetch indexes '\(first)' and '\(second)' differ only in case: SQLite names ignore case, so both "
                + "would be index Z_\(entity.name)_\(first)")
        }
        if entity.isAbstract && !entity.hasSubentities {
            warnings.append(ModelWarning(entity: entity.name, message: "abstract entity has no sub-entities, so no object of it can exist"))
        }
        // Inherited properties are checked where they are declared.
        for attribute in entity.declaration.attributes {
            checkAttribute(attribute, of: entity, in: lookup)
        }
        for relationship in entity.declaration.relationships {
            checkRelationship(relationship, of: entity, in: lookup)
        }
        for index in entity.declaration.fetchIndexes {
            if index.elements.isEmpty {
                problems.append("\(label): fetch index '\(index.name)' has no elements")
            }
            for element in index.elements {
                if !names.contains(element.property) {
                    problems.append("\(label): fetch index '\(index.name)' names unknown property '\(element.property)'")
                } else if let problem = Self.columnProblem(of: element.property, in: entity) {
                    problems.append("\(label): fetch index '\(index.name)' names \(problem), which has no column to index")
                }
            }
        }
        for constraint in entity.declaration.uniquenessConstraints {
            if constraint.isEmpty { problems.append("\(label): an empty uniqueness constraint") }
            for property in constraint where !names.contains(property) {
                problems.append("\(label): uniqueness constraint names unknown property '\(property)'")
            }
            for property in constraint where entity.relationship(named: property)?.isToMany == true {
                problems.append("\(label): uniqueness constraint names to-many relationship '\(property)'")
            }
            for property in constraint where entity.relationship(named: property)?.isToMany != true {
                if let problem = Self.columnProblem(of: property, in: entity) {
                    problems.append("\(label): uniqueness constraint names \(problem), which has no column")
                }
            }
        }
    }

    private mutating func checkAttribute(_ attribute: AttributeDescription, of entity: Entity, in lookup: [String: Entity]) {
        let label = "entity '\(entity.name)': attribute '\(attribute.name)'"
        if let text = attribute.defaultValue, AttributeValueText.parse(text, as: attribute.type) == nil {
            problems.append("\(label): default value '\(text)' is not a valid \(attribute.type.rawValue)")
        }
        for (key, text) in [("minimum", attribute.minValue), ("maximum", attribute.maxValue)] {
            guard let text else { continue }
            if Double(text) == nil {
                problems.append("\(label): \(key) '\(text)' is not a number")
            }
        }
        if let minimum = attribute.minValue.flatMap(Double.init), let maximum = attribute.maxValue.flatMap(Double.init), minimum > maximum {
            problems.append("\(label): minimum \(attribute.minValue!) is greater than maximum \(attribute.maxValue!)")  // cannot fail: both parsed above
        }
        if let pattern = attribute.regularExpression {
            if attribute.type != .string {
                problems.append("\(label): a regular expression applies only to String attributes")
            } else if (try? NSRegularExpression(pattern: pattern)) == nil {
                problems.append("\(label): '\(pattern)' is not a valid regular expression")
            }
        }
        guard let expression = attribute.derivation else { return }
        guard let derivation = Derivation(expression: expression) else {
            problems.append("\(label): derivation '\(expression)' is not supported (use 'toMany.@count' or 'toOne.attribute')")
            return
        }
        if attribute.isTransient {
            problems.append("\(label): a derived attribute cannot be transient")
        }
        guard let relationship = entity.relationship(named: derivation.relationship) else {
            problems.append("\(label): derivation '\(expression)' names unknown relationship '\(derivation.relationship)'")
            return
        }
        if relationship.isTransient {
            problems.append("\(label): derivation '\(expression)' goes through transient relationship '\(relationship.name)', which the store does not keep")
        }
        switch derivation {
        case .count:
            if !relationship.isToMany {
                problems.append("\(label): derivation '\(expression)' counts to-one relationship '\(relationship.name)'")
            }
            if attribute.type.integerRange == nil {
                problems.append("\(label): a count must be an Integer 16, 32 or 64 attribute")
            }
        case .copy(_, let name):
            if relationship.isToMany {
                problems.append("\(label): derivation '\(expression)' copies through to-many relationship '\(relationship.name)'")
            } else if let destination = lookup[relationship.destination] {
                if let source = destination.attribute(named: name) {
                    if source.type != attribute.type {
                        problems.append("\(label): derivation '\(expression)' copies a \(source.type.rawValue) into a \(attribute.type.rawValue)")
                    }
                    if source.isTransient || source.isDerived {
                        problems.append("\(label): derivation '\(expression)' copies an attribute that is not stored as set")
                    }
                } else {
                    problems.append("\(label): derivation '\(expression)': entity '\(destination.name)' has no attribute '\(name)'")
                }
            }
        }
    }

    private mutating func checkRelationship(_ relationship: RelationshipDescription, of entity: Entity, in lookup: [String: Entity]) {
        let label = "entity '\(entity.name)': relationship '\(relationship.name)'"
        guard let destination = lookup[relationship.destination] else {
            problems.append("\(label): unknown destination entity '\(relationship.destination)'")
            return
        }
        if relationship.isToMany && relationship.maxCount > 0 && relationship.minCount > relationship.maxCount {
            problems.append("\(label): minimum count \(relationship.minCount) is greater than maximum count \(relationship.maxCount)")
        }
        if relationship.minCount < 0 || relationship.maxCount < 0 {
            problems.append("\(label): counts cannot be negative")
        }
        guard let inverseName = relationship.inverse else {
            if relationship.isPersistent {
                let shape = relationship.isToMany
                    ? "many-to-nil: Faultline keeps it in a join table, so no link is lost"
                    : "one-to-nil"
                warnings.append(ModelWarning(
                    entity: entity.name, property: relationship.name,
                    message: "has no inverse (\(shape)); deletes and edits on '\(destination.name)' will not update it"))
            }
            return
        }
        guard let inverse = destination.relationship(named: inverseName) else {
            problems.append("\(label): unknown inverse '\(inverseName)' on entity '\(destination.name)'")
            return
        }
        if inverse.inverse != relationship.name {
            let named = inverse.inverse.map { "'\($0)'" } ?? "none"
            problems.append("\(label): its inverse '\(destination.name).\(inverseName)' names \(named) as its inverse, not '\(relationship.name)'")
        } else if inverse.destination != entity.name && !lookup[inverse.destination].map({ $0.includes(entity.name) }).unwrapOrFalse {
            problems.append("\(label): its inverse '\(destination.name).\(inverseName)' points at '\(inverse.destination)', not '\(entity.name)'")
        }
        if inverse.isTransient != relationship.isTransient {
            problems.append("\(label): it and its inverse '\(destination.name).\(inverseName)' must both be transient or both persistent")
        }
    }

    /// Why a property of `entity` has no column of its own: a transient, or a to-many; nil when it has one.
    private static func columnProblem(of property: String, in entity: Entity) -> String? {
        if let attribute = entity.attribute(named: property), attribute.isTransient { return "transient attribute '\(property)'" }
        guard let relationship = entity.relationship(named: property) else { return nil }
        if relationship.isTransient { return "transient relationship '\(property)'" }
        if relationship.isToMany { return "to-many relationship '\(property)'" }
        return nil
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "_" }
    }
}

extension Optional where Wrapped == Bool {
    fileprivate var unwrapOrFalse: Bool { self ?? false }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
