import Foundation

extension ObjectContext {
    /// Fires a to-many's relationship fault: one statement for the members' IDs (`MappingSQL.memberIDs`), so the
    /// row cache is not filled and each destination touched later is its own fault, exactly as Core Data does. The
    /// members become a batched-fault group when batching is on.
    func fireRelationshipFault(_ object: ManagedObject, toMany index: Int) -> [ObjectID] {
        let toMany = object.mapping.toManys[index]
        guard let statement = MappingSQL.memberIDs(of: toMany, owner: object.objectID.primaryKey) else { return [] }
        let start = ContinuousClock.now
        var ids: [ObjectID] = []
        let destinations = coordinator.mapping(forEntityNumber: toMany.destinationNumber).entityNumbers
        do throws(ContextError) {
            try coordinator.reading(cause: .relationshipFault(entity: object.entityName, key: toMany.name), context: id,
                                    faultedObject: object.objectID) { runner in
                try runner.query(statement) { row in
                    let entity = toMany.destinationHasSubentities ? row.int64(0) : Int64(toMany.destinationNumber)
                    ids.append(ObjectID.stored(entity: entity, of: destinations, key: row.int64(1)))
                }
            }
        } catch {
            object.state.fail(error)
        }
        coordinator.events.emit(.relationshipFault(RelationshipFaultEvent(
            entity: object.entityName, objectID: object.objectID, key: toMany.name, rows: ids.count,
            duration: ContinuousClock.now - start)), context: id)
        noteSurfaced(.members(ids, relationship: toMany.name, of: object.mapping))
        return ids
    }
}
