import Foundation

extension Predicate {
    /// Parses a format string as written for `NSPredicate`, filling `%@`, `%d`, `%f`, `%K`… from `arguments` in order.
    ///
    /// ```swift
    /// try Predicate(format: "ANY members.role == %d AND name BEGINSWITH[cd] %@", 1, "ann")
    /// try Predicate(format: "%K IN %@", "status", [1, 2, 3])
    /// try Predicate(format: "source == $SOURCE").substituting(["SOURCE": user])
    /// ```
    /// Keywords are case-insensitive; a key that is also a keyword is written with `#` in front (`#size`).
    /// Throws a `PredicateError` giving the 0-based character position of the problem.
    public init(format: String, _ arguments: any PredicateArgumentConvertible...) throws(PredicateError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses a format string with its arguments as an array (see `init(format:_:)`).
    public init(format: String, arguments: [any PredicateArgumentConvertible]) throws(PredicateError) {
        var parser = try PredicateParser(format: format, arguments: arguments.map(\.predicateArgument))
        self = try parser.parse()
    }
}

/// One lexical unit of a format string, with the character offset it starts at.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// A name; `escaped` when written with a leading `#` (never a keyword then).
        case identifier(String, escaped: Bool)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// A format specifier without its `%`: `@`, `d`, `ld`, `f`, `K`…
        case specifier(String)
        /// `$NAME`, without the `$`.
        case variable(String)
        /// `@count` and friends, without the `@`.
        case aggregate(String)
        /// Punctuation and symbolic operators.
        case symbol(String)
        case end
    }

    var kind: Kind
    var position: Int
    /// The characters as written, for messages.
    var text: String

    /// How the token is named in messages: `'=='`, or `end of input`.
    var shown: String { kind == .end ? "end of input" : "'\(text)'" }

    /// The upper-cased name of an unescaped identifier, for keyword tests.
    var keyword: String? {
        if case .identifier(let name, false) = kind { return name.uppercased() }
        return nil
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }
}

/// Splits a format string into tokens.
struct PredicateLexer {
    private let characters: [Character]
    private let format: String
    private var index = 0

    init(_ format: String) {
        self.format = format
        self.characters = Array(format)
    }

    private static let twoCharacterSymbols: Set<String> = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"]
    private static let oneCharacterSymbols: Set<Character> = ["=", "<", ">", "!", "(", ")", "{", "}", ",", ".", "[", "]"]

    private func error(_ message: String, at position: Int) -> PredicateError {
        PredicateError(.syntax, message, format: format, position: position)
    }

    mutating func tokens() throws(PredicateError) -> [PredicateToken] {
        var result: [PredicateToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.kind == .end { return result }
        }
    }

    private func peek(_ offset: Int = 0) -> Character? {
        index + offset < characters.count ? characters[index + offset] : nil
    }

    private static func isNameStart(_ character: Character) -> Bool { character.isLetter || character == "_" }
    private static func isNamePart(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }

    private mutating func name() -> String {
        let start = index
        while let character = peek(), Self.isNamePart(character) { index += 1 }
        return String(characters[start..<index])
    }

