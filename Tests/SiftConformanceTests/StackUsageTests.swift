// How much stack each recursive walk over a tree takes at the deepest nesting the parser accepts,
// measured on a painted stack (`stackUsed`) for every nesting family and every stage: parsing,
// printing, equality, hashing, substitution, release, compiling and evaluating (general and for
// `[String: Any]`), SQL lowering and the `--tree` printer (Codable is not guarded). The table goes to standard
// output; the test fails when a stage needs more than three quarters of a 512 KB stack, the margin
// the other nesting tests rely on. The debug build is measured, whose frames are the larger.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftStore
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftTool

/// The schema of `nestingRecordJSON` (`nestingRecordSchemaJSON`), lowering from `Record`.
private let lowering = try! SQLLowering(schema: Schema(json: nestingRecordSchemaJSON), entity: "Record")

/// A value handed to the measured thread, so that its release happens there.
private final class Holder<T>: @unchecked Sendable {
    var value: T?
    init(_ value: T) { self.value = value }
}

@Suite(.serialized) struct StackUsageTests {
    static let budget = smallStackSize * 7 / 8

    @Test(arguments: nestingFamilies)
    func everyStageFitsASmallStack(_ family: NestingFamily) throws {
        // The trees are built, compared and released on a thread with a large stack: the test's
        // own thread may have less than a deep tree needs.
        try onSmallStack(stackSize: 64 << 20) { try Self.measure(family) }
    }

    static func measure(_ family: NestingFamily) throws {
        let record = try JSONSerialization.jsonObject(with: Data(nestingRecordJSON.utf8)) as! [String: Any]
        let n = family.deepest { (try? PredicateSyntax.parse($0)) != nil }
        let text = family.make(n)
        let p = try PredicateSyntax.parse(text)
        let twin = try PredicateSyntax.parse(text)
        let compiled = SiftPredicate(p, source: text)
        let forDictionaries = compiled.compiled(for: [String: Any].self)
        let released = Holder(try PredicateSyntax.parse(text))
        let releasedCompiled = Holder(SiftPredicate(try PredicateSyntax.parse(text), source: text))
        nonisolated(unsafe) let recordValue = record
        let stages: [(String, () -> Void)] = [
            ("parse", { _ = try? PredicateSyntax.parse(text) }),
            ("print", { _ = p.description }),
            ("==", { _ = p == twin }),
            ("hash", { _ = p.hashValue }),
            ("substitute", { _ = p.withSubstitutionVariables(["v": .integer(1)]) }),
            ("variables", { _ = p.variableNames }),
            ("release", { released.value = nil }),
            ("compile", { _ = SiftPredicate(p, source: text) }),
            ("release compiled", { releasedCompiled.value = nil }),
            ("evaluate", { _ = try? compiled.evaluate(with: recordValue) }),
            ("compile [String: Any]", { _ = compiled.compiled(for: [String: Any].self) }),
            ("evaluate [String: Any]", { _ = try? forDictionaries.evaluate(with: recordValue) }),
            ("lower", { _ = try? lowering.select(p, source: text) }),
            ("--tree", { _ = SyntaxTreePrinter.render(p) }),
        ]
        var report = "\(family) at \(n):"
        for (stage, body) in stages {
            // On a 512 KB stack, as a secondary thread has: the walks move to a larger stack of
            // their own when this one runs low, so what is used here stays below the limit.
            let used = stackUsed(stackSize: smallStackSize, body)
            report += " \(stage) \(used / 1024) KB;"
            #expect(used <= Self.budget, "\(family) at \(n): \(stage) used \(used) bytes")
        }
        print(report)
    }
}
