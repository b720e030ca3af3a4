import Foundation
import GraphStore

/// The chat model the predicate tests use (Chat, Message, User), so that parsed predicates also compile to SQL.
private let schema: StoreSchema = {
    let model = try! ObjectModel {
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
            Relationship.toOne("sender", "User", inverse: "messages")
            Relationship.toOne("chat", "Chat", inverse: "messages")
        }
        EntityDescription("User") {
            Attribute("name", .string)
            Attribute("age", .integer64)
            Attribute("isBlocked", .boolean)
            Relationship.toMany("messages", "Message", inverse: "sender")
            Relationship.toMany("chats", "Chat", inverse: "members")
        }
    }
    return StoreSchema(model: model)
}()

/// One input: the bytes as a format string (invalid UTF-8 read as U+FFFD), given as many arguments as it has `%`
/// signs. It must parse or throw a `PredicateError`; what parses must print as a format that reads back as the
/// same predicate (when it took no arguments) and must compile, or fail to, for each entity. A crash, a hang
/// (libFuzzer's `-timeout`) or an address-sanitizer report is a finding.
func fuzzPredicate(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let format = start.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? ""
    let pool: [any PredicateArgumentConvertible] = ["name", 3, 2.5, PredicateArgument.null, [1, 2]]
    let arguments = (0..<format.filter { $0 == "%" }.count).map { pool[$0 % pool.count] }
    guard let predicate = try? Predicate(format: format, arguments: arguments) else { return 0 }
    if arguments.isEmpty {
        guard let again = try? Predicate(format: predicate.description), again == predicate else {
            fatalError("\(format.debugDescription) prints as \(predicate.description.debugDescription), which does not read back as it")
        }
    }
    for entity in ["Chat", "Message", "User"] {
        var compiler = PredicateCompiler(schema: schema, entity: entity)
        _ = try? compiler.compile(predicate)
    }
    return 0
}

/// libFuzzer's driver, run from our own `main`: SwiftPM names an executable's entry point after its target and
/// points `main` at it, so libFuzzer's `main` is not the one that runs.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("PredicateFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { start, size in fuzzPredicate(start, size) }
}
