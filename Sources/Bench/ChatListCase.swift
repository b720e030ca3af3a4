import ChatFixture
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GraphStore

/// `chat-list` and `chat-list-scroll`: a messenger's chat list read from a generated chat store.
///
/// A row of the list shows a chat's title, its member count, its last message's text and that message's sender's
/// name; the list is ordered as a messenger orders it (pinned chats first, then by last message time, newest first,
/// the primary key breaking ties). Both cases share one store, generated in-process on first use (untimed) into the
/// bench's folder, and one coordinator on it. Every Faultline run starts from a fresh context and an empty row
/// cache: the first screen after launch is cold, so Faultline pays for real SQL as the raw peer does.
final class ChatListCases {
    let folder: URL
    let quick: Bool
    let options: FixtureOptions
    /// Hears every coordinator the cases open.
    let opened: (PersistentStoreCoordinator) -> Void
    private var shared: ChatListStore?

    /// Rows on the first screen.
    static let screenRows = 30
    /// Rows per batch while scrolling.
    static let scrollBatch = 20
    /// How much the process's resident memory may grow from the scroll's first batch to its last, in MB: room for
    /// the row cache to take in the list's rows (chats, last messages, senders), well short of what keeping every
    /// batch would add (both measured in docs/bench.md).
    static let scrollGrowthLimit = 16.0

    /// Cases on a chat store generated with `options` (`BenchmarkScale.chatStore`).
    init(folder: URL, quick: Bool, options: FixtureOptions, opened: @escaping (PersistentStoreCoordinator) -> Void = { _ in }) {
        self.folder = folder
        self.quick = quick
        self.opened = opened
        self.options = options
    }

    func prepare(_ name: BenchmarkCaseName) throws -> PreparedCase {
        switch name {
        case .chatList: try chatList()
        case .chatListScroll: try chatListScroll()
        default: preconditionFailure("\(name.rawValue) is not a chat-list case")
        }
    }

    // MARK: chat-list

