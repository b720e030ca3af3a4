/// SQLite triggers that keep derived attributes right whatever writes the rows: saves, cascades, bulk SQL, other
/// processes. Counts move by one on each link added or removed and are recounted when the source row is inserted;
/// copies follow the to-one and the copied attribute.
struct DerivedAttributeTriggers {
    let model: ObjectModel
    let layout: SchemaLayout

    func definitions() -> [TriggerDefinition] {
        var triggers: [TriggerDefinition] = []
        for entity in model.entities {
            for attribute in entity.declaration.attributes {
                guard let derivation = attribute.parsedDerivation else { continue }
                switch derivation {
                case .count(let relationship):
                    triggers += countTriggers(attribute, relationship: relationship, of: entity)
                case .copy(let relationship, let copied):
                    triggers += copyTriggers(attribute, relationship: relationship, copied: copied, of: entity)
                }
            }
        }
        return triggers
    }

    private func sourceTable(of entity: Entity) -> EntityTable {
        layout.tables[layout.tableIndexByEntity[entity.name]!]  // cannot fail: the layout gives every entity a table
    }

    private func column(_ attribute: String, of entity: Entity) -> String {
        guard let column = layout.attributeColumn(attribute, of: entity) else {
            preconditionFailure("attribute '\(attribute)' of '\(entity.name)' has no column")
        }
        return column
    }

    private func storage(_ relationship: String, of entity: Entity) -> RelationshipStorage {
        guard let storage = layout.storage(ofRelationship: relationship, of: entity) else {
            preconditionFailure("relationship '\(relationship)' of '\(entity.name)' has no storage")
        }
        return storage
    }

