// Unit tests for the `sift` command line: exit codes of SiftCommand.run in-process, the JSON
// conventions of JSONReader used for --arg, and the stdout of `sift parse` run as a subprocess.

import Foundation
import SiftJSON
import SiftSyntax
import Testing

@testable import SiftTool

@Suite struct ExitCodeTests {
    @Test func validPredicateExitsZero() {
        #expect(SiftCommand.run(["parse", "a == 1"]) == 0)
        #expect(SiftCommand.run(["parse", "name == %@", "--arg", "\"Ann\""]) == 0)
        #expect(SiftCommand.run(["parse", "--tree", "a == 1 AND b > 2"]) == 0)
        #expect(SiftCommand.run(["parse", "--json", "a == 1"]) == 0)
    }

    @Test func invalidPredicateExitsOne() {
        #expect(SiftCommand.run(["parse", "a =="]) == 1)
        #expect(SiftCommand.run(["parse", "name == 'abc"]) == 1)
        #expect(SiftCommand.run(["parse", "a == %@"]) == 1)
        #expect(SiftCommand.run(["parse", "a == 1", "--arg", "2"]) == 1)
    }

    @Test func usageErrorsExitTwo() {
        #expect(SiftCommand.run(["parse", "--bogus", "a == 1"]) == 2)
        #expect(SiftCommand.run(["nosuchcommand"]) == 2)
        #expect(SiftCommand.run(["parse", "--tree", "--json", "a == 1"]) == 2)
        #expect(SiftCommand.run(["parse", "a == %@", "--arg", "{bad"]) == 2)
    }
}

@Suite struct JSONReaderTests {
    @Test func integersAndDoubles() throws {
        #expect(try JSONReader.parse("1") == .integer(1))
        #expect(try JSONReader.parse("-42") == .integer(-42))
        #expect(try JSONReader.parse("1.0") == .double(1.0))
        #expect(try JSONReader.parse("1e2") == .double(100))
        #expect(try JSONReader.parse("-0.5E-1") == .double(-0.05))
        #expect(try JSONReader.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONReader.parse("9223372036854775808") == .double(9223372036854775808.0))
        #expect(try JSONReader.parse("1").literal == .integer(1))
        #expect(try JSONReader.parse("1.5").literal == .double(1.5))
    }

    @Test func scalars() throws {
        #expect(try JSONReader.parse(" null ") == .null)
        #expect(try JSONReader.parse("true") == .bool(true))
        #expect(try JSONReader.parse("false").literal == .bool(false))
        #expect(try JSONReader.parse(#""a\"b\\c\u00e9\n""#) == .string("a\"b\\cé\n"))
    }

    @Test func dates() throws {
        #expect(try JSONReader.parse(#"{"$date": 0}"#).literal == .date(Date(timeIntervalSince1970: 0)))
        #expect(try JSONReader.parse(#"{"$date": 1.5}"#).literal == .date(Date(timeIntervalSince1970: 1.5)))
        // Only a one-key object is a date.
        #expect(
            try JSONReader.parse(#"{"$date": 0, "x": 1}"#).literal
                == .dictionary(["$date": .integer(0), "x": .integer(1)]))
        #expect(try JSONReader.parse(#"{"$date": "now"}"#).literal == .dictionary(["$date": .string("now")]))
    }

