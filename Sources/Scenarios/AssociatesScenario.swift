import Foundation
import GraphStore

/// The Person/AssociateInfo experiment: "the ordered names of the 10 foes of one person", through the join entity AssociateInfo, four ways.
///
/// The data: 100 persons, each with 10 friends, 10 foes and 10 partners in crime, 30 different people (3,000
/// AssociateInfo rows in all). Names and rankings follow fixed formulas, so every run builds the same store.
public final class AssociatesScenario {
    public static let personCount = 100
    public static let associatesPerType = 10
    /// Person `i` is `firstNames[i % 10] lastNames[i / 10]`: 100 different names.
    public static let firstNames = ["Ada", "Basil", "Cora", "Dmitri", "Esme", "Felix", "Greta", "Hugo", "Ines", "Jonah"]
    public static let lastNames = ["Abbott", "Brandt", "Castillo", "Dube", "Eriksen", "Fontaine", "Gallo", "Haddad", "Ivanova", "Jansen"]
    /// The person whose foes every method lists: Cora Eriksen.
    public static let chosenPerson = 42

    public static let methodNames = [
        "object-graph navigation",
        "fetch AssociateInfo by type, sorted",
        "same, prefetching associate",
        "fetch Person with ANY associatedFrom.source",
    ]

    /// Why method 4 lists 30 names under a title that promises 10, shown beside its result.
    public static let associatesNote = """
        30 names, not 10: this method's predicate (`ANY associatedFrom.source == $SOURCE`, the published \
        experiment's) tests whose link it is, not the link's type, so it returns all 30 people the chosen one is \
        linked to, foes or not. Asking for the foes alone would need a SUBQUERY that tests the source and the type \
        of the same link.
        """

    public let store: ScenarioStore

    /// Builds the model and the data in a new store at `path`.
    public init(path: String, strategy: FaultStrategy) throws(ScenarioError) {
        let model: ObjectModel
        do {
            model = try ScenarioModels.associates()
        } catch {
            throw ScenarioError("the associates model: \(error)")
        }
        store = try ScenarioStore(path: path, model: model, strategy: strategy)
        try populate()
    }

    // MARK: data

    public static func name(ofPerson index: Int) -> String {
        "\(firstNames[index % firstNames.count]) \(lastNames[index / firstNames.count])"
    }

    /// Which person is the `ranking`-th associate of `type` of person `index`. For one person the 30 answers are
    /// the 30 persons after it (wrapping round), so no one is their own associate and no one appears twice; within a
    /// type the ranking shuffles them, so rank order is neither name order nor row order.
    public static func associate(of index: Int, type: AssociateType, ranking: Int) -> Int {
        let offset = 1 + type.rawValue * associatesPerType + (3 * ranking + index) % associatesPerType
        return (index + offset) % personCount
    }

    /// The names every method but the last must return, in rank order, worked out without the store.
    public static var expectedFoeNames: [String] {
        (0..<associatesPerType).map { name(ofPerson: associate(of: chosenPerson, type: .foe, ranking: $0)) }
    }

    private func populate() throws(ScenarioError) {
        let context = ObjectContext(coordinator: store.coordinator, name: "build")
        var persons: [ManagedObject] = []
        for index in 0..<Self.personCount {
            let person = context.insert("Person")
            person.setValue(Self.firstNames[index % Self.firstNames.count], forKey: "firstName")
            person.setValue(Self.lastNames[index / Self.firstNames.count], forKey: "lastName")
            persons.append(person)
        }
        for (index, person) in persons.enumerated() {
            for type in AssociateType.allCases {
                // Rows go in out of rank order (0, 7, 4, 1, …), so primary-key order does not give the ranking.
                for step in 0..<Self.associatesPerType {
                    let ranking = (step * 7) % Self.associatesPerType
                    let info = context.insert("AssociateInfo")
                    info.setValue(type.rawValue, forKey: "type")
                    info.setValue(ranking, forKey: "rankingForType")
                    info.setObject(person, forKey: "source")
                    info.setObject(persons[Self.associate(of: index, type: type, ranking: ranking)], forKey: "associate")
                }
            }
        }
        do {
            try context.save()
        } catch {
            throw ScenarioError("saving the associates data: \(error)")
        }
    }

