import Foundation
import Synchronization

/// The typed API: subclass `ManagedObject` per entity and declare its keys with property wrappers.
///
/// ```swift
/// final class Student: ManagedObject {
///     @Stored("name") var name: String
///     @Stored("nickname") var nickname: String?
///     @ToOne("address") var address: Address?
///     @ToMany("subjects") var subjects: [Subject]
/// }
/// let coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: [Student.self, Address.self, Subject.self])
/// let student = context.insert(Student.self)
/// student.name = "Aiko"            // the same as setValue("Aiko", forKey: "name")
/// ```
/// The wrappers read and write through the same key-value paths, so faults, inverses and events behave the same.
extension ObjectContext {
    /// Inserts a new object of a registered subclass.
    public func insert<Object: ManagedObject>(_ type: Object.Type) -> Object {
        let inserted = coordinator.mapping(forClass: type).map(insert) ?? insert(type.entityName)
        guard let object = inserted as? Object else {
            preconditionFailure("\(type) is not registered with the coordinator for entity '\(type.entityName)'")
        }
        return object
    }

    /// Objects of a registered subclass's entity, as `fetch(_:where:)` returns them.
    public func fetch<Object: ManagedObject>(_ type: Object.Type, where conditions: [(key: String, value: AttributeValue)] = [],
                                             returnsObjectsAsFaults: Bool = true) throws(ContextError) -> [Object] {
        try fetch(type.entityName, where: conditions, returnsObjectsAsFaults: returnsObjectsAsFaults).compactMap { $0 as? Object }
    }
}

/// A Swift type an attribute's value converts to and from.
public protocol AttributeConvertible {
    init(attributeValue: AttributeValue)
    var attributeValue: AttributeValue { get }
}

extension String: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .string(let value) = attributeValue { self = value } else { self = "" }
    }
    public var attributeValue: AttributeValue { .string(self) }
}

extension Int: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .integer(let value) = attributeValue { self = Int(value) } else { self = 0 }
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int64: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .integer(let value) = attributeValue { self = value } else { self = 0 }
    }
    public var attributeValue: AttributeValue { .integer(self) }
}

extension Int32: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .integer(let value) = attributeValue { self = Int32(truncatingIfNeeded: value) } else { self = 0 }
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int16: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .integer(let value) = attributeValue { self = Int16(truncatingIfNeeded: value) } else { self = 0 }
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Double: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        switch attributeValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: self = 0
        }
    }
    public var attributeValue: AttributeValue { .double(self) }
}

extension Bool: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        switch attributeValue {
        case .boolean(let value): self = value
        case .integer(let value): self = value != 0
        default: self = false
        }
    }
    public var attributeValue: AttributeValue { .boolean(self) }
}

extension Date: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .date(let value) = attributeValue { self = value } else { self = Date(timeIntervalSinceReferenceDate: 0) }
    }
    public var attributeValue: AttributeValue { .date(self) }
}

extension Data: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .data(let value) = attributeValue { self = value } else { self = Data() }
    }
    public var attributeValue: AttributeValue { .data(self) }
}

extension UUID: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .uuid(let value) = attributeValue { self = value } else { self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    }
    public var attributeValue: AttributeValue { .uuid(self) }
}

extension URL: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .uri(let value) = attributeValue { self = value } else { self = URL(fileURLWithPath: "/") }
    }
    public var attributeValue: AttributeValue { .uri(self) }
}

extension Decimal: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        if case .decimal(let value) = attributeValue { self = value } else { self = 0 }
    }
    public var attributeValue: AttributeValue { .decimal(self) }
}

extension Optional: AttributeConvertible where Wrapped: AttributeConvertible {
    public init(attributeValue: AttributeValue) {
        self = attributeValue.isNull ? nil : Wrapped(attributeValue: attributeValue)
    }
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
}

