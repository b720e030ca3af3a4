import Foundation

/// Sorting objects in memory the way SQLite orders their columns, for results that merge unsaved changes.
enum InMemorySort {
    static func sorted(_ objects: [ManagedObject], by descriptors: [FetchRequest.SortDescriptor]) -> [ManagedObject] {
        let keyed = objects.map { object in (object, descriptors.map { value(of: object, keyPath: $0.keyPath) }) }
        return keyed.sorted { lhs, rhs in
            for (index, descriptor) in descriptors.enumerated() {
                let order = compare(lhs.1[index], rhs.1[index])
                if order != .orderedSame { return descriptor.ascending ? order == .orderedAscending : order == .orderedDescending }
            }
            return false
        }.map(\.0)
    }

    /// The value at a key path through to-ones: an attribute's value, a to-one's primary key, or null past a nil;
    /// for `SELF`, the object's primary key (the largest there is for an object not yet saved).
    static func value(of object: ManagedObject, keyPath: String) -> AttributeValue {
        // SELF sorts by primary key, as the store orders it; an object not yet saved sorts after every saved one,
        // where the key it will get puts it.
        if keyPath == "SELF" { return .integer(object.objectID.isTemporary ? Int64.max : object.objectID.primaryKey) }
        var current = object
        let components = keyPath.split(separator: ".").map(String.init)
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            switch current.mapping.slot(forKey: component) {
            case .attribute?, .transient?:
                return isLast ? current.attributeValue(forKey: component) : .null
            case .toOne?:
                guard let next = current.object(forKey: component) else { return .null }
                if isLast { return .integer(next.objectID.primaryKey) }
                current = next
            case .toMany?, nil:
                return .null
            }
        }
        return .null
    }

    /// SQLite's order of stored values: NULL, then numbers (integers, reals, booleans, dates, decimals), then text
    /// by its bytes, then blobs by their bytes.
    static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> ComparisonResult {
        let left = Key(lhs)
        let right = Key(rhs)
        if left.rank != right.rank { return left.rank < right.rank ? .orderedAscending : .orderedDescending }
        switch (left.number, right.number) {
        case (let a?, let b?): return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        default: break
        }
        if left.bytes.lexicographicallyPrecedes(right.bytes) { return .orderedAscending }
        if right.bytes.lexicographicallyPrecedes(left.bytes) { return .orderedDescending }
        return .orderedSame
    }

    private struct Key {
        var rank: Int
        var number: Double?
        var bytes: [UInt8] = []

        init(_ value: AttributeValue) {
            switch value {
            case .null: rank = 0; number = nil
            case .integer(let value): rank = 1; number = Double(value)
            case .double(let value): rank = 1; number = value
            case .boolean(let value): rank = 1; number = value ? 1 : 0
            case .date(let value): rank = 1; number = value.timeIntervalSinceReferenceDate
            case .decimal(let value): rank = 1; number = NSDecimalNumber(decimal: value).doubleValue
            case .string(let value): rank = 2; number = nil; bytes = Array(value.utf8)
            case .uri(let value): rank = 2; number = nil; bytes = Array(value.absoluteString.utf8)
            case .uuid(let value): rank = 3; number = nil; bytes = withUnsafeBytes(of: value.uuid) { Array($0) }
            case .data(let value): rank = 3; number = nil; bytes = Array(value)
            }
        }
    }
}
