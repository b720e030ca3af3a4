import Foundation
import GraphStore
import Testing

/// Two sub-entities of one table that each declare a to-one of the same name get two columns (`ZOWNER` and
/// `ZOWNER1`); the to-many on the other side of each reads its own one.
@Suite struct SiblingColumnTests {
    @Test func siblingToOnesOfOneNameKeepTheirOwnColumns() throws {
        let model = try ObjectModel {
            EntityDescription("Thing") { Attribute("name", .string) }
            EntityDescription("Apple", parent: "Thing") { Relationship.toOne("owner", "Farmer", inverse: "apples") }
            EntityDescription("Boat", parent: "Thing") { Relationship.toOne("owner", "Sailor", inverse: "boats") }
            EntityDescription("Farmer") { Relationship.toMany("apples", "Apple", inverse: "owner") }
            EntityDescription("Sailor") { Relationship.toMany("boats", "Boat", inverse: "owner") }
        }
        let folder = try TemporaryDirectory()
        let path = folder.path("things.sqlite")
        let coordinator = try PersistentStoreCoordinator(path: path, model: model)
        let context = ObjectContext(coordinator: coordinator)
        let farmer = context.insert("Farmer")
        let sailor = context.insert("Sailor")
        let apple = context.insert("Apple")
        apple.setValue("apple", forKey: "name")
        apple.setObject(farmer, forKey: "owner")
        let boat = context.insert("Boat")
        boat.setValue("boat", forKey: "name")
        boat.setObject(sailor, forKey: "owner")
        try context.save()

        let fresh = ObjectContext(coordinator: try PersistentStoreCoordinator(path: path, model: model))
        let farmers = try fresh.fetch(FetchRequest(entityName: "Farmer"))
        let sailors = try fresh.fetch(FetchRequest(entityName: "Sailor"))
        #expect(farmers.first?.objects(forKey: "apples").map { $0.value(forKey: "name") as? String } == ["apple"])
        #expect(sailors.first?.objects(forKey: "boats").map { $0.value(forKey: "name") as? String } == ["boat"])
    }
}
