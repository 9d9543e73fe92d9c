// PGBench: what Sift's PostgreSQL back-end costs compared with an expert's hand-written SQL, the
// PostgreSQL counterpart of SQLBench. A fixed SQL text says nothing about the price of going
// through Sift: the lowering may write a form the planner cannot index, or add checks memory's
// semantics need. So one run builds a `person` table (200,000 rows by default) and its `kid` table
// in a fresh schema, exactly as Sift's own back-end builds them (PostgresTables: typed columns, text
// in the "C" collation, folded copies of every string, an index on every column; rows through
// COPY), vacuums and analyzes them, then, for each predicate, fetches the matching ids two ways
// through the same PostgresConnection:
//   Sift  = parse + lower (PostgreSQL dialect) + execute the lowered SQL with its bindings,
//   hand  = execute SQL written by hand with the same semantics on this data.
// Both must return the same ids, or the run fails: comparing different work is worthless. The two
// are timed interleaved, query by query, so drift on a shared machine hits both alike; the ratio
// of the medians is the price of Sift (target ≤ 1.1×), and the geometric mean sums up the run. A
// third interleaved query runs Sift's SQL lowered beforehand, which separates the price of the SQL
// itself from that of parsing and lowering.
// The schema is dropped afterwards, also when a case fails.
//
// Usage: PGBench [--rows N] [--rounds R] [--only TEXT] [--database-url URL]
//   defaults: 200_000 rows, median of 7 rounds, the server of $DATABASE_URL; --only keeps the
//   cases whose label contains TEXT.
import BenchSupport
import Foundation
import SiftPostgres
import SiftSQL
import SiftSyntax

// MARK: - Command line

nonisolated(unsafe) var rowCount = 200_000
nonisolated(unsafe) var rounds = 7
nonisolated(unsafe) var only: String? = nil
nonisolated(unsafe) var databaseURL = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
readOptions(
    [
        .integer("--rows") { rowCount = $0 },
        .integer("--rounds") { rounds = $0 },
        .text("--only") { only = $0 },
        .text("--database-url") { databaseURL = $0 ?? "" },
    ], usage: "usage: PGBench [--rows N] [--rounds R] [--only TEXT] [--database-url URL]")

/// Drops the benchmark's schema; set once it exists, so a failure cleans up as well.
nonisolated(unsafe) var cleanup: () -> Void = {}

func fail(_ message: String) -> Never {
    cleanup()
    FileHandle.standardError.write(Data("PGBench: \(message)\n".utf8))
    exit(1)
}

guard !databaseURL.isEmpty else { fail("no server: pass --database-url URL or set DATABASE_URL") }

// MARK: - Connection and schema

let db: PostgresConnection
do { db = try PostgresConnection(url: databaseURL) } catch { fail("\(error)") }
let schemaName = "pgbench_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
do {
    try db.executeScript("CREATE SCHEMA \(schemaName); SET search_path TO \(schemaName)")
} catch { fail("\(error)") }
cleanup = {
    _ = try? db.executeScript("DROP SCHEMA \(schemaName) CASCADE")
    cleanup = {}
}

let schema: Schema
do {
    schema = try Schema(json: peopleSchemaJSON)
} catch { fail("\(error)") }

let tables: PostgresTables
do { tables = try PostgresTables(schema: schema) } catch { fail("\(error)") }

// MARK: - Data (the same shape as SQLBench's: ~5% NULL ages, ~4% NULL cities, 0-3 kids each)

let cities = [
    "Lyon", "Nice", "Oslo", "São Paulo", "Sao Paulo", "SÃO CARLOS", "Berlin", "Zürich", "Łódź", "Kraków",
    "Paris", "Porto", "Sevilla", "Santos", "Tokyo", "Reykjavík",
]

