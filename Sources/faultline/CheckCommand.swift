import ArgumentParser
import Foundation
import GraphStore
import TerminalText

/// `faultline check [STORE]`: verifies a store's rows against the model it records, without changing it.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store: keys, join tables, both sides of relationships, derived counts, key allocation.",
        discussion: """
            Checks the store against the model recorded in its Z_MODELCACHE (GraphStore's, or the one Core Data keeps \
            in a store it made), or against --model: PRAGMA integrity_check, the tables the \
            model calls for, the recorded model identity, every row's Z_ENT, Z_PRIMARYKEY.Z_MAX, every to-one key and \
            join-table row, both sides of one-to-one and self-inverse relationships, and derived attributes. The file \
            is opened read-only and never written.

            Exit status: 0 when the store is sound, 1 when violations were found, 2 when the file could not be checked.
            """
    )

    @Argument(help: "The store file (default: the default chat store, ~/.local/share/faultline/chat.sqlite or as 'faultline --help' says, generated if missing).")
    var store: String?

    @Option(help: ArgumentHelp("Check against this model file (.xcdatamodeld, .xcdatamodel or 'contents') instead of the model inside the store.", valueName: "path"))
    var model: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Option(parsing: .unconditional, help: ArgumentHelp("List at most this many violations of each kind; 0 lists all.", valueName: "n"))
    var limit = 50

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit)") }
    }

    func run() throws {
        try ModelFileArgument.checkOption(model, exitCode: 2)
        let path: String
        if let store {
            path = store
        } else {
            do {
                path = try DefaultFixture.ensure()
            } catch {
                throw CommandFailure(error.message, exitCode: 2)
            }
        }
        var given: ObjectModel?
        if let model {
            given = try ModelFileArgument.loadOption(model, exitCode: 2)
        }
        let report: IntegrityReport
        let busyTimeout = try BusyTimeout.seconds()
        do {
            report = try StoreIntegrityCheck.run(path: path, options: .init(limitPerKind: limit == 0 ? nil : limit, busyTimeout: busyTimeout,
                                                                            model: given))
        } catch {
            throw CommandFailure(error.description, exitCode: 2)
        }
        try Output.write(json ? CheckOutput.json(report) : CheckOutput.text(report))
        if !report.isOK {
            fflush(nil)  // every stream: the report must be out before exiting
            Foundation.exit(1)
        }
    }
}

/// The `check` command's two output forms.
enum CheckOutput {
    static func text(_ report: IntegrityReport) -> String {
        var lines: [String] = []
        guard report.isOK else {
            let count = report.violationCount
            lines.append("\(report.path): \(Self.count(count, "violation"))")
            for kind in IntegrityReport.Kind.allCases {
                lines += report.violations(of: kind).map(\.description)
                let unlisted = report.unlistedCount(of: kind)
                if unlisted > 0 { lines.append("  … and \(unlisted) more \(kind.rawValue)") }
            }
            let byKind = IntegrityReport.Kind.allCases.compactMap { kind in
                report.violationCounts[kind].flatMap { $0 > 0 ? "\($0) \(kind.rawValue)" : nil }
            }
            lines.append("\(Self.count(count, "violation")): \(byKind.joined(separator: ", "))")
            // Each line escaped: the path, the store's UUID and names from its recorded model are text from outside.
            return lines.map(ControlCharacters.escaped).joined(separator: "\n") + "\n"
        }
        lines.append("\(report.path): ok")
        let links = report.joinTables.reduce(0) { $0 + $1.rows }
        let rows = report.entities.reduce(0) { $0 + $1.rows }
        lines.append("store \(report.storeUUID): \(count(rows, "row")) in \(count(report.entities.count, "entity", "entities")), "
            + "\(count(links, "link")) in \(count(report.joinTables.count, "join table"))")
        lines.append("")
        lines += columns([["entity", "table", "rows"]] + report.entities.map { entity in
            let abstract = report.model.entity(named: entity.name)?.isAbstract ?? false
            return [entity.name + (abstract ? " (abstract)" : ""), entity.table, String(entity.rows)]
        })
        if !report.joinTables.isEmpty {
            lines.append("")
            lines += columns([["join table", "rows"]] + report.joinTables.map { [$0.name, String($0.rows)] })
        }
        return lines.map(ControlCharacters.escaped).joined(separator: "\n") + "\n"
    }

    /// `1 row`, `2 rows`.
    private static func count(_ number: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(number) \(number == 1 ? singular : plural ?? singular + "s")"
    }

    /// Rows padded into columns; the last column (a count) right-aligned.
    private static func columns(_ rows: [[String]]) -> [String] {
        guard let count = rows.first?.count else { return [] }
        let widths = (0..<count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == count - 1 ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
    }

    private struct JSONReport: Encodable {
        struct Entity: Encodable {
            let name: String
            let table: String
            let rows: Int
        }

        struct JoinTable: Encodable {
            let name: String
            let rows: Int
        }

        struct Violation: Encodable {
            let kind: String
            let entity: String?
            let object: String?
            let key: String?
            let message: String

            // Absent values are written as null, so every violation has the same keys.
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(kind, forKey: .kind)
                try container.encode(entity, forKey: .entity)
                try container.encode(object, forKey: .object)
                try container.encode(key, forKey: .key)
                try container.encode(message, forKey: .message)
            }

            enum CodingKeys: String, CodingKey { case kind, entity, object, key, message }
        }

        let store: String
        let storeUUID: String
        let ok: Bool
        let entities: [Entity]
        let joinTables: [JoinTable]
        let violations: [Violation]
        /// Every violation found; `violations` lists at most the limit of each kind.
        let violationCount: Int
    }

    /// `{"store":…, "storeUUID":…, "ok":…, "entities":[{"name","table","rows"}], "joinTables":[{"name","rows"}],
    /// "violations":[{"kind","entity","object","key","message"}], "violationCount":N}`.
    static func json(_ report: IntegrityReport) -> String {
        let value = JSONReport(
            store: report.path, storeUUID: report.storeUUID, ok: report.isOK,
            entities: report.entities.map { .init(name: $0.name, table: $0.table, rows: $0.rows) },
            joinTables: report.joinTables.map { .init(name: $0.name, rows: $0.rows) },
            violations: report.violations.map {
                .init(kind: $0.kind.rawValue, entity: $0.entity, object: $0.object, key: $0.key, message: $0.message)
            },
            violationCount: report.violationCount)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(value), as: UTF8.self) + "\n"  // cannot fail: strings, integers, booleans only
    }
}
