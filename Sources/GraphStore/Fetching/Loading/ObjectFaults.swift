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
    ///
    /// A cached row serves a fault when it is whole, or when it holds the property read and the object held
    /// nothing yet (a partial row then, as fetched). A partial object's fault (a *partial fault*) wants the whole
    /// row: from the cache when it is there, else one statement by key, never its batch's siblings, which are not
    /// faults.
    func fulfillFault(_ object: ManagedObject, trigger: FaultTrigger) {
        finishFault(object, trigger: trigger, after: serveFaultFromCache(object, trigger: trigger))
    }

    /// How far `serveFaultFromCache` took a fault.
    enum CachedFault {
        /// Served by the row cache and counted, with no observer to tell: the fault is done.
        case done
        /// Served by the row cache and counted; its event is for these observers.
        case served(observers: [Registration], isPartial: Bool)
        /// The row cache could not serve it.
        case missed
    }

    /// The row cache's part of a fault: a lookup in memory, loaded and counted on a hit. It runs no caller code (no
    /// observer, no SQL), so an object calls it on its context unretained (`ManagedObject.fulfill`), saving the
    /// retain and release around a call that is over in a few hundred instructions. Not timed: two readings of the
    /// clock would cost a fifth of it.
    func serveFaultFromCache(_ object: ManagedObject, trigger: FaultTrigger) -> CachedFault {
        let objectID = object.objectID
        let isPartial = object.state.isPartial
        if !untouchedPrefetches.isEmpty { untouchedPrefetches.remove(objectID) }
        let mapping = object.mapping
        guard let cached = rowCacheReference._withUnsafeGuaranteedRef({ $0.snapshot(for: objectID) }),
              cached.isComplete || (!isPartial && cached.holds(trigger, of: mapping)) else { return .missed }
        object.state.load(consume cached)
        let observers = eventsReference._withUnsafeGuaranteedRef {
            $0.countObjectFault(of: objectID, mapping: mapping, hit: true, partial: isPartial)
        }
        return observers.isEmpty ? .done : .served(observers: observers, isPartial: isPartial)
    }

    /// The rest of a fault after `serveFaultFromCache`: a hit's event for its observers, or a miss's SQL, whose
    /// statements observers see too. Both run caller code, which may let go of the context: the caller holds it.
    func finishFault(_ object: ManagedObject, trigger: FaultTrigger, after cached: CachedFault) {
        let objectID = object.objectID
        let mapping = object.mapping
        let events = coordinator.events
        switch cached {
        case .done:
            return
        case .served(let observers, let isPartial):
            return deliverFault(of: object, trigger: trigger, hit: true, partial: isPartial, duration: nil, to: observers)
        case .missed:
            break
        }
        let isPartial = object.state.isPartial
        // A miss is timed, for observers only (the counters do not keep a fault's time). (Nanoseconds, not an
        // optional `ContinuousClock.Instant`, whose copies go through the runtime's generic value witnesses.)
        let timed = events.hasObservers
        let start = timed ? Self.monotonicNanoseconds() : 0
        let cause = StatementCause.objectFault(entity: mapping.name, key: trigger.description)
        do throws(ContextError) {
            let snapshot = if !isPartial, let group = batchedFaults.group(of: objectID) {
                try fulfillFaultBatch(for: objectID, in: group, cause: cause)
            } else {
                try coordinator.fetchSnapshot(objectID, cause: cause, context: id)
            }
            if let snapshot { object.state.load(snapshot) } else { object.state.fail(.objectNotFound(uri: coordinator.uri(for: objectID))) }
        } catch {
            object.state.fail(error)
        }
        // Counted first; the event (two strings and a duration) is built only for observers, if any.
        let observers = events.countObjectFault(of: objectID, mapping: mapping, hit: false, partial: isPartial)
        guard !observers.isEmpty else { return }
        let duration: Duration? = timed ? .nanoseconds(Int64(clamping: Self.monotonicNanoseconds() &- start)) : nil
        deliverFault(of: object, trigger: trigger, hit: false, partial: isPartial, duration: duration, to: observers)
    }

    /// Builds a fault's event and hands it to the observers its counting returned.
    private func deliverFault(of object: ManagedObject, trigger: FaultTrigger, hit: Bool, partial: Bool, duration: Duration?,
                              to observers: [Registration]) {
        coordinator.events.deliver(.objectFault(ObjectFaultEvent(entity: object.mapping.name, objectID: object.objectID, key: trigger.description,
                                                                 isCacheHit: hit, isPartial: partial, duration: duration)),
                                   context: id, to: observers)
    }

    /// The monotonic clock, in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(truncatingIfNeeded: time.tv_sec) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: time.tv_nsec)
    }
}

extension RowSnapshot {
    /// Whether the row holds what `trigger` reads: the property it names; anything else needs the whole row.
    func holds(_ trigger: FaultTrigger, of mapping: EntityMapping) -> Bool {
        guard case .key(let key) = trigger, let slot = mapping.slot(forKey: key) else { return isComplete }
        return holds(slot)
    }
}