/// Names that exist whatever the row count (names are drawn at random, so a fixed one may not):
/// those of two rows, for the equality cases.
nonisolated(unsafe) var probes: [String] = []
let loadStart = now()
do {
    var rng = SplitMix64(state: 42)
    var people: [[String: SQLValue]] = []
    var kids: [[String: SQLValue]] = []
    people.reserveCapacity(rowCount)
    for i in 0..<rowCount {
        let age: SQLValue = rng.below(20) == 0 ? .null : .integer(Int64(rng.below(90)))
        let city: SQLValue = rng.below(25) == 0 ? .null : .text(cities[rng.below(cities.count)])
        people.append([
            "id": .integer(Int64(i)), "name": .text("name\(rng.below(rowCount))"), "city": city, "age": age,
            "score": .double(Double(rng.below(10_000)) / 100),
        ])
        for _ in 0..<rng.below(4) {
            kids.append([
                "id": .integer(Int64(kids.count)), "parent_id": .integer(Int64(i)),
                "name": .text("kid\(rng.below(1000))"), "age": .integer(Int64(rng.below(18))),
            ])
        }
    }
    for i in [rowCount / 3, rowCount / 7] {
        guard case .text(let name)? = people[i]["name"] else { fail("no name in row \(i)") }
        probes.append(name)
    }
    try tables.create(on: db)
    for table in tables.tables {
        // load(_:rows:on:) takes the values of the source columns, in the table's order.
        let sources = table.columns.compactMap(\.source)
        let rows = table.source == "person" ? people : kids
        try tables.load(table, rows: rows.map { row in sources.map { row[$0] ?? .null } }, on: db)
        // VACUUM cannot run inside the transaction a multi-statement script is; it sets the
        // visibility map index-only scans rely on, as a table in steady use would have.
        _ = try db.execute("VACUUM (ANALYZE) \(PostgresTables.quote(table.name))")
    }
} catch { fail("load: \(error)") }
let version: String = {
    guard let row = try? db.execute("SHOW server_version").first, case .text(let v)? = row.first else { return "?" }
    return v
}()
print(
    "PGBench: \(rowCount) people loaded (PostgresTables + COPY), indexed and analyzed in "
        + "\(String(format: "%.1f", Double(now() - loadStart) / 1e9)) s; median of \(rounds) rounds; PostgreSQL \(version)"
)

let lowering: SQLLowering
do { lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect()) } catch {
    fail("\(error)")
}

// MARK: - Hand-written exact BEGINSWITH

/// A regular expression matching a combining mark (general categories Mn, Mc, Me), written here
/// from Swift's Unicode tables: memory's BEGINSWITH is false where the prefix ends just before one,
/// so the exact hand-written prefix match needs a look-ahead for it.
let combiningMarkClass: String = {
    var ranges: [(UInt32, UInt32)] = []
    for v in UInt32(0x300)...0x10FFFF {
        guard let s = Unicode.Scalar(v) else { continue }
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            if let last = ranges.last, last.1 == v - 1 { ranges[ranges.count - 1].1 = v } else { ranges.append((v, v)) }
        default: break
        }
    }
    func escape(_ x: UInt32) -> String { x <= 0xFFFF ? String(format: "\\u%04X", x) : String(format: "\\U%08X", x) }
    return "[" + ranges.map { $0.0 == $0.1 ? escape($0.0) : escape($0.0) + "-" + escape($0.1) }.joined() + "]"
}()

// MARK: - Cases

struct Case {
    var label: String
    var predicate: String
    var hand: String
    var handBindings: [SQLValue]
}