    // MARK: methods

    /// Runs the four methods, each on a new context and an empty row cache.
    public func run() throws(ScenarioError) -> ScenarioReport {
        ScenarioReport(scenario: .associates, strategy: store.strategy, methods: [
            try navigation(),
            try fetchByType(prefetchingAssociate: false),
            try fetchByType(prefetchingAssociate: true),
            try fetchAssociatedPersons(),
        ])
    }

    /// Method 1: walk person → associates → associate, keeping the foes and sorting them by ranking in memory.
    public func navigation() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "navigation")
        let person = try chosenPerson(in: context)
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[0]) {
                person.objects(forKey: "associates")
                    .filter { $0.integer("type") == AssociateType.foe.rawValue }
                    .sorted { $0.integer("rankingForType") < $1.integer("rankingForType") }
                    .map { Self.fullName($0.object(forKey: "associate")) }
            }
        }
    }

    /// Methods 2 and 3: fetch the person's foe AssociateInfos sorted by ranking (from a template with `$SOURCE` and
    /// `$TYPE`, as the experiment's stored fetch request), then follow `associate`; method 3 prefetches it.
    public func fetchByType(prefetchingAssociate: Bool) throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: prefetchingAssociate ? "fetch by type, prefetching" : "fetch by type")
        let person = try chosenPerson(in: context)
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[prefetchingAssociate ? 2 : 1]) {
                let template = try GraphStore.Predicate(format: "source == $SOURCE AND type == $TYPE")
                var request = FetchRequest(
                    entityName: "AssociateInfo",
                    predicate: template.substituting(["SOURCE": person, "TYPE": AssociateType.foe.rawValue]),
                    sortDescriptors: [.init("rankingForType")])
                if prefetchingAssociate { request.relationshipKeyPathsForPrefetching = ["associate"] }
                return try context.fetch(request).map { Self.fullName($0.object(forKey: "associate")) }
            }
        }
    }

    /// Method 4: fetch the persons with `ANY associatedFrom.source == $SOURCE`: every associate, whatever the
    /// type (the predicate cannot say which type), sorted by last then first name. Their rows come with the fetch,
    /// so reading the names fires faults the row cache answers.
    public func fetchAssociatedPersons() throws(ScenarioError) -> MethodResult {
        let context = store.freshContext(name: "fetch associates")
        let person = try chosenPerson(in: context)
        return try withExtendedLifetime(context) { () throws(ScenarioError) -> MethodResult in
            try store.measure(Self.methodNames[3], note: Self.associatesNote) {
                let predicate = try GraphStore.Predicate(format: "ANY associatedFrom.source == $SOURCE").substituting(["SOURCE": person])
                let request = FetchRequest(entityName: "Person", predicate: predicate, sortDescriptors: [.init("lastName"), .init("firstName")])
                return try context.fetch(request).map { Self.fullName($0) }
            }
        }
    }

    /// The chosen person, fetched by name (one statement, before any measuring).
    private func chosenPerson(in context: ObjectContext) throws(ScenarioError) -> ManagedObject {
        let index = Self.chosenPerson
        let first = Self.firstNames[index % Self.firstNames.count]
        let last = Self.lastNames[index / Self.firstNames.count]
        let found: [ManagedObject]
        do {
            found = try context.fetch("Person", where: [("firstName", .string(first)), ("lastName", .string(last))])
        } catch {
            throw ScenarioError("fetching \(first) \(last): \(error)")
        }
        guard let person = found.first else { throw ScenarioError("no person named \(first) \(last) in \(store.path)") }
        return person
    }

    private static func fullName(_ person: ManagedObject?) -> String {
        guard let person else { return "(none)" }
        return "\(person.string("firstName")) \(person.string("lastName"))"
    }
}
