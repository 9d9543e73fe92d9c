// The statement's typed column readers and one-at-a-time binding (what the store's fetch and
// insert loops use) against the general `column(_:)` and `bind(_:)`.

import SiftSQL
import SiftSQLite
import Testing

@Suite struct StatementTests {
    @Test func typedReadersAgreeWithColumn() throws {
        let db = try SQLiteConnection(path: ":memory:")
        let s = try db.prepare("SELECT 42, 2.5, 'héllo', x'00ff', NULL, '', 9223372036854775807")
        #expect(try s.step())
        #expect((0..<7).map { s.storageClass($0) } == [.integer, .double, .text, .blob, .null, .text, .integer])
        #expect(s.int64(0) == 42 && s.double(1) == 2.5 && s.text(2) == "héllo" && s.text(5) == "")
        #expect(s.int64(6) == Int64.max)
        #expect(s.column(2) == .text(s.text(2)) && s.column(0) == .integer(s.int64(0)))
        // The same answers through one column lookup (`value`).
        #expect((0..<7).map { s.value($0).storageClass } == [.integer, .double, .text, .blob, .null, .text, .integer])
        #expect(
            s.value(0).int64 == 42 && s.value(1).double == 2.5 && s.value(2).text == "héllo"
                && s.value(6).int64 == Int64.max)
        // SQLite's own conversions when the class differs (callers check the class first).
        #expect(s.double(0) == 42 && s.int64(1) == 2 && s.text(4) == "")
        #expect(try !s.step())
    }

    @Test func bindingOneAtATimeEqualsBindingAnArray() throws {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE t (a, b, c, d, e)")
        let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
        let values: [SQLValue] = [.integer(-7), .double(0.25), .text("a\u{0}b"), .blob([1, 2]), .text("")]
        try insert.bind(values)
        #expect(try !insert.step())
        try insert.reset()
        insert.clearBindings()
        for (i, v) in values.enumerated() where i != 1 { try insert.bind(v, at: i + 1) }  // b stays NULL
        #expect(try !insert.step())
        let rows = try db.query("SELECT a, b, c, d, e, typeof(e) FROM t ORDER BY rowid")
        #expect(rows[0] == values + [.text("text")])
        #expect(rows[1] == [values[0], .null] + values[2...] + [.text("text")])
        #expect(throws: SQLiteError.self) { try insert.bind(.integer(1), at: 6) }  // no sixth parameter
    }
}
