/// Unsaved values of an object by slot (attribute or to-one index): a short array rather than a dictionary, since
/// an entity has few slots and setting one is on the path of every insert.
struct SlotChanges<Value> {
    private var slots: ContiguousArray<Value?> = []
    /// How many slots hold a change.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Value? {
        get { index < slots.count ? slots[index] : nil }
        set {
            if index >= slots.count {
                guard newValue != nil else { return }
                // Room for a few more slots at once: new objects set most of theirs in a row.
                slots.append(contentsOf: repeatElement(nil, count: Swift.max(index + 1, 8) - slots.count))
            }
            let had = slots[index] != nil
            let has = newValue != nil
            slots[index] = newValue
            if had != has { count += has ? 1 : -1 }
        }
    }

    mutating func removeAll() {
        guard count > 0 || !slots.isEmpty else { return }
        slots = []
        count = 0
    }

    /// The changed slots with their values, in slot order.
    var entries: [(index: Int, value: Value)] {
        var result: [(index: Int, value: Value)] = []
        result.reserveCapacity(count)
        for (index, value) in slots.enumerated() {
            if let value { result.append((index, value)) }
        }
        return result
    }

    /// Replaces every changed value with `transform` of it.
    mutating func updateValues(_ transform: (Value) -> Value) {
        for index in slots.indices {
            if let value = slots[index] { slots[index] = transform(value) }
        }
    }
}
