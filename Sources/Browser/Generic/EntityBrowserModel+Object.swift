import Foundation
import GraphStore
import TerminalText

/// The object pane: one object's attributes and relationships, following a relationship, and the path shown as a
/// breadcrumb.
extension EntityBrowserModel {
    /// Reads the object shown: its fault fires (a row-cache hit when a list read its row), its to-ones are named by
    /// the keys in its row (no SQL), and with counts on each visible to-many is counted, one `SELECT COUNT(*)`.
    func fillObject(_ shown: ObjectLevel) {
        let object = shown.object
        activityLog.enter(ActivityScope(pane: "object", rootEntity: object.entityName))
        if shown.countsGeneration != generation {
            shown.counts = [:]
            shown.countsGeneration = generation
        }
        let entity = object.entity
        var rows: [DetailRow] = entity.attributes.map { attribute in
            DetailRow(name: attribute.name, kind: .attribute,
                      value: valueCell(object.attributeValue(forKey: attribute.name), of: attribute, on: entity, full: true),
                      type: typeLabel(attribute, on: entity))
        }
        if let error = object.faultError {
            state.message = "\(ObjectNames.key(object)): \(error)"
            state.messageIsError = true
        }
        let relationships = entity.relationships.filter(\.isPersistent)
        let visible = shown.top..<(shown.top + layout.objectRows)
        for relationship in relationships {
            let index = rows.count
            if relationship.isToOne {
                let destination = object.objectID(forToOneNamed: relationship.name)
                let value = destination.map { Cell("→ \(coordinator.mapping(forEntityNumber: $0.entityNumber).name) p\($0.primaryKey)") }
                    ?? Cell(ValueText.nullText, isNull: true)
                rows.append(DetailRow(name: relationship.name, kind: .toOne, value: value, type: "to-one \(relationship.destination)"))
            } else {
                let counted = visible.contains(index) ? toManyCount(of: object, relationship, in: shown) : nil
                rows.append(DetailRow(name: relationship.name, kind: .toMany, value: toManyCell(relationship, count: counted),
                                      type: "to-many \(relationship.destination)" + (relationship.isOrdered ? ", ordered" : "")))
            }
        }
        shown.selected = max(0, min(shown.selected, rows.count - 1))
        shown.top = max(0, min(shown.top, shown.selected))
        var detail = ObjectDetailState(title: ObjectNames.label(object), uri: object.uriRepresentation)
        detail.rows = rows
        detail.selected = shown.selected
        detail.top = shown.top
        state.main = .object(detail)
        state.breadcrumb = breadcrumb()
    }

    /// `String`, `Date`, `Transformable NSArray`, `Binary, external storage`.
    private func typeLabel(_ attribute: AttributeDescription, on entity: Entity) -> String {
        var label = attribute.type.rawValue
        let detail = details.attribute(attribute.name, of: model.lineage(of: entity).map(\.name))
        if attribute.type == .transformable, let className = detail?.valueClassName { label += " " + ControlCharacters.escaped(className) }
        if detail?.allowsExternalStorage == true { label += ", external storage" }
        if attribute.isTransient { label += ", transient" }
        return label
    }

    /// The number of members of a to-many, when counts are on: one `SELECT COUNT(*)` of the destination by its
    /// inverse, kept until the graph changes. Nil when counts are off or the to-many has no inverse to count by.
    private func toManyCount(of object: ManagedObject, _ relationship: RelationshipDescription, in shown: ObjectLevel) -> Int? {
        guard state.settings.derivedCounts, model.inverse(of: relationship) != nil else { return nil }
        if let known = shown.counts[relationship.name] { return known }
        do {
            let count = try context.count(for: FetchRequest(entityName: relationship.destination,
                                                            predicate: membership(of: object, in: relationship)))
            shown.counts[relationship.name] = count
            return count
        } catch {
            state.message = "count of \(relationship.name): \(error)"
            state.messageIsError = true
            return nil
        }
    }

    /// `⇉ 12 Car`; without a count, what Enter does or why there is none.
    private func toManyCell(_ relationship: RelationshipDescription, count: Int?) -> Cell {
        if let count { return Cell("⇉ \(ActivityFormat.count(count)) \(relationship.destination)") }
        if state.settings.derivedCounts, model.inverse(of: relationship) == nil {
            return Cell("⇉ \(relationship.destination) (no inverse to count by; Enter lists them)")
        }
        return Cell("⇉ \(relationship.destination)" + (state.settings.derivedCounts ? "" : " (Enter lists them; c counts)"))
    }

    /// Follows a relationship of the object shown: a to-one to its destination (whose fault fires as the pane
    /// reads it), a to-many to its members as a list (a batched fetch by the inverse; an ordered one in its own
    /// order, from its relationship fault).
    func follow(_ name: String) {
        guard let shown = currentObject else {
            state.message = "follow: open an object first"
            state.messageIsError = true
            return
        }
        let object = shown.object
        guard let relationship = object.entity.relationship(named: name), relationship.isPersistent,
              let destination = model.entity(named: relationship.destination) else {
            let known = object.entity.relationships.map(\.name).joined(separator: ", ")
            state.message = "\(object.entityName) has no relationship '\(name)'" + (known.isEmpty ? "" : "; it has: \(known)")
            state.messageIsError = true
            return
        }
        if case .object(let detail) = state.main, let index = detail.rows.firstIndex(where: { $0.name == name && $0.kind != .attribute }) {
            shown.selected = index
        }
        if relationship.isToOne {
            guard let target = object.object(forKey: name) else {
                state.message = "\(name) of \(ObjectNames.key(object)) is empty"
                return
            }
            path.append(.object(ObjectLevel(object: target)))
            state.focus = .object
        } else {
            let list = ListLevel(source: .members(owner: object, relationship: relationship), entity: destination,
                                 sort: relationship.isOrdered ? .relationshipOrder : .key)
            path.append(.list(list))
            state.focus = .objects
        }
        fillVisibleRows()
    }

    /// The path as crumbs: an entity, an object by its key and name (with its entity unless the crumb before is a
    /// list of that entity), a relationship by its name.
    func breadcrumb() -> [String] {
        var crumbs: [String] = []
        var listedEntity: String?
        for level in path {
            switch level {
            case .list(let list):
                switch list.source {
                case .entity(let entity):
                    crumbs.append(entity.name)
                    listedEntity = entity.name
                case .members(_, let relationship):
                    crumbs.append(relationship.name)
                    listedEntity = nil
                }
            case .object(let shown):
                crumbs.append(ObjectNames.label(shown.object, entityShown: shown.object.entityName == listedEntity))
                listedEntity = nil
            }
        }
        return crumbs
    }
}
