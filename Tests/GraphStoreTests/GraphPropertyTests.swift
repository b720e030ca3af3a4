import Foundation
import GraphStore
import Testing

/// Random sequences of inserts, relationship changes, edits, deletes, saves, undos, redos and rollbacks, applied to
/// a context with undo on and to a plain in-memory reference (`ReferenceGraph`, `ReferenceSession`). After every
/// step the live context must show the reference's graph; after every save a second coordinator on the same file
/// must read the reference's committed graph, every object's attributes and relationships, and the store must check
/// clean. A failure prints its seed, every step, and a shortened list of steps that still fails the same way.
/// `docs/testing.md` tells how to run more seeds and how to replay one.
@Suite struct GraphPropertyTests {
    /// Folders cascade to items; items cascade to children (reflexive), ordered notes and — through a many-to-many —
    /// are cascaded to by their tags; tags and peers (self-inverse) are many-to-many; a person owns items (Nullify
    /// both ways) and has one badge (one-to-one, Cascade from the person); an item may pin a note (no inverse), and
    /// locks keep their item from being deleted (Deny). A folder counts its items and a note copies its item's name,
    /// kept by the store's triggers.
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Badge") {
                Attribute("label", .string)
                Relationship.toOne("person", "Person", inverse: "badge")
            }
            EntityDescription("Folder") {
                Attribute("name", .string)
                Attribute("rank", .integer64)
                Relationship.toMany("items", "Item", inverse: "folder", deleteRule: .cascade)
                Attribute.derived("itemsCount", "items.@count")
            }
            EntityDescription("Item") {
                Attribute("name", .string)
                Attribute("score", .double)
                Attribute("done", .boolean)
                Relationship.toOne("folder", "Folder", inverse: "items")
                Relationship.toOne("parent", "Item", inverse: "children")
                Relationship.toMany("children", "Item", inverse: "parent", deleteRule: .cascade)
                Relationship.toMany("notes", "Note", inverse: "item", ordered: true, deleteRule: .cascade)
                Relationship.toMany("tags", "Tag", inverse: "items")
                Relationship.toMany("peers", "Item", inverse: "peers")
                Relationship.toOne("owner", "Person", inverse: "owned")
                Relationship.toOne("pinnedNote", "Note", inverse: nil)
                Relationship.toMany("locks", "Lock", inverse: "item", deleteRule: .deny)
            }
            EntityDescription("Lock") {
                Attribute("label", .string)
                Relationship.toOne("item", "Item", inverse: "locks")
            }
            EntityDescription("Note") {
                Attribute("text", .string)
                Relationship.toOne("item", "Item", inverse: "notes")
                Attribute.derived("itemName", "item.name", .string)
            }
            EntityDescription("Person") {
                Attribute("name", .string)
                Relationship.toMany("owned", "Item", inverse: "owner")
                Relationship.toOne("badge", "Badge", inverse: "person", deleteRule: .cascade)
            }
            EntityDescription("Tag") {
                Attribute("name", .string)
                Relationship.toMany("items", "Item", inverse: "tags", deleteRule: .cascade)
            }
        }
    }

    static let seeds = TestEnvironment.seeds("GRAPH_PROPERTY", defaultCount: 50)
    static let steps = TestEnvironment.integer("GRAPH_PROPERTY_STEPS") ?? 150

    @Test(arguments: seeds)
    func randomSequencesAgreeWithTheReference(seed: UInt64) throws {
        let settings = GraphPropertySettings(seed: seed)
        let model = try Self.model()
        let outcome = try GraphPropertyRun.generateAndRun(settings, steps: Self.steps, model: model)
        guard let failure = outcome.failure else { return }
        let budget = TestEnvironment.integer("GRAPH_PROPERTY_SHRINK_SECONDS") ?? 20
        let shrunk = try GraphPropertyRun.shrink(outcome.operations, settings, model: model, budget: .seconds(budget))
        var report = "seed \(seed) (\(settings)): step \(failure.step) failed:\n\(failure.message)\n"
        report += "replay: GRAPH_PROPERTY_SEED=\(seed) GRAPH_PROPERTY_STEPS=\(Self.steps) swift test --filter GraphPropertyTests\n"
        if let shrunk {
            report += "shortened to \(shrunk.operations.count) steps, failing at step \(shrunk.failure.step):\n\(shrunk.failure.message)\n"
            report += GraphPropertyRun.listing(shrunk.operations) + "\n"
        }
        report += "all steps:\n" + GraphPropertyRun.listing(outcome.operations)
        print(report)
        Issue.record(Comment(rawValue: report))
    }
}

