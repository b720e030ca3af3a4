import GRDB

/// Reading columns of a store that may be damaged.
///
/// GRDB's typed subscripts (`row["Z_MAX"] as Int64?`) trap when a value does not decode: text where an integer goes (which SQLite
/// allows in any column) stops the process. These read such a value as nil instead, so the caller decides what a
/// wrong value means; `DatabaseValue` (`row[column] as DatabaseValue`) still shows what was there.
extension Row {
    /// The column's value as `Value`; nil when it is NULL or cannot be one (text or a blob in an integer column, a
    /// REAL with a fraction or out of range).
    func lenient<Value: DatabaseValueConvertible>(_ column: String, as type: Value.Type = Value.self) -> Value? {
        (try? decode(Value?.self, forColumn: column)) ?? nil
    }

    /// The value at `index` as `Value`; nil when it is NULL or cannot be one.
    func lenient<Value: DatabaseValueConvertible>(_ index: Int, as type: Value.Type = Value.self) -> Value? {
        guard index >= 0, index < count else { return nil }
        return (try? decode(Value?.self, atIndex: index)) ?? nil
    }
}
