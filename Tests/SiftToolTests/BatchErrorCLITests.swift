// Errors are results too, in `sift batch` and `sift sql`: with --backend sqlite or postgres, a
// record the predicate raises on gets memory's own error entry (id, message, place), strict and
// lenient, so the SQL back-ends print byte for byte what memory prints; and `sift sql --dialect
// postgres` prints the statement selecting the rows memory decides, labelled, after the main one.

import Foundation
import SiftTestSupport
import Testing

/// The issue's three records (one age of the wrong kind) and cases over them and over objects of
/// their own: strict and lenient, raising on one record, on several, on none (an AND stopping
/// before the comparison that would raise).
enum WronglyTyped {
    static let records = #"{"age": 40}"# + "\n" + #"{"age": "abc"}"# + "\n" + #"{"age": 50}"# + "\n"

    static let cases = [
        #"{"id": 1, "format": "age > 30"}"#,
        #"{"id": 2, "format": "age < \"b\""}"#,
        #"{"id": 3, "format": "age > 30", "lenient": true}"#,
        #"{"id": 4, "format": "age < \"b\"", "lenient": true}"#,
        #"{"id": 5, "format": "age == 40 AND age > 30"}"#,
        #"{"id": 6, "format": "age > 30 OR age == \"abc\""}"#,
        #"{"id": 7, "format": "NOT age >= 45", "lenient": true}"#,
        #"{"id": 8, "format": "age > 1", "objects": [{"age": "x"}, {"age": 2}, {"age": true}, {"age": null}, {}]}"#,
        #"{"id": 9, "format": "age BEGINSWITH \"a\"", "objects": [{"age": "abc"}, {"age": 5}, {"age": "b"}]}"#,
    ].joined(separator: "\n")

    /// Writes the records to a fresh file and returns its path.
    static func file() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sift-wrong-\(UUID().uuidString).ndjson")
        try Data(records.utf8).write(to: url)
        return url.path
    }

    /// Runs the cases in memory and on `backend`, and checks the outputs are the same bytes and
    /// hold the error entries memory gives (so the comparison is not of two failures).
    static func compare(_ backend: [String]) throws {
        let path = try file()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let memory = try runSift(["batch", "--data", path], stdin: cases)
        let sql = try runSift(["batch", "--data", path] + backend, stdin: cases)
        #expect(memory.status == 0 && sql.status == 0, "\(memory.stderr)\(sql.stderr)")
        #expect(sql.stdout == memory.stdout, "memory:\n\(memory.stdout)\n\(backend):\n\(sql.stdout)")
        let lines = memory.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 9)
        guard lines.count == 9 else { return }
        // Record 1 raises strictly and answers false leniently; 0 and 2 answer.
        #expect(
            lines[0].hasSuffix(
                #""results":[true,{"error":"incomparable-values: 1:1: error: cannot order \"abc\" and 30"},true]}"#),
            "\(lines[0])")
        #expect(
            lines[1].contains(#"cannot order 40 and \"b\""#) && lines[1].contains(#"cannot order 50"#), "\(lines[1])")
        #expect(lines[2].hasSuffix(#""results":[true,false,true]}"#), "\(lines[2])")
        #expect(lines[4].hasSuffix(#""results":[true,false,false]}"#), "\(lines[4])")
        #expect(lines[7].hasPrefix(#"{"id":8,"ok":true,"canonical":"age > 1","results":[{"error":"#), "\(lines[7])")
        #expect(lines[8].contains(#""results":[true,{"error":"#) && lines[8].hasSuffix(#"},false]}"#), "\(lines[8])")
    }
}

@Suite(.serialized) struct BatchErrorCLITests {
    @Test func sqliteGivesMemorysEntries() throws {
        try WronglyTyped.compare(["--backend", "sqlite"])
    }

    @Test func postgresDialectPrintsTheRowsMemoryDecides() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-sql-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let schema = dir.appendingPathComponent("schema.json")
        try Data(
            #"""
            {"entities": [{"name": "Item", "table": "item", "attributes": [
              {"name": "age", "type": "any", "textColumn": "age_text"}, {"name": "n", "type": "integer"}]}]}
            """#.utf8
        ).write(to: schema)
        let args = ["sql", "--schema", schema.path, "--entity", "Item", "--dialect", "postgres"]
        let r = try runSift(args + ["n > 1 AND age > 30"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let label = try #require(lines.firstIndex { $0.hasPrefix("-- rows memory decides") }, "\(r.stdout)")
        #expect(lines[..<label].contains("$1 = 1") && lines[..<label].contains("$2 = 30"), "\(r.stdout)")
        // The rows whose age is text: there memory orders nothing against 30.
        #expect(
            lines[label + 1] == #"SELECT t0."id" FROM "item" AS t0 WHERE ((t0."age_text" IS NOT NULL))"#, "\(r.stdout)")
        #expect(lines.count == label + 2, "\(r.stdout)")
        let json = try runSift(args + ["--json", "age > 30"])
        #expect(
            json.stdout.contains(#""rowsMemoryDecides":{"sql":"SELECT t0.\"id\" FROM \"item\" AS t0 WHERE"#),
            "\(json.stdout)")
        // Typed columns alone: no second statement; nor in SQLite, which asks memory itself.
        let typed = try runSift(args + ["n > 1"])
        #expect(typed.status == 0 && !typed.stdout.contains("rows memory decides"), "\(typed.stdout)")
        let sqlite = try runSift(["sql", "--schema", schema.path, "--entity", "Item", "age > 30"])
        #expect(sqlite.status == 0 && !sqlite.stdout.contains("rows memory decides"), "\(sqlite.stdout)")
        #expect(sqlite.stdout.contains("sift_guard("), "\(sqlite.stdout)")
    }
}

@Suite(.serialized) struct BatchErrorPostgresCLITests {
    @Test func postgresGivesMemorysEntries() throws {
        let url = try postgresTestURL()
        try WronglyTyped.compare(["--backend", "postgres", "--database-url", url])
    }
}
