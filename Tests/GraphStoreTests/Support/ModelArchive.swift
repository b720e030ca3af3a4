import CZlib
import Foundation

/// Model caches made in the tests: keyed archives written by Foundation's own `NSKeyedArchiver`, under the class
/// names Core Data writes (`NSEntityDescription`…), with the keys real stores hold, compressed with raw DEFLATE as
/// Core Data compresses them. For the shapes no store of the corpus has (an ordered to-many, flags kept only in
/// `_P`, every attribute type).
///
///     let title = ModelArchive.attribute("title", type: 700)
///     let cache = ModelArchive.cache([ModelArchive.entity("Book", properties: [title])])
///     let stored = try StoredModel.decode(cache)
enum ModelArchive {
    typealias Thing = ArchivedThing
    typealias Model = ArchivedModel
    typealias Entity = ArchivedEntity
    typealias Attribute = ArchivedAttribute
    typealias Relationship = ArchivedRelationship
    typealias FetchIndex = ArchivedFetchIndex
    typealias FetchIndexElement = ArchivedFetchIndexElement

    /// An attribute of Core Data's type code (700 String…). `flagsOnly` keeps optionality in `_P` alone, as some
    /// archives do.
    static func attribute(_ name: String, type: Int, optional: Bool = true, flagsOnly: Bool = false, defaultValue: Any? = nil) -> Attribute {
        var fields: [(String, Any)] = [("NSPropertyName", name), ("NSAttributeType", type), ("_P", optional ? 0xF3 : 0xF1)]
        if optional && !flagsOnly { fields.append(("NSIsOptional", true)) }
        if let defaultValue { fields.append(("NSDefaultValue", defaultValue)) }
        return Attribute(fields)
    }

    /// A relationship; `maxCount` 1 is a to-one. `orderedInFlagsOnly` sets the ordered bit of `_P` without the key.
    static func relationship(
        _ name: String, to destination: String, inverse: String?, maxCount: Int, minCount: Int = 0, deleteRule: Int = 1,
        ordered: Bool = false, orderedInFlagsOnly: Bool = false
    ) -> Relationship {
        var flags = 0xF3
        if ordered || orderedInFlagsOnly { flags |= 0x400 }
        var fields: [(String, Any)] = [
            ("NSPropertyName", name), ("_NSDestinationEntityName", destination), ("NSMaxCount", maxCount),
            ("NSMinCount", minCount), ("NSDeleteRule", deleteRule), ("NSIsOptional", true), ("_P", flags),
        ]
        if let inverse { fields.append(("_NSInverseRelationshipName", inverse)) }
        if ordered { fields.append(("NSIsOrdered", true)) }
        return Relationship(fields)
    }

    /// An entity; a sub-entity's archive repeats its parent's properties, as Core Data's does.
    static func entity(_ name: String, abstract: Bool = false, parent: Entity? = nil, properties: [Thing],
                       fetchIndexes: [FetchIndex] = [], unique: [[String]] = []) -> Entity {
        let own = properties.map { (Self.propertyName(of: $0), $0) }
        let all = (parent?.properties ?? []) + own
        var fields: [(String, Any)] = [
            ("NSEntityName", name),
            ("NSProperties", NSDictionary(objects: all.map(\.1), forKeys: all.map { NSString(string: $0.0) })),
        ]
        if abstract { fields.append(("NSIsAbstract", true)) }
        if let parent { fields.append(("NSSuperentity", parent)) }
        if !fetchIndexes.isEmpty { fields.append(("NSFetchIndexDescriptions", NSArray(array: fetchIndexes))) }
        if !unique.isEmpty {
            fields.append(("NSUniqueTuples", NSArray(array: unique.map { NSArray(array: $0.map { NSString(string: $0) }) })))
        }
        let entity = Entity(fields)
        entity.properties = all
        return entity
    }

    static func fetchIndex(_ name: String, _ properties: [String]) -> FetchIndex {
        let elements = properties.map { property in
            FetchIndexElement([("NSPropertyName", property), ("NSFetchIndexElementType", 0), ("NSAscending", true)])
        }
        return FetchIndex([("NSIndexName", name), ("NSIndexElements", NSArray(array: elements))])
    }