    /// `WHEN` clause limiting a trigger on the source table to rows of the entity (and its sub-entities).
    private func entityCondition(for entity: Entity, in table: EntityTable, row: String) -> String? {
        let numbers = [entity.number] + entity.descendantNames.compactMap { model.entity(named: $0)?.number }
        guard numbers.count < table.entityNumbers.count else { return nil }
        return numbers.count == 1 ? "\(row).Z_ENT = \(numbers[0])" : "\(row).Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }

    private func trigger(_ name: String, _ timing: String, on table: String, when condition: String?, _ body: [String],
                         earlierNames: [String] = [], isNamedAsCoreData: Bool = false) -> TriggerDefinition {
        let whenClause = condition.map { " WHEN \($0)" } ?? ""
        let statements = body.map { " \($0);" }.joined()
        return TriggerDefinition(
            name: name, table: table,
            createStatement: "CREATE TRIGGER \(name) AFTER \(timing) ON \(table) FOR EACH ROW\(whenClause) BEGIN\(statements) END",
            earlierNames: earlierNames, isNamedAsCoreData: isNamedAsCoreData)
    }

    private func countTriggers(_ attribute: AttributeDescription, relationship: String, of entity: Entity) -> [TriggerDefinition] {
        let source = sourceTable(of: entity)
        let target = column(attribute.name, of: entity)
        let linkTable: String
        let linkColumn: String
        let isNamedAsCoreData: Bool
        switch storage(relationship, of: entity) {
        case .inverseForeignKey(let table, let column, _):
            (linkTable, linkColumn, isNamedAsCoreData) = (table, column, true)
        case .joinTable(let table, let sourceColumn, _, _, _):
            (linkTable, linkColumn, isNamedAsCoreData) = (table, sourceColumn, false)
        case .foreignKey, .transient:
            return []
        }
        // Named as Core Data names its count triggers (`Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT`, …), checked
        // against a store it wrote, for a to-many whose inverse is a to-one; a join table's count follows the same
        // pattern, which no store Core Data wrote has confirmed. Core Data fires both update triggers on every
        // update of the column; here each fires only when the link really moves.
        let prefix = "Z_DA_\(linkTable)_\(entity.name)_\(attribute.name)"
        func adjust(_ sign: String, _ row: String) -> String {
            "UPDATE \(source.name) SET \(target) = IFNULL(\(target), 0) \(sign) 1 WHERE Z_PK = \(row).\(linkColumn)"
        }
        let moved = "OLD.\(linkColumn) IS NOT NEW.\(linkColumn)"
        // GraphStore before these names: one update trigger moved both counts.
        let earlierUpdate = ["\(prefix)_PARAMETER_UPDATE"]
        return [
            trigger("\(prefix)_PARAMETER_INSERT", "INSERT", on: linkTable, when: "NEW.\(linkColumn) IS NOT NULL", [adjust("+", "NEW")],
                    earlierNames: ["\(prefix)_PARAMETER_INSERT_INCREMENT"], isNamedAsCoreData: isNamedAsCoreData),
            trigger("\(prefix)_PARAMETER_UPDATE_INCREMENT", "UPDATE OF \(linkColumn)", on: linkTable,
                    when: "NEW.\(linkColumn) IS NOT NULL AND \(moved)", [adjust("+", "NEW")],
                    earlierNames: earlierUpdate, isNamedAsCoreData: isNamedAsCoreData),
            trigger("\(prefix)_PARAMETER_UPDATE_DECREMENT", "UPDATE OF \(linkColumn)", on: linkTable,
                    when: "OLD.\(linkColumn) IS NOT NULL AND \(moved)", [adjust("-", "OLD")],
                    earlierNames: earlierUpdate, isNamedAsCoreData: isNamedAsCoreData),
            trigger("\(prefix)_PARAMETER_DELETE", "DELETE", on: linkTable, when: "OLD.\(linkColumn) IS NOT NULL", [adjust("-", "OLD")],
                    earlierNames: ["\(prefix)_PARAMETER_DELETE_DECREMENT"], isNamedAsCoreData: isNamedAsCoreData),
            trigger("Z_DA_\(source.name)_\(entity.name)_\(attribute.name)_SOURCE_INSERT", "INSERT", on: source.name,
                    when: entityCondition(for: entity, in: source, row: "NEW"),
                    ["UPDATE \(source.name) SET \(target) = (SELECT COUNT(*) FROM \(linkTable) WHERE \(linkColumn) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK"],
                    isNamedAsCoreData: isNamedAsCoreData),
        ]
    }

    private func copyTriggers(_ attribute: AttributeDescription, relationship: String, copied: String, of entity: Entity) -> [TriggerDefinition] {
        guard case .foreignKey(let foreignKey, _, _) = storage(relationship, of: entity),
              let relationshipDescription = entity.relationship(named: relationship),
              let destination = model.entity(named: relationshipDescription.destination) else { return [] }
        let source = sourceTable(of: entity)
        let target = column(attribute.name, of: entity)
        let destinationTable = sourceTable(of: destination)
        let copiedColumn = column(copied, of: destination)
        let lookup = "(SELECT \(copiedColumn) FROM \(destinationTable.name) WHERE Z_PK = NEW.\(foreignKey))"
        let limit = entityCondition(for: entity, in: source, row: "NEW")
        let prefix = "Z_DA_\(source.name)_\(entity.name)_\(attribute.name)"
        let whenSet = ["NEW.\(foreignKey) IS NOT NULL", limit].compactMap { $0 }.joined(separator: " AND ")
        let whenChanged = ["OLD.\(foreignKey) IS NOT NEW.\(foreignKey)", limit].compactMap { $0 }.joined(separator: " AND ")
        return [
            trigger("\(prefix)_SOURCE_INSERT", "INSERT", on: source.name, when: whenSet,
                    ["UPDATE \(source.name) SET \(target) = \(lookup) WHERE Z_PK = NEW.Z_PK"]),
            trigger("\(prefix)_SOURCE_UPDATE", "UPDATE OF \(foreignKey)", on: source.name, when: whenChanged,
                    ["UPDATE \(source.name) SET \(target) = \(lookup) WHERE Z_PK = NEW.Z_PK"]),
            trigger("Z_DA_\(destinationTable.name)_\(entity.name)_\(attribute.name)_PARAMETER_UPDATE", "UPDATE OF \(copiedColumn)",
                    on: destinationTable.name, when: "OLD.\(copiedColumn) IS NOT NEW.\(copiedColumn)",
                    ["UPDATE \(source.name) SET \(target) = NEW.\(copiedColumn) WHERE \(foreignKey) = NEW.Z_PK"]),
            // A row can point at one inserted after it (one save writes new rows in insertion order): the copy is
            // filled when the row it copies from arrives.
            trigger("Z_DA_\(destinationTable.name)_\(entity.name)_\(attribute.name)_PARAMETER_INSERT", "INSERT",
                    on: destinationTable.name, when: "NEW.\(copiedColumn) IS NOT NULL",
                    ["UPDATE \(source.name) SET \(target) = NEW.\(copiedColumn) WHERE \(foreignKey) = NEW.Z_PK"]),
        ]
    }
}

/// A copied attribute recomputed set-based, for rows written back without their triggers having seen the row they
/// copy from (rows an undo restores: the destination may come back after its sources).
struct CopyRefresh: Sendable {
    let sourceTable: String
    let destinationTable: String
    /// `UPDATE source SET target = (the copied value) WHERE <entity condition AND>`; the caller ends the condition.
    let updatePrefix: String
    /// The source's foreign-key column.
    let foreignKey: String
}

extension DerivedAttributeTriggers {
    func copyRefreshes() -> [CopyRefresh] {
        var refreshes: [CopyRefresh] = []
        for entity in model.entities {
            for attribute in entity.declaration.attributes {
                guard case .copy(let relationship, let copied)? = attribute.parsedDerivation,
                      let relationshipDescription = entity.relationship(named: relationship),
                      let destination = model.entity(named: relationshipDescription.destination),
                      case .foreignKey(let foreignKey, _, _)? = layout.storage(ofRelationship: relationship, of: entity),
                      let target = layout.attributeColumn(attribute.name, of: entity),
                      let copiedColumn = layout.attributeColumn(copied, of: destination) else { continue }
                // cannot fail (both): the layout gives every entity a table.
                let source = layout.tables[layout.tableIndexByEntity[entity.name]!]
                let destinationTable = layout.tables[layout.tableIndexByEntity[destination.name]!]
                let numbers = [entity.number] + entity.descendantNames.compactMap { model.entity(named: $0)?.number }
                let limit = numbers.count < source.entityNumbers.count
                    ? "Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))) AND " : ""
                refreshes.append(CopyRefresh(
                    sourceTable: source.name, destinationTable: destinationTable.name,
                    updatePrefix: "UPDATE \(source.name) SET \(target) = (SELECT d.\(copiedColumn) FROM \(destinationTable.name) d"
                        + " WHERE d.Z_PK = \(source.name).\(foreignKey)) WHERE \(limit)",
                    foreignKey: foreignKey))
            }
        }
        return refreshes
    }
}
