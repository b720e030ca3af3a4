/// Why a predicate could not be parsed, compiled or evaluated.
///
/// Parse errors carry the format string and the 0-based character offset of the problem:
/// `position 8: expected a value after '==', found end of input`. Errors found against a model name the entity and
/// the key: `Message has no key 'sendr'`.
public struct PredicateError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The format string does not follow the grammar.
        case syntax
        /// A format argument is missing, extra, or of the wrong kind for its specifier.
        case argument
        /// A key path names a key the entity does not have.
        case unknownKey
        /// A to-many key path used where a single value is needed (no `ANY`/`ALL`/`NONE` or `@count`).
        case toManyWithoutQuantifier
        /// A value cannot be compared with the key it is compared with.
        case typeMismatch
        /// A `$VARIABLE` was never substituted.
        case unboundVariable
        /// Valid syntax that this implementation does not support.
        case unsupported
    }

    public var kind: Kind
    /// The format string, for errors found while parsing one.
    public var format: String?
    /// The 0-based character offset in `format` where the problem was found.
    public var position: Int?
    /// What went wrong, e.g. `expected a value after '==', found end of input`.
    public var message: String

    public init(_ kind: Kind, _ message: String, format: String? = nil, position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.format = format
        self.position = position
    }

    public var description: String {
        if let position { return "position \(position): \(message)" }
        return message
    }
}
