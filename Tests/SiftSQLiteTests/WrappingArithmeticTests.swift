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
        Schema.Entity(
            name: "Pair", table: "pair",
            attributes: [
                Schema.Attribute(name: "x", type: .integer), Schema.Attribute(name: "y", type: .integer),
            ],
            relationships: [
                Schema.Relationship(name: "items", values: .init(table: "item", owner: "pair_id", type: .integer))
            ])
    ])

    static let pairs: [(Int64, Int64)] = {
        let edges: [Int64] = [
            .min, .min + 1, -4_294_967_296, -4_294_967_295, -1, 0, 1, 4_294_967_295, 4_294_967_296,
            .max - 1, .max, 3_000_000_000_000_000_000, -3_000_000_000_000_000_000,
        ]
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
        try db.execute(
            "CREATE TABLE pair (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER); CREATE TABLE item (pair_id INTEGER, value INTEGER)"
        )
        for (i, (a, b)) in Self.pairs.enumerated() {
            _ = try db.query("INSERT INTO pair VALUES (?, ?, ?)", [.integer(Int64(i)), .integer(a), .integer(b)])
        }
        let q = try SQLLowering(schema: Self.schema, entity: "Pair")
            .select(
                try PredicateSyntax.parse("TRUEPREDICATE"),
                columns: ["x + y", "x - y", "-x", "x / y", "x / -1", "y - 1", "x * y", "x * 3 - y", "-x * -y"])
        let rows = try db.query(q)
        #expect(rows.count == Self.pairs.count)
        for (row, (a, b)) in zip(rows, Self.pairs) {
            let expected: [SQLValue] = [
                .integer(a &+ b), .integer(a &- b), .integer(0 &- a), .integer(Self.divide(a, b)),
                .integer(Self.divide(a, -1)), .integer(b &- 1), .integer(a &* b),
                .integer((a &* 3) &- b), .integer((0 &- a) &* (0 &- b)),
            ]
            #expect(row == expected, "x = \(a), y = \(b)")
        }
    }

    /// `any` columns wrap on the rows where both operands are integers and stay IEEE doubles elsewhere.
    @Test func dynamicallyTypedColumnsWrapOnIntegerRows() throws {
        let schema = try Schema(entities: [
            Schema.Entity(
                name: "Row", table: "row",
                attributes: [
                    Schema.Attribute(name: "p", type: .any), Schema.Attribute(name: "q", type: .any),
                    Schema.Attribute(name: "n", type: .integer),
                ])
        ])
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE row (id INTEGER PRIMARY KEY, p, q, n INTEGER)")
        let values: [SQLValue] = [
            .integer(.max), .integer(.min), .integer(-1), .integer(3), .double(2.5), .double(9.3e18),
        ]
        var expected: [[SQLValue]] = []
        var id: Int64 = 0
        for p in values {
            for q in values {
                _ = try db.query("INSERT INTO row VALUES (?, ?, ?, 7)", [.integer(id), p, q])
                id += 1
                func num(_ v: SQLValue) -> Double {
                    if case .integer(let i) = v { Double(i) } else if case .double(let d) = v { d } else { .nan }
                }
                if case .integer(let x) = p, case .integer(let y) = q {
                    expected.append([
                        .integer(x &+ y), .integer(x &- y), .integer(x &* y), .integer(x &* 7), .integer(0 &- x),
                    ])
                } else {
                    let n7: SQLValue = if case .integer(let x) = p { .integer(x &* 7) } else { .double(num(p) * 7) }
                    let neg: SQLValue = if case .integer(let x) = p { .integer(0 &- x) } else { .double(0 - num(p)) }
                    expected.append([
                        .double(num(p) + num(q)), .double(num(p) - num(q)), .double(num(p) * num(q)), n7, neg,
                    ])
                }
            }
        }
        let q = try SQLLowering(schema: schema, entity: "Row")
            .select(try PredicateSyntax.parse("TRUEPREDICATE"), columns: ["p + q", "p - q", "p * q", "p * n", "-p"])
        #expect(try db.query(q) == expected)
    }

    @Test func sumWraps() throws {
        let db = try SQLiteConnection()
        try db.execute(
            "CREATE TABLE pair (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER); CREATE TABLE item (pair_id INTEGER, value INTEGER)"
        )
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
