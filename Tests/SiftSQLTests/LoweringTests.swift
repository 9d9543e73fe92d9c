// Exact SQL and bindings for each form the lowering accepts, positive and under NOT, plus the
// folding of constant predicates. Execution is tested elsewhere (SiftSQLiteTests, differential).

import Foundation
import SiftSQL
import SiftSyntax
import Testing

private func w(_ f: String, _ args: [Any?] = [], variables: [String: LiteralValue] = [:]) throws -> String {
    try Fixture.whereClause(f, args, variables: variables)
}
private func b(_ f: String, _ args: [Any?] = []) throws -> [SQLValue] { try Fixture.lower(f, args).bindings }

@Suite struct ComparisonLoweringTests {
    @Test func equalityAndNegation() throws {
        #expect(try w("age == 5") == #"t0."age" = ?"#)
        #expect(try w("NOT age == 5") == #"t0."age" IS NOT ?"#)
        #expect(try w("age != 5") == #"t0."age" IS NOT ?"#)
        #expect(try w("NOT age != 5") == #"t0."age" = ?"#)
        #expect(try b("age == 5") == [.integer(5)])
    }

    @Test func orderingAndNegation() throws {
        #expect(try w("age < 5") == #"t0."age" < ?"#)
        #expect(try w("NOT age < 5") == #"(t0."age" >= ? OR t0."age" IS NULL)"#)
        #expect(try w("NOT age >= 5") == #"(t0."age" < ? OR t0."age" IS NULL)"#)
        #expect(try w("5 < age") == #"t0."age" > ?"#)
        #expect(try w("5 >= age") == #"t0."age" <= ?"#)
    }

    @Test func nilRules() throws {
        let sql = try Fixture.lower("age < nil").sql
        #expect(sql.contains(" WHERE 0 "))
        #expect(try w("age <= nil") == #"t0."age" IS NULL"#)
        #expect(try w("NOT age >= nil") == #"t0."age" IS NOT NULL"#)
        #expect(try w("nil == age") == #"t0."age" IS NULL"#)
        #expect(try w("age != nil") == #"t0."age" IS NOT NULL"#)
        #expect(try w("NOT age < nil") == "")
        #expect(try w("name BEGINSWITH nil") == "0")
    }

    @Test func stringOptions() throws {
        #expect(try w("name ==[c] 'x'") == #"sift_text(0, t0."name", ?, ?) = 1"#)
        #expect(try b("name ==[cd] 'x'") == [.text("x"), .integer(3)])
        #expect(try w("NOT name ==[c] 'x'") == #"(sift_text(0, t0."name", ?, ?) = 1) IS NOT 1"#)
        #expect(try w("name !=[d] 'x'") == #"(sift_text(0, t0."name", ?, ?) = 1) IS NOT 1"#)
        #expect(try w("name <[cd] 'b'") == #"sift_compare(t0."name", ?, ?) < 0"#)
        #expect(try w("name < 'b'") == #"t0."name" < ?"#)
        #expect(try w("name ==[l] 'b'") == #"t0."name" = ?"#)
        #expect(try b("name ==[n] 'x'") == [.text("x"), .integer(4)])
        #expect(try b("age ==[c] 3") == [.integer(3)])
    }

    @Test func textOperators() throws {
        let ops: [(String, Int)] = [("BEGINSWITH", 1), ("ENDSWITH", 2), ("LIKE", 4), ("MATCHES", 5)]
        #expect(try w("NOT name ENDSWITH[d] 'a'") == #"(sift_text(2, t0."name", ?, ?) = 1) IS NOT 1"#)
        for (op, code) in ops {
            #expect(try w("name \(op)[c] 'a'") == "sift_text(\(code), t0.\"name\", ?, ?) = 1")
            if code != 1 {
                #expect(try w("NOT name \(op) 'a'") == "(sift_text(\(code), t0.\"name\", ?, ?) = 1) IS NOT 1")
            }
        }
        #expect(try w("'abc' BEGINSWITH name") == #"sift_text(1, ?, t0."name", ?) = 1"#)
        #expect(try w("name CONTAINS[cd] 'x'") == #"sift_text(3, t0."name", ?, ?) = 1"#)
        #expect(try b("name CONTAINS[cd] 'x'") == [.text("x"), .integer(3)])
        #expect(try w("name IN 'hello'") == #"sift_text(3, ?, t0."name", ?) = 1"#)
    }

