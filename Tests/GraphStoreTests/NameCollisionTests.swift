import GraphStore
import Testing

/// SQLite compares table, index, trigger and column names without case, and Core Data upper-cases entity and
/// property names into them: names that differ only in case would be one table or one column, and the store's DDL
/// would fail halfway (or, for columns, silently share one). The model refuses them, naming both.
@Suite struct NameCollisionTests {
    @Test func entitiesDifferingOnlyInCaseAreRefused() {
        #expect(throws: ModelError(problems: [
            "entities 'Foo' and 'FOO' differ only in case: SQLite names ignore case, so both would be stored as ZFOO",
        ])) {
            try ObjectModel {
                EntityDescription("Foo") { Attribute("x", .string) }
                EntityDescription("FOO") { Attribute("y", .string) }
            }
        }
        // Sub-entities too: they share Z_PRIMARYKEY, fetch-index and trigger names.
        #expect(throws: ModelError.self) {
            try ObjectModel {
                EntityDescription("Animal") { Attribute("x", .string) }
                EntityDescription("Dog", parent: "Animal") {}
                EntityDescription("DOG", parent: "Animal") {}
            }
        }
    }

    @Test func propertiesDifferingOnlyInCaseAreRefused() {
        #expect(throws: ModelError(problems: [
            "entity 'A': properties 'name' and 'Name' differ only in case: SQLite names ignore case, so both would be stored as ZNAME",
        ])) {
            try ObjectModel {
                EntityDescription("A") {
                    Attribute("name", .string)
                    Attribute("Name", .string)
                }
            }
        }
        // One inherited, one own: reported once, on the entity that brings the second in.
        #expect(throws: ModelError(problems: [
            "entity 'B': properties 'owner' and 'OWNER' differ only in case: SQLite names ignore case, so both would be stored as ZOWNER",
        ])) {
            try ObjectModel {
                EntityDescription("A") { Attribute("owner", .string) }
                EntityDescription("B", parent: "A") { Attribute("OWNER", .integer64) }
            }
        }
    }

    @Test func siblingSubentitiesMayShareANameAsInCoreData() throws {
        // Core Data numbers the second column (ZHEIGHT1); the two are different properties of different entities.
        let model = try ObjectModel {
            EntityDescription("Animal") { Attribute("name", .string) }
            EntityDescription("Cat", parent: "Animal") { Attribute("height", .double) }
            EntityDescription("Dog", parent: "Animal") { Attribute("Height", .double) }
        }
        let schema = StoreSchema(model: model)
        #expect(schema.column(forAttribute: "height", of: "Cat") == "ZHEIGHT")
        #expect(schema.column(forAttribute: "Height", of: "Dog") == "ZHEIGHT1")
    }

    @Test func fetchIndexesDifferingOnlyInCaseAreRefused() {
        #expect(throws: ModelError(problems: [
            "entity 'A': fetch indexes 'byX' and 'BYX' differ only in case: SQLite names ignore case, so both would be index Z_A_byX",
        ])) {
            try ObjectModel {
                EntityDescription("A") {
                    Attribute("x", .string)
                    FetchIndex("byX", "x")
                    FetchIndex("BYX", "x")
                }
            }
        }
    }

    @Test func generatedNamesThatMeetAreRefused() {
        // A fetch index named like the uniqueness constraint's index: two indexes Z_User_UNIQUE_handle.
        #expect(throws: ModelError(problems: [
            "index Z_User_UNIQUE_handle on ZUSER and index Z_User_UNIQUE_handle on ZUSER would both be named Z_User_UNIQUE_handle (SQLite names ignore case)",
        ])) {
            try ObjectModel {
                EntityDescription("User") {
                    Attribute("handle", .string)
                    FetchIndex("UNIQUE_handle", "handle")
                    Unique("handle")
                }
            }
        }
        // An entity whose table is named like another table's index.
        #expect(throws: ModelError.self) {
            try ObjectModel {
                EntityDescription("Car") { Relationship.toOne("owner", "Person", inverse: nil) }
                EntityDescription("Person") { Attribute("name", .string) }
                EntityDescription("Car_zowner_index") { Attribute("x", .string) }
            }
        }
    }

    @Test func indexesAndConstraintsOnPropertiesWithoutColumnsAreRefused() {
        // These used to stop the process while the store's layout was worked out.
        #expect(throws: ModelError(problems: [
            "entity 'A': fetch index 'byNote' names transient attribute 'note', which has no column to index",
            "entity 'A': fetch index 'byBs' names to-many relationship 'bs', which has no column to index",
            "entity 'A': uniqueness constraint names transient attribute 'note', which has no column",
        ])) {
            try ObjectModel {
                EntityDescription("A") {
                    Attribute("note", .string).transient()
                    Relationship.toMany("bs", "B", inverse: "a", deleteRule: .nullify)
                    FetchIndex("byNote", "note")
                    FetchIndex("byBs", "bs")
                    Unique("note")
                }
                EntityDescription("B") { Relationship.toOne("a", "A", inverse: "bs", deleteRule: .nullify) }
            }
        }
    }
}