/// What a seed chooses besides the steps: how many undo levels the context keeps (a few, so steps fall off, or
/// plenty), and whether every step reads every to-many (which fires the relationship faults, so some seeds leave
/// them unread and exercise the paths that record changes without fetching).
struct GraphPropertySettings: CustomStringConvertible {
    let seed: UInt64
    let undoLevels: Int
    let readsToManys: Bool

    init(seed: UInt64) {
        self.seed = seed
        undoLevels = seed % 5 == 4 ? 3 : 100
        readsToManys = seed % 3 != 2
    }

    var description: String { "undo levels \(undoLevels), to-manys read \(readsToManys ? "after every step" : "after saves only")" }
}

/// One step of a sequence. Objects are named by handles (`#3`), which inserts hand out.
enum GraphOperation: CustomStringConvertible {
    /// `grouped`: inside an explicit undo group; otherwise the change joins (or opens) the implicit "Edit" group.
    case insert(Int, entity: String, values: [(key: String, value: AttributeValue)], grouped: Bool)
    case edit(Int, key: String, value: AttributeValue, grouped: Bool)
    case setToOne(Int, key: String, destination: Int?)
    case add(Int, key: String, member: Int)
    case remove(Int, key: String, member: Int)
    /// `processNow`: `processPendingChanges()` right after, so cascades show before the save.
    case delete(Int, processNow: Bool, grouped: Bool)
    case save
    case undo
    case redo
    case rollback

    var description: String {
        switch self {
        case .insert(let handle, let entity, let values, let grouped):
            let shown = values.map { "\($0.key)=\(Self.show($0.value))" }.joined(separator: " ")
            return "\(grouped ? "" : "(ungrouped) ")insert #\(handle) \(entity) \(shown)"
        case .edit(let handle, let key, let value, let grouped):
            return "\(grouped ? "" : "(ungrouped) ")edit #\(handle).\(key) = \(Self.show(value))"
        case .setToOne(let handle, let key, let destination):
            return "set #\(handle).\(key) = \(destination.map { "#\($0)" } ?? "nil")"
        case .add(let handle, let key, let member):
            return "add #\(member) to #\(handle).\(key)"
        case .remove(let handle, let key, let member):
            return "remove #\(member) from #\(handle).\(key)"
        case .delete(let handle, let processNow, let grouped):
            return "\(grouped ? "" : "(ungrouped) ")delete #\(handle)\(processNow ? " + processPendingChanges" : "")"
        case .save: return "save"
        case .undo: return "undo"
        case .redo: return "redo"
        case .rollback: return "rollback"
        }
    }

    static func show(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let text): "\"\(text)\""
        case .integer(let number): "\(number)"
        case .double(let number): "\(number)"
        case .boolean(let flag): "\(flag)"
        default: "\(value)"
        }
    }
}

/// Chooses steps from what the reference holds now, so that most steps do something.
struct GraphOperationGenerator {
    var random: SeededRandom
    var nextHandle = 1

    private static let strings = ["alpha", "beta", "Ärger", "日本語", "", "a b", "it's", "🎉 party"]
    private static let integers: [Int64] = [0, 1, -1, 7, 42, .max, .min]
    private static let doubles = [0, 1.5, -2.25, 1e300, 3.141592653589793, -0.5]

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func value(of type: AttributeType) -> AttributeValue {
        if random.chance(15) { return .null }
        switch type {
        case .string: return .string(random.pick(Self.strings)!)
        case .integer16, .integer32, .integer64: return .integer(random.pick(Self.integers)!)
        case .double, .float: return .double(random.pick(Self.doubles)!)
        case .boolean: return .boolean(random.chance(50))
        default: preconditionFailure("no values of \(type) in this test")
        }
    }