    @Test func beginsWithAsRange() throws {
        let range = #"(t0."name" >= ? AND t0."name" < ? AND (t0."name" < ? OR sift_text(1, t0."name", ?, ?) = 1))"#
        #expect(try w("name BEGINSWITH 'ab'") == range)
        #expect(
            try b("name BEGINSWITH 'ab'") == [.text("ab"), .text("ac"), .text("ab\u{300}"), .text("ab"), .integer(0)])
        #expect(try w("NOT name BEGINSWITH 'ab'") == "(\(range)) IS NOT 1")
        #expect(try b("name BEGINSWITH %@", ["x\u{D7FF}"])[1] == .text("x\u{E000}"))
        #expect(
            try b("name BEGINSWITH %@", ["e\u{301}"])[0...2] == [
                .text("\u{E9}"), .text("\u{EA}"), .text("\u{E9}\u{300}"),
            ])
        #expect(try w("name BEGINSWITH %@", ["x\u{10FFFF}"]) == #"sift_text(1, t0."name", ?, ?) = 1"#)
        #expect(try w("name BEGINSWITH ''") == "0")
        #expect(try w("NOT name BEGINSWITH ''") == "")
        #expect(try w("name BEGINSWITH[c] 'ab'") == #"sift_text(1, t0."name", ?, ?) = 1"#)
        #expect(try w("name BEGINSWITH[n] 'ab'") == #"sift_text(1, t0."name", ?, ?) = 1"#)
    }

    @Test func stringsBoundNFCExceptUnderN() throws {
        let decomposed = "e\u{301}"
        #expect(try b("name == %@", [decomposed]) == [.text("\u{e9}")])
        #expect(try b("name ==[n] %@", [decomposed]) == [.text(decomposed), .integer(4)])
    }

    @Test func inLists() throws {
        #expect(try w("age IN {1, nil, 2}") == #"t0."age" IN (?, ?)"#)
        #expect(try b("age IN {1, nil, 2}") == [.integer(1), .integer(2)])
        #expect(try w("NOT age IN {1}") == #"(t0."age" NOT IN (?) OR t0."age" IS NULL)"#)
        #expect(try w("age IN {}") == "0")
        #expect(try w("age IN {nil}") == "0")
        #expect(try w("NOT age IN {}") == "")
        #expect(try w("age IN %@", [[3, 4]]) == #"t0."age" IN (?, ?)"#)
        #expect(try w("nil IN {1}") == "0")
    }

    @Test func between() throws {
        #expect(try w("age BETWEEN {10, 5}") == #"t0."age" BETWEEN ? AND ?"#)
        #expect(try b("age BETWEEN {10, 5}") == [.integer(5), .integer(10)])
        #expect(try w("NOT age BETWEEN {1, 2}") == #"(t0."age" NOT BETWEEN ? AND ? OR t0."age" IS NULL)"#)
        #expect(try w("age BETWEEN {1, nil}") == "0")
    }

    /// An aggregate whose elements are constants once `$VAR`s are bound is a constant list, as in
    /// memory; one with a key path or another non-constant element stays rejected.
    @Test func aggregatesOfBoundVariables() throws {
        let vars: [String: LiteralValue] = ["lo": .integer(10), "hi": .integer(3)]
        #expect(try w("age BETWEEN {$lo, $hi}", variables: vars) == #"t0."age" BETWEEN ? AND ?"#)
        #expect(try Fixture.lower("age BETWEEN {$lo, $hi}", variables: vars).bindings == [.integer(3), .integer(10)])
        #expect(try w("age IN {$lo, 4}", variables: vars) == #"t0."age" IN (?, ?)"#)
        #expect(Fixture.error("age BETWEEN {$lo, $hi}")?.kind == .unboundVariable)
        #expect(Fixture.error("age BETWEEN {score, 3}")?.kind == .unsupported)
    }

    @Test func twoColumns() throws {
        #expect(try w("age == score") == #"t0."age" IS t0."score""#)
        #expect(try w("age != score") == #"t0."age" IS NOT t0."score""#)
        #expect(try w("age <= score") == #"(t0."age" <= t0."score" OR (t0."age" IS NULL AND t0."score" IS NULL))"#)
        #expect(try w("NOT age < score") == #"(t0."age" < t0."score") IS NOT 1"#)
        #expect(
            try w("name ==[c] nick")
                == #"((t0."name" IS NULL AND t0."nick name" IS NULL) OR sift_text(0, t0."name", t0."nick name", ?) = 1)"#
        )
    }

    /// Beside a dynamically typed column a declared one loses its affinity: SQLite would convert
    /// `'3'` to 3 for an INTEGER column (and a computed number to text for a TEXT one), where
    /// memory never finds a number equal to a string. A date is never equal to a dynamic value.
    @Test func aDeclaredColumnBesideADynamicOne() throws {
        #expect(try w("age == misc") == #"+(t0."age") IS t0."misc""#)
        #expect(try w("misc != score") == #"t0."misc" IS NOT +(t0."score")"#)
        #expect(try w("name == misc") == #"+(t0."name") IS t0."misc""#)
        #expect(try w("born == misc") == #"(t0."born" IS NULL AND t0."misc" IS NULL)"#)
        #expect(try w("misc != bornISO") == #"((t0."misc" IS NULL AND t0."bornISO" IS NULL)) IS NOT 1"#)
        #expect(try w("age == score") == #"t0."age" IS t0."score""#)
        #expect(Fixture.error("price == misc")?.kind == .unsupported)
    }

    @Test func variables() throws {
        #expect(try w("age == $x", variables: ["x": .integer(7)]) == #"t0."age" = ?"#)
        #expect(
            try Fixture.lowering.select(try PredicateSyntax.parse("age == $x"), variables: ["x": .integer(7)]).bindings
                == [.integer(7)])
    }
}

