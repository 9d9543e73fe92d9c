// Unit tests for keys that are not C identifiers (issue 16): `%K` with any string, the quoted key
// `#"…"` and its printed form, non-ASCII identifiers, and what a component beginning with "@" is.

import Foundation
import Testing

@testable import SiftSyntax

/// The key path on the left of `p`, which must be a comparison.
private func lhsComponents(_ p: PredicateSyntax) -> [String]? {
    guard case .comparison(_, let lhs, _, _, _) = p.kind, case .keyPath(nil, let c) = lhs.kind else { return nil }
    return c
}

private func components(_ format: String, _ args: [Any?] = []) throws -> [String]? {
    lhsComponents(try PredicateSyntax.parse(format, arguments: args))
}

private func comparison(_ components: [String]) -> PredicateSyntax {
    PredicateSyntax(
        .comparison(
            quantifier: nil, lhs: ExpressionSyntax(.keyPath(base: nil, components: components)),
            operator: .equal, options: [], rhs: ExpressionSyntax(.constant(value: .integer(1)))))
}

@Suite struct FormatKeyTests {
    @Test func anyStringIsAKeyPath() throws {
        #expect(try components("%K == 1", ["user-agent"]) == ["user-agent"])
        #expect(try components("%K == 1", ["ISO 3166-1:2006"]) == ["ISO 3166-1:2006"])
        #expect(try components("%K == 1", ["first name"]) == ["first name"])
        #expect(try components("%K == 1", ["café"]) == ["café"])
        #expect(try components("%K == 1", ["x\"; DROP TABLE t; --"]) == ["x\"; DROP TABLE t; --"])
    }

    @Test func splitsAtEveryDotAsKVCDoes() throws {
        #expect(try components("%K == 1", ["a b.c"]) == ["a b", "c"])
        #expect(try components("%K == 1", ["a..b"]) == ["a", "", "b"])
        #expect(try components("%K == 1", ["."]) == ["", ""])
        #expect(try components("%K == 1", ["a."]) == ["a", ""])
        #expect(KeyPathComponent.split("ISO 3166-1:2006.code") == ["ISO 3166-1:2006", "code"])
    }

    @Test func appendsToABaseKeyPath() throws {
        #expect(try components("meta.%K == 1", ["user-agent.raw"]) == ["meta", "user-agent", "raw"])
        #expect(
            try PredicateSyntax.parse("meta.%K == 1", arguments: ["user-agent"]).description
                == #"meta.#"user-agent" == 1"#)
    }

    @Test func onlyTheEmptyStringIsRefused() throws {
        let e = try #require(parseError("a == 1 AND %K == 1", [""]))
        #expect(e.id == "invalid-key-path-argument")
        #expect(e.location == SourceLocation(line: 1, column: 12))
    }

    @Test func operatorNamesAreOperatorsAndOtherAtWordsAreKeys() throws {
        // "items.@count" counts, as with Apple's %K (KVC reads the operator).
        let count = try PredicateSyntax.parse("%K > 0", arguments: ["items.@count"])
        #expect(lhsComponents(count) == ["items", "@count"])
        #expect(count.description == "items.@count > 0")
        #expect(try PredicateSyntax.parse("items.@count > 0") == count)
        // Any other word after "@" is a key, printed quoted so that it is not read as an operator.
        let stamp = try PredicateSyntax.parse("%K > 0", arguments: ["@timestamp"])
        #expect(lhsComponents(stamp) == ["@timestamp"])
        #expect(stamp.description == #"#"@timestamp" > 0"#)
        #expect(try PredicateSyntax.parse(stamp.description) == stamp)
        // KVC compares operator names exactly: "@Count" is a key.
        #expect(try PredicateSyntax.parse("%K > 0", arguments: ["@Count"]).description == #"#"@Count" > 0"#)
    }
}

@Suite struct QuotedKeyTests {
    @Test func eitherQuoteSpellsAKey() throws {
        #expect(try components(#"#"user-agent" == 1"#) == ["user-agent"])
        #expect(try components(#"#'user-agent' == 1"#) == ["user-agent"])
        #expect(try components(#"#"a.b" == 1"#) == ["a.b"])
        #expect(try components(#"#"" == 1"#) == [""])
    }

