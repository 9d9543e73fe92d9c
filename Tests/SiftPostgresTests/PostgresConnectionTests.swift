// The PostgreSQL driver against a real server (the throwaway cluster of scripts/with-postgres.sh):
// every value kind through a bound parameter and back, each column type read as documented,
// COPY of text that needs escaping, and the typed errors a caller branches on. A value that came
// back equal only to the eye (a zero that lost its sign, a double rounded to 15 digits) fails here.

import SiftPostgres
import SiftSQL
import SiftTestSupport
import Testing

/// Whether two values are the same, doubles compared bit for bit (so -0.0 differs from 0.0 and
/// NaN equals NaN).
private func identical(_ a: SQLValue, _ b: SQLValue) -> Bool {
    if case .double(let x) = a, case .double(let y) = b {
        return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
    }
    return a == b
}

/// Every byte value, for blobs.
private let allBytes = (0...255).map { UInt8($0) }

/// Text that needs escaping somewhere: COPY's specials, SQL quotes, accents, emoji.
private let trickyTexts: [String] = [
    "", "plain", "José Müller", "Straße", "e\u{301}", "👩‍👩‍👧 🇧🇷", "it's", "say \"hi\"",
    #"back\slash"#, #"\N"#, #"\."#, "\\", "tab\there", "line\nbreak", "carriage\rreturn", "\r\n",
    "trailing tab\t", "\t", "\n", "bell\u{7}", "del\u{7f}", "nbsp\u{a0}", "$1", "--", "; DROP TABLE x",
]

