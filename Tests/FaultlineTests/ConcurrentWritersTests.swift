import Foundation
import Testing

/// Two `faultline` processes writing one store at once: two `simulate`s delivering into the same few chats, two
/// `delete`s of the same object. Real processes on a real file; what each says is held against the rows.
@Suite struct ConcurrentWritersTests {
    /// A generated chat store with few chats, so that concurrent writers keep meeting in the same ones.
    private static func makeStore(in folder: TemporaryFolder, chats: Int = 4, messages: Int = 200) throws -> String {
        let path = folder.path("chat.sqlite")
        let made = try FaultlineBinary.run(["fixture", "generate", "--out", path, "--users", "30", "--chats", String(chats), "--messages", String(messages)])
        try #require(made.status == 0, "fixture generate: \(made.stderr)")
        return path
    }

    /// Rows from the sqlite3 shell, columns joined by `|`.
    private static func sql(_ path: String, _ query: String) throws -> [String] {
        try FaultlineBinary.sqliteRows(path, query)
    }

    /// Runs the binary on another thread; `wait()` gives its result.
    private final class Running: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<FaultlineBinary.Result, any Error>?

        init(_ arguments: [String]) {
            Thread.detachNewThread { [self] in
                result = Result { try FaultlineBinary.run(arguments) }
                done.signal()
            }
        }

        func wait() throws -> FaultlineBinary.Result {
            done.wait()
            guard let result else { throw CocoaError(.executableLoad) }
            return try result.get()
        }
    }

    /// Two simulates, the second started while the first runs: every chat's last message is its newest message, its
    /// lastMessageAt that message's time, and no message is dated after the moment both had finished.
    @Test func twoSimulatesNeverMoveAChatsLastMessageBackOrDateAhead() throws {
        let folder = TemporaryFolder()
        let store = try Self.makeStore(in: folder)
        let before = try Int(#require(Self.sql(store, "SELECT MAX(Z_PK) FROM ZMESSAGE").first)) ?? 0

        let first = Running(["simulate", store, "--rate", "25", "--count", "40", "--seed", "1"])
        Thread.sleep(forTimeInterval: 0.4)
        let second = Running(["simulate", store, "--rate", "25", "--count", "40", "--seed", "2"])
        let results = try [first.wait(), second.wait()]
        let finished = Date().timeIntervalSinceReferenceDate
        for result in results {
            #expect(result.status == 0, "simulate: \(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == 40)
        }

        // Per chat: lastMessageAt | the last message's sentAt | the newest sentAt among the chat's messages.
        let chats = try Self.sql(store, """
            SELECT c.Z_PK, c.ZLASTMESSAGEAT, (SELECT ZSENTAT FROM ZMESSAGE WHERE Z_PK = c.ZLASTMESSAGE),
                   (SELECT MAX(ZSENTAT) FROM ZMESSAGE WHERE ZCHAT = c.Z_PK)
            FROM ZCHAT c
            """)
        #expect(chats.count == 4)
        for row in chats {
            let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            #expect(fields.count == 4 && fields[1] == fields[2] && fields[2] == fields[3],
                    "chat \(fields[0]): lastMessageAt, its last message's time and its newest message's time differ: \(row)")
        }
        let newest = try Double(#require(Self.sql(store, "SELECT MAX(ZSENTAT) FROM ZMESSAGE WHERE Z_PK > \(before)").first)) ?? .infinity
        #expect(newest <= finished, "a simulated message is dated \(newest - finished) s after both runs had finished")
    }

    /// Two deletes of the same message at once, several times over: exactly one deletes it and says so; the other
    /// says it found nothing to delete (an error, exit 1), never that it deleted it too.
    @Test func ofTwoConcurrentDeletesOnlyTheOneThatDeletedSaysSo() throws {
        let folder = TemporaryFolder()
        let store = try Self.makeStore(in: folder, chats: 3, messages: 60)
        for key in [10, 20, 30, 40, 50, 60] {
            let count = try Self.sql(store, "SELECT COUNT(*) FROM ZMESSAGE").first
            let runs = [Running(["delete", store, "--message", String(key)]), Running(["delete", store, "--message", String(key)])]
            let results = try runs.map { try $0.wait() }
            let winners = results.filter { $0.status == 0 }
            let losers = results.filter { $0.status != 0 }
            #expect(winners.count == 1 && losers.count == 1, "message \(key): exits \(results.map(\.status)); \(results.map(\.stderr))")
            for winner in winners {
                #expect(winner.stdout.contains("saved: "), "\(winner.stdout)")
            }
            for loser in losers {
                #expect(loser.status == 1)
                #expect(!loser.stdout.contains("saved"), "message \(key): the losing delete says it saved:\n\(loser.stdout)")
                #expect(loser.stderr.hasPrefix("error: ") && loser.stderr.split(separator: "\n").count == 1, "\(loser.stderr)")
                #expect(loser.stderr.contains("Message") && loser.stderr.contains("\(key)"), "\(loser.stderr)")
            }
            let after = try Self.sql(store, "SELECT COUNT(*) FROM ZMESSAGE").first
            #expect(Int(after ?? "") == Int(count ?? "").map { $0 - 1 }, "message \(key): \(count ?? "?") rows before, \(after ?? "?") after")
        }
    }
}
