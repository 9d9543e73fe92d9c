// Unit tests for the lexer and parser: the shape of the syntax tree (not just its printed form)
// for precedence, quantifiers, operators, options, literals, key paths, functions, folding, and
// the source ranges and UTF-8-aware columns attached to nodes and errors.

import Foundation
import Testing

@testable import SiftSyntax

// MARK: - Helpers

private func kp(_ components: String...) -> ExpressionSyntax {
    ExpressionSyntax(.keyPath(base: nil, components: components))
}
private func const(_ v: LiteralValue) -> ExpressionSyntax { ExpressionSyntax(.constant(value: v)) }
private func int(_ i: Int64) -> ExpressionSyntax { const(.integer(i)) }
private func variable(_ n: String) -> ExpressionSyntax { ExpressionSyntax(.variable(name: n)) }
private func cmp(
    _ lhs: ExpressionSyntax, _ op: ComparisonOperator, _ rhs: ExpressionSyntax,
    _ options: ComparisonOptions = [], quantifier: Quantifier? = nil
) -> PredicateSyntax {
    PredicateSyntax(.comparison(quantifier: quantifier, lhs: lhs, operator: op, options: options, rhs: rhs))
}
private func eq(_ key: String, _ value: Int64) -> PredicateSyntax { cmp(kp(key), .equal, int(value)) }
private func and(_ ps: PredicateSyntax...) -> PredicateSyntax { PredicateSyntax(.and(operands: ps)) }
private func or(_ ps: PredicateSyntax...) -> PredicateSyntax { PredicateSyntax(.or(operands: ps)) }
private func not(_ p: PredicateSyntax) -> PredicateSyntax { PredicateSyntax(.not(operand: p)) }

/// The parts of a comparison predicate, or nil.
private func parts(_ p: PredicateSyntax) -> (
    quantifier: Quantifier?, lhs: ExpressionSyntax, op: ComparisonOperator,
    options: ComparisonOptions, rhs: ExpressionSyntax
)? {
    guard case .comparison(let q, let l, let op, let o, let r) = p.kind else { return nil }
    return (q, l, op, o, r)
}

/// The right-hand side of `x == <text>`.
private func rhs(_ text: String, _ args: [Any?] = []) throws -> ExpressionSyntax {
    let p = try PredicateSyntax.parse("x == " + text, arguments: args)
    return try #require(parts(p)).rhs
}

/// The left-hand side of `<text> == 1`.
private func lhs(_ text: String) throws -> ExpressionSyntax {
    try #require(parts(try PredicateSyntax.parse(text + " == 1"))).lhs
}

// MARK: - Predicate structure

@Suite struct PredicateStructureTests {
    @Test func andBindsTighterThanOr() throws {
        #expect(try PredicateSyntax.parse("a == 1 OR b == 2 AND c == 3") == or(eq("a", 1), and(eq("b", 2), eq("c", 3))))
        #expect(try PredicateSyntax.parse("a == 1 AND b == 2 OR c == 3") == or(and(eq("a", 1), eq("b", 2)), eq("c", 3)))
        #expect(try PredicateSyntax.parse("a == 1 && b == 2 || c == 3") == or(and(eq("a", 1), eq("b", 2)), eq("c", 3)))
    }

