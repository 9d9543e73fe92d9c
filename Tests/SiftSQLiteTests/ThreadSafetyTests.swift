// One lowering shared by many threads, each with its own connection to one database file, running
// queries that call Sift's SQL functions and collations (text options, LIKE, MATCHES with its
// pattern cache): every thread must get the rows a single thread gets. `make test` also runs this
// suite under ThreadSanitizer, where a data race in the functions' shared state fails the run.

import Foundation
import SiftSQL
import SiftSQLite
import SiftSyntax
import SiftTestSupport
import Testing

@Suite struct ThreadSafetyTests {
    @Test func oneConnectionPerThreadRunningLoweredQueries() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sift-threads-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("people.sqlite").path

        let setup = try SQLiteConnection(path: path)
        try setup.execute("CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
        let names = ["Ann", "ann", "Ånn", "Bob", "Chloé", "CHLOE", "Zoë", "zoe", "Émile", "emile"]
        try setup.transaction { () throws(SQLiteError) in
            let insert = try setup.prepare("INSERT INTO person(id, name, age) VALUES (?, ?, ?)")
            for i in 0..<500 {
                try insert.reset()
                try insert.bind([
                    .integer(Int64(i)), .text(names[i % names.count] + String(i % 7)),
                    i % 9 == 0 ? .null : .integer(Int64(i % 80)),
                ])
                _ = try insert.step()
            }
        }

        let schema = try Schema(
            json: """
                {"entities": [{"name": "Person", "table": "person", "primaryKey": "id",
                  "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}]}]}
                """)
        let lowering = try SQLLowering(schema: schema, entity: "Person")
        let predicates = [
            "name BEGINSWITH[cd] 'a'", "name LIKE[c] '*o?3'", "name MATCHES '[A-Z].*[0-4]'",
            "name ==[cd] 'zoe2' OR age > 70", "name CONTAINS[d] 'e' AND age != nil",
        ]
        let queries = try predicates.map { (p: String) throws -> SQLQuery in
            try lowering.select(
                try PredicateSyntax.parse(p), sortedBy: [SQLSortKey(keyPath: "name", options: [.caseInsensitive])])
        }
        let expected = try queries.map { try setup.query($0) }
        for rows in expected { #expect(!rows.isEmpty && rows.count < 500, "each predicate should split the rows") }

        let results = try concurrently(threads: 8, rounds: 1) { _ throws -> [[[SQLValue]]] in
            let db = try SQLiteConnection(path: path)
            var all: [[[SQLValue]]] = []
            for _ in 0..<4 { for q in queries { all.append(try db.query(q)) } }
            return all
        }
        #expect(results.count == 8)
        for all in results {
            #expect(all.count == 4 * queries.count)
            for (i, rows) in all.enumerated() { #expect(rows == expected[i % queries.count]) }
        }
    }

    @Test func oneSerializedConnectionSharedByThreads() throws {
        // `query` on one connection from several threads at once, as its documentation allows.
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        let names = ["Ann", "ånn", "Bob", "Chloé", "chloe", "Zoë"]
        try db.transaction { () throws(SQLiteError) in
            for i in 0..<300 {
                _ = try db.query("INSERT INTO t VALUES (?, ?)", [.integer(Int64(i)), .text(names[i % names.count])])
            }
        }
        let schema = try Schema(
            json: """
                {"entities": [{"name": "T", "table": "t", "primaryKey": "id", "attributes": [{"name": "name", "type": "string"}]}]}
                """)
        let query = try SQLLowering(schema: schema, entity: "T").count(
            try PredicateSyntax.parse("name BEGINSWITH[cd] 'a' OR name ==[cd] 'CHLOE'"))
        let expected = try db.query(query)
        #expect(expected == [[.integer(200)]])
        let answers = try concurrently(threads: 8, rounds: 5) { _ throws -> [[SQLValue]] in try db.query(query) }
        #expect(answers.count == 40)
        for rows in answers { #expect(rows == expected) }
    }
}
