// `sift store migrate DB --model NEW.json [--dry-run]`: a store made with one model follows a
// newer one (each change printed); a dry run prints the steps and their SQL and the rows that would
// fail, and leaves the file byte for byte as it was; what cannot be inferred is refused, one line
// per change, with the store untouched. Several --model are a plan: renames chain through them.

import Foundation
import Testing

@Suite struct StoreMigrateCLITests {
    /// A model file of one entity, Person, with `attributes` (JSON objects).
    static func model(_ dir: URL, _ name: String, _ attributes: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Data(#"{"entities": [{"name": "Person", "attributes": [\#(attributes)]}]}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        return path
    }

    static let v1 = #"{"name": "name", "type": "string"}, {"name": "age", "type": "integer16"}"#

    /// A store at `dir/db.sqlite` made with `v1`, holding Ann (31), Bo (no age) and Cy (7).
    static func store(_ dir: URL) throws -> String {
        let db = dir.appendingPathComponent("db.sqlite").path
        let created = try runSift(["store", "create", db, "--model", try model(dir, "v1.json", v1)])
        try #require(created.status == 0, "\(created.stderr)")
        let people = #"[{"name": "Ann", "age": 31}, {"name": "Bo"}, {"name": "Cy", "age": 7}]"#
        let imported = try runSift(["store", "import", db, "Person", "-"], stdin: people)
        try #require(imported.status == 0, "\(imported.stderr)")
        return db
    }

    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-migrate-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func migrateFollowsTheNewModelAndPrintsEachChange() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(dir)
        let v2 = try Self.model(
            dir, "v2.json",
            #"{"name": "fullName", "type": "string", "renamingIdentifier": "name"}, {"name": "age", "type": "integer64"}, {"name": "phone", "type": "string", "default": "none"}"#
        )
        let run = try runSift(["store", "migrate", db, "--model", v2])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.split(separator: "\n") == [
                "change: attribute 'Person.name' was renamed 'fullName'",
                "change: attribute 'Person.age' widened from integer16 to integer64",
                "change: attribute 'Person.phone' was added",
            ], "\(run.stdout)")
        let query = try runSift(["store", "query", db, "Person", "age > 10 AND phone == 'none'"])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.contains(#""fullName":"Ann""#), "\(query.stdout)")
        #expect(query.stdout.split(separator: "\n").count == 1)
        let again = try runSift(["store", "migrate", db, "--model", v2])
        #expect(again.stdout == "the store already has this model\n")
    }

    @Test func aDryRunPrintsTheStepsAndWhatWouldFailAndChangesNothing() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(dir)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        let strict = try Self.model(
            dir, "strict.json", #"{"name": "name", "type": "string"}, {"name": "age", "type": "integer16", "min": 10}"#)
        let run = try runSift(["store", "migrate", db, "--model", strict, "--dry-run"])
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first == "change: attribute 'Person.age' changed its validation rules (checked against every row)")
        #expect(
            lines.contains { $0.hasPrefix("step ") && $0.hasSuffix(": check every Person.age against its new rules") })
        #expect(lines.contains { $0.hasPrefix("    INSERT INTO \"Person\"") }, "\(run.stdout)")
        #expect(lines.last?.hasPrefix("would fail: Person ") == true)
        #expect(lines.last?.hasSuffix(" 'age': 7 is below the minimum 10.0") == true, "\(run.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes)
        // The store still opens with its own model.
        let query = try runSift(["store", "query", db, "Person", "age < 10"])
        #expect(query.status == 0 && query.stdout.contains(#""name":"Cy""#), "\(query.stderr)")
    }

    @Test func whatCannotBeInferredIsRefusedOneLineEach() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(dir)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        let bad = try Self.model(
            dir, "bad.json",
            #"{"name": "name", "type": "date"}, {"name": "age", "type": "integer16", "optional": false}"#)
        let run = try runSift(["store", "migrate", db, "--model", bad])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("attribute 'Person.name' changed type from string to date"), "\(run.stderr)")
        #expect(run.stderr.contains("attribute 'Person.age' became required without a default value"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes)
    }

    @Test func severalModelsAreAPlanAndRenamesChainThroughThem() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(dir)
        let v2 = try Self.model(
            dir, "v2.json",
            #"{"name": "fullName", "type": "string", "renamingIdentifier": "name"}, {"name": "age", "type": "integer32"}"#
        )
        let v3 = try Self.model(
            dir, "v3.json",
            #"{"name": "displayName", "type": "string", "renamingIdentifier": "fullName"}, {"name": "age", "type": "integer64"}"#
        )
        let run = try runSift(["store", "migrate", db, "--model", v2, "--model", v3])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.split(separator: "\n") == [
                "change: attribute 'Person.name' was renamed 'fullName'",
                "change: attribute 'Person.age' widened from integer16 to integer32",
                "change: attribute 'Person.fullName' was renamed 'displayName'",
                "change: attribute 'Person.age' widened from integer32 to integer64",
            ], "\(run.stdout)")
        let query = try runSift(["store", "query", db, "Person", "age > 10"])
        #expect(query.stdout.contains(#""displayName":"Ann""#), "\(query.stdout)")
        // The store is at v3 now: the same plan again has nothing to do.
        let again = try runSift(["store", "migrate", db, "--model", v2, "--model", v3])
        #expect(again.stdout == "the store already has this model\n")
    }
}
