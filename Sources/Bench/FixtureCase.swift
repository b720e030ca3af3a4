import ChatFixture
import Foundation
import GRDBSQLite
import GraphStore

/// `fixture-generate`: `faultline fixture generate` run as a child process (so its time is what a user waits for
/// and its peak memory is its own), against the raw C API inserting the very rows it wrote.
///
/// Preparation generates a reference store once, untimed, and reads every row of it into memory. The raw peer then
/// creates the same schema (tables, indexes and the derived-count triggers, which fire for it too) with the same
/// pragmas as a GraphStore writer, and inserts those rows with one prepared `INSERT` per table in one transaction;
/// its timed region ends when its connection has closed, as the generator's ends when its store is in place.
/// Every run's store must have the reference's fingerprint (every row of every table), so both did the same work.
final class FixtureCase {
    let folder: URL
    let quick: Bool
    /// The `faultline` executable to run.
    let executable: String?
    let options: FixtureOptions
    private var nextFileNumber = 0

    init(folder: URL, quick: Bool, executable: String?) {
        self.folder = folder
        self.quick = quick
        self.executable = executable
        var options = FixtureOptions.defaults
        options.messages = quick ? 20_000 : 1_000_000
        self.options = options
    }

    /// Peak memory the generator may use, in MB (10^6 bytes).
    static let peakMemoryLimit = 200.0

    func prepare() throws -> PreparedCase {
        guard let executable else {
            throw BenchmarkError("this case runs the faultline executable, and none was given")
        }
        let referencePath = newStorePath("fixture-reference")
        defer { GraphCases.removeStore(at: referencePath) }
        _ = try generate(with: executable, to: referencePath)
        let reference = try StoreRows(path: referencePath)
        let expected = try StoreRows.fingerprint(path: referencePath)
        let schema = StoreSchema(model: try ChatModel.make())

        let faultline = BenchmarkVariant(name: "faultline") { [self] stopwatch in
            let path = newStorePath("fixture-faultline")
            defer { GraphCases.removeStore(at: path) }
            let run = try stopwatch.time { try generate(with: executable, to: path) }
            return RunOutcome(checksum: try StoreRows.fingerprint(path: path), statements: run.statements,
                              peakResidentBytes: run.peakResidentBytes)
        }
        let raw = BenchmarkVariant(name: "raw-sqlite") { [self] stopwatch in
            let path = newStorePath("fixture-raw")
            defer { GraphCases.removeStore(at: path) }
            // The unwraps cannot fail: `connection` is set here and cleared only after its last use.
            var connection: RawConnection? = try RawConnection(path: path, readOnly: false)
            try connection!.configureLikeAPool()
            try connection!.execute(schema.createStatements.joined(separator: ";\n"))
            let statements = try stopwatch.time { () throws -> Int in
                let statements = try reference.insertAll(into: connection!)
                connection = nil
                return statements
            }
            return RunOutcome(checksum: try StoreRows.fingerprint(path: path), statements: statements)
        }
        return PreparedCase(
            name: BenchmarkCaseName.fixtureGenerate.rawValue,
            goals: [.ratio(faultline.name, over: raw.name, atMost: 2), .peakMemory(faultline.name, underMegabytes: Self.peakMemoryLimit)],
            variants: [faultline, raw],
            warmUp: false,
            runs: quick ? nil : 3,
            expectedChecksum: expected,
            rows: reference.rowCount)
    }

    /// Runs `faultline fixture generate --json` for `options` into `path`.
    private func generate(with executable: String, to path: String) throws(BenchmarkError) -> (statements: Int, peakResidentBytes: Int) {
        let child = ChildProcess(executable: executable, arguments: [
            "fixture", "generate", "--out", path, "--json", "--seed", String(options.seed),
            "--users", String(options.users), "--chats", String(options.chats), "--messages", String(options.messages),
        ])
        let outcome = try child.run(outputIn: folder)
        guard outcome.status == 0 else {
            let message = outcome.standardError.split(separator: "\n").last.map(String.init) ?? "no message"
            throw BenchmarkError("faultline fixture generate exited with status \(outcome.status): \(message)")
        }
        struct Written: Decodable {
            let summary: FixtureSummary
            let peakMemoryBytes: Int?
        }
        guard let written = try? JSONDecoder().decode(Written.self, from: Data(outcome.standardOutput.utf8)) else {
            throw BenchmarkError("faultline fixture generate printed no summary: \(outcome.standardOutput.prefix(200))")
        }
        guard written.summary.messages == options.messages else {
            throw BenchmarkError("faultline fixture generate wrote \(written.summary.messages) messages, expected \(options.messages)")
        }
        guard let peak = written.peakMemoryBytes else {
            throw BenchmarkError("faultline fixture generate did not report its peak memory")
        }
        return (written.summary.statements, peak)
    }