    @Test func chainsFlattenToOneNaryNode() throws {
        let p = try PredicateSyntax.parse("a == 1 AND b == 2 AND c == 3 AND d == 4")
        guard case .and(let ops) = p.kind else {
            Issue.record("not an AND: \(p)")
            return
        }
        #expect(ops.count == 4)
        #expect(ops.allSatisfy { parts($0) != nil })
        #expect(try PredicateSyntax.parse("a == 1 OR b == 2 OR c == 3") == or(eq("a", 1), eq("b", 2), eq("c", 3)))
        // Mixed: the OR holds two flat ANDs.
        #expect(
            try PredicateSyntax.parse("a == 1 AND b == 2 AND c == 3 OR d == 4 AND e == 5")
                == or(and(eq("a", 1), eq("b", 2), eq("c", 3)), and(eq("d", 4), eq("e", 5))))
    }

    @Test func parenthesisedGroupKeepsItsShape() throws {
        // Only chains written without parentheses flatten; an explicit group stays a nested node,
        // so the canonical form keeps the user's parentheses and still round-trips.
        let p = try PredicateSyntax.parse("(a == 1 AND b == 2) AND c == 3")
        #expect(p == and(and(eq("a", 1), eq("b", 2)), eq("c", 3)))
        #expect(p.description == "(a == 1 AND b == 2) AND c == 3")
        #expect(try PredicateSyntax.parse(p.description) == p)
    }

    @Test func notPrecedence() throws {
        #expect(try PredicateSyntax.parse("NOT a == 1 AND b == 2") == and(not(eq("a", 1)), eq("b", 2)))
        #expect(try PredicateSyntax.parse("! a == 1 OR b == 2") == or(not(eq("a", 1)), eq("b", 2)))
        #expect(try PredicateSyntax.parse("NOT NOT a == 1") == not(not(eq("a", 1))))
        #expect(try PredicateSyntax.parse("NOT (a == 1 OR b == 2)") == not(or(eq("a", 1), eq("b", 2))))
        #expect(
            try PredicateSyntax.parse("NOT self != 42")
                == not(cmp(ExpressionSyntax(.evaluatedObject), .notEqual, int(42))))
    }

    @Test func quantifiers() throws {
        let any = cmp(kp("a"), .equal, int(1), quantifier: .any)
        #expect(try PredicateSyntax.parse("ANY a == 1") == any)
        #expect(try PredicateSyntax.parse("SOME a == 1") == any)
        #expect(try PredicateSyntax.parse("some a == 1") == any)
        #expect(try PredicateSyntax.parse("NONE a == 1") == not(any))
        #expect(try PredicateSyntax.parse("ALL a == 1") == cmp(kp("a"), .equal, int(1), quantifier: .all))
        #expect(try PredicateSyntax.parse("NONE a == 1").description == "NOT ANY a == 1")
    }

    @Test func constantPredicates() throws {
        #expect(try PredicateSyntax.parse("TRUEPREDICATE") == PredicateSyntax(.constant(value: true)))
        #expect(try PredicateSyntax.parse("falsepredicate") == PredicateSyntax(.constant(value: false)))
    }

    @Test func between() throws {
        let p = try PredicateSyntax.parse("a BETWEEN {1, 3}")
        #expect(p == cmp(kp("a"), .between, const(.array([.integer(1), .integer(3)]))))
        let q = try PredicateSyntax.parse("a between {1, b}")
        #expect(q == cmp(kp("a"), .between, ExpressionSyntax(.aggregate(elements: [int(1), kp("b")]))))
        #expect(try PredicateSyntax.parse("a BETWEEN $r") == cmp(kp("a"), .between, variable("r")))
    }
}

// MARK: - Operators and options

@Suite struct OperatorTests {
    static let spellings: [(String, ComparisonOperator)] = [
        ("=", .equal), ("==", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .lessThan), ("<=", .lessThanOrEqual), ("=<", .lessThanOrEqual),
        (">", .greaterThan), (">=", .greaterThanOrEqual), ("=>", .greaterThanOrEqual),
        ("MATCHES", .matches), ("matches", .matches), ("LIKE", .like), ("Like", .like),
        ("BEGINSWITH", .beginsWith), ("beginswith", .beginsWith), ("ENDSWITH", .endsWith),
        ("IN", .in), ("in", .in), ("CONTAINS", .contains), ("BETWEEN", .between),
        ("UTI-CONFORMS-TO", .utiConformsTo), ("uti-conforms-to", .utiConformsTo), ("UTI-EQUALS", .utiEquals),
    ]

    @Test(arguments: spellings)
    func comparisonOperatorSpelling(_ spelling: String, _ expected: ComparisonOperator) throws {
        let p = try PredicateSyntax.parse("a \(spelling) b")
        #expect(p == cmp(kp("a"), expected, kp("b")))
        // The compact form without spaces works for the symbolic ones.
        if spelling.first!.isLetter == false {
            #expect(try PredicateSyntax.parse("a\(spelling)b") == cmp(kp("a"), expected, kp("b")))
        }
    }

    static let optionCases: [(String, UInt8)] = [
        ("c", 1), ("d", 2), ("n", 4), ("l", 8), ("cd", 3), ("dc", 3), ("CD", 3), ("C", 1), ("cdln", 15), ("nl", 12),
    ]

