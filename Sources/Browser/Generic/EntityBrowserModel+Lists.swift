import Foundation
import GraphStore
import TerminalText

/// The entities pane and the lists of objects: counting, fetching (batched, prefetching the to-ones shown), sorting,
/// filtering, and turning the visible rows into values.
extension EntityBrowserModel {
    /// Reads what every pane shows now, each pane's reads in its own scope: only the rows on screen are touched, so
    /// only their faults fire.
    func fillVisibleRows() {
        fillEntityRows()
        switch path.last {
        case .list(let list): fillList(list)
        case .object(let shown): fillObject(shown)
        case nil:
            state.main = nil
            state.breadcrumb = []
        }
    }

    /// After a delete, a save or an undo: counts are counted again and lists read again where they show.
    func graphChanged() {
        generation += 1
        entityCounts = [:]
        for index in state.entities.rows.indices { state.entities.rows[index].count = nil }
    }

    // MARK: entities

    /// Counts the entities on screen that are not counted yet: one `SELECT COUNT(*)` each, of the entity's objects
    /// and its sub-entities' (an entity with sub-entities shares its table with them; the count is of the rows whose
    /// `Z_ENT` is the entity's or a sub-entity's).
    func fillEntityRows() {
        activityLog.enter(ActivityScope(pane: "entities"))
        let rows = state.entities.rows
        let visible = state.entities.top..<min(rows.count, state.entities.top + layout.entityRows)
        for index in visible where rows[index].count == nil {
            let name = rows[index].name
            if entityCounts[name] == nil {
                do {
                    entityCounts[name] = try context.count(for: FetchRequest(entityName: name))
                } catch {
                    state.message = "count of \(name): \(error)"
                    state.messageIsError = true
                    return
                }
            }
            state.entities.rows[index].count = entityCounts[name]
        }
    }

    /// Opens an entity's objects in the main pane (the entities pane selects it).
    func openEntity(named name: String) {
        guard let index = state.entities.rows.firstIndex(where: { $0.name == name }), let entity = model.entity(named: name) else {
            state.message = "no entity '\(name)' in the model"
            state.messageIsError = true
            return
        }
        state.entities.selected = index
        let rows = layout.entityRows
        if index < state.entities.top || index >= state.entities.top + rows { state.entities.top = max(0, index - rows + 1) }
        path = [.list(ListLevel(source: .entity(entity), entity: entity, sort: .key))]
        state.focus = .objects
        fillVisibleRows()
    }

    /// Opens an object in the main pane, after the list it was picked from.
    func openObject(_ object: ManagedObject) {
        path.append(.object(ObjectLevel(object: object)))
        state.focus = .object
        fillVisibleRows()
    }

    // MARK: lists

    /// The columns a list shows at the pane's width now.
    func columns(of list: ListLevel) -> [ListColumn] {
        ListColumns.fit(list, width: layout.main.width - 1 - ListColumns.keyWidth)
    }

    /// Rows per batch of a list's fetch: at least the rows the pane shows, so that a screen is one batch (as the
    /// chat browser's messages pane does); 0 when batching is off.
    var listBatchSize: Int {
        state.settings.batchSize == 0 ? 0 : max(state.settings.batchSize, layout.listRows)
    }

    /// The scope of a list's reads: the objects pane, its entity, and the levers that change its fetch.
    func scope(of list: ListLevel, prefetching keyPaths: [String]) -> ActivityScope {
        let settings = state.settings
        let smallest = max(BrowserModel.batchSizeOffered, layout.listRows)
        return ActivityScope(pane: "objects", rootEntity: list.entity.name, levers: ActivityScope.Levers(
            prefetchKeyPaths: keyPaths, prefetchIsOn: settings.prefetch != .off, prefetchLabel: settings.prefetch.label,
            derivedCounts: settings.derivedCounts, batchSize: listBatchSize, smallestBatchSize: smallest,
            prefetchKey: "p", countsKey: "c", batchKey: "b"))
    }

