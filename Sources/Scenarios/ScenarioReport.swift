import Foundation

/// The scenarios `faultline scenario` knows.
public enum ScenarioName: String, CaseIterable, Sendable, Codable {
    /// The Person/AssociateInfo experiment: the ordered foes of one person through a typed join entity, four ways.
    case associates
    /// From LINE's engineering blog on Core Data relationships: to-one and to-many faults, finding a student two ways, and the many-to-nil save.
    case students
}

/// How relationship destinations are faulted in.
public enum FaultStrategy: String, CaseIterable, Sendable, Codable {
    /// As Core Data does: every fault that misses the row cache reads its own row.
    case faithful
    /// A fault that misses the row cache loads its unfired siblings with it (`ObjectContext.faultBatchSize`).
    case batched

    /// The context setting the strategy stands for.
    var faultBatchSize: Int {
        switch self {
        case .faithful: 0
        case .batched: 100
        }
    }
}

/// What one method of a scenario cost and returned.
public struct MethodResult: Codable, Equatable, Sendable {
    public var name: String
    /// SQL statements run while the method ran (the starting objects were fetched before).
    public var queries: Int
    /// Rows those statements returned or changed.
    public var rows: Int
    /// Object faults fulfilled from the row cache.
    public var cacheHits: Int
    /// Object faults that read their row from SQLite.
    public var cacheMisses: Int
    /// Wall time of the method, in milliseconds.
    public var ms: Double
    /// What the method found, as text (names, in the order found).
    public var result: [String]
    /// Anything the figures alone do not say; left out of the JSON when nil.
    public var note: String?

    public init(name: String, queries: Int, rows: Int, cacheHits: Int, cacheMisses: Int, ms: Double, result: [String], note: String? = nil) {
        self.name = name
        self.queries = queries
        self.rows = rows
        self.cacheHits = cacheHits
        self.cacheMisses = cacheMisses
        self.ms = ms
        self.result = result
        self.note = note
    }
}

/// One run of a scenario: every method's figures, in order.
public struct ScenarioReport: Codable, Equatable, Sendable {
    public var scenario: String
    public var strategy: String
    public var methods: [MethodResult]

    public init(scenario: ScenarioName, strategy: FaultStrategy, methods: [MethodResult]) {
        self.scenario = scenario.rawValue
        self.strategy = strategy.rawValue
        self.methods = methods
    }

    /// The method called `name`, if the report has one.
    public func method(_ name: String) -> MethodResult? {
        methods.first { $0.name == name }
    }

    /// The report as JSON: `{"methods":[…],"scenario":…,"strategy":…}`, keys sorted.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The report as a table, then what each method returned and any notes.
    public func table(title: String) -> String {
        let headers = ["#", "method", "queries", "rows", "hits", "misses", "ms"]
        let rowsOfCells = methods.enumerated().map { index, method in
            ["\(index + 1)", method.name, "\(method.queries)", "\(method.rows)", "\(method.cacheHits)", "\(method.cacheMisses)",
             String(format: "%.2f", method.ms)]
        }
        let widths = headers.indices.map { column in
            ([headers[column]] + rowsOfCells.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                // The method name reads left-aligned; numbers line up on the right.
                column == 1 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }
        var text = "\(title)\nstrategy: \(strategy)\n\n"
        text += line(headers) + "\n"
        text += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for cells in rowsOfCells { text += line(cells) + "\n" }
        text += "\n"
        for (index, method) in methods.enumerated() {
            text += "\(index + 1). \(method.name): \(method.result.joined(separator: ", "))\n"
            if let note = method.note { text += "   note: \(note)\n" }
        }
        return text
    }
}

/// Why a scenario could not run: one line.
public struct ScenarioError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// Wraps any error the store, a context or a predicate threw, keeping its own one-line message.
    static func wrapping(_ error: any Error, while doing: String) -> ScenarioError {
        if let error = error as? ScenarioError { return error }
        return ScenarioError("\(doing): \(error)")
    }
}
