import Foundation

extension ScenarioName {
    /// One line on what the scenario measures, for the table's title.
    public var title: String {
        switch self {
        case .associates:
            "associates (the Person/AssociateInfo experiment): the 10 foes of \(AssociatesScenario.name(ofPerson: AssociatesScenario.chosenPerson)), "
                + "in rank order; 100 persons, 3,000 AssociateInfo links"
        case .students:
            "students (LINE's engineering blog on Core Data relationships): faults along to-one and to-many relationships, finding a student, many-to-nil; "
                + "3 classes of 10 students, 6 subjects"
        }
    }

    /// Builds the scenario's store at `path` (which must not exist) and runs every method.
    public func run(storePath path: String, strategy: FaultStrategy) throws(ScenarioError) -> ScenarioReport {
        switch self {
        case .associates: try AssociatesScenario(path: path, strategy: strategy).run()
        case .students: try StudentsScenario(path: path, strategy: strategy).run()
        }
    }
}
