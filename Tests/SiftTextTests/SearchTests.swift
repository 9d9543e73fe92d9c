// Equality, ordering and substring search under each option set, and PreparedText's fast paths
// checked against the plain functions over a seeded random set of strings.

import SiftTestSupport
import Testing

@testable import SiftText

private let c: TextOptions = .caseInsensitive
private let d: TextOptions = .diacriticInsensitive
private let cd: TextOptions = [.caseInsensitive, .diacriticInsensitive]
private let n: TextOptions = .normalized

@Test func equalityWithoutOptionsIsCanonicalEquivalence() {
    #expect(textEqual("e\u{301}", "\u{E9}", []))
    #expect(textCompare("e\u{301}", "\u{E9}", []) == 0)
    #expect(!textEqual("abc", "ABC", []))
    #expect(textEqual("", "", []))
    #expect(!textEqual("a", "", []))
}

@Test func normalizedIsLiteral() {
    #expect(!textEqual("e\u{301}", "\u{E9}", n))
    #expect(textCompare("e\u{301}", "\u{E9}", n) == -1)  // U+0065 < U+00E9
    #expect(textCompare("\u{E9}", "e\u{301}", n) == 1)
    #expect(!textEqual("abc", "ABC", [n, c]))  // [n] overrides c
    #expect(!textEqual("José", "Jose", [n, d]))
    #expect(textEqual("José", "José", n))
}

@Test func orderingPerOptionSet() {
    #expect(textCompare("apple", "Banana", []) == 1)  // "B" (0x42) < "a" (0x61)
    #expect(textCompare("apple", "Banana", c) == -1)
    #expect(textCompare("Banana", "apple", c) == 1)
    #expect(textCompare("ABC", "abc", c) == 0)
    #expect(textCompare("ABC", "abc", d) == -1)
    #expect(textCompare("éclair", "eclair", d) == 0)
    #expect(textCompare("éclair", "fig", []) == 1)  // é (U+E9) after f
    #expect(textCompare("éclair", "fig", d) == -1)
    #expect(textCompare("Straße", "strasse", c) == 0)
    #expect(textCompare("a", "ab", []) == -1)
    #expect(textCompare("ab", "a", cd) == 1)
    #expect(textCompare("", "a", []) == -1)
    // No options is exactly Swift's ordering.
    for (a, b) in [("Zebra", "apple"), ("e\u{301}x", "\u{E9}a"), ("ö", "z"), ("ä", "a\u{308}b")] {
        #expect(textCompare(a, b, []) == (a == b ? 0 : (a < b ? -1 : 1)))
    }
}

@Test func emptyNeedleIsAlwaysFalse() {
    for options in [[], c, d, cd, n] as [TextOptions] {
        for s in ["", "abc", "é"] {
            #expect(!textBeginsWith(s, "", options))
            #expect(!textEndsWith(s, "", options))
            #expect(!textContains(s, "", options))
            let p = PreparedText("", options)
            #expect(!p.isPrefix(of: s))
            #expect(!p.isSuffix(of: s))
            #expect(!p.isContained(in: s))
        }
    }
    // A lone leading mark survives [d] (Foundation strips marks only from a base), so it is a
    // real needle.
    #expect(textContains("\u{301}x", "\u{301}", d))
    #expect(PreparedText("\u{301}", d).isPrefix(of: "\u{301}x"))
    #expect(!PreparedText("\u{301}", d).isContained(in: "e\u{301}"))
}

@Test func substringSearchBasics() {
    #expect(textBeginsWith("Johnson", "Jo", []))
    #expect(!textBeginsWith("Johnson", "jo", []))
    #expect(textBeginsWith("Johnson", "jo", c))
    #expect(textBeginsWith("José", "JOSE", cd))
    #expect(textEndsWith("Johnson", "SON", c))
    #expect(!textEndsWith("Johnson", "SON", []))
    #expect(textContains("Johnson", "hns", []))
    #expect(!textContains("Johnson", "xyz", c))
    #expect(textContains("grüßen", "GRÜSS", c))
    #expect(textContains("Ｆｏｏｂａｒ", "oba", c))
    #expect(textEndsWith("café", "E", cd))
    #expect(!textEndsWith("café", "e", []))
    #expect(textEndsWith("café", "é", []))
    #expect(textContains("Ἀθῆναι", "αθην", cd))
    #expect(!textBeginsWith("ab", "abc", []))
}

@Test func substringSearchRespectsCanonicalEquivalence() {
    // Precomposed haystack, decomposed needle and the reverse.
    #expect(textContains("caf\u{E9} au lait", "e\u{301} au", []))
    #expect(textBeginsWith("e\u{301}tude", "\u{E9}t", []))
    #expect(textEndsWith("caf\u{E9}", "fe\u{301}", []))
    #expect(PreparedText("e\u{301} au", []).isContained(in: "caf\u{E9} au lait"))
    // Under [n] they are different scalars.
    #expect(!textContains("caf\u{E9} au lait", "e\u{301} au", n))
}

