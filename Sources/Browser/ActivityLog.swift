import GraphStore
import TerminalText

/// The browser's recording of the graph's activity: an `ActivityMonitor` fed action by action from the coordinator's
/// events. The views draw the monitor, a value (`ActivityPanes`).
public final class ActivityLog {
    private let recorder = ActivityRecorder()
    public private(set) var monitor: ActivityMonitor
    /// Seconds from a fixed origin, read as each action ends (the sparklines count per whole second).
    private let clock: () -> Double

    /// - Parameter clock: seconds from any fixed origin, read as each action ends; nil for the monotonic clock,
    ///   counted from now. Tests pass a constant so that the sparklines do not depend on how fast they run.
    init(coordinator: PersistentStoreCoordinator, clock: (() -> Double)? = nil, logCapacity: Int = ActivityMonitor.defaultLogCapacity) {
        recorder.attach(to: coordinator.events)
        monitor = ActivityMonitor(model: coordinator.model, recorder: recorder, logCapacity: logCapacity)
        if let clock {
            self.clock = clock
        } else {
            let origin = ContinuousClock.now
            self.clock = {
                let elapsed = (ContinuousClock.now - origin).components
                return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            }
        }
    }

    deinit { recorder.detach() }

    func begin(_ action: String, scope: ActivityScope) {
        monitor.begin(action: action, scope: scope)
    }

    /// What runs from now on in the current action is `scope`'s.
    func enter(_ scope: ActivityScope) {
        monitor.enter(scope)
    }

    func end(prefetchUse: [PrefetchUse], duration: Duration) {
        monitor.end(at: clock(), prefetchUse: prefetchUse, duration: duration)
    }

    func reset() { monitor.resetCounters() }
}
