import Foundation
import GraphStore
import Synchronization
import Testing

@Suite struct SQLDebugLogTests {
    static let entityNames = ["Person", "Chat", "Message"]
    static let store = "5A1F0C3E-2B7D-4E55-9C61-3D0F8A7B2C11"

    @Sendable static func uri(_ id: ObjectID) -> String {
        "x-coredata://\(store)/\(entityNames[id.entityNumber - 1])/p\(id.primaryKey)"
    }

    /// Every kind of line the log writes, in the order of `script`, each with the lowest level that prints it.
    static let script: [(event: GraphEvent, lines: [(level: Int, text: String)])] = [
        (
            .statement(StatementEvent(
                sql: "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZPERSON t0 WHERE t0.ZNAME = ? ORDER BY t0.ZNAME",
                arguments: [
                    .null, .integer(42), .integer(-5), .double(2.5), .double(3), .decimal(Decimal(string: "12.34")!),
                    .string("Ann"), .boolean(true), .boolean(false), .date(Date(timeIntervalSinceReferenceDate: 86400.5)),
                    .data(Data([1, 2, 3])), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
                    .uri(URL(string: "https://example.com/a?b=1")!),
                ],
                rows: 3, duration: .microseconds(420), cause: .fetch(entity: "Person"),
                queryPlan: ["SCAN t0", "USE TEMP B-TREE FOR ORDER BY"])),
            [
                (1, "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZPERSON t0 WHERE t0.ZNAME = ? ORDER BY t0.ZNAME"),
                (2, "CoreData: details: SQLite bind[0] = nil"),
                (2, "CoreData: details: SQLite bind[1] = 42"),
                (2, "CoreData: details: SQLite bind[2] = -5"),
                (2, "CoreData: details: SQLite bind[3] = 2.5"),
                (2, "CoreData: details: SQLite bind[4] = 3"),
                (2, "CoreData: details: SQLite bind[5] = 12.34"),
                (2, "CoreData: details: SQLite bind[6] = \"Ann\""),
                (2, "CoreData: details: SQLite bind[7] = 1"),
                (2, "CoreData: details: SQLite bind[8] = 0"),
                (2, "CoreData: details: SQLite bind[9] = 86400.5"),
                (2, "CoreData: details: SQLite bind[10] = <3 bytes>"),
                (2, "CoreData: details: SQLite bind[11] = E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
                (2, "CoreData: details: SQLite bind[12] = \"https://example.com/a?b=1\""),
                (4, "CoreData: details: SQLite: SCAN t0"),
                (4, "CoreData: details: SQLite: USE TEMP B-TREE FOR ORDER BY"),
                (1, "CoreData: annotation: sql connection fetch time: 0.0004s"),
                (1, "CoreData: annotation: total fetch execution time: 0.0004s for 3 rows."),
            ]
        ),
        (
            .fetch(FetchEvent(entity: "Person", rows: 3, duration: .microseconds(500))),
            []
        ),
        (
            .statement(StatementEvent(
                sql: "SELECT COUNT( DISTINCT t0.Z_PK) FROM ZPERSON t0 WHERE t0.ZAGE > ?",
                arguments: [.integer(30)], rows: 7, duration: .microseconds(160), cause: .fetch(entity: "Person"),
                queryPlan: ["SEARCH t0 USING INDEX ZPERSON_ZAGE_INDEX (ZAGE>?)"])),
            [
                (1, "CoreData: sql: SELECT COUNT( DISTINCT t0.Z_PK) FROM ZPERSON t0 WHERE t0.ZAGE > ?"),
                (2, "CoreData: details: SQLite bind[0] = 30"),
                (4, "CoreData: details: SQLite: SEARCH t0 USING INDEX ZPERSON_ZAGE_INDEX (ZAGE>?)"),
                (1, "CoreData: annotation: total count request execution time: 0.0002s for count of 7."),
            ]
        ),
        (
            .statement(StatementEvent(
                sql: "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT FROM ZMESSAGE t0 WHERE t0.Z_PK = ?",
                arguments: [.integer(11)], rows: 1, duration: .microseconds(90),
                cause: .objectFault(entity: "Message", key: "text"))),
            [
                (1, "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT FROM ZMESSAGE t0 WHERE t0.Z_PK = ?"),
                (2, "CoreData: details: SQLite bind[0] = 11"),
                (1, "CoreData: annotation: sql connection fetch time: 0.0001s"),
                (1, "CoreData: annotation: total fetch execution time: 0.0001s for 1 rows."),
            ]
        ),
        (
            .objectFault(ObjectFaultEvent(
                entity: "Message", objectID: ObjectID(entityNumber: 3, primaryKey: 11), key: "text",
                isCacheHit: false, duration: .microseconds(120))),
            [(3, "CoreData: annotation: fault fulfilled from database for : x-coredata://\(store)/Message/p11")]
        ),
        (
            .objectFault(ObjectFaultEvent(
                entity: "Person", objectID: ObjectID(entityNumber: 1, primaryKey: 7), key: "name",
                isCacheHit: true, duration: .nanoseconds(400))),
            [(3, "CoreData: annotation: fault fulfilled from row cache for : x-coredata://\(store)/Person/p7")]
        ),
        (
            .relationshipFault(RelationshipFaultEvent(
                entity: "Chat", objectID: ObjectID(entityNumber: 2, primaryKey: 3), key: "messages",
                rows: 5, duration: .microseconds(300))),
            [
                (3, "CoreData: annotation: to-many relationship fault \"messages\" for objectID x-coredata://\(store)/Chat/p3"
                    + " fulfilled from database.  Got 5 rows"),
            ]
        ),
        (
            .statement(StatementEvent(
                sql: "UPDATE ZPERSON SET ZNAME = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
                arguments: [.string("Bo"), .integer(2), .integer(7), .integer(1)],
                rows: 1, duration: .microseconds(1234), cause: .save)),
            [
                (1, "CoreData: sql: UPDATE ZPERSON SET ZNAME = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?"),
                (2, "CoreData: details: SQLite bind[0] = \"Bo\""),
                (2, "CoreData: details: SQLite bind[1] = 2"),
                (2, "CoreData: details: SQLite bind[2] = 7"),
                (2, "CoreData: details: SQLite bind[3] = 1"),
                (1, "CoreData: annotation: sql execution time: 0.0012s, 1 rows changed."),
            ]
        ),
        (
            .save(SaveEvent(inserted: 1, updated: 2, deleted: 0, statements: 3, duration: .milliseconds(5), succeeded: true)),
            [(1, "CoreData: annotation: save: 1 inserted, 2 updated, 0 deleted in 0.0050s (3 statements)")]
        ),
    ]

    static func expectedLines(atLevel level: Int) -> [String] {
        script.flatMap { $0.lines }.filter { $0.level <= level }.map(\.text)
    }

    // MARK: - Lines per level

    @Test(arguments: 1...4) func scriptedEventsPrintCoreDataLines(level: Int) {
        let written = Lines()
        let log = SQLDebugLog(level: level, uri: Self.uri, write: written.append)
        for (event, _) in Self.script {
            log.log(GraphEventRecord(event: event, context: ContextID(rawValue: 1, name: "main")))
        }
        #expect(written.lines == Self.expectedLines(atLevel: level))
    }

    @Test func levelOnePrintsOnlySQLTimingsAndSaves() {
        // Spelled out once, so the tagged expectations above cannot drift together with the log.
        #expect(Self.expectedLines(atLevel: 1) == [
            "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZPERSON t0 WHERE t0.ZNAME = ? ORDER BY t0.ZNAME",
            "CoreData: annotation: sql connection fetch time: 0.0004s",
            "CoreData: annotation: total fetch execution time: 0.0004s for 3 rows.",
            "CoreData: sql: SELECT COUNT( DISTINCT t0.Z_PK) FROM ZPERSON t0 WHERE t0.ZAGE > ?",
            "CoreData: annotation: total count request execution time: 0.0002s for count of 7.",
            "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTEXT FROM ZMESSAGE t0 WHERE t0.Z_PK = ?",
            "CoreData: annotation: sql connection fetch time: 0.0001s",
            "CoreData: annotation: total fetch execution time: 0.0001s for 1 rows.",
            "CoreData: sql: UPDATE ZPERSON SET ZNAME = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "CoreData: annotation: sql execution time: 0.0012s, 1 rows changed.",
            "CoreData: annotation: save: 1 inserted, 2 updated, 0 deleted in 0.0050s (3 statements)",
        ])
        #expect(Self.expectedLines(atLevel: 3).count == Self.expectedLines(atLevel: 4).count - 3)
    }

    @Test func levelFourWithoutAGatheredPlanPrintsNoPlanLines() {
        let log = SQLDebugLog(level: 4, uri: Self.uri, write: { _ in })
        let statement = StatementEvent(sql: "select t0.Z_PK from ZCHAT t0", arguments: [], rows: 0, duration: .zero, cause: .other("keys"))
        #expect(log.lines(for: .statement(statement)) == [
            "CoreData: sql: select t0.Z_PK from ZCHAT t0",
            "CoreData: annotation: sql connection fetch time: 0.0000s",
            "CoreData: annotation: total fetch execution time: 0.0000s for 0 rows.",
        ])
    }

    @Test func failedSaveSaysSo() {
        let log = SQLDebugLog(level: 1, uri: Self.uri, write: { _ in })
        let save = SaveEvent(inserted: 0, updated: 1, deleted: 0, statements: 1, duration: .microseconds(70), succeeded: false)
        #expect(log.lines(for: .save(save)) == ["CoreData: annotation: save failed: 0 inserted, 1 updated, 0 deleted in 0.0001s (1 statements)"])
    }

    @Test(arguments: [
        (Duration.zero, "0.0000"),
        (.microseconds(49), "0.0000"),
        (.microseconds(50), "0.0001"),
        (.microseconds(420), "0.0004"),
        (.seconds(2) + .microseconds(99_996), "2.1000"),
        (.seconds(12), "12.0000"),
    ])
    func secondsHaveFourDecimals(duration: Duration, printed: String) {
        let log = SQLDebugLog(level: 1, uri: Self.uri, write: { _ in })
        let save = SaveEvent(inserted: 0, updated: 0, deleted: 0, statements: 0, duration: duration, succeeded: true)
        #expect(log.lines(for: .save(save)) == ["CoreData: annotation: save: 0 inserted, 0 updated, 0 deleted in \(printed)s (0 statements)"])
    }

    // MARK: - Attaching

    @Test func attachedLogPrintsWhatTheHubEmits() {
        let hub = EventHub(entityNames: Self.entityNames)
        let written = Lines()
        let log = SQLDebugLog(level: 3, uri: Self.uri, write: written.append)
        let token = log.attach(to: hub)
        #expect(hub.hasObservers)
        #expect(!hub.wantsQueryPlans)
        let fault = ObjectFaultEvent(
            entity: "Person", objectID: ObjectID(entityNumber: 1, primaryKey: 7), key: "name", isCacheHit: true, duration: .zero)
        hub.emit(.objectFault(fault), context: nil)
        log.detach(token, from: hub)
        hub.emit(.objectFault(fault), context: nil)
        #expect(!hub.hasObservers)
        #expect(written.lines == ["CoreData: annotation: fault fulfilled from row cache for : x-coredata://\(Self.store)/Person/p7"])
    }

    @Test func attachingAtLevelFourAsksForQueryPlans() {
        let hub = EventHub(entityNames: Self.entityNames)
        let log = SQLDebugLog(level: 4, uri: Self.uri, write: { _ in })
        let token = log.attach(to: hub)
        #expect(hub.wantsQueryPlans)
        log.detach(token, from: hub)
        #expect(!hub.wantsQueryPlans)
    }

    // MARK: - Level from the environment

    @Test func unsetOrZeroLevelMeansNoLog() {
        #expect(SQLDebugLog.level(fromEnvironment: [:]) == .success(nil))
        #expect(SQLDebugLog.level(fromEnvironment: ["PATH": "/usr/bin"]) == .success(nil))
        #expect(SQLDebugLog.level(fromEnvironment: ["FAULTLINE_SQL_DEBUG": "0"]) == .success(nil))
        #expect(SQLDebugLog.level(fromEnvironment: ["FAULTLINE_SQL_DEBUG": ""]) == .success(nil))
    }

    @Test(arguments: 1...4) func levelsOneToFourAreRead(level: Int) {
        #expect(SQLDebugLog.level(fromEnvironment: ["FAULTLINE_SQL_DEBUG": "\(level)"]) == .success(level))
    }

    @Test(arguments: ["5", "abc", "-1", "2.5"]) func otherValuesAreRefused(value: String) {
        let expected = SQLDebugLevelError(description: "FAULTLINE_SQL_DEBUG must be a level from 1 to 4, not '\(value)'")
        #expect(SQLDebugLog.level(fromEnvironment: ["FAULTLINE_SQL_DEBUG": value]) == .failure(expected))
    }

    @Test func refusalNamesTheVariableAndTheValue() {
        let result = SQLDebugLog.level(fromEnvironment: ["FAULTLINE_SQL_DEBUG": "abc"])
        guard case .failure(let error) = result else {
            Issue.record("accepted: \(result)")
            return
        }
        #expect(error.description == "FAULTLINE_SQL_DEBUG must be a level from 1 to 4, not 'abc'")
        #expect("\(error)" == "FAULTLINE_SQL_DEBUG must be a level from 1 to 4, not 'abc'")
    }
}

/// Collects written lines, from any thread.
private final class Lines: Sendable {
    private let storage = Mutex<[String]>([])

    var lines: [String] { storage.withLock { $0 } }

    @Sendable func append(_ line: String) {
        storage.withLock { $0.append(line) }
    }
}
