// `sift filter`'s direct form of a predicate (DirectFilter) against the general path it stands in
// for (the record built as projected, then evaluated): on generated and hand-written records with
// escapes, unicode, duplicate keys, deep nesting, numbers at the Int64 edges, `{"$date": …}` and
// values of the wrong type, whenever the direct form answers, the general path gives the same
// answer without error; string comparisons (any options, quantified over arrays of scalars too)
// decided on the bytes answer as the general path on strings chosen to make folding hard (ß,
// Turkish i, combining marks, emoji), mixed arrays and nulls; accented Latin folded on the bytes
// answers as memory's test on the decoded string; and on broken input both readers fail at the same
// byte with the same message, every reading path alike at a bad separator. The generated records
// come from fixed seeds; SIFT_DIRECT_SEED=n (and SIFT_DIRECT_ROUNDS=k) runs them over others.

import Foundation
import SiftEvaluation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftJSON

/// The offsets `DirectFilter.locate` notes, one slot per member, as the record pass holds them.
private final class Offsets {
    let slots: UnsafeMutablePointer<Int>
    init(_ filter: DirectFilter) { slots = .allocate(capacity: max(filter.memberNames.count, 1)) }
    deinit { slots.deallocate() }
}

/// The seed of a generated test: `base`, or `base + n` with `SIFT_DIRECT_SEED=n` set, to run the
/// generated tests over other records (`SIFT_DIRECT_ROUNDS=k` runs the generated-record test k times
/// as long). A failure's message names the predicate and the record text.
private func seed(_ base: UInt64) -> UInt64 {
    guard let s = ProcessInfo.processInfo.environment["SIFT_DIRECT_SEED"], let n = UInt64(s) else { return base }
    return base &+ n
}

/// `SIFT_DIRECT_ROUNDS` (1 unless set).
private var rounds: Int { ProcessInfo.processInfo.environment["SIFT_DIRECT_ROUNDS"].flatMap { Int($0) } ?? 1 }

/// Predicates the direct form takes (plain key paths against constants or variables).
private let directPredicates: [String] = [
    "a >= 18", "a < 10 OR a == 'x'", "NOT a > 1.5", "a == nil", "a != nil AND b.c BEGINSWITH 'O'",
    "b.c BEGINSWITH[c] 'o'", "b.c ==[cd] 'e'", "b.c CONTAINS 'é'", "b.c IN {'x', 'é', 1}", "a BETWEEN {1, 20}",
    "ANY kids.age < 10", "ALL kids.age >= 3", "NONE kids.age > 5", "ANY kids == 1", "ANY tags == 'red'",
    "a >= 18 AND b.c BEGINSWITH 'O' AND ANY kids.age < 10", "b.c.d == 1", "b == nil", "kids.age == nil",
    "a == $v", "a > 9223372036854775806", "a < -9223372036854775807", "a == 9223372036854775807",
    "a == 1e300", "a LIKE 'x*'", "a MATCHES '[0-9]+'", "TRUEPREDICATE AND a > 0",
    "(a > 1 OR b.c == 'x') AND NOT (ANY kids.age == 2)", "ALL kids.age < 10", "ANY tags < 3", "a != 5", "a <= -1",
    "ANY kids.age == 9223372036854775807", "ALL b.c.d > 0", "ANY b.c > 1", "ANY kids.age.x == 1", "ANY a < 10",
    "b.c ENDSWITH 'lo'", "b.c == 'Oslo'", "b.c != 'Oslo'", "a BEGINSWITH ''", "a == ''", "a ENDSWITH 'x'",
    "b.c BEGINSWITH 'Os'", "a != 'x\"y'", "b.c BEGINSWITH 'O' AND a ENDSWITH '8'", "ANY tags BEGINSWITH 'r'",
]

/// Predicates it leaves to the general path.
private let generalPredicates: [String] = [
    "SELF == 1", "kids.@count > 1", "18 < a", "a == b.c", "SUBQUERY(kids, $k, $k.age < 3).@count > 0",
    "a + 1 > 2", "kids[0].age == 1",
]