@Suite struct EncodingTests {
    let date = Date(timeIntervalSinceReferenceDate: 0.5)
    @Test func dates() throws {
        #expect(try b("born > %@", [date]) == [.double(0.5)])
        #expect(try b("born70 > %@", [date]) == [.double(978_307_200.5)])
        #expect(try b("bornISO > %@", [date]) == [.text("2001-01-01T00:00:00.500Z")])
    }
    @Test func booleansDecimalsData() throws {
        #expect(try b("flag == YES") == [.integer(1)])
        #expect(try w("flag != NO") == #"t0."flag" IS NOT ?"#)
        #expect(try b("age == YES") == [.integer(1)])
        #expect(try b("misc == NO") == [.integer(0)])
        #expect(try b("price == 3") == [.text("3")])
        #expect(try b("score == %@", [Decimal(string: "1.5")!]) == [.double(1.5)])
        #expect(try b("blob == %@", [Data([1, 2])]) == [.blob([1, 2])])
        #expect(try b("misc == 'a'") == [.text("a")])
    }
}

@Suite struct RelationshipLoweringTests {
    @Test func toOneJoinsOnePerPath() throws {
        let q = try Fixture.lower("address.city == 'Oslo' AND address.country.name == 'NO' OR address.city == 'x'")
        #expect(
            q.sql
                == #"SELECT t0."id" FROM "person" AS t0 LEFT JOIN "address" AS t1 ON t1."id" = t0."address_id" LEFT JOIN "country" AS t2 ON t2."code" = t1."country_id" WHERE ((t1."city" = ?) AND (t2."name" = ?)) OR (t1."city" = ?) ORDER BY t0."id" ASC"#
        )
        #expect(q.bindings == [.text("Oslo"), .text("NO"), .text("x")])
        #expect(!q.sql.contains("INNER"))
    }

    @Test func relationshipNil() throws {
        #expect(try w("address == nil") == #"t0."address_id" IS NULL"#)
        #expect(try w("NOT address == nil") == #"t0."address_id" IS NOT NULL"#)
        #expect(try w("kids == nil") == "0")
        #expect(try w("kids != nil") == "")
        #expect(try w("pets != nil") == #"NOT t0."pet_count" IS NULL"#)
        #expect(try w("NOT pets == nil") == #"NOT t0."pet_count" IS NULL"#)
        #expect(try w("pets == nil") == #"t0."pet_count" IS NULL"#)
    }

    @Test func collectionsBehindToOne() throws {
        let join = #"LEFT JOIN "address" AS t1 ON t1."id" = t0."address_id""#
        #expect(try Fixture.lower("address.residents == nil").sql.contains(#"\#(join) WHERE t1."id" IS NULL"#))
        #expect(
            try w("address.residents.@count == 0")
                == #"CASE WHEN t1."id" IS NULL THEN NULL ELSE (SELECT COUNT(*) FROM "person" AS t2 WHERE t2."address_id" = t1."id") END = ?"#
        )
        #expect(
            try w("ALL address.residents.age > 1")
                == #"NOT EXISTS (SELECT 1 FROM "person" AS t2 WHERE t2."address_id" = t1."id" AND ((t2."age" <= ? OR t2."age" IS NULL)))"#
        )
        #expect(
            try w("SUBQUERY(address.residents, $r, $r.age > 1).@count == 0")
                == #"CASE WHEN t1."id" IS NULL THEN NULL ELSE (SELECT COUNT(*) FROM "person" AS t2 WHERE t2."address_id" = t1."id" AND (t2."age" > ?)) END = ?"#
        )
    }

    /// SQLite tests each WHERE term at the outermost loop where its tables are read: a top-level
    /// AND's EXISTS parts go last, in one term that reads each joined row the other parts test,
    /// so the subquery runs after those tests. Nothing moves when the other parts read no joined
    /// row, under OR or NOT, or in PostgreSQL.
    @Test func existsWaitsForTheJoinedRowsTheOtherPartsTest() throws {
        let sub = #"SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND "#
        #expect(
            try w("ANY kids.age > 5 AND address.city == 'Oslo' AND age > 1")
                == #"(t2."city" = ?) AND (t0."age" > ?) AND +((EXISTS ("# + sub
                + #"(t1."age" > ?))) AND t2."id" IS t2."id")"#)
        #expect(
            try b("ANY kids.age > 5 AND address.city == 'Oslo' AND age > 1")
                == [.text("Oslo"), .integer(1), .integer(5)])
        #expect(try w("ANY kids.age > 5 AND age > 1") == "(EXISTS (\(sub)(t1.\"age\" > ?))) AND (t0.\"age\" > ?)")
        #expect(try w("ANY kids.age > 5 OR address.city == 'Oslo'").hasPrefix("(EXISTS"))
        #expect(try !w("NOT (ANY kids.age > 5 AND address.city == 'Oslo')").contains("+("))
        let pg = try PostgreSQLDialectTests.lower("ANY kids.age > 5 AND address.city == 'Oslo'")
        #expect(pg.sql.contains("EXISTS") && !pg.sql.contains("+("))
    }

    @Test func quantifiers() throws {
        let sub = #"SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND "#
        #expect(try w("ANY kids.age > 5") == "EXISTS (\(sub)(t1.\"age\" > ?))")
        #expect(try w("SOME kids.age > 5") == "EXISTS (\(sub)(t1.\"age\" > ?))")
        #expect(try w("NOT ANY kids.age > 5") == "NOT EXISTS (\(sub)(t1.\"age\" > ?))")
        #expect(try w("NONE kids.age > 5") == "NOT EXISTS (\(sub)(t1.\"age\" > ?))")
        #expect(try w("ALL kids.age > 5") == "NOT EXISTS (\(sub)((t1.\"age\" <= ? OR t1.\"age\" IS NULL)))")
        #expect(try w("NOT ALL kids.age > 5") == "EXISTS (\(sub)((t1.\"age\" <= ? OR t1.\"age\" IS NULL)))")
        #expect(
            try w("NONE friends.name == 'x'")
                == #"NOT EXISTS (SELECT 1 FROM "friendship" AS t2 JOIN "person" AS t1 ON t1."id" = t2."friend_id" WHERE t2."person_id" = t0."id" AND (t1."name" = ?))"#
        )
        #expect(
            try w("ANY tags ==[c] 'x'")
                == #"EXISTS (SELECT 1 FROM "person_tag" AS t1 WHERE t1."person_id" = t0."id" AND (sift_text(0, t1."value", ?, ?) = 1))"#
        )
        #expect(
            try w("ANY kids.address.city == 'x'")
                == #"EXISTS (SELECT 1 FROM "kid" AS t1 LEFT JOIN "address" AS t2 ON t2."id" = t1."address_id" WHERE t1."parent_id" = t0."id" AND (t2."city" = ?))"#
        )
    }

    @Test func membershipInCollections() throws {
        #expect(
            try w("'x' IN tags")
                == #"EXISTS (SELECT 1 FROM "person_tag" AS t1 WHERE t1."person_id" = t0."id" AND (t1."value" = ?))"#)
        #expect(
            try w("NOT tags CONTAINS 'x'")
                == #"NOT EXISTS (SELECT 1 FROM "person_tag" AS t1 WHERE t1."person_id" = t0."id" AND (t1."value" = ?))"#
        )
        #expect(
            try w("5 IN kids.age")
                == #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND (t1."age" = ?))"#)
        #expect(try w("nil IN tags") == "0")
    }

    @Test func collectionOperators() throws {
        #expect(try w("kids.@count > 2") == #"(SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") > ?"#)
        #expect(try w("pets.@count == 0") == #"t0."pet_count" = ?"#)
        // Integer sums wrap as in memory: high and low 32-bit halves summed apart, recombined modulo 2^64.
        #expect(
            try w("kids.@sum.age > 3")
                == #"COALESCE((SELECT (((SUM((t1."age") >> 32) + (SUM((t1."age") & 4294967295) >> 32)) << 32) | (SUM((t1."age") & 4294967295) & 4294967295)) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id"), 0) > ?"#
        )
        #expect(try w("kids.@sum.age > 3").components(separatedBy: "SUM(").count == 4)
        #expect(
            try w("scores.@sum == 0")
                == #"CASE WHEN t0."score_count" IS NULL THEN NULL ELSE COALESCE((SELECT (((SUM((t1."value") >> 32) + (SUM((t1."value") & 4294967295) >> 32)) << 32) | (SUM((t1."value") & 4294967295) & 4294967295)) FROM "person_score" AS t1 WHERE t1."person_id" = t0."id"), 0) END = ?"#
        )
        #expect(
            try w("kids.@avg.age > 3") == #"(SELECT AVG(t1."age") FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") > ?"#
        )
        #expect(
            try w("kids.@min.age < 3") == #"(SELECT MIN(t1."age") FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") < ?"#
        )
        #expect(
            try w("kids.@max.age == nil")
                == #"(SELECT MAX(t1."age") FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") IS NULL"#)
    }
}

