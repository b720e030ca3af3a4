import Foundation

/// What made an object's fault fire: reading one of its properties, or something that needs its row.
public enum FaultTrigger: Sendable, Equatable, CustomStringConvertible {
    /// A property read (`value(forKey:)`, a typed property, a to-one or to-many followed).
    case key(String)
    /// `existingObject(with:)`, which checks that the row exists.
    case existingObject
    /// `committedValues(forKeys:)` with no keys named.
    case committedValues
    /// A save writing the object's changes over the row it read.
    case save

    /// The name the fault's event carries: the key, or what needed the row.
    public var description: String {
        switch self {
        case .key(let key): key
        case .existingObject: "existingObject"
        case .committedValues: "committedValues"
        case .save: "save"
        }
    }
}

extension ObjectContext {
    /// Fills an object's fault, by the first loader that applies: the row cache (a hit, no SQL); the object's
    /// batched-fault group, whose unfired members are read with it in one statement; or its row alone, by primary
    /// key. A row that is gone leaves the object with `ContextError.objectNotFound`.
    func fulfillFault(_ object: ManagedObject, trigger: FaultTrigger) {
        let start = ContinuousClock.now
        let objectID = object.objectID
        if !untouchedPrefetches.isEmpty { untouchedPrefetches.remove(objectID) }
        let cached = coordinator.rowCache.snapshot(for: objectID)
        if let cached {
            object.state.load(cached)
        } else {
            let cause = StatementCause.objectFault(entity: object.entityName, key: trigger.description)
            do throws(ContextError) {
                let snapshot = if let group = batchedFaults.group(of: objectID) {
                    try fulfillFaultBatch(for: objectID, in: group, cause: cause)
                } else {
                    try coordinator.fetchSnapshot(objectID, cause: cause, context: id)
                }
                if let snapshot { object.state.load(snapshot) } else { object.state.fail(.objectNotFound(uri: coordinator.uri(for: objectID))) }
            } catch {
                object.state.fail(error)
            }
        }
        coordinator.events.emit(.objectFault(ObjectFaultEvent(
            entity: object.entityName, objectID: objectID, key: trigger.description, isCacheHit: cached != nil,
            duration: ContinuousClock.now - start)), context: id)
    }
}
