import ChatFixture
import Foundation
import GraphStore
import Testing

/// `fixtures/Chat.xcdatamodeld`: the Xcode twin of `ChatModel.make()`.
private enum ChatTwin {
    /// Three levels above this file (`Tests/GraphStoreTests/ChatModelTwinTests.swift`).
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let bundle = packageRoot.appendingPathComponent("fixtures/Chat.xcdatamodeld")
    static let contents = bundle.appendingPathComponent("Chat.xcdatamodel/contents")

    static func load() throws -> ObjectModel { try XcodeModelLoader.load(contentsOf: bundle) }
}

/// Where two models first part: the first entity (in entity-number order) whose declaration differs, and what in it
/// differs; nil when the models are equal.
private func firstDifference(xcode: ObjectModel, code: ObjectModel) -> String? {
    let xcodeNames = xcode.entities.map(\.name)
    let codeNames = code.entities.map(\.name)
    if xcodeNames != codeNames {
        return "entities differ: Xcode has \(xcodeNames), code has \(codeNames)"
    }
    for (mine, theirs) in zip(xcode.declarations.map(\.normalized), code.declarations.map(\.normalized)) where mine != theirs {
        return "entity '\(theirs.name)' differs: " + entityDifferences(xcode: mine, code: theirs).joined(separator: "; ")
    }
    return nil
}

/// What differs between two declarations of one entity (both normalized), one phrase each.
private func entityDifferences(xcode: EntityDescription, code: EntityDescription) -> [String] {
    var phrases: [String] = []
    if xcode.isAbstract != code.isAbstract {
        phrases.append("abstract: Xcode \(xcode.isAbstract), code \(code.isAbstract)")
    }
    if xcode.parent != code.parent {
        phrases.append("parent: Xcode \(xcode.parent ?? "none"), code \(code.parent ?? "none")")
    }
    phrases += propertyDifferences("attribute", xcode: xcode.attributes, code: code.attributes, name: \.name)
    phrases += propertyDifferences("relationship", xcode: xcode.relationships, code: code.relationships, name: \.name)
    phrases += propertyDifferences("fetch index", xcode: xcode.fetchIndexes, code: code.fetchIndexes, name: \.name)
    if xcode.uniquenessConstraints != code.uniquenessConstraints {
        phrases.append("uniqueness constraints: Xcode \(xcode.uniquenessConstraints), code \(code.uniquenessConstraints)")
    }
    return phrases
}

/// Properties present on one side only, or declared differently on the two sides.
private func propertyDifferences<Property: Equatable>(
    _ kind: String, xcode: [Property], code: [Property], name: (Property) -> String
) -> [String] {
    var phrases: [String] = []
    let names = Set(xcode.map(name)).union(code.map(name)).sorted()
    for property in names {
        switch (xcode.first { name($0) == property }, code.first { name($0) == property }) {
        case (nil, _?): phrases.append("\(kind) '\(property)' is only in code")
        case (_?, nil): phrases.append("\(kind) '\(property)' is only in the Xcode model")
        case (let mine?, let theirs?) where mine != theirs:
            phrases.append("\(kind) '\(property)': " + fieldDifferences(xcode: mine, code: theirs).joined(separator: ", "))
        default: break
        }
    }
    return phrases
}

/// The stored fields of two values of one type that differ, as `field Xcode … code …`.
private func fieldDifferences<Value>(xcode: Value, code: Value) -> [String] {
    let theirs = Dictionary(
        Mirror(reflecting: code).children.map { ($0.label ?? "", String(describing: $0.value)) },
        uniquingKeysWith: { first, _ in first })
    let phrases = Mirror(reflecting: xcode).children.compactMap { child -> String? in
        let label = child.label ?? ""
        let mine = String(describing: child.value)
        return mine == theirs[label] ? nil : "\(label) Xcode \(mine) code \(theirs[label] ?? "none")"
    }
    return phrases.isEmpty ? ["Xcode \(xcode), code \(code)"] : phrases
}

/// The first line where two scripts differ, with its number; nil when they are the same.
private func firstDifferingLine(xcode: String, code: String) -> String? {
    let mine = xcode.split(separator: "\n", omittingEmptySubsequences: false)
    let theirs = code.split(separator: "\n", omittingEmptySubsequences: false)
    for index in 0..<max(mine.count, theirs.count) {
        let left = index < mine.count ? String(mine[index]) : "<end>"
        let right = index < theirs.count ? String(theirs[index]) : "<end>"
        if left != right { return "line \(index + 1): Xcode model gives \(left), code gives \(right)" }
    }
    return nil
}

@Suite struct ChatModelTwinTests {
    @Test func xcodeTwinIsTheModelDeclaredInCode() throws {
        let xcode = try ChatTwin.load()
        let code = try ChatModel.make()
        #expect(xcode.entities.map(\.name) == code.entities.map(\.name))
        // Compared apart from the message so that a failure names the first differing entity, not both whole models.
        let isSameModel = xcode == code
        #expect(isSameModel, "\(firstDifference(xcode: xcode, code: code) ?? "the models differ")")
        // Warnings come in declaration order, which differs (Xcode sorts properties by name).
        #expect(Set(xcode.warnings) == Set(code.warnings))
    }

    @Test func xcodeTwinGivesTheSameStoreSchema() throws {
        let xcode = StoreSchema(model: try ChatTwin.load()).ddl
        let code = StoreSchema(model: try ChatModel.make()).ddl
        #expect(!code.isEmpty)
        let isSameDDL = xcode == code
        #expect(isSameDDL, "\(firstDifferingLine(xcode: xcode, code: code) ?? "the scripts differ")")
    }

    @Test func xcodeTwinHasTheSameModelIdentity() throws {
        let xcode = ModelIdentity(model: try ChatTwin.load())
        let code = ModelIdentity(model: try ChatModel.make())
        #expect(xcode.entityHashes.count == 10)
        let isSameIdentity = xcode == code
        #expect(isSameIdentity, "\(xcode.differences(fromRecorded: code).joined(separator: "; "))")
    }

    /// The file is laid out as Xcode saves it: entities, and each entity's attributes and relationships, by name.
    @Test func xcodeTwinIsWrittenInXcodeOrder() throws {
        let declarations = try XcodeModelLoader.declarations(
            fromXML: Data(contentsOf: ChatTwin.contents), file: ChatTwin.contents.path)
        let names = declarations.map(\.name)
        #expect(names == names.sorted())
        for entity in declarations {
            #expect(entity.attributes.map(\.name) == entity.attributes.map(\.name).sorted(), "entity '\(entity.name)'")
            #expect(entity.relationships.map(\.name) == entity.relationships.map(\.name).sorted(), "entity '\(entity.name)'")
        }
    }
}
