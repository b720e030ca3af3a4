import GraphStore

/// Finding warnings in one action's events.
extension ActivityWarning {
    /// How many runs of the same fault statement make an N+1.
    public static let nPlusOneThreshold = 5

    /// The warnings one action's records call for: N+1 fault patterns (in the order their statements first ran),
    /// then to-many faults a derived count would have answered.
    ///
    /// ```swift
    /// ActivityWarning.detect(in: recorder.drain(), rootEntity: "Message", model: model)
    /// // [N+1: 6 faults of User one by one — prefetch sender]
    /// ```
    /// `rootEntity` is the entity the action listed; key paths to prefetch start there. Without it, a warning names
    /// the faulted entity only.
    public static func detect(in records: [GraphEventRecord], rootEntity: String?, model: ObjectModel) -> [ActivityWarning] {
        detect(in: records, scope: ActivityScope(rootEntity: rootEntity), model: model)
    }

    /// The warnings for records that one scope caused: named for its pane, with advice that names the key that
    /// helps when the scope says which settings apply.
    public static func detect(in records: [GraphEventRecord], scope: ActivityScope, model: ObjectModel) -> [ActivityWarning] {
        let evidence = ActionEvidence(records)
        return nPlusOneWarnings(evidence, scope: scope, model: model) + countWarnings(evidence, scope: scope, model: model)
    }

    /// "N+1" or "N+1 in messages": what a warning's first words say.
    private static func label(_ text: String, _ scope: ActivityScope) -> String {
        scope.pane.map { "\(text) in \($0)" } ?? text
    }

    /// What to do about faults one by one that prefetching `keyPath` would have read at once.
    private static func prefetchAdvice(_ keyPath: String, _ scope: ActivityScope) -> String {
        guard let levers = scope.levers else { return "prefetch \(keyPath)" }
        guard levers.prefetches(keyPath) else { return "prefetch \(keyPath) (not one of this pane's prefetches)" }
        if !levers.prefetchIsOn { return "press \(levers.prefetchKey) to prefetch \(keyPath)" }
        // The pane's fetch prefetches it: these objects came some other way than that fetch.
        return "\(keyPath) is prefetched (\(levers.prefetchLabel)), but these objects were not read by the pane's fetch"
    }

    /// How many prefetched objects left unread make an unused prefetch (when they are also more than half).
    public static let unusedPrefetchThreshold = 5

    /// The warnings for prefetches whose objects the action did not read: one per key path that left at least
    /// `unusedPrefetchThreshold` objects untouched, and more than half of what it brought (a batch a few rows
    /// taller than the screen is not worth a warning).
    ///
    /// ```swift
    /// ActivityWarning.unusedPrefetches([PrefetchUse(keyPath: "lastMessage", entity: "Message", prefetched: 100, untouched: 63)])
    /// // [unused prefetch of lastMessage: 63 of 100 Message unread — smaller batches?]
    /// ```
    public static func unusedPrefetches(_ uses: [PrefetchUse]) -> [ActivityWarning] {
        unusedPrefetches(uses, scopes: [])
    }

    /// The same, each warning named for the scope whose fetch prefetches its key path, with advice from its levers.
    /// With the browser's levers, a prefetch must also leave more objects unread than the smallest batch `b`
    /// offers: what one batch reads beyond a short screen is the price of batching, which no setting lowers.
    public static func unusedPrefetches(_ uses: [PrefetchUse], scopes: [ActivityScope]) -> [ActivityWarning] {
        uses.compactMap { use -> ActivityWarning? in
            guard use.untouched >= unusedPrefetchThreshold, use.untouched * 2 > use.prefetched else { return nil }
            let scope = scopes.first { $0.levers?.prefetches(use.keyPath) == true } ?? ActivityScope()
            if let levers = scope.levers, use.untouched <= levers.smallestBatchSize { return nil }
            let advice: String
            if let levers = scope.levers {
                if levers.batchSize == 0 {
                    advice = "press \(levers.batchKey) to batch the fetch"
                } else if levers.batchSize > levers.smallestBatchSize {
                    advice = "press \(levers.batchKey) for smaller batches (now \(ActivityFormat.count(levers.batchSize)))"
                } else {
                    advice = "press \(levers.prefetchKey) to stop prefetching"
                }
            } else {
                advice = "smaller batches?"
            }
            return ActivityWarning(kind: .unusedPrefetch, message: "unused prefetch of \(use.keyPath)" + (scope.pane.map { " in \($0)" } ?? "") + ": "
                + "\(ActivityFormat.count(use.untouched)) of \(ActivityFormat.count(use.prefetched)) \(use.entity) unread — \(advice)",
                pane: scope.pane)
        }
    }

