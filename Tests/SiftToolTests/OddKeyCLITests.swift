// Keys that are not identifiers on the command line (issue 16): `sift filter` with `%K` and quoted
// keys on both back-ends, `--sort` by such a key, `sift batch`, `sift sql` (the key is only ever a
// quoted column name) and the `--tree` output, run as subprocesses.

import Foundation
import Testing

@testable import SiftTool

private let logs = """
    [
      {"user-agent": "Mozilla/5.0", "first name": "Ann", "@timestamp": 3, "x\\"; DROP TABLE t; --": 1},
      {"user-agent": "curl/8.0", "first name": "bob", "@timestamp": 1},
      {"user-agent": "mozilla/4.0", "first name": "Cé", "@timestamp": 2, "x\\"; DROP TABLE t; --": 2},
      {"first name": "Dee"}
    ]
    """

@Suite(.serialized) struct OddKeyFilterTests {
    @Test(arguments: ["memory", "sqlite"])
    func theIssueExample(_ backend: String) throws {
        let r = try runSift(
            ["filter", "%K BEGINSWITH[c] %@", "--arg", "\"user-agent\"", "--arg", "\"mozilla\"", "--backend", backend],
            stdin: #"[{"user-agent": "Mozilla/5.0"}, {"user-agent": "curl/8.0"}]"#)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "{\"user-agent\":\"Mozilla/5.0\"}\n")
        #expect(r.stderr.isEmpty)
    }

    @Test(arguments: ["memory", "sqlite"])
    func quotedKeysAndOperatorLikeKeys(_ backend: String) throws {
        let r = try runSift(
            ["filter", #"#"@timestamp" >= 2 AND #"first name" !=[c] 'ANN'"#, "--indices", "--backend", backend],
            stdin: logs)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "2\n")
    }

    @Test(arguments: ["memory", "sqlite"])
    func aKeyThatReadsLikeSQLIsOnlyAKey(_ backend: String) throws {
        let r = try runSift(
            [
                "filter", "%K > 1 OR %K == nil", "--arg", #""x\"; DROP TABLE t; --""#, "--arg",
                #""x\"; DROP TABLE t; --""#,
                "--indices", "--backend", backend,
            ], stdin: logs)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "1\n2\n3\n")
    }

    @Test(arguments: ["memory", "sqlite"])
    func sortByAQuotedKey(_ backend: String) throws {
        // nil first ascending; [c] folds case, so "Mozilla" and "mozilla" compare by what follows.
        let asc = try runSift(
            ["filter", "TRUEPREDICATE", "--sort", #"#"user-agent"[c]"#, "--indices", "--backend", backend], stdin: logs)
        #expect(asc.status == 0, "\(asc.stderr)")
        #expect(asc.stdout == "3\n1\n2\n0\n")
        let desc = try runSift(
            ["filter", "TRUEPREDICATE", "--sort", #"#"@timestamp":desc"#, "--indices", "--backend", backend],
            stdin: logs)
        #expect(desc.stdout == "0\n2\n1\n3\n")
        let single = try runSift(
            ["filter", "TRUEPREDICATE", "--sort", "#'first name'", "--indices", "--backend", backend], stdin: logs)
        #expect(single.stdout == "0\n2\n3\n1\n")
    }

    @Test func sortKeyErrorsPointIntoTheKey() throws {
        let r = try runSift(["filter", "TRUEPREDICATE", "--sort", #"#"user-agent"#], stdin: logs)
        #expect(r.status == 2)
        #expect(r.stderr.contains("unterminated string literal"), "\(r.stderr)")
    }
}

@Suite(.serialized) struct OddKeyBatchTests {
    static let input = """
        {"id": 1, "format": "%K == %@", "args": ["first name", "Ann"], "objects": [{"first name": "Ann"}, {"first name": "Bob"}, {}]}
        {"id": 2, "format": "#\\"@timestamp\\" > 1 AND café == 'ja'", "objects": [{"@timestamp": 2, "café": "ja"}, {"@timestamp": 0, "café": "ja"}]}
        {"id": 3, "format": "%K.@count == 2", "args": ["line items"], "objects": [{"line items": [{"a": 1}, {"a": 2}]}, {"line items": []}]}
        {"id": 4, "format": "kids.@cout > 1"}
        """

    @Test(arguments: ["memory", "sqlite"])
    func casesWithOddKeys(_ backend: String) throws {
        let r = try runSift(["batch", "--backend", backend], stdin: Self.input)
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(
            r.stdout == """
                {"id":1,"ok":true,"canonical":"#\\"first name\\" == \\"Ann\\"","results":[true,false,false]}
                {"id":2,"ok":true,"canonical":"#\\"@timestamp\\" > 1 AND café == \\"ja\\"","results":[true,false]}
                {"id":3,"ok":true,"canonical":"#\\"line items\\".@count == 2","results":[true,false]}
                {"id":4,"ok":false,"stage":"parse","error":"1:6: error: unknown collection operator '@cout'; write '#\\"@cout\\"' for a key that begins with '@'"}

                """)
    }
}

@Suite(.serialized) struct OddKeySQLTests {
    @Test func keysAreQuotedColumnNames() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let schema = dir.appendingPathComponent("log.schema.json")
        try Data(
            #"""
            {"entities": [{"name": "Log", "table": "log t", "primaryKey": "id", "attributes": [
              {"name": "user-agent", "column": "user-agent", "type": "string"},
              {"name": "x\"; DROP TABLE t; --", "column": "x\"; DROP TABLE t; --", "type": "integer"}], "relationships": []}]}
            """#.utf8
        ).write(to: schema)
        let r = try runSift([
            "sql", "%K BEGINSWITH %@ AND %K > 1", "--arg", #""user-agent""#, "--arg", #""moz""#,
            "--arg", #""x\"; DROP TABLE t; --""#, "--schema", schema.path, "--entity", "Log",
            "--sort", #"#"user-agent":desc"#,
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let sql = String(r.stdout.prefix { $0 != "\n" })
        #expect(sql.contains(#"t0."user-agent""#), "\(sql)")
        #expect(sql.contains(#"t0."x""; DROP TABLE t; --" > ?"#), "\(sql)")
        #expect(sql.hasSuffix(#"ORDER BY t0."user-agent" DESC, t0."id" ASC"#), "\(sql)")
    }
}

@Suite(.serialized) struct OddKeyTreeTests {
    @Test func treeSpellsComponentsAsThePredicateDoes() throws {
        let r = try runSift(["parse", "--tree", #"%K == #"a.b""#, "--arg", #""a b.c""#])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix(#"  keyPath #"a b".c @"#) }, "\(r.stdout)")
        // #"a.b" is one key with a dot in it, not a string and not two keys.
        #expect(lines.contains { $0.hasPrefix(#"  keyPath #"a.b" @"#) }, "\(r.stdout)")
    }
}
