import Foundation
@testable import GraphStore
import Testing

@Suite struct PredicateParserTests {
    typealias P = GraphStore.Predicate

    private func parse(_ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> P {
        try P(format: format, arguments: arguments)
    }

    /// The error a format gives, as its description (`position N: …`).
    private func failure(_ format: String, _ arguments: any PredicateArgumentConvertible...) -> GraphStore.PredicateError? {
        do {
            _ = try P(format: format, arguments: arguments)
            return nil
        } catch {
            return error
        }
    }

    private func comparison(_ left: P.Expression, _ op: P.Operator, _ right: P.Expression, _ options: P.Options = []) -> P {
        .comparison(P.Comparison(left, op, right, options: options))
    }

    @Test func everySpellingOfTheComparisonOperators() throws {
        let spellings: [(String, P.Operator)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .lessThan), ("<=", .lessThanOrEqual),
            ("=<", .lessThanOrEqual), (">", .greaterThan), (">=", .greaterThanOrEqual), ("=>", .greaterThanOrEqual),
        ]
        for (spelling, op) in spellings {
            #expect(try parse("age \(spelling) 3") == comparison(.keyPath("age"), op, .constant(3)), "\(spelling)")
            #expect(try parse("age\(spelling)3") == comparison(.keyPath("age"), op, .constant(3)), "\(spelling) unspaced")
        }
    }

    @Test func stringOperatorsWithOptions() throws {
        let words: [(String, P.Operator)] = [
            ("BEGINSWITH", .beginsWith), ("endswith", .endsWith), ("Contains", .contains), ("LIKE", .like), ("matches", .matches),
        ]
        for (word, op) in words {
            #expect(try parse("name \(word) 'a'") == comparison(.keyPath("name"), op, .constant("a")))
            #expect(try parse("name \(word)[c] 'a'") == comparison(.keyPath("name"), op, .constant("a"), .caseInsensitive))
            #expect(try parse("name \(word)[d] 'a'") == comparison(.keyPath("name"), op, .constant("a"), .diacriticInsensitive))
            #expect(try parse("name \(word)[cd] 'a'") == comparison(.keyPath("name"), op, .constant("a"), [.caseInsensitive, .diacriticInsensitive]))
        }
        #expect(try parse("name ==[c] 'a'") == comparison(.keyPath("name"), .equal, .constant("a"), .caseInsensitive))
    }

    @Test func literals() throws {
        #expect(try parse("a == nil") == comparison(.keyPath("a"), .equal, .constant(.null)))
        #expect(try parse("a == NULL") == comparison(.keyPath("a"), .equal, .constant(.null)))
        for yes in ["TRUE", "true", "YES", "yes"] {
            #expect(try parse("a == \(yes)") == comparison(.keyPath("a"), .equal, .constant(true)))
        }
        for no in ["FALSE", "NO", "no"] {
            #expect(try parse("a == \(no)") == comparison(.keyPath("a"), .equal, .constant(false)))
        }
        #expect(try parse("a == -12") == comparison(.keyPath("a"), .equal, .constant(-12)))
        #expect(try parse("a == 2.5") == comparison(.keyPath("a"), .equal, .constant(2.5)))
        #expect(try parse("a == 1e3") == comparison(.keyPath("a"), .equal, .constant(1000.0)))
        #expect(try parse(#"a == "say \"hi\"\n""#) == comparison(.keyPath("a"), .equal, .constant("say \"hi\"\n")))
        #expect(try parse(#"a == 'it\'s \\ \u00e9'"#) == comparison(.keyPath("a"), .equal, .constant("it's \\ é")))
        #expect(try parse("a == \"it's\"") == comparison(.keyPath("a"), .equal, .constant("it's")))
    }

