// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftSyntax's DocC catalog, each copied verbatim from its article and run,
// with the results its comments state asserted; one test checks that every sample block of the
// catalog still appears in this file, so an article cannot drift from the code it shows.

import Foundation
import Testing
import SiftTestSupport
import SiftSyntax

@Suite struct DocumentationSampleTests {
    @Test(arguments: ["SiftSyntax.md", "PredicateLanguage.md"])
    func articleSamplesAreTested(article: String) throws { try expectArticleSamplesTested(article, of: "SiftSyntax") }

    /// The README's SiftSyntax example is this file's too.
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftSyntax") }

    @Test func landingPage() throws {
        let p = try PredicateSyntax.parse("age > %@ AND name BEGINSWITH[cd] %@", arguments: [30, "jo"])
        let canonical = p.description   // age > 30 AND name BEGINSWITH[cd] "jo"
        #expect(canonical == #"age > 30 AND name BEGINSWITH[cd] "jo""#)
    }

    @Test func predicateLanguage() throws {
        let p = try PredicateSyntax.parse("age > %@ AND name BEGINSWITH[cd] %@", arguments: [30, "jo"])
        let canonical = p.description     // age > 30 AND name BEGINSWITH[cd] "jo"
        let same = try PredicateSyntax.parse(canonical) == p   // true

        var failure: SyntaxError?
        do {
            _ = try PredicateSyntax.parse("age > 30 AND")
        } catch {
            failure = error               // parse throws only SyntaxError
        }
        let message = failure?.description  // 1:13: error: expected predicate after 'AND'
        let id = failure?.id                // expected-predicate
        let annotated = failure?.annotated  // the message, the source line and a caret

        let q = try PredicateSyntax.parse("score >= $min")
        let bound = q.withSubstitutionVariables(["min": .integer(10)])   // score >= 10

        #expect(canonical == #"age > 30 AND name BEGINSWITH[cd] "jo""#)
        #expect(same)
        #expect(message == "1:13: error: expected predicate after 'AND'")
        #expect(id == "expected-predicate")
        #expect(annotated == "1:13: error: expected predicate after 'AND'\nage > 30 AND\n            ^")
        #expect(bound.description == "score >= 10")
    }
}
