/// An object context confined to an actor: the way to keep a context for background work.
///
/// ```swift
/// let importer = ContextActor(coordinator: coordinator, name: "import")
/// let saved = try await importer.perform { context in
///     let chat = context.insert("Chat")
///     chat.setValue("Friday plans", forKey: "title")
///     try context.save()
///     return chat.objectID                     // IDs are Sendable; objects are not and stay inside
/// }
/// ```
/// Every use of the context runs on the actor, one `perform` at a time. Its objects cannot leave a `perform`
/// (they are not `Sendable`), which is Core Data's confinement rule enforced by the compiler; pass `ObjectID`s
/// between contexts instead.
public actor ContextActor {
    private let context: ObjectContext
    /// The context's identity in the coordinator's events.
    public nonisolated let contextID: ContextID

    public init(coordinator: PersistentStoreCoordinator, name: String? = nil) {
        let context = ObjectContext(coordinator: coordinator, name: name)
        self.contextID = context.id
        self.context = context
    }

    /// Runs `body` with the context, on the actor.
    public func perform<T: Sendable>(_ body: @Sendable (ObjectContext) throws -> T) rethrows -> T {
        try body(context)
    }
}

extension PersistentStoreCoordinator {
    /// Runs `body` with a new context of its own, off the caller's thread (as Core Data's `performBackgroundTask`
    /// does); the context is gone when `body` returns.
    public func performBackgroundTask<T: Sendable>(
        name: String? = nil, _ body: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> T {
        try await Task.detached { [self] in
            let context = ObjectContext(coordinator: self, name: name)
            return try body(context)
        }.value
    }
}