    /// Reads the list's visible rows, fetching it first when it was not fetched with the settings, the graph and
    /// the to-ones to prefetch of now.
    func fillList(_ list: ListLevel) {
        let columns = columns(of: list)
        let toOnes = columns.filter { $0.kind == .toOne }.map(\.key)
        activityLog.enter(scope(of: list, prefetching: toOnes))
        if list.stamp != stamp(prefetching: toOnes) {
            if case .failure(let error) = load(list, prefetching: toOnes) {
                state.message = "\(list.entity.name): \(error)"
                state.messageIsError = true
            }
        }
        let count = list.objects.count
        list.selected = max(0, min(list.selected, count - 1))
        list.top = max(0, min(list.top, list.selected))
        let rows = layout.listRows
        if list.selected >= list.top + rows { list.top = list.selected - rows + 1 }
        let visible = list.top..<min(count, list.top + rows)
        if case .ordered(let members) = list.objects {
            do {
                try members.load(visible)
            } catch {
                state.message = "\(list.entity.name): \(error)"
                state.messageIsError = true
            }
        }
        var shown = ObjectListState(title: title(of: list), entity: list.entity.name)
        if case .list(let before) = state.main, before.title == shown.title { shown.filterBefore = before.filterBefore }
        shown.count = count
        shown.selected = list.selected
        shown.top = list.top
        shown.sortLabel = list.sort.label + (list.sort == .relationshipOrder && list.ascending ? "" : list.ascending ? " ↑" : " ↓")
        shown.filter = list.filter
        shown.columns = columns
        shown.keyWidth = ListColumns.keyWidth
        shown.rows = visible.map { index in
            let object = list.objects.object(at: index)
            return ObjectRow(key: ObjectNames.key(object), cells: columns.map { cell(of: object, in: $0) })
        }
        state.main = .list(shown)
        state.breadcrumb = breadcrumb()
    }

    private func stamp(prefetching toOnes: [String]) -> ListStamp {
        let settings = state.settings
        // Prefetching changes nothing for a list that shows no to-one.
        return ListStamp(batchSize: listBatchSize, batchingMode: settings.batchingMode, prefetch: toOnes.isEmpty ? .off : settings.prefetch,
                         generation: generation, prefetched: settings.prefetch == .off ? [] : toOnes)
    }

    /// `Car`, or `cars of Person p3 Jane Doe`.
    func title(of list: ListLevel) -> String {
        switch list.source {
        case .entity(let entity): entity.name
        case .members(let owner, let relationship): "\(relationship.name) of \(ObjectNames.label(owner))"
        }
    }

    /// One cell of a visible row: reading it fires the object's fault (a row-cache hit after a fetch), and for a
    /// to-one the destination's unless it was prefetched.
    private func cell(of object: ManagedObject, in column: ListColumn) -> Cell {
        switch column.kind {
        case .entity:
            return Cell(object.entityName)
        case .toOne:
            guard let destination = object.object(forKey: column.key) else { return Cell(ValueText.nullText, isNull: true) }
            let declared = object.entity.relationship(named: column.key)?.destination
            return Cell(ObjectNames.label(destination, entityShown: destination.entityName == declared))
        case .attribute:
            guard let attribute = object.entity.attribute(named: column.key) else { return Cell("") }
            return valueCell(object.attributeValue(forKey: column.key), of: attribute, on: object.entity, full: false)
        }
    }

    /// An attribute's value as a cell.
    func valueCell(_ value: AttributeValue, of attribute: AttributeDescription, on entity: Entity, full: Bool) -> Cell {
        guard !value.isNull else { return Cell(ValueText.nullText, isNull: true) }
        let detail = details.attribute(attribute.name, of: model.lineage(of: entity).map(\.name))
        return Cell(ValueText.text(value, of: attribute, detail: detail, setting: valueSetting, full: full))
    }