    mutating func next(for session: ReferenceSession) -> GraphOperation {
        if session.hasReversals {
            // Objects show the store until the reversal is written: the sequence settles it before changing more.
            return random.weighted([(30, .undo), (30, .redo), (35, .save), (5, .rollback)])
        }
        let graph = session.effective
        let handles = graph.objects.keys.sorted()
        let count = handles.count
        enum Kind { case insert, edit, relate, unrelate, delete, save, undo, redo, rollback }
        let kind = random.weighted([
            (count < 8 ? 60 : count > 60 ? 4 : 18, Kind.insert),
            (count > 0 ? 14 : 0, .edit),
            (count > 1 ? 24 : 0, .relate),
            (count > 1 ? 8 : 0, .unrelate),
            (count > 0 ? 7 : 0, .delete),
            (10, .save), (10, .undo), (6, .redo), (1, .rollback),
        ])
        let schema = session.schema
        switch kind {
        case .insert:
            let entity = random.pick(schema.entityNames)!
            var values: [(key: String, value: AttributeValue)] = []
            for attribute in schema[entity].attributes { values.append((attribute.name, value(of: attribute.type))) }
            defer { nextHandle += 1 }
            return .insert(nextHandle, entity: entity, values: values, grouped: random.chance(75))
        case .edit:
            let handle = random.pick(handles)!
            let attribute = random.pick(schema[graph.objects[handle]!.entity].attributes)!
            return .edit(handle, key: attribute.name, value: value(of: attribute.type), grouped: random.chance(75))
        case .relate, .unrelate:
            let handle = random.pick(handles)!
            let relationship = random.pick(schema[graph.objects[handle]!.entity].relationships)!
            let candidates = handles.filter { graph.objects[$0]!.entity == relationship.destination }
            if kind == .unrelate {
                if !relationship.isToMany { return .setToOne(handle, key: relationship.name, destination: nil) }
                // Mostly a member; sometimes an object that is not one (a removal that changes nothing).
                let members = graph.toMany(handle, relationship.name)
                guard let member = random.chance(85) ? random.pick(members) ?? random.pick(candidates) : random.pick(candidates) else { return .save }
                return .remove(handle, key: relationship.name, member: member)
            }
            guard let destination = random.pick(candidates) else { return .save }
            if relationship.isToMany { return .add(handle, key: relationship.name, member: destination) }
            return .setToOne(handle, key: relationship.name, destination: destination)
        case .delete:
            return .delete(random.pick(handles)!, processNow: random.chance(50), grouped: random.chance(75))
        case .save: return .save
        case .undo: return .undo
        case .redo: return .redo
        case .rollback: return .rollback
        }
    }
}

/// A sequence run against a fresh store and the reference side by side.
final class GraphPropertyRun {
    struct Failure: Error {
        var step: Int
        var message: String

        /// The first problem with handles, numbers and store UUIDs taken out, to tell failures apart when shrinking.
        var signature: String {
            let first = message.split(separator: "\n").first { $0.contains("- ") } ?? Substring(message)
            return first.replacingOccurrences(of: #"[0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27}|#\d+|\d+"#, with: "_", options: .regularExpression)
        }
    }

    let fixture: GraphFixture
    let context: ObjectContext
    let settings: GraphPropertySettings
    private(set) var session: ReferenceSession
    /// Every object the sequence made, by handle, held so that the context keeps them (and reuses them on undo).
    private var objects: [Int: ManagedObject] = [:]

    init(_ settings: GraphPropertySettings, model: ObjectModel) throws {
        fixture = try GraphFixture(model)
        context = fixture.context("property")
        context.undoLevels = settings.undoLevels
        self.settings = settings
        session = ReferenceSession(schema: ReferenceSchema(model), levels: settings.undoLevels)
    }

    // MARK: running