@Suite struct SubqueryLoweringTests {
    @Test func countAndSize() throws {
        let expected =
            #"(SELECT COUNT(*) FROM "kid" AS t1 LEFT JOIN "address" AS t2 ON t2."id" = t1."address_id" WHERE t1."parent_id" = t0."id" AND ((t1."age" > ?) AND (t2."city" IS t0."name"))) > ?"#
        let got = try w("SUBQUERY(kids, $k, $k.age > 3 AND $k.address.city == name).@count > 0")
        #expect(got == expected)
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3 AND $k.address.city == name)[SIZE] > 0") == expected)
        #expect(try b("SUBQUERY(kids, $k, $k.age > 3).@count > 0") == [.integer(3), .integer(0)])
        #expect(
            try w("NOT SUBQUERY(kids, $k, $k.age > 3).@count > 0")
                == #"((SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND (t1."age" > ?)) <= ? OR (SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND (t1."age" > ?)) IS NULL)"#
        )
    }

    @Test func valuesAndNilCollections() throws {
        #expect(
            try w("SUBQUERY(scores, $s, $s > 3).@count == 1")
                == #"CASE WHEN t0."score_count" IS NULL THEN NULL ELSE (SELECT COUNT(*) FROM "person_score" AS t1 WHERE t1."person_id" = t0."id" AND (t1."value" > ?)) END = ?"#
        )
        #expect(
            try w("SUBQUERY(tags, $t, FALSEPREDICATE).@count == 0")
                == #"(SELECT COUNT(*) FROM "person_tag" AS t1 WHERE t1."person_id" = t0."id" AND 0) = ?"#)
        #expect(
            try w("SUBQUERY(friends, $f, TRUEPREDICATE).@count == 0")
                == #"(SELECT COUNT(*) FROM "friendship" AS t2 JOIN "person" AS t1 ON t1."id" = t2."friend_id" WHERE t2."person_id" = t0."id") = ?"#
        )
    }
}

