import Foundation
import GRDB

// The `grdb` variants of the chat cases: GRDB as a user who cares about speed writes it. The SQL is written by hand
// (the very statements the raw peers step, built from the same names, so both read the stored member count
// `ZMEMBERSCOUNT` that the store's triggers keep, whichever library reads it), each statement comes from the
// connection's statement cache (`cachedStatement`), and rows are decoded by column index in
// `FetchableRecord.init(row:)`, GRDB's recommendation for hot paths. The query-interface records in
// `GRDBChatRecords.swift` are the other GRDB variant, `grdb-query-interface`.

/// A chat-list row by column index: title, member count, last message's text, its sender's name.
struct ChatListRecord: FetchableRecord {
    var row: ChatRow

    init(row: Row) {
        self.row = ChatListRecord.chatRow(row, from: 0)
    }

    /// The row's four values from column `first` on; a missing title or count reads as the raw peer reads it.
    static func chatRow(_ row: Row, from first: Int) -> ChatRow {
        ChatRow(title: row[first] ?? "", members: row[first + 1] ?? 0, text: row[first + 2], sender: row[first + 3])
    }
}

/// A chat-list row with its chat's key first, for a page read by keys (whose rows come back in no particular order).
struct ChatPageRecord: FetchableRecord {
    var key: Int64
    var row: ChatRow

    init(row: Row) {
        key = row[0]
        self.row = ChatListRecord.chatRow(row, from: 1)
    }
}

/// An open chat's message by column index: text, sentAt, sender's name, replied-to text and its sender's name,
/// reaction count.
struct OpenChatRecord: FetchableRecord {
    var row: MessageRow

    init(row: Row) {
        self.row = MessageRow(text: row[0] ?? "", sentAt: row[1] ?? 0, sender: row[2], replyText: row[3], replySender: row[4],
                              reactions: row[5] ?? 0)
    }
}

extension StoredMessage: FetchableRecord {
    /// The columns of `MessageColumns.storedColumns`, by index.
    init(row: Row) {
        self.init(key: row[0], entity: row[1] ?? 0, version: row[2] ?? 0, text: row[3] ?? "", sentAt: row[4] ?? 0, kind: row[5] ?? 0,
                  isEdited: row[6] ?? false, chat: row[7], chatEntity: row[8], sender: row[9], replyTo: row[10],
                  forwardedFrom: row[11], lastMessageOf: row[12], lastMessageOfEntity: row[13])
    }
}

/// The hand-written reads of the `grdb` chat variants.
enum GRDBChatSQL {
    // Arguments are set unchecked: each statement's placeholders are known, and GRDB's checked path validates them
    // on every call. Rows the raw peer hashes as it steps are hashed from a cursor as they come.

    /// The first screen of the chat list: `sql` (`ChatListColumns.screenSQL`): the list's total, read from the first
    /// row only (every row carries it), then the rows, hashed as `ChatRow`s.
    static func chatListScreen(_ db: Database, sql: String) throws -> (checksum: Int64, rows: Int) {
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql))
        var hash = FNV1a()
        var rows = 0
        while let row = try cursor.next() {
            if rows == 0 {
                hash.mix(row[Int(ChatListColumns.screenTotalColumn)] ?? Int64(0))
            }
            ChatListRecord.chatRow(row, from: 0).mix(into: &hash)
            rows += 1
        }
        hash.mix(Int64(rows))
        return (hash.value, rows)
    }

    /// An open chat: `sql` (`MessageColumns.openChatSQL`) for the chat keyed `chat`, hashed as `MessageRow`s.
    static func openChat(_ db: Database, sql: String, chat: Int64) throws -> (checksum: Int64, rows: Int) {
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments([chat])
        return try fingerprint(OpenChatRecord.fetchCursor(statement)) { $0.row.mix(into: &$1) }
    }

    /// Every record of `cursor` mixed into one fingerprint by `mix`, then their number.
    private static func fingerprint<Record>(_ cursor: RecordCursor<Record>, _ mix: (Record, inout FNV1a) -> Void) throws -> (checksum: Int64, rows: Int) {
        var hash = FNV1a()
        var rows = 0
        while let record = try cursor.next() {
            mix(record, &hash)
            rows += 1
        }
        hash.mix(Int64(rows))
        return (hash.value, rows)
    }

    /// The first `count` messages by key, every stored column, into an array of structs.
    static func messages(_ db: Database, sql: String, count: Int) throws -> [StoredMessage] {
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments([count])
        return try StoredMessage.fetchAll(statement)
    }

    /// The whole chat list the way Faultline's batched fetch walks it: every key in the list's order read once,
    /// then `batch` rows at a time by key (`IN`), each page read when it is reached as an app reads a page when it
    /// is shown, put back in the list's order. Each statement runs as the raw peer's do, in SQLite's implicit
    /// transaction (`inDatabase`). `afterPage` hears each page's number as it is hashed. With `recording`,
    /// the statements are counted and their SQL kept (transaction control left out, as GraphStore's counters
    /// leave it out).
    static func scrollByKeys(_ queue: DatabaseQueue, columns: ChatListColumns, batch: Int, recording: Bool,
                             afterPage: (Int) -> Void) throws -> GRDBChatReader.Scroll {
        func scroll() throws -> GRDBChatReader.Scroll {
            let keys = try queue.inDatabase { db in try Int64.fetchAll(db.cachedStatement(sql: columns.orderedKeysSQL)) }
            let pageSQL = columns.rowsByKeySQL(count: batch)
            var hash = FNV1a()
            var pages = 0
            var rows: [Int64: ChatRow] = [:]
            rows.reserveCapacity(batch)
            var start = keys.startIndex
            while start < keys.endIndex {
                let page = keys[start..<min(start + batch, keys.endIndex)]
                // Always `batch` places, so one cached statement serves every page; NULL matches no key.
                var values: [Int64?] = Array(page)
                values.append(contentsOf: repeatElement(nil, count: batch - page.count))
                rows.removeAll(keepingCapacity: true)
                try queue.inDatabase { db in
                    let statement = try db.cachedStatement(sql: pageSQL)
                    statement.setUncheckedArguments(StatementArguments(values))
                    let records = try ChatPageRecord.fetchCursor(statement)
                    while let record = try records.next() { rows[record.key] = record.row }
                }
                for key in page {
                    guard let row = rows[key] else { throw BenchmarkError("GRDB read no row for chat \(key)") }
                    row.mix(into: &hash)
                }
                pages += 1
                afterPage(pages)
                start = page.endIndex
            }
            hash.mix(Int64(keys.count))
            return GRDBChatReader.Scroll(checksum: hash.value, rows: keys.count, pages: pages)
        }
        guard recording else { return try scroll() }
        var (result, statements, sql) = try GRDBPeer.recording(queue, scroll)
        result.statements = statements
        result.sql = sql
        return result
    }
}
