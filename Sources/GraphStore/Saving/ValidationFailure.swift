/// One rule an object broke, found when a save validated its pending changes.
///
/// `key` is the attribute or relationship at fault, or for a uniqueness constraint its keys joined with ",";
/// `reason` is a short phrase that reads after the key ("is required", "must be at least 3").
public struct ValidationFailure: Sendable, Equatable, CustomStringConvertible {
    public var entity: String
    public var objectURI: String
    public var key: String
    public var reason: String

    public init(entity: String, objectURI: String, key: String, reason: String) {
        self.entity = entity
        self.objectURI = objectURI
        self.key = key
        self.reason = reason
    }

    /// `<object URI> <key> <reason>`, e.g. `x-coredata:///User/t3 name is required`.
    public var description: String { "\(objectURI) \(key) \(reason)" }
}