private let handWritten: [String] = [
    #"{"a": 20, "b": {"c": "Oslo"}, "kids": [{"age": 3}, {"age": 12}], "tags": ["red"]}"#,
    #"{"a": 20, "a": 5, "b": {"c": "x", "c": "Oslo"}, "kids": [{"age": 30}, {"age": 1, "age": 40}]}"#,
    #"{"\u0061": 19, "b": {"\u0063": "\u00e9"}, "k\u0069ds": [{"\u0061ge": 2}]}"#,
    #"{"a": "x\"y\\z", "b": {"c": "O\u00e9\ud83d\ude00"}, "kids": null}"#,
    #"{"a": 9223372036854775807, "b": {"c": -9223372036854775808}, "kids": [{"age": 9223372036854775808}]}"#,
    #"{"a": -9223372036854775808, "b": null, "kids": [null, {"age": 1}, [{"age": 2}], []]}"#,
    #"{"$date": 12}"#, #"{"$date": 12, "a": 1}"#, #"{"a": 1, "$date": 12}"#, #"{"b": {"$date": 3}, "a": 1}"#,
    #"{"b": {"$date": "x"}}"#, #"{"b": {"c": {"$date": 1}}}"#, #"{"kids": [{"$date": 1}]}"#, #"{"b": {"$date": 2}}"#,
    #"{"b": "Oslo"}"#, #"{"b": 5}"#, #"{"b": [{"c": "Oslo"}, {"c": "x"}]}"#, #"{"b": [{"c": {"d": 1}}, null]}"#,
    #"{"kids": 5}"#, #"{"kids": "s"}"#, #"{"kids": [1, 2]}"#, #"{"kids": {"age": 4}}"#, #"{"kids": [{"age": "x"}]}"#,
    #"{"a": [1, 2], "b": {"c": ["O", "P"]}}"#, #"{"a": {"x": 1}}"#, #"{"a": true}"#, #"{"a": 1.5e3}"#, #"{"a": 1e400}"#,
    #"{}"#, #"[]"#, #"[1, 2]"#, #"5"#, #""s""#, #"null"#, #"{"a": -0.0}"#, #"{"a": 0.1, "b": {}}"#,
    #"{"b": {"c": {"d": [[{"x": 1}]]}}}"#, #"{"kids": [[[{"age": 1}]], {"age": null}]}"#,
    #"{"a": 1, "b": {"c": "x"}, "b": {"d": 1}}"#,
    #"{"kids": [{"age": 3}, {"age": "x"}]}"#, #"{"kids": [{"age": "x"}, {"age": 3}]}"#,
    #"{"kids": [{"age": 30}, {"age": "x"}]}"#,
    #"{"kids": [{"age": 1}, {}]}"#, #"{"kids": [{}, {"age": 1}]}"#, #"{"kids": [{"age": 1.0}, {"age": 2}]}"#,
    #"{"kids": [{"age": 2, "age": 20}, {"age": 1e1}]}"#, #"{"a": 18}"#, #"{"a": 17}"#, #"{"a": "18"}"#, #"{"a": null}"#,
    #"{"tags": [1, 2, "x"]}"#, #"{"tags": ["x", 1]}"#, #"{"tags": [5, [1]]}"#, #"{"tags": []}"#, #"{"tags": {"x": 1}}"#,
    #"{"b": {"c": [1, 5]}, "kids": [{"age": {"x": 1}}]}"#, #"{"b": [{"c": {"d": 1}}, {"c": {"d": -1}}]}"#,
    #"{"b": {"c": "O\u0301slo"}}"#, "{\"b\": {\"c\": \"O\u{301}slo\"}}", #"{"b": {"c": "Os\tlo"}}"#,
    #"{"b": {"c": "lo"}}"#,
    #"{"b": {"c": "O"}}"#, #"{"b": {"c": "Ö"}}"#, #"{"a": ""}"#, #"{"a": "x\"y"}"#, #"{"a": "18"}"#,
    #"{"b": {"c": "Oslo\u007f"}}"#,
    "{\"b\": {\"c\": \"Oslo\u{7F}\"}}", #"{"b": {"c": "\u004fslo"}}"#, #"{"b": {"c": 5}}"#, #"{"b": {"c": null}}"#,
    #"{"kids": [{"age": 12}, {"$date": 1}]}"#, #"{"kids": [{"$date": 1}, {"age": 1}]}"#,
    #"{"kids": [null, {"age": 1}]}"#,
    "{\"a\" : 3 ,\n \"b\"\t:\r{ \"c\" : \"Oxford\" } , \"kids\" : [ { \"age\" : 4 } ] }",
    "{\"b\":{\"c\":" + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}}",
]

/// String comparisons, quantified or not, with and without options, over `name`, `tags` (an
/// array of scalars) and `kids.name`: the direct form decides them on the record's bytes.
private let textPredicates: [String] = [
    "ANY tags == 'b' OR name CONTAINS[c] 'an'", "ANY tags == 'b'", "ANY tags ==[c] 'B'", "ALL tags !=[cd] 'e'",
    "NONE tags BEGINSWITH[c] 'st'", "SOME tags CONTAINS[cd] 'E'", "ANY tags LIKE[c] '*s?e'", "ALL tags ENDSWITH[d] 'e'",
    "ANY tags CONTAINS 'ß'", "ALL tags LIKE '*'", "ANY tags ==[n] 'e\u{301}'", "ANY tags BEGINSWITH[cd] 'İ'",
    "name CONTAINS[c] 'an'", "name LIKE[cd] 'stra*'", "name BEGINSWITH[cd] 'i'", "name ENDSWITH[d] 'e'",
    "name ==[c] 'strasse'", "name == 'é'", "name == 'e\u{301}'", "name ==[n] 'e\u{301}'", "name ==[cd] 'ı'",
    "name BEGINSWITH[c] 'İ'", "name BEGINSWITH[c] 'i'", "name CONTAINS 'ß'", "name CONTAINS[c] 'SS'", "name LIKE '?'",
    "name LIKE[c] '*😀*'", "name ENDSWITH[c] 'ﬁ'", "name BEGINSWITH 'e'", "name == ''", "name != ''",
    "name CONTAINS ''", "name LIKE[n] 'e*'", "name ENDSWITH[cd] 'I'", "name CONTAINS[d] 'Ｂ'", "name ==[c] 'σ'",
    "name !=[cd] 'ana'", "name BEGINSWITH[n] 'q'", "name ENDSWITH 'e'", "name LIKE[cd] '*A*'", "name CONTAINS[cd] 'K'",
    "ANY kids.name CONTAINS[c] 'a'", "ALL kids.name ==[cd] 'ana'", "ANY kids.name LIKE[c] 'b?'",
    "name ==[c] 'STRASSE' AND ANY tags ENDSWITH[c] 'E'", "NOT (name BEGINSWITH[d] 'e') OR ALL tags == 'b'",
]