    private static func propertyName(of property: Thing) -> String {
        property.fields.first { $0.0 == "NSPropertyName" }?.1 as? String ?? ""
    }

    /// The keyed archive of a model of `entities`, uncompressed.
    static func archive(_ entities: [Entity]) throws -> Data {
        let names = entities.map { name in name.fields.first { $0.0 == "NSEntityName" }?.1 as? String ?? "" }
        let model = Model([("NSEntities", NSDictionary(objects: entities, forKeys: names.map { NSString(string: $0) }))])
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(model, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        // Foundation here ignores `setClassName(_:for:)`, so the class names are put right in the property list.
        let classNames: [String: String] = [
            "ArchivedModel": "NSManagedObjectModel", "ArchivedEntity": "NSEntityDescription",
            "ArchivedAttribute": "NSAttributeDescription", "ArchivedRelationship": "NSRelationshipDescription",
            "ArchivedFetchIndex": "NSFetchIndexDescription", "ArchivedFetchIndexElement": "NSFetchIndexElementDescription",
        ]
        guard var top = try PropertyListSerialization.propertyList(from: archiver.encodedData, format: nil) as? [String: Any],
              var objects = top["$objects"] as? [Any] else { throw Failure() }
        for (position, object) in objects.enumerated() {
            guard var info = object as? [String: Any], let written = info["$classname"] as? String,
                  let name = classNames[String(written.split(separator: ".").last ?? "")] else { continue }
            info["$classname"] = name
            info["$classes"] = [name, "NSObject"]
            objects[position] = info
        }
        top["$objects"] = objects
        return try PropertyListSerialization.data(fromPropertyList: top, format: .binary, options: 0)
    }

    /// What a store's `Z_MODELCACHE` holds for a model of `entities`: its archive, raw DEFLATE.
    static func cache(_ entities: [Entity]) throws -> Data {
        try deflate(archive(entities))
    }

    /// Raw DEFLATE (no header), as Core Data writes the cache.
    static func deflate(_ data: Data) throws -> Data {
        var stream = z_stream()
        guard faultline_deflateInit2(&stream, 6, -15) == Z_OK else { throw Failure() }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 64)
        let status = input.withUnsafeMutableBufferPointer { inputBytes in
            output.withUnsafeMutableBufferPointer { outputBytes in
                stream.next_in = inputBytes.baseAddress
                stream.avail_in = uInt(inputBytes.count)
                stream.next_out = outputBytes.baseAddress
                stream.avail_out = uInt(outputBytes.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure() }
        return Data(output[0..<Int(stream.total_out)])
    }

    struct Failure: Error {}
}

// Foundation's archiver names classes by their top-level names, so the archived objects' classes are top-level.

/// One archived object: its fields, encoded in order, as Core Data encodes them (flags as booleans, counts as
/// integers, names as strings, references as objects).
class ArchivedThing: NSObject, NSCoding {
    var fields: [(String, Any)]

    init(_ fields: [(String, Any)]) {
        self.fields = fields
    }

    func encode(with coder: NSCoder) {
        for (key, value) in fields {
            switch value {
            case let flag as Bool: coder.encode(flag, forKey: key)
            case let number as Int: coder.encode(number, forKey: key)
            case let text as String: coder.encode(NSString(string: text), forKey: key)
            case let object as NSObject: coder.encode(object, forKey: key)
            default: preconditionFailure("ModelArchive cannot encode \(type(of: value)) for \(key)")
            }
        }
    }

    required init?(coder: NSCoder) { nil }
}

final class ArchivedModel: ArchivedThing {}
final class ArchivedEntity: ArchivedThing {
    /// The properties by name, for sub-entities that repeat them.
    var properties: [(String, ArchivedThing)] = []
}
final class ArchivedAttribute: ArchivedThing {}
final class ArchivedRelationship: ArchivedThing {}
final class ArchivedFetchIndex: ArchivedThing {}
final class ArchivedFetchIndexElement: ArchivedThing {}
