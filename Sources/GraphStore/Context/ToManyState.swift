import Foundation

/// A to-many as one context sees it: the loaded members (nil while a fault) and changes not yet saved.
struct ToManyState {
    /// Members in order, when the relationship fault has fired.
    var members: [ObjectID]?
    /// Added since the last save, in order (kept even while `members` is nil, so nothing needs fetching). Adding
    /// is on the path of every new object that joins a to-many, so it is a plain append: an ID added twice appears
    /// twice, and readers take `addedOnce`.
    var added: [ObjectID] = []
    var removed: Set<ObjectID> = []
    /// Whether the order of an ordered to-many changed and must be rewritten.
    var reordered = false
    /// How many members the store held when the owner's row was fetched with the relationship in
    /// `FetchRequest.countsToFetch`; answers `count` while the fault has not fired and nothing was changed.
    var storedCount: Int?

    /// The member count known without reading members: the fetched count, while it still holds.
    var knownCount: Int? { members == nil && !hasChanges ? storedCount : nil }

    /// Forgets the members read (and any fetched count): both are read again on next access.
    mutating func forgetMembers() {
        members = nil
        storedCount = nil
    }

    var hasChanges: Bool { !added.isEmpty || !removed.isEmpty || reordered }

    /// `added` without repeats, in order of first addition.
    var addedOnce: [ObjectID] {
        var seen = Set<ObjectID>(minimumCapacity: added.count)
        return added.filter { seen.insert($0).inserted }
    }

    mutating func add(_ id: ObjectID) {
        if removed.isEmpty || removed.remove(id) == nil { added.append(id) }
        if members?.contains(id) == false { members?.append(id) }
    }

    /// Removes `id`. A member added since the last save is only taken out of `added`, unless `mayBeStored`: then,
    /// with the relationship fault not fired, nobody knows whether the store links it too (adding it again was
    /// recorded all the same), so it is recorded as removed as well.
    mutating func remove(_ id: ObjectID, mayBeStored: Bool = false) {
        // Rare next to adding (an object leaving a to-many it joined since the last save), so a scan will do.
        let count = added.count
        added.removeAll { $0 == id }
        if added.count == count || (mayBeStored && members == nil) { removed.insert(id) }
        members?.removeAll { $0 == id }
    }

    /// Adds or removes `id`; an ordered to-many then needs its positions written.
    mutating func apply(_ id: ObjectID, adding: Bool, ordered: Bool, mayBeStored: Bool = false) {
        if adding { add(id) } else { remove(id, mayBeStored: mayBeStored) }
        if ordered { reordered = true }
    }
}

/// An object's to-many states by to-many slot (nil: a relationship fault with nothing recorded).
///
/// Most objects hold none, or one: a count read with the row (`FetchRequest.countsToFetch`), or the one relationship
/// a screen fired. So the states are pairs in a small array searched in order: a `Dictionary` would hash every slot,
/// and allocate buckets for the first state of every object a counting fetch reads and free them with the object.
///
/// A state that holds only a count read with the row is kept apart, in two words of the object itself, until
/// anything else is recorded for its slot: a counting fetch of fifty messages would otherwise allocate an array for
/// each message and free it with the message (about 4% of `open-chat`'s instructions, measured). The price is two
/// words on every object, counted or not: 1.6 MB for 100,000 objects.
struct ToManyStates: Sequence {
    private var entries: [(key: Int, value: ToManyState)] = []
    /// The slot whose state is only `countOnly` (a count read with the row), or -1.
    private var countSlot = -1
    private var countOnly = 0

    var isEmpty: Bool { entries.isEmpty && countSlot < 0 }

    /// Whether the states allocated nothing: none, or a single count read with the row. For tests.
    var holdsNoStorage: Bool { entries.capacity == 0 }

    /// The state a count alone makes.
    private static func counted(_ count: Int) -> ToManyState { ToManyState(storedCount: count) }

    /// Whether `state` is a count read with the row and nothing else.
    private static func isCountOnly(_ state: ToManyState) -> Bool {
        state.storedCount != nil && state.members == nil && !state.hasChanges
    }

    subscript(index: Int) -> ToManyState? {
        get {
            if index == countSlot { return Self.counted(countOnly) }
            for entry in entries where entry.key == index { return entry.value }
            return nil
        }
        // In place, as `Dictionary`'s are: a state's arrays must stay uniquely referenced while the caller changes
        // them, or every append to `added` (an insert joining a to-many) would copy the whole array.
        _modify {
            if index == countSlot {
                var value: ToManyState? = Self.counted(countOnly)
                countSlot = -1
                defer { store(value, at: index) }
                yield &value
            } else if let position = entries.firstIndex(where: { $0.key == index }) {
                var value: ToManyState? = entries[position].value
                // The copy above shares the state's arrays with the entry; an empty state in the entry leaves the
                // copy their only owner.
                entries[position].value = ToManyState()
                defer {
                    if let value { entries[position].value = value } else { entries.remove(at: position) }
                }
                yield &value
            } else {
                var value: ToManyState?
                defer { store(value, at: index) }
                yield &value
            }
        }
    }

    /// Gives the to-many at `index` the store's count of it, read with its row, unless its state holds more (the
    /// members read, or changes made to them). In place, with no state copied out and back: a fetch that counts
    /// a to-many does this for every row, and the subscript's accessor allocated its frame each time.
    mutating func offerStoredCount(_ count: Int, at index: Int) {
        if index == countSlot {
            countOnly = count
        } else if let position = entries.firstIndex(where: { $0.key == index }) {
            guard entries[position].value.members == nil, !entries[position].value.hasChanges else { return }
            entries[position].value.storedCount = count
        } else {
            store(Self.counted(count), at: index)
        }
    }

    /// Records the state of a slot that has none in `entries` (and none kept apart).
    private mutating func store(_ value: ToManyState?, at index: Int) {
        guard let value else { return }
        if countSlot < 0, Self.isCountOnly(value), let count = value.storedCount {
            countSlot = index
            countOnly = count
        } else {
            entries.append((index, value))
        }
    }

    subscript(index: Int, default defaultValue: @autoclosure () -> ToManyState) -> ToManyState {
        get { self[index] ?? defaultValue() }
        _modify {
            let position: Int
            if let found = entries.firstIndex(where: { $0.key == index }) {
                position = found
            } else {
                // A count kept apart joins the others: the caller is about to record more than a count.
                entries.append((index, index == countSlot ? Self.counted(countOnly) : defaultValue()))
                if index == countSlot { countSlot = -1 }
                position = entries.count - 1
            }
            yield &entries[position].value
        }
    }

    /// The slots that hold a state: a count kept apart first, then the others in the order they were recorded.
    var keys: [Int] { (countSlot < 0 ? [] : [countSlot]) + entries.map(\.key) }
    var values: some Sequence<ToManyState> { lazy.map(\.value) }

    mutating func removeAll() {
        entries = []
        countSlot = -1
    }

    func makeIterator() -> IndexingIterator<[(key: Int, value: ToManyState)]> {
        guard countSlot >= 0 else { return entries.makeIterator() }
        return ([(countSlot, Self.counted(countOnly))] + entries).makeIterator()
    }
}
