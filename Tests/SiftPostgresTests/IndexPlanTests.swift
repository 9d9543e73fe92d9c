// Proof that the SQL the PostgreSQL dialect writes lets the server use its indexes. Exact
// semantics cost checks (the combining-mark rule of BEGINSWITH, NULL handling, `COLLATE "C"` on
// bounds, folded copies for `[c]`), and any of them written the wrong way round would quietly turn
// an index lookup into a full scan while every answer stayed right; only the plan shows it. So
// each indexable form is lowered against tables PostgresTables builds and analyzes, the server is
// asked for its plan with the very bindings of the query (no `enable_seqscan = off`: the data is
// selective, and the planner must choose the index on its own), and the rows are checked against
// a plain Swift evaluation of the same rows.

import SiftPostgres
import SiftSQL
import SiftSyntax
import Testing

@Suite struct IndexPlanTests {
    /// One row of the test table, as Swift holds it.
    struct Person {
        var id: Int64
        var name: String
        var city: String?
        var age: Int64?
    }

    /// 4,000 people: unique names, 397 cities (every tenth NULL), ages spread over 0…999 (every
    /// thirteenth NULL), so each predicate below selects a handful of rows.
    static let people: [Person] = (0..<4000).map { i in
        let digits = String(i)
        return Person(
            id: Int64(i), name: "Name-" + String(repeating: "0", count: 5 - digits.count) + digits,
            city: i % 10 == 9 ? nil : "City \(i % 397)", age: i % 13 == 0 ? nil : Int64((i * 7919) % 1000))
    }

    /// A predicate, the column whose index its plan must use, and the rows it selects.
    struct Case: CustomTestStringConvertible, Sendable {
        var predicate: String
        var column: String
        var expected: @Sendable (Person) -> Bool
        var testDescription: String { predicate }
    }

    static let cases: [Case] = [
        Case(predicate: "name == 'Name-03141'", column: "name") { $0.name == "Name-03141" },
        Case(predicate: "age > 500 AND age < 503", column: "age") { $0.age.map { $0 > 500 && $0 < 503 } ?? false },
        Case(predicate: "age BETWEEN {501, 502}", column: "age") { $0.age.map { (501...502).contains($0) } ?? false },
        Case(predicate: "city IN {'City 5', 'City 17', 'City 300'}", column: "city") {
            $0.city.map { ["City 5", "City 17", "City 300"].contains($0) } ?? false
        },
        Case(predicate: "name BEGINSWITH 'Name-0042'", column: "name") { $0.name.hasPrefix("Name-0042") },
        // Lowered to the writer-kept folded copy, "name@c", whose own index must serve it.
        Case(predicate: "name ==[c] 'NAME-01234'", column: "name@c") { $0.name.lowercased() == "name-01234" },
    ]

    @Test(arguments: cases)
    func indexableFormsUseTheirIndex(_ c: Case) throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        let schema = try Schema(
            json: """
                {"entities": [{"name": "Person", "table": "person",
                  "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string"},
                                 {"name": "age", "type": "integer"}]}]}
                """)
        let tables = try PostgresTables(schema: schema)
        try tables.create(on: db)
        let table = try #require(tables.tables.first { $0.name == "person" })
        let sources = table.columns.compactMap(\.source)
        let rows: [[SQLValue]] = Self.people.map { p in
            sources.map { column -> SQLValue in
                switch column {
                case "id": return .integer(p.id)
                case "name": return .text(p.name)
                case "city": return p.city.map(SQLValue.text) ?? .null
                case "age": return p.age.map(SQLValue.integer) ?? .null
                default: return .null
                }
            }
        }
        try tables.load(table, rows: rows, on: db)
        try db.executeScript("ANALYZE person")

        let lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect())
        let query = try lowering.select(try PredicateSyntax.parse(c.predicate), source: c.predicate)

        // The index PostgresTables made on the column: sift_<table>_<column position>.
        let tableNumber = try #require(tables.tables.firstIndex(of: table))
        let columnNumber = try #require(table.columns.firstIndex { $0.name == c.column })
        let index = "sift_\(tableNumber)_\(columnNumber)"

        let plan = try db.execute("EXPLAIN (COSTS OFF) " + query.sql, query.bindings).compactMap { row -> String? in
            if case .text(let line)? = row.first { return line }
            return nil
        }
        // A scan of the index with an Index Cond right under it: a lookup, not a walk of the whole index.
        let scans = plan.indices.filter { n in
            let line = plan[n]
            return ["Index Scan", "Index Only Scan", "Bitmap Index Scan"].contains { line.contains($0) }
                && line.split(separator: " ").contains { $0 == index }
                && n + 1 < plan.count && plan[n + 1].contains("Index Cond:")
        }
        let shown = plan.joined(separator: "\n")
        #expect(!scans.isEmpty, "no index scan on \(index) (\(c.column)) for \(query.sql):\n\(shown)")
        #expect(!plan.contains { $0.contains("Seq Scan") }, "a sequential scan for \(query.sql):\n\(shown)")

        let expected = Self.people.filter(c.expected).map { SQLValue.integer($0.id) }
        #expect(!expected.isEmpty && expected.count < 50, "the data must make \(c.predicate) selective")
        #expect(try db.execute(query).map { $0.first ?? .null } == expected)
    }
}