    @Test(arguments: optionCases)
    func options(_ letters: String, _ raw: UInt8) throws {
        let p = try PredicateSyntax.parse("name LIKE[\(letters)] 'x'")
        let c = try #require(parts(p))
        #expect(c.op == .like)
        #expect(c.options == ComparisonOptions(rawValue: raw))
        #expect(c.options.rawValue == raw)
    }

    @Test func optionMembers() throws {
        let o = try #require(parts(try PredicateSyntax.parse("a ==[dc] 'b'"))).options
        #expect(o.contains(.caseInsensitive) && o.contains(.diacriticInsensitive))
        #expect(!o.contains(.normalized) && !o.contains(.localeSensitive))
        #expect(try #require(parts(try PredicateSyntax.parse("a CONTAINS[n] 'b'"))).options == .normalized)
        #expect(try #require(parts(try PredicateSyntax.parse("a BEGINSWITH[l] 'b'"))).options == .localeSensitive)
        #expect(try PredicateSyntax.parse("a ==[CD] 'b'").description == "a ==[cd] \"b\"")
    }

    @Test func arithmeticPrecedence() throws {
        let e = try lhs("1 + 2 * 3")
        #expect(
            e
                == ExpressionSyntax(
                    .binary(
                        operator: .add, lhs: int(1),
                        rhs: ExpressionSyntax(.binary(operator: .multiply, lhs: int(2), rhs: int(3))))))
        let left = try lhs("10 - 2 - 3")
        #expect(
            left
                == ExpressionSyntax(
                    .binary(
                        operator: .subtract,
                        lhs: ExpressionSyntax(.binary(operator: .subtract, lhs: int(10), rhs: int(2))),
                        rhs: int(3))))
    }
}

// MARK: - Literals

@Suite struct LiteralTests {
    static let numbers: [(String, LiteralValue)] = [
        ("0", .integer(0)), ("42", .integer(42)), ("-5", .integer(-5)),
        ("9223372036854775807", .integer(Int64.max)),
        ("-9223372036854775808", .integer(Int64.min)),
        ("1.5", .double(1.5)), ("2.0", .double(2.0)), ("1e3", .double(1000)), ("2.5E-1", .double(0.25)),
        ("9.2e-5", .double(9.2e-5)),
        ("0x1F", .integer(31)), ("0XFF", .integer(255)), ("0o17", .integer(15)), ("0b101", .integer(5)),
        ("0x7FFFFFFFFFFFFFFF", .integer(Int64.max)),
        ("99999999999999999999", .double(1e20)),
        ("9223372036854775808", .double(9223372036854775808.0)),
    ]

    @Test(arguments: numbers)
    func numericLiteral(_ text: String, _ expected: LiteralValue) throws {
        #expect(try rhs(text) == const(expected))
    }

    @Test func integerAndDoubleAreDistinct() throws {
        #expect(try rhs("1") != rhs("1.0"))
        guard case .constant(.integer) = try rhs("7").kind else {
            Issue.record("7 is not an Int64")
            return
        }
        guard case .constant(.double) = try rhs("7.0").kind else {
            Issue.record("7.0 is not a Double")
            return
        }
    }

    @Test func hexOutOfRangeIsAnError() throws {
        let e = try #require(throws: SyntaxError.self) { try PredicateSyntax.parse("x == 0xFFFFFFFFFFFFFFFFF") }
        #expect(e.id == "number-out-of-range")
        #expect(e.location == SourceLocation(line: 1, column: 6))
    }

