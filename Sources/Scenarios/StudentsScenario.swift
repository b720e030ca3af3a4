import Foundation
import GraphStore

/// From LINE's engineering blog on Core Data relationships: what relationship faults cost in a small school (Student, Class, Subject, Address), and what a
/// many-to-nil relationship keeps after a save.
///
/// The data: 3 classes of 10 students, every student with an address and 3 of 6 subjects. Names are fixed, so
/// every run builds the same store.
public final class StudentsScenario {
    public static let classNames = ["1-A", "1-B", "1-C"]
    public static let studentNames = [
        "Aiko", "Bruno", "Chen", "Dalia", "Emre", "Farah", "Goran", "Hana", "Ivo", "Jun",
        "Kemal", "Lena", "Malik", "Nora", "Omar", "Pia", "Quentin", "Rosa", "Sami", "Tuva",
        "Umar", "Vera", "Wren", "Xia", "Yusuf", "Zora", "Anton", "Bea", "Caio", "Dina",
    ]
    public static let subjectNames = ["Mathematics", "Physics", "Chemistry", "Biology", "History", "Literature"]
    public static let streets = ["Birch Lane", "Canal Street", "Harbour Road", "Mill Row", "Orchard Way"]
    public static let cities = ["Lyon", "Porto", "Ghent"]
    /// The class searched by name in methods 3 and 4.
    public static let searchedClass = "1-B"

    public static let methodNames = [
        "to-one: student.address",
        "to-many: student.subjects",
        "find a student via class.students",
        "find a student with a fetch request",
        "many-to-nil: favoriteSubjects after save",
    ]

    /// Core Data's layout, which Faultline deliberately does not follow for a to-many without an inverse.
    public static let manyToNilNote = """
        Core Data keeps a to-many without an inverse as a foreign key on the destination's row, so Subject1 can \
        point back to one student only: after the save its student1.subjects is empty (the data loss LINE's article describes). \
        Faultline gives the relationship a join table, so student1 keeps Subject1.
        """

    public let store: ScenarioStore

    /// Builds the model and the data in a new store at `path`.
    public init(path: String, strategy: FaultStrategy) throws(ScenarioError) {
        let model: ObjectModel
        do {
            model = try ScenarioModels.students()
        } catch {
            throw ScenarioError("the students model: \(error)")
        }
        store = try ScenarioStore(path: path, model: model, strategy: strategy)
        try populate()
    }

    // MARK: data

    /// Student `i` is in class `i % 3`, so a class's members are spread over the table.
    public static func className(ofStudent index: Int) -> String {
        classNames[index % classNames.count]
    }

    /// The students of a class, in the order their rows were inserted (primary-key order).
    public static func students(inClass name: String) -> [String] {
        studentNames.indices.filter { className(ofStudent: $0) == name }.map { studentNames[$0] }
    }

    /// The student methods 3 and 4 look for: the last of the searched class, so a search through the relationship
    /// (which walks the members in ID order) has to fault in every one of them.
    public static var searchedStudent: String {
        students(inClass: searchedClass).last ?? ""
    }

    public static var classSize: Int {
        students(inClass: searchedClass).count
    }

    private func populate() throws(ScenarioError) {
        let context = ObjectContext(coordinator: store.coordinator, name: "build")
        let classes = Self.classNames.map { name in
            let object = context.insert("Class")
            object.setValue(name, forKey: "name")
            return object
        }
        let subjects = Self.subjectNames.map { name in
            let object = context.insert("Subject")
            object.setValue(name, forKey: "name")
            return object
        }
        for (index, name) in Self.studentNames.enumerated() {
            let student = context.insert("Student")
            student.setValue(name, forKey: "name")
            student.setObject(classes[index % classes.count], forKey: "class")
            let address = context.insert("Address")
            address.setValue("\(index + 1) \(Self.streets[index % Self.streets.count])", forKey: "street")
            address.setValue(Self.cities[index % Self.cities.count], forKey: "city")
            student.setObject(address, forKey: "address")
            student.setObjects([0, 1, 3].map { subjects[(index + $0) % subjects.count] }, forKey: "subjects")
        }
        do {
            try context.save()
        } catch {
            throw ScenarioError("saving the students data: \(error)")
        }
    }

    // MARK: methods

