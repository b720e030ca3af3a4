import ArgumentParser
import ChatFixture
import Foundation
import GraphStore
import TerminalText

/// `faultline simulate [STORE] [--rate N] [--count N] [--seed N]`: incoming messages, saved one at a time, each
/// reported on stdout once committed.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Deliver simulated incoming messages into a chat store, one save each, as a messenger receives them.",
        discussion: """
            Each message comes from a member of a chat drawn with a skew (a few busy chats get most of them), with a \
            text from the message corpus, sent now; it becomes its chat's last message, and is saved in its own \
            transaction. After each save has committed, one line goes to stdout (flushed at once):

              saved <message URI> chat <chat key> <text>

            e.g. 'saved x-coredata://3F1A…/Message/p60001 chat 17 see you at 7'. The chat key is the chat's Z_PK; \
            the text is the rest of the line. A line is printed only for a committed save, so every message a line \
            names is in the store, even if the process is killed the moment after. The same seed on the same store \
            picks the same chats, senders and texts.

            Run 'faultline browse' in one terminal and 'faultline simulate' in another to watch messages arrive.

            Exit status: 0 after --count messages (without --count it runs until stopped), 1 when the store cannot \
            be opened or a save fails.
            """
    )

    @Argument(help: "The chat store (default: the default chat store, ~/.local/share/faultline/chat.sqlite or as 'faultline --help' says, generated if missing).")
    var store: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Messages per second, from 0.001 to 1000000; 0 for as fast as the store takes them.", valueName: "n"))
    var rate: Double = 3

    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many messages (default: run until stopped).", valueName: "n"))
    var count: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("The seed of the chats, senders and texts drawn.", valueName: "n"))
    var seed: UInt64 = 1

    @OptionGroup var sqlDebug: SQLDebugOptions

    func validate() throws {
        // Bounded so that the interval between messages (1/rate seconds, kept in nanoseconds) is always a number
        // the clock can hold: from a microsecond to 1000 seconds.
        if !rate.isFinite || rate < 0 || (rate > 0 && !(Self.rates).contains(rate)) {
            throw ValidationError("--rate must be 0 (as fast as possible) or from 0.001 to 1000000 messages per second, not \(rate)")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1, not \(count)") }
    }

    /// Rates (messages a second) `--rate` takes besides 0.
    static let rates = 0.001...1_000_000.0

    func run() throws {
        let path = try store ?? DefaultFixture.ensure()
        // Checked before opening anything, so a bad level or log file fails first; the log file itself is made only
        // once the store has opened (and never over the store), as `delete` does.
        try sqlDebug.checkLogFile(notOverwriting: [path])
        let coordinator = try Self.open(path)
        let log = try sqlDebug.attach(to: coordinator)
        defer { withExtendedLifetime(log) {} }

        let context = ObjectContext(coordinator: coordinator, name: "simulate")
        var incoming = IncomingMessages(seed: seed)
        // validate() keeps rate in `rates` (or 0): 1e9 / rate is at most 1e12 nanoseconds.
        let interval: Duration = rate > 0 ? .nanoseconds(Int64((1e9 / rate).rounded())) : .zero
        let clock = ContinuousClock()
        var due = clock.now
        var delivered = 0
        while count.map({ delivered < $0 }) ?? true {
            if interval > .zero {
                let now = clock.now
                if due > now { Thread.sleep(forTimeInterval: Self.seconds(due - now)) }
                // Behind schedule (a slow save): carry on from now rather than catching up in a burst.
                due = max(due, now) + interval
            }
            let delivery: Delivery
            do {
                delivery = try incoming.deliver(in: context)
            } catch {
                throw CommandFailure("\(path): \(error)")
            }
            delivered += 1
            // One write per line, unbuffered: the line is out before the next delivery starts. A line that cannot be
            // written (a closed stdout, a reader gone) stops the run with an error.
            try Output.write(Self.line(delivery, coordinator: coordinator))
        }
    }

    /// `saved <message URI> chat <chat key> <text>` and a line break. The URI holds the store's UUID, read from the
    /// file, and the text comes from the corpus: both escaped, so neither can break the line or forge another.
    static func line(_ delivery: Delivery, coordinator: PersistentStoreCoordinator) -> String {
        let uri = ControlCharacters.escaped(coordinator.uri(for: delivery.message))
        return "saved \(uri) chat \(delivery.chat.primaryKey) \(ControlCharacters.escaped(delivery.text))\n"
    }

    /// The store, writable; never created (a missing file is an error, not a new empty store), and refused before
    /// any connection is made when this process could not write it.
    private static func open(_ path: String) throws(CommandFailure) -> PersistentStoreCoordinator {
        let model: ObjectModel
        do {
            model = try ChatModel.make()
        } catch {
            throw CommandFailure(error)
        }
        let coordinator: PersistentStoreCoordinator
        let busyTimeout = try BusyTimeout.seconds()
        do {
            coordinator = try PersistentStoreCoordinator(
                path: path, model: model, options: .init(readOnly: false, createIfMissing: false, requireWritable: true, busyTimeout: busyTimeout),
                classes: ChatModel.classes)
        } catch {
            throw CommandFailure(error)
        }
        if coordinator.store.isReadOnly {
            throw CommandFailure(StoreError.readOnly(path: path))
        }
        return coordinator
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
