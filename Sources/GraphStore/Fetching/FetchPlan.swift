import Synchronization

/// A fetch request worked out against the store's tables once: which entities and table, the FROM clause with the
/// joins its predicate and sort need, the WHERE clause with its bound values, and the ORDER BY. Every statement a
/// request runs (rows, IDs, counts, later batches) is built from these pieces, so they all select the same rows in
/// the same order.
struct FetchPlan: Sendable {
    let request: FetchRequest
    let mapping: EntityMapping
    /// The fetched entity and, unless turned off, its sub-entities.
    let included: [EntityMapping]
    let includedNumbers: Set<Int>
    /// How to read a row of any included entity: whole, or the properties the request names.
    let rowPlan: RowReadPlan
    /// What the request reads of each row, at each prefetched key path too (`propertiesToFetch`).
    let selection: PropertySelection
    /// `ZCHAT t0` followed by the predicate's and sort's joins.
    private(set) var from: String
    /// ` WHERE …` or "".
    private(set) var whereClause: String
    private(set) var arguments: [AttributeValue]
    /// ` ORDER BY …` or "" (no sort descriptors: SQLite's order, as Core Data leaves it).
    var orderBy: String {
        orderTerms.isEmpty ? "" : " ORDER BY " + orderTerms.map { $0.ascending ? $0.column : $0.column + " DESC" }.joined(separator: ", ")
    }
    /// The ORDER BY's terms.
    /// `ownColumn`: the term is a column of the fetched table itself (`SELF`, or a key path of one name), not of a
    /// table a sort key path joined.
    private(set) var orderTerms: [(column: String, ascending: Bool, ownColumn: Bool)]
    /// The sort's columns, one per descriptor (for in-memory merges the key paths are used instead).
    let sortColumns: [String]
    private var compiler: PredicateCompiler
    /// The to-manys of `request.countsToFetch`, each with its count's term for the select list.
    let counted: [CountedToMany]
    /// `, (SELECT COUNT(*) …)` per counted to-many (with their leading commas), or "".
    let countsSelectList: String

    struct CountedToMany: Sendable {
        let name: String
        /// `(SELECT COUNT(*) FROM ZREACTION c0 WHERE c0.ZMESSAGE = t0.Z_PK)`
        let term: String
    }

    /// Statements already written from this plan, shared by its copies until one of them changes (then it gets
    /// its own): a plan kept by the plan cache writes each statement once, not on every fetch.
    private(set) var statements = StatementMemo()

