import Foundation
import GraphStore
import TerminalText

/// Deleting by the model's delete rules (a preview first), saving, undo and redo: only on a store opened for
/// writing (`--write`); read-only, these keys are not offered and are refused.
extension EntityBrowserModel {
    /// Why nothing can be written, or nil when the store can be.
    private var readOnlyRefusal: String? {
        if state.settings.readOnly { return "read-only" }
        guard coordinator.store.isReadOnly else { return nil }
        return "read-only (\(coordinator.store.readOnlyReason ?? "opened read-only"); --write opens it for writing)"
    }

    /// The object `d` would delete: the selected one of a list, or the one shown.
    private func deletionTarget() -> ManagedObject? {
        switch state.focus {
        case .objects:
            guard let list = currentList, list.selected < list.objects.count else { return nil }
            return list.objects.object(at: list.selected)
        case .object:
            return currentObject?.object
        case .entities, .sqlLog:
            return nil
        }
    }

    func previewDelete() {
        if let refusal = readOnlyRefusal {
            state.message = "\(refusal): deletes are refused"
            state.messageIsError = true
            return
        }
        guard let object = deletionTarget() else {
            state.message = "nothing to delete here: select an object"
            return
        }
        do {
            let plan = try withProgress { () throws(ContextError) in try context.deletionPlan(for: [object]) }
            let name = DisplayWidth.truncate(ObjectNames.label(object), width: 48)
            state.overlay = .deletePreview(DeletePreview(target: "\(name) (\(object.uriRepresentation))", plan: plan))
            pendingDeletion = object
        } catch .cancelled {
            pendingDeletion = nil
            state.message = "preview cancelled"
        } catch {
            state.message = "delete preview: \(error)"
            state.messageIsError = true
        }
    }

    func confirm() {
        switch state.overlay {
        case .confirmQuit:
            context.rollback()
            state.overlay = .none
            state.quitRequested = true
        case .deletePreview(let preview):
            state.overlay = .none
            if let refusal = preview.refusal {
                state.message = refusal
                state.messageIsError = true
                return
            }
            guard let object = pendingDeletion else { return }
            pendingDeletion = nil
            let total = preview.deleted.reduce(0) { $0 + $1.1 }
            context.undoGroup(named: "Delete \(ObjectNames.key(object))") {
                context.delete(object)
                context.processPendingChanges()
            }
            afterChange()
            state.message = "deleted \(preview.target) and \(ActivityFormat.count(total - 1)) more in memory: w saves, u undoes"
        default:
            return
        }
    }

    func save() {
        if let refusal = readOnlyRefusal {
            state.message = "\(refusal): nothing is saved"
            state.messageIsError = true
            return
        }
        guard context.hasChanges else {
            state.message = "nothing to save"
            return
        }
        do {
            try withProgress { () throws(ContextError) in try context.save() }
            let deleted = context.lastDeletion.map { ", deleted \(ActivityFormat.count($0.deletedCount, "row")) set-based" } ?? ""
            state.message = "saved\(deleted)"
            afterChange()
        } catch {
            state.message = "save failed: \(error)"
            state.messageIsError = true
        }
    }

    func undo() { reverse(undoing: true) }

    func redo() { reverse(undoing: false) }

    /// Undoes or redoes the last step, written at once when it was a saved one.
    private func reverse(undoing: Bool) {
        let verb = undoing ? "undo" : "redo"
        if let refusal = readOnlyRefusal {
            state.message = "\(refusal): nothing to \(verb)"
            state.messageIsError = true
            return
        }
        guard undoing ? context.canUndo : context.canRedo, let name = undoing ? context.undoActionName : context.redoActionName else {
            state.message = "nothing to \(verb)"
            return
        }
        if undoing { context.undo() } else { context.redo() }
        writeQueuedReverse(done: "\(undoing ? "undid" : "redid") '\(name)'", failed: "could not \(verb) '\(name)'")
    }

    /// An undo or redo of a saved step is written at once, as the chat browser does.
    private func writeQueuedReverse(done: String, failed: String) {
        if context.pendingUndoNames.isEmpty {
            state.message = done
        } else {
            do {
                try withProgress { () throws(ContextError) in try context.save() }
                state.message = done + " and saved it"
            } catch {
                context.rollback()
                state.message = failed + ": \(error)"
                state.messageIsError = true
            }
        }
        afterChange()
    }

    /// After the graph changed: steps showing deleted objects leave the path, counts are counted again, and what
    /// is on screen is read again.
    private func afterChange() {
        graphChanged()
        let firstGone = path.firstIndex { level in
            switch level {
            case .object(let shown): shown.object.isDeleted
            case .list(let list):
                if case .members(let owner, _) = list.source { owner.isDeleted } else { false }
            }
        }
        if let firstGone {
            path.removeSubrange(firstGone...)
            if path.isEmpty {
                state.focus = .entities
            } else if state.focus != .sqlLog {
                state.focus = mainFocus ?? .entities
            }
        }
        fillVisibleRows()
    }

    /// Runs long work with the context reporting its progress, as the chat browser does: once it has run for the
    /// settings' `progressAfterMilliseconds`, `state.progress` holds it and `onProgress` draws it (at most every 50
    /// ms); its answer cancels a delete preview.
    func withProgress<T>(_ work: () throws(ContextError) -> T) throws(ContextError) -> T {
        let threshold = Duration.milliseconds(max(0, state.settings.progressAfterMilliseconds))
        context.progressInterval = min(threshold, .milliseconds(100))
        var lastShown: ContinuousClock.Instant?
        context.progressHandler = { [unowned self] progress in
            guard progress.elapsed >= threshold else { return true }
            let now = ContinuousClock.now
            if let lastShown, now - lastShown < .milliseconds(50) { return true }
            lastShown = now
            state.progress = progress
            return onProgress?(state) ?? true
        }
        defer {
            context.progressHandler = nil
            state.progress = nil
        }
        return try work()
    }
}
