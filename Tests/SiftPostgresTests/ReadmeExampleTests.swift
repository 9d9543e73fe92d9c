// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The README's SiftPostgres example, as written there (the test server's connection, in a scratch
// schema of its own, stands for its `db`), with its comment turned into an assertion; one test
// checks that the README's block still appears in this file, so the two cannot drift apart. The
// lowering example that used to stand in the README is the SiftPostgres article's now and runs in
// PostgresDocumentationSampleTests.

import SiftPostgres
import SiftSQL
import SiftTestSupport
import Testing

@Suite struct PostgresReadmeExampleTests {
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftPostgres") }

    @Test func postgresExample() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        // db: a PostgresConnection, e.g. try PostgresConnection(url: "postgresql://sift@/sift?host=/tmp/pg")
        try db.executeScript("CREATE TABLE person(name text, age bigint)")
        try db.copy(into: "person", columns: ["name", "age"], rows: [[.text("Ann"), .integer(41)]])
        let rows = try db.execute("SELECT name FROM person WHERE age > $1", [.integer(30)])   // [[.text("Ann")]]

        #expect(rows == [[.text("Ann")]])
        #expect(try db.execute("SELECT name FROM person WHERE age > $1", [.integer(41)]) == [])
    }
}
