import ArgumentParser
import ChatFixture
import Foundation
import GraphStore

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

    @Argument(help: "The chat store (default: the default chat store, fixtures/chat.sqlite, generated if missing).")
    var store: String?

    @Option(help: ArgumentHelp("Messages per second; 0 for as fast as the store takes them.", valueName: "n"))
    var rate: Double = 3

    @Option(help: ArgumentHelp("Stop after this many messages (default: run until stopped).", valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("The seed of the chats, senders and texts drawn.", valueName: "n"))
    var seed: UInt64 = 1

    @OptionGroup var sqlDebug: SQLDebugOptions

    func validate() throws {
        if !rate.isFinite || rate < 0 { throw ValidationError("--rate must be 0 (as fast as possible) or more messages per second, not \(rate)") }
        // The pause between messages is a whole number of nanoseconds: a rate so low it overflows one is refused.
        if rate > 0, !(1e9 / rate <= 1e18) { throw ValidationError("--rate must be 0 or at least 0.000000001 messages per second, not \(rate)") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1, not \(count)") }
    }

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
            // One write per line, unbuffered: the line is out before the next delivery starts.
            FileHandle.standardOutput.write(Data(Self.line(delivery, coordinator: coordinator).utf8))
        }
    }

    /// `saved <message URI> chat <chat key> <text>` and a line break.
    static func line(_ delivery: Delivery, coordinator: PersistentStoreCoordinator) -> String {
        "saved \(coordinator.uri(for: delivery.message)) chat \(delivery.chat.primaryKey) \(delivery.text)\n"
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
        do {
            coordinator = try PersistentStoreCoordinator(
                path: path, model: model, options: .init(readOnly: false, createIfMissing: false, requireWritable: true),
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