/// Strings as written in JSON: case pairs, ß and ligatures, Turkish dotted and dotless i, precomposed
/// and decomposed accents (raw and escaped), emoji, full-width letters, the Kelvin sign, escapes.
private let textPool: [String] = [
    "\"Straße\"", "\"STRASSE\"", "\"strasse\"", "\"ße\"", "\"ı\"", "\"I\"", "\"İ\"", "\"i\"", "\"i\\u0307\"",
    "\"i\u{307}\"", "\"e\\u0301\"", "\"e\u{301}\"", "\"é\"", "\"É\"", "\"\\u00e9\"", "\"😀\"", "\"\\ud83d\\ude00\"",
    "\"x😀y\"", "\"anna\"", "\"ANNA\"", "\"Ana\"", "\"ana\u{301}\"", "\"banane\"", "\"b\"", "\"B\"", "\"bé\"", "\"ﬁ\"",
    "\"Ｂ\"", "\"a\\\"b\"", "\"\"", "\"q\u{301}\"", "\"q\"", "\"Ǆ\"", "\"ǅ\"", "\"e\"", "\"E\"", "\"\u{7F}\"",
    "\"stre\"", "\"σ\"", "\"ς\"", "\"Σ\"", "\"\u{212A}\"", "\"k\"", "\"ǰ\"", "\"Strasse und Straße\"",
    "\"a long ASCII string past fifteen bytes, an end\"", "\"\\t\"",
]

/// A random record over `name`, `tags` and `kids`, mostly strings from `textPool`, sometimes other
/// kinds: nil, numbers, Booleans, objects, `{"$date": …}`, nested arrays, or the member missing.
private func randomTextRecord(_ rng: inout SplitMix64) -> String {
    func scalar() -> String {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return "null"
        case 1: return Bool.random(using: &rng) ? "true" : "false"
        case 2: return String(Int.random(in: -5...5, using: &rng))
        case 3: return ["{\"$date\": 1}", "{\"x\": \"b\"}", "[\"b\"]", "[]", "2.5"].randomElement(using: &rng)!
        default: return textPool.randomElement(using: &rng)!
        }
    }
    func list(_ element: () -> String) -> String {
        "[" + (0..<Int.random(in: 0...4, using: &rng)).map { _ in element() }.joined(separator: ", ") + "]"
    }
    var members: [String] = []
    if Int.random(in: 0..<8, using: &rng) > 0 { members.append("\"name\": \(scalar())") }
    if Int.random(in: 0..<8, using: &rng) > 0 {
        // Mostly strings; now and then an array holding other kinds too.
        let mixed = Int.random(in: 0..<4, using: &rng) == 0
        members.append(
            "\"tags\": "
                + (Int.random(in: 0..<10, using: &rng) == 0
                    ? scalar()
                    : list { mixed ? scalar() : textPool.randomElement(using: &rng)! }))
    }
    if Int.random(in: 0..<3, using: &rng) == 0 {
        members.append(
            "\"kids\": " + list { Int.random(in: 0..<6, using: &rng) == 0 ? scalar() : "{\"name\": \(scalar())}" })
    }
    members.shuffle(using: &rng)
    return "{" + members.joined(separator: ", ") + "}"
}

/// A random record over the keys the predicates read, with values of every kind.
private func randomRecord(_ rng: inout SplitMix64, depth: Int = 0) -> String {
    func scalar() -> String {
        switch Int.random(in: 0..<14, using: &rng) {
        case 0: return "null"
        case 1: return Bool.random(using: &rng) ? "true" : "false"
        case 2: return String(Int.random(in: -20...40, using: &rng))
        case 3:
            return ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-0", "1e2", "2.5", "1e400"]
                .randomElement(using: &rng)!
        case 4:
            return [
                "\"Oslo\"", "\"oslo\"", "\"Öl\"", "\"O\\u00e9\"", "\"\\ud83d\\ude00\"", "\"x\\\"y\"", "\"é\"", "\"\"",
                "\"12\"", "\"red\"",
            ]
            .randomElement(using: &rng)!
        case 5: return "{\"$date\": \(Int.random(in: 0...9, using: &rng))}"
        default: return String(Int.random(in: 0...25, using: &rng))
        }
    }
    func value(_ depth: Int) -> String {
        guard depth < 4 else { return scalar() }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            return "[" + (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth + 1) }.joined(separator: ",")
                + "]"
        case 1: return object(depth + 1)
        default: return scalar()
        }
    }
    func object(_ depth: Int) -> String {
        let keys = ["a", "b", "c", "d", "age", "kids", "tags", "$date", "\\u0061", "x"]
        let members = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
            "\"\(keys.randomElement(using: &rng)!)\": \(value(depth))"
        }
        return "{" + members.joined(separator: ", ") + "}"
    }
    return object(depth)
}