@Suite struct ArithmeticLoweringTests {
    /// The WHERE clause without the row guard (which sends the rows where arithmetic meets nil to memory).
    func u(_ f: String) throws -> String {
        var lowering = Fixture.lowering
        lowering.guardsRows = false
        let sql = try lowering.select(try PredicateSyntax.parse(f), source: f).sql
        guard let w = sql.range(of: " WHERE "), let o = sql.range(of: " ORDER BY ", options: .backwards) else {
            return ""
        }
        return String(sql[w.upperBound..<o.lowerBound])
    }
    func ub(_ f: String) throws -> [SQLValue] {
        var lowering = Fixture.lowering
        lowering.guardsRows = false
        return try lowering.select(try PredicateSyntax.parse(f), source: f).bindings
    }

    @Test func guardedOnTheOperandsNullTest() throws {
        #expect(try w("age + 1 == 5").hasPrefix(#"(CASE WHEN ((t0."age") IS NULL) THEN sift_guard("#))
        #expect(try w("abs(age) == 5").hasPrefix(#"(CASE WHEN ((t0."age") IS NULL) THEN sift_guard("#))
        // Next to a relationship no row alone answers: refused (a store judges it in memory).
        #expect(Fixture.error("NOT age - 1 < kids.@count")?.kind == .unsupported)
    }

