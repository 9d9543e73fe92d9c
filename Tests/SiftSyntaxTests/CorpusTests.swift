// Runs every golden case in Corpus/ (see Corpus/README.md for the format). Each parse case
// checks the canonical form or the diagnostic (`line:column id`) beside its input; valid cases
// must also round-trip through the printer.

import Foundation
import SiftJSON
import SiftTestSupport
import Testing

@testable import SiftSyntax

@Suite struct CorpusTests {
    @Test func parseCorpus() throws {
        let cases = try Corpus.cases(in: "parse")
        var invalid = 0
        var failures: [String] = []
        for c in cases {
            if let failure = check(c, invalid: &invalid) { failures.append(failure) }
        }
        #expect(failures.isEmpty, "\(failures.count) corpus failures:\n\(failures.joined(separator: "\n"))")
        // The corpus is meant to cover the whole language; shrinking it below these sizes is a regression.
        #expect(cases.count >= 400, "only \(cases.count) parse cases")
        #expect(invalid >= 100, "only \(invalid) invalid parse cases")
    }

    /// Runs one case; returns a description of the failure, if any.
    func check(_ c: CorpusCase, invalid: inout Int) -> String? {
        let at = "\(c.file):\(c.line): \(c.input)"
        let parsed: PredicateSyntax
        do {
            parsed = try PredicateSyntax.parse(c.input, arguments: c.args)
        } catch {
            let got = "\(error.location) \(error.id)"
            guard let expected = c.expectedError else { return "\(at): unexpected error \(error)" }
            invalid += 1
            return got == expected ? nil : "\(at): expected error \(expected), got \(got) (\(error))"
        }
        let printed = parsed.description
        guard let expected = c.expectedOutput else {
            return "\(at): parsed as '\(printed)' but expected error \(c.expectedError ?? "")"
        }
        if printed != expected { return "\(at): expected '\(expected)', got '\(printed)'" }
        do {
            let again = try PredicateSyntax.parse(printed)
            if again != parsed { return "\(at): round trip changed the tree" }
        } catch {
            return "\(at): canonical form does not parse: \(error)"
        }
        return nil
    }
}
