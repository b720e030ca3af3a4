import Collections
import Foundation

/// Validation at save: the model's rules checked against pending changes before anything is written.
///
/// What is checked:
/// - inserted objects (not deleted): every rule on every stored attribute and relationship;
/// - updated objects (persisted, changed, not deleted): the rules of the attributes, to-ones and to-manys that
///   changed. Unchanged values were checked when they were saved, and reading them could fire faults.
/// - deleted objects: nothing.
///
/// The rules, in the order failures are listed for an object:
/// - attributes (not transient or derived): a required one must not be nil; a non-nil value must lie within the
///   minimum and maximum (numbers and dates by value, dates' bounds being seconds since 2001 as Xcode writes them;
///   strings by length in UTF-16 units, as `NSString` counts; binary data by length in bytes), and a string must
///   match the regular expression as a whole (`PredicateFunctions.matches` with `.matches`: ICU syntax, anchored
///   at both ends);
/// - to-ones: a required one must point at an object that is not deleted;
/// - to-manys: members (deleted ones not counted) must number at least `minCount` and at most `maxCount` (0: no
///   bound). As in Core Data, an optional to-many may be empty whatever its `minCount`; a required one needs at
///   least one member;
/// - uniqueness constraints (declared on the entity or an ancestor): no two objects of the declaring entity's
///   hierarchy, pending or stored, have equal values for all the constraint's keys. A value with a nil key is
///   never a duplicate, as in SQLite's unique indexes. Pending objects are compared in memory; the store is asked
///   with one SELECT per constraint (split only when the values would pass SQLite's limit of bound parameters).
///
/// Objects are listed inserted ones first (in insertion order), then updated ones by object ID.
extension ObjectContext {
    func validateForSave() throws(ContextError) {
        var objects = insertedList.filter { !$0.state.isDeleted }
        objects += changedObjects.values
            .filter { !$0.state.isInserted && !$0.state.isDeleted && $0.hasPersistentChanges }
            .sorted { $0.objectID < $1.objectID }
        guard !objects.isEmpty else { return }
        var rules: [ValidationRules?] = Array(repeating: nil, count: model.entities.count)
        var report = ValidationReport()
        for (position, object) in objects.enumerated() {
            let number = object.mapping.number
            let entityRules: ValidationRules
            if let known = rules[number - 1] {
                entityRules = known
            } else {
                entityRules = ValidationRules(object.mapping)
                rules[number - 1] = entityRules
            }
            check(object, at: position, against: entityRules, into: &report)
        }
        try checkUniqueness(of: objects, into: &report)
        guard !report.isEmpty else { return }
        throw .validation(report.failures)
    }

    // MARK: attributes and relationships

    private func check(_ object: ManagedObject, at position: Int, against rules: ValidationRules, into report: inout ValidationReport) {
        let inserted = object.state.isInserted
        for rule in rules.attributes {
            let value: AttributeValue
            if inserted {
                value = object.newValue(at: rule.index)
            } else if let changed = object.attributeChanges[rule.index] {
                value = changed
            } else {
                continue
            }
            if let reason = rule.problem(with: value) { report.add(object, rule.name, reason, at: position) }
        }
        for rule in rules.toOnes {
            let destination: ObjectID?
            if inserted {
                destination = object.newKey(at: rule.index)
            } else if let changed = object.toOneChanges[rule.index] {
                destination = changed
            } else {
                continue
            }
            if destination.map(isDeletedHere) ?? true { report.add(object, rule.name, "is required", at: position) }
        }
        for rule in rules.toManys {
            let state = object.toManyStates[rule.index]
            let members: [ObjectID]
            if inserted {
                members = state.map { $0.members ?? $0.addedOnce } ?? []
            } else if state?.hasChanges == true {
                members = self.members(of: object, toMany: rule.index)
            } else {
                continue
            }
            let count = members.reduce(0) { isDeletedHere($1) ? $0 : $0 + 1 }
            if let reason = rule.problem(withCount: count) { report.add(object, rule.name, reason, at: position) }
        }
    }

