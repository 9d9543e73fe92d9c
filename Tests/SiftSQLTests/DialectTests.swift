// The dialect seam: identifiers are quoted only through the dialect (embedded quotes doubled),
// placeholders are numbered in text order, and the function/collation names are the contract's.

import Foundation
import SiftSQL
import SiftSyntax
import Testing

/// A PostgreSQL-like dialect, to check that placeholders are numbered in text order. Its other
/// answers are SQLite's, so the lowering accepts the same forms.
private struct NumberedDialect: SQLDialect {
    func quote(_ identifier: String) -> String { "[" + identifier + "]" }
    func placeholder(_ index: Int) -> String { "$\(index)" }
    var textFunction: String? { "txt" }
    var compareFunction: String? { "cmp" }
    func collation(for options: ComparisonOptions) -> String? { nil }
    func booleanLiteral(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
    func isNotDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS NOT DISTINCT FROM \(rhs)" }
    func isDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS DISTINCT FROM \(rhs)" }
    func isNotTrue(_ sql: String) -> String { "(\(sql)) IS NOT TRUE" }
    var callFunction: String? { nil }
    var collectFunction: String? { nil }
    var documentFunction: String? { nil }
    var traits: SQLDialectTraits {
        [.dynamicTyping, .silentFloatOverflow, .exactIntegerDoubleComparison, .textWithNUL, .integerShifts]
    }
    var noLimit: SQLValue { .integer(-1) }
    func integerSum(_ sql: String) -> String { "SUM(\(sql))" }
    func doubleAverage(_ sql: String) -> String { "AVG(\(sql))" }
    var scalarOrderCollation: String? { nil }
    var nullsSortFirst: Bool { true }
    func integerLiteral(_ value: Int64) -> String { String(value) }
    func bundledSubqueryTerm(_ conjunction: String) -> String? { nil }
}

@Suite struct DialectTests {
    @Test func sqliteQuoting() {
        let d = SQLiteDialect()
        #expect(d.quote("order") == "\"order\"")
        #expect(d.quote("a\"b") == "\"a\"\"b\"")
        #expect(d.placeholder(3) == "?")
        #expect(d.isNotDistinct("a", "b") == "a IS b")
    }

    @Test func contractNames() {
        #expect(SQLFunctions.text == "sift_text")
        #expect(SQLFunctions.compare == "sift_compare")
        #expect(SQLFunctions.TextOp.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
        #expect(SQLFunctions.collation(for: [.caseInsensitive]) == "sift_c")
        #expect(SQLFunctions.collation(for: [.diacriticInsensitive]) == "sift_d")
        #expect(SQLFunctions.collation(for: [.caseInsensitive, .diacriticInsensitive, .localeSensitive]) == "sift_cd")
        #expect(SQLFunctions.collation(for: [.caseInsensitive, .normalized]) == nil)
        #expect(SQLFunctions.collation(for: [.localeSensitive]) == nil)
    }

    @Test func numberedPlaceholdersAndQuoting() throws {
        let l = try SQLLowering(schema: Fixture.schema, entity: "Person", dialect: NumberedDialect())
        let q = try l.select(try PredicateSyntax.parse("name ==[c] 'x' AND age == score AND nick IN {'a', 'b'}"))
        #expect(
            q.sql
                == "SELECT t0.[id] FROM [person] AS t0 WHERE (txt(0, t0.[name], $1, $2) = 1) AND (t0.[age] IS NOT DISTINCT FROM t0.[score]) AND (t0.[nick name] IN ($3, $4)) ORDER BY t0.[id] ASC"
        )
        #expect(q.bindings == [.text("x"), .integer(1), .text("a"), .text("b")])
    }
}
