import Foundation
@testable import GraphStore
import Testing

/// Seeded fuzzing of the two parsers that read text from outside: predicate format strings and Xcode model files.
/// Every input must give a value or throw the parser's own error (`PredicateError`, `ModelError`) — never crash,
/// never hang — and what parses must go on working: a predicate compiles to SQL that runs and selects what
/// evaluating it in memory selects; a model opens a store. `docs/testing.md` tells how to run more seeds.
///
/// No input's time is asserted: a time is not a fact a test can check on a shared machine. A hang (a parser that
/// loops, or goes quadratic on a long input) is caught by the suite's time limit instead.
@Suite(.timeLimit(.minutes(5))) struct FuzzTests {
    typealias P = GraphStore.Predicate
    typealias PE = GraphStore.PredicateError

    static let predicateSeeds = TestEnvironment.seeds("PREDICATE_FUZZ", defaultCount: 8)
    static let predicateInputs = TestEnvironment.integer("PREDICATE_FUZZ_INPUTS") ?? 1_000
    static let modelSeeds = TestEnvironment.seeds("MODEL_FUZZ", defaultCount: 6)
    static let modelInputs = TestEnvironment.integer("MODEL_FUZZ_INPUTS") ?? 400

    // MARK: predicates

    /// Formats written by hand: every part of the grammar at least once.
    static let handWrittenFormats = [
        "name == 'ann'", "age >= 30 AND isBlocked == NO", "name BEGINSWITH[cd] 'a' OR (kind == 1 AND NOT members.@count > 2)",
        "ANY members.name == 'bob'", "ALL chats.kind == 1", "NONE messages.score > 2", "SOME chats.title ==[c] 'team'",
        "SUBQUERY(members, $u, $u.age > 26 AND $u.isBlocked == NO).@count >= 1", "name IN {'bob', nil}", "age BETWEEN {1, 5}",
        "%K == %@", "name == %@", "age > %d", "score < %f", "sender == $SENDER", "TRUEPREDICATE", "FALSEPREDICATE OR a == 1",
        #"text == "say \"hi\"\n""#, #"text == 'it\'s \\ \u00e9'"#, "a == -12 OR b == 2.5 OR c == 1e3", "#size == 1", "SELF == %@",
        "chat.budget >= 10.5", "name LIKE '?o*'", "name MATCHES '[a-z]{3}'", "!(a == 1) && ! b == 2 || c != 3", "a <> 1 OR a =< 2 OR a => 3",
    ]

    static let predicateTokens = [
        "(", ")", "{", "}", "[c]", "[cd]", "[x]", "'", "\"", "\\", "%@", "%K", "%d", "%f", "%", "$x", "$", "@count", "@sum", "@", "#", ".",
        ",", "==", "=", "!=", "<>", "<", ">=", "=>", "&&", "||", "!", " AND ", " OR ", " NOT ", " ANY ", " ALL ", " NONE ", " IN ",
        " BETWEEN ", " CONTAINS ", " LIKE ", " MATCHES ", " BEGINSWITH ", " SUBQUERY(", "SELF", "nil", "YES", "TRUEPREDICATE", " ",
        "name", "members", "sender.name", "1", "-1", "2.5", "1e308", "1e309", "9223372036854775808",
    ]

    /// Arguments for a fuzzed format: mostly as many as it has `%` signs, sometimes any number; of every kind.
    static func arguments(for format: String, _ random: inout SeededRandom, ids: [ObjectID]) -> [any PredicateArgumentConvertible] {
        let pool: [any PredicateArgumentConvertible] = [
            "name", "sender.name", "a b", Int64(3), 2.5, PredicateArgument.null, [1, 2], ids.first!, Date(timeIntervalSinceReferenceDate: 200),
            UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, Decimal(string: "10.5")!, true, PredicateArgument.list([.objectID(ids.last!), .null]),
        ]
        let count = random.chance(80) ? format.filter { $0 == "%" }.count : random.below(4)
        return (0..<count).map { _ in random.pick(pool)! }
    }

    /// What went wrong with one input: nothing when it parsed (and then worked) or failed with a `PredicateError`.
    static func check(_ format: String, _ arguments: [any PredicateArgumentConvertible], store: PredicateEvaluationTests.SavedStore,
                      context: ObjectContext) -> [String] {
        var problems: [String] = []
        let parsed: P
        do {
            parsed = try P(format: format, arguments: arguments)
        } catch {
            if error.format != format { problems.append("the error does not carry the format: \(error)") }
            if let position = error.position, !(0...format.count).contains(position) {
                problems.append("the error's position \(position) is outside the format (\(format.count) characters): \(error)")
            }
            return problems
        }
        // Without arguments every value is written in the format, so the description reads back as the same predicate.
        if !format.contains("%") {
            do {
                let again = try P(format: parsed.description)
                if again != parsed { problems.append("its description \(parsed.description.debugDescription) reads back as \(again)") }
            } catch {
                problems.append("its description \(parsed.description.debugDescription) does not parse: \(error)")
            }
        }
        problems += differences(parsed, store: store, context: context)
        return problems
    }

    /// For each entity: compiling and evaluating must both fail with the same kind of error, or both select the
    /// same objects — and the compiled SQL must run.
    static func differences(_ predicate: P, store: PredicateEvaluationTests.SavedStore, context: ObjectContext) -> [String] {
        var problems: [String] = []
        for entity in ["Chat", "Message", "User"] {
            var compiler = PredicateCompiler(schema: store.schema, entity: entity)
            let compiled: Result<PredicateSQL, PE> = Result { () throws(PE) in try compiler.compile(predicate) }
            let evaluated: Result<[Int64], PE>
            do {
                evaluated = .success(try store.memoryMatches(entity, predicate, in: context))
            } catch let error as PE {
                evaluated = .failure(error)
            } catch {
                problems.append("\(entity): evaluating threw \(error)")
                continue
            }
            switch (compiled, evaluated) {
            case (.failure(let compileError), .failure(let evaluateError)):
                if compileError.kind != evaluateError.kind {
                    problems.append("\(entity): compiling fails with \(compileError.kind) (\(compileError)), evaluating with \(evaluateError.kind) (\(evaluateError))")
                }
            case (.failure(let error), .success):
                problems.append("\(entity): compiling fails (\(error)) but evaluating works")
            case (.success, .failure(let error)):
                problems.append("\(entity): evaluating fails (\(error)) but compiling works")
            case (.success, .success(let memory)):
                // Fetched the way an app fetches, so that values are bound as the store binds them.
                do {
                    let sql = try context.fetchObjectIDs(FetchRequest(entityName: entity, predicate: predicate)).map(\.primaryKey).sorted()
                    if sql != memory { problems.append("\(entity): the SQL selects \(sql), evaluation \(memory)") }
                } catch {
                    problems.append("\(entity): the compiled SQL fails: \(error)")
                }
            }
        }
        return problems
    }

    @Test(arguments: predicateSeeds)
    func mutatedPredicatesParseOrThrow(seed: UInt64) {
        let report = onSmallStack { () -> [String] in
            do {
                let store = try PredicateEvaluationTests.SavedStore()
                let context = ObjectContext(coordinator: store.coordinator, name: "fuzz")
                let ids = store.ids.keys.sorted().map { store.ids[$0]! }
                let corpus = try Self.handWrittenFormats + PredicateEvaluationTests.cases(store.ids).map { $0.1.description }
                var mutator = TextMutator(seed: seed, tokens: Self.predicateTokens)
                var random = SeededRandom(seed: seed ^ 0x5EED)
                var report: [String] = []
                for index in 0..<Self.predicateInputs {
                    let format = mutator.mutate(random.pick(corpus)!, splicingWith: corpus)
                    let given = Self.arguments(for: format, &random, ids: ids)
                    let problems = Self.check(format, given, store: store, context: context)
                    if !problems.isEmpty {
                        report.append("input \(index): \(format.debugDescription) with \(given.count) arguments (\(given)):\n    "
                                      + problems.joined(separator: "\n    "))
                    }
                }
                return report
            } catch {
                return ["could not set up: \(error)"]
            }
        }
        for problem in report {
            Issue.record(Comment(rawValue: "seed \(seed) (replay: PREDICATE_FUZZ_SEED=\(seed)), \(problem)"))
        }
    }

    /// Nesting far deeper than anyone writes is refused with a syntax error (on a 512 KiB stack, where recursing
    /// all the way down would overflow); nesting up to the limit parses, compiles and evaluates.
    @Test func deepNestingIsRefusedNotOverflowed() {
        let deep = 10_000
        let formats = [
            String(repeating: "(", count: deep) + "age == 1" + String(repeating: ")", count: deep),
            String(repeating: "(", count: deep),
            String(repeating: "NOT ", count: deep) + "age == 1",
            String(repeating: "!", count: deep) + "age == 1",
            "age IN " + String(repeating: "{", count: deep) + "1" + String(repeating: "}", count: deep),
            String(repeating: "SELF.", count: deep) + "age == 1",
            String(repeating: "SUBQUERY(chats, $c, ", count: deep / 10) + "$c.kind == 1" + String(repeating: ").@count > 0", count: deep / 10),
            String(repeating: "ANY (", count: deep) + "age == 1",
        ]
        let problems = onSmallStack { () -> [String] in
            var problems: [String] = []
            for format in formats {
                do {
                    _ = try P(format: format)
                    problems.append("\(format.prefix(40))… (\(format.count) characters) parsed")
                } catch let error as PE {
                    if error.kind != .syntax { problems.append("\(format.prefix(40))…: \(error.kind) \(error)") }
                } catch {
                    problems.append("\(format.prefix(40))…: \(error)")
                }
            }
            // As deep as allowed: parses, and the compiler and evaluator (which recurse over the result) cope.
            let limit = PredicateParser.maximumNesting
            let allowed = [
                String(repeating: "(", count: limit) + "age == 1" + String(repeating: ")", count: limit),
                String(repeating: "NOT ", count: limit) + "age == 1",
                "age IN " + String(repeating: "{", count: limit) + "1" + String(repeating: "}", count: limit),
                String(repeating: "SUBQUERY(chats, $c, ", count: limit / PredicateParser.subqueryLevels) + "$c.kind == 1"
                    + String(repeating: ").@count > 0", count: limit / PredicateParser.subqueryLevels),
                String(repeating: "SELF.", count: limit) + "age == 1",
            ]
            do {
                let store = try PredicateEvaluationTests.SavedStore()
                let context = ObjectContext(coordinator: store.coordinator, name: "deep")
                for format in allowed {
                    do {
                        let predicate = try P(format: format)
                        problems += Self.differences(predicate, store: store, context: context).map { "\(format.prefix(30))…: \($0)" }
                    } catch {
                        problems.append("\(format.prefix(30))… (within the limit) failed: \(error)")
                    }
                }
            } catch {
                problems.append("could not set up: \(error)")
            }
            return problems
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    /// Long inputs parse or fail with an error, and do not hang: thousands of comparisons, a long string, a long
    /// number. A parser quadratic in its input would take hours on these (10^12 steps for the million characters),
    /// so the suite's time limit stops it: a guard against a hang, not a measure of speed.
    @Test func longInputsParseWithoutHanging() {
        let comparisons = Array(repeating: "name == 'ann'", count: 20_000).joined(separator: " AND ")
        let formats = [
            comparisons,
            comparisons + " AND",
            "name == '" + String(repeating: "é", count: 1_000_000) + "'",
            "name == '" + String(repeating: "x", count: 1_000_000),
            "age == " + String(repeating: "9", count: 100_000),
            "a" + String(repeating: ".b", count: 50_000) + " == 1",
            "age IN {" + Array(repeating: "1", count: 50_000).joined(separator: ", ") + "}",
        ]
        var parsed = 0
        for format in formats {
            if (try? P(format: format)) != nil { parsed += 1 }
        }
        // The well-formed ones parse: the comparisons, the long string, the long number, the long key path, the list.
        #expect(parsed == 5)
    }

    /// Predicates made from the grammar over the chat model (valid syntax, mostly valid keys, values of every kind):
    /// compiled SQL and in-memory evaluation select the same objects, or fail alike.
    @Test(arguments: predicateSeeds)
    func generatedPredicatesSelectAlikeInSQLAndInMemory(seed: UInt64) throws {
        let store = try PredicateEvaluationTests.SavedStore()
        let context = ObjectContext(coordinator: store.coordinator, name: "fuzz")
        var generator = PredicateGenerator(seed: seed)
        var worked = 0
        let count = Self.predicateInputs / 2
        for index in 0..<count {
            let (entity, format) = generator.predicate()
            let predicate: P
            do {
                predicate = try P(format: format)
            } catch {
                Issue.record("seed \(seed) input \(index): the generated \(format.debugDescription) does not parse: \(error)")
                continue
            }
            if (try? store.memoryMatches(entity, predicate, in: context)) != nil { worked += 1 }
            for problem in Self.differences(predicate, store: store, context: context) {
                Issue.record(Comment(rawValue: "seed \(seed) (replay: PREDICATE_FUZZ_SEED=\(seed)) input \(index) \(format.debugDescription) for \(entity): \(problem)"))
            }
        }
        // Most generated predicates are valid for the entity they were made for, so the comparison says something.
        #expect(worked * 2 > count, "only \(worked) of \(count) generated predicates evaluate")
    }

    // MARK: model files

    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The `contents` files of the test models and, when `CoreDataCorpus` names a folder, of the Core Data corpus.
    static func modelFiles() -> [URL] {
        var files: [URL] = []
        for root in [testsFolder.appendingPathComponent("Models")] + [CoreDataCorpus.folder].compactMap({ $0 }) {
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.lastPathComponent == "contents" { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// What went wrong loading one model text: nothing when it loaded (and a store could be opened on it, or
    /// refused with a `StoreError`) or failed with a `ModelError`.
    static func checkModel(_ text: Data, in folder: TemporaryDirectory, index: Int) -> [String] {
        var problems: [String] = []
        let model: ObjectModel
        do {
            model = try ObjectModel(try XcodeModelLoader.declarations(fromXML: text, file: "contents"))
        } catch {
            if error.problems.isEmpty { problems.append("a ModelError without problems") }
            return problems
        }
        // A model SQLite cannot hold (more than 2,000 columns in one table) fails here with a `StoreError`, which
        // is fine; crashing is not.
        _ = try? PersistentStoreCoordinator(path: folder.path("store-\(index).sqlite"), model: model)
        return problems
    }

    static let modelTokens = [
        "<", ">", "/>", "</entity>", "\"", "'", "=", "&", "&amp;", "&#0;", "&bogus;", "<![CDATA[", "]]>", "<!--", "-->", "<?xml", "?>",
        " name=\"\"", " name=\"X\"", " parentEntity=\"Student\"", " destinationEntity=\"Nowhere\"", " inverseName=\"nothing\"",
        " attributeType=\"Integer 128\"", " attributeType=\"Date\"", " toMany=\"YES\"", " ordered=\"maybe\"", " optional=\"NO\"",
        " deletionRule=\"Explode\"", " minCount=\"-1\"", " maxCount=\"99999999999999999999\"", " derived=\"YES\"",
        " derivationExpression=\"@sum\"", " defaultValueString=\"abc\"", " isAbstract=\"YES\"", "<entity name=\"E\">", "<attribute/>",
        "<relationship name=\"r\" destinationEntity=\"E\"/>", "<fetchIndex name=\"i\"><fetchIndexElement property=\"p\"/></fetchIndex>",
        "<uniquenessConstraints><uniquenessConstraint><constraint/></uniquenessConstraint></uniquenessConstraints>",
    ]

    @Test(arguments: modelSeeds)
    func mutatedModelFilesLoadOrThrow(seed: UInt64) throws {
        let files = Self.modelFiles()
        try #require(!files.isEmpty, "no model files under \(Self.testsFolder.path)/Models")
        if !CoreDataCorpus.isPresent { print("FuzzTests: \(CoreDataCorpus.absentReason); fuzzing the test models only") }
        let texts = try files.map { try String(contentsOf: $0, encoding: .utf8) }
        let folder = try TemporaryDirectory()
        var mutator = TextMutator(seed: seed, tokens: Self.modelTokens)
        var structural = ModelMutator(seed: seed ^ 0xC0DE)
        for index in 0..<Self.modelInputs {
            let source = index % texts.count
            let text = index % 3 == 0 ? mutator.mutate(texts[source], splicingWith: texts) : structural.mutate(texts[source])
            for problem in Self.checkModel(Data(text.utf8), in: folder, index: index) {
                Issue.record(Comment(rawValue: "seed \(seed) (replay: MODEL_FUZZ_SEED=\(seed)) input \(index), from "
                                     + "\(files[source].deletingLastPathComponent().lastPathComponent): \(problem)\n\(text.prefix(4_000))"))
            }
        }
    }

    /// The mutations worth trying on purpose, each on every test model.
    @Test func namedModelMutationsLoadOrThrow() throws {
        let files = Self.modelFiles()
        let folder = try TemporaryDirectory()
        var index = 0
        for (file, text) in try files.map({ ($0, try String(contentsOf: $0, encoding: .utf8)) }) {
            for (name, mutated) in ModelMutator.named(text) {
                for problem in Self.checkModel(Data(mutated.utf8), in: folder, index: index) {
                    Issue.record(Comment(rawValue: "\(name) of \(file.deletingLastPathComponent().lastPathComponent): \(problem)"))
                }
                index += 1
            }
        }
    }
}

/// Predicates over the chat model of `PredicateTestStore`, as format strings, from its grammar.
struct PredicateGenerator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    private enum Kind { case string, integer, decimal, double, date, boolean, uuid }

    private static let attributes: [String: [(String, Kind)]] = [
        "Chat": [("title", .string), ("kind", .integer), ("budget", .decimal)],
        "Message": [("text", .string), ("sentAt", .date), ("score", .double)],
        "User": [("name", .string), ("age", .integer), ("isBlocked", .boolean), ("id", .uuid), ("rating", .double)],
    ]
    private static let toOnes: [String: [(String, String)]] = ["Message": [("sender", "User"), ("chat", "Chat")]]
    private static let toManys: [String: [(String, String)]] = [
        "Chat": [("members", "User"), ("messages", "Message")], "User": [("messages", "Message"), ("chats", "Chat")],
    ]
    private static let strings = ["ann", "Ann", "é", "e\u{301}", "", "team", "a'b", "x\\y", "*e*", "?o*", "[a-z]+", "(", "%", "日本"]

    /// An entity and a predicate for it.
    mutating func predicate() -> (String, String) {
        let entity = random.pick(["Chat", "Message", "User"])!
        return (entity, predicate(entity, prefix: "", depth: 0))
    }

    private mutating func literal(_ kind: Kind) -> String {
        // Now and then a value of another kind, or nil: coercions and mismatches are part of the grammar too.
        let kind = random.chance(15) ? random.pick([Kind.string, .integer, .double, .boolean])! : kind
        if random.chance(8) { return "nil" }
        switch kind {
        case .string: return "'" + random.pick(Self.strings)!.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        case .integer: return random.pick(["0", "1", "2", "30", "-5", "41", "9223372036854775807"])!
        case .decimal: return random.pick(["10.5", "20", "0.25", "-1"])!
        case .double: return random.pick(["1.5", "3", "0.5", "4.5", "1e300", "-0.0"])!
        case .date: return random.pick(["200", "250.5", "0"])!
        case .boolean: return random.pick(["YES", "NO", "TRUE", "false", "1"])!
        case .uuid: return "'00000000-0000-0000-0000-00000000000A'"
        }
    }

    private mutating func keyPath(_ entity: String, prefix: String) -> (String, Kind) {
        if let toOne = random.pick(Self.toOnes[entity] ?? []), random.chance(30) {
            let (path, kind) = keyPath(toOne.1, prefix: "")
            return (prefix + toOne.0 + "." + path, kind)
        }
        let (name, kind) = random.pick(Self.attributes[entity]!)!
        return (prefix + name, kind)
    }

    private mutating func comparison(_ entity: String, prefix: String) -> String {
        let (path, kind) = keyPath(entity, prefix: prefix)
        let options = random.pick(["", "", "", "[c]", "[d]", "[cd]"])!
        switch random.below(6) {
        case 0 where kind == .string:
            return "\(path) \(random.pick(["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES"])!)\(options) \(literal(kind))"
        case 1:
            let items = (0..<random.below(4)).map { _ in literal(kind) }
            return "\(path) IN\(kind == .string ? options : "") {\(items.joined(separator: ", "))}"
        case 2 where kind != .string && kind != .boolean && kind != .uuid:
            return "\(path) BETWEEN {\(literal(kind)), \(literal(kind))}"
        case 3:
            return "\(path) \(random.pick(["==", "!="])!) nil"
        default:
            let op = random.pick(["==", "!=", "<", "<=", ">", ">="])!
            let suffix = kind == .string && (op == "==" || op == "!=") ? options : ""
            return random.chance(10) ? "\(literal(kind)) \(op)\(suffix) \(path)" : "\(path) \(op)\(suffix) \(literal(kind))"
        }
    }

    private mutating func predicate(_ entity: String, prefix: String, depth: Int) -> String {
        let choice = depth > 2 ? random.below(3) : random.below(9)
        switch choice {
        case 0, 1, 2:
            return comparison(entity, prefix: prefix)
        case 3:
            let operands = (0..<(2 + random.below(2))).map { _ in predicate(entity, prefix: prefix, depth: depth + 1) }
            return "(" + operands.joined(separator: random.pick([" AND ", " OR ", " && ", " || "])!) + ")"
        case 4:
            return "NOT (" + predicate(entity, prefix: prefix, depth: depth + 1) + ")"
        case 5:
            return random.pick(["TRUEPREDICATE", "FALSEPREDICATE"])!
        case 6:
            guard let (name, destination) = random.pick(Self.toManys[entity] ?? []) else { return comparison(entity, prefix: prefix) }
            let (path, kind) = keyPath(destination, prefix: "")
            let op = random.pick(["==", "!=", "<", ">", "BEGINSWITH"])!
            return "\(random.pick(["ANY", "ALL", "NONE", "SOME"])!) \(prefix)\(name).\(path) \(kind == .string ? op : "==") \(literal(kind))"
        case 7:
            guard let (name, _) = random.pick(Self.toManys[entity] ?? []) else { return comparison(entity, prefix: prefix) }
            return "\(prefix)\(name).@count \(random.pick(["==", ">", "<=", "!="])!) \(random.pick(["0", "1", "2", "nil", "1.5"])!)"
        default:
            guard prefix.isEmpty, let (name, destination) = random.pick(Self.toManys[entity] ?? []) else { return comparison(entity, prefix: prefix) }
            let inner = predicate(destination, prefix: "$x.", depth: depth + 1)
            return "SUBQUERY(\(name), $x, \(inner)).@count \(random.pick(["==", ">", ">="])!) \(random.pick(["0", "1", "2"])!)"
        }
    }
}

/// Changes to a model file's XML that keep it well-formed but break the model: names, types, destinations,
/// inverses, parents, counts and flags replaced, attributes and elements removed or repeated.
struct ModelMutator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    private static let attributePattern = try! NSRegularExpression(pattern: #" ([A-Za-z]+)="([^"]*)""#)
    private static let elementPattern = try! NSRegularExpression(pattern: #"(?m)^\s*<(entity|attribute|relationship|fetchIndex|uniquenessConstraint)[^\n]*$"#)

    private static let replacements: [String: [String]] = [
        "name": ["", "X", "1abc", "with space", "ünïcode", String(repeating: "N", count: 100_000), "Student", "name", "entity"],
        "attributeType": ["Integer 128", "", "Date", "Binary", "Transformable", "ObjectID", "String"],
        "destinationEntity": ["Nowhere", "", "Student", "Class"],
        "inverseName": ["nothing", "", "students", "name"],
        "inverseEntity": ["Elsewhere", ""],
        "parentEntity": ["Student", "Class", "Nowhere", "", "Contact"],
        "toMany": ["YES", "NO", "maybe"],
        "optional": ["YES", "NO", "1"],
        "ordered": ["YES", "NO", ""],
        "deletionRule": ["Cascade", "Deny", "No Action", "Explode"],
        "minCount": ["-1", "5", "99999999999999999999", "x"],
        "maxCount": ["0", "1", "2", "-3"],
        "derivationExpression": ["@sum", "name.@count", "a.b.c", "", "now()"],
        "defaultValueString": ["abc", "1e999", "", "YES"],
        "isAbstract": ["YES", "NO", "perhaps"],
    ]

    mutating func mutate(_ text: String) -> String {
        var result = text
        for _ in 0..<(1 + random.below(3)) { result = mutateOnce(result) }
        return result
    }

    /// The ranges of `name="…"` in `<entity` elements of `text`.
    private static func entityNames(in text: String) -> [(whole: Range<String.Index>, value: Range<String.Index>)] {
        attributePattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            let whole = Range(match.range, in: text)!
            guard text[..<whole.lowerBound].hasSuffix("<entity"), text[Range(match.range(at: 1), in: text)!] == "name" else { return nil }
            return (whole, Range(match.range(at: 2), in: text)!)
        }
    }

    private mutating func mutateOnce(_ text: String) -> String {
        let whole = NSRange(text.startIndex..., in: text)
        switch random.below(5) {
        case 0, 1:
            // One XML attribute's value replaced.
            let matches = Self.attributePattern.matches(in: text, range: whole).filter { match in
                Self.replacements[String(text[Range(match.range(at: 1), in: text)!])] != nil
            }
            guard let match = random.pick(matches) else { return text }
            let key = String(text[Range(match.range(at: 1), in: text)!])
            return text.replacingCharacters(in: Range(match.range(at: 2), in: text)!, with: random.pick(Self.replacements[key]!)!)
        case 2:
            // One XML attribute removed, or written twice (which XML forbids).
            guard let match = random.pick(Self.attributePattern.matches(in: text, range: whole)) else { return text }
            let range = Range(match.range, in: text)!
            return random.chance(70) ? text.replacingCharacters(in: range, with: "") : text.replacingCharacters(in: range, with: String(text[range]) + String(text[range]))
        case 3:
            // One element's line removed or repeated (an entity's opening line alone breaks the nesting).
            guard let match = random.pick(Self.elementPattern.matches(in: text, range: whole)) else { return text }
            let range = Range(match.range, in: text)!
            return random.chance(50) ? text.replacingCharacters(in: range, with: "") : text.replacingCharacters(in: range, with: String(text[range]) + String(text[range]))
        default:
            // An entity made the child of another (cycles included).
            let entities = Self.entityNames(in: text)
            guard let target = random.pick(entities), let parent = random.pick(entities) else { return text }
            return text.replacingCharacters(in: target.whole, with: String(text[target.whole]) + " parentEntity=\"\(text[parent.value])\"")
        }
    }

    /// Named mutations of one model text.
    static func named(_ text: String) -> [(String, String)] {
        let entities = entityNames(in: text).map { String(text[$0.value]) }
        func setting(_ key: String, _ value: String, onEntity entity: String, in text: String) -> String {
            text.replacingOccurrences(of: "<entity name=\"\(entity)\"", with: "<entity name=\"\(entity)\" \(key)=\"\(value)\"")
        }
        var cases: [(String, String)] = []
        for length in [0, 1, text.utf8.count / 3, text.utf8.count / 2, text.utf8.count - 1] {
            cases.append(("truncated to \(length) bytes", String(decoding: text.utf8.prefix(length), as: UTF8.self)))
        }
        if let first = entities.first {
            cases.append(("entity its own parent", setting("parentEntity", first, onEntity: first, in: text)))
            cases.append(("empty entity name", text.replacingOccurrences(of: "<entity name=\"\(first)\"", with: "<entity name=\"\"")))
            cases.append(("100,000-character entity name", text.replacingOccurrences(of: "\"\(first)\"", with: "\"\(String(repeating: "E", count: 100_000))\"")))
            cases.append(("entity declared twice", text.replacingOccurrences(of: "</model>", with: "<entity name=\"\(first)\"/></model>")))
        }
        if entities.count >= 2 {
            let one = setting("parentEntity", entities[1], onEntity: entities[0], in: text)
            cases.append(("inheritance cycle of two", setting("parentEntity", entities[0], onEntity: entities[1], in: one)))
        }
        let chain = (0..<2_000).map { "<entity name=\"Chain\($0)\"\($0 > 0 ? " parentEntity=\"Chain\($0 - 1)\"" : "")/>" }
        cases.append(("2,000 entities in one inheritance chain", text.replacingOccurrences(of: "</model>", with: chain.joined() + "</model>")))
        let wide = (0..<2_000).map { "<attribute name=\"a\($0)\" optional=\"YES\" attributeType=\"String\"/>" }.joined()
        cases.append(("2,000 attributes", text.replacingOccurrences(of: "</entity>", with: wide + "</entity>")))
        cases.append(("dangling destinations", text.replacingOccurrences(of: "destinationEntity=\"", with: "destinationEntity=\"Gone")))
        cases.append(("dangling inverses", text.replacingOccurrences(of: "inverseName=\"", with: "inverseName=\"gone")))
        cases.append(("no inverse entities", text.replacingOccurrences(of: "inverseEntity=\"", with: "inverseEntityX=\"")))
        cases.append(("unknown attribute types", text.replacingOccurrences(of: "attributeType=\"String\"", with: "attributeType=\"Text\"")))
        cases.append(("every attribute type Date", text.replacingOccurrences(of: #"attributeType="[^"]*""#, with: "attributeType=\"Date\"", options: .regularExpression)))
        cases.append(("empty attribute names", text.replacingOccurrences(of: "<attribute name=\"", with: "<attribute name=\"\" x=\"")))
        cases.append(("duplicated XML attributes", text.replacingOccurrences(of: "optional=\"YES\"", with: "optional=\"YES\" optional=\"YES\"")))
        cases.append(("every relationship to-many", text.replacingOccurrences(of: "<relationship ", with: "<relationship toMany=\"YES\" ")))
        cases.append(("an entity nested in an entity", text.replacingOccurrences(of: "<attribute ", with: "<entity name=\"Inner\"/><attribute ")))
        cases.append(("unknown elements", text.replacingOccurrences(of: "<attribute ", with: "<mystery a=\"1\"><b/></mystery><attribute ")))
        cases.append(("an undefined XML entity", text.replacingOccurrences(of: "<model ", with: "<model note=\"&undefined;\" ")))
        let laughs = "<?xml version=\"1.0\"?><!DOCTYPE model [<!ENTITY a \"aaaaaaaaaa\">"
            + (1...9).map { "<!ENTITY \(Character(UnicodeScalar(97 + $0)!)) \"" + String(repeating: "&\(Character(UnicodeScalar(96 + $0)!));", count: 10) + "\">" }.joined()
            + "]><model><entity name=\"E\"><attribute name=\"x\" attributeType=\"String\" defaultValueString=\"&j;\"/></entity></model>"
        cases.append(("a billion laughs", laughs))
        cases.append(("elements nested 10,000 deep", "<model>" + String(repeating: "<x>", count: 10_000) + String(repeating: "</x>", count: 10_000) + "</model>"))
        cases.append(("not UTF-8", String(decoding: [0x3C, 0x6D, 0xFF, 0xFE, 0x3E], as: UTF8.self)))
        cases.append(("a different root element", "<plist><dict/></plist>"))
        return cases
    }
}
