import Foundation
import GraphStore
import TerminalText

/// The `model` command's output: a readable summary or JSON, built from one description of the model.
struct ModelReport: Encodable {
    struct AttributeInfo: Encodable {
        let name: String
        let type: String
        let optional: Bool
        let transient: Bool
        let defaultValue: String?
        let minimum: String?
        let maximum: String?
        let regularExpression: String?
        let derivation: String?
        let column: String?
    }

    struct RelationshipInfo: Encodable {
        let name: String
        let destination: String
        let inverse: String?
        let cardinality: String
        let ordered: Bool
        let optional: Bool
        let transient: Bool
        let deleteRule: String
        let minCount: Int
        let maxCount: Int
        let storage: String
    }

    struct EntityInfo: Encodable {
        let name: String
        let number: Int
        let table: String
        let abstract: Bool
        let parent: String?
        let subentities: [String]
        let attributes: [AttributeInfo]
        let relationships: [RelationshipInfo]
        let fetchIndexes: [String]
        let uniquenessConstraints: [[String]]
    }

    /// The model file or store the model was read from; the JSON leaves it out, so that a model read from a store
    /// and from the model file that made it print the same.
    let file: String
    /// Where the model came from, for the summary's first line (`Core Data's model cache`…); nil for a model file.
    let source: String?
    let entities: [EntityInfo]
    let warnings: [String]
    /// What the source declares that the model cannot hold, left out of both outputs (see `StoredModel.omissions`).
    let leftOut: [String]

    private enum CodingKeys: String, CodingKey {
        case entities, warnings, leftOut
    }

    init(file: String, schema: StoreSchema, source: String? = nil, leftOut: [String] = []) {
        self.file = file
        self.source = source
        self.leftOut = leftOut
        let model = schema.model
        self.warnings = model.warnings.map(\.description)
        self.entities = model.entities.map { entity in
            EntityInfo(
                name: entity.name,
                number: entity.number,
                table: schema.table(for: entity.name)?.name ?? "",
                abstract: entity.isAbstract,
                parent: entity.parentName,
                subentities: entity.subentityNames,
                attributes: entity.declaration.attributes.map { attribute in
                    AttributeInfo(
                        name: attribute.name, type: attribute.type.rawValue, optional: attribute.isOptional,
                        transient: attribute.isTransient, defaultValue: attribute.defaultValue,
                        minimum: attribute.minValue, maximum: attribute.maxValue,
                        regularExpression: attribute.regularExpression, derivation: attribute.derivation,
                        column: schema.column(forAttribute: attribute.name, of: entity.name))
                },
                relationships: entity.declaration.relationships.map { relationship in
                    let inverse = model.inverse(of: relationship)
                    return RelationshipInfo(
                        name: relationship.name, destination: relationship.destination, inverse: relationship.inverse,
                        cardinality: Self.cardinality(relationship, inverse: inverse),
                        ordered: relationship.isOrdered, optional: relationship.isOptional,
                        transient: relationship.isTransient, deleteRule: relationship.deleteRule.rawValue,
                        minCount: relationship.minCount, maxCount: relationship.maxCount,
                        storage: Self.describe(schema.storage(forRelationship: relationship.name, of: entity.name), in: schema, entity: entity))
                },
                fetchIndexes: entity.declaration.fetchIndexes.map(\.name),
                uniquenessConstraints: entity.declaration.uniquenessConstraints)
        }
    }

    /// A default value in one spelling per value: `1.0` and `1` for a number are the same default, as are `YES`,
    /// `true` and `1` for a boolean. (Xcode writes what was typed; a model cache holds the value.)
    static func canonical(_ text: String?, type: AttributeType) -> String? {
        guard let text else { return nil }
        switch type {
        case .boolean:
            switch text.lowercased() {
            case "yes", "true", "1": return "YES"
            case "no", "false", "0": return "NO"
            default: return text
            }
        case .integer16, .integer32, .integer64, .double, .float, .date:
            guard let number = Double(text) else { return text }
            if number.isFinite, number == number.rounded(), abs(number) < 9.0e15 { return String(Int64(number)) }
            return String(number)
        default:
            return text
        }
    }

