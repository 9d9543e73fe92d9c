// Comparisons decided by memory on the row's document (`sift_document`): which rejections turn
// into the call, what text and bindings it carries, what stays rejected, and how statements too
// deep for SQLite's parser are lowered again. (SiftSQLiteTests runs these calls on real rows;
// the eval corpus and the differential test compare them with memory.)

import Foundation
import SiftEvaluation
import SiftSyntax
import Testing

@testable import SiftSQL

@Suite struct DocumentComparisonTests {
    static func schema(document: Bool) -> Schema {
        try! Schema(entities: [
            Schema.Entity(
                name: "Record", table: "record",
                attributes: [
                    Schema.Attribute(name: "name", type: .any),
                    Schema.Attribute(name: "born", type: .date),
                ],
                relationships: [
                    Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                    Schema.Relationship(name: "kids", toMany: "Kid", foreignKey: "owner", orderColumn: "id"),
                ], open: true, documentColumn: document ? "Z_DOC" : nil),
            Schema.Entity(
                name: "Address", table: "address", attributes: [Schema.Attribute(name: "city", type: .any)], open: true),
            Schema.Entity(
                name: "Kid", table: "kid", attributes: [Schema.Attribute(name: "age", type: .any)], open: true),
        ])
    }
    /// The comparisons' own SQL, without the row guard around it (see `theGuardDecidesWholeRows`).
    static let lowering = {
        var l = try! SQLLowering(schema: schema(document: true), entity: "Record")
        l.guardsRows = false
        return l
    }()

    static func lower(
        _ format: String, _ arguments: [Any?] = [], variables: [String: LiteralValue] = [:],
        using lowering: SQLLowering = lowering
    ) throws -> SQLQuery {
        try lowering.select(
            try PredicateSyntax.parse(format, arguments: arguments), source: format, variables: variables)
    }

    @Test func aDictionarysCountGoesToTheDocument() throws {
        let q = try Self.lower("name == 'x' AND SELF.@count == 2")
        #expect(q.sql.contains(#"WHERE (t0."name" = ?) AND (sift_document(?, t0."Z_DOC") = 1) ORDER"#), "\(q.sql)")
        #expect(q.bindings == [.text("x"), .text("@count == 2")])  // the canonical form of SELF.@count == 2
        // Negated: the rows where memory says false; NULL (memory raises) is neither.
        let n = try Self.lower("NOT address.@count == 0")
        #expect(n.sql.contains(#"WHERE sift_document(?, t0."Z_DOC") = 0 ORDER"#), "\(n.sql)")
        #expect(n.bindings == [.text("address.@count == 0")])
    }

    /// Guarded (the default), memory may raise where a comparison is decided on the document, so
    /// memory decides the whole row (strict or lenient), the predicate's canonical text and all.
    @Test func theGuardDecidesWholeRows() throws {
        let guarded = try SQLLowering(schema: Self.schema(document: true), entity: "Record")
        for lenient in [false, true] {
            // `name == 'x'` cannot raise, and memory stops there where it is false: SQL discards
            // those rows before the guard (the pre-filter).
            let q = try guarded.select(try PredicateSyntax.parse("name == 'x' AND SELF.@count == 2"), lenient: lenient)
            #expect(
                q.sql.contains(
                    #"WHERE (t0."name" = ?) AND sift_guard(?, t0."Z_DOC", t0."id", \#(lenient ? 1 : 0)) = 1 ORDER"#),
                "\(q.sql)")
            #expect(q.bindings == [.text("x"), .text(#"name == "x" AND @count == 2"#)])
            // The part memory decides first: strict, it may raise on any row, so nothing comes before
            // the guard; lenient, a raising part is false, so `name == 'x'` still discards rows.
            let first = try guarded.select(
                try PredicateSyntax.parse("SELF.@count == 2 AND name == 'x'"), lenient: lenient)
            let pre = lenient ? #"(t0."name" = ?) AND "# : ""
            #expect(first.sql.contains(#"WHERE \#(pre)sift_guard(?, t0."Z_DOC", t0."id", "#), "\(first.sql)")
        }
        // A part whose risk is a condition on the row: kept where the condition holds (an earlier
        // part may raise there, strict), discarded by SQL where it is false elsewhere.
        let conditioned = try guarded.select(try PredicateSyntax.parse("name > 3 AND SELF.@count == 2"))
        #expect(
            conditioned.sql.contains(
                #"WHERE ((t0."name" > ?) OR (typeof(t0."name") IN ('text', 'blob'))) AND sift_guard("#),
            "\(conditioned.sql)")
        // Comparisons that cannot raise keep their SQL alone.
        let plain = try guarded.select(try PredicateSyntax.parse("name == 'x'"))
        #expect(!plain.sql.contains("sift_guard"), "\(plain.sql)")
        // Ordering a value of any kind: memory decides only the rows whose kind it refuses.
        let ordered = try guarded.select(try PredicateSyntax.parse("name > 3"))
        #expect(
            ordered.sql.contains(#"CASE WHEN (typeof(t0."name") IN ('text', 'blob')) THEN sift_guard("#),
            "\(ordered.sql)")
    }

    @Test func formsTheTablesExpressKeepTheirSQL() throws {
        for p in [
            "name == 'x'", "address.city BEGINSWITH 'L'", "ANY kids.age > 3", "kids[FIRST].age == 2", "kids.@count > 1",
        ] {
            let q = try Self.lower(p)
            #expect(!q.sql.contains("sift_document"), "\(p): \(q.sql)")
        }
    }