    /// Whether the object with `id` will be gone after this save (deleted, or an inserted object deleted again).
    private func isDeletedHere(_ id: ObjectID) -> Bool {
        if id.isTemporary { return insertedObject(for: id) == nil }
        return registry[id]?.object.state.isDeleted ?? false
    }

    // MARK: uniqueness

    private func checkUniqueness(of objects: [ManagedObject], into report: inout ValidationReport) throws(ContextError) {
        for entity in model.entities where !entity.declaration.uniquenessConstraints.isEmpty {
            for keys in entity.declaration.uniquenessConstraints where !keys.isEmpty {
                try checkConstraint(keys, declaredOn: entity, objects: objects, into: &report)
            }
        }
    }

    /// One constraint: candidates are inserted objects of the entity's hierarchy and updated ones whose keys
    /// changed; they are grouped by value, each group of more than one is a duplicate, then the store is asked for
    /// rows holding any group's values.
    private func checkConstraint(_ keys: [String], declaredOn entity: Entity, objects: [ManagedObject], into report: inout ValidationReport) throws(ContextError) {
        guard let declaring = coordinator.mapping(forEntity: entity.name) else { return }
        let constraintKey = keys.joined(separator: ",")
        /// Candidate positions in `objects` by their values (only fully non-nil values take part).
        var groups: OrderedDictionary<[UniqueComponent], [Int]> = [:]
        /// Updated candidates: their stored rows hold old values, so the store's answer must not count them.
        var movedIDs = Set<ObjectID>()
        let numbers = [entity.number] + entity.descendantNames.compactMap { model.entity(named: $0)?.number }
        /// The keys' slots by entity number, for the entities the constraint covers (nil elsewhere).
        var slotsByNumber: [[EntityMapping.Slot]?] = Array(repeating: nil, count: model.entities.count + 1)
        for number in numbers {
            let mapping = coordinator.mapping(forEntityNumber: number)
            let slots = keys.compactMap { mapping.slot(forKey: $0) }
            if slots.count == keys.count { slotsByNumber[number] = slots }
        }
        for (position, object) in objects.enumerated() {
            guard let slots = slotsByNumber[object.mapping.number] else { continue }
            if !object.state.isInserted {
                let changed = slots.contains { slot in
                    switch slot {
                    case .attribute(let index): object.attributeChanges[index] != nil
                    case .toOne(let index): object.toOneChanges[index] != nil
                    default: false
                    }
                }
                guard changed else { continue }
                movedIDs.insert(object.objectID)
            }
            guard let components = uniqueComponents(of: object, slots: slots) else { continue }
            groups[components, default: []].append(position)
        }
        guard !groups.isEmpty else { return }

        var failed = Set<Int>()
        func fail(_ position: Int, against other: String, values: [UniqueComponent]) {
            guard failed.insert(position).inserted else { return }
            let object = objects[position]
            let described = zip(keys, values).map { "\($0) \(describe($1))" }.joined(separator: ", ")
            report.add(ValidationFailure(entity: object.entityName, objectURI: object.uriRepresentation, key: constraintKey,
                                         reason: "is not unique: another \(other) has \(described)"), at: position)
        }
        for (values, positions) in groups where positions.count > 1 {
            for (offset, position) in positions.enumerated() {
                // Name another member of the group: the next one, or the first for the last.
                let other = objects[positions[(offset + 1) % positions.count]]
                fail(position, against: other.entityName, values: values)
            }
        }

        // Values naming an unsaved object cannot be in the store.
        let queried = groups.keys.enumerated().filter { !$0.element.contains(where: \.isTemporaryObject) }
        guard !queried.isEmpty else { return }
        let columns: [String] = keys.compactMap { key in
            switch declaring.slot(forKey: key) {
            case .attribute(let index)?: declaring.attributes[index].column
            case .toOne(let index)?: declaring.toOnes[index].column
            default: nil
            }
        }
        guard columns.count == keys.count else { return }
        let groupsPerStatement = max(1, Self.boundParameterLimit / (keys.count + 1))
        var matches: [(group: Int, id: ObjectID)] = []
        var start = 0
        while start < queried.count {
            let chunk = queried[start..<min(start + groupsPerStatement, queried.count)]
            start += chunk.count
            let statement = MappingSQL.rowsMatchingGroups(declaring, columns: columns, entities: declaring.tableHasSubentities ? numbers : nil,
                                                          groups: chunk.map { ($0.offset, $0.element.map(\.argument)) })
            try coordinator.reading(cause: .other("validation of \(entity.name) unique \(constraintKey)"), context: id) { runner in
                try runner.query(statement) { row in
                    let number = declaring.tableHasSubentities ? row.int64(1) : Int64(declaring.number)
                    matches.append((row.int(0), ObjectID.stored(entity: number, of: declaring.entityNumbers, key: row.int64(2))))
                }
            }
        }
        for (group, rowID) in matches where !movedIDs.contains(rowID) && !isDeletedHere(rowID) {
            let other = coordinator.mapping(forEntityNumber: rowID.entityNumber).name
            let values = groups.keys[group]
            for position in groups.values[group] { fail(position, against: other, values: values) }
        }
    }

