// A typed schema (the shape of a hand-made database or a store's model, not JSON's) against the
// test server: rows with the edge values where PostgreSQL differs from memory (Int64 limits and
// overflow, division by zero and by -1, integers beyond 2^53 against doubles, booleans against
// numbers, dates as seconds, text outside ASCII and with combining marks, [c]/[d] through the
// folded copies, NULLs under negation), loaded with PostgresTables, and a list of predicates each
// lowered with PostgreSQLDialect and run there. Every predicate must select exactly the rows on
// which memory (SiftEvaluation, over the same rows as dictionaries) says true, compared on the
// rows where memory does not raise.

import Foundation
import SiftEvaluation
import SiftPostgres
import SiftSQL
import SiftSyntax
import Testing

@Suite struct TypedSchemaTests {
    static let schema = try! Schema(entities: [
        Schema.Entity(
            name: "Person", table: "person",
            attributes: [
                Schema.Attribute(name: "name", type: .string),
                Schema.Attribute(name: "age", type: .integer),
                Schema.Attribute(name: "score", type: .double),
                Schema.Attribute(name: "flag", type: .boolean),
                Schema.Attribute(name: "born", type: .date),
            ],
            relationships: [
                Schema.Relationship(name: "kids", toMany: "Kid", foreignKey: "parent", orderColumn: "id"),
                Schema.Relationship(
                    name: "tags", values: .init(table: "tag", owner: "owner", type: .string), orderColumn: "id"),
            ]),
        Schema.Entity(name: "Kid", table: "kid", attributes: [Schema.Attribute(name: "age", type: .integer)]),
    ])

    /// One person: its columns, kids' ages and tags.
    struct Row {
        var name: String?, age: Int64?, score: Double?, flag: Bool?, born: Date?
        var kids: [Int64?] = [], tags: [String] = []
    }

    static let rows: [Row] = [
        Row(
            name: "Ann", age: 41, score: 2.5, flag: true, born: Date(timeIntervalSinceReferenceDate: 0), kids: [3, 12],
            tags: ["a", "b"]),
        Row(
            name: "José", age: Int64.max, score: 9_007_199_254_740_992, flag: false,
            born: Date(timeIntervalSinceReferenceDate: 86400.5), kids: [Int64.max, 1]),
        Row(name: "jose", age: Int64.min, score: -0.0, flag: nil, born: nil, kids: [Int64.min, -1], tags: ["JOSÉ"]),
        Row(
            name: "e\u{301}mile", age: 9_007_199_254_740_993, score: 1e300, flag: true,
            born: Date(timeIntervalSinceReferenceDate: -1e9)),
        Row(
            name: "q\u{301}ed", age: -1, score: nil, flag: false, born: Date(timeIntervalSinceReferenceDate: 1e9),
            tags: ["q", "Q\u{301}"]),
        Row(name: "Straße", age: 0, score: 0.1, flag: true, born: nil, kids: [nil]),
        Row(name: "ÅNGSTRÖM", age: 2, score: 3, flag: nil, born: Date(timeIntervalSinceReferenceDate: 42)),
        Row(name: "a%b_c", age: nil, score: 2, flag: nil, born: nil),
        Row(
            name: nil, age: 3, score: -7.25, flag: true, born: Date(timeIntervalSinceReferenceDate: 42.25),
            kids: [5, 5, 5]),
        Row(name: "zoë", age: 9_007_199_254_740_992, score: nil, flag: false, born: nil, tags: ["zoe", "ZOË", "zoë"]),
        Row(name: "", age: 30, score: 30, flag: nil, born: nil),
        Row(name: "Ω ω", age: -9_007_199_254_740_993, score: -2.5, flag: false, born: nil, kids: [40, 38]),
    ]

    static let predicates = [
        // Integers near the limits: memory wraps, PostgreSQL would raise without the wrapping forms.
        "age + 1 < 0", "age - 1 > 0", "age * 2 == -2", "age * 3 > 10", "-age == age", "age / 0 == 0", "age / -1 < 0",
        "age / 2 == 1", "kids.@sum.age < 0", "kids.@sum.age == 16", "SUBQUERY(kids, $k, $k.age + 1 < 0).@count > 0",
        // Integers against doubles, past 2^53 too; booleans against numbers.
        "age == 9007199254740992.0", "age < 9007199254740993.0", "age > 2.5", "age <= -2.5", "age IN {2.0, 3.5, 41}",
        "age BETWEEN {1.5, 41.5}", "score == 9007199254740993", "score < 9007199254740993", "score > 2", "score == 2",
        "flag == 1", "flag == YES", "flag != NO", "flag == 0.0", "flag < 1",
        // Dates as seconds.
        "born > %@", "born == %@", "born BETWEEN {%@, %@}", "born != nil",
        // Text: scalar order, combining marks, LIKE, folded copies.
        "name < 'a'", "name >= 'Z'", "name < 'é'", "name BEGINSWITH 'e'", "name BEGINSWITH 'q'", "name CONTAINS 'e'",
        "name ENDSWITH 'e'", "name LIKE '?mile'", "name LIKE '*\\\\%*'", "name LIKE 'a%b_c'", "name LIKE '*_*'",
        "name ==[c] 'JOSÉ'", "name ==[cd] 'jose'", "name BEGINSWITH[cd] 'E'", "name CONTAINS[c] 'SS'",
        "name ==[c] 'strasse'",
        "name <[c] 'b'", "name ENDSWITH[d] 'm'", "name LIKE[cd] '*ngstrom'", "ANY tags ==[cd] 'zoe'",
        "ANY tags BEGINSWITH[c] 'q'",
        "name == ''", "name BEGINSWITH ''", "name != 'Ann'", "NOT name CONTAINS 'o'", "NOT (name < 'b')",
        // NULLs, quantifiers, counts.
        "name == nil", "NOT (age > 0)", "NOT (score > 0)", "ALL kids.age > 2", "NONE kids.age == nil",
        "ANY kids.age == nil",
        "kids.@count == 0", "tags.@count > 1", "kids[FIRST].age > 3", "tags[LAST] == 'b'", "kids.@max.age > 10",
        "kids.@min.age < 0",
        "kids.@avg.age > 4", "SUBQUERY(kids, $k, $k.age > 4).@count >= 1", "'a' IN tags", "tags CONTAINS 'zoë'",
        "(age > 0 OR name == nil) AND NOT (flag == NO)", "name IN {'Ann', 'zoë', nil}",
    ]

