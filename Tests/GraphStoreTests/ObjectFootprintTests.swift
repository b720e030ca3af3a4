import ChatFixture
import Foundation
import Synchronization
import Testing
@testable import GraphStore

/// glibc's size of a heap block: what it holds for the caller, which is at least what was asked for.
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ block: UnsafeMutableRawPointer?) -> Int

/// What an object and its row cost in memory: a hundred thousand fetched messages are a hundred thousand of each, so
/// a word here is 800 KB there. The rows' packed keys and completeness sign must also read back exactly.
@Suite struct ObjectFootprintTests {
    private static func blockSize(_ object: AnyObject) -> Int {
        mallocUsableSize(Unmanaged.passUnretained(object).toOpaque())
    }

    private static let keys: [ObjectID?] = [nil, ObjectID(entityNumber: 2, primaryKey: 4), nil,
                                           ObjectID(entityNumber: 4_095, primaryKey: Int64(1) << 52), ObjectID(entityNumber: 1, primaryKey: 0)]
    private static let values: [AttributeValue] = [.string("a text longer than fifteen bytes"), .double(1.5), .integer(2), .boolean(true)]

    /// A message's row (four values, five keys) made on its own is one block of exactly the block's extent and the
    /// row's header, values and keys: a key takes sixteen bytes (nil included), and the row is not rounded up to
    /// whole values.
    @Test func aRowIsItsHeaderValuesAndKeysAndNothingMore() {
        #expect(MemoryLayout<RowKey>.stride == 16)
        #expect(MemoryLayout<RowStorage.Header>.size == 40)
        #expect(MemoryLayout<RowStorage.Extent>.size == 16)
        let row = RowSnapshot(objectID: ObjectID(entityNumber: 3, primaryKey: 9), version: 7, values: Self.values, toOneKeys: Self.keys)
        let asked = 16 + 16 + 40 + 4 * MemoryLayout<AttributeValue>.stride + 5 * 16
        let size = Self.blockSize(row.storage)
        #expect(size >= asked && size < asked + 16, "a block of \(size) bytes for \(asked) asked")
        #expect(Array(row.values) == Self.values)
        #expect(Array(row.toOneKeys) == Self.keys)
        #expect(row.isComplete && row.loaded == nil)
        #expect(row.version == 7 && row.objectID == ObjectID(entityNumber: 3, primaryKey: 9))
    }