    /// Fetches a list: a batched fetch of the entity (or of a to-many's destination, its members by the inverse),
    /// filtered, sorted, prefetching the to-ones shown; or an ordered to-many in its own order.
    func load(_ list: ListLevel, prefetching toOnes: [String]) -> Result<Void, ContextError> {
        do {
            list.objects = try fetch(list, prefetching: toOnes)
            list.stamp = stamp(prefetching: toOnes)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    private func fetch(_ list: ListLevel, prefetching toOnes: [String]) throws(ContextError) -> ListedObjects {
        var request = FetchRequest(entityName: list.entity.name)
        let settings = state.settings
        request.batchingMode = settings.batchingMode
        switch settings.prefetch {
        case .joined:
            request.relationshipKeyPathsForPrefetching = toOnes
            request.prefetchStrategy = .joined
        case .separate:
            request.relationshipKeyPathsForPrefetching = toOnes
            request.prefetchStrategy = .separateQueries
        case .off:
            break
        }
        var conditions: [GraphStore.Predicate] = []
        if case .members(let owner, let relationship) = list.source {
            if list.sort == .relationshipOrder {
                return .ordered(try orderedMembers(of: owner, relationship, list: list, template: request))
            }
            conditions.append(membership(of: owner, in: relationship))
        }
        if let predicate = list.predicate { conditions.append(predicate) }
        request.predicate = conditions.isEmpty ? nil : conditions.count == 1 ? conditions[0] : .and(conditions)
        switch list.sort {
        case .attribute(let name):
            request.sortDescriptors = [.init(name, ascending: list.ascending), .init("SELF", ascending: list.ascending)]
        case .key, .relationshipOrder:
            request.sortDescriptors = [.init("SELF", ascending: list.ascending)]
        }
        request.fetchBatchSize = listBatchSize
        return .fetched(try context.fetch(request, firstReading: list.top))
    }

    /// What makes an object a member of `owner`'s to-many: its inverse points at the owner (`owner == %@`, or
    /// `ANY owners == %@` for a many-to-many); with no inverse, being among the IDs the relationship fault reads.
    func membership(of owner: ManagedObject, in relationship: RelationshipDescription) -> GraphStore.Predicate {
        if let inverse = model.inverse(of: relationship) {
            return .comparison(.init(.keyPath(inverse.name), .equal, .constant(.object(owner)), modifier: inverse.isToMany ? .any : nil))
        }
        let ids = owner.objectIDs(forRelationshipNamed: relationship.name)
        return .comparison(.init(.evaluatedObject, .`in`, .constant(.list(ids.map { .objectID($0) }))))
    }

    /// An ordered to-many's members in its order: the relationship fault reads their IDs in order (and, with a
    /// filter, one statement keeps those that match); batches of them are fetched as they show.
    private func orderedMembers(of owner: ManagedObject, _ relationship: RelationshipDescription, list: ListLevel,
                                template: FetchRequest) throws(ContextError) -> OrderedMembers {
        var ids = owner.objectIDs(forRelationshipNamed: relationship.name)
        if let predicate = list.predicate, !ids.isEmpty {
            var request = FetchRequest(entityName: list.entity.name)
            request.predicate = .and([.comparison(.init(.evaluatedObject, .`in`, .constant(.list(ids.map { .objectID($0) })))), predicate])
            let matching = Set(try context.fetchObjectIDs(request))
            ids = ids.filter(matching.contains)
        }
        if !list.ascending { ids.reverse() }
        return OrderedMembers(ids: ids, context: context, template: template, batchSize: listBatchSize)
    }

    // MARK: sorting, columns, filtering

    /// The attributes a list can be sorted by: the stored ones that are not bytes.
    func sortableAttributes(of entity: Entity) -> [String] {
        entity.attributes.filter { $0.isPersistent && $0.type != .binaryData && $0.type != .transformable }.map(\.name)
    }

    /// The sort keys `s` goes through for a list: an ordered to-many's own order, the key, each attribute.
    func sortKeys(of list: ListLevel) -> [SortKey] {
        var keys: [SortKey] = []
        if case .members(_, let relationship) = list.source, relationship.isOrdered { keys.append(.relationshipOrder) }
        return keys + [.key] + sortableAttributes(of: list.entity).map(SortKey.attribute)
    }

    func nextSort(after list: ListLevel) -> (SortKey, Bool) {
        let keys = sortKeys(of: list)
        let position = keys.firstIndex(of: list.sort) ?? -1
        return (keys[(position + 1) % keys.count], true)
    }

    /// Sorts the list shown by what `choose` picks, from its first row; a key the list cannot be sorted by is
    /// refused with a message.
    func changeSort(_ choose: (ListLevel) -> (SortKey, Bool)) {
        guard let list = currentList else {
            state.message = "sorting applies to a list of objects: open an entity first"
            state.messageIsError = true
            return
        }
        let (key, ascending) = choose(list)
        guard sortKeys(of: list).contains(key) else {
            let known = sortKeys(of: list).map(\.label).joined(separator: ", ")
            state.message = "\(list.entity.name) cannot be sorted by '\(key.label)'; by: \(known)"
            state.messageIsError = true
            return
        }
        list.sort = key
        list.ascending = ascending
        list.stamp = nil
        list.selected = 0
        list.top = 0
        state.focus = .objects
        fillVisibleRows()
        if !state.messageIsError { state.message = "sorted by \(key.label)\(key == .relationshipOrder ? "" : ascending ? " ↑" : " ↓")" }
    }

    /// Changes the list's columns (`v`, or a script's `columns`), naming them in the status line.
    func changeColumns(_ change: (ListLevel) -> Void) {
        guard let list = currentList else {
            state.message = "columns apply to a list of objects: open an entity first"
            state.messageIsError = true
            return
        }
        let before = list.chosenColumns
        change(list)
        if let chosen = list.chosenColumns {
            let known = Set(ListColumns.order(of: list.entity).map(\.key))
            let unknown = chosen.filter { !known.contains($0) }
            guard unknown.isEmpty else {
                list.chosenColumns = before
                state.message = "\(list.entity.name) has no attribute or to-one '\(unknown.joined(separator: "', '"))'"
                state.messageIsError = true
                return
            }
        }
        fillVisibleRows()
        let shown = columns(of: list).map(\.key)
        state.message = shown.isEmpty ? "no column fits: widen the window" : "columns: " + shown.joined(separator: ", ")
    }

    /// Filters the list shown with a predicate in Core Data's format ("" clears it). One that does not parse, or
    /// names a key the entity does not have, leaves the list as it was and says why on the status line.
    func applyFilter(_ text: String) {
        guard let list = currentList else {
            state.message = "a filter applies to a list of objects: open an entity first"
            state.messageIsError = true
            return
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let predicate: GraphStore.Predicate?
        do {
            predicate = trimmed.isEmpty ? nil : try GraphStore.Predicate(format: ControlCharacters.replaced(in: trimmed, by: " "))
        } catch {
            state.message = "filter '\(ControlCharacters.escaped(trimmed))': \(error)"
            state.messageIsError = true
            return
        }
        let kept = (list.filter, list.predicate, list.objects, list.stamp, list.selected, list.top)
        (list.filter, list.predicate, list.selected, list.top) = (trimmed, predicate, 0, 0)
        let columns = columns(of: list)
        let toOnes = columns.filter { $0.kind == .toOne }.map(\.key)
        activityLog.enter(scope(of: list, prefetching: toOnes))
        if case .failure(let error) = load(list, prefetching: toOnes) {
            (list.filter, list.predicate, list.objects, list.stamp, list.selected, list.top) = kept
            state.message = "filter '\(ControlCharacters.escaped(trimmed))': \(error)"
            state.messageIsError = true
            fillVisibleRows()
            return
        }
        state.focus = .objects
        fillVisibleRows()
        let count = list.objects.count
        state.message = trimmed.isEmpty ? "filter cleared"
            : "\(ActivityFormat.count(count, "object")) \(count == 1 ? "matches" : "match") \(ControlCharacters.escaped(trimmed))"
    }
}
