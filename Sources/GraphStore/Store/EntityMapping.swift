import Synchronization
/// Everything the store needs to read and write one entity's rows, worked out once per coordinator: columns in
/// snapshot order, relationship storage, and the SQL of the statements run most often.
public final class EntityMapping: Sendable {
    public struct StoredAttribute: Sendable {
        public let name: String
        public let type: AttributeType
        public let column: String
        public let description: AttributeDescription
    }

    public struct ToOne: Sendable {
        public let name: String
        public let column: String
        /// Holds the destination's `Z_ENT` when the destination has sub-entities.
        public let entityColumn: String?
        /// This row's position in the inverse ordered to-many.
        public let orderColumn: String?
        /// The destination entity's number (its exact entity when `entityColumn` is nil).
        public let destinationNumber: Int
        public let inverse: String?
        public let description: RelationshipDescription
    }

    public struct ToMany: Sendable {
        public let name: String
        public let storage: RelationshipStorage
        public let destinationNumber: Int
        /// The destination table, and whether its rows carry several entities (then `Z_ENT` is read, not `0`).
        public let destinationTable: String
        public let destinationHasSubentities: Bool
        public let inverse: String?
        public let description: RelationshipDescription
    }

    public let entity: Entity
    /// The class contexts make objects of: `ManagedObject`, or a subclass registered for the typed API.
    public let objectClass: ManagedObject.Type
    public let table: String
    /// Whether the table holds several entities (so `Z_ENT` is selected rather than a constant `0`).
    public let tableHasSubentities: Bool
    public let attributes: [StoredAttribute]
    public let toOnes: [ToOne]
    public let toManys: [ToMany]
    /// Transient attributes: kept in memory only.
    public let transientAttributes: [String]
    private let slotByKey: [String: Slot]
    /// The same keys as a list: comparing a key with a few short names (Swift keeps names of up to 15 UTF-8 bytes
    /// inline, so each comparison is two machine words) is faster than hashing it, and a key is looked up on
    /// every value set or read by name.
    private let slotList: [(key: String, slot: Slot)]
    /// The raw bits of each key of `slotList`, in the same order.
    private let slotBits: [KeyBits]
    /// `slotBits` by a hash of the bits: per bucket, the position in `slotList` plus one of the only key whose bits
    /// land there, 0 for none, -1 for several. A key given as the literal the model was declared with is found by
    /// one hash and one comparison, where walking `slotBits` compared half of them on average.
    private let slotBuckets: [Int8]
    /// Up to this many keys, `slot(forKey:)` looks in `slotList` by bits; beyond, in `slotByKey`.
    private static let listedKeys = 24
    /// What typed properties' wrappers resolved to, by the address of their key's text (see
    /// `ManagedObject.resolve(wrapper:)`): one entry per wrapper declaration at most, so the table stays as small as
    /// the model.
    ///
    /// Read on every typed-property access, so reading takes no lock: the table is an immutable list, published
    /// whole through an atomic pointer when an entry is added (under `wrapperTables`' lock, which also keeps every
    /// list ever published alive, so a reader never holds a freed one).
    private let wrapperTable = Atomic<Unmanaged<WrapperTable>?>(nil)
    private let wrapperTables = Mutex<[WrapperTable]>([])
    /// A bound on the table, should key texts ever come from memory made afresh.
    private static let wrapperSlotLimit = 256

    /// What a wrapper resolved to before, with its key's text (for faults and messages); nil the first time.
    func resolvedWrapper(_ key: PropertyKey) -> ResolvedKey? {
        guard let table = wrapperTable.load(ordering: .acquiring) else { return nil }
        return table._withUnsafeGuaranteedRef { table in
            table.position(of: key).map { ResolvedKey(slot: table.slots[$0], key: table.keys[$0]) }
        }
    }

    /// The slot a typed property's wrapper resolved to, when it has been resolved before: the read path's lookup,
    /// which copies no key text.
    @inline(__always) func wrapperSlot(_ key: PropertyKey) -> Slot? {
        guard let table = wrapperTable.load(ordering: .acquiring) else { return nil }
        return table._withUnsafeGuaranteedRef { table in table.position(of: key).map { table.slots[$0] } }
    }