    /// The first screen: 30 rows, six ways.
    ///
    /// - `faultline`: windowed batching with the count taken by the first statement (`countsWithFirstBatch`),
    ///   `lastMessage.sender` prefetched by joins (written flat, as the list's index serves its order), the derived
    ///   member count: one statement.
    /// - `faultline-defaults`: Core Data's defaults: a plain fetch of every chat, no prefetch, member counts through
    ///   the `members` relationship, a fault per last message and sender.
    /// - `grdb`: the raw peer's statement from GRDB's statement cache, rows decoded by column index.
    /// - `grdb-query-interface`: `ChatRecord` annotated with `members.count`, including its last message and that
    ///   message's sender, ordered and limited: one statement, which groups every chat before sorting for the limit.
    /// - `raw-sqlite`: one hand-written flat statement (`screenSQL`), the stored member count, prepared once.
    /// - `faultline-coredata`: Core Data's tuned way (faithful batching, separate `IN` prefetches).
    private func chatList() throws -> PreparedCase {
        let store = try sharedStore()
        let coordinator = store.coordinator
        let rows = Self.screenRows

        let tuned = BenchmarkVariant(name: "faultline") { stopwatch in
            try Self.timeScreen(on: coordinator, stopwatch) { context in
                var request = ChatListStore.request()
                request.fetchBatchSize = rows
                request.batchingMode = .windowed
                request.countsWithFirstBatch = true
                request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
                request.prefetchStrategy = .joined
                request.propertiesToFetch = ChatListStore.drawnProperties
                return try context.fetch(request)
            }
        }
        let raw = BenchmarkVariant(name: VariantName.raw) { stopwatch in
            let select = store.screen
            let ((checksum, count), sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time {
                    var first = true
                    return try select.fingerprintRows { hash in
                        if first {
                            hash.mix(select.int64(ChatListColumns.screenTotalColumn))
                            first = false
                        }
                        ChatRow.raw(select, from: 0).mix(into: &hash)
                    }
                }
            }
            guard count == min(rows, store.chatCount) else {
                throw BenchmarkError("the raw peer read \(count) rows, expected \(min(rows, store.chatCount))")
            }
            return RunOutcome(checksum: checksum, statements: 1, sql: sql)
        }
        let coreData = BenchmarkVariant(name: "faultline-coredata") { stopwatch in
            try Self.timeScreen(on: coordinator, stopwatch) { context in
                var request = ChatListStore.request()
                request.fetchBatchSize = rows
                request.batchingMode = .faithful
                request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
                request.prefetchStrategy = .separateQueries
                // Core Data's propertiesToFetch chooses the fetched entity's properties; prefetched rows come whole.
                request.propertiesToFetch = ChatListStore.drawnProperties.filter { !$0.contains(".") }
                return try context.fetch(request)
            }
        }
        let defaults = BenchmarkVariant(name: "faultline-defaults") { stopwatch in
            try Self.timeScreen(on: coordinator, countingMembers: true, stopwatch) { context in
                try context.fetch(ChatListStore.request())
            }
        }
        let reader = try store.grdb()
        // Once untimed, before its statements are counted: GRDB reads the schema on a connection's first use.
        let expected = min(rows, store.chatCount)
        let screenSQL = store.columns.screenSQL(limit: rows)
        let screens = [try reader.read { db in try GRDBChatReader.chatListScreen(db, rows: rows).rows },
                       try reader.readHandWritten { db in try GRDBChatSQL.chatListScreen(db, sql: screenSQL).rows }]
        guard screens.allSatisfy({ $0 == expected }) else { throw BenchmarkError("the GRDB reads gave \(screens) rows, expected \(expected)") }
        let grdb = reader.handWrittenVariant { db in try GRDBChatSQL.chatListScreen(db, sql: screenSQL).checksum }
        let queryInterface = reader.queryInterfaceVariant { db in try GRDBChatReader.chatListScreen(db, rows: rows).checksum }
        return PreparedCase(
            name: BenchmarkCaseName.chatList.rawValue,
            goals: [.ratio(tuned.name, over: grdb.name, atMost: 1.1), .ratio(tuned.name, over: raw.name, atMost: 1.3),
                    .statementsAtMost(tuned.name, than: grdb.name), .fasterThan(tuned.name, than: defaults.name, factor: 5)],
            variants: [tuned, defaults, grdb, queryInterface, raw, coreData],
            runs: quick ? 5 : 21)
    }

    /// Opens the list in a fresh context with an empty row cache, and times fetching it and reading the rows of
    /// its first screen.
    private static func timeScreen(
        on coordinator: PersistentStoreCoordinator, countingMembers: Bool = false, _ stopwatch: Stopwatch,
        fetch: (ObjectContext) throws -> FetchedObjects
    ) throws -> RunOutcome {
        coordinator.rowCache.removeAll()
        let context = ObjectContext(coordinator: coordinator, name: "chat-list")
        let before = coordinator.events.counters.total
        var count = 0
        let (checksum, sql) = try SQLRecorder.recording(coordinator, if: stopwatch.recordsSQL) {
            try stopwatch.time { () throws -> Int64 in
                let chats = try fetch(context)
                var hash = FNV1a()
                // The list's total first: the pane's title shows it.
                hash.mix(Int64(chats.count))
                count = min(screenRows, chats.count)
                for index in 0..<count {
                    try ChatRow(chats[index], countingMembers: countingMembers).mix(into: &hash)
                }
                hash.mix(Int64(count))
                return hash.value
            }
        }
        let cost = coordinator.events.counters.total.difference(since: before)
        guard count > 0 else { throw BenchmarkError("the chat list came back empty") }
        return RunOutcome(checksum: checksum, statements: cost.statements, sql: sql)
    }

    // MARK: chat-list-scroll

