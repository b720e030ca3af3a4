/// How a model is laid out in an SQLite store, named as Core Data names it.
///
/// One table per root entity (`Z` + upper-cased name), `Z_PK`/`Z_ENT`/`Z_OPT` first, a `Z<NAME>` column per stored
/// attribute and to-one, join tables `Z_<n><RELATIONSHIP>` for many-to-many, `Z_PRIMARYKEY`, `Z_METADATA` and
/// `Z_MODELCACHE`. See `docs/store-layout.md` for every rule and the one deliberate deviation (many-to-nil).
public struct StoreSchema: Sendable {
    public let model: ObjectModel
    /// Entity tables in root-entity order.
    public let tables: [EntityTable]
    public let joinTables: [JoinTable]
    public let triggers: [TriggerDefinition]
    /// The copied derived attributes, for recomputing them over sets of rows.
    let copyRefreshes: [CopyRefresh]

    private let layout: SchemaLayout

    struct PropertyKey: Hashable, Sendable {
        let entity: String
        let property: String
    }

    public init(model: ObjectModel) {
        var layout = SchemaLayout(model: model)
        layout.build()
        self.model = model
        self.tables = layout.tables
        self.joinTables = layout.joinTables
        let derived = DerivedAttributeTriggers(model: model, layout: layout)
        self.triggers = derived.definitions()
        self.copyRefreshes = derived.copyRefreshes()
        self.layout = layout
    }

    /// The table holding the rows of `entity` (its root's table).
    public func table(for entity: String) -> EntityTable? {
        layout.tableIndexByEntity[entity].map { tables[$0] }
    }

    /// The column of a stored attribute (own or inherited) of `entity`.
    public func column(forAttribute attribute: String, of entity: String) -> String? {
        model.entity(named: entity).flatMap { layout.attributeColumn(attribute, of: $0) }
    }

    /// Where the links of a relationship (own or inherited) of `entity` are kept.
    public func storage(forRelationship relationship: String, of entity: String) -> RelationshipStorage? {
        model.entity(named: entity).flatMap { layout.storage(ofRelationship: relationship, of: $0) }
    }

    /// Every statement that creates the store, in order: entity tables with their indexes, join tables with
    /// theirs, derived-attribute triggers, then the bookkeeping tables. No trailing semicolons.
    public var createStatements: [String] {
        var statements: [String] = []
        for table in tables {
            statements.append(table.createStatement)
            statements += table.indexes.map(\.createStatement)
        }
        for table in joinTables {
            statements.append(table.createStatement)
            statements += table.indexes.map(\.createStatement)
        }
        statements += triggers.map(\.createStatement)
        statements += BookkeepingTables.all
        return statements
    }

    /// Names SQLite would take for one and the same (it compares names without case): two tables or indexes (one
    /// namespace), two triggers, or two columns of one table. One line each, naming what the two are.
    func nameCollisions() -> [String] {
        var problems: [String] = []
        func check(_ items: [(name: String, what: String)]) {
            var seen: [String: (name: String, what: String)] = [:]
            for item in items {
                let key = item.name.uppercased()
                if let earlier = seen[key] {
                    problems.append("\(earlier.what) and \(item.what) would both be named \(earlier.name) (SQLite names ignore case)")
                } else {
                    seen[key] = item
                }
            }
        }
        var objects: [(name: String, what: String)] = BookkeepingTables.names.map { ($0, "the store's table \($0)") }
        for table in tables {
            objects.append((table.name, "the table of entity '\(table.rootEntity)'"))
            objects += table.indexes.map { ($0.name, "index \($0.name) on \(table.name)") }
            check(table.columns.map { ($0.name, "column \($0.name) of \(table.name)") })
        }
        for table in joinTables {
            objects.append((table.name, "join table \(table.name)"))
            objects += table.indexes.map { ($0.name, "index \($0.name) on \(table.name)") }
            check(table.columns.map { ($0.name, "column \($0.name) of \(table.name)") })
        }
        check(objects)
        check(triggers.map { ($0.name, "trigger \($0.name) on \($0.table)") })
        return problems
    }

    /// The statements as a script `sqlite3` runs as is.
    public var ddl: String {
        createStatements.map { $0 + ";\n" }.joined()
    }
}
