import Foundation
import GRDBSQLite

/// Binding and reading attribute values on a prepared SQLite statement: the hot path of faults and fetches,
/// so it steps SQLite directly instead of going through GRDB's row layer.
enum SQLiteValues {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func bind(_ value: AttributeValue, at index: Int32, to statement: OpaquePointer) {
        switch value {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let number): sqlite3_bind_int64(statement, index, number)
        case .boolean(let flag): sqlite3_bind_int64(statement, index, flag ? 1 : 0)
        case .double(let number): sqlite3_bind_double(statement, index, number)
        case .decimal(let number): bindText(number.description, at: index, to: statement)
        case .string(let text): bindText(text, at: index, to: statement)
        case .date(let date): sqlite3_bind_double(statement, index, date.timeIntervalSinceReferenceDate)
        case .data(let data): bindBlob(data, at: index, to: statement)
        case .uuid(let uuid): bindBlob(withUnsafeBytes(of: uuid.uuid) { Data($0) }, at: index, to: statement)
        case .uri(let url): bindText(url.absoluteString, at: index, to: statement)
        }
    }

    /// Binds text by its UTF-8 byte count, so a string holding U+0000 is stored whole rather than cut at the NUL.
    private static func bindText(_ text: String, at index: Int32, to statement: OpaquePointer) {
        var text = text
        text.withUTF8 { buffer in
            if let start = buffer.baseAddress, !buffer.isEmpty {
                _ = sqlite3_bind_text(statement, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(buffer.count), transient)
            } else {
                // An empty string still binds a zero-length text, not NULL.
                _ = sqlite3_bind_text(statement, index, "", 0, transient)
            }
        }
    }

    private static func bindBlob(_ data: Data, at index: Int32, to statement: OpaquePointer) {
        _ = data.withUnsafeBytes { buffer in
            // An empty blob still binds a zero-length value, not NULL.
            sqlite3_bind_blob(statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
        }
    }

    static func bind(_ values: [AttributeValue], to statement: OpaquePointer) {
        for (offset, value) in values.enumerated() { bind(value, at: Int32(offset + 1), to: statement) }
    }

    static func isNull(_ statement: OpaquePointer, _ column: Int32) -> Bool {
        sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    static func int64(_ statement: OpaquePointer, _ column: Int32) -> Int64 {
        sqlite3_column_int64(statement, column)
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    static func data(_ statement: OpaquePointer, _ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// Reads a column as a value of `type`, tolerating the storage classes SQLite's affinities may produce.
    static func value(_ statement: OpaquePointer, _ column: Int32, as type: AttributeType) -> AttributeValue {
        let storage = sqlite3_column_type(statement, column)
        if storage == SQLITE_NULL { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(sqlite3_column_int64(statement, column))
        case .boolean:
            return .boolean(sqlite3_column_int64(statement, column) != 0)
        case .double, .float:
            return .double(sqlite3_column_double(statement, column))
        case .decimal:
            switch storage {
            case SQLITE_INTEGER: return .decimal(Decimal(sqlite3_column_int64(statement, column)))
            case SQLITE_FLOAT:
                // A DECIMAL column has NUMERIC affinity, so SQLite keeps "19.99" as the REAL nearest to it. Going
                // through the shortest text that reads back as that REAL recovers the decimal (up to the 15
                // significant digits SQLite keeps); `Decimal(Double)` would expose the binary error (19.98999…).
                let number = sqlite3_column_double(statement, column)
                return .decimal(Decimal(string: "\(number)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(number))
            default: return .decimal(Decimal(string: text(statement, column), locale: Locale(identifier: "en_US_POSIX")) ?? 0)
            }
        case .string:
            return .string(text(statement, column))
        case .uri, .objectID:
            let string = text(statement, column)
            return URL(string: string).map(AttributeValue.uri) ?? .string(string)
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, column)))
        case .binaryData, .transformable:
            return .data(data(statement, column))
        case .uuid:
            let bytes = data(statement, column)
            guard bytes.count == 16 else { return .data(bytes) }
            return .uuid(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        }
    }

    /// Reads a row selected with `mapping.selectList`.
    static func snapshot(_ statement: OpaquePointer, mapping: EntityMapping, arena: UnsafeMutablePointer<RowArena>) -> RowSnapshot {
        snapshot(statement, decoding: mapping.rowDecoding, positions: nil, offset: 0, arena: arena)
    }

    /// Reads a row selected with a plan's `selectList`, by the mapping of the row's own entity.
    /// With `key`, the row's key is that rather than the column after `offset` (a joined row read without its
    /// `Z_PK`, `RowReadPlan.joinedSelectList(alias:keyElsewhere:)`).
    static func snapshot(_ statement: OpaquePointer, plan: RowReadPlan, offset: Int32 = 0, key: Int64? = nil,
                         arena: UnsafeMutablePointer<RowArena>) -> RowSnapshot {
        let entity = plan.hasEntityColumn ? Int(truncatingIfNeeded: sqlite3_column_int64(statement, offset)) : plan.defaultEntity
        let reader = plan.reader(forEntity: entity)
        // The reader owns the position buffer (and, through its mapping, the decoding's): kept to the end.
        return withExtendedLifetime(reader) {
            snapshot(statement, decoding: reader.decoding, positions: reader.positionBuffer, offset: offset, loaded: reader.loaded, key: key,
                     arena: arena)
        }
    }

    /// Reads a row of the one entity `reader` reads (a plan's `onlyReader`), its columns starting at `offset`.
    static func snapshot(_ statement: OpaquePointer, reader: RowReadPlan.EntityReader, offset: Int32, key: Int64?,
                         arena: UnsafeMutablePointer<RowArena>) -> RowSnapshot {
        withExtendedLifetime(reader) {
            snapshot(statement, decoding: reader.decoding, positions: reader.positionBuffer, offset: offset, loaded: reader.loaded, key: key,
                     arena: arena)
        }
    }

    /// Reads one row. With `positions`, each term of the mapping's select list is at its position there, and a
    /// negative position is a term the statement did not select: its value is left a placeholder (`loaded` says
    /// which are held). Everything it reads per row is a plain value or pointer (`RowDecoding`): nothing retained.
    private static func snapshot(_ statement: OpaquePointer, decoding: RowDecoding, positions: UnsafeBufferPointer<Int32>?, offset: Int32,
                                 loaded: LoadedProperties? = nil, key: Int64? = nil, arena: UnsafeMutablePointer<RowArena>) -> RowSnapshot {
        // The result column of the select list's term `term` (-1: not selected).
        @inline(__always) func column(_ term: Int) -> Int32 {
            guard let positions else { return offset &+ Int32(truncatingIfNeeded: term) }
            let position = positions[term]
            return position < 0 ? -1 : offset &+ position
        }
        let id = ObjectID.stored(entity: decoding.hasEntityColumn ? sqlite3_column_int64(statement, column(0)) : Int64(decoding.number),
                                 of: decoding.entityNumbers, key: key ?? sqlite3_column_int64(statement, column(1)))
        let version = sqlite3_column_int64(statement, column(2))
        let types = decoding.attributeTypes
        let destinations = decoding.toOnes
        // Values and keys are decoded straight into the row's place in the statement's blocks.
        return arena.pointee.make(objectID: id, version: version, attributeCount: types.count, toOneCount: destinations.count, loaded: loaded) { values, keys in
            var term = 3
            for index in 0..<types.count {
                let at = column(term)
                term += 1
                (values + index).initialize(to: at < 0 ? .null : value(statement, at, as: types[index]))
            }
            for index in 0..<destinations.count {
                let toOne = destinations[index]
                let at = column(term)
                term += 1
                var entityColumn: Int32 = -1
                if toOne.hasEntityColumn {
                    entityColumn = column(term)
                    term += 1
                }
                guard at >= 0, sqlite3_column_type(statement, at) != SQLITE_NULL else {
                    (keys + index).initialize(to: RowKey(nil))
                    continue
                }
                let key = sqlite3_column_int64(statement, at)
                var destination = Int64(toOne.number)
                if entityColumn >= 0, sqlite3_column_type(statement, entityColumn) != SQLITE_NULL {
                    destination = sqlite3_column_int64(statement, entityColumn)
                }
                (keys + index).initialize(to: RowKey(ObjectID.stored(entity: destination, of: toOne.entities, key: key)))
            }
        }
    }
}
