import Foundation
import GRDB
import GRDBSQLite

/// The SQL function behind string predicates: `GRAPHSTORE_STRING_SEARCH(text, pattern, operator, options)`.
///
/// - `operator` is one of `'=='`, `'BEGINSWITH'`, `'ENDSWITH'`, `'CONTAINS'`, `'LIKE'`, `'MATCHES'`;
/// - `options` is a bit set: 1 for case-insensitive (`[c]`), 2 for diacritic-insensitive (`[d]`);
/// - it returns 1 or 0, and 0 when `text` or `pattern` is NULL (so `NOT` of a search on a nil value holds, as in
///   memory), for BEGINSWITH/ENDSWITH/CONTAINS with an empty pattern (as `NSString` answers), and for a pattern that
///   is not a valid regular expression.
///
/// Matching follows `NSPredicate`: `LIKE` takes `*` for any run of characters and `?` for one (a backslash makes the
/// next character literal) and must match the whole string; `MATCHES` takes an ICU regular expression that must match
/// the whole string. Characters compare by canonical equivalence (a precomposed `é` equals `e` + combining accent).
/// The function is deterministic, so SQLite may use it in indexes and optimise around it.
public enum PredicateFunctions {
    public static let stringSearchName = "GRAPHSTORE_STRING_SEARCH"

    /// Registers the function on a connection; every connection that runs compiled predicates needs it.
    ///
    /// Registered through SQLite's C API rather than GRDB's `DatabaseFunction`, so that it reads its arguments by
    /// their byte counts: GRDB reads text as a C string, which cuts a string holding U+0000 short, and then
    /// `CONTAINS "TEA\0M"` matched every title holding "tea" in SQL but none in memory.
    public static func install(on db: GRDB.Database) {
        guard let connection = db.sqliteConnection else { return }
        sqlite3_create_function_v2(connection, stringSearchName, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, values in
            guard count == 4, let values, let text = PredicateFunctions.string(values[0]), let pattern = PredicateFunctions.string(values[1]),
                  let name = PredicateFunctions.string(values[2]), let op = Predicate.Operator(rawValue: name) else {
                sqlite3_result_int(context, 0)
                return
            }
            let options = Predicate.Options(rawValue: Int(sqlite3_value_int64(values[3])))
            sqlite3_result_int(context, PredicateFunctions.matches(text, pattern, op, options: options) ? 1 : 0)
        }, nil, nil, nil)
    }

    /// Text of a string or number value, whole; nil for NULL and blobs.
    private static func string(_ value: OpaquePointer?) -> String? {
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT:
            guard let pointer = sqlite3_value_text(value) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
        case SQLITE_INTEGER: return String(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return String(sqlite3_value_double(value))
        default: return nil
        }
    }

    /// The SQL calling the function, with the operator and options written as literals (they come from the
    /// predicate's structure, never from its values).
    static func call(text: String, pattern: String, operator op: Predicate.Operator, options: Predicate.Options) -> String {
        "\(stringSearchName)(\(text), \(pattern), '\(op.rawValue)', \(options.rawValue))"
    }

    /// The test the SQL function makes, for use in memory too.
    public static func matches(_ text: String, _ pattern: String, _ op: Predicate.Operator, options: Predicate.Options) -> Bool {
        switch op {
        case .like:
            return regularExpression(likePattern(fold(pattern, options)), caseInsensitive: false)
                .map { wholeMatch($0, fold(text, options)) } ?? false
        case .matches:
            let diacritics: Predicate.Options = options.contains(.diacriticInsensitive) ? .diacriticInsensitive : []
            return regularExpression(fold(pattern, diacritics), caseInsensitive: options.contains(.caseInsensitive))
                .map { wholeMatch($0, fold(text, diacritics)) } ?? false
        default:
            break
        }
        let text = fold(text, options)
        let pattern = fold(pattern, options)
        switch op {
        case .equal: return text == pattern
        case .notEqual: return text != pattern
        case .beginsWith: return !pattern.isEmpty && text.hasPrefix(pattern)
        case .endsWith: return !pattern.isEmpty && text.hasSuffix(pattern)
        case .contains: return !pattern.isEmpty && text.range(of: pattern) != nil
        default: return false
        }
    }

    static func isValidRegularExpression(_ pattern: String) -> Bool {
        regularExpression(pattern, caseInsensitive: false) != nil
    }

    private static func fold(_ text: String, _ options: Predicate.Options) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return text }
        return text.folding(options: folding, locale: nil)
    }

    /// A regular expression for a LIKE pattern: `*` → `.*`, `?` → `.`, everything else literal.
    private static func likePattern(_ pattern: String) -> String {
        var result = ""
        var escaping = false
        for character in pattern {
            if escaping {
                result += NSRegularExpression.escapedPattern(for: String(character))
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result += ".*"
            case "?": result += "."
            default: result += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        if escaping { result += NSRegularExpression.escapedPattern(for: "\\") }
        return result
    }

    private static func wholeMatch(_ expression: NSRegularExpression, _ text: String) -> Bool {
        let range = NSRange(text.startIndex..., in: text)
        return expression.firstMatch(in: text, options: [], range: range) != nil
    }

    /// Compiled expressions, anchored to the whole string, by pattern and case option.
    private static let cache = RegularExpressionCache()

    private static func regularExpression(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
        cache.expression(pattern, caseInsensitive: caseInsensitive)
    }
}

/// A small lock-protected cache, so a pattern applied to every row is compiled once.
private final class RegularExpressionCache: @unchecked Sendable {
    private let lock = NSLock()
    private var expressions: [String: NSRegularExpression?] = [:]
    private let capacity = 128

    func expression(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        lock.lock()
        defer { lock.unlock() }
        if let cached = expressions[key] { return cached }
        if expressions.count >= capacity { expressions.removeAll(keepingCapacity: true) }
        // `\A(?:…)\z` makes the pattern match the whole string (`$` would also match before a final newline).
        let compiled = try? NSRegularExpression(
            pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive, .dotMatchesLineSeparators] : [.dotMatchesLineSeparators])
        expressions[key] = compiled
        return compiled
    }
}
