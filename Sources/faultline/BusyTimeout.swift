import Foundation
import GraphStore

/// `FAULTLINE_BUSY_TIMEOUT=SECONDS`: how long a command waits for a store another connection has locked before it
/// gives up with `error: <store>: the database is locked by another connection (still busy after N s)`. 5 seconds
/// when unset. Read from the environment, which nothing in the process changes, and passed to every store opened.
///
/// Only what opens a store reads it: `--help`, `model MODEL_FILE`, `fixture`, `bench` and `scenario` run whatever
/// the variable holds. Commands that take a store (`OpensStore`) check it before anything else, so a bad value
/// fails before the default store is made; the store-opening code reads it through `seconds()`, which checks again.
enum BusyTimeout {
    static let variable = "FAULTLINE_BUSY_TIMEOUT"
    /// Longer than anyone waits at a prompt; a typo of a few zeros is refused rather than waited out.
    static let maximum: TimeInterval = 3600

    /// The timeout the environment asks for; an unusable value is an error. Only a plain decimal number is taken
    /// (`5`, `0.25`; spaces around it are ignored): `Double` alone would also read `0x10` as 16, `1e3`, `+5` and
    /// `inf`, none of which anyone means as a number of seconds.
    static func parse(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) -> TimeInterval {
        guard let text = environment[variable] else { return PersistentStore.standardBusyTimeout }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard isPlainDecimal(trimmed), let seconds = Double(trimmed), seconds.isFinite, (0...maximum).contains(seconds) else {
            throw CommandFailure("\(variable) must be a number of seconds from 0 to \(Int(maximum)), not '\(text)'")
        }
        return seconds
    }

    /// The timeout for a store about to be opened.
    static func seconds() throws(CommandFailure) -> TimeInterval {
        try parse()
    }

    /// Digits, then optionally a point and more digits: `5`, `0.5`, `10.25`.
    static func isPlainDecimal(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && parts.allSatisfy { part in
            !part.isEmpty && part.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
        }
    }
}

/// A command that opens a store (or may: with no store given, the default one, made if missing). `Faultline.main`
/// checks `FAULTLINE_BUSY_TIMEOUT` before running one; other commands never read it.
protocol OpensStore {}

extension Faultline: OpensStore {}
extension CheckCommand: OpensStore {}
extension DeleteCommand: OpensStore {}
extension TraceCommand: OpensStore {}
extension BrowseCommand: OpensStore {}
extension SimulateCommand: OpensStore {}