/// The general path's answer for every record of `text`: a Boolean or an error message.
private func general(_ predicate: SiftPredicate, _ text: [UInt8], variables: [String: Value]) -> [String] {
    text.withUnsafeBufferPointer { bytes in
        var cursor = RecordCursor(bytes)
        let projection = RecordProjection.of(predicate.syntax)
        var out: [String] = []
        do throws(JSONScanError) {
            while try cursor.next() != nil {
                let record = try cursor.scanner.value(depth: cursor.depth, projection)
                do throws(EvaluationError) {
                    out.append(String(try predicate.evaluate(with: record, variables: variables)))
                } catch {
                    out.append("error: \(error)")
                }
            }
        } catch {
            out.append("syntax: \(error.located(in: bytes))")
        }
        return out
    }
}

/// The direct form's answer for every record: a Boolean, "general" when it leaves the record to the
/// general path, or the syntax error.
private func direct(_ filter: DirectFilter, _ text: [UInt8], variables: [String: Value]) -> [String] {
    text.withUnsafeBufferPointer { bytes in
        var cursor = RecordCursor(bytes)
        let offsets = Offsets(filter)
        var untimed = Untimed()
        var out: [String] = []
        do throws(JSONScanError) {
            while try cursor.next() != nil {
                guard try filter.locate(&cursor.scanner, depth: cursor.depth, offsets: offsets.slots),
                    let answer = filter.evaluate(
                        cursor.scanner, depth: cursor.depth, offsets: offsets.slots, variables: variables,
                        timing: &untimed)
                else {
                    out.append("general")
                    continue
                }
                out.append(String(answer))
            }
        } catch {
            out.append("syntax: \(error.located(in: bytes))")
        }
        return out
    }
}

@Suite struct DirectFilterTests {
    private let variables: [String: Value] = ["v": .integer(20)]

    /// Every direct answer is the general path's answer, and the general path raised on none of them.
    private func compare(
        _ text: String, _ counts: inout (direct: Int, general: Int),
        predicates: [String] = directPredicates
    ) throws {
        let bytes = Array(text.utf8)
        for source in predicates {
            let predicate = try SiftPredicate(format: source, arguments: [])
            let filter = try #require(DirectFilter(predicate), "\(source) has a direct form")
            let expected = general(predicate, bytes, variables: variables)
            let got = direct(filter, bytes, variables: variables)
            try #require(expected.count == got.count, "\(source) on \(text): \(expected) vs \(got)")
            for (e, g) in zip(expected, got) {
                if g == "general" {
                    counts.general += 1
                    continue
                }
                if !g.hasPrefix("syntax") { counts.direct += 1 }
                #expect(e == g, "\(source) on \(text)")
            }
        }
    }

    @Test func answersAsTheGeneralPathOnHandWrittenRecords() throws {
        var counts = (direct: 0, general: 0)
        for text in handWritten { try compare(text, &counts) }
        try compare(handWritten.joined(separator: "\n"), &counts)
        try compare("[" + handWritten.joined(separator: ",") + "]", &counts)
        #expect(counts.direct > 1000 && counts.general > 100, "\(counts)")
    }

    @Test func answersAsTheGeneralPathOnGeneratedRecords() throws {
        var rng = SplitMix64(seed: seed(1414))
        var counts = (direct: 0, general: 0)
        for _ in 0..<40 * rounds {
            let records = (0..<50).map { _ in randomRecord(&rng) }
            try compare(records.joined(separator: "\n"), &counts)
        }
        #expect(counts.direct > 20000 && counts.general > 1000, "\(counts)")
    }

    @Test func stringComparisonsAnswerAsTheGeneralPathOnUnicodeRecords() throws {
        var rng = SplitMix64(seed: seed(26))
        var counts = (direct: 0, general: 0)
        let records = (0..<600).map { _ in randomTextRecord(&rng) }
        for chunk in stride(from: 0, to: records.count, by: 100) {
            try compare(records[chunk..<chunk + 100].joined(separator: "\n"), &counts, predicates: textPredicates)
        }
        #expect(counts.direct > 20000, "\(counts)")
    }

