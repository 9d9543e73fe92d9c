// Dynamically typed values in PostgreSQL's one-type-per-column tables: numbers in an exact NUMERIC
// column, strings in a text column beside it. Each comparison reads the column of the other
// side's kind; doubles are bound as their exact decimal expansion. (SiftPostgresTests checks the
// rows these select against memory.)

import Foundation
import SiftSQL
import SiftSyntax
import Testing

@Suite struct DynamicLoweringTests {
    static let schema: Schema = try! Schema(entities: [
        Schema.Entity(
            name: "Record", table: "record",
            attributes: [
                Schema.Attribute(name: "v", type: .any, textColumn: "v@text"),
                Schema.Attribute(name: "n", type: .integer),
                Schema.Attribute(name: "s", type: .string),
                Schema.Attribute(name: "w", type: .any),
            ],
            relationships: [
                Schema.Relationship(
                    name: "tags",
                    values: .init(table: "record_tag", owner: "owner", type: .any, textColumn: "value@text"))
            ])
    ])
    static let lowering = try! SQLLowering(schema: schema, entity: "Record", dialect: PostgreSQLDialect())

    static func lower(_ format: String, sortedBy: [SQLSortKey] = []) throws -> SQLQuery {
        try lowering.select(try PredicateSyntax.parse(format), source: format, sortedBy: sortedBy)
    }

    @Test func eachKindReadsItsColumn() throws {
        let n = try Self.lower("v == 5")
        #expect(n.sql.contains(#"WHERE t0."v" = $1 ORDER"#))
        #expect(n.bindings == [.integer(5)])
        let d = try Self.lower("v < 0.1")
        #expect(d.sql.contains(#"t0."v" < CAST($1 AS NUMERIC)"#))
        #expect(d.bindings == [.text("0.1000000000000000055511151231257827021181583404541015625")])
        let s = try Self.lower("v BEGINSWITH 'ab'")
        #expect(s.sql.contains(#"t0."v@text" >= $1 COLLATE "C""#))
        let nilTest = try Self.lower("v == nil")
        #expect(nilTest.sql.contains(#"(t0."v" IS NULL AND t0."v@text" IS NULL)"#))
        let list = try Self.lower("v IN {1, 'a', nil}")
        #expect(list.sql.contains(#"(t0."v" IN ($1) OR t0."v@text" IN ($2))"#))
        #expect(list.bindings == [.integer(1), .text("a")])
    }

    @Test func twoValuesCompareViewByView() throws {
        let q = try Self.lower("v == n")
        #expect(q.sql.contains(#"(t0."v" IS NOT DISTINCT FROM t0."n" AND t0."v@text" IS NULL)"#))
        let o = try Self.lower("v < s")
        #expect(o.sql.contains(#"(t0."v@text" < t0."s" COLLATE "C")"#))
        let e = try Self.lower("ANY tags == 'x' AND 3 IN tags")
        #expect(e.sql.contains(#"t1."value@text" = $1"#))
        #expect(e.sql.contains(#"t2."value" = $2"#))
    }

    @Test func sortingPutsNilThenNumbersThenStrings() throws {
        let q = try Self.lower("v != nil", sortedBy: [SQLSortKey(keyPath: "v", ascending: false)])
        #expect(
            q.sql.contains(
                #"ORDER BY (CASE WHEN t0."v" IS NOT NULL THEN 1 WHEN t0."v@text" IS NOT NULL THEN 2 ELSE 0 END) DESC, t0."v" DESC, t0."v@text" COLLATE "C" DESC"#
            ))
    }

    @Test func whatTwoColumnsCannotDoIsRejected() {
        for (format, reason) in [
            ("v + 1 > 2", "two columns"), ("tags.@sum > 2", "@sum"), ("w == 1", "without a text column"),
            ("TERNARY(n > 1, v, 2) == 2", "TERNARY"),
        ] {
            do {
                _ = try Self.lower(format)
                Issue.record("\(format) lowered")
            } catch let e as SQLLoweringError {
                #expect(e.kind == .unsupported, "\(format)")
                #expect(e.message.contains(reason), "\(format): \(e.message)")
            } catch { Issue.record("\(error)") }
        }
    }

    @Test func exactDecimalsAreTheBinaryValue() {
        #expect(ExactDecimal.text(0) == "0")
        #expect(ExactDecimal.text(-2.5) == "-2.5")
        #expect(ExactDecimal.text(1e20) == "100000000000000000000")
        #expect(ExactDecimal.text(0x1p60) == "1152921504606846976")
        #expect(ExactDecimal.text(.leastNonzeroMagnitude)?.hasPrefix("0.000") == true)
        #expect(ExactDecimal.text(.leastNonzeroMagnitude)?.hasSuffix("65625") == true)
        #expect(ExactDecimal.text(.infinity) == nil)
        #expect(ExactDecimal.text(.nan) == nil)
        // Round trip through Decimal's parser for values it holds exactly.
        for d in [0.5, 0.25, 3.75, 1024.125, -7.0, 123456789.0] {
            #expect(Double(ExactDecimal.text(d)!) == d)
        }
    }
}
