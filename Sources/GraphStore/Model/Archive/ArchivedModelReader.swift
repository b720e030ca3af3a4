import Foundation

/// Turns the keyed archive of an `NSManagedObjectModel` (what Core Data keeps in a store's `Z_MODELCACHE`) into
/// entity declarations.
///
/// What is read, by class and key (found in the archives of real stores; `docs/any-store.md` lists them):
/// - `NSManagedObjectModel`: `NSEntities`, a dictionary of entity name to entity.
/// - `NSEntityDescription`: `NSEntityName`, `NSIsAbstract`, `NSSuperentity`, `NSProperties` (a sub-entity's include
///   the inherited ones, which are dropped here by name), `NSFetchIndexDescriptions`, `NSUniqueTuples`,
///   `NSCompoundIndexes`.
/// - Properties: `NSPropertyName`, and the flags `NSIsOptional`, `NSIsTransient`, `NSIsOrdered`, also packed in the
///   integer `_P` (bit 1 optional, bit 3 transient, bit 10 ordered) for archives that leave the keys out.
/// - `NSAttributeDescription` (and `NSDerivedAttributeDescription`): `NSAttributeType`, `NSDefaultValue`,
///   `NSValidationPredicates` (min, max and pattern), `NSDerivationExpression`.
/// - `NSRelationshipDescription`: `_NSDestinationEntityName`, `_NSInverseRelationshipName`, `NSMinCount`,
///   `NSMaxCount` (1 for a to-one), `NSDeleteRule`.
///
/// What a model declared here cannot hold (fetched properties, a transformable's default object, validation rules
/// other than a range or a pattern…) is left out and listed in `omissions`; anything else unexpected is an error.
struct ArchivedModelReader {
    private let archive: KeyedArchive
    private(set) var omissions: [String] = []
    private var problems: [String] = []

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// The entities the archive declares, in name order, or the problems that stop it from being read.
    mutating func read() -> Result<[EntityDescription], ModelError> {
        guard let root = archive.object(at: archive.root), root.className == "NSManagedObjectModel" else {
            return .failure(ModelError(problems: ["its root is not an NSManagedObjectModel"]))
        }
        guard let entries = archive.dictionary(root.fields["NSEntities"]) else {
            return .failure(ModelError(problems: ["the model has no readable NSEntities"]))
        }
        var objects: [(name: String, object: KeyedArchive.Object)] = []
        for entry in entries {
            guard let object = archive.object(entry.value), object.className == "NSEntityDescription" else {
                problems.append("entity '\(entry.key)' is not an NSEntityDescription")
                continue
            }
            objects.append((entry.key, object))
        }
        let entities = objects.sorted { $0.name < $1.name }.map { entity($0.object, name: $0.name) }
        guard problems.isEmpty else { return .failure(ModelError(problems: problems)) }
        return .success(entities)
    }

    // MARK: Entities

    private mutating func entity(_ object: KeyedArchive.Object, name: String) -> EntityDescription {
        let fields = object.fields
        if let recorded = archive.string(fields["NSEntityName"]), recorded != name {
            problems.append("entity '\(name)' is named '\(recorded)' inside")
        }
        let parent = archive.object(fields["NSSuperentity"])
        let parentName = parent.flatMap { archive.string($0.fields["NSEntityName"]) }
        if parent != nil && parentName == nil { problems.append("entity '\(name)': its superentity has no name") }
        // Inherited properties are repeated in a sub-entity's NSProperties; the parent's names identify them.
        let inherited = Set(parent.flatMap { archive.dictionary($0.fields["NSProperties"]) }?.map(\.key) ?? [])

        var declaration = EntityDescription(name: name, isAbstract: archive.flag(fields["NSIsAbstract"]), parent: parentName)
        guard let properties = archive.dictionary(fields["NSProperties"]) else {
            problems.append("entity '\(name)' has no readable NSProperties")
            return declaration
        }
        for (propertyName, value) in properties.sorted(by: { $0.key < $1.key }) where !inherited.contains(propertyName) {
            let label = "\(name).\(propertyName)"
            guard let property = archive.object(value) else {
                problems.append("\(label) is not an archived property")
                continue
            }
            switch property.className {
            case "NSAttributeDescription", "NSDerivedAttributeDescription":
                if let attribute = attribute(property, name: propertyName, label: label) { declaration.attributes.append(attribute) }
            case "NSRelationshipDescription":
                if let relationship = relationship(property, name: propertyName, label: label) { declaration.relationships.append(relationship) }
            case "NSFetchedPropertyDescription":
                omissions.append("\(label): a fetched property (it has no column; its fetch request is not read)")
            default:
                problems.append("\(label) is a \(property.className), which is not supported")
            }
        }
        declaration.fetchIndexes = fetchIndexes(fields["NSFetchIndexDescriptions"], entity: name)
        declaration.uniquenessConstraints = nameLists(fields["NSUniqueTuples"], entity: name, what: "uniqueness constraint")
        applyCompoundIndexes(fields["NSCompoundIndexes"], to: &declaration)
        return declaration
    }

