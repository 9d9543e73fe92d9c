// The evaluator's walks at the deepest nesting the parser accepts, on a thread with a 512 KB
// stack: the compiler (strict and lenient, the general `Value` root and the `[String: Any]`
// program), constant folding, and evaluation of the compiled closures, whose calls nest as deeply
// as the tree. The answers are checked against what each family computes.

import Foundation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftEvaluation

private func deepestAccepted(_ family: NestingFamily) throws -> Int {
    try onSmallStack(stackSize: 64 << 20) {
        family.deepest { (try? PredicateSyntax.parse($0)) != nil }
    }
}

nonisolated(unsafe) private let record =
    try! JSONSerialization.jsonObject(with: Data(nestingRecordJSON.utf8)) as! [String: Any]

/// The answer of `body`, or nil when it raises an evaluation error.
private func answer(_ body: () throws -> Bool) -> Bool? {
    do { return try body() } catch { return nil }
}

@Suite struct DeepEvaluationTests {
    @Test(arguments: nestingFamilies)
    func evaluationAtTheLimitOnASmallStack(_ family: NestingFamily) throws {
        let n = try deepestAccepted(family)
        let text = family.make(n)
        let answers = try onSmallStack { () throws -> [Bool?] in
            let general = try SiftPredicate(text)
            let lenient = try SiftPredicate(text, options: EvaluationOptions(lenient: true))
            let dictionaries = general.compiled(for: [String: Any].self)
            return [
                answer { try general.evaluate(with: record) },
                answer { try dictionaries.evaluate(with: record) },
                answer { try lenient.evaluate(with: record) },
            ]
        }
        let expected = family.expected(n)
        #expect(answers[0] == expected, "\(family) at \(n)")
        #expect(answers[1] == expected, "\(family) at \(n), compiled for [String: Any]")
        // Lenient evaluation turns the data error of the family that has one into a non-match.
        #expect(answers[2] == (expected ?? false), "\(family) at \(n), lenient")
    }

    /// A constant expression nested to the limit is folded once at compile time, for the `Value`
    /// root and for a root type whose folding goes through the `Value` compiler.
    @Test func constantFoldingAtTheLimit() throws {
        let depth = PredicateSyntax.maximumDepth
        let text = String(repeating: "1 + (", count: depth - 1) + "1" + String(repeating: ")", count: depth - 1)
        let (value, general, typed) = try onSmallStack { () throws -> (Value, Bool, Bool) in
            let e = try SiftExpression(ExpressionSyntax.parse(text))
            let p = try SiftPredicate("a == " + text)
            return (
                try e.evaluate(), try p.evaluate(with: ["a": depth]),
                try p.compiled(for: [String: Any].self).evaluate(with: ["a": depth])
            )
        }
        #expect(value == .integer(Int64(depth)))
        #expect(general)
        #expect(typed)
    }
}