    private func newStorePath(_ stem: String) -> String {
        nextFileNumber += 1
        return folder.appendingPathComponent("\(stem)-\(nextFileNumber).sqlite").path
    }
}

/// A value as SQLite stores it.
enum StoredValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// Every row of every table of a store, in memory: what the raw peer inserts without having to read it.
struct StoreRows {
    struct Table {
        let name: String
        let columns: [String]
        /// Row after row, `columns.count` values each.
        var values: [StoredValue] = []

        var rowCount: Int { columns.isEmpty ? 0 : values.count / columns.count }
    }

    /// In the order the schema created them, so parents come before the rows that point at them.
    let tables: [Table]

    var rowCount: Int { tables.reduce(0) { $0 + $1.rowCount } }

    init(path: String) throws(BenchmarkError) {
        let connection = try RawConnection(path: path, readOnly: true)
        var tables: [Table] = []
        for name in try Self.tableNames(connection, order: "rowid") {
            let select = try connection.prepare("SELECT * FROM \(name) ORDER BY rowid")
            var table = Table(name: name, columns: (0..<select.columnCount).map(select.columnName))
            while try select.step() {
                for column in 0..<select.columnCount {
                    table.values.append(Self.value(select, column))
                }
            }
            tables.append(table)
        }
        self.tables = tables
    }

    /// Inserts every row in one transaction, a prepared statement per table; returns the statements run.
    func insertAll(into connection: RawConnection) throws(BenchmarkError) -> Int {
        var statements = 0
        try connection.execute("BEGIN")
        for table in tables where table.rowCount > 0 {
            let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
            let insert = try connection.prepare("INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(placeholders))")
            let width = table.columns.count
            var start = 0
            while start < table.values.count {
                insert.reset()
                for column in 0..<width {
                    let index = Int32(column + 1)
                    switch table.values[start + column] {
                    case .null: insert.bindNull(at: index)
                    case .integer(let number): insert.bind(number, at: index)
                    case .real(let number): insert.bind(number, at: index)
                    case .text(let text): insert.bind(text, at: index)
                    case .blob(let bytes): insert.bind(bytes, at: index)
                    }
                }
                try insert.run()
                statements += 1
                start += width
            }
        }
        try connection.execute("COMMIT")
        return statements
    }

    /// A fingerprint (FNV-1a) of every row of every table, tables by name and rows by rowid, with each value's
    /// storage class: equal for two stores holding the same data however they were written.
    static func fingerprint(path: String) throws(BenchmarkError) -> Int64 {
        let connection = try RawConnection(path: path, readOnly: true)
        var hash = FNV1a()
        for name in try tableNames(connection, order: "name") {
            hash.mix(name.utf8)
            let select = try connection.prepare("SELECT * FROM \(name) ORDER BY rowid")
            var rows: Int64 = 0
            while try select.step() {
                rows += 1
                for column in 0..<select.columnCount {
                    switch value(select, column) {
                    case .null: hash.mix(0 as Int64)
                    case .integer(let number): hash.mix(1); hash.mix(number)
                    case .real(let number): hash.mix(2); hash.mix(Int64(bitPattern: number.bitPattern))
                    case .text(let text): hash.mix(3); hash.mix(text.utf8)
                    case .blob(let bytes): hash.mix(4); hash.mix(bytes)
                    }
                }
            }
            hash.mix(rows)
        }
        return hash.value
    }

    private static func tableNames(_ connection: RawConnection, order: String) throws(BenchmarkError) -> [String] {
        let select = try connection.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY \(order)")
        var names: [String] = []
        while try select.step() { names.append(select.string(0)) }
        return names
    }

    private static func value(_ statement: RawStatement, _ column: Int32) -> StoredValue {
        switch statement.storageClass(column) {
        case SQLITE_INTEGER: .integer(statement.int64(column))
        case SQLITE_FLOAT: .real(statement.double(column))
        case SQLITE_TEXT: .text(statement.string(column))
        case SQLITE_BLOB: .blob(statement.data(column))
        default: .null
        }
    }
}