let cases: [Case] = [
    Case(
        label: "==", predicate: "name == '\(probes[0])'",
        hand: "SELECT id FROM person WHERE name = $1 ORDER BY id", handBindings: [.text(probes[0])]),
    Case(
        label: "range", predicate: "age >= 30 AND age < 32",
        hand: "SELECT id FROM person WHERE age >= $1 AND age < $2 ORDER BY id",
        handBindings: [.integer(30), .integer(32)]),
    Case(
        label: "BETWEEN", predicate: "age BETWEEN {30, 31}",
        hand: "SELECT id FROM person WHERE age BETWEEN $1 AND $2 ORDER BY id",
        handBindings: [.integer(30), .integer(31)]),
    Case(
        label: "IN list", predicate: "city IN {'Lyon', 'Oslo', 'Porto'}",
        hand: "SELECT id FROM person WHERE city IN ($1, $2, $3) ORDER BY id",
        handBindings: [.text("Lyon"), .text("Oslo"), .text("Porto")]),
    // On this data (no combining marks) a plain range finds the same rows: the cheapest form an
    // expert could write, though it ignores memory's combining-mark rule.
    Case(
        label: "BEGINSWITH (vs plain range)", predicate: "name BEGINSWITH 'name4242'",
        hand: "SELECT id FROM person WHERE name >= $1 AND name < $2 ORDER BY id",
        handBindings: [.text("name4242"), .text("name4243")]),
    // The exact hand-written form: an anchored regular expression with the look-ahead, whose prefix
    // the planner turns into an index range itself (the column's collation is "C").
    Case(
        label: "BEGINSWITH (vs exact regex)", predicate: "name BEGINSWITH 'name4242'",
        hand: "SELECT id FROM person WHERE name ~ $1 ORDER BY id",
        handBindings: [.text("^name4242(?!" + combiningMarkClass + ")")]),
    Case(
        label: "==[c] (folded column)", predicate: "name ==[c] '\(probes[0].uppercased())'",
        hand: "SELECT id FROM person WHERE \"name@c\" = $1 ORDER BY id", handBindings: [.text(probes[0])]),
    Case(
        label: "==[cd] (folded column)", predicate: "city ==[cd] 'SAO PAULO'",
        hand: "SELECT id FROM person WHERE \"city@cd\" = $1 ORDER BY id", handBindings: [.text("sao paulo")]),
    // Against the plain range again: on this data no folded city has a combining mark after "sao".
    Case(
        label: "BEGINSWITH[cd] (folded column, vs plain range)", predicate: "city BEGINSWITH[cd] 'são'",
        hand: "SELECT id FROM person WHERE \"city@cd\" >= $1 AND \"city@cd\" < $2 ORDER BY id",
        handBindings: [.text("sao"), .text("sap")]),
    Case(
        label: "ANY to-many", predicate: "ANY kids.age < 1",
        hand:
            "SELECT id FROM person AS p WHERE EXISTS (SELECT 1 FROM kid AS k WHERE k.parent_id = p.id AND k.age < $1) ORDER BY id",
        handBindings: [.integer(1)]),
    Case(
        label: "!= (keeps NULL)", predicate: "age != 30",
        hand: "SELECT id FROM person WHERE age <> $1 OR age IS NULL ORDER BY id", handBindings: [.integer(30)]),
    Case(
        label: "NOT < (keeps NULL)", predicate: "NOT age < 30",
        hand: "SELECT id FROM person WHERE age >= $1 OR age IS NULL ORDER BY id", handBindings: [.integer(30)]),
    Case(
        label: "== AND != (keeps NULL)", predicate: "age == 30 AND city != 'Lyon'",
        hand: "SELECT id FROM person WHERE age = $1 AND (city <> $2 OR city IS NULL) ORDER BY id",
        handBindings: [.integer(30), .text("Lyon")]),
    Case(
        label: "3-clause AND", predicate: "age >= 30 AND city == 'Lyon' AND name BEGINSWITH 'name1'",
        hand: "SELECT id FROM person WHERE age >= $1 AND city = $2 AND name >= $3 AND name < $4 ORDER BY id",
        handBindings: [.integer(30), .text("Lyon"), .text("name1"), .text("name2")]),
    Case(
        label: "(OR) AND", predicate: "(city == 'Lyon' OR city == 'Oslo') AND age < 5",
        hand: "SELECT id FROM person WHERE city IN ($1, $2) AND age < $3 ORDER BY id",
        handBindings: [.text("Lyon"), .text("Oslo"), .integer(5)]),
    Case(
        label: "OR of ANDs",
        predicate: "name == '\(probes[0])' OR name == '\(probes[1])' OR (age == 89 AND city == 'Nice')",
        hand: "SELECT id FROM person WHERE name IN ($1, $2) OR (age = $3 AND city = $4) ORDER BY id",
        handBindings: [.text(probes[0]), .text(probes[1]), .integer(89), .text("Nice")]),
]