    private mutating func next() throws(PredicateError) -> PredicateToken {
        while let character = peek(), character.isWhitespace { index += 1 }
        let start = index
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, position: start, text: String(characters[start..<index]))
        }
        guard let character = peek() else { return PredicateToken(kind: .end, position: start, text: "") }

        if character == "\"" || character == "'" { return try string(quote: character) }
        if character.isASCII && character.isNumber
            || (character == "-" || character == "+") && peek(1).map({ $0.isASCII && $0.isNumber }) == true
            || character == "." && peek(1).map({ $0.isASCII && $0.isNumber }) == true && !(previousIsValueEnd) {
            return try number()
        }
        if Self.isNameStart(character) {
            let text = name()
            return token(.identifier(text, escaped: false))
        }
        switch character {
        case "#":
            index += 1
            guard let first = peek(), Self.isNameStart(first) else { throw error("expected a key name after '#'", at: start) }
            let text = name()
            return token(.identifier(text, escaped: true))
        case "$":
            index += 1
            guard let first = peek(), Self.isNameStart(first) else { throw error("expected a variable name after '$'", at: start) }
            return token(.variable(name()))
        case "@":
            index += 1
            guard let first = peek(), Self.isNameStart(first) else { throw error("expected an aggregate such as '@count' after '@'", at: start) }
            return token(.aggregate(name()))
        case "%":
            index += 1
            for specifier in ["@", "K", "lld", "ld", "lf", "lu", "llu", "hd", "d", "i", "u", "f"] where matches(specifier) {
                index += specifier.count
                return token(.specifier(specifier))
            }
            let found = peek().map { "'%\($0)'" } ?? "'%' at end of input"
            throw error("unknown format specifier \(found) (use %@, %K, %d, %i, %ld, %f or %lf)", at: start)
        default:
            break
        }
        if let second = peek(1), Self.twoCharacterSymbols.contains(String([character, second])) {
            index += 2
            return token(.symbol(String([character, second])))
        }
        if Self.oneCharacterSymbols.contains(character) {
            index += 1
            return token(.symbol(String(character)))
        }
        throw error("unexpected character '\(character)'", at: start)
    }

    /// Whether the character before the current one ends a name or value (so a `.` is a key path dot).
    private var previousIsValueEnd: Bool {
        guard index > 0 else { return false }
        let previous = characters[index - 1]
        return Self.isNamePart(previous) || previous == ")" || previous == "}"
    }

    private func matches(_ text: String) -> Bool {
        for (offset, character) in text.enumerated() where peek(offset) != character { return false }
        return true
    }

    private mutating func number() throws(PredicateError) -> PredicateToken {
        let start = index
        if peek() == "-" || peek() == "+" { index += 1 }
        var isInteger = true
        while let character = peek(), character.isASCII && character.isNumber { index += 1 }
        if peek() == ".", let after = peek(1), after.isASCII && after.isNumber {
            isInteger = false
            index += 1
            while let character = peek(), character.isASCII && character.isNumber { index += 1 }
        }
        if peek() == "e" || peek() == "E" {
            var offset = 1
            if peek(1) == "-" || peek(1) == "+" { offset += 1 }
            if let digit = peek(offset), digit.isASCII && digit.isNumber {
                isInteger = false
                index += offset
                while let character = peek(), character.isASCII && character.isNumber { index += 1 }
            }
        }
        if let character = peek(), Self.isNameStart(character) {
            throw error("unexpected '\(character)' in a number", at: index)
        }
        let text = String(characters[start..<index])
        if isInteger, let value = Int64(text) {
            return PredicateToken(kind: .integer(value), position: start, text: text)
        }
        guard let value = Double(text) else { throw error("'\(text)' is not a number", at: start) }
        return PredicateToken(kind: .double(value), position: start, text: text)
    }

    private mutating func string(quote: Character) throws(PredicateError) -> PredicateToken {
        let start = index
        index += 1
        var value = ""
        while true {
            guard let character = peek() else {
                throw error("unterminated string: no closing \(quote) before end of input", at: start)
            }
            index += 1
            if character == quote { break }
            guard character == "\\" else {
                value.append(character)
                continue
            }
            guard let escaped = peek() else {
                throw error("unterminated string: no closing \(quote) before end of input", at: start)
            }
            index += 1
            switch escaped {
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            case "u":
                let digits = String(characters[index..<min(index + 4, characters.count)])
                guard digits.count == 4, let code = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw error("expected four hexadecimal digits after '\\u'", at: index - 2)
                }
                index += 4
                value.unicodeScalars.append(scalar)
            default:
                // `\"`, `\'`, `\\` and any other escaped character stand for themselves.
                value.append(escaped)
            }
        }
        return PredicateToken(kind: .string(value), position: start, text: String(characters[start..<index]))
    }
}

