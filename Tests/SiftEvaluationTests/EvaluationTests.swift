// Semantics checks that the golden corpus cannot express: errors with positions, variables and
// assignment, registered functions, UTI tables, lenient three-valued logic, sorting, thread safety,
// and agreement of the compiled fast paths with the general comparison on random data.

import Foundation
import SiftSyntax
import SiftTestSupport
import SiftText
import Testing

@testable import SiftEvaluation

@Suite struct ErrorReportingTests {
    @Test func errorsPointAtTheFailingNode() throws {
        let p = try SiftPredicate("a == 1 AND\n  name < 5")
        do {
            _ = try p.evaluate(with: ["a": 1, "name": "Ann"])
            Issue.record("expected an error")
        } catch {
            // `evaluate` throws `EvaluationError` only (typed throws), so no cast is needed.
            #expect(error.id == "incomparable-values")
            #expect(error.location == SourceLocation(line: 2, column: 3))
            #expect(error.annotated == "2:3: error: cannot order \"Ann\" and 5\n  name < 5\n  ^~~~~~~~")
        }
    }

    @Test func unboundVariablesAreNamed() throws {
        do {
            _ = try SiftPredicate("x > $limit").evaluate(with: ["x": 1])
            Issue.record("expected an error")
        } catch let error as EvaluationError {
            #expect(error.id == "unbound-variable")
            #expect(error.message == "variable '$limit' is not bound")
            #expect(error.location == SourceLocation(line: 1, column: 5))
        }
    }

    @Test func arithmeticOnNilIsAnError() throws {
        #expect(throws: EvaluationError.self) { try SiftPredicate("age + 1 > 3").evaluate(with: [String: Any]()) }
    }
}

@Suite struct VariablesAndFunctionsTests {
    @Test func variablesBindAtEvaluation() throws {
        let p = try SiftPredicate("score >= $min AND name IN $names")
        #expect(try p.evaluate(with: ["score": 12, "name": "a"], variables: ["min": 10, "names": ["a", "b"]]))
        #expect(try !p.evaluate(with: ["score": 9, "name": "a"], variables: ["min": 10, "names": ["a", "b"]]))
    }

    @Test func assignmentStoresTheValue() throws {
        #expect(try SiftPredicate("($x := 2 + 3) == 5 AND $x * 2 == 10").evaluate(with: nil))
    }

    @Test func subqueryRestoresTheOuterVariable() throws {
        let p = try SiftPredicate("SUBQUERY(kids, $k, $k.age > 3).@count == 1 AND $k == 'outer'")
        #expect(try p.evaluate(with: ["kids": [["age": 5], ["age": 1]]], variables: ["k": "outer"]))
    }