    /// The whole list, in batches of 20, from the first row to the last.
    ///
    /// - `faultline`: windowed batching (the first batch counted by its own statement, later IDs read in reads that
    ///   double in size), each batch one statement that joins its last messages and senders.
    /// - `faultline-defaults`: a plain fetch of every chat, read row by row as the defaults variant of `chat-list`
    ///   reads the screen: member counts through `members`, a fault per last message and sender.
    /// - `raw-sqlite`: Faultline's way by hand: every key in the list's order once, then one statement per batch that
    ///   reads its rows by key (`IN`) with their last messages and senders, put back in order in Swift.
    /// - `raw-sqlite-floor`: the least work that gives the same rows: one ordered statement, stepped to the end.
    /// - `raw-sqlite-keyset`: keyset pagination by hand, the window chosen before the joins (each page reads from the
    ///   list's index after its key, then sorts its joined rows again): kept to show what paging by sort key costs
    ///   beside paging by keys.
    /// - `grdb`: `raw-sqlite`'s way through GRDB: the keys, then each page in its own read, cached statements, rows
    ///   decoded by column index.
    /// - `grdb-query-interface`: the `chat-list` request, a page at a time: the first page with `limit(20)`, each
    ///   later one with a keyset filter (the rows after the last one shown) on the same request; each page groups
    ///   and sorts every chat after the key again.
    private func chatListScroll() throws -> PreparedCase {
        let store = try sharedStore()
        let coordinator = store.coordinator
        let batch = Self.scrollBatch
        let expected = store.chatCount

        let faultline = BenchmarkVariant(name: "faultline") { stopwatch in
            coordinator.rowCache.removeAll()
            let context = ObjectContext(coordinator: coordinator, name: "chat-list-scroll")
            let before = coordinator.events.counters.total
            var request = ChatListStore.request()
            request.fetchBatchSize = batch
            request.batchingMode = .windowed
            request.countsWithFirstBatch = true
            request.relationshipKeyPathsForPrefetching = ["lastMessage.sender"]
            request.prefetchStrategy = .joined
            request.propertiesToFetch = ChatListStore.drawnProperties
            var memory = ScrollMemory()
            var status: BatchingStatus?
            ProcessMemory.resetPeak()
            let (checksum, sql) = try SQLRecorder.recording(coordinator, if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    let chats = try context.fetch(request)
                    var hash = FNV1a()
                    for index in chats.indices {
                        try ChatRow(chats[index], countingMembers: false).mix(into: &hash)
                        if index == batch - 1 { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                    }
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    hash.mix(Int64(chats.count))
                    status = chats.batching
                    return hash.value
                }
            }
            let cost = coordinator.events.counters.total.difference(since: before)
            let batches = (expected + batch - 1) / batch
            guard let status, status.knownIDs == expected, status.batchLoads == batches,
                  status.loadedBatches.count == min(batches, request.maximumLoadedBatches) else {
                throw BenchmarkError("the scroll did not walk the batched result as expected: \(String(describing: status))")
            }
            return memory.outcome(checksum: checksum, statements: cost.statements, sql: sql)
        }

        let raw = BenchmarkVariant(name: VariantName.raw) { stopwatch in
            var statements = 0
            var memory = ScrollMemory()
            let keysStatement = store.orderedKeys
            let pageStatement = store.rowsByKey
            ProcessMemory.resetPeak()
            let (checksum, sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    var keys: [Int64] = []
                    keys.reserveCapacity(expected)
                    keysStatement.reset()
                    while try keysStatement.step() { keys.append(keysStatement.int64(0)) }
                    keysStatement.reset()
                    statements += 1
                    var hash = FNV1a()
                    var rows: [Int64: ChatRow] = [:]
                    rows.reserveCapacity(batch)
                    var start = keys.startIndex
                    while start < keys.endIndex {
                        let page = keys[start..<min(start + batch, keys.endIndex)]
                        // Always `batch` places, so one prepared statement serves every page; NULL matches no key.
                        for place in 0..<batch {
                            let index = page.startIndex + place
                            if index < page.endIndex { pageStatement.bind(keys[index], at: Int32(place + 1)) } else { pageStatement.bindNull(at: Int32(place + 1)) }
                        }
                        while try pageStatement.step() { rows[pageStatement.int64(0)] = ChatRow.raw(pageStatement, from: 1) }
                        pageStatement.reset()
                        statements += 1
                        for key in page {
                            guard let row = rows[key] else { throw BenchmarkError("the raw peer read no row for chat \(key)") }
                            row.mix(into: &hash)
                        }
                        rows.removeAll(keepingCapacity: true)
                        if statements == 2 { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                        start = page.endIndex
                    }
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    hash.mix(Int64(keys.count))
                    guard keys.count == expected else { throw BenchmarkError("the raw peer read \(keys.count) keys, expected \(expected)") }
                    return hash.value
                }
            }
            return memory.outcome(checksum: checksum, statements: statements, sql: sql)
        }

        let floor = BenchmarkVariant(name: VariantName.rawFloor) { stopwatch in
            var memory = ScrollMemory()
            let select = store.wholeList
            ProcessMemory.resetPeak()
            let ((checksum, rows), sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> (Int64, Int) in
                    let read = try select.fingerprintRows({ ChatRow.mixRaw(select, from: 0, into: &$0) }, afterRow: { rows in
                        if rows == batch { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                    })
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    return read
                }
            }
            guard rows == expected else { throw BenchmarkError("the raw peer read \(rows) rows, expected \(expected)") }
            return memory.outcome(checksum: checksum, statements: 1, sql: sql)
        }

        let keyset = BenchmarkVariant(name: "raw-sqlite-keyset") { stopwatch in
            var statements = 0
            var rows = 0
            var memory = ScrollMemory()
            ProcessMemory.resetPeak()
            let (checksum, sql) = try store.raw.recording(if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    var hash = FNV1a()
                    var statement = store.firstPage
                    while true {
                        statements += 1
                        var page = 0
                        var last: PageKey?
                        while try statement.step() {
                            last = PageKey(statement)
                            ChatRow.raw(statement, from: PageKey.columns).mix(into: &hash)
                            page += 1
                        }
                        statement.reset()
                        rows += page
                        if statements == 1 { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                        // A short page is the last; a full one may be followed by an empty one.
                        guard page == batch, let last else { break }
                        statement = store.nextPage
                        last.bind(to: statement)
                    }
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    hash.mix(Int64(rows))
                    return hash.value
                }
            }
            guard rows == expected else { throw BenchmarkError("the raw peer read \(rows) rows, expected \(expected)") }
            return memory.outcome(checksum: checksum, statements: statements, sql: sql)
        }

        let defaults = BenchmarkVariant(name: VariantName.defaults) { stopwatch in
            coordinator.rowCache.removeAll()
            let context = ObjectContext(coordinator: coordinator, name: "chat-list-scroll")
            let before = coordinator.events.counters.total
            var memory = ScrollMemory()
            var count = 0
            ProcessMemory.resetPeak()
            let (checksum, sql) = try SQLRecorder.recording(coordinator, if: stopwatch.recordsSQL) {
                try stopwatch.time { () throws -> Int64 in
                    let chats = try context.fetch(ChatListStore.request())
                    var hash = FNV1a()
                    for index in chats.indices {
                        try ChatRow(chats[index], countingMembers: true).mix(into: &hash)
                        if index == batch - 1 { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                    }
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    count = chats.count
                    hash.mix(Int64(count))
                    return hash.value
                }
            }
            guard count == expected else { throw BenchmarkError("the plain fetch read \(count) chats, expected \(expected)") }
            return memory.outcome(checksum: checksum, statements: coordinator.events.counters.total.difference(since: before).statements,
                                  sql: sql)
        }

        let reader = try store.grdb()
        let columns = store.columns
        // Once untimed, before the scroll's statements are counted: on a connection's first query-interface request,
        // GRDB reads the schema it needs (`PRAGMA database_list`, `sqlite_master`, and `PRAGMA table_xinfo` for each
        // of the four tables the request joins: 6 statements) and keeps it for the connection's life. An app pays
        // that once after opening its database, not on every scroll, and the timed runs never run them; counted,
        // they would be charged to the scroll. `chat-list` reads the same way before counting.
        let firstPage = try reader.read { db in try GRDBChatReader.chatListScreen(db, rows: batch).rows }
        guard firstPage == min(batch, expected) else {
            throw BenchmarkError("the GRDB query interface's first page had \(firstPage) rows, expected \(min(batch, expected))")
        }
        /// A GRDB scroll: the first run (the runner's untimed warm-up) counts the statements and records their SQL;
        /// tracing would slow the timed runs, and a scroll is too long to run once more just to count.
        func grdbVariant(_ name: String, pages: Int, statementsPerRun: Int,
                         scroll: @escaping (_ recording: Bool, _ afterPage: (Int) -> Void) throws -> GRDBChatReader.Scroll) -> BenchmarkVariant {
            var counted: Int?
            return BenchmarkVariant(name: name) { stopwatch in
                let recording = counted == nil
                var memory = ScrollMemory()
                var result: GRDBChatReader.Scroll?
                ProcessMemory.resetPeak()
                let checksum = try stopwatch.time { () throws -> Int64 in
                    let read = try scroll(recording) { page in
                        if page == 1 { memory.afterFirstBatch = stopwatch.excluding { ProcessMemory.settledResident() } }
                    }
                    memory.afterLastBatch = stopwatch.excluding { ProcessMemory.settledResident() }
                    result = read
                    return read.checksum
                }
                guard let result else { preconditionFailure("the timed region ran") }
                if recording {
                    let statements = result.statements ?? 0
                    guard statements == statementsPerRun else {
                        let distinct = (result.sql ?? []).map { String($0.prefix(80)) }.joined(separator: "; ")
                        throw BenchmarkError("the GRDB scroll ran \(statements) statements for \(result.pages) pages, expected "
                            + "\(statementsPerRun); its distinct statements: \(distinct)")
                    }
                    counted = statements
                }
                guard result.rows == expected, result.pages == pages else {
                    throw BenchmarkError("the GRDB scroll read \(result.rows) rows in \(result.pages) pages, expected \(expected) in \(pages)")
                }
                return memory.outcome(checksum: checksum, statements: counted ?? 0, sql: stopwatch.recordsSQL ? result.sql : nil)
            }
        }
        // By keys: one read of the keys, then one a page.
        let batches = (expected + batch - 1) / batch
        let grdb = grdbVariant(VariantName.grdb, pages: batches, statementsPerRun: 1 + batches) { recording, afterPage in
            try GRDBChatSQL.scrollByKeys(reader.handWrittenQueue, columns: columns, batch: batch, recording: recording, afterPage: afterPage)
        }
        // By keyset: one statement a page, and a full last page is followed by an empty one.
        let keysetPages = expected / batch + 1
        let queryInterface = grdbVariant(VariantName.grdbQueryInterface, pages: keysetPages, statementsPerRun: keysetPages) { recording, afterPage in
            try reader.scrollChatList(batch: batch, counting: recording, afterPage: afterPage)
        }
        return PreparedCase(
            name: BenchmarkCaseName.chatListScroll.rawValue,
            goals: [.ratio(faultline.name, over: raw.name, atMost: 1.5), .ratio(faultline.name, over: floor.name, atMost: 3),
                    .batchGrowth(faultline.name, underMegabytes: Self.scrollGrowthLimit)],
            variants: [faultline, defaults, grdb, queryInterface, raw, floor, keyset])
    }

    func sharedStore() throws -> ChatListStore {
        if let shared { return shared }
        let store = try ChatListStore(path: folder.appendingPathComponent("chat-list.sqlite").path, options: options, opened: opened)
        shared = store
        return store
    }
}

/// The resident memory a scroll run recorded.
private struct ScrollMemory {
    var afterFirstBatch: Int?
    var afterLastBatch: Int?

