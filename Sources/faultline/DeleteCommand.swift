import ArgumentParser
import ChatFixture
import Foundation
import GRDB
import GraphStore
import TerminalText

/// `faultline delete [STORE] (--chat ID | --user ID | --message ID | --object URI)`: shows what deleting one object
/// takes with it, then deletes it through the object graph's delete rules and saves.
struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a chat, a user or a message from a chat store (or any object of any Core Data store), with everything its delete rules take along.",
        discussion: """
            ID is a primary key (Z_PK) or an object URI (x-coredata://<store UUID>/<Entity>/p<key>). --chat takes a \
            direct or a group chat. --object takes any object of any store: its URI, or <Entity>/p<key>; the model \
            is read from inside the store unless --model gives its file. A store that is not a chat store is only \
            read unless --write is given. The plan comes first: per entity the objects that go, per relationship the \
            references surviving objects lose, the Deny rules that refuse the delete, and the surviving objects it \
            would leave without what a relationship requires (which the save's validation refuses). With --dry-run \
            that is all; \
            otherwise the object is deleted, the change saved in one transaction, and what the save did is printed. \
            The plan is worked out on a read-only connection: a dry run or a refused delete never opens the file for \
            writing, so it stays as it was, byte for byte.

            With --undo, the saved delete is then undone and that saved too, through the context's undo journal: \
            every row comes back with its primary key, values and links, and the plan is worked out again to show \
            the same objects are back.

            Exit status: 0 when deleted (or, with --dry-run, when the delete would be allowed), 1 when Deny rules \
            or required relationships refuse it or anything else fails.
            """
    )

    @Argument(help: "The chat store (default: the default chat store, ~/.local/share/faultline/chat.sqlite or as 'faultline --help' says, generated if missing).")
    var store: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Delete this chat (direct or group): a primary key or an x-coredata:// URI.", valueName: "id"))
    var chat: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Delete this user: a primary key or an x-coredata:// URI.", valueName: "id"))
    var user: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Delete this message: a primary key or an x-coredata:// URI.", valueName: "id"))
    var message: String?

    @Option(help: ArgumentHelp("Delete this object of any store: an x-coredata:// URI or <Entity>/p<key>.", valueName: "id"))
    var object: String?

    @Option(help: ArgumentHelp("The store's model file (.xcdatamodeld, .xcdatamodel or 'contents'); without it, the model inside the store.", valueName: "path"))
    var model: String?

    @Flag(help: "Allow the delete to be saved in a store that is not a chat store (after a warning).")
    var write = false

    @Flag(help: "Show the plan only; write nothing.")
    var dryRun = false

    @Flag(help: "After saving the delete, undo it and save again (every row comes back with its key).")
    var undo = false

    @Flag(help: "Print the outcome as JSON.")
    var json = false

    @OptionGroup var sqlDebug: SQLDebugOptions

    func validate() throws {
        let given = [chat, user, message, object].compactMap { $0 }.count
        if given == 0 { throw ValidationError("say what to delete with one of --chat, --user, --message or --object") }
        if given > 1 { throw ValidationError("--chat, --user, --message and --object cannot be combined: delete one object at a time") }
        if undo && dryRun { throw ValidationError("--undo and --dry-run cannot be combined: a dry run deletes nothing to undo") }
    }

    /// The option given, as the entity it names and the text of the ID.
    private var target: DeleteTarget {
        if let chat { return DeleteTarget(option: "--chat", entity: "Chat", id: chat) }
        if let user { return DeleteTarget(option: "--user", entity: "User", id: user) }
        if let object { return DeleteTarget(option: "--object", entity: nil, id: object) }
        return DeleteTarget(option: "--message", entity: "Message", id: message ?? "")
    }

    func run() throws {
        let target = self.target
        // A malformed ID, or an empty --model, is an error before any store is opened (or the default one made).
        try target.checkSyntax()
        try ModelFileArgument.checkOption(model)
        let path = try store ?? DefaultFixture.ensure()
        let chosen = try ChosenModel.choose(store: path, modelFile: model)
        if !chosen.isChatModel {
            guard target.entity == nil else {
                throw CommandFailure("\(path): is not a chat store (\(chosen.source) is another model), so it has no \(target.entity ?? ""): name the object with --object")
            }
            if !dryRun && !write {
                throw CommandFailure("\(path): is not a chat store, so it is only read: add --write to delete from it, or --dry-run to see the plan")
            }
        }
        // Checked before opening anything, so a bad level or log file fails first; the log file itself is made only
        // once the store has opened, so a bad store leaves none behind.
        try sqlDebug.checkLogFile(notOverwriting: [path])
        var sink: FileHandle?
        func log(_ store: OpenedStore) throws(CommandFailure) -> SQLDebugLog? {
            guard try sqlDebug.effectiveLevel() != nil else { return nil }
            if sink == nil { sink = try sqlDebug.openSink(notOverwriting: [path]) }
            return try sqlDebug.attach(to: store.coordinator, sink: sink)
        }

        // First the plan, read-only. A delete to be saved needs a file this process can write: one it cannot is
        // refused here, before any connection could leave a -wal or -shm beside it.
        var report: DeleteReport
        var logs: [SQLDebugLog?] = []
        do {
            let store = try OpenedStore(path: path, readOnly: true, requireWritable: !dryRun, model: chosen)
            logs.append(try log(store))
            let object = try store.resolve(target)
            let plan = try store.plan(object)
            report = DeleteReport(path: path, target: store.context.uri(for: object.objectID),
                                  entity: object.entity.name, plan: plan, dryRun: dryRun)
        }

        // Then, when allowed and asked for, the delete on a writable connection: the save plans again in its own
        // transaction, so a store changed meanwhile is judged as it is then.
        if !dryRun && !report.plan.isRefused {
            if !chosen.isChatModel { FileHandle.standardError.write(Data((ChosenModel.writeWarning(store: path) + "\n").utf8)) }
            let store = try OpenedStore(path: path, readOnly: false, requireWritable: true, model: chosen)
            logs.append(try log(store))
            // Another process may have deleted it since the plan: then this one deletes nothing, and says so.
            let object = try store.resolve(target, foundBefore: true)
            switch try store.deleteAndSave(object, thenUndo: undo) {
            case .saved(let done, let undone):
                report.done = done
                report.undone = undone
            case .denied(let blockers):
                report.plan.denied = blockers
            }
        }
        withExtendedLifetime(logs) {}

        let text = json ? try report.json() : report.text()
        do throws(CommandFailure) {
            try Output.write(text)
        } catch {
            // What was saved is in the store whatever became of the report: say on the one error line what the
            // store holds now (with --undo, the object again).
            guard report.saved else { throw error }
            let saved = report.undone == nil
                ? "the delete of \(report.target) was saved"
                : "\(report.target) was deleted and then restored (the delete and its undo were both saved)"
            throw CommandFailure("\(error.message); \(saved)")
        }
        if report.isRefused { Foundation.exit(1) }
    }
}

