import Foundation
import GraphStore
import Testing

/// `faultline simulate` killed with SIGKILL at 20 moments, most of them inside a save: after each kill the store
/// passes `faultline check`, and holds every message the process reported as saved, with its text and chat, and at
/// most one more (saved, then killed before its line went out).
@Suite struct CrashSafetyTests {
    /// One line of `simulate`'s output: `saved <message URI> chat <chat key> <text>`.
    struct Reported: Equatable {
        let uri: String
        let messageKey: Int64
        let chatKey: Int64
        let text: String

        init?(_ line: Substring) {
            let parts = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0] == "saved", parts[2] == "chat", let chat = Int64(parts[3]),
                  let last = parts[1].split(separator: "/").last, last.hasPrefix("p"), let key = Int64(last.dropFirst()) else { return nil }
            uri = String(parts[1])
            messageKey = key
            chatKey = chat
            text = String(parts[4])
        }
    }

    /// SplitMix64: the test's own seeded numbers (ChatFixture's generator is not a dependency of this target).
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let iterations = 20
    /// Kills at this many milliseconds or later are timed from the first reported save instead of the start.
    static let lateKills = 160
    /// Kill delays span 20–300 ms: iteration i draws from its own 14 ms slice, so the early kills (while the process
    /// starts and opens the store) and the late ones (hundreds of saves in) are all there, in a seeded order.
    static func delays(seed: UInt64) -> [Int] {
        var random = SplitMix(state: seed)
        var delays = (0..<iterations).map { 20 + 14 * $0 + Int(random.next() % 14) }
        for index in stride(from: delays.count - 1, to: 0, by: -1) {
            delays.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        return delays
    }

    /// The store through GraphStore, read-only: how many messages it holds, and what is wrong with each reported
    /// message (missing, other text, other chat), one line each.
    static func verify(_ reported: [Reported], path: String, model: ObjectModel) throws -> (messages: Int, problems: [String]) {
        let coordinator = try PersistentStoreCoordinator(path: path, model: model, options: .init(readOnly: true, createIfMissing: false))
        let context = ObjectContext(coordinator: coordinator, name: "verify")
        let messageEntity = try #require(model.entity(named: "Message")).number
        var problems: [String] = []
        for line in reported {
            let id = ObjectID(entityNumber: messageEntity, primaryKey: line.messageKey)
            if coordinator.uri(for: id) != line.uri { problems.append("\(line.uri): not a message URI of this store") }
            let message: ManagedObject
            do {
                message = try context.existingObject(with: id)
            } catch {
                problems.append("\(line.uri): reported saved, but not in the store (\(error))")
                continue
            }
            let text = message.value(forKey: "text") as? String
            if text != line.text { problems.append("\(line.uri): text \(text.map { "'\($0)'" } ?? "nil"), reported '\(line.text)'") }
            let chat = message.object(forKey: "chat")?.objectID.primaryKey
            if chat != line.chatKey { problems.append("\(line.uri): chat \(chat.map(String.init) ?? "nil"), reported \(line.chatKey)") }
        }
        let messages = try context.count(for: FetchRequest(entityName: "Message"))
        return (messages, problems)
    }

    @Test(.timeLimit(.minutes(2)))
    func killedMidSaveTheStoreKeepsEveryReportedMessage() throws {
        let folder = TemporaryFolder()
        let path = folder.path("chat.sqlite")
        let generated = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "60", "--chats", "20", "--messages", "2000"])
        try #require(generated.status == 0, "fixture generate: \(generated.stderr)")
        let model = try XcodeModelLoader.load(contentsOf: packageRoot.appendingPathComponent("fixtures/Chat.xcdatamodeld"))

        var messages = try Self.verify([], path: path, model: model).messages
        var reportedTotal = 0
        var killedInTheLoop = 0
        var savedButUnreported = 0
        for (iteration, delay) in Self.delays(seed: 0xC4A5_4000).enumerated() {
            let process = Process()
            process.executableURL = FaultlineBinary.url
            process.arguments = ["simulate", path, "--rate", "0", "--seed", String(iteration + 1)]
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Read as the lines arrive, so the child never waits on a full pipe.
            let stdout = StreamedOutput(out.fileHandleForReading)
            let stderr = Data.readAsync(err.fileHandleForReading)
            if delay < Self.lateKills {
                // Early kills count from the start: while the process starts, opens and checks the store.
                Thread.sleep(forTimeInterval: Double(delay) / 1000)
            } else {
                // Late ones from its first reported save, however long starting took on a busy machine.
                _ = stdout.firstOutput.wait(timeout: .now() + 30)
                Thread.sleep(forTimeInterval: Double(delay - Self.lateKills) / 1000)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let output = String(decoding: stdout.wait(), as: UTF8.self)
            let errors = String(decoding: stderr.wait(), as: UTF8.self)
            let context = "iteration \(iteration + 1), killed after \(delay) ms"
            // Still running when killed: it neither finished nor failed on its own.
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL, "\(context): \(errors)")
            #expect(errors.isEmpty, "\(context): \(errors)")

            // Whole lines only: a kill can cut the last one short, and a line cut short was not reported.
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let reported = lines.compactMap(Reported.init)
            #expect(reported.count == lines.count, "\(context): lines not in the documented format: \(lines.filter { Reported($0) == nil })")
            #expect(Set(reported.map(\.messageKey)).count == reported.count, "\(context): a message reported twice")

            let check = try FaultlineBinary.run(["check", path])
            #expect(check.status == 0, "\(context): faultline check: \(check.stdout)\(check.stderr)")

            let (after, problems) = try Self.verify(reported, path: path, model: model)
            #expect(problems.isEmpty, "\(context): \(problems.joined(separator: "; "))")
            // Every reported save is there, and at most one more: the save the kill caught after its commit and
            // before its line.
            let added = after - messages
            #expect(added == reported.count || added == reported.count + 1,
                    "\(context): \(added) messages added, \(reported.count) reported")
            if added == reported.count + 1 { savedButUnreported += 1 }
            if !reported.isEmpty { killedInTheLoop += 1 }
            reportedTotal += reported.count
            messages = after
        }
        // Most kills landed while messages were being saved, which at --rate 0 is nearly all the loop's time.
        #expect(killedInTheLoop >= Self.iterations / 2, "only \(killedInTheLoop) of \(Self.iterations) kills came after a save")
        #expect(reportedTotal > 0)
        print("crash safety: \(Self.iterations) kills, \(killedInTheLoop) during deliveries, \(reportedTotal) saves reported, "
            + "\(savedButUnreported) saved but killed before reporting")

        // The check above can fail: a reported message the store lacks, or with another text, is caught.
        let uuid = try PersistentStoreCoordinator(path: path, model: model, options: .init(readOnly: true, createIfMissing: false)).store.storeUUID
        let missing = try #require(Reported("saved x-coredata://\(uuid)/Message/p\(Int32.max) chat 1 never saved"))
        let wrongText = try #require(Reported("saved x-coredata://\(uuid)/Message/p1 chat 1 \u{1F47B} not this text"))
        #expect(try Self.verify([missing], path: path, model: model).problems.count == 1)
        #expect(try Self.verify([wrongText], path: path, model: model).problems.isEmpty == false)
    }

    @Test func delaysCoverTheRangeAndFollowTheSeed() {
        let delays = Self.delays(seed: 1)
        #expect(delays.count == Self.iterations)
        #expect(delays.min()! >= 20 && delays.min()! < 34)
        #expect(delays.max()! >= 286 && delays.max()! < 300)
        #expect(Self.delays(seed: 1) == delays)
        #expect(delays != delays.sorted())
    }
}

/// A pipe read to its end on another thread, signalling when the first bytes arrive.
final class StreamedOutput: @unchecked Sendable {
    let firstOutput = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var signalled = false
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
                if !signalled {
                    signalled = true
                    firstOutput.signal()
                }
            }
            if !signalled { firstOutput.signal() }
            done.signal()
        }
    }

    /// Everything read, once the pipe has closed.
    func wait() -> Data {
        done.wait()
        return data
    }
}