    static let escapes: [(String, String)] = [
        (#"\n"#, "\n"), (#"\t"#, "\t"), (#"\r"#, "\r"), (#"\a"#, "\u{07}"), (#"\b"#, "\u{08}"),
        (#"\f"#, "\u{0C}"), (#"\v"#, "\u{0B}"), (#"\\"#, "\\"), (#"\'"#, "'"), (#"\""#, "\""),
        (#"\101"#, "A"), (#"\0"#, "\u{0}"), (#"\7"#, "\u{07}"), (#"\x41"#, "A"), (#"\X4a"#, "J"),
        (#"\u00e9"#, "é"), (#"\U20AC"#, "€"), (#"\q"#, "q"), (#"\%"#, "%"),
        (#"a\tb\nc"#, "a\tb\nc"), (#"\1012"#, "A2"),
    ]

    @Test(arguments: escapes)
    func stringEscape(_ written: String, _ expected: String) throws {
        #expect(try rhs("'" + written + "'") == const(.string(expected)))
        #expect(try rhs("\"" + written + "\"") == const(.string(expected)))
    }

    @Test func quotesDoNotTerminateEachOther() throws {
        #expect(try rhs(#""a'b'c""#) == const(.string("a'b'c")))
        #expect(try rhs(#"'say "hi"'"#) == const(.string("say \"hi\"")))
        #expect(try rhs("''") == const(.string("")))
    }

    @Test func formatSpecifierInsideQuotesIsLiteral() throws {
        // No argument is consumed: with no arguments this parses...
        #expect(try rhs("'%@'") == const(.string("%@")))
        #expect(try rhs(#""%K""#) == const(.string("%K")))
        // ...and the one argument goes to the unquoted specifier.
        let p = try PredicateSyntax.parse("a == '%@' AND b == %@", arguments: ["x"])
        #expect(p == and(cmp(kp("a"), .equal, const(.string("%@"))), cmp(kp("b"), .equal, const(.string("x")))))
        // An argument for the quoted one alone is an extra argument.
        let e = try #require(throws: SyntaxError.self) { try PredicateSyntax.parse("a == '%@'", arguments: ["x"]) }
        #expect(e.id == "extra-arguments")
    }

    @Test func variableInsideQuotesIsLiteral() throws {
        let p = try PredicateSyntax.parse("a == '$x'")
        #expect(try #require(parts(p)).rhs == const(.string("$x")))
        #expect(p.variableNames.isEmpty)
    }

    @Test func keywordLiterals() throws {
        #expect(try rhs("nil") == const(.null))
        #expect(try rhs("NULL") == const(.null))
        #expect(try rhs("YES") == const(.bool(true)))
        #expect(try rhs("true") == const(.bool(true)))
        #expect(try rhs("NO") == const(.bool(false)))
        #expect(try rhs("FALSE") == const(.bool(false)))
    }
}

// MARK: - Key paths, aggregates, functions

@Suite struct ExpressionShapeTests {
    @Test func keyPaths() throws {
        #expect(try lhs("a.b.@count") == kp("a", "b", "@count"))
        #expect(try lhs("SELF.a") == kp("a"))
        #expect(try lhs("SELF") == ExpressionSyntax(.evaluatedObject))
        #expect(try lhs("#size") == kp("size"))
        #expect(try lhs("a.#like") == kp("a", "like"))
        #expect(try lhs("$x.name") == ExpressionSyntax(.keyPath(base: variable("x"), components: ["name"])))
        #expect(try lhs("$a.$b") == ExpressionSyntax(.dynamicKey(base: variable("a"), key: variable("b"))))
        #expect(try lhs("$x") == variable("x"))
    }

    @Test func indexes() throws {
        #expect(try lhs("a[0]") == ExpressionSyntax(.index(base: kp("a"), index: .expression(int(0)))))
        #expect(try lhs("x[FIRST]") == ExpressionSyntax(.index(base: kp("x"), index: .first)))
        #expect(try lhs("x[last]") == ExpressionSyntax(.index(base: kp("x"), index: .last)))
        #expect(try lhs("x[SIZE]") == ExpressionSyntax(.index(base: kp("x"), index: .size)))
        #expect(
            try lhs("$a[$b].firstName")
                == ExpressionSyntax(
                    .keyPath(
                        base: ExpressionSyntax(.index(base: variable("a"), index: .expression(variable("b")))),
                        components: ["firstName"])))
    }

    @Test func constantAggregatesFold() throws {
        #expect(try rhs("{1, 'x', nil}") == const(.array([.integer(1), .string("x"), .null])))
        #expect(try rhs("{}") == const(.array([])))
        #expect(try rhs("{1, {2, 3}}") == const(.array([.integer(1), .array([.integer(2), .integer(3)])])))
        #expect(try rhs("{-1, 2.5}") == const(.array([.integer(-1), .double(2.5)])))
        #expect(try rhs("{1, b}") == ExpressionSyntax(.aggregate(elements: [int(1), kp("b")])))
    }

    @Test func functionSpellingsGiveOneTree() throws {
        let expected = ExpressionSyntax(.function(name: "sum:", arguments: [const(.array([.integer(1)]))]))
        #expect(try lhs("sum({1})") == expected)
        #expect(try lhs("sum:({1})") == expected)
        #expect(
            try lhs("modulus:by:(7, 2)")
                == ExpressionSyntax(.function(name: "modulus:by:", arguments: [int(7), int(2)])))
        #expect(try lhs("now()") == ExpressionSyntax(.function(name: "now", arguments: [])))
    }

    @Test func operatorSelectorsBecomeOperators() throws {
        let add = ExpressionSyntax(.binary(operator: .add, lhs: int(1), rhs: int(2)))
        #expect(try lhs("add:to:(1, 2)") == add)
        #expect(try lhs("1 + 2") == add)
        #expect(
            try lhs("from:subtract:(a, 1)") == ExpressionSyntax(.binary(operator: .subtract, lhs: kp("a"), rhs: int(1)))
        )
        #expect(try lhs("onesComplement(1)") == ExpressionSyntax(.unary(operator: .bitwiseNot, operand: int(1))))
    }

    @Test func castToDateFolds() throws {
        #expect(try rhs("CAST(0, 'NSDate')") == const(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(
            try rhs("CAST(722000000.5, \"NSDate\")") == const(.date(Date(timeIntervalSinceReferenceDate: 722000000.5))))
        #expect(try rhs("CAST(a, 'NSDate')") == ExpressionSyntax(.cast(value: kp("a"), type: const(.string("NSDate")))))
    }

    @Test func subqueryTernaryAssignment() throws {
        let s = try lhs("SUBQUERY(items, $i, $i.v > 1).@count")
        let inner = cmp(ExpressionSyntax(.keyPath(base: variable("i"), components: ["v"])), .greaterThan, int(1))
        #expect(
            s
                == ExpressionSyntax(
                    .keyPath(
                        base: ExpressionSyntax(.subquery(collection: kp("items"), variable: "i", predicate: inner)),
                        components: ["@count"])))
        #expect(
            try lhs("TERNARY(a == 1, 2, 3)")
                == ExpressionSyntax(.ternary(condition: eq("a", 1), then: int(2), else: int(3))))
    }
}