    /// The rows an arena makes lie one after another in shared blocks: the first in a block of its own size (a
    /// statement that returns one row allocates what a lone row would), then blocks for 1, 2, 4… rows, none over
    /// `RowArena.maximumWords`; each row reads back exactly what it was given.
    @Test func anArenasRowsShareBlocks() {
        var arena = RowArena()
        let rows = (0..<40).map { key in
            arena.make(objectID: ObjectID(entityNumber: 3, primaryKey: Int64(key)), version: Int64(key), attributeCount: 4, toOneCount: 5,
                       loaded: nil) { values, keys in
                values.initialize(from: [.string("row \(key) has a text longer than fifteen bytes"), .double(Double(key)), .integer(2), .boolean(true)],
                                  count: 4)
                for index in 0..<5 { (keys + index).initialize(to: RowKey(index == 1 ? ObjectID(entityNumber: 2, primaryKey: Int64(key)) : nil)) }
            }
        }
        let rowSize = 40 + 4 * MemoryLayout<AttributeValue>.stride + 5 * 16
        // What the arena asked for, in words: the heap may hand out a little more than that (a block cut from a
        // larger free one keeps a remainder too small to use), so the heap's size is no test of the policy.
        #expect(rows[0].storage.capacityInWords == rowSize / 8, "the first row's block holds it alone")
        // Blocks of 1, 1, 2, 4, 8 and 16 rows, then of as many as 4 KB holds (18 of these).
        let firstRows = [0, 1, 2, 4, 8, 16, 32]
        for (block, first) in firstRows.enumerated() {
            let last = block + 1 < firstRows.count ? firstRows[block + 1] - 1 : rows.count - 1
            #expect(rows[first].start == 0 && rows[first].storage === rows[last].storage, "rows \(first)...\(last) share a block")
            if first > 0 { #expect(rows[first].storage !== rows[first - 1].storage) }
            if last > first { #expect(rows[first + 1].start == rowSize / 8) }
        }
        #expect(Set(rows.map { ObjectIdentifier($0.storage) }).count == firstRows.count)
        #expect(rows.allSatisfy { $0.storage.capacityInWords <= RowArena.maximumWords })
        #expect(rows[32].storage.capacityInWords == RowArena.maximumWords)
        for (key, row) in rows.enumerated() {
            #expect(row.objectID == ObjectID(entityNumber: 3, primaryKey: Int64(key)) && row.version == Int64(key))
            #expect(row.value(at: 0) == .string("row \(key) has a text longer than fifteen bytes") && row.value(at: 1) == .double(Double(key)))
            #expect(Array(row.toOneKeys) == [nil, ObjectID(entityNumber: 2, primaryKey: Int64(key)), nil, nil, nil])
            #expect(row.isIdentical(to: row) && (key == 0 || !row.isIdentical(to: rows[key - 1])))
        }
    }

    /// A block lets go of every row's values and header when its last row goes, and not before: while one row is
    /// kept, its neighbours' data stay (the price of sharing a block, bounded by its size); once it goes, all of
    /// it is freed.
    @Test func aBlockReleasesItsRowsWithItsLastRow() {
        let freed = Mutex(0)
        weak var released: LoadedProperties?
        var kept: RowSnapshot?
        do {
            let loaded = LoadedProperties(attributes: [true, false], toOnes: [true], names: ["a", "k"])
            released = loaded
            var arena = RowArena()
            // Rows 2 and 3 share a block (blocks of 1, 1, 2, 4 rows).
            let rows = (0..<4).map { key in
                arena.make(objectID: ObjectID(entityNumber: 1, primaryKey: Int64(key)), version: 1, attributeCount: 2, toOneCount: 1,
                           loaded: loaded) { values, keys in
                    let bytes = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
                    let data = Data(bytesNoCopy: bytes, count: 64, deallocator: .custom { pointer, _ in
                        pointer.deallocate()
                        freed.withLock { $0 += 1 }
                    })
                    values.initialize(from: [.data(data), .null], count: 2)
                    keys.initialize(to: RowKey(nil))
                }
            }
            #expect(rows[2].storage === rows[3].storage && rows[1].storage !== rows[2].storage)
            kept = rows[3]
        }
        #expect(freed.withLock { $0 } == 2, "rows 0 and 1, each alone in its block, are freed; row 2 shares row 3's block")
        #expect(released != nil, "the kept row still holds its block")
        #expect(kept?.loaded === released && kept?.value(at: 0) != .null)
        kept = nil
        #expect(freed.withLock { $0 } == 4)
        #expect(released == nil)
    }

    /// Completeness is kept in the sign of the to-one count: a partial row says so and still counts its keys.
    @Test func aPartialRowKnowsItIsPartialAndCountsItsKeys() {
        let loaded = LoadedProperties(attributes: [true, false, true, false], toOnes: [false, true, false, false, true], names: ["a", "c", "k1", "k4"])
        let partial = RowSnapshot(objectID: ObjectID(entityNumber: 3, primaryKey: 9), version: 1, values: Self.values,
                                  toOneKeys: Self.keys, loaded: loaded)
        #expect(!partial.isComplete)
        #expect(partial.toOneKeys.count == 5 && partial.values.count == 4)
        #expect(Array(partial.toOneKeys) == Self.keys)
        #expect(partial.holdsToOne(1) && !partial.holdsToOne(0) && partial.holdsAttribute(2) && !partial.holdsAttribute(3))
        let none = RowSnapshot(objectID: ObjectID(entityNumber: 3, primaryKey: 10), version: 1, values: [], toOneKeys: [],
                               loaded: LoadedProperties(attributes: [], toOnes: [], names: []))
        #expect(!none.isComplete && none.toOneKeys.isEmpty && none.values.isEmpty)
    }

    /// A message object (fifteen typed properties) and a user (twelve) each fit the heap block below what they took
    /// when the object's state padded a word before its flags.
    @Test func typedObjectsFitTheirBlocks() throws {
        try Self.withChatStore { coordinator in
            let context = ObjectContext(coordinator: coordinator)
            let message = context.insert(ChatFixture.Message.self)
            let user = context.insert(ChatFixture.User.self)
            #expect(MemoryLayout<ObjectState>.size == 27)
            #expect(Self.blockSize(message) <= 232)
            #expect(Self.blockSize(user) <= 200)
        }
    }

    /// A chat store in a folder of its own, removed afterwards.
    private static func withChatStore(_ body: (PersistentStoreCoordinator) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("footprint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let coordinator = try PersistentStoreCoordinator(path: folder.appendingPathComponent("chat.sqlite").path, model: try ChatModel.make(),
                                                         classes: ChatModel.classes)
        try body(coordinator)
    }

    /// A fetch's rows come from one statement and share its blocks (not a block each), in the row cache as in the
    /// objects; a row read again by a fault gets a block of its own size.
    @Test func aFetchsRowsShareBlocks() throws {
        try Self.withChatStore { coordinator in try fetchedRowsShareBlocks(coordinator) }
    }

    private func fetchedRowsShareBlocks(_ coordinator: PersistentStoreCoordinator) throws {
        let writer = ObjectContext(coordinator: coordinator)
        for index in 0..<50 {
            let user = writer.insert("User")
            user.setValue("user number \(index) with a long name", forKey: "name")
            user.setValue("user\(index)", forKey: "handle")
            user.setValue(Date(timeIntervalSinceReferenceDate: Double(index)), forKey: "createdAt")
        }
        try writer.save()
        coordinator.rowCache.removeAll()

        var request = FetchRequest(entityName: "User", sortDescriptors: [.init("name", ascending: true)])
        request.returnsObjectsAsFaults = false
        let users = Array(try ObjectContext(coordinator: coordinator).fetch(request))
        #expect(users.count == 50)
        let rows = users.compactMap(\.state.snapshot)
        #expect(rows.count == 50)
        let blocks = Set(rows.map { ObjectIdentifier($0.storage) })
        #expect(blocks.count <= 9, "50 rows in \(blocks.count) blocks")
        #expect(rows.allSatisfy { row in coordinator.rowCache.snapshot(for: row.objectID)?.isIdentical(to: row) == true })
        #expect(Set(users.map { $0.value(forKey: "name") as? String }).count == 50)

        coordinator.rowCache.removeAll()
        let fault = try ObjectContext(coordinator: coordinator).existingObject(with: users[7].objectID)
        let row = try #require(fault.state.snapshot)
        #expect(row.start == 0 && row.storage.capacityInWords == RowStorage.words(row.storage.header(0).pointee))
        #expect(fault.value(forKey: "name") as? String == users[7].value(forKey: "name") as? String)
    }
}
