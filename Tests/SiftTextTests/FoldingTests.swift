// Folding: what each option set turns a string into, checked scalar by scalar, and the ASCII fast
// path checked against Foundation's own folding.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftText

private let c: TextOptions = .caseInsensitive
private let d: TextOptions = .diacriticInsensitive
private let cd: TextOptions = [.caseInsensitive, .diacriticInsensitive]
private let n: TextOptions = .normalized

private func scalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value) }

@Test func sharpSFoldsToDoubleS() {
    #expect(TextFolding.fold("Straße", c) == "strasse")
    #expect(scalars(TextFolding.fold("Straße", c)) == scalars("strasse"))
    #expect(textEqual("Straße", "STRASSE", c))
    #expect(!textEqual("Straße", "STRASSE", []))
    // [d] alone does not touch ß: it is a letter, not a letter with a diacritic.
    #expect(TextFolding.fold("Straße", d) == "Straße")
    #expect(TextFolding.fold("\u{1E9E}", c) == "ss")  // capital sharp s
}

@Test func finalSigmaFoldsToSigma() {
    #expect(scalars(TextFolding.fold("ΣΑΣ", c)) == [0x3C3, 0x3B1, 0x3C3])
    #expect(scalars(TextFolding.fold("σας", c)) == [0x3C3, 0x3B1, 0x3C3])
    #expect(textEqual("ΣΑΣ", "σας", c))
    #expect(!textEqual("ΣΑΣ", "σας", []))
    #expect(!textEqual("σας", "σασ", []))
}

@Test func widthFoldsUnderCOrD() {
    #expect(TextFolding.fold("ＡＢＣ", c) == "abc")
    #expect(TextFolding.fold("ＡＢＣ", d) == "ABC")
    #expect(TextFolding.fold("ＡＢＣ", []) == "ＡＢＣ")
    #expect(textEqual("ＡＢＣ", "abc", c))
    #expect(textEqual("ＡＢＣ", "ABC", d))
    #expect(!textEqual("ＡＢＣ", "ABC", []))
    #expect(scalars(TextFolding.fold("ｶ", d)) == [0x30AB])  // half-width katakana
}

@Test func diacriticsAreRemoved() {
    #expect(TextFolding.fold("José", d) == "Jose")
    #expect(TextFolding.fold("José", cd) == "jose")
    #expect(TextFolding.fold("Jose\u{301}", cd) == "jose")
    #expect(TextFolding.fold("Ångström", cd) == "angstrom")
    #expect(textEqual("José", "Jose", d))
    #expect(!textEqual("José", "jose", d))
    #expect(textEqual("José", "JOSE", cd))
    #expect(!textEqual("José", "Jose", c))
    // Letters that are not base + mark stay.
    #expect(TextFolding.fold("Øł", cd) == "øł")
}

@Test func turkishDottedCapitalI() {
    // Root-locale full case folding: İ → i + U+0307 COMBINING DOT ABOVE, so [c] keeps the dot
    // (İ ≠ i) and only [cd] reaches plain i. No Turkish-specific dotless mapping is applied.
    #expect(scalars(TextFolding.fold("İ", c)) == [0x69, 0x307])
    #expect(TextFolding.fold("İ", cd) == "i")
    #expect(!textEqual("İstanbul", "istanbul", c))
    #expect(textEqual("İstanbul", "i\u{307}stanbul", c))
    #expect(textEqual("İstanbul", "ISTANBUL", cd))
    #expect(!textEqual("ı", "i", cd))  // dotless ı is its own letter
}

@Test func ligaturesExpandUnderCaseFolding() {
    #expect(TextFolding.fold("ﬁle", c) == "file")
    #expect(textEqual("ﬁle", "FILE", c))
    #expect(TextFolding.fold("ﬁle", d) == "ﬁle")
    #expect(!textEqual("ﬁle", "file", []))
}

@Test func precomposedAndDecomposedFoldToTheSameScalars() {
    let pre = "Jos\u{E9}"
    let de = "Jose\u{301}"
    for options in [[], c, d, cd] as [TextOptions] {
        #expect(scalars(TextFolding.fold(pre, options)) == scalars(TextFolding.fold(de, options)), "\(options)")
    }
    #expect(scalars(TextFolding.fold(de, [])) == scalars(pre))  // no options: NFC
    #expect(scalars(TextFolding.fold(de, c)) == [0x6A, 0x6F, 0x73, 0xE9])
    #expect(scalars(TextFolding.fold("\u{212B}", c)) == [0xE5])  // Ångström sign
}

@Test func normalizedLeavesEverythingAlone() {
    for s in ["Straße", "Jose\u{301}", "ＡＢＣ", "İ", "ABC"] {
        #expect(scalars(TextFolding.fold(s, n)) == scalars(s))
        #expect(scalars(TextFolding.fold(s, [n, c, d])) == scalars(s))
    }
}

@Test func localeOptionChangesNothing() {
    for s in ["Straße", "José", "ＡＢＣ", "İ", "abc", "Ω"] {
        #expect(TextFolding.fold(s, [.localeSensitive]) == TextFolding.fold(s, []))
        #expect(TextFolding.fold(s, [.localeSensitive, .caseInsensitive]) == TextFolding.fold(s, c))
    }
}

@Test func asciiFastPathAgreesWithFoundation() {
    let all = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
    let foundation: [(TextOptions, String.CompareOptions)] = [
        (c, [.caseInsensitive, .widthInsensitive]),
        (d, [.diacriticInsensitive, .widthInsensitive]),
        (cd, [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]),
    ]
    for (options, reference) in foundation {
        for ch in all.unicodeScalars {
            let s = String(ch)
            #expect(
                scalars(TextFolding.fold(s, options)) == scalars(s.folding(options: reference, locale: nil)),
                "\(ch.value)")
        }
        #expect(TextFolding.fold(all, options) == all.folding(options: reference, locale: nil))
    }
}

@Test func foldingIsIdempotent() {
    for s in ["Straße", "ΣΑΣ", "Jose\u{301}", "ＡＢＣ", "İstanbul", "ﬁ", "q\u{301}", "Ǆ"] {
        for options in [[], c, d, cd] as [TextOptions] {
            let once = TextFolding.fold(s, options)
            #expect(scalars(TextFolding.fold(once, options)) == scalars(once), "\(s) \(options)")
        }
    }
}

@Test func latinTableAgreesWithFoundationOnWholeStrings() {
    // The table folds scalar by scalar; Foundation folds the whole string. They must agree, which
    // checks that no scalar below U+0300 folds differently next to its neighbours.
    var rng = SplitMix64(seed: 0x1A71)
    let special: [UInt32] = [0xDF, 0x130, 0x131, 0x149, 0x17F, 0x1C4, 0x1C5, 0x1F0, 0x2BC, 0x69, 0x49, 0x6E]
    for _ in 0..<400 {
        let length = Int(rng.next() % 8)
        let s = String(
            String.UnicodeScalarView(
                (0..<length).map { _ -> Unicode.Scalar in
                    let v: UInt32 =
                        rng.next() % 3 == 0
                        ? special[Int(rng.next() % UInt64(special.count))]
                        : 0x20 + UInt32(rng.next() % (0x300 - 0x20))
                    return Unicode.Scalar(v)!
                }))
        for (options, cFlag, dFlag) in [(c, true, false), (d, false, true), (cd, true, true)] {
            let reference = TextFolding.foundationFold(s, caseInsensitive: cFlag, diacriticInsensitive: dFlag)
            #expect(scalars(TextFolding.fold(s, options)) == scalars(reference), "\(scalars(s)) \(options)")
        }
    }
}
