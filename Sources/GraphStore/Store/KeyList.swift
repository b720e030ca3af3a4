import Foundation

/// A list of primary keys for `IN`, bound as parameters: one `?` each.
struct KeyList {
    let sql: String
    let arguments: [AttributeValue]

    /// Keys per statement: well under SQLite's limit on bound parameters.
    static let chunkSize = 30_000

    init(_ keys: [Int64]) {
        sql = "(" + FetchPlan.placeholders(keys.count) + ")"
        arguments = keys.map { .integer($0) }
    }

    static func chunks<T>(_ items: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: items.count, by: chunkSize).map { items[$0..<min($0 + chunkSize, items.count)] }
    }
}
