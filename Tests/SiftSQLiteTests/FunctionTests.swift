// Differential tests of Sift's SQLite functions and collations against SiftText, the text layer the
// in-memory evaluator uses: seeded random strings over the hard cases (composed/decomposed accents,
// ß, Turkish İ, full-width forms, combining marks, empty strings), every option set, NULLs,
// non-text operands, pattern errors and the regex limit.

import CSQLite
import Dispatch
import Foundation
import SiftSQL
import SiftSQLite
import SiftTestSupport
import SiftText
import Synchronization
import Testing

/// A random string over pieces chosen to stress folding and grapheme boundaries.
private func randomString(_ rng: inout SplitMix64) -> String {
    let pieces = [
        "a", "A", "b", "e", "E", "é", "e\u{301}", "É", "E\u{301}", "ß", "SS", "ss", "İ", "i", "I", "ı",
        "Ａ", "ａ", "ｂ", "\u{301}", "\u{308}", "o", "ö", "o\u{308}", "q\u{301}", "q", " ", "x", "Z", "ﬁ", "fi",
    ]
    let length = Int(rng.next() % 5)
    return (0..<length).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
}

private func integer(_ v: SQLValue?) -> Int64? {
    if case .integer(let i)? = v { return i }
    return nil
}

/// The option sets tried: every combination of c, d, n, and l on its own.
private let optionSets: [UInt8] = Array(0...7) + [8, 9, 11]

@Suite struct FunctionTests {
    @Test func textFunctionsAgreeWithSiftTextOnRandomPairs() throws {
        let db = try SQLiteConnection()
        let statement = try db.prepare(
            """
            SELECT sift_text(0, ?1, ?2, ?3), sift_text(1, ?1, ?2, ?3), sift_text(2, ?1, ?2, ?3),
                   sift_text(3, ?1, ?2, ?3), sift_compare(?1, ?2, ?3)
            """)
        var rng = SplitMix64(seed: 0x5EED_0001)
        var checked = 0
        for _ in 0..<2_000 {
            var a = randomString(&rng)
            let b = randomString(&rng)
            // Often make `a` extend `b` so prefix/suffix/contains answers are not almost always false.
            switch rng.next() % 4 {
            case 0: a = b + a
            case 1: a = a + b
            default: break
            }
            let raw = optionSets[Int(rng.next() % UInt64(optionSets.count))]
            let options = TextOptions(rawValue: raw)
            try statement.reset()
            try statement.bind([.text(a), .text(b), .integer(Int64(raw))])
            #expect(try statement.step())
            let row = statement.row()
            let context =
                "a=\(a.unicodeScalars.map { String($0.value, radix: 16) }) b=\(b.unicodeScalars.map { String($0.value, radix: 16) }) options=\(raw)"
            #expect(integer(row[0]) == (textEqual(a, b, options) ? 1 : 0), "== \(context)")
            #expect(integer(row[1]) == (textBeginsWith(a, b, options) ? 1 : 0), "BEGINSWITH \(context)")
            #expect(integer(row[2]) == (textEndsWith(a, b, options) ? 1 : 0), "ENDSWITH \(context)")
            #expect(integer(row[3]) == (textContains(a, b, options) ? 1 : 0), "CONTAINS \(context)")
            #expect(integer(row[4]) == Int64(textCompare(a, b, options)), "compare \(context)")
            checked += 1
        }
        #expect(checked == 2_000)
    }