    /// The fetch indexes of an entity; one the model cannot declare (an expression element, a partial index) is left out.
    private mutating func fetchIndexes(_ field: Any?, entity: String) -> [FetchIndexDescription] {
        guard let indexes = archive.objects(field) else { return [] }
        var found: [FetchIndexDescription] = []
        for index in indexes where index.className == "NSFetchIndexDescription" {
            guard let name = archive.string(index.fields["NSIndexName"]) else {
                problems.append("\(entity): a fetch index has no name")
                continue
            }
            let label = "\(entity): fetch index '\(name)'"
            if archive.resolve(index.fields["NSPartialIndexPredicate"]) != nil {
                omissions.append("\(label): a partial index (its predicate cannot be declared here)")
                continue
            }
            var elements: [FetchIndexDescription.Element] = []
            var complete = true
            for element in archive.objects(index.fields["NSIndexElements"]) ?? [] {
                guard let property = propertyName(element.fields["NSPropertyName"]) ?? propertyName(element.fields["NSProperty"]) else {
                    complete = false
                    break
                }
                let kind = archive.integer(element.fields["NSFetchIndexElementType"]) == 1 ? "RTree" : "Binary"
                let ascending = element.fields["NSAscending"] == nil ? true : archive.flag(element.fields["NSAscending"])
                elements.append(.init(property: property, kind: kind, isAscending: ascending))
            }
            guard complete, !elements.isEmpty else {
                omissions.append("\(label): an element is an expression, not a property")
                continue
            }
            found.append(FetchIndexDescription(name: name, elements: elements))
        }
        return found
    }

    /// A property named by a string, or by the archived property itself.
    private func propertyName(_ field: Any?) -> String? {
        if let name = archive.string(field) { return name }
        return archive.object(field).flatMap { archive.string($0.fields["NSPropertyName"]) }
    }

    /// Lists of property names (`NSUniqueTuples`, `NSCompoundIndexes`).
    private mutating func nameLists(_ field: Any?, entity: String, what: String) -> [[String]] {
        guard let lists = archive.array(field) else { return [] }
        var found: [[String]] = []
        for list in lists {
            guard let fields = list as? [String: Any], let elements = fields["NS.objects"] as? [Any] else {
                problems.append("\(entity): a \(what) is not a list")
                continue
            }
            let names = elements.compactMap { propertyName($0) }
            guard names.count == elements.count, !names.isEmpty else {
                omissions.append("\(entity): a \(what) naming something other than properties")
                continue
            }
            found.append(names)
        }
        return found
    }

    /// `NSCompoundIndexes`, the older form of indexes: the archive repeats each fetch index there. One naming a
    /// single attribute that no fetch index covers is the attribute's own index (Xcode's "Indexed"); any other is
    /// left out.
    private mutating func applyCompoundIndexes(_ field: Any?, to declaration: inout EntityDescription) {
        let covered = Set(declaration.fetchIndexes.map { $0.elements.map(\.property) })
        for names in nameLists(field, entity: declaration.name, what: "compound index") where !covered.contains(names) {
            if names.count == 1, let position = declaration.attributes.firstIndex(where: { $0.name == names[0] }) {
                declaration.attributes[position].isIndexed = true
            } else {
                omissions.append("\(declaration.name): compound index (\(names.joined(separator: ", "))), not a fetch index")
            }
        }
    }

    // MARK: Properties

    /// `_P`'s bit for a flag, used when its key is absent.
    private func flag(_ key: String, bit: Int, in fields: [String: Any]) -> Bool {
        if fields[key] != nil { return archive.flag(fields[key]) }
        guard let packed = archive.integer(fields["_P"]) else { return false }
        return packed & bit != 0
    }