    func remember(_ resolved: ResolvedKey, forWrapper key: PropertyKey) {
        wrapperTables.withLock { tables in
            let last = tables.last
            guard (last?.slots.count ?? 0) < Self.wrapperSlotLimit, last?.position(of: key) == nil else { return }
            let table = WrapperTable(adding: resolved, for: key, to: last)
            tables.append(table)
            wrapperTable.store(Unmanaged.passUnretained(table), ordering: .releasing)
        }
    }

    /// Where a key's value lives in an object.
    public enum Slot: Sendable, Equatable {
        case attribute(Int)
        case toOne(Int)
        case toMany(Int)
        case transient
    }

    /// `t0.Z_ENT` (or `0`), `t0.Z_PK`, `t0.Z_OPT`, then attribute columns and to-one columns, aliased `t0`.
    public let selectList: String
    /// The same terms, one per element.
    public let selectColumns: [String]
    /// `SELECT <selectList> FROM <TABLE> t0 WHERE t0.Z_PK = ?`: an object fault's statement.
    public let selectByPrimaryKey: String
    /// `INSERT INTO <TABLE> (Z_PK, Z_ENT, Z_OPT, <stored columns>, <to-one columns>) VALUES (?, …)`: every stored
    /// attribute but the derived ones (their triggers fill them), then each to-one's key and entity columns.
    public let insertSQL: String
    /// Positions in `attributes` of the attributes `insertSQL` binds, in its order.
    let insertedAttributeIndexes: [Int]
    /// The number of the root of this entity's hierarchy: it holds the `Z_PRIMARYKEY` row keys come from.
    public let rootNumber: Int
    /// Whether any attribute is derived (a count or copy the store's triggers keep).
    public let hasDerivedAttributes: Bool
    /// Whether any relationship's delete rule is Deny.
    let hasDenyRules: Bool
    /// The value each stored attribute starts with in a new object (its model default, else null).
    let defaultValues: [AttributeValue]
    /// `defaultValues` and a nil destination for every to-one: the row a new object starts by sharing.
    let defaultRow: RowSnapshot
    /// Each stored attribute's type, in `attributes`' order: all a row read needs of them. Walking `attributes`
    /// instead copies each one with its description, retaining and releasing every string in it, on every row.
    let attributeTypes: [AttributeType]
    /// Each stored to-one's destination number, the entity numbers its key may name (the destination and its
    /// sub-entities) and whether its key has an entity column, in `toOnes`' order.
    let toOneDestinations: [(number: Int, entities: ClosedRange<Int>, hasEntityColumn: Bool)]
    /// The entity numbers a row read for this entity may carry: its own and its sub-entities'.
    let entityNumbers: ClosedRange<Int>
    /// What decoding a row needs, in memory the mapping owns (see `RowDecoding`).
    let rowDecoding: RowDecoding

    public var name: String { entity.name }
    public var number: Int { entity.number }

    deinit {
        rowDecoding.deallocate()
    }