    @Test func likeAndMatchesAgreeWithSiftTextOnRandomPairs() throws {
        let db = try SQLiteConnection()
        let statement = try db.prepare("SELECT sift_text(4, ?1, ?2, ?4), sift_text(5, ?1, ?3, ?4)")
        var rng = SplitMix64(seed: 0x5EED_0002)
        for _ in 0..<2_000 {
            let s = randomString(&rng)
            // A LIKE pattern: pieces of a random string with wildcards sprinkled in.
            var pattern = ""
            for ch in randomString(&rng) + s {
                switch rng.next() % 6 {
                case 0: pattern += "*"
                case 1: pattern += "?"
                case 2: continue
                default: pattern.append(ch)
                }
            }
            let regex =
                NSRegularExpression.escapedPattern(for: String(s.prefix(2))) + (rng.next() % 2 == 0 ? ".*" : "\\X?")
            let raw = optionSets[Int(rng.next() % UInt64(optionSets.count))]
            let options = TextOptions(rawValue: raw)
            try statement.reset()
            try statement.bind([.text(s), .text(pattern), .text(regex), .integer(Int64(raw))])
            #expect(try statement.step())
            let row = statement.row()
            let context =
                "s=\(s.debugDescription) pattern=\(pattern.debugDescription) regex=\(regex.debugDescription) options=\(raw)"
            #expect(integer(row[0]) == (try LikePattern(pattern, options).matches(s) ? 1 : 0), "LIKE \(context)")
            #expect(
                integer(row[1]) == (try RegexPattern.compile(regex, options).matches(s) ? 1 : 0), "MATCHES \(context)")
        }
    }

    @Test func constantNeedlesAreReusedAcrossRows() throws {
        // One call site, many rows: the cached needle must give each row the answer SiftText gives.
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
        var rng = SplitMix64(seed: 0x5EED_0003)
        var values: [String] = []
        try db.transaction { () throws(SQLiteError) in
            let insert = try db.prepare("INSERT INTO t(id, s) VALUES (?, ?)")
            for i in 0..<500 {
                let s = randomString(&rng)
                values.append(s)
                try insert.reset()
                try insert.bind([.integer(Int64(i)), .text(s)])
                _ = try insert.step()
            }
        }
        for (op, needle) in [(1, "e"), (3, "ss"), (4, "*E?"), (5, "[a-e].*")] {
            let rows = try db.query("SELECT id FROM t WHERE sift_text(\(op), s, ?, 3) ORDER BY id", [.text(needle)])
            let ids = rows.compactMap { integer($0.first) }.map(Int.init)
            let expected = try values.indices.filter { i -> Bool in
                let s = values[i]
                let o: TextOptions = [.caseInsensitive, .diacriticInsensitive]
                switch op {
                case 1: return textBeginsWith(s, needle, o)
                case 3: return textContains(s, needle, o)
                case 4: return try LikePattern(needle, o).matches(s)
                default: return try RegexPattern.compile(needle, o).matches(s)
                }
            }
            #expect(ids == expected, "op \(op) needle \(needle)")
        }
    }

    @Test func nullsPropagate() throws {
        let db = try SQLiteConnection()
        let row = try db.query(
            """
            SELECT sift_text(0, NULL, 'a', 0), sift_text(1, 'a', NULL, 0), sift_text(4, NULL, '*', 0),
                   sift_text(5, 'a', NULL, 0), sift_compare(NULL, 'a', 0), sift_compare(1, NULL, 0),
                   sift_text(0, NULL, NULL, 0)
            """)[0]
        #expect(row == Array(repeating: SQLValue.null, count: 7))
    }

    @Test func nonTextOperandsFollowTheEvaluator() throws {
        let db = try SQLiteConnection()
        let row = try db.query(
            """
            SELECT sift_text(0, 1, 1.0, 0), sift_text(0, 1, '1', 0), sift_text(0, x'0102', x'0102', 0),
                   sift_text(0, x'01', 1, 0), sift_text(0, 2, 3, 1), sift_text(1, 5, 'a', 0),
                   sift_text(3, 'abc', 2, 0), sift_text(4, 1, '*', 0), sift_text(5, 'a', x'00', 0),
                   sift_compare(1, 2.5, 0), sift_compare(3.0, 3, 0), sift_compare('a', 1, 0),
                   sift_compare(9007199254740993, 9007199254740992.0, 0), sift_compare(x'01', x'0100', 0),
                   sift_compare(x'01', 1, 0), sift_compare('b', 'a', 0)
            """)[0]
        let expected: [SQLValue] = [
            .integer(1), .integer(0), .integer(1),
            .integer(0), .integer(0), .null,
            .null, .null, .null,
            .integer(-1), .integer(0), .null,
            .integer(1), .integer(-1),
            .null, .integer(1),
        ]
        #expect(row == expected)
    }

    @Test func patternErrorsCarryTheEvaluatorsID() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(s TEXT); INSERT INTO t VALUES ('abc')")
        for (sql, id) in [
            ("SELECT s FROM t WHERE sift_text(4, s, 'ab\\', 0)", "invalid-like-pattern"),
            ("SELECT s FROM t WHERE sift_text(5, s, 'a(', 0)", "invalid-regex"),
        ] {
            do {
                _ = try db.query(sql)
                Issue.record("no error for \(sql)")
            } catch {
                #expect(error.siftErrorID == id, "\(error)")
                #expect(error.message.hasPrefix(id + ": "))
                #expect(error.sql == sql)
            }
        }
    }

    @Test func regexLimitIsAnErrorInMilliseconds() throws {
        let db = try SQLiteConnection()
        let start = ContinuousClock.now
        do {
            _ = try db.query("SELECT sift_text(5, ?, '(a+)+$', 0)", [.text(String(repeating: "a", count: 32) + "!")])
            Issue.record("no error")
        } catch {
            #expect(error.siftErrorID == "regex-limit", "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func collationsOrderLikeTextCompare() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(s TEXT)")
        var rng = SplitMix64(seed: 0x5EED_0004)
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        for _ in 0..<400 {
            try insert.reset()
            try insert.bind([.text(randomString(&rng))])
            _ = try insert.step()
        }
        for (name, options) in [
            ("sift_c", TextOptions.caseInsensitive), ("sift_d", .diacriticInsensitive),
            ("sift_cd", [.caseInsensitive, .diacriticInsensitive]),
        ] {
            let sorted = try db.query("SELECT s FROM t ORDER BY s COLLATE \(name)").map { row -> String in
                guard case .text(let s) = row[0] else { return "" }
                return s
            }
            #expect(sorted.count == 400)
            for (x, y) in zip(sorted, sorted.dropFirst()) {
                #expect(textCompare(x, y, options) <= 0, "\(name): \(x.debugDescription) before \(y.debugDescription)")
            }
            // Equality under the collation is textEqual.
            let equalCount = try db.query("SELECT count(*) FROM t WHERE s = 'SS' COLLATE \(name)")
            let expected = sorted.filter { textCompare($0, "SS", options) == 0 }.count
            #expect(integer(equalCount.first?.first) == Int64(expected))
        }
    }

    @Test func registerWorksOnARawHandle() throws {
        var raw: OpaquePointer?
        #expect(sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        guard let db = raw else { return }
        defer { sqlite3_close_v2(db) }
        try SQLiteFunctions.register(on: db)
        var statement: OpaquePointer?
        #expect(
            sqlite3_prepare_v2(
                db, "SELECT sift_text(1, 'José', 'JO', 3), 'b' < 'A' COLLATE sift_c", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(sqlite3_column_int(statement, 0) == 1)
        #expect(sqlite3_column_int(statement, 1) == 0)
    }

    @Test func oneConnectionServesSeveralThreads() throws {
        // FULLMUTEX: concurrent `query` calls on one connection each get their own statement.
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(s TEXT); INSERT INTO t VALUES ('Jörg'), ('joanna'), ('Bob'), ('JOSÉ')")
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<100 {
                let rows = try? db.query(
                    "SELECT count(*) FROM t WHERE sift_text(1, s, ?, 3)", [.text(worker % 2 == 0 ? "jo" : "bo")])
                let expected: Int64 = worker % 2 == 0 ? 3 : 1
                if rows != [[.integer(expected)]] { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func connectionBasics() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(x); CREATE INDEX tx ON t(x)")
        try db.transaction { () throws(SQLiteError) in
            for v: SQLValue in [
                .integer(1), .double(2.5), .text("é"), .blob([0, 1]), .blob([]), .null, .text(""), .text("a\u{0}b"),
            ] {
                let s = try db.prepare("INSERT INTO t VALUES (?)")
                try s.bind([v])
                _ = try s.step()
            }
        }
        let values = try db.query("SELECT x FROM t ORDER BY rowid").map { $0[0] }
        #expect(
            values == [
                .integer(1), .double(2.5), .text("é"), .blob([0, 1]), .blob([]), .null, .text(""), .text("a\u{0}b"),
            ])
        let plan = try db.queryPlan("SELECT x FROM t WHERE x = ?", [.integer(1)])
        #expect(plan.contains { $0.contains("USING") && $0.contains("INDEX tx") }, "\(plan)")
        // A failing transaction rolls back.
        do {
            try db.transaction { () throws(SQLiteError) in
                try db.execute("INSERT INTO t VALUES (99)")
                try db.execute("SELEC 1")
            }
            Issue.record("no error")
        } catch {
            #expect(error.sql == "SELEC 1")
        }
        #expect(try db.query("SELECT count(*) FROM t WHERE x = 99") == [[.integer(0)]])
    }
}