    func outcome(checksum: Int64, statements: Int, sql: [String]? = nil) -> RunOutcome {
        RunOutcome(checksum: checksum, statements: statements, peakResidentBytes: ProcessMemory.peak(),
                   residentAfterFirstBatch: afterFirstBatch, residentAfterLastBatch: afterLastBatch, sql: sql)
    }
}

/// One row of the chat list.
struct ChatRow {
    var title: String
    var members: Int64
    var text: String?
    var sender: String?

    /// Reads a row through the object graph, by the model's typed properties (as a Core Data user reads through
    /// `@NSManaged` ones): the derived `membersCount`, or (Core Data's defaults) the number of objects in the
    /// `members` to-many, which fires its relationship fault.
    init(_ object: ManagedObject, countingMembers: Bool) throws {
        guard let chat = object as? Chat else { throw BenchmarkError("a chat-list row is a \(object.entityName), not a Chat") }
        title = chat.title
        members = Int64(countingMembers ? chat.members.count : chat.membersCount)
        let message = chat.lastMessage
        text = message?.text
        sender = message?.sender?.name
    }

    /// Reads a row from a raw statement's columns `first…first+3`: title, member count, text, sender name.
    static func raw(_ statement: RawStatement, from first: Int32) -> ChatRow {
        ChatRow(title: statement.string(first), members: statement.int64(first + 1),
                text: statement.isNull(first + 2) ? nil : statement.string(first + 2),
                sender: statement.isNull(first + 3) ? nil : statement.string(first + 3))
    }