    /// The plan of `request`. With `readsObjects` (a fetch of objects), `propertiesToFetch` chooses what each row
    /// reads; otherwise it is left to the caller (`fetchDictionaries`) and rows are planned whole.
    init(_ request: FetchRequest, coordinator: PersistentStoreCoordinator, readsObjects: Bool = true) throws(ContextError) {
        guard let mapping = coordinator.mapping(forEntity: request.entityName) else { throw .unknownEntity(request.entityName) }
        guard request.fetchLimit >= 0, request.fetchOffset >= 0, request.fetchBatchSize >= 0 else {
            throw .invalidFetch("\(request.entityName): fetchLimit, fetchOffset and fetchBatchSize must not be negative")
        }
        self.request = request
        self.mapping = mapping
        let included = request.includesSubentities
            ? [mapping] + mapping.entity.descendantNames.compactMap { coordinator.mapping(forEntity: $0) }
            : [mapping]
        self.included = included
        self.includedNumbers = Set(included.map(\.number))
        let selection = readsObjects ? try coordinator.planCache.selection(for: request, mapping: mapping, coordinator: coordinator) : .wholeRows
        self.selection = selection
        self.rowPlan = coordinator.planCache.rowPlan(for: mapping, includesSubentities: request.includesSubentities,
                                                     properties: selection.names(at: ""), coordinator: coordinator)

        var compiler = PredicateCompiler(schema: coordinator.store.schema, entity: mapping.name)
        var clauses: [String] = []
        var arguments: [AttributeValue] = []
        // A table shared by several entities is narrowed to the included ones unless they are all of its rows.
        let tableNumbers = coordinator.store.schema.table(for: mapping.name)?.entityNumbers ?? []
        if mapping.tableHasSubentities, Set(tableNumbers) != includedNumbers {
            let numbers = included.map(\.number)
            clauses.append(numbers.count == 1 ? "t0.Z_ENT = ?" : "t0.Z_ENT IN (\(Self.placeholders(numbers.count)))")
            arguments += numbers.map { .integer(Int64($0)) }
        }
        if let predicate = request.predicate {
            let compiled: PredicateSQL
            do {
                compiled = try compiler.compile(predicate)
            } catch {
                throw .predicate(entity: mapping.name, error)
            }
            if !compiled.condition.isEmpty {
                clauses.append(clauses.isEmpty ? compiled.condition : "(\(compiled.condition))")
                arguments += compiled.arguments
            }
        }
        var sortColumns: [String] = []
        for descriptor in request.sortDescriptors {
            do {
                // SELF orders by primary key (object IDs order by it).
                sortColumns.append(descriptor.keyPath == "SELF" ? "t0.Z_PK" : try compiler.column(forKeyPath: descriptor.keyPath))
            } catch {
                throw .invalidFetch("\(mapping.name): cannot sort by '\(descriptor.keyPath)': \(error.description)")
            }
        }
        self.sortColumns = sortColumns
        self.whereClause = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        self.arguments = arguments
        self.orderTerms = zip(sortColumns, request.sortDescriptors).map { column, descriptor in
            (column, descriptor.ascending, !descriptor.keyPath.contains("."))
        }
        self.compiler = compiler
        self.from = ([mapping.table + " t0"] + compiler.joins).joined(separator: " ")
        let counted = try Self.counted(request.countsToFetch, of: mapping, coordinator: coordinator)
        self.counted = counted
        self.countsSelectList = counted.map { ", " + $0.term }.joined()
    }

    /// The counted to-manys of `names`: each must be a to-many of the fetched entity whose members the store
    /// keeps (a foreign key in the destination's table, or a join table).
    private static func counted(_ names: [String], of mapping: EntityMapping, coordinator: PersistentStoreCoordinator) throws(ContextError) -> [CountedToMany] {
        var counted: [CountedToMany] = []
        for name in names where !counted.contains(where: { $0.name == name }) {
            guard case .toMany(let index)? = mapping.slot(forKey: name) else {
                throw .invalidFetch("\(mapping.name): '\(name)' in countsToFetch is not a to-many relationship of \(mapping.name)")
            }
            guard let term = MappingSQL.memberCount(of: mapping.toManys[index], alias: "c\(counted.count)") else {
                throw .invalidFetch("\(mapping.name): '\(name)' in countsToFetch keeps no members in the store to count")
            }
            counted.append(CountedToMany(name: name, term: term))
        }
        return counted
    }

    /// Adds the primary key as the last sort term, so that statements reading the same order in pieces (a first
    /// batch, then later IDs) agree on rows whose sort values tie.
    mutating func breakTiesByPrimaryKey() {
        guard !orderTerms.contains(where: { $0.column == "t0.Z_PK" }) else { return }
        orderTerms.append(("t0.Z_PK", true, true))
        statements = StatementMemo()
    }

    /// Leaves the rows with these primary keys out of every statement (objects deleted in memory, not yet saved).
    /// A few are bound one by one; many go as one JSON array, within SQLite's limit on bound values.
    mutating func excludePrimaryKeys(_ keys: [Int64]) {
        guard !keys.isEmpty else { return }
        if keys.count <= Self.inlineExclusionLimit {
            addCondition("t0.Z_PK NOT IN (\(Self.placeholders(keys.count)))", keys.map { .integer($0) })
        } else {
            addCondition("t0.Z_PK NOT IN (SELECT value FROM json_each(?))", [.string("[" + keys.map(String.init).joined(separator: ",") + "]")])
        }
    }

    /// Narrows every statement by one more condition, its values bound after the plan's own.
    mutating func addCondition(_ clause: String, _ values: [AttributeValue]) {
        // The conditions so far may be one predicate with ORs: they are kept together.
        whereClause = whereClause.isEmpty ? " WHERE " + clause : " WHERE (" + whereClause.dropFirst(" WHERE ".count) + ") AND " + clause
        arguments += values
        statements = StatementMemo()
    }

