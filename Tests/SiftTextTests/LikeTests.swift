// LIKE: wildcards, escapes, literal metacharacters, folding, the trailing-backslash error and a
// pathological pattern that a backtracking-by-recursion matcher would never finish.

import Testing

@testable import SiftText

private func like(_ s: String, _ pattern: String, _ options: TextOptions = []) throws -> Bool {
    try LikePattern(pattern, options).matches(s)
}

@Test func starsAndQuestionMarks() throws {
    #expect(try like("abcfebbcce", "a*b*c?e"))
    #expect(try !like("acbe", "a*b*c?e"))
    #expect(try like("aazz?", "?a*z?\\?"))
    #expect(try like("aabbcczzeeffzZ?", "?a*z?\\?"))
    #expect(try !like("Aabcz?", "?a*z?\\?"))
    #expect(try !like("aabbccz???", "?a*z?\\?"))
    #expect(try like("a", "*?"))
    #expect(try !like("", "*?"))
    #expect(try like("", "*"))
    #expect(try like("", ""))
    #expect(try !like("a", ""))
    #expect(try like("anything at all", "*"))
    #expect(try like("abc", "abc"))
    #expect(try !like("abcd", "abc"))
    #expect(try !like("xabc", "abc"))
    #expect(try like("abc", "a**c"))
    #expect(try like("mississippi", "*sip*"))
    #expect(try !like("mississippi", "*sipx*"))
}

@Test func questionMarkIsOneScalar() throws {
    #expect(try like("é", "?"))
    #expect(try like("e\u{301}", "?"))  // NFC: one scalar
    #expect(try like("q\u{301}", "??"))  // no precomposed form: two scalars
    #expect(try like("e\u{301}", "??", .normalized))  // [n]: literal, two scalars
    #expect(try like("日本語", "?本?"))
    #expect(try like("😀x", "?x"))
    #expect(try like("ab😀", "*?"))
}

@Test func everythingElseIsLiteral() throws {
    #expect(try !like("abc", "a.c"))
    #expect(try like("a.c", "a.c"))
    #expect(try like("[x](y)+^$|{}", "[x](y)+^$|{}"))
    #expect(try !like("x", "[x]"))
}

@Test func escapes() throws {
    #expect(try like("a*b", "a\\*b"))
    #expect(try !like("axb", "a\\*b"))
    #expect(try like("a?b", "a\\?b"))
    #expect(try !like("axb", "a\\?b"))
    #expect(try like("a\\b", "a\\\\b"))
    #expect(try like("abc", "\\a\\b\\c"))  // other escaped characters are themselves
    #expect(try like("a*", "*\\*"))
    #expect(try !like("ab", "*\\*"))
}

@Test func trailingBackslashIsAnError() {
    #expect(throws: TextError.self) { try LikePattern("ab\\", []) }
    do {
        _ = try LikePattern("ab\\", [])
        Issue.record("no error")
    } catch {
        #expect(error.kind == .likeTrailingBackslash)
        #expect(error.kind.rawValue == "invalid-like-pattern")
        #expect(error.message == "the backslash cannot end a LIKE pattern: 'ab\\'")
        #expect("\(error)" == error.message)
    }
    // An escaped backslash at the end is fine.
    #expect((try? LikePattern("ab\\\\", [])) != nil)
}

@Test func likeFoldsWithOptions() throws {
    #expect(try like("PREFIXxsuffix", "prefix*SUFFIX", .caseInsensitive))
    #expect(try !like("PREFIXxsuffix", "prefix*SUFFIX", []))
    #expect(try like("José", "jose", [.caseInsensitive, .diacriticInsensitive]))
    #expect(try like("José", "Jos?", .diacriticInsensitive))
    #expect(try !like("José", "jos?", .diacriticInsensitive))
    #expect(try like("Straße", "STRA*", .caseInsensitive))
    #expect(try like("Straße", "*SS?", .caseInsensitive))
    #expect(try like("ＡＢＣ", "a?c", .caseInsensitive))
    #expect(try like("Jose\u{301}", "Jos\u{E9}", []))  // canonical equivalence without options
    #expect(try !like("Jose\u{301}", "Jos\u{E9}", .normalized))
    #expect(try !like("ABC", "abc", [.normalized, .caseInsensitive]))
    #expect(try like("ÉCOLE", "\\école", .caseInsensitive))
}

@Test func pathologicalPatternFinishes() throws {
    let subject = String(repeating: "a", count: 5_000)
    #expect(try !like(subject, "*a*a*a*a*a*b"))
    #expect(try like(subject + "b", "*a*a*a*a*a*b"))
    #expect(try like(subject, "*a*a*a*a*a*"))
}