    /// Mixes the row a raw statement's columns `first…first+3` hold into `hash` as `raw(_:from:)` and `mix(into:)`
    /// would, without making the row or its strings: the floor's least work.
    static func mixRaw(_ statement: RawStatement, from first: Int32, into hash: inout FNV1a) {
        statement.mixText(first, into: &hash, nullAsEmpty: true)
        hash.mix(statement.int64(first + 1))
        statement.mixText(first + 2, into: &hash)
        statement.mixText(first + 3, into: &hash)
    }

    init(title: String, members: Int64, text: String?, sender: String?) {
        self.title = title
        self.members = members
        self.text = text
        self.sender = sender
    }

    /// Mixes the row into a fingerprint; each string is preceded by its length, a missing one by -1.
    func mix(into hash: inout FNV1a) {
        hash.mix(text: title)
        hash.mix(members)
        hash.mix(text: text)
        hash.mix(text: sender)
    }
}

/// Where the raw scroll's last row was: the sort key the next page starts after.
private struct PageKey {
    let pinned: Int64
    let lastMessageAt: Double?
    let key: Int64

    /// Columns a page statement selects before the row's values.
    static let columns: Int32 = 3

    init(_ statement: RawStatement) {
        pinned = statement.int64(0)
        lastMessageAt = statement.isNull(1) ? nil : statement.double(1)
        key = statement.int64(2)
    }