    /// `one-to-one`, `many-to-one`, `one-to-many`, `many-to-many`, `one-to-nil`, `many-to-nil`, from this side.
    static func cardinality(_ relationship: RelationshipDescription, inverse: RelationshipDescription?) -> String {
        let far = relationship.isToMany ? "many" : "one"
        guard let inverse else { return "\(relationship.isToMany ? "many" : "one")-to-nil" }
        let near = inverse.isToMany ? "many" : "one"
        return "\(near)-to-\(far)"
    }

    static func describe(_ storage: RelationshipStorage?, in schema: StoreSchema, entity: Entity) -> String {
        let table = schema.table(for: entity.name)?.name ?? ""
        switch storage {
        case .foreignKey(let column, let entityColumn, let orderColumn)?:
            return ([table + "." + column] + [entityColumn, orderColumn].compactMap { $0.map { table + "." + $0 } }).joined(separator: ", ")
        case .inverseForeignKey(let destinationTable, let column, let orderColumn)?:
            return "\(destinationTable).\(column)" + (orderColumn.map { ", order \(destinationTable).\($0)" } ?? "")
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn, let orderColumn, _)?:
            return "\(joinTable) (\(sourceColumn) → \(destinationColumn)" + (orderColumn.map { ", order \($0)" } ?? "") + ")"
        case .transient?, nil:
            return "none (transient)"
        }
    }

    func json() throws(CommandFailure) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw CommandFailure("\(file): cannot write the model as JSON: \(error)")
        }
    }

    /// The summary, one fact per line. Names, values and the path come from the model file and the command line:
    /// each line is escaped, so a line break or an escape sequence in them shows as `\n` or `\u{1B}`.
    func text() -> String {
        var lines: [String] = []
        let warningText = warnings.count == 1 ? "1 warning" : "\(warnings.count) warnings"
        let from = source.map { " (read from \($0))" } ?? ""
        lines.append("\(file)\(from): \(entities.count) \(entities.count == 1 ? "entity" : "entities"), \(warningText)")
        for entity in entities {
            lines.append("")
            var heading = "\(entity.name)  (Z_ENT \(entity.number), table \(entity.table)"
            if entity.abstract { heading += ", abstract" }
            if let parent = entity.parent { heading += ", parent \(parent)" }
            if !entity.subentities.isEmpty { heading += ", sub-entities \(entity.subentities.joined(separator: ", "))" }
            lines.append(heading + ")")
            lines += table(entity.attributes.map { attribute in
                var notes: [String] = [attribute.optional ? "optional" : "required"]
                if attribute.transient { notes.append("transient") }
                if let value = attribute.defaultValue { notes.append("default \(value)") }
                if let value = attribute.minimum { notes.append("min \(value)") }
                if let value = attribute.maximum { notes.append("max \(value)") }
                if let value = attribute.regularExpression { notes.append("matches /\(value)/") }
                if let value = attribute.derivation { notes.append("derived = \(value)") }
                return ["attribute", attribute.name, attribute.type, notes.joined(separator: ", "), attribute.column ?? "-"]
            } + entity.relationships.map { relationship in
                var notes = [relationship.cardinality, relationship.deleteRule, relationship.optional ? "optional" : "required"]
                if relationship.ordered { notes.append("ordered") }
                if relationship.transient { notes.append("transient") }
                if relationship.minCount > 0 { notes.append("min \(relationship.minCount)") }
                if relationship.maxCount > 0 { notes.append("max \(relationship.maxCount)") }
                notes.append("inverse \(relationship.inverse ?? "none")")
                return ["relationship", relationship.name, "→ " + relationship.destination, notes.joined(separator: ", "), relationship.storage]
            })
            for index in entity.fetchIndexes { lines.append("  fetch index \(index)") }
            for constraint in entity.uniquenessConstraints { lines.append("  unique (\(constraint.joined(separator: ", ")))") }
        }
        if !warnings.isEmpty {
            lines.append("")
            lines.append("warnings:")
            lines += warnings.map { "  \($0)" }
        }
        if !leftOut.isEmpty {
            lines.append("")
            lines.append("left out (the store's model declares them; a model here cannot hold them):")
            lines += leftOut.map { "  \($0)" }
        }
        return lines.map(ControlCharacters.escaped).joined(separator: "\n") + "\n"
    }

    /// Rows padded into columns, indented under their entity.
    private func table(_ rows: [[String]]) -> [String] {
        guard let columnCount = rows.first?.count else { return [] }
        let widths = (0..<columnCount).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            "  " + row.enumerated().map { column, cell in
                column == columnCount - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}