/// What `--chat`, `--user`, `--message` or `--object` names: the entity the object must be (or descend from; for
/// `--object`, the one its ID names) and the ID text.
struct DeleteTarget {
    let option: String
    let entity: String?
    let id: String

    /// Throws what `resolve` would for an ID that is neither a primary key nor an object URI: no store needed.
    func checkSyntax() throws(CommandFailure) {
        if id.hasPrefix("x-coredata:") {
            _ = try ObjectURI(id, option: option)
        } else if entity == nil {
            _ = try Self.entityAndKey(id, option: option)
        } else if Int64(id).map({ $0 <= 0 }) ?? true {
            throw CommandFailure("\(option) '\(id)': give a primary key (a number from 1) or an x-coredata:// URI")
        }
    }

    /// `<Entity>/p<key>` (an object URI's last two parts).
    static func entityAndKey(_ id: String, option: String) throws(CommandFailure) -> (entity: String, key: Int64) {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()), key > 0 else {
            throw CommandFailure("\(option) '\(id)': give an x-coredata:// URI or <Entity>/p<key> (a key from 1)")
        }
        return (String(parts[0]), key)
    }
}

/// One opening of the store: a coordinator with the model (the chat model's classes for a chat store) and one context.
private struct OpenedStore {
    let path: String
    let coordinator: PersistentStoreCoordinator
    let context: ObjectContext
    /// The progress line of long work, when stderr is a terminal.
    let progress: StderrProgress?

