// `sift filter` and `sift batch` with `--backend postgres` against the test server: the same output
// as the memory back-end (indices, counts, printed records, sorted order), the same answers in
// batch mode, clear errors for a server that cannot be reached or is not named and for a form
// PostgreSQL cannot select exactly, and no schema left behind on the server.

import Foundation
import SiftPostgres
import SiftSQL
import SiftTestSupport
import Testing

@Suite(.serialized) struct PostgresCLITests {
    static var people: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/people.json").path
    }

    static let predicates = [
        #"age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao""#,
        "name ==[c] 'ana' OR age BETWEEN {30, 40}",
        "NOT (email ENDSWITH '.org') AND kids.@count > 1",
        "ANY tags IN {'vip', 'new'} OR address == nil",
        "address.city LIKE[d] 'S?o *' AND score >= 80.5",
    ]

    @Test func filterPrintsWhatMemoryPrints() throws {
        let url = try postgresTestURL()
        for p in Self.predicates {
            for mode in [
                ["--indices"], ["--count"], [], ["--sort", "name[c]:desc", "--indices"],
                ["--sort", "age", "--indices"],
            ] {
                let memory = try runSift(["filter", p, Self.people] + mode)
                let pg = try runSift(["filter", p, Self.people, "--backend", "postgres", "--database-url", url] + mode)
                #expect(memory.status == 0, "\(memory.stderr)")
                #expect(pg.status == 0, "\(p) \(mode): \(pg.stderr)")
                #expect(pg.stdout == memory.stdout, "\(p) \(mode)")
            }
        }
    }

    @Test func batchAnswersAsMemoryDoes() throws {
        let url = try postgresTestURL()
        let cases = """
            {"id": 1, "format": "age > 30"}
            {"id": 2, "format": "name BEGINSWITH 'A'", "objects": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Åsa"}]}
            {"id": 3, "format": "name MATCHES 'A.*'"}
            """
        let memory = try runSift(["batch", "--data", Self.people], stdin: cases)
        let pg = try runSift(
            ["batch", "--data", Self.people, "--backend", "postgres", "--database-url", url], stdin: cases)
        #expect(pg.status == 0, "\(pg.stderr)")
        let m = memory.stdout.split(separator: "\n")
        let g = pg.stdout.split(separator: "\n")
        #expect(g.count == 3)
        #expect(g.prefix(2) == m.prefix(2), "\(pg.stdout)")
        // MATCHES is declined on PostgreSQL, as a failed case naming the stage and the reason.
        #expect(g.last?.contains(#""stage":"lower""#) == true && g.last?.contains("MATCHES") == true, "\(pg.stdout)")
    }

    @Test func errorsNameTheServerOrTheConstruct() throws {
        let unreachable = try runSift([
            "filter", "age > 1", Self.people, "--backend", "postgres", "--database-url",
            "postgresql://sift@127.0.0.1:1/sift",
        ])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("127.0.0.1"), "\(unreachable.stderr)")
        #expect(unreachable.stdout.isEmpty)
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = nil
        let unnamed = try runSift(
            ["filter", "age > 1", Self.people, "--backend", "postgres"], environment: environment)
        #expect(unnamed.status == 1)
        #expect(unnamed.stderr.contains("--database-url"), "\(unnamed.stderr)")
        let url = try postgresTestURL()
        let declined = try runSift([
            "filter", "age > 1 AND name MATCHES 'A.*'", Self.people, "--backend", "postgres", "--database-url", url,
        ])
        #expect(declined.status == 1)
        #expect(declined.stderr.contains("1:13: error:") && declined.stderr.contains("MATCHES"), "\(declined.stderr)")
        #expect(declined.stdout.isEmpty)
    }

    @Test func noSchemaIsLeftBehind() throws {
        let url = try postgresTestURL()
        let before = try Self.siftSchemas(url)
        _ = try runSift(["filter", "age > 1", Self.people, "--backend", "postgres", "--database-url", url, "--count"])
        _ = try runSift([
            "filter", "age > 1 AND name MATCHES 'x'", Self.people, "--backend", "postgres", "--database-url", url,
        ])
        #expect(try Self.siftSchemas(url) == before)
    }

    static func siftSchemas(_ url: String) throws -> [SQLValue] {
        let c = try PostgresConnection(url: url)
        defer { c.close() }
        // The schemas of `sift` processes; this test process's own (other suites running at the
        // same time load datasets through the same code) are named after its pid and left out.
        let own = "sift\\_\(ProcessInfo.processInfo.processIdentifier)\\_%"
        return try c.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1 AND nspname NOT LIKE $2 ORDER BY 1",
            [.text("sift\\_%"), .text(own)]
        ).map { $0[0] }
    }
}