    @Test func registeredFunctions() throws {
        var functions = FunctionRegistry()
        functions.register("double:") { _, args in
            guard let n = args.first?.number else { throw FunctionError("needs a number") }
            return Value(Arithmetic.combine(n, .integer(2), { $0 &* $1 }, *))
        }
        let options = EvaluationOptions(functions: functions)
        #expect(try SiftPredicate("FUNCTION(SELF, 'double:', age) == 84", options: options).evaluate(with: ["age": 42]))
        do {
            _ = try SiftPredicate("FUNCTION(SELF, 'double:', name) == 1", options: options).evaluate(with: ["name": "x"]
            )
            Issue.record("expected an error")
        } catch let error as EvaluationError { #expect(error.id == "invalid-argument") }
        do {
            _ = try SiftPredicate("FUNCTION(SELF, 'triple:', 1) == 3").evaluate(with: nil)
            Issue.record("expected an error")
        } catch let error as EvaluationError { #expect(error.id == "unknown-function") }
    }

    @Test func utiTablesAreExtensible() throws {
        var utis = UTITable.standard
        utis.declare("com.example.note", conformsTo: ["public.plain-text"])
        let p = try SiftPredicate("type UTI-CONFORMS-TO 'public.text'", options: EvaluationOptions(utis: utis))
        #expect(try p.evaluate(with: ["type": "com.example.note"]))
        #expect(try !SiftPredicate("type UTI-CONFORMS-TO 'public.text'").evaluate(with: ["type": "com.example.note"]))
        #expect(try SiftPredicate("type UTI-CONFORMS-TO 'public.item'").evaluate(with: ["type": "com.example.unknown"]))
    }

    @Test func nowAndRandomAreNotFolded() throws {
        let p = try SiftPredicate("now() > %@ AND random() < 1 AND randomn(3) < 3", Date(timeIntervalSince1970: 0))
        for _ in 0..<20 { #expect(try p.evaluate(with: nil)) }
    }
}

@Suite struct LenientTests {
    let records: [[String: Any]] = [["name": "Ann", "age": 41], ["name": 7, "age": 3]]

    func matches(_ format: String, lenient: Bool = true) throws -> [Int] {
        let p = try SiftPredicate(format: format, arguments: [], options: EvaluationOptions(lenient: lenient))
        return try records.indices.filter { try p.evaluate(with: records[$0]) }
    }

    @Test func unknownDoesNotMatchEvenUnderNot() throws {
        #expect(try matches("name BEGINSWITH 'A'") == [0])
        #expect(try matches("NOT name BEGINSWITH 'A'") == [])
        #expect(try matches("name BEGINSWITH 'A' OR age < 5") == [0, 1])
        #expect(try matches("name BEGINSWITH 'A' AND age < 5") == [])
        #expect(throws: EvaluationError.self) { try matches("name BEGINSWITH 'A'", lenient: false) }
    }

    @Test func predicateErrorsStillThrow() throws {
        #expect(throws: EvaluationError.self) { try matches("name LIKE 'a\\\\'") }
        #expect(throws: EvaluationError.self) { try matches("age > $missing") }
    }
}

@Suite struct SortingTests {
    @Test func nilFirstAscendingLastDescending() throws {
        let rows: [[String: Any]] = [["n": "b", "a": 2], ["n": "B"], ["n": "a", "a": 1], ["n": "é", "a": 2]]
        let asc = try rows.sorted(by: [SiftSortDescriptor("a")]).map { $0["n"] as! String }
        #expect(asc == ["B", "a", "b", "é"])
        let desc = try rows.sorted(by: [SiftSortDescriptor("a", ascending: false), SiftSortDescriptor("n")]).map {
            $0["n"] as! String
        }
        #expect(desc == ["b", "é", "a", "B"])
        // Unicode scalar order: upper case before lower case, accents after ASCII.
        #expect(try rows.sorted(by: [SiftSortDescriptor("n")]).map { $0["n"] as! String } == ["B", "a", "b", "é"])
        let folded = try rows.sorted(by: [SiftSortDescriptor("n", options: [.caseInsensitive, .diacriticInsensitive])])
        #expect(folded.map { $0["n"] as! String } == ["a", "b", "B", "é"])
    }
}

/// The compiled fast paths for constant right-hand sides must agree with the general operation.
@Suite struct FastPathAgreementTests {
    @Test func constantComparisonsAgreeWithPrimitive() throws {
        var rng = SplitMix64(seed: 0x51F7)
        let strings = [
            "", "a", "A", "abc", "ABC", "José", "jose", "Straße", "STRASSE", "ＡＢＣ", "e\u{301}", "é", "zz", "42",
        ]
        func randomValue() -> Value {
            switch rng.next() % 9 {
            case 0: return .null
            case 1: return .integer(Int64(rng.next() % 7) - 3)
            case 2: return .double(Double(Int(rng.next() % 13) - 6) / 2)
            case 3: return .bool(rng.next() % 2 == 0)
            case 4, 5: return .string(strings[Int(rng.next() % UInt64(strings.count))])
            case 6: return .array([.integer(1), .string("a"), .null].shuffled(using: &rng))
            case 7: return .array([.integer(Int64(rng.next() % 3)), .integer(Int64(rng.next() % 3))])
            default: return .date(Date(timeIntervalSinceReferenceDate: Double(rng.next() % 3)))
            }
        }
        let ops: [ComparisonOperator] = [
            .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual,
            .beginsWith, .endsWith, .contains, .in, .like, .matches, .between,
        ]
        let optionSets: [TextOptions] = [
            [], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive], [.normalized],
        ]
        var checked = 0
        for _ in 0..<6_000 {
            let op = ops[Int(rng.next() % UInt64(ops.count))]
            let options = optionSets[Int(rng.next() % UInt64(optionSets.count))]
            let (l, r) = (randomValue(), randomValue())
            let primitive = PrimitiveComparison(op: op, options: options, utis: .standard)
            let fast = ConstantComparison.make(primitive, r)
            let expected = Result { () throws(EvaluationErrorKind) -> Bool in try primitive.evaluate(l, r) }
            let got = Result { () throws(EvaluationErrorKind) -> Bool in try fast(l, r) }
            switch (expected, got) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(l) \(op.symbol)[\(options.rawValue)] \(r): general \(a), fast \(b)")
            case (.failure(let a), .failure(let b)):
                #expect(a.id == b.id, "\(l) \(op.symbol) \(r): general \(a.id), fast \(b.id)")
            default:
                Issue.record("\(l) \(op.symbol)[\(options.rawValue)] \(r): general \(expected), fast \(got)")
            }
            checked += 1
        }
        #expect(checked == 6_000)
    }
}