// MARK: - Source ranges and columns

@Suite struct SourceRangeTests {
    @Test func comparisonRanges() throws {
        let p = try PredicateSyntax.parse("a == 'x'")
        let c = try #require(parts(p))
        #expect(c.lhs.range == SourceRange(0, 1))
        #expect(c.rhs.range == SourceRange(5, 8))
        #expect(p.range == SourceRange(0, 8))
    }

    @Test func compoundRanges() throws {
        let p = try PredicateSyntax.parse("NOT a == 1 AND bb > 22")
        guard case .and(let ops) = p.kind else {
            Issue.record("not an AND")
            return
        }
        #expect(ops[0].range == SourceRange(0, 10))
        #expect(ops[1].range == SourceRange(15, 22))
        #expect(p.range == SourceRange(0, 22))
        #expect(try PredicateSyntax.parse("(a == 1)").range == SourceRange(0, 8))
        let e = try lhs("a.b[0] + 1")
        #expect(e.range == SourceRange(0, 10))
    }

    @Test func rangesAreUTF8Offsets() throws {
        let p = try PredicateSyntax.parse("'héé' == a")
        let c = try #require(parts(p))
        #expect(c.lhs.range == SourceRange(0, 7))
        #expect(c.rhs.range == SourceRange(11, 12))
    }

    @Test func errorColumnCountsCharacters() throws {
        let e = try #require(throws: SyntaxError.self) { try PredicateSyntax.parse("'héé' ==") }
        #expect(e.range.lowerBound == 10)
        #expect(e.location == SourceLocation(line: 1, column: 9))
        #expect(e.description == "1:9: error: expected expression after '=='")
        let f = try #require(throws: SyntaxError.self) { try PredicateSyntax.parse("'👍🏽e\u{301}' ? 1") }
        #expect(f.location == SourceLocation(line: 1, column: 6))
    }
}
