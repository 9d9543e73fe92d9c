// Integer arithmetic and @sum lowered to SQL wrap modulo 2^64 exactly as the in-memory evaluator's
// Int64 arithmetic does (C semantics, predicate-language.md), where SQLite alone would switch to
// REAL (+, -, *, unary minus, Int64.min / -1) or raise "integer overflow" (SUM). Checked on boundary
// values and seeded random pairs against Swift's wrapping operators.

import Foundation
import SiftSQL
import SiftSQLite
import SiftSyntax
import SiftTestSupport
import Testing

@Suite struct WrappingArithmeticTests {
    static let schema = try! Schema(entities: [
        Entity(name: "Pair", table: "pair", attributes: [
            Attribute(name: "x", type: .integer), Attribute(name: "y", type: .integer),
        ], relationships: [
            Relationship(name: "items", values: .init(table: "item", owner: "pair_id", type: .integer)),
        ]),
    ])

    static let pairs: [(Int64, Int64)] = {
        let edges: [Int64] = [.min, .min + 1, -4_294_967_296, -4_294_967_295, -1, 0, 1, 4_294_967_295, 4_294_967_296,
                              .max - 1, .max, 3_000_000_000_000_000_000, -3_000_000_000_000_000_000]
        var out: [(Int64, Int64)] = []
        for a in edges { for b in edges { out.append((a, b)) } }
        var rng = SplitMix64(seed: 0x0F10_0D)
        for _ in 0..<300 { out.append((Int64(bitPattern: rng.next()), Int64(bitPattern: rng.next()))) }
        return out
    }()

    /// Memory's division: truncating, 0 for a zero divisor, Int64.min / -1 wraps.
    static func divide(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? 0 : a.dividedReportingOverflow(by: b).partialValue }

    @Test func plusMinusNegateDivideWrap() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE pair (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER); CREATE TABLE item (pair_id INTEGER, value INTEGER)")
        for (i, (a, b)) in Self.pairs.enumerated() {
            _ = try db.query("INSERT INTO pair VALUES (?, ?, ?)", [.integer(Int64(i)), .integer(a), .integer(b)])
        }
        let q = try SQLLowering(schema: Self.schema, entity: "Pair")
            .select(try PredicateSyntax.parse("TRUEPREDICATE"), columns: ["x + y", "x - y", "-x", "x / y", "x / -1", "y - 1", "x * y", "x * 3 - y", "-x * -y"])
        let rows = try db.query(q)
        #expect(rows.count == Self.pairs.count)
        for (row, (a, b)) in zip(rows, Self.pairs) {
            let expected: [SQLValue] = [.integer(a &+ b), .integer(a &- b), .integer(0 &- a), .integer(Self.divide(a, b)),
                                        .integer(Self.divide(a, -1)), .integer(b &- 1), .integer(a &* b),
                                        .integer((a &* 3) &- b), .integer((0 &- a) &* (0 &- b))]
            #expect(row == expected, "x = \(a), y = \(b)")
        }
    }

    @Test func sumWraps() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE pair (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER); CREATE TABLE item (pair_id INTEGER, value INTEGER)")
        var rng = SplitMix64(seed: 0x5_0_3)
        var sums: [Int64] = []
        for id in 0..<200 {
            _ = try db.query("INSERT INTO pair VALUES (?, 0, 0)", [.integer(Int64(id))])
            var sum: Int64 = 0
            for _ in 0..<(id % 7) {
                let v: Int64 = id % 3 == 0 ? Int64(bitPattern: rng.next()) : [.min, .max, -1, 1][Int(rng.next() % 4)]
                sum = sum &+ v
                _ = try db.query("INSERT INTO item VALUES (?, ?)", [.integer(Int64(id)), .integer(v)])
            }
            sums.append(sum)
        }
        let lowering = try SQLLowering(schema: Self.schema, entity: "Pair")
        for (id, sum) in sums.enumerated() {
            let q = try lowering.select(try PredicateSyntax.parse("items.@sum == %@", arguments: [sum]))
            let ids = try db.query(q).map { $0[0] }
            #expect(ids.contains(.integer(Int64(id))), "pair \(id): sum \(sum)")
        }
    }
}