    @Test func columns() throws {
        // Integer + and - wrap modulo 2^64 as memory does: 32-bit halves added apart, recombined
        // (SiftSQLiteTests.WrappingArithmeticTests runs them on boundary values).
        #expect(
            try u("age + 1 == 5")
                == #"(((((t0."age") >> 32) + ((?) >> 32) + ((((t0."age") & 4294967295) + ((?) & 4294967295)) >> 32)) << 32) | ((((t0."age") & 4294967295) + ((?) & 4294967295)) & 4294967295)) = ?"#
        )
        #expect(try ub("age + 1 == 5") == [.integer(1), .integer(1), .integer(1), .integer(5)])
        #expect(try u("score + 1 == 5") == #"((t0."score") + (?)) = ?"#)
        #expect(try u("age * score > 5") == #"((t0."age") * (t0."score")) > ?"#)
        #expect(try u("age / 2 == 1") == #"((t0."age") / (?)) = ?"#)
        #expect(
            try u("age / age == 1").hasPrefix(
                #"(CASE WHEN (t0."age") = 0 AND (t0."age") IS NOT NULL THEN 0 WHEN (t0."age") = -1 THEN "#))
        // x - y is x + ~y + 1; unary minus is 0 - x.
        #expect(try u("-age < 0").contains(#"((?) & 4294967295) + ((~(t0."age")) & 4294967295) + 1)"#))
        #expect(
            try u("NOT age - 1 < kids.@count").hasSuffix(
                #" < (SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id")) IS NOT 1"#))
    }

    @Test func absolute() throws {
        #expect(
            try u("abs(age) == 5")
                == #"(CASE WHEN (t0."age") < 0 AND (t0."age") <> -9223372036854775808 THEN -(t0."age") ELSE (t0."age") END) = ?"#
        )
        #expect(try ub("age == abs(-3)") == [.integer(3)])
        #expect(try ub("score == abs(-1.5)") == [.double(1.5)])
    }

