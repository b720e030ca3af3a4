import Foundation
import GRDB
@testable import GraphStore

/// The chat model the predicate suites (`PredicateSQLTests`, `PredicateEvaluationTests`) share, and a way to run a
/// compiled predicate against a store file.
enum PredicateTestStore {
    /// Chat=1 (ZCHAT), Message=2 (ZMESSAGE), User=3 (ZUSER); Chat.members ↔ User.chats in join table Z_1MEMBERS.
    /// `Chat.budget` (a decimal) and `User.rating` (a float) let numbers of every kind meet in comparisons.
    static func chatModel() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Chat") {
                Attribute("title", .string)
                Attribute("kind", .integer16)
                Attribute("budget", .decimal)
                Relationship.toMany("members", "User", inverse: "chats")
                Relationship.toMany("messages", "Message", inverse: "chat")
            }
            EntityDescription("Message") {
                Attribute("text", .string)
                Attribute("sentAt", .date)
                Attribute("score", .double)
                Attribute("draft", .string).transient()
                Relationship.toOne("sender", "User", inverse: "messages")
                Relationship.toOne("chat", "Chat", inverse: "messages")
            }
            EntityDescription("User") {
                Attribute("name", .string)
                Attribute("age", .integer64)
                Attribute("isBlocked", .boolean)
                Attribute("id", .uuid)
                Attribute("rating", .float)
                Relationship.toMany("messages", "Message", inverse: "sender")
                Relationship.toMany("chats", "Chat", inverse: "members")
            }
        }
    }

    /// The primary keys of the `entity` rows in the store file at `path` that the compiled predicate selects, in
    /// ascending order. The SQL runs on its own connection, with the string search function installed.
    static func selectedKeys(_ entity: String, _ predicate: GraphStore.Predicate, schema: StoreSchema, path: String) throws -> [Int64] {
        var compiler = PredicateCompiler(schema: schema, entity: entity)
        let compiled = try compiler.compile(predicate)
        var query = "SELECT t0.Z_PK FROM \(schema.table(for: entity)!.name) t0"
        for join in compiled.joins { query += " " + join }
        if !compiled.condition.isEmpty { query += " WHERE " + compiled.condition }
        query += " ORDER BY t0.Z_PK"
        let arguments = StatementArguments(compiled.arguments.map(\.testDatabaseValue))
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            PredicateFunctions.install(on: db)
            return try Int64.fetchAll(db, sql: query, arguments: arguments)
        }
    }
}

extension AttributeValue {
    /// The value as SQLite receives it from `SQLiteValues.bind`, for running compiled SQL through GRDB in tests.
    var testDatabaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .boolean(let flag): (flag ? 1 : 0).databaseValue
        case .double(let number): number.databaseValue
        case .decimal(let number): number.description.databaseValue
        case .string(let text): text.databaseValue
        case .date(let date): date.timeIntervalSinceReferenceDate.databaseValue
        case .data(let data): data.databaseValue
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .uri(let url): url.absoluteString.databaseValue
        }
    }
}