    private static let attributeTypes: [Int: AttributeType] = [
        100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float, 700: .string,
        800: .boolean, 900: .date, 1000: .binaryData, 1100: .uuid, 1200: .uri, 1800: .transformable, 2000: .objectID,
    ]

    private mutating func attribute(_ object: KeyedArchive.Object, name: String, label: String) -> AttributeDescription? {
        let fields = object.fields
        guard let code = archive.integer(fields["NSAttributeType"]) else {
            problems.append("\(label): no NSAttributeType")
            return nil
        }
        guard let type = Self.attributeTypes[code] else {
            problems.append("\(label): attribute type \(code) is not supported")
            return nil
        }
        var attribute = AttributeDescription(
            name: name, type: type,
            isOptional: flag("NSIsOptional", bit: 0x2, in: fields),
            isTransient: flag("NSIsTransient", bit: 0x8, in: fields))
        attribute.defaultValue = defaultValue(fields["NSDefaultValue"], type: type, label: label)
        readValidation(fields, into: &attribute, label: label)
        if object.className == "NSDerivedAttributeDescription" {
            let text = expressionText(fields["NSDerivationExpression"])
            if let text, Derivation(expression: text) != nil {
                attribute.derivation = text
            } else {
                omissions.append("\(label): derived by \(text.map { "'\($0)'" } ?? "an expression") that is not supported; read as a stored value")
            }
        }
        return attribute
    }

    /// A default value in Xcode's spelling (`YES`/`NO`, a number, a string, seconds since 2001 for a date).
    private mutating func defaultValue(_ field: Any?, type: AttributeType, label: String) -> String? {
        guard let value = archive.resolve(field) else { return nil }
        switch value {
        case let flag as Bool:
            return type == .boolean ? (flag ? "YES" : "NO") : (flag ? "1" : "0")
        case let text as String:
            return text
        case let number as Int:
            return type == .boolean ? (number != 0 ? "YES" : "NO") : String(number)
        case let number as Double:
            return Self.numberText(number)
        case let number as NSNumber:
            return type == .boolean ? (number.boolValue ? "YES" : "NO") : Self.numberText(number.doubleValue)
        default:
            break
        }
        guard let object = archive.object(field) else {
            omissions.append("\(label): a default value that is not readable")
            return nil
        }
        switch object.className {
        case "NSDate":
            if let seconds = object.fields["NS.time"] as? Double { return Self.numberText(seconds) }
        case "NSString", "NSMutableString":
            if let text = archive.string(field) { return text }
        case "NSUUID":
            if let bytes = object.fields["NS.uuidbytes"] as? Data, bytes.count == 16 {
                let uuid = bytes.withUnsafeBytes { raw in UUID(uuid: raw.loadUnaligned(as: uuid_t.self)) }
                return uuid.uuidString
            }
        case "NSURL":
            if archive.resolve(object.fields["NS.base"]) == nil, let text = archive.string(object.fields["NS.relative"]) { return text }
        default:
            break
        }
        omissions.append("\(label): a default value of class \(object.className)")
        return nil
    }

    /// A number as Xcode writes it: whole numbers without a fraction.
    static func numberText(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 9.0e15 { return String(Int64(number)) }
        return String(number)
    }

    /// Validation predicates that are a range or a pattern: `length >= n` / `<= n` for a string, `SELF >= n` /
    /// `<= n` for a number or date, `SELF MATCHES pattern`. Others are left out.
    private mutating func readValidation(_ fields: [String: Any], into attribute: inout AttributeDescription, label: String) {
        guard let predicates = archive.objects(fields["NSValidationPredicates"]) else { return }
        var pending = predicates
        while let predicate = pending.popLast() {
            if predicate.className == "NSCompoundPredicate", archive.integer(predicate.fields["NSCompoundPredicateType"]) == 1,
               let parts = archive.objects(predicate.fields["NSSubpredicates"]) {
                pending += parts
                continue
            }
            if predicate.className == "NSComparisonPredicate", apply(predicate, to: &attribute) { continue }
            omissions.append("\(label): a validation rule other than a range or a pattern")
        }
    }