    @Test func eachKindOfFormTheDocumentDecides() throws {
        let forms = [
            "address CONTAINS 'Lyon'", "'Lyon' IN address", "kids[FIRST] == nil", "kids[LAST] != nil",
            "kids.@unionOfArrays.toys.@count > 1", "address == address",
            "ANY SUBQUERY(kids, $k, $k.age > 3).age == 4", "SUBQUERY(kids, $k, $k.age > 3).age == kids.age",
            "name.length == 3", "($v := 2) == 2",
        ]
        for p in forms {
            let q = try Self.lower(p)
            let canonical = try PredicateSyntax.parse(p).description
            #expect(q.sql.contains(#"sift_document(?, t0."Z_DOC") = 1"#), "\(p): \(q.sql)")
            #expect(q.bindings.contains(.text(canonical)), "\(p): \(q.bindings)")
        }
    }

    @Test func variablesAreSubstitutedAndDictionariesTravelApart() throws {
        let v = try Self.lower("address.@count == $n", variables: ["n": .integer(2)])
        #expect(v.bindings == [.text("address.@count == 2")])
        let d = try Self.lower("SELF == %@", [["a": 1]])
        #expect(d.sql.contains(#"sift_document(?, t0."Z_DOC", ?) = 1"#), "\(d.sql)")
        #expect(d.bindings.first == .text("SELF == $sift_1"))
        guard case .blob(let bytes)? = d.bindings.last else {
            Issue.record("no variables: \(d.bindings)")
            return
        }
        #expect(try ValueCodec.decode(bytes) == .dictionary(["sift_1": .dictionary(["a": .integer(1)])]))
    }

    @Test func whatMemoryRejectsEverywhereStaysRejected() throws {
        let cases: [(String, SQLLoweringError.Kind)] = [
            ("address.@count == $unbound", .unboundVariable),
            ("random() < 1", .unsupported),
            ("sqrt:('a') == 1", .unsupported),
            ("born > 5", .typeMismatch),
            ("ANY name == 'x'", .notACollection),
        ]
        for (p, kind) in cases {
            #expect(throws: SQLLoweringError.self, "\(p)") { try Self.lower(p) }
            do { _ = try Self.lower(p) } catch let e as SQLLoweringError { #expect(e.kind == kind, "\(p): \(e)") }
        }
        // Inferred types: == and != between a date and a number are memory's false and true.
        #expect(try Self.lower("born == 0").sql.contains("sift_call"))
    }

    @Test func withoutADocumentOrInAnotherDialectTheyAreRejected() throws {
        let plain = try SQLLowering(schema: Self.schema(document: false), entity: "Record")
        #expect(throws: SQLLoweringError.self) { try Self.lower("SELF.@count == 2", using: plain) }
        let postgres = try SQLLowering(
            schema: Self.schema(document: true), entity: "Record", dialect: PostgreSQLDialect())
        do {
            _ = try Self.lower("address.@count == 2", using: postgres)
            Issue.record("lowered for PostgreSQL")
        } catch let e as SQLLoweringError {
            #expect(e.message.contains("in this dialect"), "\(e)")
        }
    }

    @Test func nestingEstimate() {
        func cases(_ n: Int) -> String {
            String(repeating: "CASE WHEN x THEN ", count: n) + "1" + String(repeating: " END", count: n)
        }
        func parens(_ n: Int) -> String { String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n) }
        #expect(!SQLNesting.exceeds(cases(10)))
        #expect(SQLNesting.exceeds(cases(11)))
        #expect(!SQLNesting.exceeds(parens(17)))
        #expect(SQLNesting.exceeds(parens(18)))
        // Closed constructs do not add up; quoted identifiers are not read.
        #expect(!SQLNesting.exceeds(Array(repeating: parens(10), count: 20).joined(separator: " AND ")))
        #expect(!SQLNesting.exceeds("\"" + parens(40) + "\" = 1"))
        #expect(SQLNesting.exceeds(String(repeating: "(SELECT ", count: 10) + "1" + String(repeating: ")", count: 10)))
    }

    @Test func statementsTooDeepForTheParserHandDeepPartsToMemory() throws {
        let ternary =
            String(repeating: "TERNARY(name == 'a', ", count: 200) + "1" + String(repeating: ", 2)", count: 200)
            + " > 0"
        let q = try Self.lower("name == 'x' AND " + ternary)
        #expect(q.sql.contains(#"(t0."name" = ?) AND (sift_document(?, t0."Z_DOC") = 1)"#), "\(q.sql.prefix(200))")
        #expect(!SQLNesting.exceeds(q.sql))
        // AND/OR hundreds of levels deep: parts of it, bottom-up, each within the limit.
        var s = "name == 'z'"
        for i in 0..<300 { s = "name == '\(i)' " + (i % 2 == 0 ? "OR" : "AND") + " (" + s + ")" }
        let deep = try Self.lower(s)
        #expect(deep.sql.contains("sift_document"))
        #expect(!SQLNesting.exceeds(deep.sql))
        // Without a document, the deep SQL is what it was.
        let plain = try SQLLowering(schema: Self.schema(document: false), entity: "Record")
        #expect(SQLNesting.exceeds(try Self.lower(s, using: plain).sql))
    }
}