    func bind(to statement: RawStatement) {
        statement.bind(pinned, at: 1)
        if let lastMessageAt { statement.bind(lastMessageAt, at: 2) } else { statement.bindNull(at: 2) }
        statement.bind(key, at: 3)
    }
}

/// The generated chat store both cases read, a coordinator on it and a raw read-only connection to it.
final class ChatListStore {
    let path: String
    let coordinator: PersistentStoreCoordinator
    let raw: RawConnection
    let columns: ChatListColumns
    /// The raw peers' statements, prepared once as a hand-written data layer would.
    let screen: RawStatement
    let firstPage: RawStatement
    let nextPage: RawStatement
    let orderedKeys: RawStatement
    let rowsByKey: RawStatement
    let wholeList: RawStatement
    let chatCount: Int
    private var grdbReader: GRDBChatReader?

    init(path: String, options: FixtureOptions, opened: (PersistentStoreCoordinator) -> Void) throws {
        self.path = path
        GraphCases.removeStore(at: path)
        let summary = try FixtureGenerator(options: options, corpus: try ChatCorpus.load()).generate(to: path)
        guard summary.chats == options.chats, summary.messages == options.messages else {
            throw BenchmarkError("the chat fixture has \(summary.chats) chats and \(summary.messages) messages, expected "
                + "\(options.chats) and \(options.messages)")
        }
        chatCount = summary.chats
        let model = try ChatModel.make()
        coordinator = try PersistentStoreCoordinator(path: path, model: model, classes: ChatModel.classes)
        opened(coordinator)
        columns = try ChatListColumns(model: model)
        raw = try RawConnection(path: path, readOnly: true)
        screen = try raw.prepare(columns.screenSQL(limit: ChatListCases.screenRows))
        firstPage = try raw.prepare(columns.pageSQL(after: false, limit: ChatListCases.scrollBatch))
        nextPage = try raw.prepare(columns.pageSQL(after: true, limit: ChatListCases.scrollBatch))
        orderedKeys = try raw.prepare(columns.orderedKeysSQL)
        rowsByKey = try raw.prepare(columns.rowsByKeySQL(count: ChatListCases.scrollBatch))
        wholeList = try raw.prepare(columns.wholeListSQL)
    }

