import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What an Xcode model file says of attributes that the store's layout does not need but a reader of values does:
/// the class a Transformable value holds (`customClassName`), its value transformer, and whether a Binary or
/// Transformable value may be kept in a file beside the store ("Allows External Storage").
///
/// ```swift
/// let details = ModelFileDetails.read(modelAt: URL(fileURLWithPath: "Photos.xcdatamodeld"))
/// details.attribute("image", of: ["Photo"])?.allowsExternalStorage   // true
/// ```
public struct ModelFileDetails: Sendable, Equatable {
    /// One attribute's details.
    public struct Attribute: Sendable, Equatable {
        /// The class of the value a Transformable holds, when the model names it.
        public var valueClassName: String?
        /// The transformer that turns the value into bytes, when the model names one.
        public var valueTransformerName: String?
        /// Core Data may keep the value in `.<store>_SUPPORT/_EXTERNAL_DATA/`, leaving a marker in the column.
        public var allowsExternalStorage: Bool

        public init(valueClassName: String? = nil, valueTransformerName: String? = nil, allowsExternalStorage: Bool = false) {
            self.valueClassName = valueClassName
            self.valueTransformerName = valueTransformerName
            self.allowsExternalStorage = allowsExternalStorage
        }
    }

    /// By "Entity.attribute", for the entity that declares the attribute.
    public var attributes: [String: Attribute]

    public init(attributes: [String: Attribute] = [:]) {
        self.attributes = attributes
    }

    /// The details of `name` as declared on the first of `lineage` (an entity, then its parent, up to its root)
    /// that declares it.
    public func attribute(_ name: String, of lineage: [String]) -> Attribute? {
        for entity in lineage {
            if let found = attributes["\(entity).\(name)"] { return found }
        }
        return nil
    }

    /// The details in the model at `url` (a `.xcdatamodeld` or `.xcdatamodel` folder or a `contents` file).
    /// `XcodeModelLoader` has read the same file already; should it have become unreadable since, the values are
    /// shown without these details (no class names, no external files), which is all they add.
    public static func read(modelAt url: URL) -> ModelFileDetails {
        guard let contents = contentsFile(of: url), let data = FileManager.default.contents(atPath: contents.path) else {
            return ModelFileDetails()
        }
        return parse(data)
    }

    /// The details in a model's XML.
    public static func parse(_ data: Data) -> ModelFileDetails {
        let reader = DetailsReader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        _ = parser.parse()
        return ModelFileDetails(attributes: reader.found)
    }

    /// The `contents` file a model path leads to: the file itself, a version folder's `contents`, or for a
    /// versioned model the current version's (named by `.xccurrentversion`, or the only version).
    private static func contentsFile(of url: URL) -> URL? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else { return url }
        guard url.pathExtension == "xcdatamodeld" else { return url.appendingPathComponent("contents") }
        let marker = url.appendingPathComponent(".xccurrentversion")
        if let data = FileManager.default.contents(atPath: marker.path),
           let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any],
           let name = plist["_XCCurrentVersionName"] as? String, !name.contains("/") {
            return url.appendingPathComponent(name).appendingPathComponent("contents")
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.filter { $0.hasSuffix(".xcdatamodel") } ?? []
        guard versions.count == 1, let only = versions.first else { return nil }
        return url.appendingPathComponent(only).appendingPathComponent("contents")
    }
}

/// Collects `<attribute>` elements' details inside `<entity>` elements; everything else is passed over.
private final class DetailsReader: NSObject, XMLParserDelegate {
    var found: [String: ModelFileDetails.Attribute] = [:]
    private var entity: String?
    private var depth = 0
    private var entityDepth = 0

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
                attributes fields: [String: String] = [:]) {
        depth += 1
        if element == "entity", let name = fields["name"] {
            entity = name
            entityDepth = depth
        } else if element == "attribute", let entity, depth == entityDepth + 1, let name = fields["name"] {
            let detail = ModelFileDetails.Attribute(
                valueClassName: fields["customClassName"].flatMap { $0.isEmpty ? nil : $0 },
                valueTransformerName: fields["valueTransformerName"].flatMap { $0.isEmpty ? nil : $0 },
                allowsExternalStorage: fields["allowsExternalBinaryDataStorage"] == "YES")
            if detail != ModelFileDetails.Attribute() { found["\(entity).\(name)"] = detail }
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        if element == "entity", depth == entityDepth { entity = nil }
        depth -= 1
    }
}
