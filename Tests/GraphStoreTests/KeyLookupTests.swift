import Foundation
import Testing
@testable import GraphStore

/// `EntityMapping.slot(forKey:)`, which every read or write by name goes through: a key is found whatever storage
/// its text is in (the model's own literal, a copy built at run time, text longer than a string keeps inline), keys
/// whose bits share a bucket are told apart, and a key the entity lacks is not found.
@Suite struct KeyLookupTests {
    /// Names of every length up to well past the fifteen bytes kept inline, and near-twins.
    private static let names = (0..<22).map { index in String(repeating: "k", count: index + 1) + "\(index)" }
        + ["name", "names", "naiveName"]

    private static func mapping(_ names: [String]) throws -> (EntityMapping, URL) {
        let model = try ObjectModel {
            EntityDescription("Wide") {
                for name in names { Attribute(name, .string) }
            }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let coordinator = try PersistentStoreCoordinator(path: folder.appendingPathComponent("wide.sqlite").path, model: model)
        return (try #require(coordinator.mapping(forEntity: "Wide")), folder)
    }

    @Test(arguments: [Array(names.prefix(3)), Array(names.prefix(24)), names])
    func everyKeyIsFoundInAnyStorageAndNoOtherIs(_ names: [String]) throws {
        let (mapping, folder) = try Self.mapping(names)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (index, name) in names.enumerated() {
            let rebuilt = String(decoding: Array(name.utf8), as: UTF8.self)
            let joined = [String(name.prefix(1)), String(name.dropFirst())].joined()
            for key in [name, rebuilt, joined] {
                guard case .attribute(let found)? = mapping.slot(forKey: key) else {
                    Issue.record("'\(key)' was not found")
                    continue
                }
                #expect(mapping.attributes[found].name == names[index])
            }
        }
        for missing in ["", "k", "kk0", "name ", "Name", "naiveNam", String(repeating: "k", count: 40)] where !names.contains(missing) {
            #expect(mapping.slot(forKey: missing) == nil, "'\(missing)' is not a key")
        }
    }
}
