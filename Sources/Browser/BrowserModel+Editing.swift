import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// The delete-cascade demo: preview from the deletion plan, delete in the context, save, undo and redo.
extension BrowserModel {
    /// The object `d` would delete in the focused pane, and how to name it.
    /// What the selection would delete, named so that same-titled chats can be told apart: the kind, the members
    /// and the last message's time, and the key `faultline delete` takes for it (`--chat 42`).
    private func deletionTarget() -> (ManagedObject, String)? {
        func when(_ date: Date?) -> String { date.map { "\(TimeText.day($0)) \(TimeText.clock($0))" } ?? "never" }
        switch state.focus {
        case .chats:
            guard let chats, state.chatList.selected < chats.count else { return nil }
            let chat = chats[state.chatList.selected]
            let typed = chat as? Chat
            let title = DisplayWidth.truncate(Self.oneLine(typed?.title ?? ""), width: 40)
            let kind = (typed as? GroupChat).map { "group of \(ActivityFormat.count($0.membersCount, "member"))" } ?? "direct chat"
            let last = when(typed?.lastMessageAt)
            return (chat, "chat '\(title)' (\(kind), last message \(last); faultline delete --chat \(chat.objectID.primaryKey))")
        case .messages:
            guard let messages, let open = state.openChat, open.selected < messages.count else { return nil }
            let message = messages[open.selected]
            let text = DisplayWidth.truncate(Self.contentLine(message), width: 30)
            let typed = message as? Message
            let sender = typed?.sender?.name ?? "(deleted user)"
            let sent = when(typed?.sentAt)
            return (message, "message '\(text)' (\(DisplayWidth.truncate(Self.oneLine(sender), width: 24)), \(sent); "
                        + "faultline delete --message \(message.objectID.primaryKey))")
        case .members:
            guard let open = state.openChat, open.memberSelected < members.count else { return nil }
            let member = members[open.memberSelected]
            let name = (member as? ChatMember)?.user?.name ?? "?"
            return (member, "membership of \(DisplayWidth.truncate(Self.oneLine(name), width: 24)) in '\(DisplayWidth.truncate(open.title, width: 30))'")
        case .sqlLog:
            return nil
        }
    }

    /// Why nothing can be saved: `--read-only`, or a store file this process cannot write; nil when it can.
    private var readOnlyRefusal: String? {
        if state.settings.readOnly { return "read-only" }
        guard coordinator.store.isReadOnly else { return nil }
        let name = (coordinator.store.path as NSString).lastPathComponent
        return "read-only: \(name) cannot be written (\(coordinator.store.readOnlyReason ?? "opened read-only"))"
    }

    func previewDelete() {
        if let refusal = readOnlyRefusal {
            state.message = state.settings.readOnly
                ? "read-only: deletes are refused (browse without --read-only to delete)"
                : "\(refusal); deletes are refused"
            state.messageIsError = true
            return
        }
        guard let (object, name) = deletionTarget() else {
            state.message = "nothing to delete here"
            return
        }
        do {
            let plan = try withProgress { () throws(ContextError) in try context.deletionPlan(for: [object]) }
            state.overlay = .deletePreview(DeletePreview(target: name, plan: plan))
            pendingDeletion = object
        } catch .cancelled {
            pendingDeletion = nil
            state.message = "preview cancelled"
        } catch {
            state.message = "delete preview: \(error)"
            state.messageIsError = true
        }
    }

    /// Runs long work with the context reporting its progress: once the work has run for the settings'
    /// `progressAfterMilliseconds`, `state.progress` holds it and `onProgress` is called (then every 100 ms, and
    /// with no delay at most every 50 ms) to draw it and read keys; its answer cancels a delete preview. `state.progress` is nil again afterwards.
    func withProgress<T>(_ work: () throws(ContextError) -> T) throws(ContextError) -> T {
        let threshold = Duration.milliseconds(max(0, state.settings.progressAfterMilliseconds))
        context.progressInterval = min(threshold, .milliseconds(100))
        // With no delay the context reports after every statement: the screen is drawn at most every 50 ms.
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
            context.undoGroup(named: "Delete \(preview.target)") {
                context.delete(object)
                context.processPendingChanges()
            }
            reloadAll()
            state.message = "deleted \(preview.target) and \(total - 1) more in memory: w saves (set-based), u undoes"
        default:
            return
        }
    }

    func save() {
        if let refusal = readOnlyRefusal {
            state.message = "\(refusal); nothing is saved"
            state.messageIsError = true
            return
        }
        guard context.hasChanges else {
            state.message = "nothing to save"
            return
        }
        do {
            try withProgress { () throws(ContextError) in try context.save() }
            let deleted = context.lastDeletion.map { ", deleted \($0.deletedCount) rows set-based" } ?? ""
            state.message = "saved\(deleted)"
            reloadAll()
        } catch {
            state.message = "save failed: \(error)"
            state.messageIsError = true
        }
    }

    /// Undo before a save restores the context's unsaved changes; after a save it writes the reverse at once (the
    /// undone step was saved, so is its undo: the chat comes back in the store, with its messages and counts).
    func undo() {
        guard context.canUndo, let name = context.undoActionName else {
            state.message = "nothing to undo"
            return
        }
        context.undo()
        writeQueuedReverse(done: "undid '\(name)'", failed: "could not undo '\(name)'")
    }

    func redo() {
        guard context.canRedo, let name = context.redoActionName else {
            state.message = "nothing to redo"
            return
        }
        context.redo()
        writeQueuedReverse(done: "redid '\(name)'", failed: "could not redo '\(name)'")
    }

    /// Writes what an undo or redo of a saved step changes back; `done` and `failed` say which it was.
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
        reloadAll()
    }
}
