// Unit tests for format-argument substitution (%@, %K, printf conversions and their errors) and
// for $variable substitution with withSubstitutionVariables and variableNames.

import Foundation
import Testing

@testable import SiftSyntax

/// The constant substituted for `%@` (or another specifier) in `x == <spec>`.
private func substituted(_ value: Any?) throws -> LiteralValue? { try substituted("%@", value) }

private func substituted(_ spec: String, _ value: Any?) throws -> LiteralValue? {
    let p = try PredicateSyntax.parse("x == " + spec, arguments: [value])
    guard case .comparison(_, _, _, _, let rhs) = p.kind, case .constant(let v) = rhs.kind else { return nil }
    return v
}

/// The error parsing `format` with `args` raises, recording an issue when it parses instead.
func parseError(_ format: String, _ args: [Any?] = []) -> SyntaxError? {
    do {
        let p = try PredicateSyntax.parse(format, arguments: args)
        Issue.record("'\(format)' parsed as '\(p)' but an error was expected")
        return nil
    } catch {
        return error
    }
}

/// Parses the printed form back and checks it gives the same tree.
private func roundTrips(_ p: PredicateSyntax) -> Bool {
    (try? PredicateSyntax.parse(p.description)) == p
}

@Suite struct ObjectArgumentTests {
    @Test func nilAndNull() throws {
        #expect(try substituted(nil) == .null)
        #expect(try substituted(NSNull()) == .null)
        let optionalNil: Int? = nil
        #expect(try substituted(optionalNil as Any?) == .null)
        #expect(try PredicateSyntax.parse("x == %@", arguments: [nil]).description == "x == nil")
    }

    @Test func booleans() throws {
        #expect(try substituted(true) == .bool(true))
        #expect(try substituted(false) == .bool(false))
    }

    @Test func integers() throws {
        #expect(try substituted(42) == .integer(42))
        #expect(try substituted(Int8(-5)) == .integer(-5))
        #expect(try substituted(Int64.min) == .integer(Int64.min))
        #expect(try substituted(UInt8(200)) == .integer(200))
        #expect(try substituted(UInt64(7)) == .integer(7))
        #expect(try substituted(UInt64.max) == .double(Double(UInt64.max)))
        let optional: Int? = 3
        #expect(try substituted(optional as Any?) == .integer(3))
    }

    @Test func doublesAndDecimals() throws {
        #expect(try substituted(1.5) == .double(1.5))
        #expect(try substituted(Float(0.25)) == .double(0.25))
        let d = Decimal(string: "1.25")!
        #expect(try substituted(d) == .decimal(d))
        let p = try PredicateSyntax.parse("x == %@", arguments: [d])
        #expect(p.description == "x == CAST(\"1.25\", \"NSDecimalNumber\")")
        #expect(roundTrips(p))
    }

    @Test func strings() throws {
        #expect(try substituted("Ann") == .string("Ann"))
        #expect(try substituted(Character("é")) == .string("é"))
        let p = try PredicateSyntax.parse("x == %@", arguments: ["say \"hi\" \\ now"])
        #expect(p.description == #"x == "say \"hi\" \\ now""#)
        #expect(roundTrips(p))
    }

    @Test func dates() throws {
        let date = Date(timeIntervalSinceReferenceDate: 722_000_000)
        let p = try PredicateSyntax.parse("x > %@", arguments: [date])
        guard case .comparison(_, _, _, _, let rhs) = p.kind else {
            Issue.record("not a comparison")
            return
        }
        #expect(rhs == ExpressionSyntax(.constant(value: .date(date))))
        #expect(p.description == "x > CAST(722000000.0, \"NSDate\")")
        #expect(roundTrips(p))
        let fractional = try PredicateSyntax.parse("x > %@", arguments: [Date(timeIntervalSinceReferenceDate: -0.5)])
        #expect(roundTrips(fractional))
    }

    @Test func data() throws {
        let bytes = Data([0, 1, 2, 255])
        #expect(try substituted(bytes) == .data(bytes))
        let p = try PredicateSyntax.parse("x == %@", arguments: [bytes])
        #expect(p.description == "x == CAST(\"AAEC/w==\", \"NSData\")")
        #expect(roundTrips(p))
    }

    @Test func arraysWithNils() throws {
        let value: [Any?] = [1, nil, "x", [2.5, nil] as [Any?]]
        #expect(try substituted(value) == .array([.integer(1), .null, .string("x"), .array([.double(2.5), .null])]))
        let p = try PredicateSyntax.parse("x IN %@", arguments: [value])
        #expect(p.description == "x IN {1, nil, \"x\", {2.5, nil}}")
        #expect(roundTrips(p))
        #expect(try substituted([Int]()) == .array([]))
    }