    /// Generates `steps` steps from the seed and runs them; the steps and the first failure, if any.
    static func generateAndRun(_ settings: GraphPropertySettings, steps: Int, model: ObjectModel) throws
        -> (operations: [GraphOperation], failure: Failure?) {
        let run = try GraphPropertyRun(settings, model: model)
        var generator = GraphOperationGenerator(seed: settings.seed)
        var operations: [GraphOperation] = []
        // A sequence that crashes the process reports nothing: with GRAPH_PROPERTY_TRACE set, each step is printed
        // before it runs, so the last lines printed are the way to the crash.
        let traces = TestEnvironment.integer("GRAPH_PROPERTY_TRACE") != nil
        for step in 0..<steps {
            let operation = generator.next(for: run.session)
            operations.append(operation)
            if traces { print("seed \(settings.seed) step \(step): \(operation)") }
            do {
                _ = try run.apply(operation, step: step)
            } catch {
                return (operations, error)
            }
        }
        return (operations, nil)
    }

    /// Runs a fixed list of steps, skipping those that no longer apply (a shortened list may name objects it no
    /// longer makes); the steps run and the first failure.
    static func replay(_ operations: [GraphOperation], _ settings: GraphPropertySettings, model: ObjectModel) throws
        -> (operations: [GraphOperation], failure: Failure?) {
        let run = try GraphPropertyRun(settings, model: model)
        var ran: [GraphOperation] = []
        for operation in operations {
            do {
                if try run.apply(operation, step: ran.count) { ran.append(operation) }
            } catch {
                return (ran + [operation], error)
            }
        }
        return (ran, nil)
    }

    /// A shorter list of steps that still fails the same way, found by dropping ever smaller runs of steps while
    /// the time allows; nil when the list does not fail again.
    static func shrink(_ operations: [GraphOperation], _ settings: GraphPropertySettings, model: ObjectModel, budget: Duration) throws
        -> (operations: [GraphOperation], failure: Failure)? {
        let deadline = ContinuousClock.now + budget
        let first = try replay(operations, settings, model: model)
        guard var failure = first.failure else { return nil }
        let signature = failure.signature
        var current = first.operations
        var chunk = max(1, current.count / 2)
        while ContinuousClock.now < deadline {
            var index = 0
            var removed = false
            while index < current.count && ContinuousClock.now < deadline {
                let candidate = Array(current[..<index] + current[min(current.count, index + chunk)...])
                let attempt = try replay(candidate, settings, model: model)
                if let again = attempt.failure, again.signature == signature {
                    current = attempt.operations
                    failure = again
                    removed = true
                } else {
                    index += chunk
                }
            }
            if !removed {
                if chunk == 1 { break }
                chunk = max(1, chunk / 2)
            }
        }
        return (current, failure)
    }

    static func listing(_ operations: [GraphOperation]) -> String {
        operations.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
    }

    // MARK: one step

    /// Whether `operation` applies to the reference as it is now (the objects it names are alive, and it changes
    /// nothing while a saved step's reverse is queued).
    func isApplicable(_ operation: GraphOperation) -> Bool {
        let graph = session.effective
        func alive(_ handle: Int, _ entity: String? = nil) -> Bool {
            guard let object = graph.objects[handle] else { return false }
            return entity.map { $0 == object.entity } ?? true
        }
        func destination(_ handle: Int, _ key: String) -> String? {
            graph.objects[handle].flatMap { session.schema[$0.entity].relationship(key)?.destination }
        }
        switch operation {
        case .insert(let handle, _, _, _):
            return !session.hasReversals && objects[handle] == nil
        case .edit(let handle, _, _, _):
            return !session.hasReversals && alive(handle)
        case .delete(let handle, _, _):
            return !session.hasReversals && alive(handle)
        case .setToOne(let handle, let key, let target):
            guard !session.hasReversals, alive(handle), let entity = destination(handle, key) else { return false }
            return target.map { alive($0, entity) } ?? true
        case .add(let handle, let key, let member):
            guard !session.hasReversals, alive(handle), let entity = destination(handle, key) else { return false }
            return alive(member, entity)
        case .remove(let handle, let key, let member):
            guard !session.hasReversals, alive(handle), let entity = destination(handle, key) else { return false }
            return alive(member, entity)
        case .save, .undo, .redo, .rollback:
            return true
        }
    }