    /// - Parameter requireWritable: refuse a file this process could not write, before any connection is made
    ///   (also for the read-only look that plans a delete to be saved).
    init(path: String, readOnly: Bool, requireWritable: Bool, model chosen: ChosenModel) throws(CommandFailure) {
        let model = chosen.model
        let busyTimeout = try BusyTimeout.seconds()
        do {
            // Never create: a missing file is an error here, not a new empty store.
            coordinator = try PersistentStoreCoordinator(
                path: path, model: model, options: .init(readOnly: readOnly, createIfMissing: false, requireWritable: requireWritable,
                                                     busyTimeout: busyTimeout),
                classes: chosen.isChatModel ? ChatModel.classes : [])
        } catch .notWritable(let path, let reason) {
            throw CommandFailure("\(path): cannot be written (\(reason)), so nothing can be deleted from it (--dry-run shows the plan)")
        } catch {
            throw CommandFailure(error)
        }
        if readOnly == false, coordinator.store.isReadOnly {
            throw CommandFailure(StoreError.readOnly(path: path))
        }
        self.path = path
        context = ObjectContext(coordinator: coordinator, name: "delete")
        progress = StderrProgress.onTerminal(for: context)
    }

    /// The object the ID names, as its real entity (a chat's row says whether it is a direct or a group chat), its
    /// row read: the save checks that row's version, so a row another process deleted or changed since is a
    /// conflict, not a delete of nothing.
    /// - Parameter foundBefore: the object was found once already, for the plan; a missing row now means another
    ///   process deleted it meanwhile.
    func resolve(_ target: DeleteTarget, foundBefore: Bool = false) throws(CommandFailure) -> ManagedObject {
        let model = coordinator.model
        let modelName = target.entity == nil ? "the model" : "the chat model"
        // The entity the object must be: the option's (--chat…), or the one the ID names (--object).
        var uri: ObjectURI?
        var short: (entity: String, key: Int64)?
        if target.id.hasPrefix("x-coredata:") {
            uri = try ObjectURI(target.id, option: target.option)
        } else if target.entity == nil {
            short = try DeleteTarget.entityAndKey(target.id, option: target.option)
        }
        let baseName = target.entity ?? uri?.entity ?? short?.entity ?? ""
        guard let base = model.entity(named: baseName), let mapping = coordinator.mapping(forEntity: baseName) else {
            throw CommandFailure("\(target.option) \(target.id): \(modelName) has no entity '\(baseName)'")
        }
        let kinds = base.descendantNames.isEmpty
            ? "a \(base.name)"
            : "a \(base.name) (" + base.descendantNames.joined(separator: " or ") + ")"
        let key: Int64
        var namedEntity: String?
        if let uri {
            guard uri.storeUUID.caseInsensitiveCompare(coordinator.store.storeUUID) == .orderedSame else {
                throw CommandFailure("\(target.option) \(target.id): names store \(uri.storeUUID), but \(path) is store \(coordinator.store.storeUUID)")
            }
            guard model.entity(named: uri.entity) != nil else {
                throw CommandFailure("\(target.option) \(target.id): \(modelName) has no entity '\(uri.entity)'")
            }
            guard base.includes(uri.entity) else {
                throw CommandFailure("\(target.option) \(target.id): names a \(uri.entity), not \(kinds)")
            }
            key = uri.primaryKey
            namedEntity = uri.entity
        } else if let short {
            key = short.key
            namedEntity = short.entity
        } else if let number = Int64(target.id), number > 0 {
            key = number
        } else {
            throw CommandFailure("\(target.option) '\(target.id)': give a primary key (a number from 1) or an x-coredata:// URI")
        }

        // The row's Z_ENT says which entity it is; the table may hold several.
        // Read as SQL quotes it: a damaged store may hold NULL or text there, which is named as it is.
        let rowEntity: String?
        do {
            rowEntity = try coordinator.store.database.read { db in
                try String.fetchOne(db, sql: "SELECT quote(Z_ENT) FROM \(mapping.table) WHERE Z_PK = ?", arguments: [key])
            }
        } catch {
            throw CommandFailure("\(path): \(error)")
        }
        guard let rowEntity else {
            if foundBefore {
                throw CommandFailure("\(path): no \(namedEntity ?? base.name) with primary key \(key) any more: another process deleted it after the plan was made; nothing deleted")
            }
            throw CommandFailure("\(path): no \(namedEntity ?? base.name) with primary key \(key)")
        }
        let rowKind = model.entities.first { String($0.number) == rowEntity }
        guard let found = rowKind, base.includes(found.name), !found.isAbstract else {
            if let rowKind, !rowKind.isAbstract {
                // Another entity of the same table (a Car where a SportCar was named): named as what it is.
                throw CommandFailure("\(path): row \(key) of \(mapping.table) is a \(rowKind.name), not \(kinds)")
            }
            throw CommandFailure("\(path): row \(key) of \(mapping.table) has Z_ENT \(rowEntity.prefix(40)), which is not \(kinds)")
        }
        if let namedEntity, model.entity(named: namedEntity)?.includes(found.name) != true {
            throw CommandFailure("\(path): no \(namedEntity) with primary key \(key) (that row of \(mapping.table) is a \(found.name))")
        }
        do {
            // Reads the row now: its version is what the save checks before deleting.
            return try context.existingObject(with: ObjectID(entityNumber: found.number, primaryKey: key))
        } catch {
            throw CommandFailure("\(path): no \(found.name) with primary key \(key) any more: another process deleted it meanwhile; nothing deleted")
        }
    }

