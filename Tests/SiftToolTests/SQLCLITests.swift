// The SQL back-end on the command line, run as a subprocess: `sift sql` (text and --json output,
// errors with a caret), and `sift filter` / `sift batch` with `--backend sqlite`, whose output must
// be byte for byte the output of the default memory back-end.

import Foundation
import SiftJSON
import Testing

@testable import SiftTool

private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
private let peopleFile = root.appendingPathComponent("Samples/people.json").path
private let peopleSchema = root.appendingPathComponent("Samples/people.schema.json").path

@Suite(.serialized) struct SQLCommandTests {
    @Test func printsSQLAndBindings() throws {
        let r = try runSift([
            "sql", "name ==[c] %@ AND age > $min", "--schema", peopleSchema, "--entity", "Person",
            "--arg", "\"Zoë\"", "--var", "min=30",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("SELECT ") == true, "\(r.stdout)")
        #expect(lines.first?.contains("\"person\"") == true, "\(r.stdout)")
        #expect(lines.contains("?1 = \"Zoë\"") || lines.contains { $0.hasSuffix("= \"Zoë\"") }, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("?") && $0.hasSuffix("= 30") }, "\(r.stdout)")
        #expect(r.stderr.isEmpty)
    }

    @Test func jsonOutput() throws {
        let r = try runSift([
            "sql", "tags CONTAINS 'remote' OR address.city BEGINSWITH 'S'", "--schema", peopleSchema,
            "--entity", "Person", "--sort", "name[cd]:desc", "--json",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        guard case .object(let members) = try JSONReader.parse(r.stdout) else {
            Issue.record("not an object: \(r.stdout)")
            return
        }
        #expect(members.map(\.0) == ["sql", "bindings"])
        guard case .string(let sql) = members[0].1, case .array(let bindings) = members[1].1 else {
            Issue.record("\(r.stdout)")
            return
        }
        #expect(sql.contains("ORDER BY"), "\(sql)")
        #expect(sql.contains("sift_cd"), "\(sql)")
        #expect(sql.contains("LEFT JOIN"), "\(sql)")
        #expect(!sql.contains("INNER JOIN"), "\(sql)")
        #expect(bindings.contains(.string("remote")), "\(bindings)")
        // Every placeholder has its value.
        #expect(sql.filter { $0 == "?" }.count == bindings.count, "\(sql) \(bindings)")
    }

    @Test func loweringErrorHasCaret() throws {
        let r = try runSift(["sql", "age > 3 AND nickname == 'x'", "--schema", peopleSchema, "--entity", "Person"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("1:13: error: "), "\(r.stderr)")
        #expect(r.stderr.contains("nickname"), "\(r.stderr)")
        #expect(r.stderr.contains("\nage > 3 AND nickname == 'x'\n            ^"), "\(r.stderr)")
    }

    @Test func syntaxSchemaAndEntityErrors() throws {
        let syntax = try runSift(["sql", "age >", "--schema", peopleSchema, "--entity", "Person"])
        #expect(syntax.status == 1)
        #expect(syntax.stderr.hasPrefix("1:6: error: "), "\(syntax.stderr)")
        let entity = try runSift(["sql", "age > 1", "--schema", peopleSchema, "--entity", "Nobody"])
        #expect(entity.status == 1)
        #expect(entity.stderr.contains("Nobody"), "\(entity.stderr)")
        let schema = try runSift(["sql", "age > 1", "--schema", "/nonexistent/schema.json", "--entity", "Person"])
        #expect(schema.status == 1)
        #expect(schema.stderr.contains("/nonexistent/schema.json"), "\(schema.stderr)")
        let usage = try runSift(["sql", "age > 1", "--entity", "Person"])
        #expect(usage.status == 2)
    }
}

@Suite(.serialized) struct SQLiteBackendCLITests {
    static let predicates = [
        "age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] \"sao\"",
        "NOT (address.city == 'Paris')",
        "age == nil OR age > 40",
        "ALL kids.age > 5",
        "kids.@count == 0",
        "kids.@avg.age < 8",
        "SUBQUERY(kids, $k, $k.age > 5).@count >= 1",
        "tags CONTAINS 'remote'",
        "'design' IN tags",
        "name LIKE[cd] '*o*'",
        "name MATCHES '[A-Z].*'",
        "score BETWEEN {60, 80}",
        "score * 2 - kids.@count > 150",
        "active == YES AND NOT (name BEGINSWITH 'A')",
        "TRUEPREDICATE",
    ]

    @Test(arguments: predicates) func filterMatchesMemory(predicate: String) throws {
        for extra in [
            [], ["--count"], ["--indices"], ["--sort", "name[cd]"], ["--sort", "age:desc", "--sort", "name"],
        ] {
            let memory = try runSift(["filter", predicate, peopleFile] + extra)
            let sqlite = try runSift(["filter", predicate, peopleFile, "--backend", "sqlite"] + extra)
            #expect(memory.status == 0, "\(memory.stderr)")
            #expect(sqlite.status == 0, "\(predicate) \(extra): \(sqlite.stderr)")
            #expect(sqlite.stdout == memory.stdout, "\(predicate) \(extra)")
        }
    }

    @Test func variablesArgumentsAndStdin() throws {
        let data = #"[{"a": 1, "s": "Émile"}, {"a": 5, "s": "emile"}, {"s": null}, {"a": 9.5}]"#
        for args in [
            ["filter", "a > $min OR s ==[cd] %@", "--var", "min=4", "--arg", "\"EMILE\""],
            ["filter", "a IN %@", "--arg", "[1, 9.5, null]", "--sort", "a:desc"],
        ] {
            let memory = try runSift(args, stdin: data)
            let sqlite = try runSift(args + ["--backend", "sqlite"], stdin: data)
            #expect(memory.status == 0 && sqlite.status == 0, "\(sqlite.stderr)")
            #expect(!memory.stdout.isEmpty)
            #expect(sqlite.stdout == memory.stdout, "\(args)")
        }
    }

    @Test func somethingMatches() throws {
        // The comparison above is not vacuous: the sample predicate selects records.
        let r = try runSift(["filter", Self.predicates[0], peopleFile, "--backend", "sqlite", "--count"])
        #expect(r.stdout != "0\n" && r.status == 0, "\(r.stdout) \(r.stderr)")
    }

    @Test func rejectionIsAnErrorWithCaret() throws {
        let r = try runSift(["filter", "age > 1 OR random() < age", peopleFile, "--backend", "sqlite"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("1:12: error: "), "\(r.stderr)")
        #expect(r.stderr.contains("\n           ^"), "\(r.stderr)")
    }

    @Test func batchMatchesMemory() throws {
        let input =
            Self.predicates.enumerated().map {
                #"{"id": \#($0.offset), "format": \#(JSONValue.string($0.element).text)}"#
            }
            .joined(separator: "\n") + "\n"
            + #"{"id": "own", "format": "x > 1", "objects": [{"x": 1}, {"x": 2}, {"y": 3}]}"# + "\n"
        let memory = try runSift(["batch", "--data", peopleFile], stdin: input)
        let sqlite = try runSift(["batch", "--data", peopleFile, "--backend", "sqlite"], stdin: input)
        #expect(memory.status == 0 && sqlite.status == 0, "\(sqlite.stderr)")
        #expect(sqlite.stdout == memory.stdout)
        #expect(memory.stdout.contains("true"))
        let rejected = try runSift(
            ["batch", "--backend", "sqlite"],
            stdin: #"{"id": 1, "format": "x > 1 OR random() < x", "objects": [{"x": 2}]}"# + "\n")
        #expect(rejected.status == 0)
        #expect(rejected.stdout.hasPrefix(#"{"id":1,"ok":false,"stage":"lower","error":"1:"#), "\(rejected.stdout)")
    }
}