    @Test func constantsFold() throws {
        #expect(try b("age == 7 / 2") == [.integer(3)])
        #expect(try b("age == 7 / 0") == [.integer(0)])
        #expect(try b("score == 1 + 0.5") == [.double(1.5)])
        #expect(try w("1 + 1 == 2") == "")
    }
}

@Suite struct FoldingTests {
    @Test func constants() throws {
        #expect(try w("TRUEPREDICATE") == "")
        #expect(try w("FALSEPREDICATE") == "0")
        #expect(try w("NOT FALSEPREDICATE") == "")
        #expect(try w("1 == 1 AND age == 3") == #"(t0."age" = ?)"#)
        #expect(try w("1 == 2 OR age == 3") == #"(t0."age" = ?)"#)
        #expect(try w("1 == 2 AND age == 3") == "0")
        #expect(try w("1 < 2 OR age == 3") == "")
        #expect(try w("nil == nil") == "")
        #expect(try w("nil < nil") == "0")
        #expect(try w("nil <= nil") == "")
        #expect(try w("1 == 1.0") == "")
        #expect(try w("'a' == 1") == "0")
        #expect(try w("'a' < 'b'") == "")
        #expect(try w("NOT (1 == 1 AND 2 == 2)") == "0")
        #expect(try w("NOT (age == 5 AND name == 'x')") == #"(t0."age" IS NOT ?) OR (t0."name" IS NOT ?)"#)
        #expect(try w("NOT (age == 5 OR NOT name == 'x')") == #"(t0."age" IS NOT ?) AND (t0."name" = ?)"#)
        #expect(try w("NOT NOT age == 5") == #"t0."age" = ?"#)
        #expect(try w("NOT (age == 5 OR 1 == 1)") == "0")
        #expect(try w("2 IN {1, 2}") == "")
        #expect(try w("2 IN {1, nil}") == "0")
        #expect(try w("nil BETWEEN {1, 2}") == "0")
        #expect(try w("2 BETWEEN {3, 1}") == "")
        #expect(try w("NOT 2 BETWEEN {3, 1}") == "0")
        #expect(try w("4 BETWEEN {3, 1}") == "0")
        #expect(try w("2 BETWEEN {1, nil}") == "0")
    }
}

@Suite struct OrderByTests {
    @Test func sortKeys() throws {
        let q = try Fixture.lower(
            "TRUEPREDICATE",
            sortedBy: [
                SQLSortKey(keyPath: "address.city", ascending: false, options: .caseInsensitive),
                SQLSortKey(keyPath: "age"),
                SQLSortKey(keyPath: "name", options: [.caseInsensitive, .diacriticInsensitive]),
                SQLSortKey(keyPath: "name", options: [.diacriticInsensitive]),
                SQLSortKey(keyPath: "name", options: [.normalized]),
                SQLSortKey(keyPath: "age", options: .caseInsensitive),
            ])
        #expect(
            q.sql
                == #"SELECT t0."id" FROM "person" AS t0 LEFT JOIN "address" AS t1 ON t1."id" = t0."address_id" ORDER BY t1."city" COLLATE "sift_c" DESC, t0."age" ASC, t0."name" COLLATE "sift_cd" ASC, t0."name" COLLATE "sift_d" ASC, t0."name" ASC, t0."age" ASC, t0."id" ASC"#
        )
    }

    @Test func columnsAndCount() throws {
        let p = try PredicateSyntax.parse("age > 3")
        let q = try Fixture.lowering.select(p, columns: ["name", "address.city"])
        #expect(
            q.sql
                == #"SELECT t0."name", t1."city" FROM "person" AS t0 LEFT JOIN "address" AS t1 ON t1."id" = t0."address_id" WHERE t0."age" > ? ORDER BY t0."id" ASC"#
        )
        let c = try Fixture.lowering.count(p)
        #expect(c.sql == #"SELECT COUNT(*) FROM "person" AS t0 WHERE t0."age" > ?"#)
        #expect(c.bindings == [.integer(3)])
    }
}