// MARK: - Running

/// The ids of a result whose first column is the bigint key.
func ids(_ rows: [[SQLValue]]) -> [Int64] {
    rows.map { row in
        guard case .integer(let id)? = row.first else { fail("a result row without an integer id: \(row)") }
        return id
    }
}

/// Parse + lower + execute: everything from the predicate text to the ids.
func runSift(_ c: Case) -> (ids: [Int64], query: SQLQuery) {
    do {
        let query = try lowering.select(try PredicateSyntax.parse(c.predicate), source: c.predicate)
        return (ids(try db.execute(query)), query)
    } catch { fail("\(c.label): \(error)") }
}

func runHand(_ c: Case) -> [Int64] {
    do { return ids(try db.execute(c.hand, c.handBindings)) } catch { fail("\(c.label) (hand-written): \(error)") }
}

/// Index names (`sift_<table>_<column>`, as PostgresTables makes them) and their columns.
let indexColumns: [String: String] = {
    var names: [String: String] = [:]
    for (n, table) in tables.tables.enumerated() {
        for (i, column) in table.columns.enumerated() { names["sift_\(n)_\(i)"] = "\(table.name).\(column.name)" }
    }
    return names
}()

/// The plan's nodes, outermost first, without costs or aliases, index names replaced by their
/// columns: what decides the time, comparable between the two forms.
func plan(_ sql: String, _ bindings: [SQLValue]) -> String {
    guard let rows = try? db.execute("EXPLAIN (COSTS OFF) " + sql, bindings) else { return "?" }
    var nodes: [String] = []
    for row in rows {
        guard case .text(var line)? = row.first else { continue }
        line = line.trimmingCharacters(in: .whitespaces)
        if line.hasPrefix("->") { line = String(line.dropFirst(2)).trimmingCharacters(in: .whitespaces) }
        // Conditions and filters are the SQL's own; the node names say how the rows are found.
        if line.contains(": ") || line.hasPrefix("SubPlan") || line.hasPrefix("InitPlan") { continue }
        var words = line.split(separator: " ").map(String.init)
        // "Seq Scan on person t0": the alias differs between the two forms.
        if words.count >= 3, words[words.count - 3] == "on" { words.removeLast() }
        nodes.append(words.map { indexColumns[$0].map { "(\($0))" } ?? $0 }.joined(separator: " "))
    }
    return nodes.joined(separator: " › ")
}