    /// Each single comparison of `textPredicates`, decided on the bytes (not by the compiled
    /// comparison the direct form falls back to), answers as the general path on every record it
    /// decides, strings that are not plain ASCII included, and leaves to the general comparison
    /// every record on which the general path raises.
    @Test func stringTestsDecideOnTheBytesAsTheGeneralPath() throws {
        var rng = SplitMix64(seed: seed(2626))
        let records = (0..<800).map { _ in randomTextRecord(&rng) }
        let bytes = Array(records.joined(separator: "\n").utf8)
        var decided = 0
        var decidedUnicode = 0
        var left = 0
        var raised = 0
        for source in textPredicates {
            let predicate = try SiftPredicate(format: source, arguments: [])
            let filter = try #require(DirectFilter(predicate))
            guard case .leaf = filter.tree else { continue }
            let leaf = filter.leaves[0]
            let text = try #require(leaf.text, "\(source) is compared on the bytes")
            let expected = general(predicate, bytes, variables: [:])
            let got = bytes.withUnsafeBufferPointer { buffer in
                var cursor = RecordCursor(buffer)
                let offsets = Offsets(filter)
                // Each record's answer, and whether the member compared holds a byte outside ASCII or an escape.
                var answers: [(Bool?, unicode: Bool)] = []
                while (try? cursor.next()) != nil {
                    guard (try? filter.locate(&cursor.scanner, depth: cursor.depth, offsets: offsets.slots)) == true,
                        offsets.slots[leaf.member] >= 0
                    else {
                        answers.append((nil, false))
                        continue
                    }
                    var t = cursor.scanner
                    t.i = offsets.slots[leaf.member]
                    let answer = t.textAnswer(text, leaf)
                    try? t.skipElement(depth: 0)
                    let member = UnsafeBufferPointer(rebasing: buffer[offsets.slots[leaf.member]..<t.i])
                    answers.append((answer, member.contains { $0 >= 0x80 || $0 == UInt8(ascii: "\\") }))
                }
                return answers
            }
            try #require(got.count == records.count && expected.count == records.count)
            for (n, (answer, unicode)) in got.enumerated() {
                if expected[n].hasPrefix("error") { raised += 1 }
                guard let answer else {
                    left += 1
                    continue
                }
                #expect(String(answer) == expected[n], "\(source) on \(records[n])")
                decided += 1
                if unicode { decidedUnicode += 1 }
            }
        }
        #expect(
            decided > 15000 && decidedUnicode > 10000 && left > 1000 && raised > 300,
            "\(decided) \(decidedUnicode) \(left) \(raised)")
    }

    /// Strings of ASCII and accented Latin (every scalar U+0080…U+02FF, raw, never escaped),
    /// folded on their bytes with the per-scalar folds, answer as memory's own test on the decoded
    /// string under every option set and operator; the scalars whose folds leave that range ("İ"
    /// under [c]) and longer sequences are left to it.
    @Test func latinStringsFoldedOnTheBytesAnswerAsMemory() throws {
        var rng = SplitMix64(seed: seed(300))
        let latin = (UInt32(0x80)..<0x300).map { String(Unicode.Scalar($0)!) }
        let common = ["a", "A", "s", "S", "e", "E", "i", "I", "o", "O", "k", " ", "z", "İ"]
        let needles = ["", "a", "e", "ss", "é", "É", "ß", "oe", "strasse", "Łu", "ı", "i", "ǆ", "æ", "ŉ", "aé"]
        let operators = ["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS"]
        let options = ["", "[c]", "[d]", "[cd]", "[n]", "[cn]"]
        var tests: [DirectFilter.TextTest] = []
        for op in operators {
            for o in options {
                for k in needles {
                    let filter = try #require(
                        DirectFilter(try SiftPredicate(format: "a \(op)\(o) '\(k)'", arguments: [])))
                    tests.append(try #require(filter.leaves[0].text))
                }
            }
        }
        var decided = 0
        var matched = 0
        var left = 0
        for _ in 0..<400 {
            // Needles repeated inside random text, so that every operator matches now and then.
            let parts = (0..<Int.random(in: 1...6, using: &rng)).map { _ -> String in
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: return common.randomElement(using: &rng)!
                case 1: return needles.randomElement(using: &rng)!
                default: return latin.randomElement(using: &rng)!
                }
            }
            let subject = parts.joined()
            let bytes = Array(subject.utf8)
            guard bytes.contains(where: { $0 >= 0x80 }) else { continue }
            for test in tests {
                let got = bytes.withUnsafeBufferPointer { test(latin: $0.baseAddress!, $0.count) }
                guard let got else {
                    left += 1
                    continue
                }
                #expect(got == test(subject), "\(test.operation) \(test.constant) on \(subject)")
                decided += 1
                if got { matched += 1 }
            }
        }
        #expect(decided > 50000 && matched > 3000 && left > 1000, "\(decided) \(matched) \(left)")
        // Left to memory: a fold outside the range, a three-byte scalar, bytes that are not UTF-8.
        let dotted = try #require(DirectFilter(try SiftPredicate(format: "a CONTAINS[c] 'i'", arguments: [])))
        let test = try #require(dotted.leaves[0].text)
        for subject: [UInt8] in [Array("İ".utf8), Array("a€".utf8), [0xC3], [0xC3, 0x41], [0x80]] {
            #expect(subject.withUnsafeBufferPointer { test(latin: $0.baseAddress!, $0.count) } == nil)
        }
        #expect(Array("é".utf8).withUnsafeBufferPointer { test(latin: $0.baseAddress!, $0.count) } == false)
        #expect(Array("Ïx".utf8).withUnsafeBufferPointer { test(latin: $0.baseAddress!, $0.count) } == false)
        let accents = try #require(DirectFilter(try SiftPredicate(format: "a CONTAINS[cd] 'i'", arguments: [])))
        let folded = try #require(accents.leaves[0].text)
        #expect(Array("xÏ".utf8).withUnsafeBufferPointer { folded(latin: $0.baseAddress!, $0.count) } == true)
    }

    /// The separator after a member or element is checked by one helper on every path (skipped,
    /// built, built in part, printed, read whole, located by the direct form): the message and
    /// byte offset the reference reader gives, in objects and arrays, at the end of input too.
    @Test func separatorsFailWithTheReferenceMessages() throws {
        let cases: [(String, String, Int)] = [
            (#"{"a": 1 "b": 2}"#, #"expected ',' or '}', found '"'"#, 8),
            (#"{"a": 1"#, "expected ',' or '}', found end of input", 7),
            (#"{"a": [1 2]}"#, "expected ',' or ']', found '2'", 9),
            (#"{"a": [1, 2}"#, "expected ',' or ']', found '}'", 11),
            (#"{"a": {"b": 1]}"#, "expected ',' or '}', found ']'", 13),
            (#"{"a": [1,"#, "expected a JSON value, found end of input", 9),
        ]
        let filter = try #require(DirectFilter(try SiftPredicate(format: "a == 1", arguments: [])))
        for (text, message, offset) in cases {
            let bytes = Array(text.utf8)
            let errors: [JSONScanError?] = bytes.withUnsafeBufferPointer { buffer in
                func failure(_ read: (inout JSONScanner) throws(JSONScanError) -> Void) -> JSONScanError? {
                    var s = JSONScanner(buffer)
                    do throws(JSONScanError) { try read(&s) } catch { return error }
                    return nil
                }
                let offsets = Offsets(filter)
                var out: [UInt8] = []
                return [
                    failure { s throws(JSONScanError) in try s.skipValue(depth: 0) },
                    failure { s throws(JSONScanError) in _ = try s.value(depth: 0, .whole) },
                    failure { s throws(JSONScanError) in
                        _ = try s.value(depth: 0, .members([ProjectedKey("b", .whole)]))
                    },
                    failure { s throws(JSONScanError) in try s.writeValue(depth: 0, into: &out) },
                    failure { s throws(JSONScanError) in _ = try s.jsonValue(depth: 0) },
                    failure { s throws(JSONScanError) in _ = try filter.locate(&s, depth: 0, offsets: offsets.slots) },
                ]
            }
            for (n, error) in errors.enumerated() {
                #expect(
                    error?.message == message && error?.offset == offset,
                    "\(text), reader \(n): \(String(describing: error))")
            }
        }
    }

    @Test func brokenRecordsFailAsTheGeneralReaderFails() throws {
        var rng = SplitMix64(seed: seed(14))
        let predicate = try SiftPredicate(format: "a >= 18 AND b.c BEGINSWITH 'O' AND ANY kids.age < 10", arguments: [])
        let filter = try #require(DirectFilter(predicate))
        let pieces = [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "e", ".", "-", "0", "t", "nul", "\n", "\u{01}",
            "é", "x",
        ]
        var failures = 0
        for base in handWritten + (0..<20).map({ _ in randomRecord(&rng) }) {
            for _ in 0..<100 {
                var bytes = Array((base + "\n" + base).utf8)
                for _ in 0..<Int.random(in: 1...2, using: &rng) {
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    if Bool.random(using: &rng) {
                        bytes.remove(at: at)
                    } else {
                        bytes.insert(contentsOf: Array(pieces.randomElement(using: &rng)!.utf8), at: at)
                    }
                    if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
                }
                let expected = general(predicate, bytes, variables: [:])
                let got = direct(filter, bytes, variables: [:])
                guard let e = expected.last, e.hasPrefix("syntax") else { continue }
                failures += 1
                #expect(got.last == e, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(failures > 1000)
    }

    /// ANY/ALL over arrays of strings and integers pass each element they compared without reading
    /// it again: a broken element after ones that did not decide still fails as the general reader fails.
    @Test func brokenStringAndIntegerArraysFailAsTheGeneralReaderFails() throws {
        var rng = SplitMix64(seed: seed(15))
        let pieces = ["\"", "\\", "\\u", "\\ud800", "\u{01}", "é", ",", "]", "[", "x"]
        var failures = 0
        for text in ["ALL tags != 'zz'", "ANY tags ==[c] 'Q'", "NONE tags ENDSWITH 'q'"] {
            let predicate = try SiftPredicate(format: text, arguments: [])
            let filter = try #require(DirectFilter(predicate))
            for _ in 0..<300 {
                let tags = (0..<Int.random(in: 2...5, using: &rng)).map { i in "\"t\(i)\\\"x\"" }
                var bytes =
                    Array(#"{"a": 1, "tags": ["#.utf8) + Array(tags.joined(separator: ", ").utf8) + Array("]}".utf8)
                let at = Int.random(in: 12..<bytes.count - 2, using: &rng)
                bytes.insert(contentsOf: Array(pieces.randomElement(using: &rng)!.utf8), at: at)
                let expected = general(predicate, bytes, variables: [:])
                #expect(
                    direct(filter, bytes, variables: [:]) == expected,
                    "\(text) on \(String(decoding: bytes, as: UTF8.self))")
                if expected.last?.hasPrefix("syntax") == true { failures += 1 }
            }
        }
        // Integers too: each one compared is passed, not read again.
        for text in ["ALL nums < 100", "ANY nums == 7", "NONE nums > 50"] {
            let predicate = try SiftPredicate(format: text, arguments: [])
            let filter = try #require(DirectFilter(predicate))
            for _ in 0..<300 {
                let nums = (0..<Int.random(in: 2...5, using: &rng)).map { _ in
                    String(Int.random(in: -9...60, using: &rng))
                }
                var bytes = Array(#"{"nums": ["#.utf8) + Array(nums.joined(separator: ", ").utf8) + Array("]}".utf8)
                let at = Int.random(in: 10..<bytes.count - 2, using: &rng)
                bytes.insert(
                    contentsOf: Array(
                        [".", "e", "-", "x", ",", "]", "0", "1e3", "\""].randomElement(using: &rng)!.utf8), at: at)
                let expected = general(predicate, bytes, variables: [:])
                #expect(
                    direct(filter, bytes, variables: [:]) == expected,
                    "\(text) on \(String(decoding: bytes, as: UTF8.self))")
                if expected.last?.hasPrefix("syntax") == true { failures += 1 }
            }
        }
        #expect(failures > 400, "\(failures)")
    }

    @Test func integersAndStringsAreComparedWhereTheyAreWritten() throws {
        func leaf(_ source: String) throws -> DirectFilter.Leaf {
            try #require(DirectFilter(try SiftPredicate(format: source, arguments: []))).leaves[0]
        }
        #expect(try leaf("a >= 18").integer != nil)
        #expect(try leaf("ANY kids.age < 10").integer != nil)
        #expect(try leaf("a >= 1.5").integer == nil)
        #expect(try leaf("b.c BEGINSWITH 'O'").text != nil)
        #expect(try leaf("b.c == 'Oslo'").text != nil)
        #expect(try leaf("b.c BEGINSWITH[c] 'o'").text != nil)
        #expect(try leaf("b.c BEGINSWITH ''").text != nil)
        #expect(try leaf("b.c BEGINSWITH 'é'").text != nil)
        #expect(try leaf("ANY tags BEGINSWITH 'r'").text != nil)
        #expect(try leaf("b.c CONTAINS 'O'").text != nil)
        #expect(try leaf("ALL tags LIKE[cd] 'r*'").text != nil)
        #expect(try leaf("b.c !=[n] 'O'").text != nil)
        // Left to the compiled comparison: other operators, other constants, a LIKE pattern memory rejects.
        #expect(try leaf("b.c < 'O'").text == nil)
        #expect(try leaf("b.c MATCHES 'O'").text == nil)
        #expect(try leaf("b.c == 1").text == nil)
        #expect(try leaf("b.c LIKE 'x\\\\'").text == nil)
        // Decided on the bytes, as the general path decides.
        let filter = try #require(
            DirectFilter(try SiftPredicate(format: "a >= 18 AND b.c BEGINSWITH 'O'", arguments: [])))
        #expect(
            direct(filter, Array(#"{"a": 20, "b": {"c": "Oslo"}} {"a": 20, "b": {"c": "Lima"}}"#.utf8), variables: [:])
                == ["true", "false"])
    }

    @Test func formsItDoesNotTakeAreLeftToTheGeneralPath() throws {
        for source in generalPredicates {
            #expect(DirectFilter(try SiftPredicate(format: source, arguments: [])) == nil, "\(source)")
        }
        let deep = String(repeating: "NOT (", count: 70) + "a > 1" + String(repeating: ")", count: 70)
        #expect(DirectFilter(try SiftPredicate(format: deep, arguments: [])) == nil)
        let shallow = String(repeating: "NOT (", count: 20) + "a > 1" + String(repeating: ")", count: 20)
        #expect(DirectFilter(try SiftPredicate(format: shallow, arguments: [])) != nil)
        let lenient = try SiftPredicate(format: "a > 1", arguments: [], options: EvaluationOptions(lenient: true))
        #expect(DirectFilter(lenient) == nil)
    }
}

/// What `RecordFilter` (the pass over a whole input, with its own buffer of offsets) answers on
/// `bytes`: the indices of the matches, the syntax error, or the record of the first evaluation
/// error, in the form `expectedSelection` gives from the general path's answers.
private func selection(_ predicate: SiftPredicate, _ bytes: [UInt8]) -> [String] {
    do throws(RecordFilterError) {
        return try RecordFilter(predicate).select(from: MappedInput(copying: bytes)).indices.map { "\($0)" }
    } catch {
        switch error.kind {
        case .syntax(let json): return ["syntax: \(json)"]
        case .evaluation(let record, _): return ["error at \(record)"]
        }
    }
}

/// `selection`'s answer as the general path's answers per record (`general`) imply it.
private func expectedSelection(_ answers: [String]) -> [String] {
    if let last = answers.last, last.hasPrefix("syntax") { return [last] }
    if let first = answers.firstIndex(where: { $0.hasPrefix("error") }) { return ["error at \(first)"] }
    return answers.indices.filter { answers[$0] == "true" }.map { "\($0)" }
}

/// The readings the record loop makes in words: member keys (names of 1 to 9 bytes, prefixes of
/// one another, escaped, duplicated where the last wins, at the very end of the input), `true`,
/// `false` and `null` (whole, cut short, misspelt) and integers read in one pass (up to 18 digits
/// and beyond, signs, fractions, exponents, in mixed arrays under ANY/ALL). The direct form, and the
/// record filter that runs it, answer and fail as the general path does.
extension DirectFilterTests {
    private static let wordKeys = ["a", "ab", "abc", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgz", "\\u0061b", "b"]
    private static let wordValues = [
        "1", "-0", "17", "-18", "123456789012345678", "-123456789012345678", "1234567890123456789",
        "-9223372036854775808", "9223372036854775808", "18.0", "1e1", "2E0", "true", "false", "null", "\"x\"",
        "[17, 19]", "[true, 20, null, \"y\"]", "[1.5, 30]", "{\"a\": 20}", "[]",
    ]
    private static let brokenValues = [
        "tru", "fals", "nul", "trUe", "nulll", "falsey", "t", "f", "-", "1.", "1e", "01x", "\"ab", "[tru]",
        "[1, fals]", "{\"a\": nul}", "{\"abcdefgh\" 1}",
    ]
    private static let wordPredicates = [
        "a >= 18", "ab == 17", "abcdefgh < 0", "abcdefghi > 5", "abcdefgz == nil", "ANY b >= 18", "ALL b != 20",
        "a == true", "abc == nil OR abcdefg != 1", "NONE abcdefgh == 'y'",
    ]

    @Test func keysLiteralsAndIntegersReadAsWordsAnswerAsTheGeneralPath() throws {
        var rng = SplitMix64(seed: seed(2626))
        let records = (0..<300).map { _ in
            "{"
                + (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    "\"\(Self.wordKeys.randomElement(using: &rng)!)\":\(Self.wordValues.randomElement(using: &rng)!)"
                }
                .joined(separator: Bool.random(using: &rng) ? "," : " , ") + "}"
        }
        var counts = (direct: 0, general: 0)
        try compare(records.joined(separator: "\n"), &counts, predicates: Self.wordPredicates)
        #expect(counts.direct > 2000, "\(counts)")
        let bytes = Array(records.joined(separator: "\n").utf8)
        for source in Self.wordPredicates {
            let predicate = try SiftPredicate(format: source, arguments: [])
            #expect(
                selection(predicate, bytes) == expectedSelection(general(predicate, bytes, variables: [:])), "\(source)"
            )
        }
    }

    @Test func brokenAndCutWordsFailAsTheGeneralPath() throws {
        let predicates = try Self.wordPredicates.map { try SiftPredicate(format: $0, arguments: []) }
        let filters = try predicates.map { try #require(DirectFilter($0)) }
        var failures = 0
        func check(_ text: String) {
            let bytes = Array(text.utf8)
            for (predicate, filter) in zip(predicates, filters) {
                let expected = general(predicate, bytes, variables: [:])
                let got = direct(filter, bytes, variables: [:])
                #expect(expected.count == got.count, "\(text)")
                for (e, g) in zip(expected, got) where g != "general" { #expect(e == g, "\(predicate) on \(text)") }
                #expect(selection(predicate, bytes) == expectedSelection(expected), "\(predicate) on \(text)")
                if expected.last?.hasPrefix("syntax") == true { failures += 1 }
            }
        }
        for value in Self.brokenValues {
            for key in Self.wordKeys { check("{\"\(key)\":\(value)}\n{\"a\":19}") }
        }
        // Cut at every byte: keys and words ending with the input, before the eight bytes a word read takes.
        let record = "{\"abcdefgh\":true,\"ab\":null,\"a\":18,\"b\":[false,20]}"
        for n in 1..<record.utf8.count { check(String(decoding: record.utf8.prefix(n), as: UTF8.self)) }
        #expect(failures > 500, "\(failures)")
    }
}