/// A recursive-descent parser for NSPredicate's format syntax.
///
/// Grammar, loosest binding first:
/// ```
/// predicate   := conjunction ( (OR | ||) conjunction )*
/// conjunction := negation ( (AND | &&) negation )*
/// negation    := (NOT | !) negation | '(' predicate ')' | TRUEPREDICATE | FALSEPREDICATE | comparison
/// comparison  := [ANY | SOME | ALL | NONE] expression operator ['[' options ']'] expression
/// expression  := keyPath ['.@count'] | %K | %@ | %d… | $VARIABLE | literal | '{' expression, … '}' | SELF
///              | SUBQUERY(keyPath, $variable, predicate).@count
/// ```
struct PredicateParser {
    /// How deeply parentheses, `NOT`, lists, `SELF.` and `SUBQUERY` may nest: each counts one level, `SUBQUERY`
    /// `subqueryLevels` (it recurses through the whole grammar, about five times the stack of a parenthesis). Input
    /// nested thousands of levels deep (`((((…`) would overflow a thread's stack here and in the compiler and
    /// evaluator that walk the result, so it is refused with a syntax error. The limit keeps a debug build within
    /// the 512 KiB a secondary thread gets on macOS (a test parses, compiles and evaluates at the limit on such a
    /// stack); no one writes 32 levels by hand.
    static let maximumNesting = 32
    static let subqueryLevels = 4

    private let format: String
    private let tokens: [PredicateToken]
    private let arguments: [PredicateArgument]
    private var index = 0
    private var argumentIndex = 0
    /// How many nesting constructs enclose the current token.
    private var depth = 0

    /// Words that are keywords wherever a value may stand; a key spelled like one is written `#KEY`.
    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "IN", "ANY", "SOME", "ALL", "NONE", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH",
        "BETWEEN", "NIL", "NULL", "SELF", "TRUE", "FALSE", "YES", "NO", "SUBQUERY", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    init(format: String, arguments: [PredicateArgument]) throws(PredicateError) {
        var lexer = PredicateLexer(format)
        self.format = format
        self.tokens = try lexer.tokens()
        self.arguments = arguments
    }

    private var current: PredicateToken { tokens[index] }

    private mutating func advance() -> PredicateToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private func error(_ message: String, at position: Int, _ kind: PredicateError.Kind = .syntax) -> PredicateError {
        PredicateError(kind, message, format: format, position: position)
    }

    /// Enters `levels` more levels of nesting at `token`; the caller leaves them with `depth -= levels`.
    private mutating func descend(at token: PredicateToken, levels: Int = 1) throws(PredicateError) {
        depth += levels
        guard depth <= Self.maximumNesting else {
            throw error("\(token.shown) nests more than \(Self.maximumNesting) levels deep (parentheses, NOT, lists and SELF. count one "
                        + "level each, SUBQUERY \(Self.subqueryLevels))", at: token.position)
        }
    }

    mutating func parse() throws(PredicateError) -> Predicate {
        let predicate = try disjunction()
        if current.kind != .end {
            if current.isSymbol(")") {
                throw error("found ')' with no '(' to close", at: current.position)
            }
            throw error("expected AND, OR or end of input, found \(current.shown)", at: current.position)
        }
        if argumentIndex < arguments.count {
            throw error("\(arguments.count) arguments given but the format uses \(argumentIndex)", at: format.count, .argument)
        }
        return predicate
    }