    private func apply(_ predicate: KeyedArchive.Object, to attribute: inout AttributeDescription) -> Bool {
        guard let operation = archive.object(predicate.fields["NSPredicateOperator"]),
              let operatorType = archive.integer(operation.fields["NSOperatorType"]),
              let left = archive.object(predicate.fields["NSLeftExpression"]),
              let right = archive.object(predicate.fields["NSRightExpression"]),
              right.className == "NSConstantValueExpression" else { return false }
        let subject = left.className == "NSSelfExpression" ? "SELF" : expressionText(predicate.fields["NSLeftExpression"])
        let constant = archive.resolve(right.fields["NSConstantValue"])
        let text: String?
        switch constant {
        case let text as String where operatorType == 6: return subject == "SELF" ? set(\.regularExpression, text, on: &attribute) : false
        case let number as Int: text = String(number)
        case let number as Double: text = Self.numberText(number)
        case let number as NSNumber: text = Self.numberText(number.doubleValue)
        default:
            if let date = archive.object(right.fields["NSConstantValue"]), date.className == "NSDate", let seconds = date.fields["NS.time"] as? Double {
                text = Self.numberText(seconds)
            } else {
                text = nil
            }
        }
        guard let text else { return false }
        let expected = attribute.type == .string ? "length" : "SELF"
        guard subject == expected else { return false }
        switch operatorType {
        case 3: return set(\.minValue, text, on: &attribute)
        case 1: return set(\.maxValue, text, on: &attribute)
        default: return false
        }
    }

    private func set(_ field: WritableKeyPath<AttributeDescription, String?>, _ value: String, on attribute: inout AttributeDescription) -> Bool {
        guard attribute[keyPath: field] == nil else { return false }
        attribute[keyPath: field] = value
        return true
    }

    /// The text of a key-path expression (`pages.@count`, `sender.name`) or of `count:` over one (`pages.@count`);
    /// nil for any other expression.
    private func expressionText(_ field: Any?) -> String? {
        archive.object(field).flatMap(expressionText(of:))
    }

    private func expressionText(of expression: KeyedArchive.Object) -> String? {
        switch expression.className {
        case "NSKeyPathExpression":
            if let path = archive.string(expression.fields["NSKeyPath"]) { return path }
            guard let arguments = archive.objects(expression.fields["NSArguments"]), arguments.count == 1 else { return nil }
            return expressionText(of: arguments[0])
        case "NSKeyPathSpecifierExpression":
            return archive.string(expression.fields["NSKeyPath"])
        case "NSFunctionExpression":
            guard archive.string(expression.fields["NSSelectorName"]) == "count:",
                  let arguments = archive.objects(expression.fields["NSArguments"]), arguments.count == 1,
                  let path = expressionText(of: arguments[0]) else { return nil }
            return path + ".@count"
        default:
            return nil
        }
    }

    private mutating func relationship(_ object: KeyedArchive.Object, name: String, label: String) -> RelationshipDescription? {
        let fields = object.fields
        let destination = archive.string(fields["_NSDestinationEntityName"])
            ?? archive.object(fields["NSDestinationEntity"]).flatMap { archive.string($0.fields["NSEntityName"]) }
        guard let destination else {
            problems.append("\(label): no destination entity")
            return nil
        }
        let inverse = archive.string(fields["_NSInverseRelationshipName"])
            ?? archive.object(fields["NSInverseRelationship"]).flatMap { archive.string($0.fields["NSPropertyName"]) }
        let maxCount = archive.integer(fields["NSMaxCount"]) ?? 0
        let minCount = archive.integer(fields["NSMinCount"]) ?? 0
        let isToMany = maxCount != 1
        let deleteRule: DeleteRule
        switch archive.integer(fields["NSDeleteRule"]) ?? 1 {
        case 0: deleteRule = .noAction
        case 1: deleteRule = .nullify
        case 2: deleteRule = .cascade
        case 3: deleteRule = .deny
        case let other:
            problems.append("\(label): delete rule \(other) is not known")
            return nil
        }
        return RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: isToMany,
            isOrdered: isToMany && flag("NSIsOrdered", bit: 0x400, in: fields),
            isOptional: flag("NSIsOptional", bit: 0x2, in: fields),
            isTransient: flag("NSIsTransient", bit: 0x8, in: fields),
            deleteRule: deleteRule,
            // Counts are kept for to-manys only, as from a model file; no upper bound is 0 (archives write 0 or -1).
            minCount: isToMany ? max(0, minCount) : 0,
            maxCount: isToMany ? max(0, maxCount) : 0)
    }
}
