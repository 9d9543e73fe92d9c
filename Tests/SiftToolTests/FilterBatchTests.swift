// `sift filter` and `sift batch`, run as a subprocess (the built `sift` beside the test bundle)
// with standard input fed from the test: exact stdout, stderr and exit status.

import Foundation
import SiftJSON
import Testing

@testable import SiftTool

/// Writes `text` to a fresh temporary file and returns its path.
private func tempFile(_ text: String, _ name: String = "data.json") throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
}

private let people = """
    [
      {"name": "Ann", "age": 41, "city": "Oslo"},
      {"name": "Bo", "age": 7},
      {"name": "Cé", "age": null, "city": "Paris"},
      {"name": "Dan", "age": 30, "city": "oslo", "score": 1.5}
    ]
    """

private let peopleNDJSON = """
    {"name": "Ann", "age": 41, "city": "Oslo"}
    {"name": "Bo", "age": 7}
    {"name": "Cé", "age": null, "city": "Paris"}
    {"name": "Dan", "age": 30, "city": "oslo", "score": 1.5}

    """

@Suite(.serialized) struct FilterTests {
    @Test func arrayOnStdin() throws {
        let r = try runSift(["filter", "age >= 18"], stdin: people)
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                {"name":"Ann","age":41,"city":"Oslo"}
                {"name":"Dan","age":30,"city":"oslo","score":1.5}

                """)
        #expect(r.stderr.isEmpty)
    }

    @Test func ndjsonFromFile() throws {
        let path = try tempFile(peopleNDJSON, "people.ndjson")
        let r = try runSift(["filter", "city ==[c] 'OSLO'", path])
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                {"name":"Ann","age":41,"city":"Oslo"}
                {"name":"Dan","age":30,"city":"oslo","score":1.5}

                """)
        // "-" is standard input; concatenated values need no newlines.
        let dash = try runSift(["filter", "age < 10", "-"], stdin: #"{"age":41}{"age":7,"s":"a\"b\n"} {"age":3}"#)
        #expect(dash.status == 0)
        #expect(dash.stdout == "{\"age\":7,\"s\":\"a\\\"b\\n\"}\n{\"age\":3}\n")
    }

    @Test func scalarRecords() throws {
        let r = try runSift(["filter", "SELF > 2"], stdin: "[1, 2, 3, 2.5, \"x\"]")
        // "x" > 2 is an error in strict mode; --lenient makes it false.
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        let lenient = try runSift(["filter", "--lenient", "SELF > 2"], stdin: "[1, 2, 3, 2.5, \"x\"]")
        #expect(lenient.status == 0)
        #expect(lenient.stdout == "3\n2.5\n")
    }

