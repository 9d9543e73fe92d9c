// Case-sensitive BEGINSWITH lowers to an index range plus a `sift_text` check on the strings that
// continue with a scalar ≥ U+0300. These tests run that SQL on strings built to sit on every edge
// of the ranges (combining marks right after the prefix, CJK and emoji after it, the prefix alone,
// its neighbours in byte order) and compare with SiftText's own BEGINSWITH, and check the plan.

import Foundation
import SiftSQL
import SiftSQLite
import SiftSyntax
import SiftTestSupport
import SiftText
import Testing

@Suite struct PrefixRangeTests {
    static let schema = try! Schema(
        json: """
            {"entities": [{"name": "T", "table": "t", "attributes": [{"name": "s", "type": "string"}]}]}
            """)

    static let subjects: [String] = [
        "", "a", "ab", "abc", "ab\u{301}", "ab\u{301}c", "ab\u{300}", "ab\u{2FF}", "ab\u{4E00}", "ab😀", "ab\u{20D7}",
        "ac", "aa", "abz", "b", "é", "e\u{301}", "éa", "q\u{301}", "q", "qq", "x\u{D7FF}", "x\u{E000}", "x\u{D7FF}a",
        "Ab", "AB", "ab\u{1AB0}", "ab\u{0345}", "ab\u{10FFFF}",
    ]

    func load() throws -> SQLiteConnection {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s); CREATE INDEX t_s ON t(s);")
        for (i, s) in Self.subjects.enumerated() {
            _ = try db.query(
                "INSERT INTO t VALUES (?, ?)", [.integer(Int64(i)), .text(s.precomposedStringWithCanonicalMapping)])
        }
        return db
    }

    @Test func rangesAgreeWithSiftText() throws {
        let db = try load()
        let lowering = try SQLLowering(schema: Self.schema, entity: "T")
        var rng = SplitMix64(seed: 7)
        var prefixes = ["a", "ab", "q", "e", "é", "x\u{D7FF}", "ab\u{301}", "ab\u{300}", "abc", "A"]
        for _ in 0..<40 { prefixes.append(Self.subjects[Int(rng.next() % UInt64(Self.subjects.count))]) }
        for prefix in prefixes where !prefix.isEmpty {
            let query = try lowering.select(try PredicateSyntax.parse("s BEGINSWITH %@", arguments: [prefix]))
            let got = Set(
                try db.query(query).map { row -> Int in
                    guard case .integer(let i) = row[0] else { return -1 }
                    return Int(i)
                })
            let want = Set(
                Self.subjects.indices.filter {
                    textBeginsWith(Self.subjects[$0].precomposedStringWithCanonicalMapping, prefix, [])
                })
            #expect(
                got == want, "BEGINSWITH \(prefix.unicodeScalars.map { String($0.value, radix: 16) }): \(query.sql)")
        }
    }

    @Test func theRangeSearchesTheIndex() throws {
        let db = try load()
        let query = try SQLLowering(schema: Self.schema, entity: "T").select(
            try PredicateSyntax.parse("s BEGINSWITH 'ab'"))
        let plan = try db.queryPlan(query)
        #expect(plan.contains { $0.contains("SEARCH") && $0.contains("t_s") && $0.contains("s>? AND s<?") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
    }
}
