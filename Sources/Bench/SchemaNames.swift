import GraphStore

/// The SQL names a raw peer writes, looked up in the layout GraphStore gives a model, so that both sides of a case
/// always name the same tables and columns. A name the model does not have is a `BenchmarkError`.
struct SchemaNames {
    let schema: StoreSchema

    init(_ model: ObjectModel) {
        schema = StoreSchema(model: model)
    }

    func table(_ entity: String) throws -> String {
        guard let table = schema.table(for: entity) else { throw BenchmarkError("the schema has no table for \(entity)") }
        return table.name
    }

    func column(_ attribute: String, of entity: String) throws -> String {
        guard let column = schema.column(forAttribute: attribute, of: entity) else {
            throw BenchmarkError("the schema has no column for \(entity).\(attribute)")
        }
        return column
    }

    func foreignKey(_ relationship: String, of entity: String) throws -> (column: String, entityColumn: String?) {
        guard case .foreignKey(let column, let entityColumn, _)? = schema.storage(forRelationship: relationship, of: entity) else {
            throw BenchmarkError("the schema keeps \(entity).\(relationship) in no foreign key column")
        }
        return (column, entityColumn)
    }

    /// The join table and its column for the source side.
    func joinTable(_ relationship: String, of entity: String) throws -> (String, String) {
        guard case .joinTable(let table, let source, _, _, _)? = schema.storage(forRelationship: relationship, of: entity) else {
            throw BenchmarkError("the schema keeps \(entity).\(relationship) in no join table")
        }
        return (table, source)
    }
}