    func plan(_ object: ManagedObject) throws(CommandFailure) -> DeletionPlan {
        defer { progress?.erase() }
        do {
            return try context.deletionPlan(for: [object])
        } catch {
            throw CommandFailure("\(path): \(error)")
        }
    }

    enum Outcome {
        /// What the save deleted; with an undo, the plan for the same object after the undo was saved.
        case saved(DeletionPlan, undone: DeletionPlan?)
        case denied([DeletionPlan.Blocker])
    }

    func deleteAndSave(_ object: ManagedObject, thenUndo: Bool) throws(CommandFailure) -> Outcome {
        if thenUndo { context.undoLevels = 1 }
        context.undoGroup(named: "Delete") { context.delete(object) }
        do {
            try save()
        } catch .deleteDenied(let blockers) {
            context.rollback()
            return .denied(blockers)
        } catch .optimisticLockingConflict {
            // The row changed or went since it was read: another process got there first. Nothing was written.
            context.rollback()
            let uri = context.uri(for: object.objectID)
            if (try? rowExists(object.objectID)) == false {
                throw CommandFailure("\(path): \(uri) was deleted by another process before this delete was saved; nothing deleted")
            }
            throw CommandFailure("\(path): \(uri) was changed by another process while this delete was being planned; nothing deleted (run the command again)")
        } catch {
            context.rollback()
            throw CommandFailure("\(path): \(error)")
        }
        // A save that deleted something always records it; an empty plan would mean nothing went.
        let done = context.lastDeletion ?? DeletionPlan()
        guard thenUndo else { return .saved(done, undone: nil) }
        context.undo()
        do {
            try save()
        } catch {
            throw CommandFailure("\(path): the delete was saved, but undoing it failed: \(error)")
        }
        return .saved(done, undone: try plan(object))
    }

