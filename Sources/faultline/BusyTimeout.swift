import Foundation
import GraphStore

/// `FAULTLINE_BUSY_TIMEOUT=SECONDS`: how long a command waits for a store another connection has locked before it
/// gives up with `error: <store>: the database is locked by another connection (still busy after N s)`. 5 seconds
/// when unset. Read from the environment, which nothing in the process changes, and passed to every store opened.
enum BusyTimeout {
    static let variable = "FAULTLINE_BUSY_TIMEOUT"
    /// Longer than anyone waits at a prompt; a typo of a few zeros is refused rather than waited out.
    static let maximum: TimeInterval = 3600

    /// The timeout the environment asks for; an unusable value is an error.
    static func parse(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) -> TimeInterval {
        guard let text = environment[variable] else { return PersistentStore.standardBusyTimeout }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let seconds = Double(trimmed), seconds.isFinite, (0...maximum).contains(seconds) else {
            throw CommandFailure("\(variable) must be a number of seconds from 0 to \(Int(maximum)), not '\(text)'")
        }
        return seconds
    }

    /// The timeout for this run: `parse()` checked the variable before any command ran, so this cannot fail.
    static var seconds: TimeInterval {
        (try? parse()) ?? PersistentStore.standardBusyTimeout
    }
}
