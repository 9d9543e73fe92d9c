// `sift sql --dialect postgres`: the PostgreSQL form of the bundled sample's predicate, and a
// construct PostgreSQL cannot make exact refused with its position and reason.

import Foundation
import SiftTestSupport
import Testing

@Suite(.serialized) struct SQLDialectCLITests {
    static var schema: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/people.schema.json").path
    }

    @Test func postgresFormHasNumberedPlaceholders() throws {
        let r = try runSift([
            "sql", "age >= 18 AND ANY kids.age < 10 AND name BEGINSWITH 'Jo'",
            "--schema", Self.schema, "--entity", "Person", "--dialect", "postgres",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("$1") == true, "\(r.stdout)")
        #expect(lines.first?.contains("?") == false, "\(r.stdout)")
        #expect(lines.first?.contains(#"COLLATE "C""#) == true, "\(r.stdout)")
        #expect(lines.dropFirst().first == "$1 = 18", "\(r.stdout)")
    }

    @Test func postgresRefusesWhatItCannotMakeExact() throws {
        let r = try runSift([
            "sql", "age >= 18 AND name ==[cd] 'jose'",
            "--schema", Self.schema, "--entity", "Person", "--dialect", "postgres",
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("1:15: error:"), "\(r.stderr)")
        #expect(r.stderr.contains("string options"), "\(r.stderr)")
        // The same predicate is fine for SQLite, which calls Sift's folding.
        let sqlite = try runSift([
            "sql", "age >= 18 AND name ==[cd] 'jose'", "--schema", Self.schema, "--entity", "Person",
        ])
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
    }
}