    init(entity: Entity, schema: StoreSchema, objectClass: ManagedObject.Type) {
        // The unwraps here cannot fail: the schema was laid out from this model, which gives every entity a table,
        // every stored attribute a column and every persistent relationship a destination (checked by the resolver)
        // and a storage.
        let model = schema.model
        let table = schema.table(for: entity.name)!
        self.entity = entity
        self.objectClass = objectClass
        self.table = table.name
        self.tableHasSubentities = table.entityNumbers.count > 1
        self.attributes = entity.attributes.filter(\.isPersistent).map { attribute in
            StoredAttribute(name: attribute.name, type: attribute.type,
                            column: schema.column(forAttribute: attribute.name, of: entity.name)!, description: attribute)
        }
        self.transientAttributes = entity.attributes.filter(\.isTransient).map(\.name)
        var toOnes: [ToOne] = []
        var toManys: [ToMany] = []
        for relationship in entity.relationships where relationship.isPersistent {
            let destination = model.entity(named: relationship.destination)!
            let storage = schema.storage(forRelationship: relationship.name, of: entity.name)!
            if case .foreignKey(let column, let entityColumn, let orderColumn) = storage {
                toOnes.append(ToOne(name: relationship.name, column: column, entityColumn: entityColumn, orderColumn: orderColumn,
                                    destinationNumber: destination.number, inverse: relationship.inverse, description: relationship))
            } else {
                let destinationTable = schema.table(for: destination.name)!
                toManys.append(ToMany(name: relationship.name, storage: storage, destinationNumber: destination.number,
                                      destinationTable: destinationTable.name,
                                      destinationHasSubentities: destinationTable.entityNumbers.count > 1,
                                      inverse: relationship.inverse, description: relationship))
            }
        }
        self.toOnes = toOnes
        self.toManys = toManys
        var slots: [String: Slot] = [:]
        for (index, attribute) in attributes.enumerated() { slots[attribute.name] = .attribute(index) }
        for (index, toOne) in toOnes.enumerated() { slots[toOne.name] = .toOne(index) }
        for (index, toMany) in toManys.enumerated() { slots[toMany.name] = .toMany(index) }
        for name in transientAttributes { slots[name] = .transient }
        for relationship in entity.relationships where relationship.isTransient { slots[relationship.name] = .transient }
        self.slotByKey = slots
        self.slotList = slots.sorted { $0.key < $1.key }.map { (key: $0.key, slot: $0.value) }
        self.slotBits = slotList.map { Self.bits(of: $0.key) }
        var buckets = [Int8](repeating: 0, count: KeyBits.buckets)
        if slotList.count <= Self.listedKeys {
            for (position, bits) in slotBits.enumerated() {
                let bucket = bits.bucket
                buckets[bucket] = buckets[bucket] == 0 ? Int8(position + 1) : -1
            }
        }
        self.slotBuckets = buckets

        var columns = [tableHasSubentities ? "t0.Z_ENT" : "0", "t0.Z_PK", "t0.Z_OPT"]
        columns += attributes.map { "t0.\($0.column)" }
        for toOne in toOnes {
            columns.append("t0.\(toOne.column)")
            if let entityColumn = toOne.entityColumn { columns.append("t0.\(entityColumn)") }
        }
        self.selectColumns = columns
        self.selectList = columns.joined(separator: ", ")
        self.selectByPrimaryKey = "SELECT \(selectList) FROM \(table.name) t0 WHERE t0.Z_PK = ?"

        var insertColumns = ["Z_PK", "Z_ENT", "Z_OPT"]
        let stored = self.attributes
        let insertedAttributeIndexes = stored.indices.filter { !stored[$0].description.isDerived }
        self.insertedAttributeIndexes = insertedAttributeIndexes
        insertColumns += insertedAttributeIndexes.map { stored[$0].column }
        for toOne in toOnes {
            insertColumns.append(toOne.column)
            if let entityColumn = toOne.entityColumn { insertColumns.append(entityColumn) }
        }
        let placeholders = Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")
        self.insertSQL = "INSERT INTO \(table.name) (\(insertColumns.joined(separator: ", "))) VALUES (\(placeholders))"
        self.rootNumber = model.root(of: entity).number
        self.hasDerivedAttributes = stored.contains { $0.description.isDerived }
        self.hasDenyRules = toOnes.contains { $0.description.deleteRule == .deny } || toManys.contains { $0.description.deleteRule == .deny }
        self.attributeTypes = stored.map(\.type)
        self.toOneDestinations = toOnes.map { toOne in
            (toOne.destinationNumber, model.entity(number: toOne.destinationNumber)?.subtreeNumbers ?? toOne.destinationNumber...toOne.destinationNumber,
             toOne.entityColumn != nil)
        }
        self.entityNumbers = entity.subtreeNumbers
        self.rowDecoding = RowDecoding(hasEntityColumn: tableHasSubentities, number: entity.number, entityNumbers: entity.subtreeNumbers,
                                       attributeTypes: attributeTypes, toOnes: toOneDestinations)
        // The row loop steps through the select list term by term, unchecked: its terms must be exactly these.
        precondition(selectColumns.count == 3 + attributeTypes.count + toOneDestinations.count
                        + toOneDestinations.filter(\.hasEntityColumn).count, "a select-list term for each value the row loop reads")
        self.defaultValues = stored.map { attribute in
            let description = attribute.description
            if description.isDerived, case .count = description.parsedDerivation { return .integer(0) }
            return description.defaultValue.flatMap { AttributeValueText.parse($0, as: attribute.type) } ?? .null
        }
        self.defaultRow = RowSnapshot(objectID: ObjectID(entityNumber: entity.number, primaryKey: 0), version: 0,
                                      values: defaultValues, toOneKeys: Array(repeating: nil, count: toOnes.count))
    }

