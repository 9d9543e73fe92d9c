// The README's PostgreSQL example, as written there except for the connection (the test server's,
// in a scratch schema of its own), with its comment turned into an assertion, so the example
// keeps compiling and stays true.

import SiftPostgres
import SiftSQL
import SiftSyntax
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

    @Test func postgresLoweringExample() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let schema = try Schema(entities: [
            Entity(name: "Person", table: "person",
                   attributes: [Attribute(name: "name", type: .string), Attribute(name: "age", type: .integer)]),
        ])
        let db = scratch.connection
        let tables = try PostgresTables(schema: schema)   // typed columns, folded copies, indexes
        try tables.create(on: db)
        try tables.load(tables.tables[0], rows: [[.integer(1), .text("José"), .integer(41)],
                                                 [.integer(2), .text("Joanna"), .integer(29)]], on: db)
        let lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect())
        let q = try lowering.select(try PredicateSyntax.parse("name BEGINSWITH[cd] 'jo' AND age > 30"))
        #expect(try db.execute(q) == [[.integer(1)]])
    }
}
