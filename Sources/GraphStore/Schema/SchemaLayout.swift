/// Works out tables, columns, indexes and join tables for a model, following Core Data's naming.
struct SchemaLayout: Sendable {
    let model: ObjectModel
    var tables: [EntityTable] = []
    var joinTables: [JoinTable] = []
    var tableIndexByEntity: [String: Int] = [:]
    var attributeColumns: [StoreSchema.PropertyKey: String] = [:]
    var relationshipStorage: [StoreSchema.PropertyKey: RelationshipStorage] = [:]
    /// To-manys kept by their destination's foreign key, placed once every table has its columns: the key's column is
    /// the one the inverse to-one claimed in its table, which may carry a suffix (two sub-entities of one table that
    /// each declare a to-one `owner` get `ZOWNER` and `ZOWNER1`).
    private var inverseForeignKeyToManys: [(key: StoreSchema.PropertyKey, relationship: RelationshipDescription, entity: Entity)] = []

    init(model: ObjectModel) {
        self.model = model
    }

    /// Core Data's column groups: integers and keys, floats, timestamps, decimals, strings, blobs.
    private static let typeOrder = ["INTEGER", "FLOAT", "TIMESTAMP", "DECIMAL", "VARCHAR", "BLOB"]

    private struct PendingColumn {
        let column: Column
        let entityNumber: Int
        let propertyName: String
        /// Keeps a to-one's key, entity and order columns together, in that order.
        let part: Int
    }

    mutating func build() {
        planJoinTables()
        for root in model.entities where root.isRoot {
            buildTable(for: root)
        }
        for (key, relationship, entity) in inverseForeignKeyToManys where relationshipStorage[key] == nil {
            relationshipStorage[key] = inverseForeignKeyStorage(of: relationship, in: entity)
        }
    }

    private mutating func buildTable(for root: Entity) {
        let tableName = "Z" + root.name.uppercased()
        let members = [root] + root.descendantNames.compactMap(model.entity(named:))
        var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        var pending: [PendingColumn] = []

        func claim(_ base: String) -> String {
            var name = base
            var suffix = 1
            while taken.contains(name) {
                name = base + String(suffix)
                suffix += 1
            }
            taken.insert(name)
            return name
        }

        var foreignKeyColumns: [String] = []
        var indexedColumns: [String] = []
        for entity in members {
            // Each property with its description, by name: looking a description up by name for each property made
            // an entity of thousands of attributes take a quadratic time.
            let properties: [(name: String, attribute: AttributeDescription?, relationship: RelationshipDescription?)] =
                entity.declaration.attributes.filter(\.isPersistent).map { ($0.name, $0, nil) }
                + entity.declaration.relationships.filter(\.isPersistent).map { ($0.name, nil, $0) }
            for (name, attribute, relationship) in properties.sorted(by: { $0.name < $1.name }) {
                let key = StoreSchema.PropertyKey(entity: entity.name, property: name)
                if let attribute {
                    let column = claim("Z" + name.uppercased())
                    attributeColumns[key] = column
                    pending.append(PendingColumn(column: Column(name: column, type: attribute.type.columnType), entityNumber: entity.number, propertyName: name, part: 0))
                    if attribute.isIndexed { indexedColumns.append(column) }
                    continue
                }
                guard let relationship else { continue }
                if relationship.isToMany {
                    if relationshipStorage[key] == nil { inverseForeignKeyToManys.append((key, relationship, entity)) }
                    continue
                }
                let column = claim("Z" + name.uppercased())
                foreignKeyColumns.append(column)
                pending.append(PendingColumn(column: Column(name: column, type: "INTEGER"), entityNumber: entity.number, propertyName: name, part: 0))
                var entityColumn: String?
                if let destination = model.entity(named: relationship.destination), destination.hasSubentities {
                    let destinationRoot = model.root(of: destination)
                    entityColumn = claim("Z\(destinationRoot.number)_" + name.uppercased())
                    // cannot fail: set on the line above (so is `orderColumn` below).
                    pending.append(PendingColumn(column: Column(name: entityColumn!, type: "INTEGER"), entityNumber: entity.number, propertyName: name, part: 1))
                }
                var orderColumn: String?
                if let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    orderColumn = claim("Z_FOK_" + name.uppercased())
                    pending.append(PendingColumn(column: Column(name: orderColumn!, type: "INTEGER"), entityNumber: entity.number, propertyName: name, part: 2))
                }
                relationshipStorage[key] = .foreignKey(column: column, entityColumn: entityColumn, orderColumn: orderColumn)
            }
        }

