import GRDB

/// SQL functions Core Data's own stores call from their triggers, defined on every connection so that writing to
/// such a store works.
///
/// A store Core Data made keeps each derived attribute current with triggers that also call
/// `NSCoreDataDATriggerUpdatedAffectedObjectValue(table, entity, key, attribute, value)` (and, on the source row's
/// insert, `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`), through which Core Data learns which objects in
/// memory to refresh. The counting is the triggers' own SQL; the calls only notify. Here they do nothing: GraphStore
/// reads derived values after a save instead. Only these two are defined: a function of Core Data's whose result
/// mattered would fail loudly (`no such function`) rather than quietly answer NULL.
enum CoreDataFunctions {
    static let notifications = [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue",
        "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
    ].map { name in DatabaseFunction(name, argumentCount: nil, pure: false) { _ in nil } }

    static func install(on db: Database) {
        for function in notifications { db.add(function: function) }
    }
}
