// `sift_document` on a real database: memory's answer on each row's stored document, NULL where
// memory raises or there is no document, the predicate parsed once per statement, variables
// passed apart, and lowered statements (including ones too deep for SQLite's parser) selecting
// exactly the rows memory selects.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax
import Testing

@Suite struct DocumentFunctionTests {
    static let documents: [Value] = [
        .dictionary([
            "name": .string("Ann"), "address": .dictionary(["city": .string("Lyon"), "zip": .integer(69001)]),
            "kids": .array([.null, .dictionary(["age": .integer(3)])]),
        ]),
        .dictionary(["name": .string("Bob"), "address": .dictionary([:]), "kids": .array([])]),
        .dictionary([
            "name": .string("Cy"),
            "kids": .array([.dictionary(["age": .integer(9), "toys": .array([.string("x"), .string("y")])])]),
        ]),
        .dictionary(["name": .integer(5)]),
    ]

    /// A table holding only each row's document (and its name, for a plain SQL clause).
    static func database() throws -> SQLiteConnection {
        let db = try SQLiteConnection()
        try db.execute(#"CREATE TABLE record (id INTEGER PRIMARY KEY, name, "Z_DOC" BLOB)"#)
        for (i, d) in documents.enumerated() {
            guard case .dictionary(let m) = d else { continue }
            let name: SQLValue =
                switch m["name"] {
                case .string(let s)?: .text(s)
                case .integer(let n)?: .integer(n)
                default: .null
                }
            _ = try db.query(
                #"INSERT INTO record (id, name, "Z_DOC") VALUES (?, ?, ?)"#,
                [.integer(Int64(i)), name, .blob(ValueCodec.encode(d))])
        }
        _ = try db.query(#"INSERT INTO record (id, name, "Z_DOC") VALUES (99, 'none', NULL)"#)
        return db
    }

    @Test func answersAsMemoryDoesRowByRow() throws {
        let db = try Self.database()
        let rows = try db.query(
            #"SELECT id, sift_document('address.@count == 2', "Z_DOC"), sift_document('name > 1', "Z_DOC") FROM record ORDER BY id"#
        )
        #expect(rows.map { $0[1] } == [.integer(1), .integer(0), .integer(0), .integer(0), .null])
        // `name > 1` raises on the string names: NULL there, and for the row without a document.
        #expect(rows.map { $0[2] } == [.null, .null, .null, .integer(1), .null])
        // Variables the text cannot spell travel as a dictionary in the same form.
        let variables = ValueCodec.encode(.dictionary(["d": .dictionary([:])]))
        let withVariables = try db.query(
            #"SELECT id FROM record WHERE sift_document('address == $d', "Z_DOC", ?) = 1"#, [.blob(variables)])
        #expect(withVariables == [[.integer(1)]])
    }

    @Test func aPredicateThatDoesNotParseIsAnError() throws {
        let db = try Self.database()
        #expect(throws: SQLiteError.self) { try db.query(#"SELECT sift_document('name ==', "Z_DOC") FROM record"#) }
        #expect(throws: SQLiteError.self) { try db.query(#"SELECT sift_document('name == 1') FROM record"#) }
    }

    @Test func unreadableDocumentsAndVariablesAreErrors() throws {
        let db = try Self.database()
        // A damaged document is an error, not a row read as nil (which `name == nil` would select).
        _ = try db.query(#"UPDATE record SET "Z_DOC" = ? WHERE id = 1"#, [.blob([8, 1, 0])])
        #expect(throws: SQLiteError.self) {
            try db.query(#"SELECT id FROM record WHERE sift_document('name == nil', "Z_DOC") = 1"#)
        }
        let fine = try db.query(#"SELECT id FROM record WHERE id <> 1 AND sift_document('name == "Ann"', "Z_DOC") = 1"#)
        #expect(fine == [[.integer(0)]])
        // Variables that are not a dictionary in the codec's form.
        for bad in [ValueCodec.encode(.array([])), [0xFF]] {
            #expect(throws: SQLiteError.self) {
                try db.query(#"SELECT sift_document('name == $d', "Z_DOC", ?) FROM record WHERE id = 0"#, [.blob(bad)])
            }
        }
    }

    @Test func loweredStatementsSelectMemorysRows() throws {
        let db = try Self.database()
        let schema = try Schema(entities: [
            // Not open: the keys it does not declare are in the documents only.
            Schema.Entity(
                name: "Record", table: "record", attributes: [Schema.Attribute(name: "name", type: .any)],
                documentColumn: "Z_DOC")
        ])
        let lowering = try SQLLowering(schema: schema, entity: "Record")
        var deep = "name == 'z'"
        for i in 0..<300 { deep = "name == '\(i)' " + (i % 2 == 0 ? "OR" : "AND") + " (" + deep + ")" }
        let ternary =
            String(repeating: "TERNARY(name == 'Ann', ", count: 150) + "1" + String(repeating: ", 2)", count: 150)
            + " == 1"
        let predicates = [
            "SELF.@count == 3", "address CONTAINS 'Lyon'", "'Lyon' IN address", "kids[FIRST] == nil",
            "NOT kids[FIRST] == nil",
            "kids.@unionOfArrays.toys.@count == 2", "ANY kids.@distinctUnionOfArrays.toys == 'y'",
            "name == 'Ann' OR address == nil",
            "ANY SUBQUERY(kids, $k, $k.age > 2).age == 9", deep, ternary, "NOT (" + ternary + ")",
        ]
        for text in predicates {
            let syntax = try PredicateSyntax.parse(text)
            let q = try lowering.select(syntax, source: text)
            func selected() throws -> [Int] {
                try db.query(q).compactMap { row -> Int? in
                    if case .integer(let i) = row[0], i != 99 { Int(i) } else { nil }
                }
            }
            let predicate = SiftPredicate(syntax, source: text)
            var expected: [Int] = []
            var raised: EvaluationError?
            for (i, d) in Self.documents.enumerated() {
                do throws(EvaluationError) {
                    if try predicate.evaluate(with: d) { expected.append(i) }
                } catch { raised = raised ?? error }
            }
            guard let raised else {
                #expect(try selected() == expected, "\(text.prefix(80)): memory \(expected)")
                continue
            }
            // Memory raises on a record: so does the statement, with memory's error (the row guard).
            let error = #expect(throws: SQLiteError.self, "\(text.prefix(80))") { try selected() }
            #expect(error?.raised?.error.id == raised.id, "\(text.prefix(80)): \(String(describing: error))")
        }
    }
}
