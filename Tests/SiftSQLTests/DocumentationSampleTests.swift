// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftSQL's DocC catalog, each copied verbatim from its article and run, with
// the results its comments state asserted; one test checks that every sample block of the catalog
// still appears in this file, so an article cannot drift from the code it shows.

import Foundation
import Testing
import SiftTestSupport
import SiftSQL
import SiftSyntax

@Suite struct DocumentationSampleTests {
    @Test(arguments: ["SQLBackEnd.md"])
    func articleSamplesAreTested(article: String) throws { try expectArticleSamplesTested(article, of: "SiftSQL") }

    /// The README's SiftSQL example is this file's too.
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftSQL") }

    @Test func sqlBackEnd() throws {
        let schema = try Schema(json: """
        {"entities": [
          {"name": "Person", "table": "person",
           "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}]}
        ]}
        """)
        let lowering = try SQLLowering(schema: schema, entity: "Person")
        let q = try lowering.select(try PredicateSyntax.parse("age >= %@ AND NOT name BEGINSWITH[cd] 'jo'", arguments: [18]),
                                    sortedBy: [SQLSortKey(keyPath: "name", ascending: true, options: .caseInsensitive)])
        let sql = q.sql             // SELECT t0."id" FROM "person" AS t0 WHERE (t0."age" >= ?) AND ((sift_text(1, t0."name", ?, ?) = 1) IS NOT 1)
                                    //   ORDER BY t0."name" COLLATE "sift_c" ASC, t0."id" ASC
        let bindings = q.bindings   // [.integer(18), .text("jo"), .integer(3)]

        #expect(sql == #"SELECT t0."id" FROM "person" AS t0 WHERE (t0."age" >= ?) AND ((sift_text(1, t0."name", ?, ?) = 1) IS NOT 1)"#
            + #" ORDER BY t0."name" COLLATE "sift_c" ASC, t0."id" ASC"#)
        #expect(bindings == [.integer(18), .text("jo"), .integer(3)])

        let format = "age > 3 AND nickname == 'x'"
        var rejection: SQLLoweringError?
        do {
            _ = try lowering.select(try PredicateSyntax.parse(format), source: format)
        } catch let error as SQLLoweringError {
            rejection = error
        }
        let id = rejection?.id                  // unknown-key
        let message = rejection?.description    // 1:13: error: Person has no key 'nickname'

        #expect(id == "unknown-key")
        #expect(message == "1:13: error: Person has no key 'nickname'")
    }
}
