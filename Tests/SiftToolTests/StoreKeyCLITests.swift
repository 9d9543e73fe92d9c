// `sift store` and unknown keys (issue 27): a store made with `infer-model` knows every key it saw,
// so a key no record has is an error with the closest key names, whichever option names it, each
// with a caret under its own text; a document store keeps reading nil. Also `@count.key`, and an
// expression that raises naming its object.

import Foundation
import Testing

@testable import SiftTool

@Suite struct StoreKeyCLITests {
    /// A store made by infer-model, create and import from `records` (NDJSON) in a fresh directory.
    func store(_ records: String, document: Bool = false) throws -> (db: String, directory: URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let data = dir.appendingPathComponent("records.json").path
        try Data(records.utf8).write(to: URL(fileURLWithPath: data))
        let model = try runSift(["store", "infer-model", data] + (document ? ["--document"] : []))
        try #require(model.status == 0, "\(model.stderr)")
        let modelFile = dir.appendingPathComponent("model.json").path
        try Data(model.stdout.utf8).write(to: URL(fileURLWithPath: modelFile))
        let db = dir.appendingPathComponent("db.sqlite").path
        try #require(try runSift(["store", "create", db, "--model", modelFile]).status == 0)
        let imported = try runSift(["store", "import", db, "Record", data])
        try #require(imported.status == 0, "\(imported.stderr)")
        return (db, dir)
    }

    let records = #"{"age": 40, "price": 3}"# + "\n" + #"{"age": 50}"# + "\n"

    @Test func anInferredModelKnowsEveryKeyItSaw() throws {
        let (db, dir) = try store(records)
        defer { try? FileManager.default.removeItem(at: dir) }
        let none = try runSift(["store", "query", db, "Record", "nosuchkey > 3"])
        #expect(none.status == 1 && none.stdout.isEmpty)
        #expect(
            none.stderr == "1:1: error: Record has no key 'nosuchkey'\nnosuchkey > 3\n^~~~~~~~~\n", "\(none.stderr)")
        // Behind an arm that rejects every row, and in a count.
        let hidden = try runSift(["store", "query", db, "Record", "age < 3 AND prise > 5", "--count"])
        #expect(hidden.status == 1)
        #expect(
            hidden.stderr
                == "1:13: error: Record has no key 'prise'; did you mean 'price'?\nage < 3 AND prise > 5\n            ^~~~~\n",
            "\(hidden.stderr)")
        let deleted = try runSift(["store", "delete", db, "Record", "prise > 5"])
        #expect(deleted.status == 1 && deleted.stderr.contains("did you mean 'price'?"), "\(deleted.stderr)")
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "2\n")
    }

    @Test func eachOptionsErrorPointsAtItsOwnText() throws {
        let (db, dir) = try store(records)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [([String], String)] = [
            (
                ["--aggregate", "n=@sum.prise"],
                "--aggregate n=@sum.prise: 1:8: error: Record has no key 'prise'; did you mean 'price'?\nn=@sum.prise\n       ^~~~~\n"
            ),
            (
                ["--sort", "prise"],
                "--sort prise: 1:1: error: Record has no key 'prise'; did you mean 'price'?\nprise\n^~~~~\n"
            ),
            (
                ["--properties", "age,agee"],
                "--properties agee: 1:1: error: Record has no key 'agee'; did you mean 'age'?\nagee\n^~~~\n"
            ),
            (
                ["--group-by", "agee", "--aggregate", "n=@count"],
                "--group-by agee: 1:1: error: Record has no key 'agee'; did you mean 'age'?\nagee\n^~~~\n"
            ),
        ]
        for (options, expected) in cases {
            let r = try runSift(["store", "query", db, "Record", "age > 1"] + options)
            #expect(r.status == 1 && r.stderr == expected, "\(options): \(r.stderr)")
        }
        let set = try runSift(["store", "update", db, "Record", "age > 1", "--set-expression", "price=prise + 1"])
        #expect(
            set.status == 1
                && set.stderr.hasPrefix(
                    "--set-expression price: 1:1: error: Record has no key 'prise'; did you mean 'price'?\nprise + 1\n^~~~~"
                ),
            "\(set.stderr)")
        // A row that raises names the object and the expression, with the caret under it.
        let raised = try runSift(["store", "update", db, "Record", "age > 1", "--set-expression", "price=price + 1"])
        #expect(raised.status == 1, "\(raised.stderr)")
        #expect(
            raised.stderr.hasPrefix("--set-expression price: 1:") && raised.stderr.contains("Record 2: ")
                && raised.stderr.contains("in 'price + 1'\nprice + 1\n"),
            "\(raised.stderr)")
    }

    @Test func countOfAKeyCountsItsNonNilValues() throws {
        let (db, dir) = try store(records)
        defer { try? FileManager.default.removeItem(at: dir) }
        let all = try runSift([
            "store", "query", db, "Record", "--aggregate", "n=@count.price", "--aggregate", "m=@count",
        ])
        #expect(all.status == 0 && all.stdout == #"{"n":1,"m":2}"# + "\n", "\(all.stderr)")
        let grouped = try runSift([
            "store", "query", db, "Record", "--group-by", "age", "--aggregate", "n=@count.price",
        ])
        #expect(grouped.stdout == #"{"age":40,"n":1}"# + "\n" + #"{"age":50,"n":0}"# + "\n", "\(grouped.stderr)")
    }

    @Test func aDocumentStoreReadsNilForAMissingKey() throws {
        let (db, dir) = try store(records, document: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try runSift(["store", "query", db, "Record", "nosuchkey == nil", "--count"])
        #expect(r.status == 0 && r.stdout == "2\n", "\(r.stderr)")
    }
}