        pending.sort { a, b in
            let rankA = Self.typeOrder.firstIndex(of: a.column.type) ?? Self.typeOrder.count
            let rankB = Self.typeOrder.firstIndex(of: b.column.type) ?? Self.typeOrder.count
            return (rankA, a.entityNumber, a.propertyName, a.part) < (rankB, b.entityNumber, b.propertyName, b.part)
        }
        let columns = [Column(name: "Z_PK", type: "INTEGER"), Column(name: "Z_ENT", type: "INTEGER"), Column(name: "Z_OPT", type: "INTEGER")]
            + pending.map(\.column)

        var indexes = foreignKeyColumns.map { IndexDefinition(name: "\(tableName)_\($0)_INDEX", table: tableName, terms: [$0], isUnique: false) }
        if members.count > 1 {
            indexes.append(IndexDefinition(name: "\(tableName)_Z_ENT_INDEX", table: tableName, terms: ["Z_ENT"], isUnique: false))
        }
        indexes += indexedColumns.map { IndexDefinition(name: "\(tableName)_\($0)_INDEX", table: tableName, terms: [$0], isUnique: false) }
        for entity in members {
            for fetchIndex in entity.declaration.fetchIndexes {
                let terms = fetchIndex.elements.map { element in
                    "\(storedColumn(element.property, of: entity)) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")"
                }
                indexes.append(IndexDefinition(name: "Z_\(entity.name)_\(fetchIndex.name)", table: tableName, terms: terms, isUnique: false))
            }
            for constraint in entity.declaration.uniquenessConstraints {
                let terms = constraint.map { "\(storedColumn($0, of: entity)) COLLATE BINARY ASC" }
                indexes.append(IndexDefinition(name: "Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))", table: tableName, terms: terms, isUnique: true))
            }
        }

        let index = tables.count
        for entity in members { tableIndexByEntity[entity.name] = index }
        tables.append(EntityTable(name: tableName, rootEntity: root.name, entityNumbers: members.map(\.number), columns: columns, indexes: indexes))
    }

    /// The column of an attribute of `entity`, declared on it or an ancestor.
    func attributeColumn(_ attribute: String, of entity: Entity) -> String? {
        inherited(attributeColumns, attribute, of: entity)
    }

    /// Where a relationship of `entity`, declared on it or an ancestor, keeps its links.
    func storage(ofRelationship relationship: String, of entity: Entity) -> RelationshipStorage? {
        inherited(relationshipStorage, relationship, of: entity)
    }

    /// A property's entry, looked up on the entity and then its ancestors (properties are keyed by declaring entity).
    private func inherited<Value>(_ table: [StoreSchema.PropertyKey: Value], _ property: String, of entity: Entity) -> Value? {
        for candidate in model.lineage(of: entity) {
            if let value = table[StoreSchema.PropertyKey(entity: candidate.name, property: property)] { return value }
        }
        return nil
    }

    /// The column of an attribute or to-one, for indexes (columns are assigned before indexes are).
    private func storedColumn(_ property: String, of entity: Entity) -> String {
        if let column = attributeColumn(property, of: entity) { return column }
        if case .foreignKey(let column, _, _)? = storage(ofRelationship: property, of: entity) { return column }
        preconditionFailure("'\(property)' of '\(entity.name)' has no column")
    }

    /// A to-many whose inverse is a to-one is kept by the destination's foreign key.
    private func inverseForeignKeyStorage(of relationship: RelationshipDescription, in entity: Entity) -> RelationshipStorage {
        guard relationship.isPersistent else { return .transient }
        guard let inverse = model.inverse(of: relationship), inverse.isToOne,
              let destination = model.entity(named: relationship.destination) else {
            preconditionFailure("to-many '\(entity.name).\(relationship.name)' without a to-one inverse has join-table storage")
        }
        let root = model.root(of: destination)
        // The inverse's own columns, as its table claimed them; a model read from a file may give the to-one no
        // column of its own (a transient inverse), and then the name it would have is used, as before.
        var column = "Z" + inverse.name.uppercased()
        var orderColumn = relationship.isOrdered ? "Z_FOK_" + inverse.name.uppercased() : nil
        if case .foreignKey(let claimed, _, let claimedOrder)? = storage(ofRelationship: inverse.name, of: destination) {
            column = claimed
            if relationship.isOrdered { orderColumn = claimedOrder ?? orderColumn }
        }
        return .inverseForeignKey(table: "Z" + root.name.uppercased(), column: column, orderColumn: orderColumn)
    }

    /// Join tables for many-to-many pairs and many-to-nil relationships, named from the lower-numbered side.
    private mutating func planJoinTables() {
        for entity in model.entities {
            for relationship in entity.declaration.relationships where relationship.isToMany {
                let key = StoreSchema.PropertyKey(entity: entity.name, property: relationship.name)
                guard relationship.isPersistent else {
                    relationshipStorage[key] = .transient
                    continue
                }
                guard let destination = model.entity(named: relationship.destination) else { continue }
                let inverse = model.inverse(of: relationship)
                if let inverse, inverse.isToOne { continue }
                if let inverse {
                    let inverseOwner = declaringEntity(of: inverse.name, from: destination)
                    // Each pair is laid out once, from the side that names the table.
                    let namesTable = entity.number < inverseOwner.number
                        || (entity.number == inverseOwner.number && relationship.name <= inverse.name)
                    guard namesTable else { continue }
                    addManyToMany(relationship, of: entity, inverse: inverse, inverseOwner: inverseOwner)
                } else {
                    addManyToNil(relationship, of: entity, destination: destination)
                }
            }
        }
    }

    private mutating func addManyToMany(
        _ relationship: RelationshipDescription, of owner: Entity, inverse: RelationshipDescription, inverseOwner: Entity
    ) {
        let table = "Z_\(owner.number)\(relationship.name.uppercased())"
        let reflexive = owner.number == inverseOwner.number
        // The column holding owner keys is named after the relationship that points at the owner (the inverse).
        let ownerColumn = "Z_\(owner.number)\(inverse.name.uppercased())"
        let memberColumn = reflexive ? "REFLEXIVE" : "Z_\(inverseOwner.number)\(relationship.name.uppercased())"
        let symmetric = reflexive && relationship.name == inverse.name
        var columns = [Column(name: ownerColumn, type: "INTEGER"), Column(name: memberColumn, type: "INTEGER")]
        var ownerOrder: String?
        var memberOrder: String?
        // The unwraps below cannot fail: each order column is set on the line before it is used.
        if relationship.isOrdered {
            ownerOrder = "Z_FOK_" + ownerColumn.dropFirst(2)
            columns.append(Column(name: ownerOrder!, type: "INTEGER"))
        }
        if inverse.isOrdered && !symmetric {
            memberOrder = reflexive ? "FOK_REFLEXIVE" : "Z_FOK_" + memberColumn.dropFirst(2)
            columns.append(Column(name: memberOrder!, type: "INTEGER"))
        }
        joinTables.append(JoinTable(
            name: table, columns: columns, primaryKey: [ownerColumn, memberColumn],
            indexes: [IndexDefinition(name: "\(table)_\(memberColumn)_INDEX", table: table, terms: [memberColumn, ownerColumn], isUnique: false)]))
        relationshipStorage[StoreSchema.PropertyKey(entity: owner.name, property: relationship.name)] =
            .joinTable(table: table, sourceColumn: ownerColumn, destinationColumn: memberColumn, orderColumn: ownerOrder, isSymmetric: symmetric)
        if !symmetric {
            relationshipStorage[StoreSchema.PropertyKey(entity: inverseOwner.name, property: inverse.name)] =
                .joinTable(table: table, sourceColumn: memberColumn, destinationColumn: ownerColumn, orderColumn: memberOrder, isSymmetric: false)
        }
    }

    /// Faultline's deviation: a to-many with no inverse gets a join table, so a destination may belong to many sources.
    private mutating func addManyToNil(_ relationship: RelationshipDescription, of owner: Entity, destination: Entity) {
        let table = "Z_\(owner.number)\(relationship.name.uppercased())"
        let ownerColumn = "Z_\(owner.number)\(owner.name.uppercased())"
        let memberColumn = destination.includes(owner.name) || owner.includes(destination.name)
            ? "REFLEXIVE" : "Z_\(destination.number)\(relationship.name.uppercased())"
        var columns = [Column(name: ownerColumn, type: "INTEGER"), Column(name: memberColumn, type: "INTEGER")]
        var orderColumn: String?
        if relationship.isOrdered {
            // cannot fail: set on the line above.
            orderColumn = "Z_FOK_" + ownerColumn.dropFirst(2)
            columns.append(Column(name: orderColumn!, type: "INTEGER"))
        }
        joinTables.append(JoinTable(
            name: table, columns: columns, primaryKey: [ownerColumn, memberColumn],
            indexes: [IndexDefinition(name: "\(table)_\(memberColumn)_INDEX", table: table, terms: [memberColumn, ownerColumn], isUnique: false)]))
        relationshipStorage[StoreSchema.PropertyKey(entity: owner.name, property: relationship.name)] =
            .joinTable(table: table, sourceColumn: ownerColumn, destinationColumn: memberColumn, orderColumn: orderColumn, isSymmetric: false)
    }

    /// The entity among `entity` and its ancestors that declares the relationship `name`.
    private func declaringEntity(of name: String, from entity: Entity) -> Entity {
        model.lineage(of: entity).first { $0.declaration.relationships.contains { $0.name == name } } ?? entity
    }
}
