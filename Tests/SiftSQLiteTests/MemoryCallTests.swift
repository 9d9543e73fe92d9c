// `sift_call` and `sift_collect`, the evaluator called from SQL: comparisons made by memory
// (`compare:` selectors) with its answers and NULL where it raises, lists carried as the
// `ValueCodec` BLOB of an array in both directions, NaN kept apart from NULL, and unions.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax
import Testing

@Suite struct MemoryCallTests {
    private func one(_ db: SQLiteConnection, _ sql: String, _ bindings: [SQLValue] = []) throws -> SQLValue {
        try #require(try db.query(sql, bindings).first?.first)
    }

    @Test func comparisonSelectorsRoundTrip() throws {
        for op in ComparisonOperator.allCases {
            for raw: UInt8 in [0, 1, 3, 8] {
                let selector = SQLFunctions.comparisonSelector(op, ComparisonOptions(rawValue: raw))
                let parsed = try #require(SQLFunctions.comparison(selector), "\(selector)")
                #expect(parsed.0 == op && parsed.1.rawValue == raw)
            }
        }
        #expect(SQLFunctions.comparison("sqrt:") == nil)
        #expect(SQLFunctions.comparison("compare:x:==") == nil)
    }

    @Test func memoryComparesWhatSQLCannotType() throws {
        let db = try SQLiteConnection()
        let call = "SELECT sift_call(?, ?, ?, ?)"
        // A date (seconds since 1970) equals no number; memory raises on ordering it: NULL.
        #expect(try one(db, call, [.text("compare:0:=="), .text("uv"), .double(5), .integer(5)]) == .integer(0))
        #expect(try one(db, call, [.text("compare:0:!="), .text("uv"), .double(5), .integer(5)]) == .integer(1))
        #expect(try one(db, call, [.text("compare:0:>"), .text("uv"), .double(5), .integer(2)]) == .null)
        // Options reach memory: [c] is 1.
        #expect(try one(db, call, [.text("compare:1:=="), .text("vv"), .text("ÉMILE"), .text("émile")]) == .integer(1))
        // A list bound as a BLOB compares as memory's array, order included.
        let list = SQLValue.blob(ValueCodec.encode(.array([.integer(1), .string("a")])))
        #expect(try one(db, call, [.text("compare:0:=="), .text("cc"), list, list]) == .integer(1))
        let reversed = SQLValue.blob(ValueCodec.encode(.array([.string("a"), .integer(1)])))
        #expect(try one(db, call, [.text("compare:0:=="), .text("cc"), list, reversed]) == .integer(0))
        #expect(try one(db, call, [.text("compare:0:IN"), .text("vc"), .text("a"), list]) == .integer(1))
    }

    @Test func unionsReturnListsForTheNextCall() throws {
        let db = try SQLiteConnection()
        try db.execute(
            "CREATE TABLE v (id INTEGER PRIMARY KEY, x); INSERT INTO v (x) VALUES (2), (NULL), (1), (2.0), ('b')")
        let collected = "(SELECT sift_collect('v', x) FROM (SELECT x FROM v ORDER BY id))"
        let union = "sift_call('@distinctUnionOfObjects', 'c', \(collected))"
        // Memory drops nil and keeps the first of equal values: 2, 1, 'b'.
        #expect(try one(db, "SELECT sift_call('count:', 'c', \(union))") == .integer(3))
        let expected = SQLValue.blob(ValueCodec.encode(.array([.integer(2), .integer(1), .string("b")])))
        #expect(try one(db, "SELECT \(union)") == expected)
        #expect(
            try one(db, "SELECT sift_call('count:', 'c', sift_call('@unionOfObjects', 'c', \(collected)))")
                == .integer(4))
        // An empty group is an empty list, not nil.
        #expect(
            try one(db, "SELECT sift_call('count:', 'c', (SELECT sift_collect('v', x) FROM v WHERE 0))") == .integer(0))
    }

    @Test func nanStaysApartFromNull() throws {
        let db = try SQLiteConnection()
        let nan = try one(db, "SELECT sift_call('sqrt:', 'v', -1)")
        #expect(nan == .blob(SQLFunctions.nanMarker))
        // The marker reads back as NaN: NaN equals NaN in memory, and is not nil.
        #expect(
            try one(
                db, "SELECT sift_call('compare:0:==', 'vv', sift_call('sqrt:', 'v', -1), sift_call('sqrt:', 'v', -4))")
                == .integer(1))
        #expect(try one(db, "SELECT sift_call('compare:0:==', 'vv', sift_call('sqrt:', 'v', -1), NULL)") == .integer(0))
    }
}

/// `quantified:` selectors: memory's ANY/ALL over a list computed in SQL (a `mode:` result).
@Suite struct QuantifiedCallTests {
    private func one(_ db: SQLiteConnection, _ sql: String, _ bindings: [SQLValue] = []) throws -> SQLValue {
        try #require(try db.query(sql, bindings).first?.first)
    }

    @Test func quantifiedSelectorsRoundTrip() throws {
        for q in Quantifier.allCases {
            for op in ComparisonOperator.allCases {
                let selector = SQLFunctions.quantifiedSelector(q, op, [.caseInsensitive])
                let parsed = try #require(SQLFunctions.quantifiedComparison(selector), "\(selector)")
                #expect(parsed.0 == q && parsed.1 == op && parsed.2 == [.caseInsensitive])
                #expect(SQLFunctions.comparison(selector) == nil)
            }
        }
        #expect(SQLFunctions.quantifiedComparison("compare:0:==") == nil)
        #expect(SQLFunctions.quantifiedComparison("quantified:SOME:0:==") == nil)
    }

    @Test func memoryQuantifiesOverAList() throws {
        let db = try SQLiteConnection()
        let call = "SELECT sift_call(?, ?, ?, ?)"
        let list = SQLValue.blob(ValueCodec.encode(.array([.integer(1), .string("A"), .null])))
        let any = SQLFunctions.quantifiedSelector(.any, .equal, [.caseInsensitive])
        let all = SQLFunctions.quantifiedSelector(.all, .greaterThan, [])
        #expect(try one(db, call, [.text(any), .text("cv"), list, .text("a")]) == .integer(1))
        #expect(
            try one(
                db, call, [.text(SQLFunctions.quantifiedSelector(.any, .equal, [])), .text("cv"), list, .text("a")])
                == .integer(0))
        // nil quantifies over nothing: ANY false, ALL true; an empty list the same.
        #expect(try one(db, call, [.text(any), .text("cv"), .null, .text("a")]) == .integer(0))
        #expect(try one(db, call, [.text(all), .text("cv"), .null, .integer(0)]) == .integer(1))
        #expect(try one(db, call, [.text(all), .text("cv"), .blob([]), .integer(0)]) == .integer(1))
        // ALL stops at the first element that fails (1 > 5) before reaching "A", which would raise.
        #expect(try one(db, call, [.text(all), .text("cv"), list, .integer(5)]) == .integer(0))
        // Memory raises on ordering "A" against a number (NULL), and on a value that is not a collection.
        #expect(try one(db, call, [.text(all), .text("cv"), list, .integer(0)]) == .null)
        #expect(try one(db, call, [.text(any), .text("vv"), .integer(3), .integer(3)]) == .null)
    }
}