    private mutating func disjunction() throws(PredicateError) -> Predicate {
        var operands = [try conjunction()]
        while current.keyword == "OR" || current.isSymbol("||") {
            _ = advance()
            operands.append(try conjunction())
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func conjunction() throws(PredicateError) -> Predicate {
        var operands = [try negation()]
        while current.keyword == "AND" || current.isSymbol("&&") {
            _ = advance()
            operands.append(try negation())
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func negation() throws(PredicateError) -> Predicate {
        if current.keyword == "NOT" || current.isSymbol("!") {
            try descend(at: advance())
            defer { depth -= 1 }
            return .not(try negation())
        }
        if current.isSymbol("(") {
            let open = advance()
            try descend(at: open)
            defer { depth -= 1 }
            let inner = try disjunction()
            guard current.isSymbol(")") else {
                throw error("expected ')' to close '(' at position \(open.position), found \(current.shown)", at: current.position)
            }
            _ = advance()
            return inner
        }
        switch current.keyword {
        case "TRUEPREDICATE":
            _ = advance()
            return .constant(true)
        case "FALSEPREDICATE":
            _ = advance()
            return .constant(false)
        default:
            return try comparison()
        }
    }

    private static let wordOperators: [String: Predicate.Operator] = [
        "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith, "CONTAINS": .contains, "LIKE": .like, "MATCHES": .matches,
        "IN": .in, "BETWEEN": .between,
    ]
    private static let symbolOperators: [String: Predicate.Operator] = [
        "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .lessThan, "<=": .lessThanOrEqual,
        "=<": .lessThanOrEqual, ">": .greaterThan, ">=": .greaterThanOrEqual, "=>": .greaterThanOrEqual,
    ]

    private mutating func comparison() throws(PredicateError) -> Predicate {
        var modifier: Predicate.Quantifier?
        var context = "at the start of a comparison"
        switch current.keyword {
        case "ANY", "SOME": modifier = .any
        case "ALL": modifier = .all
        case "NONE": modifier = Predicate.Quantifier.none
        default: break
        }
        if modifier != nil { context = "after \(advance().shown)" }

        let leftStart = current.position
        let left = try expression(context: context)

        let operatorToken = current
        let op: Predicate.Operator
        if let keyword = operatorToken.keyword, let word = Self.wordOperators[keyword] {
            op = word
        } else if case .symbol(let symbol) = operatorToken.kind, let symbolic = Self.symbolOperators[symbol] {
            op = symbolic
        } else {
            // The left side's text is cut from the format only here: doing it for every comparison made parsing
            // quadratic in the length of the format.
            throw error("expected an operator after '\(text(from: leftStart))', found \(operatorToken.shown)", at: operatorToken.position)
        }
        _ = advance()
        let options = try self.options(after: operatorToken, op)
        let operatorText = operatorToken.text + options.formatSuffix

        let rightToken = current
        let right = try expression(context: "after '\(operatorText)'")
        if op == .between { try checkBetween(right, at: rightToken) }
        return .comparison(Predicate.Comparison(left, op, right, options: options, modifier: modifier))
    }

    // The pieces below are functions of their own, not inline in `comparison()` and `expression()`, to keep the
    // frames of those two small: they recurse once per level of nesting, and a debug build gives each frame room
    // for every local of every branch.

    /// The `[c]`, `[d]` or `[cd]` after an operator, if any.
    private mutating func options(after operatorToken: PredicateToken, _ op: Predicate.Operator) throws(PredicateError) -> Predicate.Options {
        guard current.isSymbol("[") else { return [] }
        let open = advance()
        guard case .identifier(let letters, false) = current.kind else {
            throw error("expected options such as [c], [d] or [cd] after '\(operatorToken.text)', found \(current.shown)", at: current.position)
        }
        var options: Predicate.Options = []
        for (offset, letter) in letters.enumerated() {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            default:
                throw error("unknown option '\(letter)' (use c, d or cd)", at: current.position + offset)
            }
        }
        _ = advance()
        guard current.isSymbol("]") else {
            throw error("expected ']' to close '[' at position \(open.position), found \(current.shown)", at: current.position)
        }
        _ = advance()
        switch op {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .between:
            throw error("options such as [c] and [d] apply to ==, !=, IN and string operators, not '\(operatorToken.text)'",
                        at: open.position)
        default:
            return options
        }
    }

    /// BETWEEN takes two values: a list of two, or an argument that is one.
    private func checkBetween(_ right: Predicate.Expression, at token: PredicateToken) throws(PredicateError) {
        var count: Int?
        switch right {
        case .list(let items): count = items.count
        case .constant(.list(let items)): count = items.count
        case .constant: count = 1
        default: break
        }
        if let count, count != 2 {
            throw error("BETWEEN needs a list of two values, {low, high}; found \(count == 1 ? "one value" : "\(count) values")",
                        at: token.position)
        }
    }

    /// The format's text from `start` up to the current token, trimmed, for messages.
    private func text(from start: Int) -> String {
        let characters = Array(format)
        let end = min(current.position, characters.count)
        return String(characters[start..<max(start, end)]).trimmingCharacters(in: .whitespaces)
    }

    private mutating func expression(context: String) throws(PredicateError) -> Predicate.Expression {
        let token = current
        switch token.kind {
        case .end:
            throw error("expected a value \(context), found end of input", at: token.position)
        case .string(let text):
            _ = advance()
            return .constant(.value(.string(text)))
        case .integer(let number):
            _ = advance()
            return .constant(.value(.integer(number)))
        case .double(let number):
            _ = advance()
            return .constant(.value(.double(number)))
        case .variable(let name):
            _ = advance()
            guard current.isSymbol(".") else { return .variable(name) }
            return try keyPathRest("$" + name)
        case .specifier(let specifier):
            _ = advance()
            return try specified(specifier, at: token)
        case .symbol("{"):
            return try list()
        case .identifier(let name, let escaped):
            if !escaped {
                switch name.uppercased() {
                case "NIL", "NULL":
                    _ = advance()
                    return .constant(.null)
                case "TRUE", "YES":
                    _ = advance()
                    return .constant(.value(.boolean(true)))
                case "FALSE", "NO":
                    _ = advance()
                    return .constant(.value(.boolean(false)))
                case "SELF":
                    _ = advance()
                    guard current.isSymbol(".") else { return .evaluatedObject }
                    try descend(at: advance())
                    defer { depth -= 1 }
                    return try expression(context: "after 'SELF.'")
                case "SUBQUERY":
                    return try subquery()
                case let word where Self.reserved.contains(word):
                    throw error("expected a value \(context), found \(token.shown)", at: token.position)
                default:
                    break
                }
            }
            _ = advance()
            return try keyPathRest(name)
        default:
            throw error("expected a value \(context), found \(token.shown)", at: token.position)
        }
    }

    /// The value of a format specifier: its argument, or for `%K` the key path it names.
    private mutating func specified(_ specifier: String, at token: PredicateToken) throws(PredicateError) -> Predicate.Expression {
        let argument = try nextArgument(for: specifier, at: token.position)
        guard specifier == "K" else { return .constant(argument) }
        guard case .value(.string(let path)) = argument else {
            throw error("%K needs a key path string argument, found \(argument)", at: token.position, .argument)
        }
        guard Self.isValidKeyPath(path) else {
            throw error("'\(path)' given for %K is not a key path", at: token.position, .argument)
        }
        if path.hasSuffix(".@count") { return .keyPathCount(String(path.dropLast(7))) }
        return try keyPathRest(path)
    }

    /// `{a, b, …}`, from its `{`.
    private mutating func list() throws(PredicateError) -> Predicate.Expression {
        let open = advance()
        try descend(at: open)
        defer { depth -= 1 }
        var items: [Predicate.Expression] = []
        if current.isSymbol("}") {
            _ = advance()
            return .list(items)
        }
        while true {
            items.append(try expression(context: items.isEmpty ? "after '{'" : "after ','"))
            if current.isSymbol(",") {
                _ = advance()
                continue
            }
            guard current.isSymbol("}") else {
                throw error("expected ',' or '}' to close '{' at position \(open.position), found \(current.shown)", at: current.position)
            }
            _ = advance()
            return .list(items)
        }
    }

    /// Continues a key path with `.name` components and an optional final `.@count`.
    private mutating func keyPathRest(_ start: String) throws(PredicateError) -> Predicate.Expression {
        var path = start
        while current.isSymbol(".") {
            let dot = advance()
            switch current.kind {
            case .identifier(let name, _):
                _ = advance()
                path += "." + name
            case .aggregate(let name):
                guard name.lowercased() == "count" else {
                    throw error("'@\(name)' is not supported (only '@count' is)", at: current.position, .unsupported)
                }
                _ = advance()
                return .keyPathCount(path)
            default:
                throw error("expected a key after '.' at position \(dot.position), found \(current.shown)", at: current.position)
            }
        }
        return .keyPath(path)
    }

    private mutating func subquery() throws(PredicateError) -> Predicate.Expression {
        let keyword = advance()
        try descend(at: keyword, levels: Self.subqueryLevels)
        defer { depth -= Self.subqueryLevels }
        guard current.isSymbol("(") else { throw error("expected '(' after SUBQUERY, found \(current.shown)", at: current.position) }
        _ = advance()
        let collection = try expression(context: "as the collection of SUBQUERY")
        guard case .keyPath(let path) = collection else {
            throw error("the collection of SUBQUERY must be a key path", at: keyword.position)
        }
        guard current.isSymbol(",") else { throw error("expected ',' after the collection of SUBQUERY, found \(current.shown)", at: current.position) }
        _ = advance()
        guard case .variable(let variable) = current.kind else {
            throw error("expected a $variable as the second argument of SUBQUERY, found \(current.shown)", at: current.position)
        }
        _ = advance()
        guard current.isSymbol(",") else { throw error("expected ',' after the variable of SUBQUERY, found \(current.shown)", at: current.position) }
        _ = advance()
        let predicate = try disjunction()
        guard current.isSymbol(")") else {
            throw error("expected ')' to close SUBQUERY at position \(keyword.position), found \(current.shown)", at: current.position)
        }
        _ = advance()
        guard current.isSymbol("."), tokens[index + 1].kind == .aggregate("count") else {
            throw error("expected '.@count' after SUBQUERY(…) (only counts of subqueries are supported), found \(current.shown)",
                        at: current.position, .unsupported)
        }
        _ = advance()
        _ = advance()
        return .subqueryCount(collection: path, variable: variable, predicate: predicate)
    }

    private mutating func nextArgument(for specifier: String, at position: Int) throws(PredicateError) -> PredicateArgument {
        guard argumentIndex < arguments.count else {
            throw error("no argument for '%\(specifier)': the format uses more arguments than the \(arguments.count) given", at: position, .argument)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch specifier {
        case "d", "i", "ld", "lld", "hd", "u", "lu", "llu":
            switch argument {
            case .value(.integer): return argument
            case .value(.boolean(let flag)): return .value(.integer(flag ? 1 : 0))
            default: throw error("%\(specifier) needs an integer argument, found \(argument)", at: position, .argument)
            }
        case "f", "lf":
            switch argument {
            case .value(.double): return argument
            case .value(.integer(let number)): return .value(.double(Double(number)))
            case .value(.decimal(let number)): return .value(.double(NSDecimalNumber(decimal: number).doubleValue))
            default: throw error("%\(specifier) needs a number argument, found \(argument)", at: position, .argument)
            }
        default:
            return argument
        }
    }

    static func isValidKeyPath(_ path: String) -> Bool {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        return parts.enumerated().allSatisfy { offset, part in
            if part == "@count" { return offset == parts.count - 1 && offset > 0 }
            guard let first = part.first, first.isLetter || first == "_" || first == "$" && offset == 0 else { return false }
            return part.dropFirst().allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        }
    }
}