    @Test func noMatchesExitsZero() throws {
        let r = try runSift(["filter", "age > 100"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        let empty = try runSift(["filter", "age > 100"], stdin: "")
        #expect(empty.status == 0)
        #expect(empty.stdout.isEmpty)
    }

    @Test func count() throws {
        let r = try runSift(["filter", "--count", "age != nil"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "3\n")
        let none = try runSift(["filter", "--count", "age > 100"], stdin: peopleNDJSON)
        #expect(none.stdout == "0\n")
    }

    @Test func indices() throws {
        let r = try runSift(["filter", "--indices", "city != nil"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "0\n2\n3\n")
    }

    @Test func sortAscendingPutsNilFirst() throws {
        let r = try runSift(["filter", "TRUEPREDICATE", "--sort", "age", "--indices"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "2\n1\n3\n0\n")
        let records = try runSift(["filter", "name != 'Bo'", "--sort", "age"], stdin: people)
        #expect(
            records.stdout == """
                {"name":"Cé","age":null,"city":"Paris"}
                {"name":"Dan","age":30,"city":"oslo","score":1.5}
                {"name":"Ann","age":41,"city":"Oslo"}

                """)
    }

    @Test func sortDescendingPutsNilLast() throws {
        let r = try runSift(["filter", "TRUEPREDICATE", "--sort", "age:desc", "--indices"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "0\n3\n1\n2\n")
    }

    @Test func sortIsStableAndMultiKey() throws {
        // Case-insensitive city: Oslo == oslo, so the tie keeps input order, then age breaks it when asked.
        let stable = try runSift(["filter", "city != nil", "--sort", "city[c]", "--indices"], stdin: people)
        #expect(stable.stdout == "0\n3\n2\n")
        let twoKeys = try runSift(
            ["filter", "city != nil", "--sort", "city[c]", "--sort", "age", "--indices"], stdin: people)
        #expect(twoKeys.stdout == "3\n0\n2\n")
        // Without [c], "Oslo" < "Paris" < "oslo" in scalar order.
        let exact = try runSift(["filter", "city != nil", "--sort", "city:desc", "--indices"], stdin: people)
        #expect(exact.stdout == "3\n2\n0\n")
    }

    @Test func variables() throws {
        let r = try runSift(
            ["filter", "age > $min AND city IN $cities", "--var", "min=18", "--var", #"cities=["Oslo", "Paris"]"#],
            stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "{\"name\":\"Ann\",\"age\":41,\"city\":\"Oslo\"}\n")
        let unbound = try runSift(["filter", "age > $min"], stdin: people)
        #expect(unbound.status == 1)
        #expect(unbound.stdout.isEmpty)
        #expect(unbound.stderr.hasPrefix("record 0: 1:7: error: variable '$min' is not bound\n"))
    }

    @Test func arguments() throws {
        let r = try runSift(["filter", "%K == %@", "--arg", "\"name\"", "--arg", "\"Bo\"", "--indices"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout == "1\n")
    }

    @Test func strictErrorLeavesNoOutput() throws {
        let records = #"[{"v": 1}, {"v": 5}, {"v": "x"}, {"v": 9}]"#
        let strict = try runSift(["filter", "v > 2"], stdin: records)
        #expect(strict.status == 1)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr == "record 2: 1:1: error: cannot order \"x\" and 2\nv > 2\n^~~~~\n")
        let lenient = try runSift(["filter", "--lenient", "v > 2"], stdin: records)
        #expect(lenient.status == 0)
        #expect(lenient.stdout == "{\"v\":5}\n{\"v\":9}\n")
        #expect(lenient.stderr.isEmpty)
    }

    @Test func invalidPredicate() throws {
        let r = try runSift(["filter", "age >= AND"], stdin: people)
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("1:8: error: ") == true)
        #expect(lines.dropFirst().first == "age >= AND")
        #expect(lines.last == "       ^~~")
    }

    @Test func invalidJSONReportsLineAndColumn() throws {
        let r = try runSift(["filter", "a == 1"], stdin: "{\"a\": 1}\n{\"a\": 2,}\n")
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "<stdin>:2:9: error: expected a string key, found '}'\n")
        let path = try tempFile("[\n  {\"a\": 1},\n  {\"a\" 2}\n]", "bad.json")
        let file = try runSift(["filter", "a == 1", path])
        #expect(file.status == 1)
        #expect(file.stdout.isEmpty)
        #expect(file.stderr == "\(path):3:8: error: expected ':', found '2'\n")
    }

    @Test func unreadableFile() throws {
        let r = try runSift(["filter", "a == 1", "/nonexistent/sift/data.json"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "/nonexistent/sift/data.json: error: no such file\n")
    }

    @Test func usageErrorsExitTwo() throws {
        for args in [
            ["filter"],
            ["filter", "a == 1", "--var", "min"],
            ["filter", "a == 1", "--var", "min={"],
            ["filter", "a == 1", "--var", "1x=2"],
            ["filter", "a == %@", "--arg", "{bad"],
            ["filter", "a == 1", "--count", "--indices"],
            ["filter", "a == 1", "--sort", "a ==:desc"],
            ["filter", "a == 1", "--bogus"],
        ] {
            let r = try runSift(args, stdin: people)
            #expect(r.status == 2, "\(args)")
            #expect(r.stdout.isEmpty, "\(args)")
            #expect(!r.stderr.isEmpty, "\(args)")
        }
        let bad = try runSift(["filter", "a == 1", "--var", "min={"], stdin: people)
        #expect(bad.stderr.hasPrefix("Error: --var min: 1:2: error: "))
    }

    @Test func stats() throws {
        let r = try runSift(["filter", "--stats", "--sort", "age", "age > 10"], stdin: people)
        #expect(r.status == 0)
        #expect(r.stdout.split(separator: "\n").count == 2)
        #expect(r.stderr.hasPrefix("4 records read, 2 matched; read "))
        #expect(r.stderr.contains(" ms, compile "))
        #expect(r.stderr.contains(" ms, evaluate "))
        #expect(r.stderr.hasSuffix(" ms\n"))
        #expect(r.stderr.contains(", sort "))
    }

    @Test func bundledSample() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/people.json").path
        let r = try runSift([
            "filter", "--indices", #"age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao""#, path,
        ])
        #expect(r.status == 0)
        #expect(r.stdout == "0\n6\n15\n")
        let total = try runSift(["filter", "--count", "TRUEPREDICATE", path])
        #expect(total.stdout == "30\n")
    }
}

@Suite(.serialized) struct BatchTests {
    @Test func evaluateCases() throws {
        let input = """
            {"id": 1, "format": "age > %@", "args": [18], "objects": [{"age": 41}, {"age": 7}, {"age": "x"}, {}]}
            {"id": "vars", "format": "name BEGINSWITH[cd] $p", "vars": {"p": "e"}, "objects": [{"name": "Émile"}, {"name": "Zoë"}]}
            {"id": {"k": [1]}, "format": "SELF > 1", "objects": [1, 2, "s"], "lenient": true}
            """
        let r = try runSift(["batch"], stdin: input)
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(
            r.stdout == """
                {"id":1,"ok":true,"canonical":"age > 18","results":[true,false,{"error":"incomparable-values: 1:1: error: cannot order \\"x\\" and 18"},false]}
                {"id":"vars","ok":true,"canonical":"name BEGINSWITH[cd] $p","results":[true,false]}
                {"id":{"k":[1]},"ok":true,"canonical":"SELF > 1","results":[false,true,false]}

                """)
    }

    @Test func parseFailureAndParseMode() throws {
        let input = """
            {"id": "bad", "format": "a =="}

            {"id": "p", "format": "a = 1 and b < 2", "mode": "parse", "objects": [{"a": 1}]}
            {"id": "argc", "format": "a == %@"}
            """
        let r = try runSift(["batch"], stdin: input)
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                {"id":"bad","ok":false,"stage":"parse","error":"1:5: error: expected expression after '=='"}
                {"id":"p","ok":true,"canonical":"a == 1 AND b < 2"}
                {"id":"argc","ok":false,"stage":"parse","error":"1:6: error: \(try missingArgumentMessage())"}

                """)
    }

    /// The parser's own message for a `%@` without an argument (so this test does not restate it).
    private func missingArgumentMessage() throws -> String {
        let r = try runSift(["parse", "a == %@"])
        let first = try #require(r.stderr.split(separator: "\n").first)
        return String(first.dropFirst("1:6: error: ".count))
    }

    @Test func inputFailures() throws {
        let input = """
            not json
            [1, 2]
            {"id": 7}
            {"id": 8, "format": 3}
            {"id": 9, "format": "a = 1", "args": {"x": 1}}
            {"id": 10, "format": "a = 1", "objects": 5}
            {"id": 11, "format": "a = 1", "mode": "run"}
            {"id": 12, "format": "a = 1", "vars": []}
            {"id": 13, "format": "a = 1", "lenient": "yes"}
            {"format": "a = 1", "objects": [{"a": 1}], "expected": [true]}
            """
        let r = try runSift(["batch"], stdin: input)
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines == [
                #"{"id":null,"ok":false,"stage":"input","error":"invalid JSON: 1:1: error: unexpected 'n' where a JSON value was expected"}"#,
                #"{"id":null,"ok":false,"stage":"input","error":"a case must be a JSON object"}"#,
                #"{"id":7,"ok":false,"stage":"input","error":"missing \"format\""}"#,
                #"{"id":8,"ok":false,"stage":"input","error":"\"format\" must be a string"}"#,
                #"{"id":9,"ok":false,"stage":"input","error":"\"args\" must be an array"}"#,
                #"{"id":10,"ok":false,"stage":"input","error":"\"objects\" must be an array"}"#,
                #"{"id":11,"ok":false,"stage":"input","error":"\"mode\" must be \"parse\" or \"eval\""}"#,
                #"{"id":12,"ok":false,"stage":"input","error":"\"vars\" must be an object"}"#,
                #"{"id":13,"ok":false,"stage":"input","error":"\"lenient\" must be true or false"}"#,
                // Unknown keys are the caller's own (expected results…): ignored.
                #"{"id":null,"ok":true,"canonical":"a == 1","results":[true]}"#,
                "",
            ])
    }

    @Test func defaultObjectsFromData() throws {
        let path = try tempFile(peopleNDJSON, "people.ndjson")
        let input = """
            {"id": 1, "format": "age >= 18"}
            {"id": 2, "format": "age >= 18", "objects": [{"age": 1}]}
            {"id": 3, "format": "city ==[c] 'oslo'", "objects": []}
            """
        let r = try runSift(["batch", "--data", path], stdin: input)
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                {"id":1,"ok":true,"canonical":"age >= 18","results":[true,false,false,true]}
                {"id":2,"ok":true,"canonical":"age >= 18","results":[false]}
                {"id":3,"ok":true,"canonical":"city ==[c] \\"oslo\\"","results":[]}

                """)
        // An array file works too; without --data a case has no objects.
        let arrayPath = try tempFile(people)
        let fromArray = try runSift(["batch", "--data", arrayPath], stdin: #"{"id": 1, "format": "city != nil"}"#)
        #expect(
            fromArray.stdout
                == "{\"id\":1,\"ok\":true,\"canonical\":\"city != nil\",\"results\":[true,false,true,true]}\n")
        let noData = try runSift(["batch"], stdin: #"{"id": 1, "format": "city != nil"}"#)
        #expect(noData.stdout == "{\"id\":1,\"ok\":true,\"canonical\":\"city != nil\",\"results\":[]}\n")
    }

    @Test func badDataExitsOne() throws {
        let missing = try runSift(["batch", "--data", "/nonexistent/sift/data.json"], stdin: #"{"format": "a = 1"}"#)
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr == "/nonexistent/sift/data.json: error: no such file\n")
        let path = try tempFile("[1, 2", "bad.json")
        let malformed = try runSift(["batch", "--data", path], stdin: #"{"format": "a = 1"}"#)
        #expect(malformed.status == 1)
        #expect(malformed.stdout.isEmpty)
        #expect(malformed.stderr == "\(path):1:6: error: expected ',' or ']', found end of input\n")
    }

    @Test func emptyInput() throws {
        let r = try runSift(["batch"], stdin: "\n  \n")
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
    }
}

@Suite struct FilterInProcessTests {
    @Test func usageErrorsExitTwoInProcess() {
        #expect(SiftCommand.run(["filter", "a == 1", "--var", "=1"]) == 2)
        #expect(SiftCommand.run(["filter", "a == 1", "--count", "--indices"]) == 2)
        #expect(SiftCommand.run(["batch", "extra"]) == 2)
    }

    @Test func recordsAutoDetection() throws {
        #expect(
            try Records.parse(Array("  [1, {\"a\": 2}]".utf8), name: "x") == [
                .integer(1), .object([("a", .integer(2))]),
            ])
        #expect(try Records.parse(Array("[1]\n".utf8), name: "x") == [.integer(1)])
        #expect(
            try Records.parse(Array("1\n{\"a\": 2}\n\"s\"".utf8), name: "x") == [
                .integer(1), .object([("a", .integer(2))]), .string("s"),
            ])
        #expect(try Records.parse([], name: "x") == [])
        #expect(throws: RecordsError.self) { try Records.parse(Array("[1] [2]".utf8), name: "x") }
    }
}
