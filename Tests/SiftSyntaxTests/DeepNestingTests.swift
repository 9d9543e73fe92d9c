// Every recursive walk of SiftSyntax (parser, printer, equality, hashing, substitution, variable
// collection, release of the tree) at the deepest nesting the parser accepts, on a thread with a
// 512 KB stack; and one level deeper, the typed `nested-too-deeply` error with its position
// instead of a crash. A stack overflow here takes the whole test process down.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftSyntax

/// The deepest member of `family` the parser accepts, found on a thread with a large stack so the
/// search itself cannot overflow.
func deepestAccepted(_ family: NestingFamily) throws -> Int {
    try onSmallStack(stackSize: 64 << 20) {
        family.deepest { (try? PredicateSyntax.parse($0)) != nil }
    }
}

@Suite struct DeepNestingTests {
    @Test func theLimitIsAtLeastAThousandLevels() {
        #expect(PredicateSyntax.maximumDepth >= 1000)
    }

    /// Each family reaches the limit with at least a thousand repetitions of its nesting (a
    /// repetition adds one node, or one parenthesised group, per counter).
    @Test(arguments: nestingFamilies)
    func familiesNestAThousandLevels(_ family: NestingFamily) throws {
        let n = try deepestAccepted(family)
        #expect(n >= PredicateSyntax.maximumDepth - 2, "\(family): \(n)")
        #expect(n < 4 * PredicateSyntax.maximumDepth, "\(family): \(n)")
    }

    @Test(arguments: nestingFamilies)
    func syntaxStagesAtTheLimitOnASmallStack(_ family: NestingFamily) throws {
        let n = try deepestAccepted(family)
        let text = family.make(n)
        let outcome = try onSmallStack { () throws -> (Bool, Bool, Bool, Set<String>, String) in
            let p = try PredicateSyntax.parse(text)
            let printed = p.description
            let again = try PredicateSyntax.parse(printed)
            let substituted = p.withSubstitutionVariables(["unused": .integer(1)])
            var h1 = Hasher()
            var h2 = Hasher()
            p.hash(into: &h1)
            again.hash(into: &h2)
            // Both trees are released here, on this thread, as the closure returns.
            return (again == p, substituted == p, h1.finalize() == h2.finalize(), p.variableNames, printed)
        }
        #expect(outcome.0, "\(family): the printed form parses back to another tree")
        #expect(outcome.1)
        #expect(outcome.2)
        #expect(outcome.3.isEmpty)
        // The canonical form of an accepted predicate is itself accepted (within the limit).
        #expect(!outcome.4.isEmpty)
    }

    @Test(arguments: nestingFamilies)
    func oneLevelBeyondTheLimitIsATypedError(_ family: NestingFamily) throws {
        let n = try deepestAccepted(family)
        let text = family.make(n + 1)
        let error = try onSmallStack { () -> SyntaxError? in
            do {
                _ = try PredicateSyntax.parse(text)
                return nil
            } catch let error as SyntaxError { return error }
        }
        guard let e = error else {
            Issue.record("\(family) at \(n + 1) parsed")
            return
        }
        #expect(e.id == "nested-too-deeply")
        #expect(e.range.lowerBound > 0 && e.range.upperBound <= text.utf8.count)
        #expect(e.description.contains("the limit is \(PredicateSyntax.maximumDepth) levels"))
    }

    /// Substitution rebuilds the tree: a variable at the bottom of the deepest nesting is replaced.
    @Test func substitutionReachesTheBottom() throws {
        let depth = PredicateSyntax.maximumDepth
        // The comparison's operand is one level itself.
        let text = String(repeating: "NOT ", count: depth - 1) + "a == $v"
        let (names, printed) = try onSmallStack { () throws -> (Set<String>, String) in
            let p = try PredicateSyntax.parse(text)
            return (p.variableNames, p.withSubstitutionVariables(["v": .integer(7)]).description)
        }
        #expect(names == ["v"])
        #expect(printed.contains("a == 7") && !printed.contains("$v"))
    }

    /// Constant arrays nested to the limit are literals, compared and printed by their own walks.
    @Test func nestedConstantArrays() throws {
        let depth = PredicateSyntax.maximumDepth
        // The comparison's operand is one level itself.
        let text = "a IN " + String(repeating: "{", count: depth - 1) + "1" + String(repeating: "}", count: depth - 1)
        let printed = try onSmallStack { () throws -> String in
            let p = try PredicateSyntax.parse(text)
            guard try PredicateSyntax.parse(p.description) == p else { return "" }
            return p.description
        }
        #expect(printed == text)
    }
}