    @Test func dictionaries() throws {
        let value: [String: Any] = ["k": 1, "n": "v", "z": [true]]
        #expect(
            try substituted(value) == .dictionary(["k": .integer(1), "n": .string("v"), "z": .array([.bool(true)])]))
        #expect(
            try PredicateSyntax.parse("x == %@", arguments: [["b": 2, "a": 1] as [String: Any]]).description
                == "x == {\"a\" = 1, \"b\" = 2}")
    }

    @Test func sets() throws {
        #expect(try substituted(Set([3, 1, 2])) == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(try substituted(Set(["b", "a"])) == .array([.string("a"), .string("b")]))
    }

    @Test func unsupportedType() throws {
        struct Opaque {}
        let e = try #require(parseError("x == %@", [Opaque()]))
        #expect(e.id == "unsupported-argument")
        #expect(e.location == SourceLocation(line: 1, column: 6))
    }
}

@Suite struct KeyPathAndPrintfArgumentTests {
    @Test func keyPathArgument() throws {
        let p = try PredicateSyntax.parse("%K == %@", arguments: ["a.b", 1])
        #expect(
            p
                == PredicateSyntax(
                    .comparison(
                        quantifier: nil, lhs: ExpressionSyntax(.keyPath(base: nil, components: ["a", "b"])),
                        operator: .equal, options: [], rhs: ExpressionSyntax(.constant(value: .integer(1))))))
        #expect(p.description == "a.b == 1")
        let q = try PredicateSyntax.parse("%K.@count > 0", arguments: ["items"])
        guard case .comparison(_, let lhs, _, _, _) = q.kind else {
            Issue.record("not a comparison")
            return
        }
        #expect(lhs == ExpressionSyntax(.keyPath(base: nil, components: ["items", "@count"])))
        // A reserved word given through %K is a plain key and prints escaped.
        #expect(try PredicateSyntax.parse("%K == 1", arguments: ["size"]).description == "#size == 1")
    }

    @Test func invalidKeyPathArgument() throws {
        // Only the empty string is refused: any other string is a key path (see KeyPathTests).
        let e = try #require(parseError("%K == 1", [""]))
        #expect(e.id == "invalid-key-path-argument")
        #expect(e.description == "1:1: error: '' is not a valid key path for '%K'")
        let n = try #require(parseError("%K == 1", [42]))
        #expect(n.id == "wrong-argument-type")
        #expect(n.description == "1:1: error: '%K' expects a string key path, found Int")
    }

    @Test func printfConversions() throws {
        #expect(try substituted("%d", 42) == .integer(42))
        #expect(try substituted("%lld", Int64.max) == .integer(Int64.max))
        #expect(try substituted("%u", UInt32(7)) == .integer(7))
        #expect(try substituted("%f", 2.5) == .double(2.5))
        #expect(try substituted("%f", 2) == .double(2))
        #expect(try substituted("%s", "str") == .string("str"))
        #expect(try substituted("%c", Character("z")) == .string("z"))
        #expect(try substituted("%hi", 100) == .integer(100))
        #expect(try substituted("%hi", -32768) == .integer(-32768))
    }

    @Test func integerConversionRejectsDouble() throws {
        let e = try #require(parseError("x == %d", [1.5]))
        #expect(e.id == "wrong-argument-type")
        #expect(e.description == "1:6: error: '%d' expects an integer, found Double")
    }

    @Test func shortConversionOutOfRange() throws {
        let e = try #require(parseError("x == %hi", [40_000]))
        #expect(e.id == "wrong-argument-type")
        #expect(e.description == "1:6: error: '%hi' expects an integer that fits its size, found 40000")
        #expect(parseError("x == %hhu", [256])?.id == "wrong-argument-type")
        #expect(parseError("x == %u", [-1])?.id == "wrong-argument-type")
    }

    @Test func tooFewArguments() throws {
        let e = try #require(parseError("a == %@ AND b == %@", ["x"]))
        #expect(e.id == "missing-argument")
        #expect(e.location == SourceLocation(line: 1, column: 18))
        #expect(e.description == "1:18: error: no argument given for '%@'")
        let k = try #require(parseError("%K == 1", []))
        #expect(k.id == "missing-argument")
        #expect(k.location == SourceLocation(line: 1, column: 1))
    }

    @Test func tooManyArguments() throws {
        let e = try #require(parseError("a == %@", [1, 2]))
        #expect(e.id == "extra-arguments")
        #expect(e.description == "1:8: error: 2 arguments given but the format uses 1")
    }

    @Test func unknownAndPositionalSpecifiers() throws {
        let k = try #require(parseError("%k == 1", ["a"]))
        #expect(k.id == "unknown-format-specifier")
        #expect(k.description == "1:1: error: unknown format specifier '%k'")
        let p = try #require(parseError("a == %1$@", ["x"]))
        #expect(p.id == "positional-specifier")
        #expect(p.description == "1:6: error: positional format specifiers like '%1$@' are not supported")
    }

    @Test func argumentsAreConsumedLeftToRight() throws {
        let p = try PredicateSyntax.parse("%K == %@ AND %K > %d", arguments: ["a", "x", "b", 3])
        #expect(p.description == "a == \"x\" AND b > 3")
    }
}

