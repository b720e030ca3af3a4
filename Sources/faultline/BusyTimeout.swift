import Foundation
import GraphStore

/// `FAULTLINE_BUSY_TIMEOUT=SECONDS`: how long a command waits for a store another connection has locked before it
/// gives up with `error: <store>: the database is locked by another connection (still busy after N s)`. 5 seconds
/// when unset.
enum BusyTimeout {
    static let variable = "FAULTLINE_BUSY_TIMEOUT"
    /// Longer than anyone waits at a prompt; a typo of a few zeros is refused rather than waited out.
    static let maximum: TimeInterval = 3600

    /// Sets GraphStore's default busy timeout from the environment; an unusable value is an error.
    static func applyEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) {
        guard let text = environment[variable] else { return }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let seconds = Double(trimmed), seconds.isFinite, (0...maximum).contains(seconds) else {
            throw CommandFailure("\(variable) must be a number of seconds from 0 to \(Int(maximum)), not '\(text)'")
        }
        PersistentStore.defaultBusyTimeout = seconds
    }
}