    @Test func keyPathsCountsAndEscapedKeywords() throws {
        #expect(try parse("sender.name == 'A'") == comparison(.keyPath("sender.name"), .equal, .constant("A")))
        #expect(try parse("members.@count > 3") == comparison(.keyPathCount("members"), .greaterThan, .constant(3)))
        #expect(try parse("#size == 1") == comparison(.keyPath("size"), .equal, .constant(1)))
        #expect(try parse("SELF == %@", ObjectID(entityNumber: 1, primaryKey: 5))
            == comparison(.evaluatedObject, .equal, .constant(.objectID(ObjectID(entityNumber: 1, primaryKey: 5)))))
        #expect(try parse("a.in == 1") == comparison(.keyPath("a.in"), .equal, .constant(1)), "keywords are names after a dot")
    }

    @Test func inBetweenAndLists() throws {
        #expect(try parse("kind IN {1, 2}") == comparison(.keyPath("kind"), .in, .list([.constant(1), .constant(2)])))
        #expect(try parse("kind in %@", [1, 2]) == comparison(.keyPath("kind"), .in, .constant([1, 2])))
        #expect(try parse("kind IN {}") == comparison(.keyPath("kind"), .in, .list([])))
        #expect(try parse("age BETWEEN {1, 5}") == comparison(.keyPath("age"), .between, .list([.constant(1), .constant(5)])))
        #expect(try parse("age BETWEEN %@", [1, 5]) == comparison(.keyPath("age"), .between, .constant([1, 5])))
    }

    @Test func logicPrecedenceAndParentheses() throws {
        let a = comparison(.keyPath("a"), .equal, .constant(1))
        let b = comparison(.keyPath("b"), .equal, .constant(2))
        let c = comparison(.keyPath("c"), .equal, .constant(3))
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("a == 1 || b == 2 && c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("(a == 1 or b == 2) and c == 3") == .and([.or([a, b]), c]))
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("!(a == 1) && ! b == 2") == .and([.not(a), .not(b)]))
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("falsepredicate OR a == 1") == .or([.constant(false), a]))
    }

    @Test func quantifiers() throws {
        #expect(try parse("ANY members.role == 1") == .comparison(P.Comparison(.keyPath("members.role"), .equal, .constant(1), modifier: .any)))
        #expect(try parse("some members.role == 1") == .comparison(P.Comparison(.keyPath("members.role"), .equal, .constant(1), modifier: .any)))
        #expect(try parse("ALL members.role == 1") == .comparison(P.Comparison(.keyPath("members.role"), .equal, .constant(1), modifier: .all)))
        #expect(try parse("NONE members.role == 1")
            == .comparison(P.Comparison(.keyPath("members.role"), .equal, .constant(1), modifier: P.Quantifier.none)))
    }

    @Test func argumentsOfEveryKind() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        #expect(try parse("sentAt > %@", date) == comparison(.keyPath("sentAt"), .greaterThan, .constant(.value(.date(date)))))
        #expect(try parse("a == %d AND b == %i AND c == %ld", 1, 2, Int64(3))
            == .and([comparison(.keyPath("a"), .equal, .constant(1)), comparison(.keyPath("b"), .equal, .constant(2)),
                     comparison(.keyPath("c"), .equal, .constant(3))]))
        #expect(try parse("a == %f OR a == %lf", 1.5, 2) == .or([comparison(.keyPath("a"), .equal, .constant(1.5)),
                                                                    comparison(.keyPath("a"), .equal, .constant(2.0))]))
        #expect(try parse("%K == %@", "sender.name", "Ann") == comparison(.keyPath("sender.name"), .equal, .constant("Ann")))
        #expect(try parse("%K.name == %@", "sender", "Ann") == comparison(.keyPath("sender.name"), .equal, .constant("Ann")))
        #expect(try parse("a == %@", PredicateArgument.null) == comparison(.keyPath("a"), .equal, .constant(.null)))
        let missing: String? = nil
        #expect(try parse("a == %@", missing) == comparison(.keyPath("a"), .equal, .constant(.null)))
        let id = UUID()
        #expect(try parse("a == %@", id) == comparison(.keyPath("a"), .equal, .constant(.value(.uuid(id)))))
    }

    @Test func variablesAndSubstitution() throws {
        let template = try parse("source == $SOURCE AND kind IN {$A, 2}")
        #expect(template.variables == ["SOURCE", "A"])
        let object = ObjectID(entityNumber: 3, primaryKey: 9)
        let bound = template.substituting(["SOURCE": object, "A": 1])
        #expect(bound == .and([comparison(.keyPath("source"), .equal, .constant(.objectID(object))),
                               comparison(.keyPath("kind"), .in, .list([.constant(1), .constant(2)]))]))
        #expect(bound.variables.isEmpty)
        #expect(template.substituting(["A": 1]).variables == ["SOURCE"])
    }

    @Test func subquery() throws {
        let parsed = try parse("SUBQUERY(members, $m, $m.role == 1 AND $m.name BEGINSWITH 'A').@count > 0")
        let inner: P = .and([comparison(.keyPath("$m.role"), .equal, .constant(1)), comparison(.keyPath("$m.name"), .beginsWith, .constant("A"))])
        #expect(parsed == comparison(.subqueryCount(collection: "members", variable: "m", predicate: inner), .greaterThan, .constant(0)))
        #expect(parsed.variables.isEmpty)
    }

    @Test func builderMatchesTheParser() throws {
        let date = Date(timeIntervalSinceReferenceDate: 5)
        let conjunction: P = P.key("name") == "Ann" && .key("sentAt") > date
        #expect(conjunction == (try parse("name == %@ AND sentAt > %@", "Ann", date)))
        let prefix = P.key("sender.name").beginsWith("A", options: .caseInsensitive)
        #expect(prefix == (try parse("sender.name BEGINSWITH[c] 'A'")))
        let count: P = P.key("members").count > 3
        #expect(count == (try parse("members.@count > 3")))
        let nils: P = !(P.key("a") == nil) || P.key("b") != nil
        #expect(nils == (try parse("NOT a == nil OR b != nil")))
        #expect(P.key("kind").isIn([1, 2]) == (try parse("kind IN %@", [1, 2])))
        #expect(P.key("age").isBetween(1, and: 5) == (try parse("age BETWEEN %@", [1, 5])))
        let any = P.any("members", .key("role") == 1)
        #expect(any == .quantified(.any, "members", comparison(.keyPath("role"), .equal, .constant(1))))
    }

    @Test func descriptionReadsAsAFormat() throws {
        let predicate = try parse("name BEGINSWITH[cd] 'a\"b' AND (kind == 1 OR NOT members.@count > 2)")
        #expect(predicate.description == #"name BEGINSWITH[cd] "a\"b" AND (kind == 1 OR NOT members.@count > 2)"#)
        #expect(try parse(predicate.description) == predicate)
    }

    // MARK: errors

    @Test func errorsGiveExactPositions() {
        let cases: [(String, String)] = [
            ("name == ", "position 8: expected a value after '==', found end of input"),
            ("name == 'Ann", "position 8: unterminated string: no closing ' before end of input"),
            (#"name == "Ann\""#, "position 8: unterminated string: no closing \" before end of input"),
            ("name ~ 'Ann'", "position 5: unexpected character '~'"),
            ("name LIKES 'Ann'", "position 5: expected an operator after 'name', found 'LIKES'"),
            ("sender.name", "position 11: expected an operator after 'sender.name', found end of input"),
            ("(a == 1 AND b == 2", "position 18: expected ')' to close '(' at position 0, found end of input"),
            ("a == 1)", "position 6: found ')' with no '(' to close"),
            ("a == 1 b == 2", "position 7: expected AND, OR or end of input, found 'b'"),
            ("a == 1 AND", "position 10: expected a value at the start of a comparison, found end of input"),
            ("a ==[x] 1", "position 5: unknown option 'x' (use c, d or cd)"),
            ("a <[c] 1", "position 3: options such as [c] and [d] apply to ==, !=, IN and string operators, not '<'"),
            ("a == AND", "position 5: expected a value after '==', found 'AND'"),
            ("a BETWEEN {1, 2, 3}", "position 10: BETWEEN needs a list of two values, {low, high}; found 3 values"),
            ("a IN {1, 2", "position 10: expected ',' or '}' to close '{' at position 5, found end of input"),
            ("a == %x", "position 5: unknown format specifier '%x' (use %@, %K, %d, %i, %ld, %f or %lf)"),
            ("members.@sum > 1", "position 8: '@sum' is not supported (only '@count' is)"),
        ]
        for (format, expected) in cases {
            #expect(failure(format)?.description == expected, "\(format)")
            #expect(failure(format)?.format == format)
        }
    }

    @Test func argumentErrors() {
        #expect(failure("a == %@")?.description == "position 5: no argument for '%@': the format uses more arguments than the 0 given")
        #expect(failure("a == %@", 1, 2)?.description == "position 7: 2 arguments given but the format uses 1")
        #expect(failure("a == %d", "x")?.description == #"position 5: %d needs an integer argument, found "x""#)
        #expect(failure("%K == 1", 3)?.description == "position 0: %K needs a key path string argument, found 3")
        #expect(failure("%K == 1", "a b")?.description == "position 0: 'a b' given for %K is not a key path")
        #expect(failure("a == %@")?.kind == .argument)
    }

    @Test func injectionAttemptsStayOneValue() throws {
        let hostile = "x'); DROP TABLE ZCHAT; --"
        #expect(try parse(#"name == "x'); DROP TABLE ZCHAT; --""#) == comparison(.keyPath("name"), .equal, .constant(.value(.string(hostile)))))
        #expect(try parse("name == %@", hostile) == comparison(.keyPath("name"), .equal, .constant(.value(.string(hostile)))))
    }
}

/// Descriptions read back as the same predicate, for every number and key spelling.
extension PredicateParserTests {
    /// A description is a format that reads back as the same predicate, also for a number too large for a Double
    /// (it printed as `inf`, a key) and a key spelled like a keyword (it lost its `#`).
    @Test func descriptionsReadBackAsTheSamePredicate() throws {
        for format in ["age > 1e999", "age > -1e999", "age IN {1e999, 2}", "#AND == 1", "#size.in == 2", "#NOT.@count > 1",
                       "SUBQUERY(#ALL, $x, $x.a == 1).@count > 0"] {
            let predicate = try P(format: format)
            #expect(try P(format: predicate.description) == predicate, "\(format) printed as \(predicate.description)")
        }
    }
}
