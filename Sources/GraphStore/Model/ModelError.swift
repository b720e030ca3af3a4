/// Why a model could not be built: every problem found, each naming the entity and property it concerns.
public struct ModelError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The model file, when the model came from one.
    public var file: String?
    public var problems: [String]

    public init(file: String? = nil, problems: [String]) {
        self.file = file
        self.problems = problems
    }

    /// One line: the file (if any), then the problems separated by `; `.
    public var description: String {
        let text = problems.joined(separator: "; ")
        if let file { return "\(file): \(text)" }
        return text
    }
}

/// Something in a model that works but is probably a mistake, as Xcode's model editor would point out.
public struct ModelWarning: CustomStringConvertible, Hashable, Codable, Sendable {
    public var entity: String
    public var property: String?
    public var message: String

    public var description: String {
        if let property { return "\(entity).\(property): \(message)" }
        return "\(entity): \(message)"
    }
}