@Suite struct PostgresConnectionTests {
    @Test func everyValueKindRoundTripsThroughABoundParameter() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        var values: [SQLValue] = [
            .null,
            .integer(0), .integer(1), .integer(-1), .integer(.min), .integer(.max),
            .double(0.0), .double(-0.0), .double(1e-300), .double(.greatestFiniteMagnitude),
            .double(-.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .double(.leastNormalMagnitude),
            .double(0.1), .double(1.0 / 3.0), .double(123456789.123456789), .double(1e16), .double(-2.5e-7),
            .double(.infinity), .double(-.infinity), .double(.nan),
            .blob([]), .blob(allBytes), .blob([0]), .blob([0x5c, 0x78]),
        ]
        values += trickyTexts.map(SQLValue.text)
        for value in values {
            let rows = try scratch.connection.execute("SELECT $1", [value])
            #expect(rows.count == 1)
            let back = rows.first?.first ?? .text("<no row>")
            #expect(identical(back, value), "sent \(value), got \(back)")
        }
        // All at once, in one statement.
        let placeholders = (1...values.count).map { "$\($0)" }.joined(separator: ", ")
        let row = try scratch.connection.execute("SELECT \(placeholders)", values).first ?? []
        #expect(row.count == values.count)
        for (sent, got) in zip(values, row) { #expect(identical(sent, got), "sent \(sent), got \(got)") }
    }

    @Test func parametersAreTypedForTheServer() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        let types = try c.execute(
            "SELECT pg_typeof($1)::text, pg_typeof($2)::text, pg_typeof($3)::text, pg_typeof($4)::text",
            [.integer(1), .double(1), .text("1"), .blob([1])])
        #expect(types == [[.text("bigint"), .text("double precision"), .text("text"), .text("bytea")]])
        // A NULL takes the type its use asks for.
        #expect(try c.execute("SELECT $1::bigint + 1", [.null]) == [[.null]])
        #expect(
            try c.execute("SELECT $1::bigint + 1, $2 || '!'", [.integer(41), .text("hi")]) == [
                [.integer(42), .text("hi!")]
            ])
        // Integers compare with every integer column type.
        try c.executeScript("CREATE TABLE n(a smallint, b integer, c bigint); INSERT INTO n VALUES (1, 2, 3)")
        #expect(
            try c.execute(
                "SELECT a, b, c FROM n WHERE a = $1 AND b = $2 AND c = $3", [.integer(1), .integer(2), .integer(3)])
                == [[.integer(1), .integer(2), .integer(3)]])
        #expect(
            try c.execute(SQLQuery(sql: "SELECT c FROM n WHERE a < $1", bindings: [.integer(5)])) == [[.integer(3)]])
    }

    @Test func typedColumnsReadBackAsDocumented() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript(
            """
            CREATE TABLE typed(
                i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, num numeric,
                t text, vc varchar(20), b boolean, by bytea, ts timestamptz, d date, j jsonb, u uuid, o oid);
            INSERT INTO typed VALUES (
                -32768, 2147483647, -9223372036854775808, 0.1, '-0', 12345.6789,
                'Jörg', 'vc', true, '\\x00ff10'::bytea, '2024-01-02 03:04:05+00', '2024-01-02', '{"a": 1}',
                'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 42);
            INSERT INTO typed(b, f4, f8, num) VALUES (false, 'Infinity', '-Infinity', 'NaN');
            INSERT INTO typed(f8, num) VALUES ('NaN', '1e400');
            INSERT INTO typed(num) VALUES (0.000);
            INSERT INTO typed(num) VALUES ('-Infinity');
            INSERT INTO typed(num) VALUES ('1e-400');
            INSERT INTO typed(by) VALUES (''::bytea);
            """)
        try c.executeScript("SET TIME ZONE 'UTC'")
        let rows = try c.execute("SELECT * FROM typed")
        #expect(rows.count == 7)
        let first = rows[0]
        #expect(first[0] == .integer(-32768))
        #expect(first[1] == .integer(2_147_483_647))
        #expect(first[2] == .integer(.min))
        #expect(first[3] == .double(0.1))  // real's shortest text, read as a double
        #expect(identical(first[4], .double(-0.0)))  // '-0': the literal -0.0 would be numeric, losing the sign
        #expect(first[5] == .double(12345.6789))
        #expect(first[6] == .text("Jörg"))
        #expect(first[7] == .text("vc"))
        #expect(first[8] == .integer(1))
        #expect(first[9] == .blob([0, 0xff, 0x10]))
        #expect(first[10] == .text("2024-01-02 03:04:05+00"))
        #expect(first[11] == .text("2024-01-02"))
        #expect(first[12] == .text(#"{"a": 1}"#))
        #expect(first[13] == .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
        #expect(first[14] == .text("42"))  // oid is not an integer type here: "everything else is text"
        #expect(rows[1][8] == .integer(0))
        #expect(rows[1][3] == .double(.infinity))
        #expect(rows[1][4] == .double(-.infinity))
        #expect(identical(rows[1][5], .double(.nan)))
        #expect(identical(rows[2][4], .double(.nan)))
        #expect(rows[2][5] == .text("1" + String(repeating: "0", count: 400)))  // beyond a double: kept as text
        #expect(identical(rows[3][5], .double(0)))
        #expect(rows[4][5] == .double(-.infinity))
        #expect(rows[5][5] == .text("0." + String(repeating: "0", count: 399) + "1"))  // would read as zero: text
        #expect(rows[6][9] == .blob([]))
        #expect(rows[1][0] == .null && rows[1][6] == .null && rows[1][9] == .null)
        // A statement without a result set, and an empty one.
        #expect(try c.execute("UPDATE typed SET t = 'x' WHERE false") == [])
        #expect(try c.execute("SELECT 1 WHERE false") == [])
        #expect(try c.execute("") == [])
    }

    @Test func copyLoadsTrickyRowsExactly() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript(
            #"CREATE TABLE "Odd ""Table"""(id bigint, "the text" text, x double precision, b bytea, n numeric)"#)
        var rows: [[SQLValue]] = []
        for (i, text) in trickyTexts.enumerated() {
            rows.append([
                .integer(Int64(i)), .text(text), .double(Double(i) / 7), .blob(Array(allBytes.rotated(by: i))),
                .integer(Int64(i) * 1000),
            ])
        }
        rows.append([.integer(1000), .null, .double(-0.0), .blob([]), .null])
        rows.append([.integer(1001), .text("z"), .double(.nan), .null, .double(2.5)])
        rows.append([
            .integer(1002), .text(String(repeating: "long\t\\\n", count: 30_000)), .double(.infinity),
            .blob(allBytes + allBytes), .integer(1 << 53),
        ])
        rows.append([
            .integer(.min), .text(#"\\N"#), .double(-.infinity), .blob([0x5c]), .double(.leastNonzeroMagnitude),
        ])
        try c.copy(into: #"Odd "Table""#, columns: ["id", "the text", "x", "b", "n"], rows: rows)
        let back = try c.execute(#"SELECT id, "the text", x, b, n FROM "Odd ""Table""" ORDER BY id"#)
        let expected = rows.sorted { a, b in
            guard case .integer(let x) = a[0], case .integer(let y) = b[0] else { return false }
            return x < y
        }
        #expect(back.count == expected.count)
        for (got, want) in zip(back, expected) {
            // The numeric column reads back as a double, as documented, whatever was loaded into it.
            var want = want
            if case .integer(let n) = want[4] { want[4] = .double(Double(n)) }
            for (g, w) in zip(got, want) {
                #expect(
                    identical(g, w), "row \(want[0]): sent \(w.description.prefix(80)), got \(g.description.prefix(80))"
                )
            }
        }
        // An empty column list means every column, in order.
        try c.copy(
            into: #"Odd "Table""#, columns: [],
            rows: [[.integer(2000), .text("all"), .double(1), .blob([1]), .integer(3)]])
        #expect(try c.execute(#"SELECT "the text" FROM "Odd ""Table""" WHERE id = 2000"#) == [[.text("all")]])
        // No rows at all.
        try c.copy(into: #"Odd "Table""#, columns: ["id"], rows: [])
    }

    @Test func aRefusedCopyLoadsNothingAndLeavesTheConnectionUsable() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript("CREATE TABLE t(id bigint PRIMARY KEY, name text)")
        let good: [SQLValue] = [.integer(1), .text("a")]
        // A row of the wrong width, after rows that were already sent.
        let many = (0..<20_000).map { [SQLValue.integer(Int64($0) + 10), .text(String(repeating: "x", count: 20))] }
        #expect(throws: PostgresError.self) {
            try c.copy(into: "t", columns: ["id", "name"], rows: many + [[.integer(2)]])
        }
        // Text with a NUL character.
        let nul = #expect(throws: PostgresError.self) {
            try c.copy(into: "t", columns: ["id", "name"], rows: [good, [.integer(3), .text("a\u{0}b")]])
        }
        #expect(nul?.kind == .query)
        #expect(nul?.message.contains("NUL") == true)
        // The server's own refusal: a duplicate key.
        let duplicate = #expect(throws: PostgresError.self) {
            try c.copy(into: "t", columns: ["id", "name"], rows: [good, good])
        }
        #expect(duplicate?.sqlState == "23505")
        #expect(duplicate?.kind == .query)
        // A missing table.
        let missing = #expect(throws: PostgresError.self) {
            try c.copy(into: "nope", columns: ["id"], rows: [[.integer(1)]])
        }
        #expect(missing?.sqlState == "42P01")
        #expect(try c.execute("SELECT count(*) FROM t") == [[.integer(0)]])
        try c.copy(into: "t", columns: ["id", "name"], rows: [good])
        #expect(try c.execute("SELECT id, name FROM t") == [good])
    }

    @Test func aSyntaxErrorIsAQueryErrorWithItsSQLState() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let error = #expect(throws: PostgresError.self) { try scratch.connection.execute("SELEC 1") }
        #expect(error?.kind == .query)
        #expect(error?.sqlState == "42601")
        #expect(error?.message.hasPrefix("syntax error at or near \"SELEC\"") == true)
        #expect(error.map { "\($0)" }?.hasPrefix("postgres error 42601: syntax error at or near \"SELEC\"") == true)
        let script = #expect(throws: PostgresError.self) { try scratch.connection.executeScript("SELECT 1; SELEC 2") }
        #expect(script?.sqlState == "42601")
        let overflow = #expect(throws: PostgresError.self) {
            try scratch.connection.execute("SELECT $1 + 1", [.integer(.max)])
        }
        #expect(overflow?.sqlState == "22003")
        // The connection is still usable after each.
        #expect(try scratch.connection.execute("SELECT 1") == [[.integer(1)]])
    }

    @Test func textWithANulCharacterIsATypedError() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        let parameter = #expect(throws: PostgresError.self) {
            try c.execute("SELECT $1, $2", [.integer(1), .text("a\u{0}b")])
        }
        #expect(parameter?.kind == .query)
        #expect(parameter?.sqlState == nil)
        #expect(parameter?.message == "text parameter $2 contains a NUL character, which PostgreSQL text cannot hold")
        let sql = #expect(throws: PostgresError.self) { try c.execute("SELECT 'a\u{0}b'") }
        #expect(sql?.kind == .query)
        let script = #expect(throws: PostgresError.self) {
            try c.executeScript("SELECT 1;\u{0} DROP SCHEMA \(scratch.schema)")
        }
        #expect(script?.kind == .query)
        // A NUL is fine in a blob.
        #expect(try c.execute("SELECT $1", [.blob([0, 0])]) == [[.blob([0, 0])]])
    }

    @Test func aServerThatIsNotThereIsAConnectionErrorNamingTheHost() throws {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(url: "postgresql://sift@127.0.0.1:1/sift")
        }
        #expect(error?.kind == .connection)
        #expect(error?.sqlState == nil)
        #expect(
            error?.message.hasPrefix("cannot connect to PostgreSQL at 127.0.0.1:1: ") == true, "\(error?.message ?? "")"
        )
        #expect(error?.message.contains("\n") == false)
        let socket = #expect(throws: PostgresError.self) {
            try PostgresConnection(url: "postgresql://sift@/sift?host=/nonexistent-dir")
        }
        #expect(socket?.kind == .connection)
        #expect(
            socket?.message.hasPrefix("cannot connect to PostgreSQL at /nonexistent-dir/.s.PGSQL.5432: ") == true,
            "\(socket?.message ?? "")")
        let garbled = #expect(throws: PostgresError.self) {
            try PostgresConnection(url: "postgresql://sift@/sift?nosuchoption=1")
        }
        #expect(garbled?.kind == .connection)
        #expect(garbled?.message.contains("nosuchoption") == true, "\(garbled?.message ?? "")")
        // The server is up, but there is no such database.
        let url = try postgresTestURL()
        let database = #expect(throws: PostgresError.self) {
            try PostgresConnection(url: url.replacingOccurrences(of: "/sift?", with: "/no_such_database?"))
        }
        #expect(database?.kind == .connection)
        #expect(database?.message.contains("no_such_database") == true)
    }

    @Test func theHostIsTheSocketTheConnectionUses() throws {
        let url = try postgresTestURL()
        let c = try PostgresConnection(url: url)
        defer { c.close() }
        #expect(c.host.hasSuffix("/.s.PGSQL.5432"), "\(c.host)")
        #expect(try c.execute("SHOW client_encoding") == [[.text("UTF8")]])
        // Asking for another encoding in the URL does not change what the driver decodes.
        let latin = try PostgresConnection(url: url + "&client_encoding=LATIN1")
        defer { latin.close() }
        #expect(try latin.execute("SHOW client_encoding") == [[.text("UTF8")]])
        #expect(try latin.execute("SELECT $1", [.text("Jörg 👍")]) == [[.text("Jörg 👍")]])
    }

    @Test func aScriptRunsEveryStatement() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript(
            """
            CREATE TABLE a(x bigint);
            CREATE TABLE b(y text);
            INSERT INTO a VALUES (1), (2);
            INSERT INTO b SELECT 'n' || x FROM a;
            DO $$ BEGIN RAISE NOTICE 'a notice nobody should see'; END $$;
            """)
        #expect(try c.execute("SELECT y FROM b ORDER BY y") == [[.text("n1")], [.text("n2")]])
        // A script without its own BEGIN is one transaction: a failure undoes the statements before it.
        #expect(throws: PostgresError.self) {
            try c.executeScript("INSERT INTO a VALUES (3); INSERT INTO a VALUES ('x')")
        }
        #expect(try c.execute("SELECT count(*) FROM a") == [[.integer(2)]])
        // COPY FROM STDIN belongs to copy(into:): refused, and the connection stays usable.
        let copy = #expect(throws: PostgresError.self) { try c.executeScript("COPY a FROM STDIN") }
        #expect(copy?.kind == .query)
        #expect(throws: PostgresError.self) { try c.execute("COPY a TO STDOUT") }
        #expect(try c.execute("SELECT count(*) FROM a") == [[.integer(2)]])
    }

    @Test func aRolledBackTransactionLeavesNothing() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript("CREATE TABLE t(x bigint)")
        try c.executeScript("BEGIN")
        _ = try c.execute("INSERT INTO t VALUES ($1)", [.integer(1)])
        try c.copy(into: "t", columns: ["x"], rows: [[.integer(2)], [.integer(3)]])
        #expect(try c.execute("SELECT count(*) FROM t") == [[.integer(3)]])
        try c.executeScript("ROLLBACK")
        #expect(try c.execute("SELECT count(*) FROM t") == [[.integer(0)]])
        // A failed statement inside a transaction aborts it; ROLLBACK recovers the connection.
        try c.executeScript("BEGIN; INSERT INTO t VALUES (4)")
        #expect(throws: PostgresError.self) { try c.execute("SELECT 1/0") }
        let aborted = #expect(throws: PostgresError.self) { try c.execute("SELECT 1") }
        #expect(aborted?.sqlState == "25P02")
        try c.executeScript("ROLLBACK")
        #expect(try c.execute("SELECT count(*) FROM t") == [[.integer(0)]])
    }

    @Test func aClosedConnectionThrows() throws {
        let c = try PostgresConnection(url: postgresTestURL())
        c.close()
        c.close()
        let error = #expect(throws: PostgresError.self) { try c.execute("SELECT 1") }
        #expect(error?.kind == .connection)
        #expect(error?.message.contains(c.host) == true)
    }

    @Test func oneConnectionServesSeveralThreadsInTurn() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let c = scratch.connection
        try c.executeScript("CREATE TABLE t(thread bigint, x bigint)")
        let sums = try concurrently(threads: 4, rounds: 5) { thread in
            try c.copy(
                into: "t", columns: ["thread", "x"],
                rows: (1...100).map { [.integer(Int64(thread)), .integer(Int64($0))] })
            return try c.execute("SELECT $1::bigint * 1000 + 7", [.integer(Int64(thread))])
        }
        #expect(sums.count == 20)
        for (i, rows) in sums.enumerated() { #expect(rows == [[.integer(Int64(i / 5) * 1000 + 7)]]) }
        // sum(bigint) is numeric.
        #expect(try c.execute("SELECT count(*), sum(x) FROM t") == [[.integer(2000), .double(101_000)]])
    }

    @Test func aConnectionKilledByTheServerIsAConnectionError() throws {
        let scratch = try PostgresScratch()
        defer { scratch.drop() }
        let victim = try PostgresConnection(url: postgresTestURL())
        defer { victim.close() }
        let pid = try victim.execute("SELECT pg_backend_pid()")
        #expect(try scratch.connection.execute("SELECT pg_terminate_backend($1::int)", [pid[0][0]]) == [[.integer(1)]])
        let error = #expect(throws: PostgresError.self) { try victim.execute("SELECT 1") }
        #expect(error?.kind == .connection, "\(error?.message ?? "")")
        #expect(
            error?.message.hasPrefix("lost the connection to PostgreSQL at \(victim.host)") == true,
            "\(error?.message ?? "")")
    }
}

extension Array {
    /// The array rotated left by `n` places.
    fileprivate func rotated(by n: Int) -> [Element] {
        guard !isEmpty else { return self }
        let k = n % count
        return Array(self[k...] + self[..<k])
    }
}