    @Test func nestedObjects() throws {
        let v = try JSONReader.parse(#"{"a": {"b": [1, 2.5, "x", null, true]}, "c": {}}"#)
        #expect(
            v
                == .object([
                    ("a", .object([("b", .array([.integer(1), .double(2.5), .string("x"), .null, .bool(true)]))])),
                    ("c", .object([])),
                ]))
        #expect(
            v.literal
                == .dictionary([
                    "a": .dictionary(["b": .array([.integer(1), .double(2.5), .string("x"), .null, .bool(true)])]),
                    "c": .dictionary([:]),
                ]))
    }

    @Test func sequences() throws {
        let r = JSONReader("1 \"a\"\n[2]")
        #expect(try r.parseSequence() == [.integer(1), .string("a"), .array([.integer(2)])])
    }

    static let malformed: [(String, String)] = [
        ("{\n  \"a\": }", "2:8: error: unexpected '}' where a JSON value was expected"),
        ("[1, 2", "1:6: error: expected ',' or ']', found end of input"),
        ("[1 2]", "1:4: error: expected ',' or ']', found '2'"),
        ("{\"a\" 1}", "1:6: error: expected ':', found '1'"),
        ("{1: 2}", "1:2: error: expected a string key, found '1'"),
        ("", "1:1: error: expected a JSON value, found end of input"),
        ("1 2", "1:3: error: unexpected '2' after the JSON value"),
        ("tru", "1:1: error: unexpected 't' where a JSON value was expected"),
        ("\"abc", "1:1: error: unterminated string"),
        ("[\n\n  é]", "3:3: error: unexpected 'é' where a JSON value was expected"),
    ]

    @Test(arguments: malformed)
    func malformedJSON(_ text: String, _ expected: String) {
        do {
            let v = try JSONReader.parse(text)
            Issue.record("parsed \(text.debugDescription) as \(v)")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func malformedJSONLineAndColumn() {
        do {
            _ = try JSONReader.parse("[\n 1,\n 2,,\n]")
            Issue.record("expected an error")
        } catch {
            #expect(error.location == SourceLocation(line: 3, column: 4))
        }
    }
}

// MARK: - Subprocess

@Suite(.serialized) struct ParseSubprocessTests {
    @Test func canonicalOutput() throws {
        let r = try runSift(["parse", "a = 1 and SOME b.c like[CD] 'x' OR NONE d <> nil"])
        #expect(r.status == 0)
        #expect(r.stdout == "(a == 1 AND ANY b.c LIKE[cd] \"x\") OR (NOT ANY d != nil)\n")
        #expect(r.stderr.isEmpty)
        let withArgs = try runSift([
            "parse", "%K > %@ AND d == %@", "--arg", "\"age\"", "--arg", "18", "--arg", #"{"$date": 978307200}"#,
        ])
        #expect(withArgs.status == 0)
        #expect(withArgs.stdout == "age > 18 AND d == CAST(0.0, \"NSDate\")\n")
    }

    @Test func invalidPredicateGoesToStderr() throws {
        let r = try runSift(["parse", "a == 1 AND"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "1:11: error: expected predicate after 'AND'\na == 1 AND\n          ^\n")
    }

    @Test func treeOutput() throws {
        let r = try runSift(["parse", "--tree", "a == 1 AND NOT b > 2"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "AND @0..<20")
        #expect(lines.count > 3)
        #expect(lines.contains { $0.hasPrefix("  comparison == @0..<6") })
        #expect(lines.contains { $0.hasPrefix("  NOT @11..<20") })
        #expect(lines.contains { $0.hasPrefix("    comparison > @15..<20") })
    }

    @Test func jsonOutput() throws {
        let r = try runSift(["parse", "--json", "a IN {1, 'x'}"])
        #expect(r.status == 0)
        let text = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        #expect(object is [String: Any])
        // The tool's own reader accepts it too.
        #expect(throws: Never.self) { try JSONReader.parse(text) }
        // Decoding it gives the same tree.
        let decoded = try JSONDecoder().decode(PredicateSyntax.self, from: Data(text.utf8))
        #expect(decoded == (try PredicateSyntax.parse("a IN {1, 'x'}")))
    }

    @Test func stdinMode() throws {
        let r = try runSift(["parse"], stdin: "a = 1\nb ==\nSOME c > 2\n")
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines == ["a == 1", "1:5: error: expected expression after '=='", "ANY c > 2", ""])
    }

    @Test func stdinModeAllValid() throws {
        let r = try runSift(["parse"], stdin: "a = 1\nb < 2")
        #expect(r.status == 0)
        #expect(r.stdout == "a == 1\nb < 2\n")
    }

    @Test func usageErrorExitsTwo() throws {
        let r = try runSift(["parse", "--bogus", "a == 1"])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(!r.stderr.isEmpty)
    }
}
