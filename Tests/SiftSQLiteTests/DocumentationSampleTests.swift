// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftSQLite's DocC catalog, each copied verbatim from its article and run,
// with the results its comments state asserted; one test checks that every sample block of the
// catalog still appears in this file, so an article cannot drift from the code it shows.

import Foundation
import Testing
import SiftTestSupport
import SiftSQL
import SiftSQLite
import SiftSyntax

@Suite struct DocumentationSampleTests {
    @Test(arguments: ["RunningLoweredQueries.md"])
    func articleSamplesAreTested(article: String) throws { try expectArticleSamplesTested(article, of: "SiftSQLite") }

    /// The README's SiftSQLite example is this file's too.
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftSQLite") }

    @Test func runningLoweredQueries() throws {
        let schema = try Schema(json: """
        {"entities": [
          {"name": "Person", "table": "person",
           "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}]}
        ]}
        """)
        let db = try SQLiteConnection()   // in memory; Sift's functions are registered on open
        try db.execute("""
        CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
        INSERT INTO person (name, age) VALUES ('Joana', 30), ('ann', 41), ('Bo', 7), ('José', 52), ('Cy', NULL), ('Émile', 25);
        """)
        let lowering = try SQLLowering(schema: schema, entity: "Person")
        let q = try lowering.select(try PredicateSyntax.parse("age >= 18 AND NOT name BEGINSWITH[cd] 'jo'"),
                                    sortedBy: [SQLSortKey(keyPath: "name", options: .caseInsensitive)])
        let ids = try db.query(q).map { $0[0] }   // [.integer(2), .integer(6)]: ann, Émile
        let plan = try db.queryPlan(q)            // SQLite's EXPLAIN QUERY PLAN lines

        #expect(ids == [.integer(2), .integer(6)])
        #expect(!plan.isEmpty)
    }
}
