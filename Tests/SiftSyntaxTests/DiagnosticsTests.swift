// Unit tests for syntax diagnostics: exact messages, identifiers and caret placement for invalid
// input, nesting limits on pathological input, a seeded fuzz run that must never crash, and a
// check that parsing a large IN list scales linearly.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftSyntax

@Suite struct DiagnosticMessageTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var input: String
        var description: String
        var id: String
        var testDescription: String { input }
    }

    static let cases: [Case] = [
        Case(input: "a == 1 AND", description: "1:11: error: expected predicate after 'AND'", id: "expected-predicate"),
        Case(input: "a == 1 OR", description: "1:10: error: expected predicate after 'OR'", id: "expected-predicate"),
        Case(
            input: "a == 1 AND AND b == 2", description: "1:12: error: expected predicate after 'AND'",
            id: "expected-predicate"),
        Case(input: "NOT", description: "1:4: error: expected predicate after 'NOT'", id: "expected-predicate"),
        Case(
            input: "TRUEPREDICATE &&", description: "1:17: error: expected predicate after '&&'",
            id: "expected-predicate"),
        Case(input: "name == 'abc", description: "1:9: error: unterminated string literal", id: "unterminated-string"),
        Case(
            input: "name == \"abc\\\"", description: "1:9: error: unterminated string literal",
            id: "unterminated-string"),
        Case(input: "a ==[cx] 'b'", description: "1:5: error: unknown option 'x' in '[cx]'", id: "unknown-option"),
        Case(input: "a ==[] 'b'", description: "1:5: error: empty option list '[]'", id: "empty-options"),
        Case(
            input: "a BETWEEN[c] {1, 2}", description: "1:10: error: options are not allowed after 'BETWEEN'",
            id: "options-not-allowed"),
        Case(input: "a ==", description: "1:5: error: expected expression after '=='", id: "expected-expression"),
        Case(input: "a = = 1", description: "1:5: error: expected expression after '='", id: "expected-expression"),
        Case(input: "a == 1 +", description: "1:9: error: expected expression after '+'", id: "expected-expression"),
        Case(input: "a == -", description: "1:7: error: expected expression after '-'", id: "expected-expression"),
        Case(
            input: "a", description: "1:2: error: expected comparison operator, found end of input",
            id: "expected-operator"),
        Case(input: "a b", description: "1:3: error: expected comparison operator, found 'b'", id: "expected-operator"),
        Case(
            input: "a < b < c",
            description: "1:7: error: comparison operators cannot be chained; parenthesise or use 'AND' before '<'",
            id: "chained-comparison"),
        Case(
            input: "a == 1 b == 2", description: "1:8: error: unexpected 'b' after the end of the predicate",
            id: "unexpected-token"),
        Case(
            input: "a == 1)", description: "1:7: error: unexpected ')' after the end of the predicate",
            id: "unexpected-token"),
        Case(input: "(a == 1", description: "1:8: error: expected ')', found end of input", id: "expected-token"),
        Case(input: "a IN {1, 2", description: "1:11: error: expected '}', found end of input", id: "expected-token"),
        Case(input: "a ? 1", description: "1:3: error: unexpected character '?'", id: "unexpected-character"),
        Case(input: "a == $", description: "1:6: error: unexpected character '$'", id: "unexpected-character"),
        Case(input: "%%", description: "1:1: error: unexpected character '%'", id: "unexpected-character"),
        Case(
            input: #"a == '\xZZ'"#, description: #"1:7: error: invalid escape sequence '\xZ' in string literal"#,
            id: "invalid-escape"),
        Case(input: "a == 12abc", description: "1:6: error: invalid number '12abc'", id: "invalid-number"),
        Case(input: "a == 0x", description: "1:6: error: invalid number '0x'", id: "invalid-number"),
        Case(input: "a == 0b102", description: "1:6: error: invalid number '0b102'", id: "invalid-number"),
        Case(input: "a == 1e", description: "1:6: error: invalid number '1e'", id: "invalid-number"),
        Case(
            input: "a == 0xFFFFFFFFFFFFFFFFF",
            description: "1:6: error: number '0xFFFFFFFFFFFFFFFFF' does not fit in 64 bits", id: "number-out-of-range"),
        Case(
            input: "size == 1", description: "1:1: error: 'size' is a reserved word; write '#size' to use it as a key",
            id: "reserved-word"),
        Case(
            input: "a.like == 1",
            description: "1:3: error: 'like' is a reserved word; write '#like' to use it as a key", id: "reserved-word"),
        Case(
            input: "ANYKEY == 1", description: "1:1: error: 'ANYKEY' is reserved and not supported",
            id: "unsupported-keyword"),
        Case(
            input: "foo(1) == 2",
            description:
                "1:1: error: unknown function 'foo'; register custom functions and call them with 'FUNCTION(target, \"foo\", ...)'",
            id: "unknown-function"),
        Case(
            input: "sum(1, 2) == 3", description: "1:1: error: function 'sum:' takes 1 argument, found 2",
            id: "wrong-argument-count"),
        Case(
            input: "modulus:by:(1) == 3", description: "1:1: error: function 'modulus:by:' takes 2 arguments, found 1",
            id: "wrong-argument-count"),
        Case(input: "a.1 == 2", description: "1:3: error: expected key after '.'", id: "expected-key-path"),
        Case(
            input: "a.@cout == 2",
            description:
                "1:3: error: unknown collection operator '@cout'; write '#\"@cout\"' for a key that begins with '@'",
            id: "unknown-collection-operator"),
        Case(
            input: "SUBQUERY(a, x, x == 1).@count > 0",
            description: "1:13: error: expected variable like '$x' after ','", id: "expected-variable"),
        Case(
            input: "FUNCTION(a, 1) == 2",
            description: "1:13: error: expected a selector string as the second argument of 'FUNCTION'",
            id: "expected-selector-string"),
        Case(
            input: "a == %k", description: "1:6: error: unknown format specifier '%k'", id: "unknown-format-specifier"),
        Case(
            input: "a == %1$@", description: "1:6: error: positional format specifiers like '%1$@' are not supported",
            id: "positional-specifier"),
        Case(input: "a == %@", description: "1:6: error: no argument given for '%@'", id: "missing-argument"),
    ]

    @Test(arguments: cases)
    func diagnostic(_ c: Case) throws {
        let e = try #require(parseError(c.input))
        #expect(e.description == c.description)
        #expect(e.id == c.id)
        #expect(e.message == e.kind.message)
        #expect(e.source == c.input)
        // annotated = description, the source line, and a caret under the error's column.
        let lines = e.annotated.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3)
        guard lines.count == 3 else { return }
        #expect(lines[0] == c.description)
        #expect(lines[1] == c.input)
        let caretLine = lines[2]
        let caretColumn =
            (caretLine.firstIndex(of: "^").map { caretLine.distance(from: caretLine.startIndex, to: $0) } ?? -1) + 1
        #expect(caretColumn == e.location.column)
        #expect(caretLine.prefix(caretColumn - 1).allSatisfy { $0 == " " })
        #expect(caretLine.dropFirst(caretColumn).allSatisfy { $0 == "~" })
    }

    @Test func caretUnderlinesTheWholeToken() throws {
        let e = try #require(parseError("a == 1 b == 2"))
        #expect(e.annotated == "1:8: error: unexpected 'b' after the end of the predicate\na == 1 b == 2\n       ^")
        let f = try #require(parseError("a == 12abc"))
        #expect(f.annotated.hasSuffix("\na == 12abc\n     ^~~~~"))
    }

    @Test func extraArgumentsPointAtTheEnd() throws {
        let e = try #require(parseError("a == 1", [1]))
        #expect(e.description == "1:7: error: 1 argument given but the format uses 0")
        #expect(e.id == "extra-arguments")
    }

    @Test func multiLineInput() throws {
        let e = try #require(parseError("a == 1 AND\nb =="))
        #expect(e.description == "2:5: error: expected expression after '=='")
        #expect(e.annotated == "2:5: error: expected expression after '=='\nb ==\n    ^")
        let f = try #require(parseError("a == 1\n  AND\n\tb ? 2"))
        #expect(f.location == SourceLocation(line: 3, column: 4))
        #expect(f.id == "unexpected-character")
        // Tabs are kept in the caret indent so the caret lines up.
        #expect(f.annotated.hasSuffix("\n\tb ? 2\n\t  ^"))
    }

    @Test func emptyInput() throws {
        let e = try #require(parseError(""))
        #expect(e.id == "empty-predicate")
        #expect(e.description == "1:1: error: empty predicate")
        let op = try #require(parseError("== 1"))
        #expect(op.description == "1:1: error: expected expression, found '=='")
        let w = try #require(parseError("   \n  "))
        #expect(w.location == SourceLocation(line: 2, column: 3))
    }
}