/// The key a property wrapper names, in one word: where its text lies among the program's constants. Every object
/// stores its class's wrappers, so a word here instead of a `String`'s two is paid back on every object made (a
/// message has fifteen).
///
/// Inlinable, with the wrappers' initializers: every object made runs one per wrapper of its class, and a call into
/// this module for each (generic, unspecialized) cost about as much as the rest of making the object.
@usableFromInline
struct PropertyKey: @unchecked Sendable {
    /// The key's UTF-8 code units, NUL-terminated, in memory that lives as long as the program.
    @usableFromInline let start: UnsafePointer<UInt8>

    @inlinable init(_ key: StaticString) {
        start = key.hasPointerRepresentation ? key.utf8Start : Self.interned(key.unicodeScalar)
    }

    var string: String { String(cString: start) }

    /// A key given as one Unicode scalar (a `StaticString` made from a scalar literal holds no text to point at):
    /// its text, made once per scalar and kept.
    @usableFromInline static func interned(_ scalar: Unicode.Scalar) -> UnsafePointer<UInt8> {
        scalarKeys.withLock { keys in
            if let start = keys[scalar] { return start }
            let bytes = Array(String(scalar).utf8) + [0]
            let start = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
            start.initialize(from: bytes, count: bytes.count)
            keys[scalar] = UnsafePointer(start)
            return UnsafePointer(start)
        }
    }

    private static let scalarKeys = Mutex<[Unicode.Scalar: UnsafePointer<UInt8>]>([:])
}

/// A stored or transient attribute of a `ManagedObject` subclass: `@Stored("name") var name: String`.
@propertyWrapper
public struct Stored<Value: AttributeConvertible> {
    @usableFromInline let name: PropertyKey

    @inlinable public init(_ key: StaticString) { name = PropertyKey(key) }

    /// The key the property reads and writes.
    public var key: String { name.string }

    @available(*, unavailable, message: "@Stored works only on properties of ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Inlinable, so that in a subclass's accessor the storage key path is a literal the compiler reads through
    /// directly: no key path is made at run time (that cost more than the rest of a read served from memory).
    @inlinable public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get { Value(attributeValue: object.storedValue(wrapper: object[keyPath: storageKeyPath].name)) }
        set { object.setAttributeValue(newValue.attributeValue, object.resolve(wrapper: object[keyPath: storageKeyPath].name)) }
    }
}

/// A to-one relationship of a `ManagedObject` subclass: `@ToOne("address") var address: Address?`.
@propertyWrapper
public struct ToOne<Destination: ManagedObject> {
    @usableFromInline let name: PropertyKey

    @inlinable public init(_ key: StaticString) { name = PropertyKey(key) }

    /// The key the property reads and writes.
    public var key: String { name.string }

    @available(*, unavailable, message: "@ToOne works only on properties of ManagedObject subclasses")
    public var wrappedValue: Destination? {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Inlinable, as `Stored`'s is.
    @inlinable public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Destination?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Destination? {
        get { object.toOneObject(wrapper: object[keyPath: storageKeyPath].name) as? Destination }
        set { object.setObject(newValue, object.resolve(wrapper: object[keyPath: storageKeyPath].name)) }
    }
}

/// A to-many relationship of a `ManagedObject` subclass: `@ToMany("subjects") var subjects: [Subject]`.
/// Reading fires the relationship fault; assigning replaces the contents (use `add(_:toKey:)` to append without
/// firing it).
@propertyWrapper
public struct ToMany<Destination: ManagedObject> {
    @usableFromInline let name: PropertyKey

    @inlinable public init(_ key: StaticString) { name = PropertyKey(key) }

    /// The key the property reads and writes.
    public var key: String { name.string }

    @available(*, unavailable, message: "@ToMany works only on properties of ManagedObject subclasses")
    public var wrappedValue: [Destination] {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Inlinable, as `Stored`'s is.
    @inlinable public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, [Destination]>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> [Destination] {
        get { object.objects(object.resolve(wrapper: object[keyPath: storageKeyPath].name)).compactMap { $0 as? Destination } }
        set { object.setObjects(newValue, object.resolve(wrapper: object[keyPath: storageKeyPath].name)) }
    }
}