print("")
print("Times per query, median of the rounds (each round the mean of a batch of interleaved queries).")
print("Sift = parse + lower + execute (PostgresConnection, bound parameters); hand = execute of the")
print("hand-written SQL on the same connection; both include the round trip and reading the ids.")
print("\"execute only\" runs Sift's SQL lowered beforehand: the price of the SQL itself. Parse + lower")
print("is given as timed within the runs and, after the slash, alone in a tight loop (warm caches).")
print("")
print(
    "| predicate | matches | Sift parse+lower µs (in runs / alone) | Sift ms | hand ms | Sift / hand | execute only ms | execute only / hand | plan (Sift; hand's where it differs) |"
)
print("|---|---|---|---|---|---|---|---|---|")
var ratios: [Double] = []
var executeRatios: [Double] = []
for c in cases where only.map({ c.label.contains($0) }) ?? true {
    // Warm-up: checks the two agree, warms the caches, and sizes a batch to ~30 ms of work so
    // that sub-millisecond queries are not measured one clock reading at a time.
    let w0 = now()
    let (siftIDs, query) = runSift(c)
    let w1 = now()
    let handIDs = runHand(c)
    let w2 = now()
    guard siftIDs == handIDs else {
        fail("\(c.label): Sift found \(siftIDs.count) rows, hand-written SQL \(handIDs.count)\n  \(query.sql)")
    }
    let slowest = Double(max(w1 - w0, w2 - w1, 1))
    let batch = max(1, min(200, Int(30e6 / slowest)))

    var siftT: [Double] = []
    var handT: [Double] = []
    var lowerT: [Double] = []
    var executeT: [Double] = []
    for round in 0..<rounds {
        var sift: UInt64 = 0
        var hand: UInt64 = 0
        var lower: UInt64 = 0
        var execute: UInt64 = 0
        let measurements: [() -> Void] = [
            {
                let t0 = now()
                let q: SQLQuery
                do { q = try lowering.select(try PredicateSyntax.parse(c.predicate), source: c.predicate) } catch {
                    fail("\(c.label): \(error)")
                }
                let t1 = now()
                do { consume(ids(try db.execute(q)).count) } catch { fail("\(c.label): \(error)") }
                sift += now() - t0
                lower += t1 - t0
            },
            {
                let t = now()
                consume(runHand(c).count)
                hand += now() - t
            },
            {
                let t = now()
                do { consume(ids(try db.execute(query)).count) } catch { fail("\(c.label): \(error)") }
                execute += now() - t
            },
        ]
        for i in 0..<batch {
            // Rotate which goes first, so none always runs on another's warm cache.
            for k in 0..<measurements.count { measurements[(round + i + k) % measurements.count]() }
        }
        siftT.append(Double(sift) / Double(batch) / 1e6)
        handT.append(Double(hand) / Double(batch) / 1e6)
        lowerT.append(Double(lower) / Double(batch) / 1e3)
        executeT.append(Double(execute) / Double(batch) / 1e6)
    }
    let s = median(siftT)
    let h = median(handT)
    let l = median(lowerT)
    let e = median(executeT)
    ratios.append(s / h)
    executeRatios.append(e / h)
    var alone: [Double] = []
    for _ in 0..<rounds {
        let t = now()
        for _ in 0..<200 {
            do {
                consume(try lowering.select(try PredicateSyntax.parse(c.predicate), source: c.predicate).bindings.count)
            } catch { fail("\(c.label): \(error)") }
        }
        alone.append(Double(now() - t) / 200 / 1e3)
    }
    let siftPlan = plan(query.sql, query.bindings)
    let handPlan = plan(c.hand, c.handBindings)
    func f(_ x: Double, _ d: Int) -> String { String(format: "%.\(d)f", x) }
    print(
        "| \(c.label) | \(siftIDs.count) | \(f(l, 1)) / \(f(median(alone), 1)) | \(f(s, 3)) | \(f(h, 3)) | \(f(s / h, 2))× | \(f(e, 3)) | \(f(e / h, 2))× | \(siftPlan)\(siftPlan == handPlan ? "" : "; hand: " + handPlan) |"
    )
}
if !ratios.isEmpty {
    func geometricMean(_ xs: [Double]) -> String {
        String(format: "%.3f", exp(xs.map { log($0) }.reduce(0, +) / Double(xs.count)))
    }
    print("")
    print(
        "geometric mean of Sift / hand over \(ratios.count) cases: \(geometricMean(ratios))×, worst "
            + "\(String(format: "%.2f", ratios.max()!))× (target ≤ 1.1×); execute only: \(geometricMean(executeRatios))×, worst "
            + "\(String(format: "%.2f", executeRatios.max()!))×")
}
cleanup()
db.close()