    /// Saves, with the progress line erased afterwards.
    private func save() throws(ContextError) {
        defer { progress?.erase() }
        try context.save()
    }

    /// Whether the object's row is in the store now.
    private func rowExists(_ id: ObjectID) throws -> Bool {
        let table = coordinator.mapping(forEntityNumber: id.entityNumber).table
        return try coordinator.store.database.read { db in
            try Int.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE Z_PK = ?", arguments: [id.primaryKey]) != nil
        }
    }
}

/// `x-coredata://<store UUID>/<Entity>/p<key>`, as `PersistentStoreCoordinator.uri(for:)` writes it.
private struct ObjectURI {
    let storeUUID: String
    let entity: String
    let primaryKey: Int64

    init(_ text: String, option: String) throws(CommandFailure) {
        let prefix = "x-coredata://"
        let parts = text.hasPrefix(prefix) ? text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false) : []
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("p"),
              let key = Int64(parts[2].dropFirst()), key > 0 else {
            if parts.count == 3, parts[0].isEmpty || parts[2].hasPrefix("t") {
                throw CommandFailure("\(option) \(text): names an unsaved object (a temporary ID), which no store holds")
            }
            throw CommandFailure("\(option) \(text): not an object URI (x-coredata://<store UUID>/<Entity>/p<key>)")
        }
        storeUUID = String(parts[0])
        entity = String(parts[1])
        primaryKey = key
    }
}

/// What the command found and did, in its two output forms.
struct DeleteReport {
    let path: String
    /// The object's URI.
    let target: String
    let entity: String
    /// What the delete would do (with the blockers of a refusal, from the plan or from the save).
    var plan: DeletionPlan
    let dryRun: Bool
    /// What the save did; nil when nothing was saved.
    var done: DeletionPlan?
    /// With `--undo`: the plan for the same object once the undo was saved.
    var undone: DeletionPlan?

    var saved: Bool { done != nil }
    var isRefused: Bool { plan.isRefused && done == nil }

    // MARK: text

    /// One line per fact, each escaped: the path and the URI (whose store UUID comes from the file) can break no
    /// line and reach the terminal as no control sequence.
    func text() -> String {
        var lines = ["\(path): delete \(target) (\(entity))", ""]
        if isRefused {
            lines.append("plan (refused):")
        } else {
            lines.append(dryRun ? "plan (dry run):" : "plan:")
        }
        lines += Self.table(plan)
        lines.append("")
        if isRefused {
            if plan.isDenied {
                let count = plan.denied.count
                lines.append("denied by \(count) Deny rule\(count == 1 ? "" : "s"):")
                lines += plan.denied.map { "  \($0)" }
            }
            if !plan.shortfalls.isEmpty {
                // What the save's validation would refuse: survivors left without what a relationship requires.
                let count = plan.shortfalls.reduce(0) { $0 + $1.count }
                lines.append("the save would fail validation: \(Self.count(count, "surviving object")) left invalid:")
                lines += plan.shortfalls.map { "  \($0)" }
            }
            lines.append("nothing deleted; the store is unchanged")
        } else if let done {
            // The save plans again in its transaction; its counts differ only if the store changed meanwhile.
            if done.deleted == plan.deleted && done.nullified == plan.nullified {
                lines.append("saved: \(Self.totals(done)), as planned")
            } else {
                lines.append("deleted and saved (not as planned: the store changed meanwhile):")
                lines += Self.table(done)
                lines.append("")
                lines.append("saved: \(Self.totals(done))")
            }
        } else {
            lines.append("dry run: nothing deleted")
        }
        if let undone, let done {
            if undone.deleted == done.deleted && undone.nullified == done.nullified {
                lines.append("undone and saved: \(Self.count(done.deletedCount, "object")) back with their keys; deleting again would take the same")
            } else {
                lines.append("undone and saved, but deleting again would now take:")
                lines += Self.table(undone)
            }
        }
        return lines.map(ControlCharacters.escaped).joined(separator: "\n") + "\n"
    }