@Suite struct NestingLimitTests {
    @Test func deeplyNestedParentheses() throws {
        let text = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        let e = try #require(parseError(text))
        #expect(e.id == "nested-too-deeply")
        #expect(
            e.description.hasSuffix(
                "error: predicate is nested too deeply (the limit is \(PredicateSyntax.maximumDepth) levels)"))
    }

    @Test func manyNots() throws {
        let text = String(repeating: "NOT ", count: 10_000) + "a == 1"
        let e = try #require(parseError(text))
        #expect(e.id == "nested-too-deeply")
    }

    @Test func longArithmeticChain() throws {
        let text = "1" + String(repeating: "+1", count: 99_999) + " == 2"
        let e = try #require(parseError(text))
        #expect(e.id == "nested-too-deeply")
    }

    @Test func deepAggregatesAndUnary() throws {
        #expect(parseError("a IN " + String(repeating: "{", count: 10_000))?.id == "nested-too-deeply")
        #expect(parseError("a == " + String(repeating: "-", count: 10_000) + "b")?.id == "nested-too-deeply")
        #expect(parseError("a == " + String(repeating: "sum(", count: 5_000))?.id == "nested-too-deeply")
    }

    @Test func nestingBelowTheLimitParses() throws {
        let text = String(repeating: "(", count: 50) + "a == 1" + String(repeating: ")", count: 50)
        #expect(try PredicateSyntax.parse(text) == PredicateSyntax.parse("a == 1"))
    }
}