    /// Runs the five methods, each on a new context and an empty row cache.
    public func run() throws(ScenarioError) -> ScenarioReport {
        ScenarioReport(scenario: .students, strategy: store.strategy, methods: [
            try toOne(),
            try toMany(),
            try findThroughRelationship(),
            try findWithFetchRequest(),
            try manyToNil(),
        ])
    }

    /// The article's to-one example: fetch the students with their values, take the first, read its address. The
    /// fetch is part of what is counted, as in the article: 1 for the students, 1 for the address's fault.
    public func toOne() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "to-one")
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[0]) {
                guard let student = try context.fetch(Self.allStudents()).first else { return [] }
                let address = student.object(forKey: "address")
                return ["\(student.string("name")): \(address?.string("street") ?? ""), \(address?.string("city") ?? "")"]
            }
        }
    }

    /// The article's to-many example: the same fetch, then the first student's first subject. Counted: the fetch, the
    /// relationship fault (IDs only) and the subject's own fault.
    public func toMany() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "to-many")
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[1]) {
                guard let student = try context.fetch(Self.allStudents()).first else { return [] }
                let subject = student.objects(forKey: "subjects").first
                return ["\(student.string("name")): \(subject?.string("name") ?? "(none)")"]
            }
        }
    }

    /// Option 1 of the article: look through `class.students` for a name. The class is fetched first; then one
    /// relationship fault and one fault per student looked at.
    public func findThroughRelationship() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "find via relationship")
        let schoolClass = try searchedClass(in: context)
        let wanted = Self.searchedStudent
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[2]) {
                let found = schoolClass.objects(forKey: "students").first { $0.string("name") == wanted }
                return found.map { [$0.string("name")] } ?? []
            }
        }
    }

    /// Option 2 of the article: one fetch request for `class == %@ AND name == %@`, limited to one row.
    public func findWithFetchRequest() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "find with fetch request")
        let schoolClass = try searchedClass(in: context)
        let wanted = Self.searchedStudent
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[3]) {
                var request = FetchRequest(entityName: "Student", predicate: try GraphStore.Predicate(format: "class == %@ AND name == %@", schoolClass, wanted))
                request.fetchLimit = 1
                request.returnsObjectsAsFaults = false
                return try context.fetch(request).first.map { [$0.string("name")] } ?? []
            }
        }
    }

    /// The article's many-to-nil example on `favoriteSubjects`: Student1 likes Subject1, Student2 likes Subject1 and
    /// Subject2. Saved, then read back by a new context on an emptied row cache, so the answer comes from the store.
    /// Counted: the save's statements and the reading back.
    public func manyToNil() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "many-to-nil")
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[4], note: Self.manyToNilNote) {
                let subject1 = context.insert("Subject")
                subject1.setValue("Subject1", forKey: "name")
                let subject2 = context.insert("Subject")
                subject2.setValue("Subject2", forKey: "name")
                let student1 = context.insert("Student")
                student1.setValue("Student1", forKey: "name")
                student1.setObjects([subject1], forKey: "favoriteSubjects")
                let student2 = context.insert("Student")
                student2.setValue("Student2", forKey: "name")
                student2.setObjects([subject1, subject2], forKey: "favoriteSubjects")
                try context.save()

                let reader = store.freshContext(name: "many-to-nil, read back")
                return try withExtendedLifetime(reader) {
                    try ["Student1", "Student2"].map { name in
                        let student = try reader.fetch("Student", where: [("name", .string(name))]).first
                        let subjects = student?.objects(forKey: "favoriteSubjects").map { $0.string("name") } ?? []
                        return "\(name): \(subjects.isEmpty ? "(none)" : subjects.joined(separator: ", "))"
                    }
                }
            }
        }
    }

    /// Every student, values and all, in the store's order: the article's `NSFetchRequest<Student>` with
    /// `returnsObjectsAsFaults = false`.
    private static func allStudents() -> FetchRequest {
        var request = FetchRequest(entityName: "Student")
        request.returnsObjectsAsFaults = false
        return request
    }

    private func searchedClass(in context: ObjectContext) throws(ScenarioError) -> ManagedObject {
        let found: [ManagedObject]
        do {
            found = try context.fetch("Class", where: [("name", .string(Self.searchedClass))])
        } catch {
            throw ScenarioError("fetching class \(Self.searchedClass): \(error)")
        }
        guard let schoolClass = found.first else { throw ScenarioError("no class \(Self.searchedClass) in \(store.path)") }
        return schoolClass
    }
}
