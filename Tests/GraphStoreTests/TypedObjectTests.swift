import Foundation
import GraphStore
import Testing

final class Student: ManagedObject {
    @Stored("name") var name: String
    @ToOne("address") var address: Address?
    @ToOne("class") var schoolClass: SchoolClass?
    @ToMany("subjects") var subjects: [Subject]
}

final class Address: ManagedObject {
    @Stored("street") var street: String?
    @Stored("city") var city: String?
    @ToOne("student") var student: Student?
}

final class SchoolClass: ManagedObject {
    override class var entityName: String { "Class" }
    @Stored("name") var name: String
    @ToMany("students") var students: [Student]
}

final class Subject: ManagedObject {
    @Stored("name") var name: String
    @ToMany("students") var students: [Student]
}

/// One class whose key "name" sits at a different attribute index in each model below, beside a class of
/// another entity with a key of the same text.
final class Badge: ManagedObject {
    @Stored("label") var label: String
    @Stored("name") var name: String
}

final class Tag: ManagedObject {
    @Stored("name") var name: String
    @Stored("rank") var rank: Int64
}

@Suite struct TypedObjectTests {
    private let classes: [ManagedObject.Type] = [Student.self, Address.self, SchoolClass.self, Subject.self]

    @Test func typedPropertiesReadAndWriteThroughTheGraph() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("typed.sqlite")
        let model = try ExperimentModels.students()
        let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: classes)
        let context = ObjectContext(coordinator: coordinator)
        let student = context.insert(Student.self)
        student.name = "Aiko"
        let address = context.insert(Address.self)
        address.street = "1 Main St"
        student.address = address
        #expect(address.student === student)
        let schoolClass = context.insert(SchoolClass.self)
        schoolClass.name = "1-A"
        schoolClass.students = [student]
        #expect(student.schoolClass === schoolClass)
        let math = context.insert(Subject.self)
        math.name = "Math"
        student.subjects = [math]
        #expect(math.students.map(\.name) == ["Aiko"])
        try context.save()

        let reopened = try PersistentStoreCoordinator(path: path, model: model, classes: classes)
        let fresh = ObjectContext(coordinator: reopened)
        let students = try fresh.fetch(Student.self)
        #expect(students.count == 1)
        let loaded = try #require(students.first)
        #expect(loaded.name == "Aiko")
        #expect(loaded.address?.street == "1 Main St")
        #expect(loaded.address?.city == nil)
        #expect(loaded.schoolClass?.name == "1-A")
        #expect(loaded.subjects.map(\.name) == ["Math"])
        #expect(fresh.object(with: loaded.objectID) is Student)
    }

    /// A wrapper keeps its key in one word (objects hold every wrapper of their class), and gives back the text it
    /// was given, whatever form the literal took: text, non-ASCII text, or a single scalar.
    @Test func wrappersKeepTheirKeysInOneWord() {
        #expect(MemoryLayout<Stored<String>>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<ToOne<Student>>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<ToMany<Student>>.size == MemoryLayout<Int>.size)
        #expect(Stored<String>("name").key == "name")
        #expect(ToOne<Student>("größe").key == "größe")
        #expect(ToMany<Student>("").key == "")
        // A literal typed through `ExpressibleByUnicodeScalarLiteral` is a static string with no text to point at.
        func scalarLiteral<Literal: ExpressibleByUnicodeScalarLiteral>(_: Literal.Type) -> Literal { "x" }
        let scalar = scalarLiteral(StaticString.self)
        #expect(!scalar.hasPointerRepresentation)
        #expect(Stored<String>(scalar).key == "x")
        #expect(ToOne<Student>(scalar).key == "x")
    }

    /// Typed properties find their slot per entity and per coordinator: the same key text ("name") at different
    /// attribute indexes, in two entities and in two models of one class, reads and writes its own attribute.
    @Test func typedKeysResolvePerEntityAndPerModel() throws {
        func model(badgeAttributes: [String]) throws -> ObjectModel {
            try ObjectModel {
                EntityDescription("Badge") {
                    for name in badgeAttributes { Attribute(name, .string) }
                }
                EntityDescription("Tag") {
                    Attribute("rank", .integer64)
                    Attribute("name", .string)
                }
            }
        }
        let folder = try TemporaryDirectory()
        for (index, order) in [["label", "name"], ["name", "label"]].enumerated() {
            let coordinator = try PersistentStoreCoordinator(path: folder.path("badges\(index).sqlite"), model: try model(badgeAttributes: order),
                                                             classes: [Badge.self, Tag.self])
            let context = ObjectContext(coordinator: coordinator)
            let badge = context.insert(Badge.self)
            let tag = context.insert(Tag.self)
            badge.name = "badge name"
            tag.name = "tag name"
            badge.label = "badge label"
            tag.rank = 3
            try context.save()

            let fresh = ObjectContext(coordinator: coordinator)
            let loadedBadge = try #require(try fresh.fetch(Badge.self).first)
            let loadedTag = try #require(try fresh.fetch(Tag.self).first)
            #expect(loadedTag.name == "tag name")
            #expect(loadedBadge.name == "badge name")
            #expect(loadedBadge.label == "badge label")
            #expect(loadedTag.rank == 3)
            #expect(loadedBadge.attributeValue(forKey: "name") == .string("badge name"))
            #expect(loadedTag.attributeValue(forKey: "name") == .string("tag name"))
        }
    }
}