    static let dateArguments: [Date] = [
        Date(timeIntervalSinceReferenceDate: 42), Date(timeIntervalSinceReferenceDate: 0),
        Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1000),
    ]

    func value(_ r: Row) -> Value {
        func v<T>(_ x: T?, _ f: (T) -> Value) -> Value { x.map(f) ?? .null }
        return .dictionary([
            "name": v(r.name) { .string($0) }, "age": v(r.age) { .integer($0) }, "score": v(r.score) { .double($0) },
            "flag": v(r.flag) { .bool($0) }, "born": v(r.born) { .date($0) },
            "kids": .array(r.kids.map { k in .dictionary(["age": k.map { .integer($0) } ?? .null]) }),
            "tags": .array(r.tags.map { .string($0) }),
        ])
    }

    @Test func everyPredicateSelectsWhatMemorySelects() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        let tables = try PostgresTables(schema: Self.schema)
        try tables.create(on: db)
        func table(_ name: String) throws -> PostgresTables.Table {
            try #require(tables.tables.first { $0.source == name })
        }
        // Source columns in creation order: person (id, name, age, score, flag, born), kid (id, parent, age),
        // tag (id, owner, value) — checked, so a change of order fails here rather than loading garbage.
        #expect(try table("person").columns.compactMap(\.source) == ["id", "name", "age", "score", "flag", "born"])
        #expect(try table("kid").columns.compactMap(\.source) == ["id", "parent", "age"])
        #expect(try table("tag").columns.compactMap(\.source) == ["owner", "id", "value"])
        var people: [[SQLValue]] = []
        var kids: [[SQLValue]] = []
        var tags: [[SQLValue]] = []
        for (i, r) in Self.rows.enumerated() {
            let id = Int64(i + 1)
            people.append([
                .integer(id), r.name.map { .text($0.precomposedStringWithCanonicalMapping) } ?? .null,
                r.age.map(SQLValue.integer) ?? .null, r.score.map(SQLValue.double) ?? .null,
                r.flag.map { .integer($0 ? 1 : 0) } ?? .null,
                r.born.map { .double($0.timeIntervalSinceReferenceDate) } ?? .null,
            ])
            for k in r.kids {
                kids.append([.integer(Int64(kids.count + 1)), .integer(id), k.map(SQLValue.integer) ?? .null])
            }
            for t in r.tags {
                tags.append([
                    .integer(id), .integer(Int64(tags.count + 1)), .text(t.precomposedStringWithCanonicalMapping),
                ])
            }
        }
        try tables.load(try table("person"), rows: people, on: db)
        try tables.load(try table("kid"), rows: kids, on: db)
        try tables.load(try table("tag"), rows: tags, on: db)
        let lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect())
        let values = Self.rows.map(value)
        var failures: [String] = []
        var compared = 0
        for format in Self.predicates {
            let arguments: [Any?] = Self.dateArguments.prefix(format.components(separatedBy: "%@").count - 1).map { $0 }
            let syntax = try PredicateSyntax.parse(format, arguments: arguments)
            let memory = try SiftPredicate(format: format, arguments: arguments)
            var expected = Set<Int64>()
            var raised = Set<Int64>()
            for (i, v) in values.enumerated() {
                do { if try memory.evaluate(with: v) { expected.insert(Int64(i + 1)) } } catch {
                    raised.insert(Int64(i + 1))
                }
            }
            let q: SQLQuery
            do { q = try lowering.select(syntax, source: format) } catch {
                failures.append("\(format): not lowered: \(error)")
                continue
            }
            let rows: [[SQLValue]]
            do { rows = try db.execute(q) } catch {
                failures.append("\(format): PostgreSQL failed: \(error)\n\(q)")
                continue
            }
            let selected = Set(rows.compactMap { if case .integer(let id) = $0.first { id } else { nil } })
            compared += 1
            if selected.subtracting(raised) != expected {
                failures.append(
                    "\(format): memory \(expected.sorted()) (raised on \(raised.sorted())), PostgreSQL \(selected.sorted())\n\(q)"
                )
            }
        }
        #expect(
            failures.isEmpty, "\(failures.count) of \(Self.predicates.count):\n\(failures.joined(separator: "\n\n"))")
        #expect(compared == Self.predicates.count)
    }
}
