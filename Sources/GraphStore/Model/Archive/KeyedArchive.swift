import Foundation

/// A keyed archive (`NSKeyedArchiver`'s binary property list) read as a graph of plain values.
///
/// Foundation here parses the property list, but the classes the archive names (`NSEntityDescription`…) exist only on
/// Apple's systems, so nothing is unarchived: the reader walks `$objects` by UID and hands out each object's fields.
/// Every accessor checks the shape of what it reads and answers nil for anything else; the model reader turns a
/// nil where a value must be into an error naming what was missing.
struct KeyedArchive {
    /// One archived object: its class name (from its `$class`) and its fields, UIDs still unresolved.
    struct Object {
        let uid: Int
        let className: String
        let fields: [String: Any]
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    private let objects: [Any]
    /// The UID of `$top.root`.
    let root: Int

    init(propertyList data: Data) throws(Problem) {
        if let problem = BinaryPropertyListCheck.problem(in: data) { throw Problem(description: "is not a sound property list (\(problem))") }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw Problem(description: "is not a property list")
        }
        guard let top = plist as? [String: Any] else { throw Problem(description: "is not a keyed archive (no top-level dictionary)") }
        guard (top["$archiver"] as? String) == "NSKeyedArchiver" else {
            throw Problem(description: "is not a keyed archive (its '$archiver' is not NSKeyedArchiver)")
        }
        guard let objects = top["$objects"] as? [Any], !objects.isEmpty else {
            throw Problem(description: "is not a keyed archive (no '$objects')")
        }
        guard let entries = top["$top"] as? [String: Any], let root = entries["root"].flatMap(Self.uid), objects.indices.contains(root) else {
            throw Problem(description: "is not a keyed archive (no '$top' root)")
        }
        self.objects = objects
        self.root = root
    }

    // MARK: UIDs

    /// The index a UID value refers to, or nil when `value` is not a UID.
    ///
    /// Foundation here hands UIDs out as instances of a private class with no public accessor for their number;
    /// its one stored field, `value`, is read by reflection.
    static func uid(_ value: Any) -> Int? {
        guard String(describing: type(of: value)).contains("KeyedArchiverUID") else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            switch child.value {
            case let number as UInt32: return Int(number)
            case let number as Int: return number >= 0 ? number : nil
            case let number as UInt64: return number <= UInt64(Int.max) ? Int(number) : nil
            default: return nil
            }
        }
        return nil
    }

    /// The value a field holds: the object its UID points at (nil for `$null` or a UID out of range), or the value
    /// itself when it is stored inline (numbers and booleans are).
    func resolve(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let index = Self.uid(value) else { return value }
        guard objects.indices.contains(index) else { return nil }
        let target = objects[index]
        if let text = target as? String, text == "$null" { return nil }
        return target
    }

    /// The archived object at `uid`, or nil when it is not an object with a class.
    func object(at uid: Int) -> Object? {
        guard objects.indices.contains(uid), let fields = objects[uid] as? [String: Any] else { return nil }
        guard let classReference = fields["$class"], let classUID = Self.uid(classReference),
              objects.indices.contains(classUID), let classInfo = objects[classUID] as? [String: Any],
              let className = classInfo["$classname"] as? String else { return nil }
        return Object(uid: uid, className: className, fields: fields)
    }

    /// The object a field points at.
    func object(_ field: Any?) -> Object? {
        guard let field, let index = Self.uid(field) else { return nil }
        return object(at: index)
    }

    // MARK: Values

    /// A string: inline, or an archived `NSString`/`NSMutableString` (`NS.string`).
    func string(_ field: Any?) -> String? {
        switch resolve(field) {
        case let text as String: return text
        case let fields as [String: Any]: return fields["NS.string"] as? String
        default: return nil
        }
    }

    /// An integer stored inline (a number or a boolean).
    func integer(_ field: Any?) -> Int? {
        switch resolve(field) {
        case let number as Int: return number
        case let flag as Bool: return flag ? 1 : 0
        case let number as NSNumber: return Int(exactly: number.int64Value)
        default: return nil
        }
    }

    /// A boolean stored inline; absent reads as false, as `decodeBool(forKey:)` does.
    func flag(_ field: Any?) -> Bool {
        switch resolve(field) {
        case let flag as Bool: return flag
        case let number as Int: return number != 0
        case let number as NSNumber: return number.boolValue
        default: return false
        }
    }

    /// The elements of an archived `NSArray`/`NSSet` (and their mutable forms), resolved; nil when the field is not one.
    func array(_ field: Any?) -> [Any]? {
        guard let object = object(field), let elements = object.fields["NS.objects"] as? [Any] else { return nil }
        return elements.compactMap { resolve($0) }
    }

    /// The elements of an array field as objects (non-objects are dropped: callers compare counts when it matters).
    func objects(_ field: Any?) -> [Object]? {
        guard let object = object(field), let elements = object.fields["NS.objects"] as? [Any] else { return nil }
        return elements.compactMap { self.object($0) }
    }

    /// The entries of an archived dictionary, string keys to unresolved values: `NSDictionary` and
    /// `NSMutableDictionary` (`NS.keys`/`NS.objects`), and `NSKnownKeysDictionary1`, whose keys sit in its
    /// mapping strategy and whose empty slots hold a token. Nil when the field is none of these, or is malformed.
    func dictionary(_ field: Any?) -> [(key: String, value: Any)]? {
        guard let object = object(field) else { return nil }
        if let keys = object.fields["NS.keys"] as? [Any], let values = object.fields["NS.objects"] as? [Any] {
            guard keys.count == values.count else { return nil }
            var entries: [(key: String, value: Any)] = []
            for (key, value) in zip(keys, values) {
                guard let name = string(key) else { return nil }
                entries.append((name, value))
            }
            return entries
        }
        if object.className == "NSKnownKeysDictionary1" {
            guard let mapping = self.object(object.fields["searchMapping"]),
                  let keyObject = self.object(mapping.fields["keys"]), let keys = keyObject.fields["NS.objects"] as? [Any],
                  let valueObject = self.object(object.fields["values"]), let values = valueObject.fields["NS.objects"] as? [Any],
                  keys.count == values.count else { return nil }
            let emptyToken = string(object.fields["emptyToken"])
            var entries: [(key: String, value: Any)] = []
            for (key, value) in zip(keys, values) {
                guard let name = string(key) else { return nil }
                if let token = emptyToken, string(value) == token { continue }
                entries.append((name, value))
            }
            return entries
        }
        return nil
    }
}
