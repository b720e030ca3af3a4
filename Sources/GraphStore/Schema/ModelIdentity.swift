import Foundation

/// What a store records about the model it was made for, in `Z_METADATA.Z_PLIST` as Core Data does:
/// a version hash per entity, so a store opened with another model is refused with the entities that differ.
///
/// A hash covers what decides the layout and meaning of rows: names, types, optionality, transience, derivations,
/// destinations, inverses, cardinality and order. Defaults, validation values and delete rules do not change the
/// store and so are left out, as Core Data leaves them out of its version hashes.
public struct ModelIdentity: Equatable, Sendable {
    /// Entity name → 8-byte hash (FNV-1a 64 of a canonical description: an identity check, not a security measure).
    public var entityHashes: [String: Data]

    /// Marks metadata written by Faultline (Core Data's own stores lack it).
    public static let formatKey = "FaultlineStoreFormat"
    public static let formatVersion = 1

    public init(model: ObjectModel) {
        var hashes: [String: Data] = [:]
        for entity in model.entities {
            hashes[entity.name] = Self.hash(Self.canonicalText(of: entity))
        }
        self.entityHashes = hashes
    }

    init(entityHashes: [String: Data]) {
        self.entityHashes = entityHashes
    }

    /// Differences between the identity a store records and this one, one phrase per entity.
    public func differences(fromRecorded recorded: ModelIdentity) -> [String] {
        let names = Set(entityHashes.keys).union(recorded.entityHashes.keys).sorted()
        return names.compactMap { name in
            switch (recorded.entityHashes[name], entityHashes[name]) {
            case (nil, _?): "entity '\(name)' is in the model but not in the store"
            case (_?, nil): "entity '\(name)' is in the store but not in the model"
            case (let stored?, let expected?) where stored != expected: "entity '\(name)' differs"
            default: nil
            }
        }
    }

    /// The binary property list stored in `Z_METADATA.Z_PLIST`. Written through `PropertyListEncoder`, whose output
    /// is the same bytes on every run (serializing a `[String: Any]` follows the dictionary's per-process order), so
    /// two stores made alike are identical files.
    public func metadataPropertyList() -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try! encoder.encode(Metadata(hashes: entityHashes))  // cannot fail: strings, integers, arrays and data only
    }

    private struct Metadata: Encodable {
        let hashes: [String: Data]

        enum Keys: String, CodingKey {
            case storeType = "NSStoreType"
            case hashes = "NSStoreModelVersionHashes"
            case hashesVersion = "NSStoreModelVersionHashesVersion"
            case identifiers = "NSStoreModelVersionIdentifiers"
            case format = "FaultlineStoreFormat"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("SQLite", forKey: .storeType)
            try container.encode(hashes, forKey: .hashes)
            try container.encode(3, forKey: .hashesVersion)
            try container.encode([""], forKey: .identifiers)
            try container.encode(ModelIdentity.formatVersion, forKey: .format)
        }
    }

    /// Reads the metadata property list; `nil` identity when the store was not written by Faultline.
    public static func read(metadataPropertyList data: Data) -> (isPropertyList: Bool, identity: ModelIdentity?) {
        guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            return (false, nil)
        }
        guard plist[formatKey] != nil, let hashes = plist["NSStoreModelVersionHashes"] as? [String: Data] else {
            return (true, nil)
        }
        return (true, ModelIdentity(entityHashes: hashes))
    }

    static func canonicalText(of entity: Entity) -> String {
        func flag(_ value: Bool) -> String { value ? "1" : "0" }
        var parts = ["entity \(entity.name) abstract=\(flag(entity.isAbstract)) parent=\(entity.parentName ?? "")"]
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
            parts.append("attribute \(attribute.name) \(attribute.type.rawValue) optional=\(flag(attribute.isOptional)) transient=\(flag(attribute.isTransient)) derivation=\(attribute.derivation ?? "")")
        }
        for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
            parts.append("relationship \(relationship.name) \(relationship.destination) inverse=\(relationship.inverse ?? "") toMany=\(flag(relationship.isToMany)) ordered=\(flag(relationship.isOrdered)) transient=\(flag(relationship.isTransient))")
        }
        return parts.joined(separator: "\n")
    }

    static func hash(_ text: String) -> Data {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
        return withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }
}
