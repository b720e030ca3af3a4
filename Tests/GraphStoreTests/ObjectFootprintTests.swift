import ChatFixture
import Foundation
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

    /// A message's row (four values, five keys) is one block of exactly its header, values and keys: a key takes
    /// sixteen bytes (nil included), and the block is not rounded up to whole values.
    @Test func aRowIsItsHeaderValuesAndKeysAndNothingMore() {
        #expect(MemoryLayout<RowKey>.stride == 16)
        #expect(MemoryLayout<RowStorage.Header>.size == 40)
        let row = RowSnapshot(objectID: ObjectID(entityNumber: 3, primaryKey: 9), version: 7, values: Self.values, toOneKeys: Self.keys)
        let asked = 16 + 40 + 4 * MemoryLayout<AttributeValue>.stride + 5 * 16
        let size = Self.blockSize(row.storage)
        #expect(size >= asked && size < asked + 16, "a block of \(size) bytes for \(asked) asked")
        #expect(Array(row.values) == Self.values)
        #expect(Array(row.toOneKeys) == Self.keys)
        #expect(row.isComplete && row.loaded == nil)
        #expect(row.version == 7 && row.objectID == ObjectID(entityNumber: 3, primaryKey: 9))
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
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("footprint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let coordinator = try PersistentStoreCoordinator(path: folder.appendingPathComponent("chat.sqlite").path, model: try ChatModel.make(),
                                                         classes: ChatModel.classes)
        let context = ObjectContext(coordinator: coordinator)
        let message = context.insert(ChatFixture.Message.self)
        let user = context.insert(ChatFixture.User.self)
        #expect(MemoryLayout<ObjectState>.size == 19)
        #expect(Self.blockSize(message) <= 232)
        #expect(Self.blockSize(user) <= 200)
    }
}
