// The README's PostgreSQL example, as written there except for the connection (the test server's,
// in a scratch schema of its own), with its comment turned into an assertion, so the example
// keeps compiling and stays true.

import SiftPostgres
import SiftSQL
import Testing

@Suite struct PostgresReadmeExampleTests {
    @Test func postgresExample() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        try db.executeScript("CREATE TABLE person(name text, age bigint)")
        try db.copy(into: "person", columns: ["name", "age"], rows: [[.text("Ann"), .integer(41)]])
        #expect(try db.execute("SELECT name FROM person WHERE age > $1", [.integer(30)]) == [[.text("Ann")]])
    }
}
