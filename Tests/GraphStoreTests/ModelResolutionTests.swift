import GraphStore
import Testing

@Suite struct ModelResolutionTests {
    @Test func entityNumbersFollowCoreDataOrder() throws {
        let model = try ExperimentModels.contacts()
        #expect(model.entities.map(\.name) == ["Contact", "Group", "User", "Message"])
        #expect(model.entities.map(\.number) == [1, 2, 3, 4])
        #expect(model.entity(named: "Group")?.rootName == "Contact")
        #expect(model.entity(named: "Contact")?.descendantNames == ["Group", "User"])
        #expect(model.entity(named: "User")?.attributes.map(\.name) == ["name", "lastMessageAt", "phone", "isBlocked"])
    }

    @Test func warnsAboutRelationshipsWithoutInverse() throws {
        let model = try ExperimentModels.students()
        #expect(model.warnings.map(\.description).sorted() == [
            "Student.favoriteSubjects: has no inverse (many-to-nil: Faultline keeps it in a join table, so no link is lost); deletes and edits on 'Subject' will not update it",
            "Student.mailingAddress: has no inverse (one-to-nil); deletes and edits on 'Address' will not update it",
        ])
    }

    @Test func collectsEveryProblem() {
        #expect(throws: ModelError(problems: [
            "entity 'A' is declared more than once",
            "entity 'B': unknown parent entity 'Nope'",
        ])) {
            try ObjectModel {
                EntityDescription("A") { Attribute("x", .string) }
                EntityDescription("A") { Attribute("y", .string) }
                EntityDescription("B", parent: "Nope") { Attribute("z", .string) }
            }
        }
    }

    @Test func rejectsInheritanceCycles() {
        #expect(throws: ModelError(problems: [
            "entity 'A': inheritance cycle A → B → A",
            "entity 'B': inheritance cycle B → A → B",
        ])) {
            try ObjectModel {
                EntityDescription("A", parent: "B") { Attribute("x", .string) }
                EntityDescription("B", parent: "A") { Attribute("y", .string) }
            }
        }
    }

    @Test func rejectsUnknownDestinationAndMismatchedInverse() {
        #expect(throws: ModelError(problems: [
            "entity 'A': relationship 'b': its inverse 'B.a' names 'other' as its inverse, not 'b'",
            "entity 'A': relationship 'c': unknown destination entity 'C'",
            "entity 'B': relationship 'a': unknown inverse 'other' on entity 'A'",
            "entity 'B': relationship 'other': unknown inverse 'missing' on entity 'A'",
        ])) {
            try ObjectModel {
                EntityDescription("A") {
                    Relationship.toOne("b", "B", inverse: "a")
                    Relationship.toOne("c", "C", inverse: nil)
                }
                EntityDescription("B") {
                    Relationship.toOne("a", "A", inverse: "other")
                    Relationship.toOne("other", "A", inverse: "missing")
                }
            }
        }
    }

    @Test func rejectsBadDerivations() {
        #expect(throws: ModelError(problems: [
            "entity 'A': attribute 'n': derivation 'bs.@sum' is not supported (use 'toMany.@count' or 'toOne.attribute')",
            "entity 'A': attribute 'm': derivation 'b.@count' counts to-one relationship 'b'",
        ])) {
            try ObjectModel {
                EntityDescription("A") {
                    Attribute.derived("n", "bs.@sum")
                    Attribute.derived("m", "b.@count")
                    Relationship.toOne("b", "B", inverse: "a")
                }
                EntityDescription("B") { Relationship.toOne("a", "A", inverse: "b") }
            }
        }
    }
}

@Suite struct ModelEqualityTests {
    @Test func propertyOrderDoesNotMatter() throws {
        let declared = try ExperimentModels.employees()
        var shuffled = declared.declarations
        shuffled[0].attributes.reverse()
        shuffled[0].relationships.reverse()
        #expect(try ObjectModel(shuffled) == declared)
        shuffled[0].attributes.removeLast()
        #expect(try ObjectModel(shuffled) != declared)
    }
}

/// Inheritance chains: walked once, and refused deeper than 100 levels.
extension ModelResolutionTests {
    /// Loading a model that chains thousands of entities took billions of steps (every entity asked every other
    /// for its ancestry); chains are now walked once, and deeper than 100 levels refused.
    @Test func longInheritanceChainsLoadQuicklyOrAreRefused() throws {
        func chain(_ length: Int) -> [EntityDescription] {
            (0..<length).map { EntityDescription(name: "E\($0)", parent: $0 == 0 ? nil : "E\($0 - 1)") }
        }
        let start = ContinuousClock.now
        let model = try ObjectModel(chain(101))
        #expect(model.entity(named: "E0")?.descendantNames.count == 100)
        #expect(model.entity(named: "E99")?.descendantNames == ["E100"])
        #expect(throws: ModelError.self) { try ObjectModel(chain(5_000)) }
        do {
            _ = try ObjectModel(chain(5_000))
        } catch {
            #expect(error.problems == ["entity 'E101': inherits through more than 100 levels of parent entities"])
        }
        #expect(ContinuousClock.now - start < .seconds(2))
    }
}
