// The cost of the row guard (SiftSQL's RowGuard.swift): `age > 30` over JSON records whose `age`
// is a dynamically typed column (a JSONStore, as `sift filter --backend sqlite` loads records),
// lowered with the guard (the default) and without it (`SQLLowering.guardsRows = false`), run
// `rounds` times on the store. `--guard MODE` runs this instead of the people benchmark:
//   off / on            every age a number: the guard's `typeof` test on each row, memory never;
//   mixed-off / mixed   1 in 100 ages a string, lenient: memory decides those rows;
//   load                loading only, the baseline to subtract from instruction counts.
import BenchSupport
import Foundation
import SiftJSON
import SiftSQL
import SiftStore
import SiftSyntax

func runGuardBench(_ mode: String) {
    let mixed = mode.hasPrefix("mixed")
    var rng = SplitMix64(state: 7)
    let records: [JSONValue] = (0..<rowCount).map { i in
        let age: JSONValue = mixed && rng.below(100) == 0 ? .string("x\(i)") : .integer(Int64(rng.below(90)))
        return .object([("id", .integer(Int64(i))), ("age", age)])
    }
    let store: JSONStore
    do { store = try JSONStore(records: records, entity: "Record") } catch { fail("load: \(error)") }
    print("guard bench (\(mode)): \(rowCount) records loaded")
    if mode == "load" { return }
    var lowering: SQLLowering
    do { lowering = try SQLLowering(schema: store.schema, entity: "Record") } catch { fail("\(error)") }
    lowering.guardsRows = !mode.hasSuffix("off")
    let q: SQLQuery
    do { q = try lowering.select(try PredicateSyntax.parse("age > 30"), lenient: mixed) } catch { fail("\(error)") }
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