    public func slot(forKey key: String) -> Slot? {
        guard slotList.count <= Self.listedKeys else { return slotByKey[key] }
        // Equal bits mean equal strings (the same inline bytes, or the same storage), and a key passed in is
        // usually the very literal the model was declared with: its bucket names the one entry to compare, before
        // any real string comparison.
        let bits = Self.bits(of: key)
        let bucket = slotBuckets[bits.bucket]
        if bucket > 0 {
            if slotBits[Int(bucket) - 1] == bits { return slotList[Int(bucket) - 1].slot }
        } else if bucket < 0 {
            for (index, entry) in slotBits.enumerated() where entry == bits { return slotList[index].slot }
        }
        // The same text in other storage (or no such key).
        for entry in slotList where entry.key == key { return entry.slot }
        return nil
    }

    private static func bits(of key: String) -> KeyBits {
        KeyBits(key)
    }

}

/// A string's two words, compared as integers.
struct KeyBits: Equatable, Sendable {
    let first: UInt64
    let second: UInt64
}

extension KeyBits {
    /// How many buckets `bucket` picks from.
    static let buckets = 64

    /// A bucket for the bits (`EntityMapping.slotBuckets`): both words mixed by multiplication, the top six bits.
    var bucket: Int {
        Int(truncatingIfNeeded: ((((first &* 0x9E37_79B9_7F4A_7C15) ^ second) &* 0xBF58_476D_1CE4_E5B9) >> 58))
    }

    /// The two words of `string`: equal bits mean equal strings (the same inline bytes, or the same storage), so a
    /// string compared with the very one it was copied from matches without reading its characters.
    init(_ string: String) {
        let words = unsafeBitCast(string, to: (UInt64, UInt64).self)
        self.init(first: words.0, second: words.1)
    }
}

/// One published state of an entity's wrapper table: never changed once made.
final class WrapperTable: Sendable {
    /// Key addresses, slots and key texts, in three rows: the read path compares addresses in a row of words and
    /// takes a slot, which holds no reference, where copying a `ResolvedKey` out would retain its key's text.
    let addresses: [WrapperKey]
    let slots: [EntityMapping.Slot]
    let keys: [String]

    /// `table` (nil: an empty one) with one more entry.
    init(adding resolved: ResolvedKey, for key: PropertyKey, to table: WrapperTable?) {
        addresses = (table?.addresses ?? []) + [WrapperKey(key.start)]
        slots = (table?.slots ?? []) + [resolved.slot]
        keys = (table?.keys ?? []) + [resolved.key]
    }

    /// Where `key`'s entry is, by the address of its text.
    @inline(__always) func position(of key: PropertyKey) -> Int? {
        addresses.withUnsafeBufferPointer { addresses in addresses.firstIndex { $0 == key.start } }
    }
}

/// The address of a wrapper key's text (`PropertyKey.start`): constant memory that lives as long as the program,
/// so an address names one text for good. Two wrappers naming the same key may share an address or not; either
/// way they resolve alike.
struct WrapperKey: @unchecked Sendable {
    let address: UnsafePointer<UInt8>
    init(_ address: UnsafePointer<UInt8>) { self.address = address }
    static func == (key: WrapperKey, address: UnsafePointer<UInt8>) -> Bool { key.address == address }
}

/// A key and where its value lives, resolved once.
@usableFromInline
struct ResolvedKey: Sendable {
    let slot: EntityMapping.Slot
    let key: String
}

