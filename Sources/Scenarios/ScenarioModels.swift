import GraphStore

/// The two models the scenarios run on, declared in code (the same entities as the test suite's models of the published sources).
public enum ScenarioModels {
    /// Student, Class, Subject and Address: every relationship shape the students scenario looks at.
    ///
    /// `Student.address` is one-to-one, `mailingAddress` one-to-nil, `class` many-to-one, `subjects` many-to-many
    /// and `favoriteSubjects` many-to-nil (a to-many with no inverse).
    public static func students() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Address") {
                Attribute("street", .string)
                Attribute("city", .string)
                Relationship.toOne("student", "Student", inverse: "address")
            }
            EntityDescription("Class") {
                Attribute("name", .string).required()
                Relationship.toMany("students", "Student", inverse: "class")
            }
            EntityDescription("Student") {
                Attribute("name", .string).required()
                Relationship.toOne("address", "Address", inverse: "student", deleteRule: .cascade)
                Relationship.toOne("mailingAddress", "Address", inverse: nil)
                Relationship.toOne("class", "Class", inverse: "students")
                Relationship.toMany("subjects", "Subject", inverse: "students")
                Relationship.toMany("favoriteSubjects", "Subject", inverse: nil)
            }
            EntityDescription("Subject") {
                Attribute("name", .string).required()
                Relationship.toMany("students", "Student", inverse: "subjects")
            }
        }
    }

    /// Person and the join entity AssociateInfo: a typed, ranked, reflexive many-to-many.
    ///
    /// Each AssociateInfo links its `source` person to one `associate`, with a `type` (see `AssociateType`) and the
    /// associate's 0-based `rankingForType` among the source's associates of that type.
    public static func associates() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("AssociateInfo") {
                Attribute("type", .integer16).required().defaultValue("0")
                Attribute("rankingForType", .integer16).required().defaultValue("0")
                Relationship.toOne("source", "Person", inverse: "associates")
                Relationship.toOne("associate", "Person", inverse: "associatedFrom")
            }
            EntityDescription("Person") {
                Attribute("firstName", .string)
                Attribute("lastName", .string)
                Relationship.toMany("associates", "AssociateInfo", inverse: "source", deleteRule: .cascade)
                Relationship.toMany("associatedFrom", "AssociateInfo", inverse: "associate", deleteRule: .cascade)
            }
        }
    }
}

/// The values of `AssociateInfo.type`.
public enum AssociateType: Int, CaseIterable, Sendable {
    case friend = 0
    case foe = 1
    case partnerInCrime = 2
}
