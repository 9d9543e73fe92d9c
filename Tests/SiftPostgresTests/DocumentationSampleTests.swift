// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftPostgres's DocC catalog, copied verbatim from the article and run
// against the test server (in a scratch schema, which stands for the article's `db`), with the
// results its comments state asserted; one test checks that every sample block of the catalog
// still appears in this file, so the article cannot drift from the code it shows.

import Foundation
import SiftPostgres
import SiftSQL
import SiftSyntax
import SiftTestSupport
import Testing

@Suite struct PostgresDocumentationSampleTests {
    @Test(arguments: ["SiftPostgres.md"])
    func articleSamplesAreTested(article: String) throws { try expectArticleSamplesTested(article, of: "SiftPostgres") }

    @Test func loweringForPostgresTables() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        // db: a PostgresConnection
        let schema = try Schema(json: """
        {"entities": [
          {"name": "Person", "table": "person",
           "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}]}
        ]}
        """)
        let tables = try PostgresTables(schema: schema)
        try tables.create(on: db)   // person (id, name, name@c, name@d, name@cd, age), each column indexed
        try tables.load(tables.tables[0], rows: [[.integer(1), .text("Ann"), .integer(41)],
                                                 [.integer(2), .text("Émile"), .integer(25)],
                                                 [.integer(3), .text("ann"), .null]], on: db)
        let lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect())
        let q = try lowering.select(try PredicateSyntax.parse("name ==[c] 'ANN' OR name BEGINSWITH[cd] 'emi'"))
        let ids = try db.execute(q).map { $0[0] }   // [.integer(1), .integer(2), .integer(3)]

        #expect(ids == [.integer(1), .integer(2), .integer(3)])
        #expect(tables.tables[0].columns.map(\.name) == ["id", "name", "name@c", "name@d", "name@cd", "age"])
        let indexed = try db.execute("SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = 'person'", [.text(scratch.schema)])
        #expect(indexed == [[.integer(6)]])
    }

    @Test func schemaBuiltInSwift() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let db = scratch.connection
        let schema = try Schema(entities: [
            Schema.Entity(name: "Person", table: "person",
                   attributes: [Schema.Attribute(name: "name", type: .string), Schema.Attribute(name: "age", type: .integer)]),
        ])
        let tables = try PostgresTables(schema: schema)   // typed columns, folded copies, indexes
        try tables.create(on: db)
        try tables.load(tables.tables[0], rows: [[.integer(1), .text("José"), .integer(41)],
                                                 [.integer(2), .text("Joanna"), .integer(29)]], on: db)
        let lowering = try SQLLowering(schema: tables.schema, entity: "Person", dialect: PostgreSQLDialect())
        let q = try lowering.select(try PredicateSyntax.parse("name BEGINSWITH[cd] 'jo' AND age > 30"))
        let rows = try db.execute(q)   // [[.integer(1)]]: José

        #expect(rows == [[.integer(1)]])
    }
}