/// How to read rows of several entities of one table from one statement: the union of their columns, and for each
/// entity where its own columns sit in that union. Fetching an entity with sub-entities selects every column any of
/// them needs, as Core Data does.
///
/// A plan made with `properties` reads partial rows: `Z_ENT`, `Z_PK`, `Z_OPT` and only the named attributes and
/// to-ones of each entity (the others are not selected at all), and marks each row with what it holds.
public struct RowReadPlan: Sendable {
    public let selectList: String
    /// The terms of `selectList`, qualified with `t0.` (the first may be the constant `0`).
    let columns: [String]
    let hasEntityColumn: Bool
    let defaultEntity: Int
    /// The entity numbers a row read by this plan may carry (see `ObjectID.stored`).
    let entityNumbers: ClosedRange<Int>
    /// Whether every row this plan reads is whole.
    let readsWholeRows: Bool
    /// How a row of each entity of `entityNumbers` is read (index: the number less the range's lower bound); nil for
    /// an entity the plan does not read. Looked up for every row, so an array indexed by number.
    private let readers: [EntityReader?]
    /// The reader of `defaultEntity`.
    private let defaultReader: EntityReader

    /// What reading one entity's row needs. A class, so that handing a reader to the row loop (once per row read)
    /// retains one reference, not each of its fields.
    // Unchecked: its buffer is written only by `init`.
    final class EntityReader: @unchecked Sendable {
        let mapping: EntityMapping
        /// What the entity's rows hold; nil when they are read whole.
        let loaded: LoadedProperties?
        /// Result-column positions of the mapping's `selectColumns` (-1: not selected), in memory the reader owns,
        /// and the mapping's `rowDecoding`: what the row loop reads, with nothing to retain.
        let positionBuffer: UnsafeBufferPointer<Int32>
        let decoding: RowDecoding

        init(mapping: EntityMapping, positions: [Int32], loaded: LoadedProperties?) {
            self.mapping = mapping
            self.loaded = loaded
            // The row loop reads a position for each select-list term, unchecked (see `RowDecoding`).
            precondition(positions.count == mapping.selectColumns.count, "one position per select-list term")
            self.positionBuffer = .copy(of: positions)
            self.decoding = mapping.rowDecoding
        }

        deinit {
            positionBuffer.deallocate()
        }
    }

    /// The one reader of a plan whose rows are all of one entity (no `Z_ENT` selected); nil for a hierarchy's.
    var onlyReader: EntityReader? { hasEntityColumn ? nil : defaultReader }

    /// The reader for a row of entity `number`: its own, or the default entity's for a number the plan does not
    /// read (a damaged store's).
    @inline(__always) func reader(forEntity number: Int) -> EntityReader {
        let offset = number &- entityNumbers.lowerBound
        guard offset >= 0, offset < readers.count, let reader = readers[offset] else { return defaultReader }
        return reader
    }

    public init(_ mappings: [EntityMapping]) {
        self.init(mappings, properties: nil)
    }

    /// A plan reading only `properties` (names of stored attributes and to-ones; names an entity lacks are
    /// skipped) of each entity, or whole rows when nil.
    init(_ mappings: [EntityMapping], properties: Set<String>?) {
        var union: [String] = []
        var indexByColumn: [String: Int32] = [:]
        var readers: [EntityReader] = []
        for mapping in mappings {
            let held = properties.flatMap { LoadedProperties.of(mapping, named: $0) }
            var selected = Array(repeating: true, count: 3)
            selected += held?.attributes ?? Array(repeating: true, count: mapping.attributes.count)
            for (index, toOne) in mapping.toOnes.enumerated() {
                let wanted = held?.toOnes[index] ?? true
                selected.append(wanted)
                if toOne.entityColumn != nil { selected.append(wanted) }
            }
            let positions = mapping.selectColumns.enumerated().map { offset, column -> Int32 in
                guard selected[offset] else { return -1 }
                // The first term is `t0.Z_ENT` or `0`; all entities share position 0 for it.
                let key = offset == 0 ? "#entity" : column
                if let index = indexByColumn[key] { return index }
                let index = Int32(union.count)
                union.append(column)
                indexByColumn[key] = index
                return index
            }
            readers.append(EntityReader(mapping: mapping, positions: positions, loaded: held))
        }
        self.selectList = union.joined(separator: ", ")
        self.columns = union
        self.hasEntityColumn = mappings[0].tableHasSubentities
        self.defaultEntity = mappings[0].number
        self.entityNumbers = mappings[0].entityNumbers
        self.readsWholeRows = readers.allSatisfy { $0.loaded == nil }
        self.defaultReader = readers[0]
        var byOffset = [EntityReader?](repeating: nil, count: mappings[0].entityNumbers.count)
        for reader in readers {
            let offset = reader.mapping.number - mappings[0].entityNumbers.lowerBound
            if byOffset.indices.contains(offset) { byOffset[offset] = reader }
        }
        self.readers = byOffset
    }

