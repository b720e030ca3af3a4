import GraphStore
import TerminalText

/// Which columns an objects list shows, and how wide: worked out from the pane's width before anything is read, so
/// that only what is shown is read (and only the to-ones shown are prefetched).
///
/// A list's keys come in one order: the attributes that are not bytes, then the to-ones, then Binary and
/// Transformable attributes. The columns are as many of them as fit, from the list's column offset on (`v` moves
/// it); the attribute sorted by comes first, and a list of an entity with sub-entities starts with each object's
/// entity.
enum ListColumns {
    /// Columns of this many cells or fewer are not worth drawing: the last column must have at least this room.
    static let narrowest = 4
    /// The key column: `p123456`.
    static let keyWidth = 8

    /// The keys a list of `entity` can show, in order.
    static func order(of entity: Entity) -> [(key: String, kind: ListColumn.Kind)] {
        let stored = entity.attributes.filter(\.isPersistent)
        let bytes: Set<AttributeType> = [.binaryData, .transformable]
        return stored.filter { !bytes.contains($0.type) }.map { ($0.name, .attribute) }
            + entity.relationships.filter { $0.isToOne && $0.isPersistent }.map { ($0.name, .toOne) }
            + stored.filter { bytes.contains($0.type) }.map { ($0.name, .attribute) }
    }

    /// The columns a list shows in `width` cells (the pane's width less its key column).
    static func fit(_ level: ListLevel, width: Int) -> [ListColumn] {
        let entity = level.entity
        let order = order(of: entity)
        var wanted: [(key: String, kind: ListColumn.Kind)] = []
        if let chosen = level.chosenColumns {
            wanted = chosen.compactMap { key in order.first { $0.key == key } }
        } else {
            if entity.hasSubentities { wanted.append(("entity", .entity)) }
            if case .attribute(let name) = level.sort { wanted.append((name, .attribute)) }
            let offset = order.isEmpty ? 0 : level.columnOffset % order.count
            wanted += order[offset...].filter { column in !wanted.contains { $0.key == column.key && $0.kind == column.kind } }
        }
        var columns: [ListColumn] = []
        var left = width
        for (key, kind) in wanted {
            // One cell between columns.
            let room = left - 1
            guard room >= narrowest else { break }
            let natural = naturalWidth(key: key, kind: kind, in: entity)
            columns.append(ListColumn(key: key, width: min(natural, room), kind: kind))
            left -= min(natural, room) + 1
        }
        // The last column takes what is left, so long text shows as much as it can.
        if !columns.isEmpty, left > 0 { columns[columns.count - 1].width += left }
        return columns
    }

    /// A column's width before the pane's width is shared out: its type's usual width, or its heading's.
    static func naturalWidth(key: String, kind: ListColumn.Kind, in entity: Entity) -> Int {
        let typical: Int
        switch kind {
        case .entity:
            typical = ([entity.name] + entity.descendantNames).map { DisplayWidth.of($0) }.max() ?? 6
        case .toOne:
            typical = 22
        case .attribute:
            switch entity.attribute(named: key)?.type {
            case .integer16, .integer32, .integer64: typical = 8
            case .double, .float, .decimal: typical = 12
            case .boolean: typical = 5
            case .date: typical = 19
            case .binaryData, .transformable: typical = 30
            case .uuid: typical = 36
            case .string, .uri, .objectID, nil: typical = 18
            }
        }
        return max(typical, min(DisplayWidth.of(key), 20))
    }
}

/// How objects are named on screen: by key (`p12`), with the entity when it is not the one listed, and with the
/// values of the String attributes that name it.
enum ObjectNames {
    /// `p12`.
    static func key(_ object: ManagedObject) -> String {
        "p\(object.objectID.primaryKey)"
    }

    /// The attributes that name an object of `entity`: the first two stored String attributes whose names say
    /// they name it (`name`, `firstName`, `title`, `label`), or else its first stored String attribute.
    static func titleAttributes(of entity: Entity) -> [String] {
        let strings = entity.attributes.filter { $0.type == .string && $0.isPersistent }.map(\.name)
        let naming = strings.filter { name in
            let lowered = name.lowercased()
            return ["name", "title", "label"].contains { lowered.contains($0) }
        }
        return naming.isEmpty ? Array(strings.prefix(1)) : Array(naming.prefix(2))
    }

    /// `Jane Doe`: the values of the title attributes, on one line; "" when it has none. Reading them fires the
    /// object's fault.
    static func title(_ object: ManagedObject) -> String {
        let parts = titleAttributes(of: object.entity).compactMap { name -> String? in
            guard case .string(let text) = object.attributeValue(forKey: name), !text.isEmpty else { return nil }
            return ControlCharacters.replaced(in: text, by: " ")
        }
        return DisplayWidth.truncate(parts.joined(separator: " "), width: 40)
    }

    /// `Car p12 FIAT Panda`, or without the entity when `entityShown` (the crumb before names it).
    static func label(_ object: ManagedObject, entityShown: Bool = false) -> String {
        let title = title(object)
        let key = entityShown ? key(object) : "\(object.entityName) \(key(object))"
        return title.isEmpty ? key : key + " " + title
    }
}
