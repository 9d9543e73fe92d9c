// The cost of the row guard (SiftSQL's RowGuard.swift): `age > 30` over JSON records whose `age`
// is a dynamically typed column (a JSONStore, as `sift filter --backend sqlite` loads records),
// lowered with the guard (the default) and without it (`SQLLowering.guardsRows = false`), run
// `rounds` times on the store. `--guard MODE` runs this instead of the people benchmark:
//   off / on            every age a number: the guard's `typeof` test on each row, memory never;
//   mixed-off / mixed   1 in 100 ages a string, lenient: memory decides those rows;
//   load                loading only, the baseline to subtract from instruction counts;
//   document-off        `age > 80 AND meta.@count >= 2` without the guard: SQL's `age > 80` first,
//                       then `sift_document` on the rows it keeps (the SQL before the guard);
//   document            the same guarded: the pre-filter `(age > 80 OR <age is text>)`, then `sift_guard`;
//   document-first      `meta.@count >= 2 AND age > 80` guarded: strict memory may raise in its first
//                       part on any row, so no pre-filter: `sift_guard` on every row;
//   typed-off / typed   `price * 2 > 5` over a typed integer column without documents (a schema's
//                       own table, as a store's relational entity), every price there: the guard's
//                       `price IS NULL` test (the operand's) on each row, memory never (typed-off:
//                       without it);
//   typed-nil-off /     1 in 100 prices nil, lenient: memory decides those rows (`sift_row`), where
//   typed-nil           the SQL without the guard drops them without a word.
import BenchSupport
import Foundation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax

func runGuardBench(_ mode: String) {
    if mode.hasPrefix("typed") { return runTypedGuardBench(mode) }
    let mixed = mode.hasPrefix("mixed")
    var rng = SplitMix64(state: 7)
    let records: [JSONValue] = (0..<rowCount).map { i in
        let age: JSONValue = mixed && rng.below(100) == 0 ? .string("x\(i)") : .integer(Int64(rng.below(90)))
        guard mode.hasPrefix("document") else { return .object([("id", .integer(Int64(i))), ("age", age)]) }
        let meta: JSONValue = .object((0..<Int(rng.below(4))).map { ("k\($0)", .integer(Int64($0))) })
        return .object([("id", .integer(Int64(i))), ("age", age), ("meta", meta)])
    }
    let store: JSONStore
    do { store = try JSONStore(records: records, entity: "Record") } catch { fail("load: \(error)") }
    print("guard bench (\(mode)): \(rowCount) records loaded")
    if mode == "load" { return }
    var lowering: SQLLowering
    do { lowering = try SQLLowering(schema: store.schema, entity: "Record") } catch { fail("\(error)") }
    lowering.guardsRows = !mode.hasSuffix("off")
    let q: SQLQuery
    let text =
        switch mode {
        case "document", "document-off": "age > 80 AND meta.@count >= 2"
        case "document-first": "meta.@count >= 2 AND age > 80"
        default: "age > 30"
        }
    do { q = try lowering.select(try PredicateSyntax.parse(text), lenient: mixed) } catch { fail("\(error)") }
    var times: [Double] = []
    var matched = 0
    for _ in 0..<rounds {
        let start = now()
        do { matched = try store.recordIndices(sql: q.sql, bindings: q.bindings).count } catch { fail("\(error)") }
        times.append(Double(now() - start) / 1e6)
    }
    print("  \(q.sql)")
    print("  \(matched) matches, median \(String(format: "%.2f", median(times))) ms over \(rounds) rounds")
}

/// The `typed…` modes: nil into arithmetic over a declared column (see the header).
func runTypedGuardBench(_ mode: String) {
    let withNils = mode.hasPrefix("typed-nil")
    let db: SQLiteConnection
    let q: SQLQuery
    do {
        db = try SQLiteConnection()
        try db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, price INTEGER)")
        // Prices 0 to 89 in a scattered order; with nils, 1 row in 100 has none.
        let price = withNils ? "CASE WHEN i % 100 = 7 THEN NULL ELSE (i * 7919) % 90 END" : "(i * 7919) % 90"
        try db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rowCount - 1)) "
                + "INSERT INTO item SELECT i, \(price) FROM n")
        let schema = try Schema(entities: [
            Schema.Entity(name: "Item", table: "item", attributes: [Schema.Attribute(name: "price", type: .integer)])
        ])
        var lowering = try SQLLowering(schema: schema, entity: "Item")
        lowering.guardsRows = !mode.hasSuffix("off")
        q = try lowering.select(try PredicateSyntax.parse("price * 2 > 5"), lenient: withNils)
    } catch { fail("\(error)") }
    print("guard bench (\(mode)): \(rowCount) rows loaded")
    var times: [Double] = []
    var matched = 0
    for _ in 0..<rounds {
        let start = now()
        do { matched = try db.query(q).count } catch { fail("\(error)") }
        times.append(Double(now() - start) / 1e6)
    }
    print("  \(q.sql)")
    print("  \(matched) matches, median \(String(format: "%.2f", median(times))) ms over \(rounds) rounds")
}