    /// Applies `operation` to the context and the reference and compares them; false when it did not apply.
    func apply(_ operation: GraphOperation, step: Int) throws(Failure) -> Bool {
        guard isApplicable(operation) else { return false }
        let groupName = "step \(step)"
        func grouped(_ isGrouped: Bool, opensGroup: Bool = true, _ body: () -> Void) {
            if isGrouped {
                context.beginUndoGroup(named: groupName)
                session.beginGroup(named: groupName)
            } else if opensGroup {
                session.noteChange()
            }
            body()
            if isGrouped {
                context.endUndoGroup()
                session.endGroup()
            }
        }
        switch operation {
        case .insert(let handle, let entity, let values, let isGrouped):
            grouped(isGrouped) {
                let object = context.insert(entity)
                for (key, value) in values { object.setAttributeValue(value, forKey: key) }
                objects[handle] = object
                session.change { graph, _ in
                    graph.insert(handle, entity: entity, attributes: Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) }))
                }
            }
        case .edit(let handle, let key, let value, let isGrouped):
            // Setting a value of an object inserted since the last save is not a change the context notes for undo
            // (the object's insert is).
            grouped(isGrouped, opensGroup: !session.isInserted(handle)) {
                objects[handle]!.setAttributeValue(value, forKey: key)
                session.change { graph, _ in graph.setAttribute(handle, key, value) }
            }
        case .setToOne(let handle, let key, let destination):
            grouped(true) {
                objects[handle]!.setObject(destination.map { objects[$0]! }, forKey: key)
                session.change { graph, schema in graph.setToOne(handle, key, to: destination, schema: schema) }
            }
        case .add(let handle, let key, let member):
            grouped(true) {
                objects[handle]!.add(objects[member]!, toKey: key)
                session.change { graph, schema in graph.add(handle, key, member, schema: schema) }
            }
        case .remove(let handle, let key, let member):
            grouped(true) {
                objects[handle]!.remove(objects[member]!, fromKey: key)
                session.change { graph, schema in graph.remove(handle, key, member, schema: schema) }
            }
        case .delete(let handle, let processNow, let isGrouped):
            grouped(isGrouped) {
                context.delete(objects[handle]!)
                if processNow { context.processPendingChanges() }
                session.delete(handle)
            }
        case .save:
            try save(step: step)
        case .undo:
            context.undo()
            session.undo()
        case .redo:
            context.redo()
            session.redo()
        case .rollback:
            context.rollback()
            session.rollback()
        }
        let problems = liveProblems()
        if !problems.isEmpty { throw Failure(step: step, message: Self.summary(problems)) }
        return true
    }

    private func save(step: Int) throws(Failure) {
        session.closeGroup()
        let hadChanges = context.hasChanges
        if !hadChanges && session.hasNetChanges {
            throw Failure(step: step, message: "  - hasChanges is false, but the reference has unsaved changes (a save would lose them)")
        }
        if session.live.denies(session.doomed, schema: session.schema) {
            // Refused, writing nothing; both sides then drop their changes and go on.
            do {
                try context.save()
            } catch {
                guard case .deleteDenied = error else {
                    throw Failure(step: step, message: "  - save failed: \(error), where a Deny rule should refuse it")
                }
                context.rollback()
                session.rollback()
                return
            }
            throw Failure(step: step, message: "  - the save went through, where a Deny rule should refuse it")
        }
        let graph = session.savedGraph()
        do {
            try context.save()
        } catch {
            throw Failure(step: step, message: "  - save failed: \(error)")
        }
        guard hadChanges else { return }
        if !session.committed.changes(to: graph).isEmpty {
            session.didSave(graph, recordsStep: true)
        } else {
            // A save that changed nothing the reference sees may still have written rows (a value set to what it
            // was), and then it is a saved step. The context's menu names tell which; when they cannot, both sides
            // forget their steps and go on.
            var recorded = session
            recorded.didSave(graph, recordsStep: true)
            var unrecorded = session
            unrecorded.didSave(graph, recordsStep: false)
            switch (undoStateProblems(recorded).isEmpty, undoStateProblems(unrecorded).isEmpty) {
            case (true, false): session = recorded
            case (false, true), (false, false): session = unrecorded
            case (true, true):
                session = unrecorded
                session.removeAllUndoActions()
                context.removeAllUndoActions()
            }
        }
        let problems = storeProblems()
        if !problems.isEmpty { throw Failure(step: step, message: "after the save, a fresh coordinator reads:\n" + Self.summary(problems)) }
    }

    private static func summary(_ problems: [String]) -> String {
        let shown = problems.prefix(15).map { "  - " + $0 }.joined(separator: "\n")
        return problems.count > 15 ? shown + "\n  … and \(problems.count - 15) more" : shown
    }

    // MARK: comparing

    private func undoStateProblems(_ session: ReferenceSession) -> [String] {
        var problems: [String] = []
        func compare<T: Equatable>(_ label: String, _ actual: T, _ expected: T) {
            if actual != expected { problems.append("\(label) is \(actual), expected \(expected)") }
        }
        compare("canUndo", context.canUndo, session.canUndo)
        compare("canRedo", context.canRedo, session.canRedo)
        compare("undoActionName", context.undoActionName ?? "nil", session.undoActionName ?? "nil")
        compare("redoActionName", context.redoActionName ?? "nil", session.redoActionName ?? "nil")
        compare("pendingUndoNames", context.pendingUndoNames, session.pendingUndoNames)
        return problems
    }

    /// The handles of the sequence's objects by the IDs they have now.
    private func handlesByID() -> [ObjectID: Int] {
        var handles: [ObjectID: Int] = [:]
        for (handle, object) in objects { handles[object.objectID] = handle }
        return handles
    }

    /// How the live context differs from the reference: objects alive in the reference must be alive with the same
    /// values and relationships (references to objects a pending delete takes are not compared: the context lets
    /// go of them at the save), deleted ones deleted.
    private func liveProblems() -> [String] {
        var problems = undoStateProblems(session)
        if !context.hasChanges && session.hasNetChanges { problems.append("hasChanges is false, but the reference has unsaved changes") }
        let graph = session.effective
        let doomed = session.doomed
        let handles = handlesByID()
        func handleFor(_ id: ObjectID) -> Int {
            if let handle = handles[id] { return handle }
            problems.append("a relationship points at \(id), which the sequence never made")
            return -1
        }
        /// Whether a member of `owner` is left out of the comparison: taken by a pending delete.
        func ignored(_ handle: Int, of owner: Int) -> Bool { doomed.contains(handle) }
        for (handle, object) in objects.sorted(by: { $0.key < $1.key }) {
            guard let expected = graph.objects[handle] else {
                if session.deleted.contains(handle) || session.live.objects[handle] == nil, !object.isDeleted {
                    problems.append("#\(handle) \(object.entityName) is not deleted")
                }
                continue
            }
            let label = "#\(handle) \(expected.entity)"
            if object.isDeleted {
                problems.append("\(label) is deleted, but alive in the reference")
                continue
            }
            if context.registeredObject(for: object.objectID) !== object {
                problems.append("\(label): the context has another object (or none) for \(object.objectID)")
            }
            let shape = session.schema[expected.entity]
            for attribute in shape.attributes {
                let value = object.attributeValue(forKey: attribute.name)
                let wanted = expected.attributes[attribute.name] ?? .null
                if value != wanted { problems.append("\(label).\(attribute.name) is \(GraphOperation.show(value)), expected \(GraphOperation.show(wanted))") }
            }
            if let error = object.faultError { problems.append("\(label): \(error)") }
            // By IDs: `objects(forKey:)` would make objects for members a pending delete took, which is not what is
            // compared here.
            for relationship in shape.relationships {
                if !relationship.isToMany {
                    var destination = object.objectIDs(forRelationshipNamed: relationship.name).first.map(handleFor)
                    if let found = destination, ignored(found, of: handle) { destination = nil }
                    let wanted = expected.toOnes[relationship.name]
                    if destination != wanted { problems.append("\(label).\(relationship.name) is \(Self.show(destination)), expected \(Self.show(wanted))") }
                } else if settings.readsToManys {
                    var members = object.objectIDs(forRelationshipNamed: relationship.name).map(handleFor).filter { !ignored($0, of: handle) }
                    if !relationship.isOrdered { members.sort() }
                    let wanted = expected.toManys[relationship.name] ?? []
                    if members != wanted { problems.append("\(label).\(relationship.name) is \(Self.show(members)), expected \(Self.show(wanted))") }
                }
            }
        }
        return problems
    }

    /// How the store, read by a new coordinator, differs from the reference's committed graph; and what the
    /// store's integrity check finds.
    private func storeProblems() -> [String] {
        var problems: [String] = []
        let committed = session.committed
        var handles: [ObjectID: Int] = [:]
        for handle in committed.objects.keys.sorted() {
            let id = objects[handle]!.objectID
            if id.isTemporary { problems.append("#\(handle) still has a temporary ID after the save") }
            handles[id] = handle
        }
        let reader: ObjectContext
        do {
            reader = ObjectContext(coordinator: try fixture.reopen(), name: "reader")
        } catch {
            return ["cannot reopen the store: \(error)"]
        }
        func handleFor(_ object: ManagedObject) -> Int {
            if let handle = handles[object.objectID] { return handle }
            problems.append("the store points at \(object.objectID), which the reference does not hold")
            return -1
        }
        var seen = Set<Int>()
        for entity in session.schema.entityNames {
            let rows: [ManagedObject]
            do {
                rows = try reader.fetch(entity)
            } catch {
                problems.append("fetching \(entity): \(error)")
                continue
            }
            for row in rows {
                guard let handle = handles[row.objectID] else {
                    problems.append("the store holds \(entity) \(row.objectID), which the reference does not")
                    continue
                }
                seen.insert(handle)
                let expected = committed.objects[handle]!
                let label = "#\(handle) \(expected.entity)"
                guard expected.entity == entity else {
                    problems.append("\(label) is stored as \(entity)")
                    continue
                }
                let shape = session.schema[entity]
                for attribute in shape.attributes {
                    let value = row.attributeValue(forKey: attribute.name)
                    let wanted = expected.attributes[attribute.name] ?? .null
                    if value != wanted { problems.append("\(label).\(attribute.name) is \(GraphOperation.show(value)), expected \(GraphOperation.show(wanted))") }
                }
                for (name, derivation) in shape.derived {
                    let value = row.attributeValue(forKey: name)
                    let wanted = committed.derivedValue(handle, derivation)
                    if value != wanted { problems.append("\(label).\(name) (derived) is \(GraphOperation.show(value)), expected \(GraphOperation.show(wanted))") }
                }
                for relationship in shape.relationships {
                    if relationship.isToMany {
                        var members = row.objects(forKey: relationship.name).map(handleFor)
                        if !relationship.isOrdered { members.sort() }
                        let wanted = expected.toManys[relationship.name] ?? []
                        if members != wanted { problems.append("\(label).\(relationship.name) is \(Self.show(members)), expected \(Self.show(wanted))") }
                    } else {
                        let destination = row.object(forKey: relationship.name).map(handleFor)
                        let wanted = expected.toOnes[relationship.name]
                        if destination != wanted { problems.append("\(label).\(relationship.name) is \(Self.show(destination)), expected \(Self.show(wanted))") }
                    }
                }
            }
        }
        for handle in committed.objects.keys.sorted() where !seen.contains(handle) {
            problems.append("#\(handle) \(committed.objects[handle]!.entity) is missing from the store")
        }
        do {
            for violation in try StoreIntegrityCheck.run(path: fixture.path).violations {
                problems.append("integrity check: \(violation)")
            }
        } catch {
            problems.append("integrity check failed to run: \(error)")
        }
        return problems
    }

    private static func show(_ handle: Int?) -> String { handle.map { "#\($0)" } ?? "nil" }
    private static func show(_ handles: [Int]) -> String { "[" + handles.map { "#\($0)" }.joined(separator: ", ") + "]" }
}
