import GraphStore

/// One step of the entity browser's path: a list of objects, or one object. The main pane shows the last step;
/// back goes to the one before.
enum PathLevel {
    case list(ListLevel)
    case object(ObjectLevel)
}

/// Where an objects list's objects come from.
enum ListSource {
    /// Every object of the entity (and of its sub-entities).
    case entity(Entity)
    /// The members of `owner`'s to-many `relationship`.
    case members(owner: ManagedObject, relationship: RelationshipDescription)
}

/// What an objects list is sorted by.
enum SortKey: Equatable {
    /// An ordered to-many's own order (read by its relationship fault).
    case relationshipOrder
    /// The key, `Z_PK`: the store's own order.
    case key
    case attribute(String)

    var label: String {
        switch self {
        case .relationshipOrder: "relationship order"
        case .key: "key"
        case .attribute(let name): name
        }
    }
}

/// An objects list: where its objects come from, how they are sorted, filtered and shown, and what was fetched.
final class ListLevel {
    let source: ListSource
    /// The entity listed (a to-many's destination).
    let entity: Entity
    var sort: SortKey
    var ascending = true
    /// The predicate text typed after `/` ("" for none), and its parse.
    var filter = ""
    var predicate: Predicate?
    /// The first key of `ListColumns.order` the columns start from (`v` moves it on).
    var columnOffset = 0
    /// Columns named by a script's `columns a,b`; nil for those from `columnOffset`.
    var chosenColumns: [String]?
    var objects = ListedObjects.fetched(.empty)
    /// What the objects were read with: a list shown again after the settings, the graph or the to-ones shown
    /// changed is read again.
    var stamp: ListStamp?
    var selected = 0
    var top = 0

    init(source: ListSource, entity: Entity, sort: SortKey) {
        self.source = source
        self.entity = entity
        self.sort = sort
    }
}

/// What a list was read with: the levers of its fetch, the browser's generation, and the to-ones it prefetched.
struct ListStamp: Equatable {
    var batchSize: Int
    var batchingMode: FetchRequest.BatchingMode
    var prefetch: BrowserSettings.Prefetch
    var generation: Int
    var prefetched: [String]
}

/// One object shown with its attributes and relationships.
final class ObjectLevel {
    let object: ManagedObject
    var selected = 0
    var top = 0
    /// To-many counts read in this generation, by relationship name.
    var counts: [String: Int] = [:]
    var countsGeneration = -1

    init(object: ManagedObject) {
        self.object = object
    }
}

/// The objects of a list as they are read: a fetch's result, or an ordered to-many's members in its order.
enum ListedObjects {
    case fetched(FetchedObjects)
    case ordered(OrderedMembers)

    var count: Int {
        switch self {
        case .fetched(let objects): objects.count
        case .ordered(let members): members.ids.count
        }
    }

    /// The object at `index` (a fault until read), reading its batch first when a batched result needs it.
    func object(at index: Int) -> ManagedObject {
        switch self {
        case .fetched(let objects): objects[index]
        case .ordered(let members): members.object(at: index)
        }
    }
}

/// An ordered to-many's members in the relationship's order, read a batch at a time as Core Data's batched fetch
/// reads them: the relationship fault gave the IDs in order; each batch of them is one fetch `WHERE Z_PK IN (…)`,
/// so the rows are in the row cache when the faults fire. With no batch size each member is its own fault.
final class OrderedMembers {
    let ids: [ObjectID]
    private let context: ObjectContext
    private let template: FetchRequest
    private let batchSize: Int
    /// Fetched batches, kept alive while the list is.
    private var batches: [Int: FetchedObjects] = [:]

    /// - Parameter template: the fetch each batch is read with (its entity and prefetching); its predicate is
    ///   replaced by the batch's IDs.
    init(ids: [ObjectID], context: ObjectContext, template: FetchRequest, batchSize: Int) {
        self.ids = ids
        self.context = context
        self.template = template
        self.batchSize = batchSize
    }

    /// Reads the batches that hold `range` and are not read yet.
    func load(_ range: Range<Int>) throws(ContextError) {
        guard batchSize > 0, !range.isEmpty else { return }
        for batch in (range.lowerBound / batchSize)...((range.upperBound - 1) / batchSize) where batches[batch] == nil {
            let start = batch * batchSize
            guard start < ids.count else { break }
            let slice = ids[start..<min(ids.count, start + batchSize)]
            var request = template
            request.predicate = .comparison(.init(.evaluatedObject, .`in`, .constant(.list(slice.map { .objectID($0) }))))
            batches[batch] = try context.fetch(request)
        }
    }

    func object(at index: Int) -> ManagedObject {
        context.object(with: ids[index])
    }
}
