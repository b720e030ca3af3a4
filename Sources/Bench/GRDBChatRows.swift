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
    /// The first screen of the chat list: `sql` (`ChatListColumns.screenSQL`), hashed as `ChatRow`s.
    static func chatListScreen(_ db: Database, sql: String) throws -> (checksum: Int64, rows: Int) {
        let rows = try ChatListRecord.fetchAll(db.cachedStatement(sql: sql))
        var hash = FNV1a()
        for record in rows { record.row.mix(into: &hash) }
        hash.mix(Int64(rows.count))
        return (hash.value, rows.count)
    }

    /// An open chat: `sql` (`MessageColumns.openChatSQL`) for the chat keyed `chat`, hashed as `MessageRow`s.
    static func openChat(_ db: Database, sql: String, chat: Int64) throws -> (checksum: Int64, rows: Int) {
        let rows = try OpenChatRecord.fetchAll(db.cachedStatement(sql: sql), arguments: [chat])
        var hash = FNV1a()
        for record in rows { record.row.mix(into: &hash) }
        hash.mix(Int64(rows.count))
        return (hash.value, rows.count)
    }

    /// The first `count` messages by key, every stored column, into an array of structs.
    static func messages(_ db: Database, sql: String, count: Int) throws -> [StoredMessage] {
        try StoredMessage.fetchAll(db.cachedStatement(sql: sql), arguments: [count])
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
            var start = keys.startIndex
            while start < keys.endIndex {
                let page = keys[start..<min(start + batch, keys.endIndex)]
                // Always `batch` places, so one cached statement serves every page; NULL matches no key.
                var values: [Int64?] = Array(page)
                values.append(contentsOf: repeatElement(nil, count: batch - page.count))
                let records = try queue.inDatabase { db in try ChatPageRecord.fetchAll(db.cachedStatement(sql: pageSQL), arguments: StatementArguments(values)) }
                var rows: [Int64: ChatRow] = [:]
                rows.reserveCapacity(records.count)
                for record in records { rows[record.key] = record.row }
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
