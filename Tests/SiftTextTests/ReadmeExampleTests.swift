// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The README's SiftText example, as written there, with its comments turned into assertions; one
// test checks that the README's block still appears in this file, so the two cannot drift apart.

import Foundation
import Testing
import SiftTestSupport
import SiftText

@Suite struct ReadmeExampleTests {
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftText") }

    @Test func textExample() throws {
        let folded = textEqual("Straße", "STRASSE", .caseInsensitive)                                  // true
        let prefix = textBeginsWith("São Paulo", "sao", [.caseInsensitive, .diacriticInsensitive])   // true
        let like = try LikePattern("a*z?", []).matches("abcz!")                                        // true

        #expect(folded)
        #expect(prefix)
        #expect(like)
        // The options matter: without them the same comparisons fail.
        #expect(!textEqual("Straße", "STRASSE", []))
        #expect(!textBeginsWith("São Paulo", "sao", .caseInsensitive))
        #expect(try !LikePattern("a*z?", []).matches("abcz"))
    }
}