    /// SQLite's default cap on bound parameters is 32766; stay under it.
    private static let boundParameterLimit = 30_000

    /// The values of a candidate's constraint keys, or nil when one is nil.
    private func uniqueComponents(of object: ManagedObject, slots: [EntityMapping.Slot]) -> [UniqueComponent]? {
        // No capacity reserved: most candidates with a nil key return before allocating.
        var components: [UniqueComponent] = []
        for slot in slots {
            switch slot {
            case .attribute(let index):
                let value = object.state.isInserted ? object.newValue(at: index) : object.attributeValue(ResolvedKey(slot: slot, key: object.mapping.attributes[index].name))
                // Text compares byte for byte, as the store's BINARY unique index does (`AttributeValue`'s `==`).
                if value.isNull { return nil }
                components.append(.value(value))
            case .toOne(let index):
                guard let destination = object.destinationID(ofToOne: index) else { return nil }
                components.append(.object(destination))
            default:
                return nil
            }
        }
        return components
    }

    private func describe(_ component: UniqueComponent) -> String {
        switch component {
        case .object(let id): uri(for: id)
        case .value(let value): ValidationRules.describe(value)
        }
    }
}

/// One key value of a uniqueness candidate, comparable the way the store's unique index compares.
enum UniqueComponent: Hashable {
    case value(AttributeValue)
    /// A to-one's destination: its primary key decides (keys are unique across an entity hierarchy).
    case object(ObjectID)

    static func == (lhs: UniqueComponent, rhs: UniqueComponent) -> Bool {
        switch (lhs, rhs) {
        case (.value(let a), .value(let b)): a == b
        case (.object(let a), .object(let b)): a.primaryKey == b.primaryKey
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .value(let value): hasher.combine(1); hasher.combine(value)
        case .object(let id): hasher.combine(2); hasher.combine(id.primaryKey)
        }
    }

    var isTemporaryObject: Bool {
        if case .object(let id) = self { return id.isTemporary }
        return false
    }

    /// The value bound in the store query.
    var argument: AttributeValue {
        switch self {
        case .value(let value): value
        case .object(let id): .integer(id.primaryKey)
        }
    }
}

/// Failures by object position, so that each object's come out together and objects in save order.
struct ValidationReport {
    private var byPosition: [Int: [ValidationFailure]] = [:]

    var isEmpty: Bool { byPosition.isEmpty }

    mutating func add(_ failure: ValidationFailure, at position: Int) {
        byPosition[position, default: []].append(failure)
    }

    mutating func add(_ object: ManagedObject, _ key: String, _ reason: String, at position: Int) {
        add(ValidationFailure(entity: object.entityName, objectURI: object.uriRepresentation, key: key, reason: reason), at: position)
    }

    var failures: [ValidationFailure] {
        byPosition.keys.sorted().flatMap { byPosition[$0]! }  // cannot fail: keys of the dictionary
    }
}