    private static func nPlusOneWarnings(_ evidence: ActionEvidence, scope: ActivityScope, model: ObjectModel) -> [ActivityWarning] {
        var order: [String] = []
        var runs: [String: [StatementEvent]] = [:]
        for statement in evidence.statements {
            switch statement.cause {
            case .objectFault, .relationshipFault:
                if runs[statement.sql] == nil { order.append(statement.sql) }
                runs[statement.sql, default: []].append(statement)
            case .fetch, .prefetch, .save, .other:
                continue
            }
        }
        return order.compactMap { sql in
            guard let run = runs[sql], run.count >= nPlusOneThreshold else { return nil }
            // One SQL text is one kind of fault: the first statement tells which.
            switch run[0].cause {
            case .relationshipFault(let entity, let key):
                return relationshipNPlusOne(count: run.count, entity: entity, key: key, scope: scope, evidence: evidence, model: model)
            case .objectFault(let entity, _):
                // Faults that read several rows at once are batched already: what the warning would ask for.
                guard run.allSatisfy({ $0.rows <= 1 }) else { return nil }
                return objectNPlusOne(run, entity: entity, scope: scope, evidence: evidence, model: model)
            case .fetch, .prefetch, .save, .other:
                return nil
            }
        }
    }

    /// The warning for a run of object faults, the first of which faulted an `entity`.
    private static func objectNPlusOne(
        _ run: [StatementEvent], entity first: String, scope: ActivityScope, evidence: ActionEvidence, model: ObjectModel
    ) -> ActivityWarning {
        let entities = Set(run.compactMap { statement -> String? in
            if case .objectFault(let entity, _) = statement.cause { entity } else { nil }
        })
        // Sub-entities of one table share its fault statement: name their common root then.
        let entity = entities.count == 1 ? first : (model.entity(named: first).map { model.root(of: $0).name } ?? first)
        let advice = scope.rootEntity
            .flatMap { bestRoute(from: $0, to: entity, maxDepth: 2, evidence: evidence, model: model) }
            .map { prefetchAdvice($0.keyPath, scope) }
            ?? "prefetch the relationship that leads to \(entity)"
        return ActivityWarning(kind: .nPlusOne,
                               message: label("N+1", scope) + ": \(ActivityFormat.count(run.count)) faults of \(entity) one by one — \(advice)",
                               pane: scope.pane)
    }

    private static func relationshipNPlusOne(
        count: Int, entity: String, key: String, scope: ActivityScope, evidence: ActionEvidence, model: ObjectModel
    ) -> ActivityWarning {
        var keyPath = key
        if let rootEntity = scope.rootEntity, model.entity(named: rootEntity)?.includes(entity) != true,
           let route = bestRoute(from: rootEntity, to: entity, maxDepth: 1, evidence: evidence, model: model) {
            keyPath = route.keyPath + "." + key
        }
        let name = "\(declaringEntity(of: key, on: entity, model: model)).\(key)"
        return ActivityWarning(kind: .nPlusOne,
                               message: label("N+1", scope) + ": \(ActivityFormat.count(count)) faults of \(name) one by one — \(prefetchAdvice(keyPath, scope))",
                               pane: scope.pane)
    }

