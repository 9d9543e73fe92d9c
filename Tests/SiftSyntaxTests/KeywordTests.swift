// The lexer's keyword table is hand-packed constants; check it against `Keyword.allCases`.
import Testing

@testable import SiftSyntax

@Suite struct KeywordTests {
    private func lookup(_ word: String) -> Keyword? {
        let bytes = Array(word.utf8)
        return bytes.withUnsafeBufferPointer { Keyword.lookup($0, from: 0, to: $0.count) }
    }

    @Test func everyKeywordIsFoundInAnyCase() {
        for k in Keyword.allCases where !k.rawValue.contains("-") {
            #expect(lookup(k.rawValue) == k)
            #expect(lookup(k.rawValue.lowercased()) == k)
            #expect(
                lookup(
                    String(
                        k.rawValue.enumerated().map {
                            $0.offset % 2 == 0 ? Character($0.element.lowercased()) : $0.element
                        })) == k)
        }
    }

    /// Inside a longer buffer the lookup loads whole words and must ignore the bytes around the word.
    @Test func keywordsAreFoundInsideLongerText() {
        for k in Keyword.allCases where !k.rawValue.contains("-") {
            for (prefix, suffix) in [("", "xxxxxxxxxxxxxxxxxx"), ("ab ", " == 1 AND something_long"), ("(", "s")] {
                let bytes = Array((prefix + k.rawValue.lowercased() + suffix).utf8)
                let found = bytes.withUnsafeBufferPointer {
                    Keyword.lookup($0, from: prefix.utf8.count, to: prefix.utf8.count + k.rawValue.utf8.count)
                }
                #expect(found == k)
                let longer = bytes.withUnsafeBufferPointer {
                    Keyword.lookup($0, from: prefix.utf8.count, to: prefix.utf8.count + k.rawValue.utf8.count + 1)
                }
                #expect(longer == nil)
            }
        }
    }

    @Test func otherWordsAreNotKeywords() {
        for word in [
            "a", "ab", "ANDY", "AN", "NOTE", "SELFIE", "self_", "_self", "n0ne", "none1", "TRUEPREDICATES",
            "CASEINSENSITIVEX", "CASEINSENSITIV", "FALSEPREDICATe_", "UTI", "uti_equals", "BETWEEN2", "subquer",
        ] {
            #expect(lookup(word) == nil, "\(word)")
        }
    }

    @Test func keywordsParseInContext() throws {
        let p = try PredicateSyntax.parse("NONE tags == nil AND SOME x == YES")
        #expect(p.description == "(NOT ANY tags == nil) AND ANY x == YES")
    }
}

/// Tokens live in a 32-token stack buffer and move to a growing heap buffer after that.
@Suite struct TokenBufferTests {
    @Test func predicatesOfEveryLengthAroundTheBufferSizeParse() throws {
        // One-byte tokens, more of them than a third of the input (the first heap capacity).
        for n in 1...120 {
            let sum = (0..<n).map { "k\($0 % 10)" }.joined(separator: "+")
            let text = sum + ">1"
            let p = try PredicateSyntax.parse(text)
            #expect(p.range == SourceRange(0, text.utf8.count))
            let again = try PredicateSyntax.parse(p.description)
            #expect(again == p)
            let compact = (0..<n).map { _ in "a" }.joined(separator: "+") + "<(b)"
            let q = try PredicateSyntax.parse(compact)
            #expect(q.description.hasSuffix("< b"), "\(q.description)")
        }
    }

    @Test func errorsAfterManyTokensStillPointAtTheirToken() {
        let text = String(repeating: "a == 1 AND ", count: 20) + "b == )"
        let e = #expect(throws: SyntaxError.self) { try PredicateSyntax.parse(text) }
        #expect(e?.range.lowerBound == text.utf8.count - 1, "\(String(describing: e))")
    }
}
