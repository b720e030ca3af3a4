import Foundation
@testable import GraphStore
import Testing

final class StateItem: ManagedObject {
    override class var entityName: String { "RItem" }
    @Stored("title") var title: String?
    @Stored("rank") var rank: Int64
    @Stored("scratch") var scratch: String?
    @ToOne("owner") var owner: StateOwner?
}

final class StateSpecial: ManagedObject {
    override class var entityName: String { "RSpecial" }
    @Stored("title") var title: String?
    @Stored("extra") var extra: String?
    @ToOne("owner") var owner: StateOwner?
}

final class StateOwner: ManagedObject {
    override class var entityName: String { "ROwner" }
    @Stored("name") var name: String?
}

/// Typed reads against key-value reads, object by object, in every state an object can be in.
@Suite struct TypedReadStateTests {
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("ROwner") {
                Attribute("name", .string)
                Relationship.toMany("items", "RItem", inverse: "owner")
            }
            EntityDescription("RItem") {
                Attribute("title", .string)
                Attribute("rank", .integer64)
                Attribute("scratch", .string).transient()
                Relationship.toOne("owner", "ROwner", inverse: "items")
            }
            EntityDescription("RSpecial", parent: "RItem") {
                Attribute("extra", .string)
            }
        }
    }

    /// The typed answer and the key-value one, as text.
    static func both(_ object: ManagedObject) -> (typed: String, kvc: String) {
        if let item = object as? StateItem {
            let typed = "\(item.title ?? "nil")|\(item.rank)|\(item.scratch ?? "nil")|\(item.owner?.objectID.description ?? "nil")"
            let kvc = "\(object.attributeValue(forKey: "title").swiftValue as? String ?? "nil")|\(object.attributeValue(forKey: "rank").swiftValue as? Int64 ?? 0)|\(object.attributeValue(forKey: "scratch").swiftValue as? String ?? "nil")|\(object.object(forKey: "owner")?.objectID.description ?? "nil")"
            return (typed, kvc)
        }
        if let special = object as? StateSpecial {
            let typed = "\(special.title ?? "nil")|\(special.extra ?? "nil")|\(special.owner?.objectID.description ?? "nil")"
            let kvc = "\(object.attributeValue(forKey: "title").swiftValue as? String ?? "nil")|\(object.attributeValue(forKey: "extra").swiftValue as? String ?? "nil")|\(object.object(forKey: "owner")?.objectID.description ?? "nil")"
            return (typed, kvc)
        }
        return ("?", "?")
    }

    @Test func typedReadsAreKeyValueReadsInEveryState() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("typed.sqlite")
        let classes: [ManagedObject.Type] = [StateItem.self, StateSpecial.self, StateOwner.self]
        let coordinator = try PersistentStoreCoordinator(path: path, model: try Self.model(), classes: classes)
        let setup = ObjectContext(coordinator: coordinator)
        let owner = setup.insert(StateOwner.self)
        owner.name = "o"
        let other = setup.insert(StateOwner.self)
        var ids: [ObjectID] = []
        for index in 0..<6 {
            let item = setup.insert(StateItem.self)
            item.title = "t\(index)"
            item.rank = Int64(index)
            item.owner = index % 2 == 0 ? owner : nil
            ids.append(item.objectID)
        }
        let special = setup.insert(StateSpecial.self)
        special.title = "s"
        special.extra = "x"
        special.owner = owner
        try setup.save()
        ids = try setup.fetch(FetchRequest(entityName: "RItem")).map(\.objectID)
        var problems: [String] = []
        func check(_ label: String, _ object: ManagedObject) {
            // Twice: the first read may resolve the wrapper's slot, the second takes the fast path.
            let first = Self.both(object)
            let second = Self.both(object)
            if first.typed != first.kvc || second.typed != second.kvc { problems.append("\(label): typed \(second.typed) kvc \(second.kvc) (first \(first))") }
        }

        let context = ObjectContext(coordinator: coordinator)
        let objects = try ids.map { try context.existingObject(with: $0) }
        for (index, object) in objects.enumerated() { check("loaded \(index)", object) }
        // transient set
        (objects[0] as? StateItem)?.scratch = "tmp"
        check("transient set", objects[0])
        // edited, then saved in another context and merged
        let writer = ObjectContext(coordinator: coordinator)
        let token = coordinator.addSaveObserver { _ in }
        _ = token
        let w = try writer.existingObject(with: ids[1]) as! StateItem
        w.title = "changed elsewhere"
        w.owner = try writer.existingObject(with: other.objectID) as? StateOwner
        try writer.save()
        check("stale after other save", objects[1])
        context.refresh(objects[1], mergeChanges: false)
        check("refreshed false", objects[1])
        context.refresh(objects[2], mergeChanges: true)
        check("refreshed true", objects[2])
        // deleted, unsaved and saved
        context.delete(objects[3])
        check("deleted unsaved", objects[3])
        // changed then rolled back
        (objects[4] as! StateItem).title = "local"
        check("changed", objects[4])
        context.rollback()
        check("rolled back", objects[4])
        check("after rollback 3", objects[3])
        // partial rows
        let partialContext = ObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "RItem")
        request.propertiesToFetch = ["title"]
        for (index, object) in try partialContext.fetch(request).enumerated() { check("partial \(index)", object) }
        // a row that is gone
        let gone = ObjectContext(coordinator: coordinator)
        let goneObject = gone.object(with: ids[5])
        check("before gone", goneObject)
        let remover = ObjectContext(coordinator: coordinator)
        remover.delete(try remover.existingObject(with: ids[5]))
        try remover.save()
        check("row deleted elsewhere (held)", goneObject)
        gone.refresh(goneObject, mergeChanges: false)
        check("row deleted elsewhere (refault)", goneObject)
        // context gone
        var held: [ManagedObject] = []
        do {
            let short = ObjectContext(coordinator: coordinator)
            held = try ids.filter { $0 != ids[5] }.map { try short.existingObject(with: $0) }
            let fault = short.object(with: ids[0])
            _ = fault
        }
        for (index, object) in held.enumerated() { check("context gone \(index)", object) }
        // reset
        let resetting = ObjectContext(coordinator: coordinator)
        let r = try resetting.existingObject(with: ids[0])
        check("before reset", r)
        resetting.reset()
        check("after reset", r)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