@Suite struct VariableSubstitutionTests {
    @Test func replacesFreeVariables() throws {
        let p = try PredicateSyntax.parse("age > $min AND name == $name")
        let s = p.withSubstitutionVariables(["min": .integer(18), "name": .string("Ann")])
        #expect(s == (try PredicateSyntax.parse("age > 18 AND name == 'Ann'")))
        // Variables not in the dictionary stay.
        let partial = p.withSubstitutionVariables(["min": .integer(1)])
        #expect(partial == (try PredicateSyntax.parse("age > 1 AND name == $name")))
        #expect(partial.variableNames == ["name"])
    }

    @Test func aggregatesOfSubstitutedConstantsFold() throws {
        let p = try PredicateSyntax.parse("a BETWEEN {$lo, $hi}")
        let s = p.withSubstitutionVariables(["lo": .integer(1), "hi": .integer(5)])
        #expect(s == (try PredicateSyntax.parse("a BETWEEN {1, 5}")))
    }

    @Test func subqueryVariableIsNotReplaced() throws {
        let p = try PredicateSyntax.parse("$x == 1 AND SUBQUERY(items, $x, $x.v > $min).@count > 0")
        let s = p.withSubstitutionVariables(["x": .integer(5), "min": .integer(3)])
        #expect(s == (try PredicateSyntax.parse("5 == 1 AND SUBQUERY(items, $x, $x.v > 3).@count > 0")))
    }

    @Test func assignmentTargetIsNotReplaced() throws {
        let p = try PredicateSyntax.parse("($y := $x) == 1")
        let s = p.withSubstitutionVariables(["y": .integer(9), "x": .integer(2)])
        guard case .comparison(_, let lhs, _, _, _) = s.kind else {
            Issue.record("not a comparison")
            return
        }
        #expect(
            lhs == ExpressionSyntax(.assignment(variable: "y", value: ExpressionSyntax(.constant(value: .integer(2))))))
    }

    @Test func substitutionReachesNestedExpressions() throws {
        let p = try PredicateSyntax.parse("a[$i] == TERNARY($b == 1, sum:({$c, 2}), $d.e)")
        let s = p.withSubstitutionVariables(["i": .integer(0), "b": .integer(1), "c": .integer(3)])
        #expect(s == (try PredicateSyntax.parse("a[0] == TERNARY(1 == 1, sum:({3, 2}), $d.e)")))
        #expect(s.variableNames == ["d"])
    }

    @Test func variableNames() throws {
        let p = try PredicateSyntax.parse("a == $x AND SUBQUERY(items, $i, $i.v > $min).@count > 0 OR $a.$b == 'q'")
        #expect(p.variableNames == ["x", "min", "a", "b"])
        #expect(try PredicateSyntax.parse("a == 1").variableNames.isEmpty)
        #expect(try PredicateSyntax.parse("a == 1").assignedVariableNames.isEmpty)
        // Outside its SUBQUERY the iteration variable's name is free.
        #expect(try PredicateSyntax.parse("$i == 1 AND SUBQUERY(s, $i, $i == 2).@count > 0").variableNames == ["i"])
    }
}

@Suite struct AssignedVariableNameTests {
    @Test func assignmentTargetsAreListedApart() throws {
        let p = try PredicateSyntax.parse("$v := age * 2 == 10 AND $w == 1")
        #expect(p.assignedVariableNames == ["v"])
        #expect(p.variableNames == ["v", "w"])
        // A target inside the SUBQUERY that binds it is not the predicate's.
        let q = try PredicateSyntax.parse("SUBQUERY(kids, $k, ($k := 1) == 1).@count > 0 AND ($u := 2) == 2")
        #expect(q.assignedVariableNames == ["u"])
    }
}