    private static func totals(_ plan: DeletionPlan) -> String {
        let references = plan.nullified.values.reduce(0, +)
        return "\(count(plan.deletedCount, "object")) deleted, \(count(references, "reference")) nullified"
    }

    /// Deleted per entity and nullified per relationship, each sorted by name and totalled.
    private static func table(_ plan: DeletionPlan) -> [String] {
        var rows = [["deleted", "objects"]]
        rows += plan.deleted.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }
        rows.append(["total", String(plan.deletedCount)])
        rows.append(["", ""])
        rows.append(["nullified", "references"])
        rows += plan.nullified.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }
        rows.append(["total", String(plan.nullified.values.reduce(0, +))])
        return columns(rows).map { $0.allSatisfy(\.isWhitespace) ? "" : "  " + $0 }
    }

    /// `1 object`, `2 objects`.
    private static func count(_ number: Int, _ singular: String) -> String {
        "\(number) \(singular)\(number == 1 ? "" : "s")"
    }

    /// Rows in two columns, the name padded, the count right-aligned.
    private static func columns(_ rows: [[String]]) -> [String] {
        let widths = (0..<2).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row[0].padding(toLength: widths[0], withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: widths[1] - row[1].count) + row[1]
        }
    }

    // MARK: JSON

    private struct JSONReport: Encodable {
        struct Blocker: Encodable {
            let object: String
            let relationship: String
            let count: Int
        }

        struct Shortfall: Encodable {
            let relationship: String
            let reason: String
            let count: Int
            let first: String
        }

        let target: String
        let deleted: [String: Int]
        let nullified: [String: Int]
        let denied: [Blocker]
        /// Survivors the delete would leave invalid, by relationship (the save would fail validation).
        let shortfalls: [Shortfall]
        let saved: Bool
        /// With `--undo`: the plan after the undo was saved.
        let undone: Undone?

        struct Undone: Encodable {
            let deleted: [String: Int]
            let nullified: [String: Int]
        }
    }

    /// `{"target":…, "deleted":{…}, "nullified":{…}, "denied":[{"object","relationship","count"}],
    /// "shortfalls":[{"relationship","reason","count","first"}], "saved":…}`,
    /// keys sorted. `deleted` and `nullified` are what the save did when `saved` is true, else what the plan says.
    func json() throws(CommandFailure) -> String {
        let counts = done ?? plan
        let value = JSONReport(
            target: target, deleted: counts.deleted, nullified: counts.nullified,
            denied: isRefused ? plan.denied.map { .init(object: $0.object, relationship: "\($0.entity).\($0.relationship)", count: $0.count) } : [],
            shortfalls: isRefused ? plan.shortfalls.map { .init(relationship: "\($0.entity).\($0.relationship)", reason: $0.reason, count: $0.count, first: $0.first) } : [],
            saved: saved, undone: undone.map { .init(deleted: $0.deleted, nullified: $0.nullified) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
        } catch {
            throw CommandFailure("cannot write the report as JSON: \(error)")
        }
    }
}

/// Long work's progress on stderr, when it is a terminal: one line, redrawn in place every 100 ms once the work has
/// run for 200 ms (as the browser shows it), and erased when the work ends. Nothing is written to a pipe or file.
final class StderrProgress {
    static let shownAfter = Duration.milliseconds(200)
    private var drawn = false

    /// Reports `context`'s long work on stderr, when stderr is a terminal; nil otherwise.
    static func onTerminal(for context: ObjectContext) -> StderrProgress? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        let line = StderrProgress()
        context.progressInterval = .milliseconds(100)
        context.progressHandler = { progress in
            line.show(progress)
            return true
        }
        return line
    }

    func show(_ progress: WorkProgress) {
        guard progress.elapsed >= Self.shownAfter else { return }
        drawn = true
        Output.writeError("\r\u{1B}[2K\(progress)")
    }

    func erase() {
        if drawn { Output.writeError("\r\u{1B}[2K") }
        drawn = false
    }
}