    /// The condition "this row comes before a row whose sort values are `values`" in the plan's order (one value
    /// per ORDER BY term), as SQLite orders: NULL first ascending, last descending.
    func sortsBefore(_ values: [AttributeValue]) -> (clause: String, arguments: [AttributeValue]) {
        var alternatives: [String] = []
        var arguments: [AttributeValue] = []
        var equalSoFar: [String] = []
        var equalArguments: [AttributeValue] = []
        for (term, value) in zip(orderTerms, values) {
            let column = term.column
            let before: String?
            var beforeArguments: [AttributeValue] = []
            switch (value.isNull, term.ascending) {
            case (true, true): before = nil // nothing is below NULL
            case (true, false): before = "\(column) IS NOT NULL"
            case (false, true):
                before = "(\(column) IS NULL OR \(column) < ?)"
                beforeArguments = [value]
            case (false, false):
                before = "\(column) > ?"
                beforeArguments = [value]
            }
            if let before {
                alternatives.append((equalSoFar + [before]).joined(separator: " AND "))
                arguments += equalArguments + beforeArguments
            }
            equalSoFar.append("\(column) IS ?")
            equalArguments.append(value)
        }
        return (alternatives.isEmpty ? "0" : "(" + alternatives.map { "(\($0))" }.joined(separator: " OR ") + ")", arguments)
    }

    /// How many excluded keys are bound one by one.
    static let inlineExclusionLimit = 50

    /// The qualified column for a key path through to-ones, joining what it needs (for dictionary results).
    mutating func column(forKeyPath keyPath: String) throws(ContextError) -> String {
        let column: String
        do {
            column = try compiler.column(forKeyPath: keyPath)
        } catch {
            throw .predicate(entity: mapping.name, error)
        }
        from = ([mapping.table + " t0"] + compiler.joins).joined(separator: " ")
        statements = StatementMemo()
        return column
    }

    /// `SELECT <list> FROM … WHERE … [ORDER BY …] [LIMIT … [OFFSET …]]`, with `extraJoins` after the plan's own.
    func select(_ list: String, extraJoins: [String] = [], ordered: Bool = true, limit: Int = 0, offset: Int = 0) -> String {
        let joins = extraJoins.isEmpty ? "" : " " + extraJoins.joined(separator: " ")
        return "SELECT \(list) FROM \(from)\(joins)\(whereClause)\(ordered ? orderBy : "")\(Self.limitClause(limit: limit, offset: offset))"
    }

    /// Like `select`, for a window of rows with joins that only add columns (a joined prefetch), in the cheaper of
    /// two shapes. A first window (no offset) whose joins add nothing but columns (no `repeatsRows`, a joined
    /// to-many's) is written flat when `readsInOrder` says SQLite walks an index in the fetch's order: it then joins
    /// the window's rows as it finds them and stops at the limit, with nothing to sort. Otherwise the window is
    /// chosen first (`selectWindowThenJoin`).
    func selectWindow(_ list: String, joins: [String], repeatsRows: Bool, limit: Int, offset: Int,
                      readsInOrder: (String) -> Bool) -> String {
        if !joins.isEmpty, limit > 0, offset == 0, !repeatsRows {
            let flat = select(list, extraJoins: joins, limit: limit)
            if readsInOrder(flat) { return flat }
        }
        return selectWindowThenJoin(list, joins: joins, limit: limit, offset: offset)
    }