    private static func countWarnings(_ evidence: ActionEvidence, scope: ActivityScope, model: ObjectModel) -> [ActivityWarning] {
        var order: [String] = []
        var faults: [String: (count: Int, derived: String)] = [:]
        for fault in evidence.relationshipFaults {
            guard let entity = model.entity(named: fault.entity),
                  entity.relationship(named: fault.key)?.isToMany == true,
                  let derived = entity.attributes.first(where: { $0.parsedDerivation == .count(relationship: fault.key) })
            else { continue }
            let name = "\(declaringEntity(of: fault.key, on: fault.entity, model: model)).\(fault.key)"
            if faults[name] == nil { order.append(name) }
            faults[name, default: (count: 0, derived: derived.name)].count += 1
        }
        return order.compactMap { name in
            // Every name in `order` was counted in `faults` just above.
            guard let entry = faults[name] else { return nil }
            let (count, derived) = entry
            let advice = scope.levers.map { levers in
                levers.derivedCounts ? "\(derived) is derived, but this count did not read it" : "press \(levers.countsKey) to read \(derived) (derived count)"
            } ?? "use \(derived) (derived count)"
            return ActivityWarning(
                kind: .countFiredRelationship,
                message: "count of \(name)" + (scope.pane.map { " in \($0)" } ?? "")
                    + " fired the relationship (\(ActivityFormat.count(count, "fault"))) — \(advice)",
                pane: scope.pane)
        }
    }

    /// The route a prefetch most likely wants: one the action's events bear out, then the shortest, then the one
    /// with fewest to-many hops, then by name.
    private static func bestRoute(
        from root: String, to target: String, maxDepth: Int, evidence: ActionEvidence, model: ObjectModel
    ) -> RelationshipRoute? {
        func rank(_ route: RelationshipRoute) -> (Int, Int, Int) {
            (evidence.bearsOut(route, model: model) ? 0 : 1, route.hops.count, route.toManyCount)
        }
        return RelationshipRoute.routes(in: model, from: root, to: target, maxDepth: maxDepth).min { left, right in
            let (leftRank, rightRank) = (rank(left), rank(right))
            return leftRank != rightRank ? leftRank < rightRank : left.keyPath < right.keyPath
        }
    }

    /// The entity highest in `entity`'s lineage that declares `key`: `Chat` for `DirectChat.members`.
    private static func declaringEntity(of key: String, on entity: String, model: ObjectModel) -> String {
        guard let described = model.entity(named: entity) else { return entity }
        return model.lineage(of: described).last { $0.declaration.relationships.contains { $0.name == key } }?.name ?? entity
    }
}

/// What one action's events show about the path it took through the graph.
private struct ActionEvidence {
    var statements: [StatementEvent] = []
    var relationshipFaults: [RelationshipFaultEvent] = []
    /// Entities fetched or faulted.
    var touchedEntities: Set<String> = []
    /// Key paths prefetched, split at the dots.
    var prefetchedKeyPaths: [[String]] = []

    init(_ records: [GraphEventRecord]) {
        for record in records {
            switch record.event {
            case .statement(let statement):
                statements.append(statement)
                if case .prefetch(let keyPath) = statement.cause {
                    prefetchedKeyPaths.append(keyPath.split(separator: ".").map(String.init))
                }
            case .fetch(let fetch):
                touchedEntities.insert(fetch.entity)
            case .objectFault(let fault):
                touchedEntities.insert(fault.entity)
            case .relationshipFault(let fault):
                relationshipFaults.append(fault)
                touchedEntities.insert(fault.entity)
            case .save, .merge:
                continue
            }
        }
    }

    /// Whether the action could have walked `route`: each to-many on it was faulted (or prefetched) and each
    /// entity it passes through was fetched, faulted or prefetched. The last hop's destination needs no proof:
    /// the faults being explained are its.
    func bearsOut(_ route: RelationshipRoute, model: ObjectModel) -> Bool {
        for (index, hop) in route.hops.enumerated() {
            let keyPath = route.hops[...index].map(\.relationship.name)
            let prefetched = prefetchedKeyPaths.contains { $0.starts(with: keyPath) }
            if hop.relationship.isToMany && !prefetched {
                let source = model.entity(named: hop.source)
                let faulted = relationshipFaults.contains { $0.key == hop.relationship.name && source?.includes($0.entity) == true }
                if !faulted { return false }
            }
            if index < route.hops.count - 1 && !prefetched {
                let destination = model.entity(named: hop.relationship.destination)
                if !touchedEntities.contains(where: { destination?.includes($0) == true }) { return false }
            }
        }
        return true
    }
}
