import Foundation
import GraphStore

/// The levers the browser lets you pull while you watch the SQL: batching, prefetching, derived counts.
///
/// ```swift
/// var settings = BrowserSettings()
/// settings.prefetch = settings.prefetch.next    // joined → off → Core Data's IN statements → joined
/// ```
public struct BrowserSettings: Equatable, Sendable {
    /// How the chat list and the messages load related objects.
    public enum Prefetch: String, Equatable, Sendable, CaseIterable {
        /// Related rows joined into the fetch's own statement (Faultline's way; the default).
        case joined
        /// No prefetching: each related object is a fault, fired one by one (the N+1 Core Data users meet).
        case off
        /// Core Data's way: one `… WHERE Z_PK IN (…)` statement per key path after the fetch.
        case separate

        /// The next step of the `p` cycle.
        public var next: Prefetch {
            switch self {
            case .joined: .off
            case .off: .separate
            case .separate: .joined
            }
        }

        public var label: String {
            switch self {
            case .joined: "joined"
            case .off: "off"
            case .separate: "IN statements"
            }
        }
    }

    /// Rows per batch of the chat list's and the messages' fetches (0: no batching, everything at once).
    public var batchSize = 20
    /// `.windowed` reads the IDs a window at a time (Faultline's way); `.faithful` reads every ID first, as Core Data.
    public var batchingMode = FetchRequest.BatchingMode.windowed
    public var prefetch = Prefetch.joined
    /// Member counts from the stored derived count (`membersCount`); off, counting fires the `members` relationship.
    public var derivedCounts = true
    /// Whether each pane's fetch reads only the properties its rows draw (`propertiesToFetch`: partial objects);
    /// off, whole rows.
    public var drawnColumnsOnly = true
    /// Refuse deletes and saves.
    public var readOnly = false
    /// How long a save, an undo or redo after a save, or a delete preview runs before the status line shows its
    /// progress (`--progress-after`), in milliseconds.
    public var progressAfterMilliseconds = 200
    /// How long the store's connections wait for another connection's lock (`FAULTLINE_BUSY_TIMEOUT`).
    public var busyTimeout = PersistentStore.standardBusyTimeout

    public init(batchSize: Int = 20, prefetch: Prefetch = .joined, derivedCounts: Bool = true, drawnColumnsOnly: Bool = true, readOnly: Bool = false,
                progressAfterMilliseconds: Int = 200, busyTimeout: TimeInterval = PersistentStore.standardBusyTimeout) {
        self.drawnColumnsOnly = drawnColumnsOnly
        self.busyTimeout = busyTimeout
        self.batchSize = batchSize
        self.prefetch = prefetch
        self.derivedCounts = derivedCounts
        self.readOnly = readOnly
        self.progressAfterMilliseconds = progressAfterMilliseconds
    }

    /// The delays `--progress-after` takes: up to a minute.
    public static let progressAfterRange = 0...60_000

    /// The batch sizes `--batch-size` and a script's `batch N` take: more rows than any store's list holds would only
    /// risk overflowing the fetch's arithmetic.
    public static let batchSizeRange = 0...1_000_000

    /// The batch sizes `b` cycles through.
    public static let batchSizes = [0, 20, 100]

    /// The next batch size of the `b` cycle (off → 20 → 100 → off; any other size goes to the first above it).
    public var nextBatchSize: Int {
        Self.batchSizes.first { $0 > batchSize } ?? Self.batchSizes[0]
    }

    var batchingLabel: String {
        guard batchSize > 0 else { return "batch off" }
        return "batch \(batchSize) " + (batchingMode == .windowed ? "windowed" : "all IDs first")
    }
}