    /// Like `select`, for a window of rows with joins that only add columns (a joined prefetch): the window is
    /// chosen first, in a subquery, and only its rows are joined. (Joined flat, with no index serving the order,
    /// SQLite would look up every row's destinations before sorting and cutting, a cost that grows with the table
    /// instead of the window; `selectWindow` writes it flat when an index does serve the order.) The sort
    /// values ride along so the outer statement keeps the order: a sort column of the fetched table is carried once,
    /// under its own name (the outer statement sorts by `t0.ZSENTAT` whether or not the row plan reads it); a sort
    /// value from a joined table rides as `_s0`, `_s1`…. Every column carried is one more the subquery's rows and
    /// the outer sort hold, so nothing is carried twice.
    /// The subquery carries the columns `rowPlan` reads (all of them, `t0.*`, for whole rows).
    func selectWindowThenJoin(_ list: String, joins: [String], limit: Int, offset: Int) -> String {
        guard !joins.isEmpty, limit > 0 || offset > 0 else {
            return select(list, extraJoins: joins, limit: limit, offset: offset)
        }
        var carried = rowPlan.readsWholeRows ? ["t0.*"] : rowPlan.columns.filter { $0.hasPrefix("t0.") }
        var outerOrder: [String] = []
        for (index, term) in orderTerms.enumerated() {
            let direction = term.ascending ? "" : " DESC"
            if term.ownColumn {
                if !rowPlan.readsWholeRows, !carried.contains(term.column) { carried.append(term.column) }
                outerOrder.append(term.column + direction)
            } else {
                carried.append("\(term.column) AS _s\(index)")
                outerOrder.append("t0._s\(index)" + direction)
            }
        }
        let inner = "SELECT \(carried.joined(separator: ", ")) FROM \(from)\(whereClause)\(orderBy)\(Self.limitClause(limit: limit, offset: offset))"
        return "SELECT \(list) FROM (\(inner)) t0 \(joins.joined(separator: " "))" + (outerOrder.isEmpty ? "" : " ORDER BY " + outerOrder.joined(separator: ", "))
    }

    /// The number of matching rows, the request's offset and limit applied.
    var countSQL: String {
        let limit = request.fetchLimit
        let offset = request.fetchOffset
        guard limit > 0 || offset > 0 else { return "SELECT COUNT(*) FROM \(from)\(whereClause)" }
        return "SELECT COUNT(*) FROM (SELECT 1 FROM \(from)\(whereClause)\(Self.limitClause(limit: limit, offset: offset)))"
    }

    /// `t0.Z_ENT, t0.Z_PK` (or `0, t0.Z_PK` for a table of one entity): what ID-only statements select.
    var idSelectList: String { (mapping.tableHasSubentities ? "t0.Z_ENT" : "0") + ", t0.Z_PK" }

    /// The entity every matching row is of, when the fetched entity has no subentities (its table may hold other
    /// entities' rows, which the statement's `Z_ENT` condition leaves out); nil when a row's own `Z_ENT` says.
    var soleEntityNumber: Int? {
        mapping.entityNumbers.lowerBound == mapping.entityNumbers.upperBound ? mapping.entityNumbers.lowerBound : nil
    }

    /// Reads an ID from the first two columns of an ID-only statement.
    func objectID(_ handle: borrowing RowView, offset: Int32 = 0) -> ObjectID {
        let entity = mapping.tableHasSubentities ? handle.int64(offset) : Int64(mapping.number)
        return ObjectID.stored(entity: entity, of: mapping.entityNumbers, key: handle.int64(offset + 1))
    }

    /// Limits are numbers the request holds, not user text, so they are written inline as Core Data writes them.
    static func limitClause(limit: Int, offset: Int) -> String {
        switch (limit > 0, offset > 0) {
        case (true, true): " LIMIT \(limit) OFFSET \(offset)"
        case (true, false): " LIMIT \(limit)"
        case (false, true): " LIMIT -1 OFFSET \(offset)"
        case (false, false): ""
        }
    }

    static func placeholders(_ count: Int) -> String {
        count > 0 ? String(repeating: "?, ", count: count - 1) + "?" : ""
    }
}

/// The statements written from one plan, by what varies between its fetches (window, counting). Plans are values;
/// this is shared by reference among a plan's copies, so that the plan cache's copy keeps what any fetch wrote.
final class StatementMemo: Sendable {
    struct Key: Hashable {
        let limit: Int
        let offset: Int
        let counting: Bool
        /// A statement reading rows by their keys (`WHERE t0.Z_PK IN (…)`, `limit` of them), not a window.
        var byKeys = false
    }

    /// Few keys per plan (a first window, a batch size): past this many it starts again.
    static let limit = 16
    private let written = Mutex<[Key: String]>([:])

    /// The statement for `key`, written by `write` the first time.
    func sql(_ key: Key, write: () -> String) -> String {
        written.value(for: key, limit: Self.limit, make: write)
    }
}
