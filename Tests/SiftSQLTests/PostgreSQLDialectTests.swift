// The PostgreSQL dialect's SQL: numbered placeholders, native text operators with memory's
// combining-mark rule, exact integer/double comparisons, NULL ordering, and the typed rejections
// of every form PostgreSQL cannot make exact. (What these select on a real server is checked by
// SiftPostgresTests against memory.)

import Foundation
import SiftSQL
import SiftSyntax
import Testing

@Suite struct PostgreSQLDialectTests {
    static let lowering = try! SQLLowering(schema: Fixture.schema, entity: "Person", dialect: PostgreSQLDialect())

    static func lower(_ format: String, sortedBy: [SQLSortKey] = [], limit: Int? = nil, offset: Int = 0) throws
        -> SQLQuery
    {
        try lowering.select(
            try PredicateSyntax.parse(format), source: format, sortedBy: sortedBy, limit: limit, offset: offset)
    }

    static func error(_ format: String) -> SQLLoweringError? {
        do {
            _ = try lower(format)
            return nil
        } catch let e as SQLLoweringError { return e } catch { return nil }
    }

    @Test func placeholdersAreNumberedAndNegationKeepsNulls() throws {
        let q = try Self.lower("age != 3 AND NOT (name == 'x')")
        #expect(
            q.sql
                == #"SELECT t0."id" FROM "person" AS t0 WHERE (t0."age" IS DISTINCT FROM $1) AND (t0."name" IS DISTINCT FROM $2) ORDER BY t0."id" ASC"#
        )
        #expect(q.bindings == [.integer(3), .text("x")])
        let fallback = try Self.lower("NOT name ENDSWITH 'z'")
        #expect(fallback.sql.contains(#"((t0."name" ~ $1)) IS NOT TRUE"#))
        #expect(fallback.bindings == [.text("z$")])
    }

    @Test func textOrderUsesScalarCollationAndNullsFollowMemory() throws {
        let q = try Self.lower(
            "name < 'b'", sortedBy: [SQLSortKey(keyPath: "name"), SQLSortKey(keyPath: "age", ascending: false)],
            limit: nil, offset: 2)
        #expect(
            q.sql
                == #"SELECT t0."id" FROM "person" AS t0 WHERE t0."name" < $1 COLLATE "C" ORDER BY t0."name" COLLATE "C" ASC NULLS FIRST, t0."age" DESC NULLS LAST, t0."id" ASC LIMIT $2 OFFSET $3"#
        )
        #expect(q.bindings == [.text("b"), .null, .integer(2)])
    }

    @Test func searchesCarryTheCombiningMarkRule() throws {
        let q = try Self.lower("name CONTAINS 'a.b'")
        let pattern = try #require(q.bindings.first)
        guard case .text(let p) = pattern else {
            Issue.record("not text")
            return
        }
        #expect(p.hasPrefix(#"a\.b(?![\u0300-\u036F"#))
        #expect(p.hasSuffix("])"))
        // BEGINSWITH keeps its index range, with the regular expression only past U+0300 (in a
        // CASE, which keeps it out of the planner's selectivity estimate).
        let b = try Self.lower("name BEGINSWITH 'Jo'")
        #expect(
            b.sql.contains(
                #"t0."name" >= $1 COLLATE "C" AND t0."name" < $2 COLLATE "C" AND CASE WHEN t0."name" < $3 COLLATE "C" THEN TRUE ELSE (t0."name" ~ $4) END)"#
            ))
        #expect(b.bindings.prefix(3) == [.text("Jo"), .text("Jp"), .text("Jo\u{300}")])
        // [n] is literal: no look-ahead.
        let n = try Self.lower("name CONTAINS[n] 'é'")
        #expect(n.bindings == [.text("é")])
        // A needle that is a column is escaped in SQL, and an empty one never matches.
        let c = try Self.lower("name CONTAINS nick")
        #expect(c.sql.contains(#"char_length(t0."nick name") > 0 AND t0."name" ~ (regexp_replace(t0."nick name""#))
    }

    @Test func likeBecomesNativeLike() throws {
        let q = try Self.lower(#"name LIKE 'a*b?c%_\\*'"#)
        #expect(q.sql.contains(#"(t0."name" LIKE $1 ESCAPE $2)"#))
        #expect(q.bindings == [.text(#"a%b_c\%\_*"#), .text("\\")])
    }

    @Test func integerColumnsAgainstDoublesAreRewrittenExactly() throws {
        #expect(try Self.lower("age < 2.5").bindings == [.integer(3)])
        #expect(try Self.lower("age <= 2.5").bindings == [.integer(2)])
        #expect(try Self.lower("age > -2.5").bindings == [.integer(-3)])
        #expect(try Self.lower("age >= -2.5").bindings == [.integer(-2)])
        #expect(try Self.lower("age == 2.0").bindings == [.integer(2)])
        #expect(try Self.lower("age == 2.5").sql.contains("WHERE FALSE"))
        #expect(try Self.lower("age IN {1.5, 2.0, 3}").bindings == [.integer(2), .integer(3)])
        #expect(try Self.lower("age BETWEEN {1.5, 3.5}").bindings == [.integer(2), .integer(3)])
        // 2^63 is past every Int64: `<` holds for every non-nil age.
        #expect(try Self.lower("age < 9223372036854775808.0").sql.contains(#"t0."age" IS NOT NULL"#))
        // No double equals 2^53 + 1; the orderings bound it by the doubles on either side.
        #expect(try Self.lower("score == 9007199254740993").sql.contains("WHERE FALSE"))
        #expect(try Self.lower("score < 9007199254740993").bindings == [.double(9_007_199_254_740_992)])
        #expect(try Self.lower("score > 9007199254740993").bindings == [.double(9_007_199_254_740_994)])
    }

    @Test func integerArithmeticWrapsAndSumsAreBigints() throws {
        let q = try Self.lower("age + 1 > 3")
        #expect(q.sql.contains("4294967295"))
        let s = try Self.lower("kids.@sum.age > 3")
        #expect(s.sql.contains("CAST(SUM(("))
        let a = try Self.lower("kids.@avg.age > 3")
        #expect(a.sql.contains("AVG(CAST(t1.\"age\" AS DOUBLE PRECISION))"))
    }

    @Test func formsThatCannotBeExactAreRejectedWithTheirReason() {
        let cases: [(String, String)] = [
            ("name ==[c] 'x'", "string options"),
            ("name BEGINSWITH[cd] 'x'", "string options"),
            ("name MATCHES 'a.*'", "MATCHES"),
            ("name LIKE nick", "LIKE with a pattern"),
            ("misc == 1", "dynamically typed"),
            ("score + 1.5 > 2", "on doubles"),
            ("age << 2 > 2", "shifts"),
            ("age == score", "inexact beyond 2^53"),
            ("uppercase:(name) == 'X'", "uppercase"),
            ("name == 'a\\u0000b'", "U+0000"),
        ]
        for (format, reason) in cases {
            let e = Self.error(format)
            #expect(e?.kind == .unsupported || e?.kind == .typeMismatch, "\(format)")
            #expect(e?.message.contains(reason) == true, "\(format): \(e?.message ?? "no error")")
        }
        #expect(throws: SQLLoweringError.self) {
            try Self.lowering.select(
                try PredicateSyntax.parse("name != nil"),
                sortedBy: [SQLSortKey(keyPath: "name", options: .caseInsensitive)])
        }
    }

    @Test func sqliteOutputIsUnchanged() throws {
        // The hooks PostgreSQL needs keep SQLite's words.
        let q = try Fixture.lower(
            "NOT name ENDSWITH 'z' AND age != 3 AND kids.@sum.age > 1", sortedBy: [SQLSortKey(keyPath: "name")])
        #expect(q.sql.contains("IS NOT 1"))
        #expect(q.sql.contains(#"t0."age" IS NOT ?"#))
        #expect(q.sql.contains("(SELECT (((SUM((t1.\"age\") >> 32) + (SUM((t1.\"age\") & 4294967295) >> 32)) << 32)"))
        #expect(q.sql.hasSuffix(#"ORDER BY t0."name" ASC, t0."id" ASC"#))
    }
}