@Suite struct FuzzTests {
    static let tokens: [String] = [
        "a", "b.c", "SELF", "#size", "@count", "$x", "$y", ".", ",", "(", ")", "{", "}", "[", "]",
        "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "&&", "||", "!", "AND", "OR", "NOT",
        "ANY", "SOME", "ALL", "NONE", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN",
        "[c]", "[cd]", "[n]", "[x]", "[]", "UTI-EQUALS", "TRUEPREDICATE", "FALSEPREDICATE",
        "1", "0", "-1", "2.5", "1e3", "0x1F", "0b2", "99999999999999999999", "'s'", "\"t\"", "'", "\"", "'%@'", "\\",
        "nil", "YES", "NO", "FIRST", "LAST", "SIZE", "+", "-", "*", "/", "**", "&", "|", "^", "~", "<<", ">>", ":=",
        "SUBQUERY(", "TERNARY(", "FUNCTION(", "CAST(", "sum(", "sum:(", "add:to:(", "now()", "'NSDate'",
        "%@", "%K", "%d", "%%", "%", "é", "👍🏽", "\u{301}", "\n", "\t", " ", " ", " ",
    ]

    private static func randomInput(_ rng: inout SplitMix64) -> String {
        let length = Int.random(in: 0...64, using: &rng)
        var out = ""
        while out.utf8.count < length {
            if Int.random(in: 0..<4, using: &rng) == 0 {
                let n = Int.random(in: 1...4, using: &rng)
                let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                out += String(decoding: bytes, as: UTF8.self)
            } else {
                out += tokens.randomElement(using: &rng)!
            }
        }
        return out
    }

    @Test func randomInputsNeverCrashAndRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED_CAFE)
        var parsed = 0
        var failed = 0
        var roundTripFailures: [String] = []
        for _ in 0..<20_000 {
            let input = Self.randomInput(&rng)
            let args: [Any?] = input.contains("%") ? ["k", "v", 1] : []
            do {
                let p = try PredicateSyntax.parse(input, arguments: args)
                parsed += 1
                let printed = p.description
                do {
                    let again = try PredicateSyntax.parse(printed)
                    if again != p {
                        roundTripFailures.append(
                            "\(input.debugDescription) → \(printed.debugDescription) (tree differs)")
                    }
                } catch {
                    roundTripFailures.append("\(input.debugDescription) → \(printed.debugDescription): \(error)")
                }
            } catch {
                // `parse` throws only SyntaxError (typed throws), so this is the whole error path.
                failed += 1
                // Every diagnostic is printable and points inside the input.
                #expect(error.location.line >= 1 && error.location.column >= 1)
                #expect(error.range.lowerBound <= input.utf8.count)
                _ = error.annotated
            }
        }
        #expect(parsed + failed == 20_000)
        #expect(parsed > 0, "the generator should produce some valid predicates")
        #expect(roundTripFailures.isEmpty, "round-trip failures (first 5): \(roundTripFailures.prefix(5))")
    }
}

@Suite struct LargeInputTests {
    static func inList(_ count: Int) -> String {
        var s = "a IN {"
        s.reserveCapacity(count * 8 + 8)
        for i in 0..<count {
            if i > 0 { s += ", " }
            s += String(100_000 + i % 900_000)
        }
        return s + "}"
    }

    @Test func oneMegabyteInList() throws {
        let text = Self.inList(131_072)
        #expect(text.utf8.count >= 1_000_000)
        let p = try PredicateSyntax.parse(text)
        guard case .comparison(_, _, .in, _, let rhs) = p.kind, case .constant(.array(let items)) = rhs.kind else {
            Issue.record("not an IN with a constant array")
            return
        }
        #expect(items.count == 131_072)
        #expect(items.first == .integer(100_000))
    }

    /// Groups nested deep that fail at the end: each group is first read as a predicate and then,
    /// when that fails, as an expression; every reading of a group inside another is remembered
    /// (the fuzzer found 400 of these taking seconds when each fallback read them all again). The
    /// error is the one the furthest reading reached, at the end of the input, and the groups that
    /// do close still parse as before.
    @Test(arguments: [1, 2, 30, 400])
    func deepGroupsThatFailReportTheFurthestError(depth: Int) throws {
        let open = String(repeating: "(", count: depth)
        let failing = open + " Q"
        #expect {
            _ = try PredicateSyntax.parse(failing)
        } throws: { error in
            guard let e = error as? SyntaxError else { return false }
            return e.id == "expected-operator" && e.location.column == depth + 3
        }
        let arithmetic = open + "a + 1" + String(repeating: ")", count: depth) + " * 2 > 3"
        let p = try PredicateSyntax.parse(arithmetic)
        #expect(p.description == "(a + 1) * 2 > 3")
        let unclosed = open + "a + 1"
        #expect(throws: SyntaxError.self) { _ = try PredicateSyntax.parse(unclosed) }
    }
}
