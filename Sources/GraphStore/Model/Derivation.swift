/// What a derived attribute's `derivationExpression` computes, in the forms the store keeps current itself.
public enum Derivation: Hashable, Sendable {
    /// `relationship.@count`: how many objects a to-many holds.
    case count(relationship: String)
    /// `toOne.attribute`: a copy of an attribute of the object a to-one points at.
    case copy(relationship: String, attribute: String)

    /// Parses an expression such as `members.@count` or `sender.name`; nil when it has another form.
    public init?(expression: String) {
        let parts = expression.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        if parts[1] == "@count" {
            self = .count(relationship: parts[0])
        } else if !parts[1].hasPrefix("@") {
            self = .copy(relationship: parts[0], attribute: parts[1])
        } else {
            return nil
        }
    }

    public var relationship: String {
        switch self {
        case .count(let relationship), .copy(let relationship, _): relationship
        }
    }
}

extension AttributeDescription {
    /// The parsed derivation, when the attribute is derived and its expression has a supported form.
    public var parsedDerivation: Derivation? { derivation.flatMap(Derivation.init(expression:)) }
}