    @Test func escapesAreThoseOfStringLiterals() throws {
        #expect(try components(#"#"say \"hi\"" == 1"#) == [#"say "hi""#])
        #expect(try components(#"#'it\'s' == 1"#) == ["it's"])
        #expect(try components(#"#"back\\slash" == 1"#) == [#"back\slash"#])
        #expect(try components(#"#"caf\u00e9" == 1"#) == ["café"])
        #expect(try components(#"#"tab\there" == 1"#) == ["tab\there"])
    }

    @Test func quotedKeysAreComponentsAnywhereInAPath() throws {
        #expect(
            try components(#"#"first name".#"ISO 3166-1:2006".code == 1"#) == ["first name", "ISO 3166-1:2006", "code"])
        #expect(try components(#"address.#"zip code" == 1"#) == ["address", "zip code"])
        let onVariable = try ExpressionSyntax.parse(#"$x.#"a b""#)
        #expect(
            onVariable == ExpressionSyntax(.keyPath(base: ExpressionSyntax(.variable(name: "x")), components: ["a b"])))
        let indexed = try ExpressionSyntax.parse(#"#"a b"[0]"#)
        guard case .index(let base, _) = indexed.kind else {
            Issue.record("not an index: \(indexed)")
            return
        }
        #expect(base == ExpressionSyntax(.keyPath(base: nil, components: ["a b"])))
    }

    @Test func aQuotedOperatorNameIsThatOperator() throws {
        // The tree holds the string; "@count" is the operator however it was written.
        #expect(try PredicateSyntax.parse(#"kids.#"@count" > 1"#) == PredicateSyntax.parse("kids.@count > 1"))
    }

    @Test func errors() throws {
        let open = try #require(parseError(#"a == 1 AND #"abc == 1"#))
        #expect(open.id == "unterminated-string")
        #expect(open.location == SourceLocation(line: 1, column: 13))
        let lone = try #require(parseError("# == 1"))
        #expect(lone.id == "unexpected-character")
        #expect(lone.description == "1:1: error: unexpected character '#'")
        #expect(parseError("#1 == 1")?.id == "unexpected-character")
        let escape = try #require(parseError(#"#"\xZZ" == 1"#))
        #expect(escape.id == "invalid-escape")
    }
}

@Suite struct PrintedKeyTests {
    /// Keys that must survive printing and parsing unchanged, each as the only component, after a
    /// plain key and before one.
    static let keys: [String] = [
        "user-agent", "Content-Type", "ISO 3166-1:2006", "first name", " leading", "trailing ",
        #"say "hi""#, "it's", #"both ' and ""#, #"back\slash"#, #"\"#, #"\""#,
        "a.b", ".", "..", "a.", "",
        "size", "SELF", "like", "AND", "ternary", "Function", "uti",
        "café", "cafe\u{301}", "名前", "Straße", "Ωmega", "ſelf", "🙂", "\u{301}",
        "@timestamp", "@Count", "@", "#", "#x", "$x", "%K", "%@", "1x", "0", "-", "x-",
        "tab\there", "new\nline", "nul\u{0}byte", "x\"; DROP TABLE t; --",
    ]

    @Test(arguments: keys)
    func roundTrips(_ key: String) throws {
        for path in [[key], ["a", key], [key, "b"], ["a", key, "@count"]] {
            let p = comparison(path)
            let printed = p.description
            let q = try PredicateSyntax.parse(printed)
            #expect(q == p, "\(path) printed as \(printed) parses as \(q)")
            #expect(q.description == printed)
        }
        // The same key through %K, when it has no dot to split at.
        if !key.contains("."), !key.isEmpty {
            #expect(try PredicateSyntax.parse("%K == 1", arguments: [key]) == comparison([key]))
        }
    }

    @Test func spellings() {
        #expect(KeyPathComponent.spelling("name") == "name")
        #expect(KeyPathComponent.spelling("café") == "café")
        #expect(KeyPathComponent.spelling("size") == "#size")
        #expect(KeyPathComponent.spelling("ternary") == "#ternary")
        #expect(KeyPathComponent.spelling("@count") == "@count")
        #expect(KeyPathComponent.spelling("@timestamp") == #"#"@timestamp""#)
        #expect(KeyPathComponent.spelling("user-agent") == #"#"user-agent""#)
        #expect(KeyPathComponent.spelling("a.b") == #"#"a.b""#)
        #expect(KeyPathComponent.spelling("") == #"#"""#)
        #expect(KeyPathComponent.spelling(#"a"b\c"#) == #"#"a\"b\\c""#)
        #expect(KeyPathComponent.spelling("1x") == #"#"1x""#)
    }
}

@Suite struct UnicodeIdentifierTests {
    @Test func lettersOfAnyScriptMakeBareKeys() throws {
        #expect(try components("café == 1") == ["café"])
        #expect(try components("名前 == 1") == ["名前"])
        #expect(try components("Straße.ärger_2 == 1") == ["Straße", "ärger_2"])
        #expect(try components("éa == 1") == ["éa"])
        // A combining mark continues a word: the decomposed spelling is one key.
        #expect(try components("cafe\u{301} == 1") == ["cafe\u{301}"])
        #expect(try PredicateSyntax.parse("café == 1").description == "café == 1")
    }

    @Test func variablesAndEscapesTakeThemToo() throws {
        #expect(try ExpressionSyntax.parse("$café") == ExpressionSyntax(.variable(name: "café")))
        #expect(try components("#größe == 1") == ["größe"])
        #expect(try components("a.ü == 1") == ["a", "ü"])
    }

    @Test func keywordsStayASCII() throws {
        // "SELFé" is one word, not SELF followed by something.
        #expect(try components("SELFé == 1") == ["SELFé"])
        #expect(try components("andé == 1") == ["andé"])
        #expect(try PredicateSyntax.parse("a == 1 AND ü == 2").description == "a == 1 AND ü == 2")
    }

    @Test func symbolsAreStillErrors() throws {
        let e = try #require(parseError("a == 1 AND 🙂 == 1"))
        #expect(e.id == "unexpected-character")
        #expect(e.description == "1:12: error: unexpected character '🙂'")
        let after = try #require(parseError("ab🙂 == 1"))
        #expect(after.location == SourceLocation(line: 1, column: 3))
        let option = try #require(parseError("a ==[é] 'x'"))
        #expect(option.description == "1:5: error: unknown option 'é' in '[é]'")
    }

    @Test func identifierPredicate() {
        #expect(KeyPathComponent.isIdentifier("_x1"))
        #expect(KeyPathComponent.isIdentifier("名前"))
        #expect(!KeyPathComponent.isIdentifier("1x"))
        #expect(!KeyPathComponent.isIdentifier("\u{301}a"))
        #expect(!KeyPathComponent.isIdentifier("a-b"))
        #expect(!KeyPathComponent.isIdentifier(""))
    }
}

@Suite struct CollectionOperatorTests {
    @Test func everyOperatorLexes() throws {
        for op in KeyPathComponent.collectionOperators {
            #expect(try components("a.\(op) == 1") == ["a", op])
            #expect(KeyPathComponent.isCollectionOperator(op))
        }
        #expect(!KeyPathComponent.isCollectionOperator("@timestamp"))
        #expect(!KeyPathComponent.isCollectionOperator("count"))
    }

    @Test func anUnknownOperatorIsAnError() throws {
        let e = try #require(parseError("kids.@cout > 1"))
        #expect(e.id == "unknown-collection-operator")
        #expect(
            e.description
                == #"1:6: error: unknown collection operator '@cout'; write '#"@cout"' for a key that begins with '@'"#)
        #expect(parseError("@timestamp > 1")?.id == "unknown-collection-operator")
        #expect(parseError("kids.@Count > 1")?.id == "unknown-collection-operator")
    }
}
