import GraphStore
import Scenarios

/// Models rebuilt from published Core Data experiments and examples, declared in code. Each has an Xcode twin under
/// `Models/`.
enum ExperimentModels {
    /// Student/Class/Subject/Address: one-to-one, one-to-nil, many-to-one, many-to-many and many-to-nil (the model
    /// `faultline scenario students` runs on).
    static func students() throws -> ObjectModel { try ScenarioModels.students() }

    /// Person/AssociateInfo: an ordered, typed, reflexive many-to-many through a join entity (the model
    /// `faultline scenario associates` runs on).
    static func associates() throws -> ObjectModel { try ScenarioModels.associates() }

    /// Quake/Country: Apple's many-to-many example.
    static func quakes() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Country") {
                Attribute("name", .string).required()
                Relationship.toMany("quakes", "Quake", inverse: "countries")
                Unique("name")
            }
            EntityDescription("Quake") {
                Attribute("code", .string).required()
                Attribute("magnitude", .float).required().minimum("0").maximum("10")
                Attribute("place", .string).required()
                Attribute("time", .date).required()
                Relationship.toMany("countries", "Country", inverse: "quakes")
                FetchIndex("byTime", "time")
            }
        }
    }

    /// Employee: a reflexive to-one/to-many (`manager` ↔ `reports`) and a self-inverse many-to-many (`peers`).
    static func employees() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Employee") {
                Attribute("name", .string).required()
                Attribute("salary", .decimal)
                Attribute("employeeID", .uuid)
                Attribute("startDate", .date)
                Relationship.toOne("manager", "Employee", inverse: "reports")
                Relationship.toMany("reports", "Employee", inverse: "manager", deleteRule: .deny)
                Relationship.toMany("peers", "Employee", inverse: "peers")
            }
        }
    }

    /// An abstract Contact with User and Group sub-entities sharing one table, plus ordered to-manys and derived values.
    static func contacts() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Contact", abstract: true) {
                Attribute("name", .string).required()
                Attribute("lastMessageAt", .date).indexed()
                Relationship.toMany("messages", "Message", inverse: "contact", ordered: true, deleteRule: .cascade)
            }
            EntityDescription("Group", parent: "Contact") {
                Attribute("topic", .string)
                Relationship.toMany("members", "User", inverse: "groups", ordered: true)
                Attribute.derived("membersCount", "members.@count")
            }
            EntityDescription("User", parent: "Contact") {
                Attribute("phone", .string).matching("[0-9+ ]+")
                Attribute("isBlocked", .boolean).required().defaultValue("NO")
                Relationship.toMany("groups", "Group", inverse: "members")
            }
            EntityDescription("Message") {
                Attribute("text", .string).required()
                Attribute("sentAt", .date).required()
                Attribute("preview", .string).transient()
                Relationship.toOne("contact", "Contact", inverse: "messages")
                Attribute.derived("contactName", "contact.name", .string)
            }
        }
    }
}
