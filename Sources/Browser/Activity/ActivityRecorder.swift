import GraphStore
import Synchronization

/// Collects a hub's events as they are emitted, on whatever thread emits them, until the browser drains them.
///
/// ```swift
/// let recorder = ActivityRecorder()
/// recorder.attach(to: coordinator.events)
/// _ = try context.fetch(FetchRequest(entityName: "Chat"))
/// recorder.drain()   // the fetch's statement and fetch events, in the order they were emitted
/// ```
/// The observer only appends to an inbox under a lock: the hub calls it on its hot paths (every row-cache hit).
public final class ActivityRecorder: Sendable {
    private struct Attachment: Sendable {
        let hub: EventHub
        let token: EventHub.ObserverToken
    }

    private let inbox = Mutex<[GraphEventRecord]>([])
    private let attachment = Mutex<Attachment?>(nil)

    public init() {}

    /// Starts recording `hub`'s events; a recorder observes one hub at a time, so it leaves any previous one.
    public func attach(to hub: EventHub) {
        detach()
        // Weak: the hub holds its observers, and a recorder nobody keeps should not live on through it.
        let token = hub.addObserver { [weak self] record in
            self?.inbox.withLock { $0.append(record) }
        }
        attachment.withLock { $0 = Attachment(hub: hub, token: token) }
    }

    /// Stops recording; records already in the inbox stay there until drained.
    public func detach() {
        guard let previous = attachment.withLock({ $0.take() }) else { return }
        previous.hub.removeObserver(previous.token)
    }

    /// The records collected since the last drain, oldest first; the inbox is empty afterwards.
    public func drain() -> [GraphEventRecord] {
        inbox.withLock { records in
            var taken: [GraphEventRecord] = []
            swap(&taken, &records)
            return taken
        }
    }
}