    /// The select list with the table aliased `alias` instead of `t0`.
    func selectList(alias: String) -> String {
        Self.qualified(columns[...], alias: alias)
    }

    /// `terms` joined, each `t0.` term under `alias` instead.
    private static func qualified(_ terms: ArraySlice<String>, alias: String) -> String {
        terms.map { $0.hasPrefix("t0.") ? alias + "." + $0.dropFirst(3) : $0 }.joined(separator: ", ")
    }

    /// The terms for a joined table's row, qualified with `alias`: `selectList`'s without the constant entity
    /// term of a table with no sub-entities (the joined row's entity is then the plan's own, and the column would
    /// only cost SQLite a value per row). `leading` is how many terms that leaves out (0 or 1): a reader of the
    /// row takes the column before its first one as its `offset`, so the key stays at `offset + 1`.
    ///
    /// With `keyElsewhere` (the statement already selects the row's key: the foreign key its join follows), a table
    /// with no sub-entities leaves out `Z_PK` too (`leading` 2): the row then starts at its version, whose NULL
    /// says the join found nothing, and its reader is given the key.
    func joinedSelectList(alias: String, keyElsewhere: Bool = false) -> (sql: String, leading: Int32) {
        guard !hasEntityColumn, columns.first == "0" else { return (selectList(alias: alias), 0) }
        if keyElsewhere, leavesOutKey { return (Self.qualified(columns.dropFirst(2), alias: alias), 2) }
        return (Self.qualified(columns.dropFirst(), alias: alias), 1)
    }

    /// Whether a joined row of this plan can be read without its `Z_PK`: no sub-entities, and its version right
    /// after the key (the column that says whether the join found a row).
    var leavesOutKey: Bool {
        !hasEntityColumn && columns.count >= 3 && columns[0] == "0" && columns[1] == "t0.Z_PK" && columns[2] == "t0.Z_OPT"
    }

    /// The number of result columns a row takes.
    var columnCount: Int32 { Int32(columns.count) }
}

/// What decoding one entity's rows needs, as plain values and pointers: the row loop runs once per row read, and
/// reading the same from the mapping's arrays retained and released each array (and the mapping) on every row, the
/// compiler being unable to prove them alive across the SQLite calls. The buffers belong to the mapping, which
/// frees them in its `deinit`; a copy of this is valid while the mapping lives.
struct RowDecoding: @unchecked Sendable {
    struct ToOne {
        let number: Int
        let entities: ClosedRange<Int>
        let hasEntityColumn: Bool
    }

    /// Whether rows carry `Z_ENT` (the table holds sub-entities).
    let hasEntityColumn: Bool
    let number: Int
    let entityNumbers: ClosedRange<Int>
    let attributeTypes: UnsafeBufferPointer<AttributeType>
    let toOnes: UnsafeBufferPointer<ToOne>

    init(hasEntityColumn: Bool, number: Int, entityNumbers: ClosedRange<Int>, attributeTypes: [AttributeType],
         toOnes: [(number: Int, entities: ClosedRange<Int>, hasEntityColumn: Bool)]) {
        self.hasEntityColumn = hasEntityColumn
        self.number = number
        self.entityNumbers = entityNumbers
        self.attributeTypes = .copy(of: attributeTypes)
        self.toOnes = .copy(of: toOnes.map { ToOne(number: $0.number, entities: $0.entities, hasEntityColumn: $0.hasEntityColumn) })
    }

    /// Frees the buffers (the values in them are plain: nothing to deinitialize). Only the owning mapping calls it.
    fileprivate func deallocate() {
        attributeTypes.deallocate()
        toOnes.deallocate()
    }
}

extension UnsafeBufferPointer {
    /// A buffer of its own holding `elements`, for a plain element type; the caller frees it with `deallocate()`.
    static func copy(of elements: [Element]) -> UnsafeBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = buffer.initialize(from: elements)
        return UnsafeBufferPointer(buffer)
    }
}
