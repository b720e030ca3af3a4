import ChatFixture
import Foundation
import GraphStore
import Synchronization

/// The simulated incoming-messages writer of `faultline browse --live`: a background context, confined to its
/// own actor, delivering messages across the chats (`IncomingMessages`) a few times a second. Each delivery is a
/// save of its own, which reaches the browser's context as a did-save notification to merge.
public final class LiveWriter: Sendable {
    private let task: Task<Void, Never>
    private let progress: Progress

    /// What the writer has done, shared with its task.
    private final class Progress: Sendable {
        let state = Mutex<(delivered: Int, error: String?)>((0, nil))
    }

    /// - Parameter rate: deliveries per second.
    init(coordinator: PersistentStoreCoordinator, rate: Double, seed: UInt64) {
        let progress = Progress()
        self.progress = progress
        let writer = ContextActor(coordinator: coordinator, name: "live writer")
        // At most 10 s between deliveries: `max` keeps 0.1 for a rate below it, and for NaN (Swift's `max` returns its
        // first argument when the comparison fails), so the milliseconds are always 0…10000.
        let pause = Duration.milliseconds(Int(1_000 / max(0.1, rate)))
        task = Task.detached {
            var incoming = IncomingMessages(seed: seed)
            while !Task.isCancelled {
                try? await Task.sleep(for: pause)
                guard !Task.isCancelled else { break }
                let current = incoming
                do {
                    incoming = try await writer.perform { context in
                        var next = current
                        _ = try next.deliver(in: context)
                        // The writer keeps nothing between deliveries: each reads its chat afresh.
                        context.reset()
                        return next
                    }
                    progress.state.withLock { $0.delivered += 1 }
                } catch {
                    progress.state.withLock { $0.error = "\(error)" }
                }
            }
        }
    }

    deinit { task.cancel() }

    /// Stops after the delivery under way, if any.
    public func stop() { task.cancel() }

    /// Messages delivered so far.
    public var delivered: Int { progress.state.withLock { $0.delivered } }

    /// The failure of a delivery since the last call, if any (the latest, when several failed); the browser shows it.
    public func takeError() -> String? {
        progress.state.withLock { state in
            defer { state.error = nil }
            return state.error
        }
    }
}