    /// A GRDB queue on the store with the records' names checked, opened on first use.
    func grdb() throws -> GRDBChatReader {
        if let grdbReader { return grdbReader }
        let reader = try GRDBChatReader(path: path, names: SchemaNames(coordinator.model), columns: columns)
        grdbReader = reader
        return reader
    }

    /// The list's order, as a fetch request: the primary key (`SELF`) breaks ties, as the raw peers' `Z_PK` does.
    static func request() -> FetchRequest {
        FetchRequest(entityName: "Chat", sortDescriptors: [.init("isPinned", ascending: false), .init("lastMessageAt", ascending: false), .init("SELF")])
    }

    /// What a row of the list reads (`ChatRow`), as the tuned fetch asks for it: the chat's title and stored member
    /// count, its last message's text, that message's sender's name, and the to-ones between them.
    static let drawnProperties = ["title", "membersCount", "lastMessage", "lastMessage.text", "lastMessage.sender", "lastMessage.sender.name"]
}

/// The SQL names the raw peers use, taken from the schema Faultline lays out.
struct ChatListColumns {
    let chatTable: String
    let title: String
    let membersCount: String
    let isPinned: String
    let lastMessageAt: String
    let lastMessage: String
    let messageTable: String
    let text: String
    let sender: String
    let userTable: String
    let name: String

    init(model: ObjectModel) throws {
        let names = SchemaNames(model)
        let schema = names.schema
        guard let chats = schema.table(for: "Chat"), let messages = schema.table(for: "Message"), let users = schema.table(for: "User") else {
            throw BenchmarkError("the chat model did not produce the expected tables")
        }
        chatTable = chats.name
        messageTable = messages.name
        userTable = users.name
        title = try names.column("title", of: "Chat")
        membersCount = try names.column("membersCount", of: "Chat")
        isPinned = try names.column("isPinned", of: "Chat")
        lastMessageAt = try names.column("lastMessageAt", of: "Chat")
        lastMessage = try names.foreignKey("lastMessage", of: "Chat").column
        text = try names.column("text", of: "Message")
        sender = try names.foreignKey("sender", of: "Message").column
        name = try names.column("name", of: "User")
    }

    private var rowList: String { "c.\(title), c.\(membersCount), m.\(text), u.\(name)" }
    private var joins: String {
        "LEFT JOIN \(messageTable) m ON m.Z_PK = c.\(lastMessage) LEFT JOIN \(userTable) u ON u.Z_PK = m.\(sender)"
    }
    private var order: String { "ORDER BY c.\(isPinned) DESC, c.\(lastMessageAt) DESC, c.Z_PK" }
    private var innerOrder: String { "ORDER BY \(isPinned) DESC, \(lastMessageAt) DESC, Z_PK" }

