import ChatFixture
import Foundation
import GraphStore
import Testing

/// `fetch(_:firstReading:)`: a windowed batched result fetched again where a screen stays reads the rows from that
/// index in its first statement, and every index still gives the object the plain fetch gives.
@Suite struct BatchStartTests {
    private func request(batch: Int) -> FetchRequest {
        var request = FetchRequest(entityName: "Message", sortDescriptors: [.init("sentAt", ascending: false), .init("SELF")])
        request.fetchBatchSize = batch
        return request
    }

    @Test(arguments: [0, 1, 4, 7, 12, 30, 31, 500])
    func everyIndexIsTheSameObject(start: Int) throws {
        let store = try ChatStore()
        let context = store.fixture.context()
        let expected = try context.fetch(request(batch: 0)).map(\.objectID)
        #expect(expected.count == 31)
        var fetched: FetchedObjects?
        let first = try store.statements { fetched = try context.fetch(request(batch: 4), firstReading: start) }
        let result = try #require(fetched)
        #expect(result.count == expected.count)
        guard start < expected.count else {
            // Past the end (the result shrank since the screen was there): one empty read, then the count.
            #expect(first.map(\.rows) == [0, 1], "\(first.map(\.sql))")
            #expect(result.map(\.objectID) == expected)
            return
        }
        // The first statement read the batch from `start`; a full batch leaves the total to a count.
        let rows = min(4, expected.count - start)
        #expect(first.map(\.rows) == (rows < 4 ? [rows] : [rows, 1]), "\(first.map(\.sql))")
        let window = "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT, t0.ZSENTAT, t0.ZKIND, t0.ZISEDITED, t0.ZCHAT, t0.Z2_CHAT, t0.ZSENDER, "
            + "t0.ZREPLYTO, t0.ZFORWARDEDFROM, t0.ZLASTMESSAGEOF, t0.Z2_LASTMESSAGEOF FROM ZMESSAGE t0 ORDER BY t0.ZSENTAT DESC, t0.Z_PK "
            + (start > 0 ? "LIMIT 4 OFFSET \(start)" : "LIMIT 4")
        #expect(first.map(\.sql) == (rows < 4 ? [window] : [window, "SELECT COUNT(*) FROM ZMESSAGE t0"]))
        // Reading the rows from `start` on needs no statement.
        let reads = store.statements {
            for index in start..<(start + rows) { _ = result[index].value(forKey: "text") }
        }
        #expect(reads.isEmpty, "\(reads.map(\.sql))")
        #expect(result.map(\.objectID) == expected)
    }
}