@Test func aMatchDoesNotSplitACharacterFromItsMarks() {
    // NFC makes e + U+0301 the single scalar é, so "e" is not a prefix.
    #expect(!textBeginsWith("e\u{301}", "e", []))
    #expect(!textContains("xe\u{301}y", "xe", []))
    // q + U+0301 has no precomposed form; the combining-mark rule rejects the split.
    #expect(!textBeginsWith("q\u{301}x", "q", []))
    #expect(!textContains("aq\u{301}", "aq", c))
    #expect(textContains("aq\u{301}q", "q", []))  // the later, unsplit q matches
    #expect(textBeginsWith("q\u{301}x", "q\u{301}", []))
    #expect(!PreparedText("q", []).isPrefix(of: "q\u{301}x"))
    #expect(!PreparedText("aq", c).isContained(in: "aq\u{301}"))
    // Under [d] the mark is gone, so the plain letter matches.
    #expect(textBeginsWith("e\u{301}", "e", d))
    #expect(textBeginsWith("q\u{301}x", "q", d))
    // [n] is literal scalar matching.
    #expect(textBeginsWith("e\u{301}", "e", n))
    #expect(textBeginsWith("q\u{301}x", "q", n))
    #expect(PreparedText("q", n).isPrefix(of: "q\u{301}x"))
}

@Test func preparedTextBasics() {
    let jo = PreparedText("jo", cd)
    #expect(jo.isPrefix(of: "Joanna"))
    #expect(jo.isPrefix(of: "Jörg"))
    #expect(jo.isPrefix(of: "Jo\u{308}rg"))
    #expect(!jo.isPrefix(of: "Ajo"))
    #expect(!jo.isPrefix(of: "j"))
    #expect(jo.compare("Abe") == -1)
    #expect(jo.compare("JO") == 0)
    #expect(jo.compare("Zed") == 1)
    #expect(jo.equals("JÖ"))
    #expect(!PreparedText("jo", c).isPrefix(of: "Jörg"))
    #expect(!PreparedText("jo", c).isPrefix(of: "Jo\u{308}rg"))
    #expect(PreparedText("STRASSE", c).equals("straße"))
    #expect(PreparedText("ss", c).isSuffix(of: "Fuß"))
    #expect(PreparedText("ss", c).isPrefix(of: "ßa"))
    #expect(!PreparedText("sss", c).isPrefix(of: "ß"))
}

/// Pieces random strings are built from: ASCII, case variants, precomposed and decomposed
/// accents, expanding folds, width variants, a mark with no precomposed form.
private let pieces = [
    "a", "b", "j", "o", "O", "e", "E", "s", "S", "z", " ", "J",
    "\u{E9}", "e\u{301}", "\u{C9}", "E\u{301}", "\u{F6}", "o\u{308}", "\u{D6}",
    "\u{DF}", "ss", "SS", "\u{FB01}", "fi", "\u{FF21}", "A", "\u{3C3}", "\u{3C2}", "\u{3A3}",
    "q\u{301}", "\u{301}", "\u{130}", "i",
]

private func randomString(_ rng: inout SplitMix64, maxPieces: Int) -> String {
    let count = Int(rng.next() % UInt64(maxPieces + 1))
    return (0..<count).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
}

@Test func preparedTextAgreesWithPlainFunctions() {
    var rng = SplitMix64(seed: 0x5EED_7E47)
    let optionSets: [TextOptions] = [[], c, d, cd, n, [n, c]]
    var checked = 0
    for _ in 0..<600 {
        let subject = randomString(&rng, maxPieces: 7)
        var needle = randomString(&rng, maxPieces: 3)
        // Often take a real slice of the subject so that positive answers are common.
        if rng.next() % 2 == 0, !subject.isEmpty {
            let chars = Array(subject)
            let start = Int(rng.next() % UInt64(chars.count))
            let length = Int(rng.next() % UInt64(chars.count - start + 1))
            needle = String(chars[start..<(start + length)])
            if rng.next() % 2 == 0 { needle = needle.uppercased() }
        }
        for options in optionSets {
            let p = PreparedText(needle, options)
            let context =
                "subject \(subject.unicodeScalars.map(\.value)) needle \(needle.unicodeScalars.map(\.value)) options \(options.rawValue)"
            #expect(p.equals(subject) == textEqual(subject, needle, options), "\(context)")
            #expect(p.compare(subject) == textCompare(subject, needle, options), "\(context)")
            #expect(p.isPrefix(of: subject) == textBeginsWith(subject, needle, options), "\(context)")
            #expect(p.isSuffix(of: subject) == textEndsWith(subject, needle, options), "\(context)")
            #expect(p.isContained(in: subject) == textContains(subject, needle, options), "\(context)")
            checked += 1
        }
    }
    #expect(checked == 3600)
}

@Test func preparedTextAgreesOnAsciiSubjects() {
    // The zero-allocation paths: ASCII subjects against ASCII and non-ASCII needles.
    var rng = SplitMix64(seed: 42)
    let alphabet = Array("aAbBjJoOsSzZ .")
    let needles = ["jo", "JO", "Jö", "s", "ss", "ß", "o", "zz", "a.", "ﬁ"]
    for _ in 0..<500 {
        let subject = String((0..<Int(rng.next() % 9)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        for needle in needles {
            for options in [[], c, d, cd, n] as [TextOptions] {
                let p = PreparedText(needle, options)
                #expect(p.equals(subject) == textEqual(subject, needle, options))
                #expect(p.compare(subject) == textCompare(subject, needle, options))
                #expect(p.isPrefix(of: subject) == textBeginsWith(subject, needle, options))
                #expect(p.isSuffix(of: subject) == textEndsWith(subject, needle, options))
                #expect(p.isContained(in: subject) == textContains(subject, needle, options))
            }
        }
    }
}