    /// The first screen, hand-written: the first rows in the list's order, each with its last message and its
    /// sender, in one flat statement, and the list's total (the pane's title shows it, "Chats (N)") as a last column
    /// SQLite computes once, as Faultline's first statement takes it (`countsWithFirstBatch`). The store's
    /// (isPinned, lastMessageAt) index serves the order, so SQLite walks it, joins each chat as it comes and stops at
    /// the limit: nothing is sorted. (Without that index the flat statement joins every chat before sorting, and
    /// choosing the window first in a subquery measured 7× faster; with it, the subquery's rows are sorted again
    /// after the joins, and the flat statement is faster.)
    func screenSQL(limit: Int) -> String {
        "SELECT \(rowList), (SELECT COUNT(*) FROM \(chatTable)) FROM \(chatTable) c \(joins) \(order) LIMIT \(limit)"
    }

    /// The column of `screenSQL` that holds the list's total.
    static let screenTotalColumn: Int32 = 4

    /// Every chat's key in the list's order: the first read of a scroll that pages by keys.
    var orderedKeysSQL: String { "SELECT Z_PK FROM \(chatTable) \(innerOrder)" }

    /// The rows of up to `count` chats named by key (bound as ?1…?count; a place bound NULL matches nothing), each
    /// with its key first, in no particular order: a page of a scroll that pages by keys.
    func rowsByKeySQL(count: Int) -> String {
        let places = (1...max(count, 1)).map { "?\($0)" }.joined(separator: ", ")
        return "SELECT c.Z_PK, \(rowList) FROM \(chatTable) c \(joins) WHERE c.Z_PK IN (\(places))"
    }

    /// The whole list in one ordered statement.
    var wholeListSQL: String { "SELECT \(rowList) FROM \(chatTable) c \(joins) \(order)" }

    /// A page of the scroll, keyset-paginated: the rows after the sort key bound as ?1 (isPinned), ?2
    /// (lastMessageAt, NULL allowed: NULLs come last in descending order) and ?3 (Z_PK), or the first page. The
    /// sort key comes first in each row; the window is taken before the joins, as on the first screen.
    func pageSQL(after: Bool, limit: Int) -> String {
        let condition = after
            ? " WHERE \(isPinned) < ?1 OR (\(isPinned) = ?1 AND ((?2 IS NOT NULL AND (\(lastMessageAt) < ?2 OR \(lastMessageAt) IS NULL))"
                + " OR (\(lastMessageAt) IS ?2 AND Z_PK > ?3)))"
            : ""
        return "SELECT c.\(isPinned), c.\(lastMessageAt), c.Z_PK, \(rowList) FROM (SELECT * FROM \(chatTable)\(condition) \(innerOrder) "
            + "LIMIT \(limit)) c \(joins) \(order)"
    }
}

/// This process's memory, from `/proc/self/status` (Linux); nil where it cannot be read.
enum ProcessMemory {
    /// The resident set size now (`VmRSS`).
    static func resident() -> Int? { field("VmRSS:") }

    /// The resident set size after handing the allocator's free pages back to the system (glibc's `malloc_trim`),
    /// so that it follows the memory in use rather than what earlier work freed and the allocator kept.
    static func settledResident() -> Int? {
        _ = trim?(0)
        return resident()
    }

    private typealias Trim = @convention(c) (Int) -> Int32
    /// glibc's `malloc_trim`, looked up at run time (Swift's Glibc module leaves out <malloc.h>).
    private static let trim: Trim? = dlsym(nil, "malloc_trim")
        .map { unsafeBitCast($0, to: Trim.self) }

    /// The peak resident set size since start or since the last `resetPeak` (`VmHWM`).
    static func peak() -> Int? { field("VmHWM:") }

    /// Starts the peak afresh from the current resident size (writing 5 to `/proc/self/clear_refs`, Linux 4.0 on).
    static func resetPeak() {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        try? handle.write(contentsOf: Data("5".utf8))
        try? handle.close()
    }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, let amount = Int(fields[1]), fields[2] == "kB" else { return nil }
            return amount * 1024
        }
        return nil
    }
}
