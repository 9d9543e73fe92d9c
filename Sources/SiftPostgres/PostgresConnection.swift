// A synchronous PostgreSQL connection over libpq, the C client library. Sift's store and
// command-line tool run synchronously, so a blocking driver fits them without bringing an event
// loop (and SwiftNIO's build time) into every build. The wrapper stays thin: one statement with
// bound values, a script, a bulk COPY; every failure comes back as a typed `PostgresError` that
// names the server or carries PostgreSQL's SQLSTATE, and the server's NOTICEs are dropped instead
// of reaching stderr, where they would mix with a tool's own output.

import CLibPQ
import Foundation
import SiftSQL

/// One connection to a PostgreSQL server.
///
/// Threading: every call takes the connection's lock for its whole request and response, so the
/// class is `Sendable` and calls from several threads are serialized. A sequence of calls
/// (`BEGIN` … `COMMIT`) is not: keep a transaction on one thread, or behind a lock of your own.
///
/// ```swift
/// let db = try PostgresConnection(url: "postgresql://sift@/sift?host=/tmp/pg")
/// try db.executeScript("CREATE TABLE person(name text, age bigint)")
/// try db.copy(into: "person", columns: ["name", "age"], rows: [[.text("Ann"), .integer(41)]])
/// let rows = try db.execute("SELECT name FROM person WHERE age > $1", [.integer(30)])  // [[.text("Ann")]]
/// ```
public final class PostgresConnection: @unchecked Sendable {
    /// The `PGconn*`, nil once closed. Guarded by `lock`.
    private var handle: OpaquePointer?
    private let lock = NSLock()

    /// The server this connection talks to, as its error messages name it: `host:port` over TCP
    /// (`127.0.0.1:5432`), the socket file over a Unix socket (`/tmp/pg/.s.PGSQL.5432`).
    ///
    /// ```swift
    /// print("connected to \(db.host)")
    /// ```
    public let host: String

    /// Connects, blocking until the server has accepted the login.
    ///
    /// `url` is anything libpq accepts: a URI (`postgresql://user@host:5432/db`,
    /// `postgresql://sift@/sift?host=/tmp/pg` for a Unix socket) or a keyword string
    /// (`host=/tmp/pg dbname=sift`); libpq's `PG…` environment variables fill in what it leaves
    /// out. The client encoding is always UTF-8. On failure the error is of kind `.connection` and
    /// names the host and port tried, never the URL (which may hold a password).
    ///
    /// ```swift
    /// do { _ = try PostgresConnection(url: "postgresql://sift@127.0.0.1:1/sift") }
    /// catch { print(error) }   // cannot connect to PostgreSQL at 127.0.0.1:1: connection to server at "127.0.0.1", port 1 failed: …
    /// ```
    public init(url: String) throws(PostgresError) {
        guard !url.utf8.contains(0) else {
            throw PostgresError(
                kind: .connection, message: "cannot connect to PostgreSQL: the connection URL contains a NUL character")
        }
        // libpq is loaded on the first connection, not with the program (see LibPQ.swift).
        if case .failure(let error) = LibPQ.loaded { throw error }
        // The URL is expanded in place of `dbname`; the keywords after it override what it says,
        // so the encoding the decoder relies on cannot be changed by the URL.
        let connection = withCStringArray(["dbname", "client_encoding", "fallback_application_name"]) { keywords in
            withCStringArray([url, "UTF8", "sift"]) { values in sift_PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(
                kind: .connection, message: "cannot connect to PostgreSQL: libpq could not allocate a connection")
        }
        let target = Self.target(of: connection)
        guard sift_PQstatus(connection) == CONNECTION_OK else {
            let reason = Self.oneLine(sift_PQerrorMessage(connection)) ?? "unknown error"
            sift_PQfinish(connection)
            throw PostgresError(
                kind: .connection,
                message: "cannot connect to PostgreSQL\(target.isEmpty ? "" : " at " + target): \(reason)")
        }
        sift_PQsetNoticeProcessor(connection, { _, _ in }, nil)
        // Doubles come back exact only with shortest-precise output (extra_float_digits ≥ 1, the
        // default since PostgreSQL 12 but settable lower); bytea is decoded fastest from hex.
        if let result = sift_PQexec(connection, "SET extra_float_digits = 3; SET bytea_output = 'hex'") {
            let ok = sift_PQresultStatus(result) == PGRES_COMMAND_OK
            let error = ok ? nil : Self.error(from: result, connection: connection, target: target)
            sift_PQclear(result)
            if let error {
                sift_PQfinish(connection)
                throw error
            }
        }
        handle = connection
        host = target
    }

    deinit {
        if let handle { sift_PQfinish(handle) }
    }

    /// Closes the connection. Closing twice does nothing; any later call throws a `.connection`
    /// error. The connection also closes when it is released.
    ///
    /// ```swift
    /// db.close()
    /// ```
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        if let handle { sift_PQfinish(handle) }
        handle = nil
    }

    /// Runs one statement with `bindings` for its `$1`, `$2`, … parameters and returns every
    /// result row (no rows for a statement that returns none).
    ///
    /// Parameters are typed: `.integer` is `bigint`, `.double` is `double precision`, `.text` is
    /// `text`, `.blob` is `bytea`, and `.null` takes the type the server infers. Result columns map
    /// back by type: `smallint`, `integer`, `bigint` → `.integer`; `real`, `double precision` →
    /// `.double` (`Infinity` and `NaN` included); `numeric` → `.double` when a double can stand for
    /// it, else `.text`; `boolean` → `.integer(1)` or `.integer(0)`; `bytea` → `.blob`; SQL NULL →
    /// `.null`; every other type → its text (`.text`).
    ///
    /// ```swift
    /// try db.execute("SELECT $1::bigint + 1, $2 || '!'", [.integer(41), .text("hi")])  // [[.integer(42), .text("hi!")]]
    /// ```
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws(PostgresError) -> [[SQLValue]] {
        guard !sql.utf8.contains(0) else { throw PostgresText.nulError("the SQL text") }
        let parameters = try PostgresParameters(bindings)
        lock.lock()
        defer { lock.unlock() }
        let connection = try open()
        let result = parameters.withValuePointers { values in
            sift_PQexecParams(
                connection, sql, Int32(values.count), parameters.types, values, parameters.lengths, parameters.formats,
                0)
        }
        let finished = try finish(result, connection)
        defer { sift_PQclear(finished) }
        return Self.rows(of: finished)
    }

    /// Runs a lowered query (its SQL must use PostgreSQL's `$n` placeholders) and returns its rows.
    ///
    /// ```swift
    /// let rows = try db.execute(SQLQuery(sql: "SELECT id FROM person WHERE age >= $1", bindings: [.integer(18)]))
    /// ```
    public func execute(_ query: SQLQuery) throws(PostgresError) -> [[SQLValue]] {
        try execute(query.sql, query.bindings)
    }

    /// Runs several statements separated by semicolons, without parameters or results.
    ///
    /// PostgreSQL runs the statements of one script as a single transaction unless the script
    /// contains its own `BEGIN`/`COMMIT`; the first failing statement stops the script.
    ///
    /// ```swift
    /// try db.executeScript("BEGIN; CREATE TABLE t(x bigint); INSERT INTO t VALUES (1); COMMIT")
    /// ```
    public func executeScript(_ sql: String) throws(PostgresError) {
        guard !sql.utf8.contains(0) else { throw PostgresText.nulError("the SQL script") }
        lock.lock()
        defer { lock.unlock() }
        let connection = try open()
        sift_PQclear(try finish(sift_PQexec(connection, sql), connection))
    }

    /// Loads `rows` into `table` with `COPY … FROM STDIN`, much faster than one INSERT per row.
    ///
    /// `table` and each column name are one identifier each, quoted as they are (`"Person"`
    /// keeps its capital; a name holding a dot is not split into schema and table); an empty
    /// `columns` means all of the table's columns in order. Each row must have one value per
    /// column. Values are sent in COPY's text format, so any text (tabs, newlines, backslashes)
    /// and any bytes arrive unchanged; text holding a NUL character is refused before the COPY
    /// ends, and nothing is loaded. COPY is one statement: either every row is loaded or none.
    ///
    /// ```swift
    /// try db.copy(into: "person", columns: ["name", "photo"], rows: [[.text("Ann\tB."), .blob([0, 255])], [.text("Bo"), .null]])
    /// ```
    public func copy(into table: String, columns: [String], rows: [[SQLValue]]) throws(PostgresError) {
        guard !table.utf8.contains(0) else { throw PostgresText.nulError("the table name") }
        for column in columns where column.utf8.contains(0) { throw PostgresText.nulError("a column name") }
        var sql = "COPY " + PostgresText.quoteIdentifier(table)
        if !columns.isEmpty { sql += " (" + columns.map(PostgresText.quoteIdentifier).joined(separator: ", ") + ")" }
        sql += " FROM STDIN"

        lock.lock()
        defer { lock.unlock() }
        let connection = try open()
        guard let start = sift_PQexec(connection, sql) else { throw failure(connection) }
        guard sift_PQresultStatus(start) == PGRES_COPY_IN else {
            sift_PQclear(try finish(start, connection))
            throw PostgresError(kind: .query, message: "COPY into \(PostgresText.quoteIdentifier(table)) did not start")
        }
        sift_PQclear(start)

        do throws(PostgresError) {
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 16)
            for (r, row) in rows.enumerated() {
                if !columns.isEmpty, row.count != columns.count {
                    throw PostgresError(
                        kind: .query,
                        message:
                            "cannot copy into \(PostgresText.quoteIdentifier(table)): row \(r + 1) has \(row.count) values for \(columns.count) columns"
                    )
                }
                if row.isEmpty {
                    throw PostgresError(
                        kind: .query,
                        message: "cannot copy into \(PostgresText.quoteIdentifier(table)): row \(r + 1) has no values")
                }
                for (c, value) in row.enumerated() {
                    if c > 0 { buffer.append(UInt8(ascii: "\t")) }
                    try PostgresText.appendCopyField(value, to: &buffer, row: r, column: c)
                }
                buffer.append(UInt8(ascii: "\n"))
                if buffer.count >= 1 << 16 {
                    try send(buffer, connection)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            if !buffer.isEmpty { try send(buffer, connection) }
        } catch {
            // Ending the COPY with an error message makes the server fail it, so nothing is loaded.
            _ = sift_PQputCopyEnd(connection, "COPY abandoned by the client: " + error.message)
            drainResults(connection)
            throw error
        }
        guard sift_PQputCopyEnd(connection, nil) == 1 else { throw failure(connection) }
        var firstError: PostgresError?
        while let result = sift_PQgetResult(connection) {
            if firstError == nil, sift_PQresultStatus(result) != PGRES_COMMAND_OK {
                firstError = Self.error(from: result, connection: connection, target: host)
            }
            sift_PQclear(result)
        }
        if let firstError { throw firstError }
    }

    // MARK: - Internals (called with the lock held)

    /// The open handle, or the error for a closed connection.
    private func open() throws(PostgresError) -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connection, message: "the connection to PostgreSQL at \(host) is closed")
        }
        return handle
    }

    /// Checks the result of a statement: returns it when it succeeded, and otherwise clears it
    /// and throws the server's error. A COPY started by `execute` or `executeScript` is ended
    /// (the connection stays usable) and reported as an error: only `copy` feeds COPY data.
    private func finish(_ result: OpaquePointer?, _ connection: OpaquePointer) throws(PostgresError) -> OpaquePointer {
        guard let result else { throw failure(connection) }
        let status = sift_PQresultStatus(result)
        switch status {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return result
        case PGRES_COPY_IN:
            sift_PQclear(result)
            _ = sift_PQputCopyEnd(connection, "COPY FROM STDIN is only supported through copy(into:columns:rows:)")
            drainResults(connection)
            throw PostgresError(
                kind: .query, message: "COPY FROM STDIN is only supported through copy(into:columns:rows:)")
        case PGRES_COPY_OUT:
            sift_PQclear(result)
            var chunk: UnsafeMutablePointer<CChar>?
            while sift_PQgetCopyData(connection, &chunk, 0) > 0 { sift_PQfreemem(chunk) }
            drainResults(connection)
            throw PostgresError(kind: .query, message: "COPY TO STDOUT is not supported; select the rows instead")
        default:
            let error = Self.error(from: result, connection: connection, target: host)
            sift_PQclear(result)
            drainResults(connection)
            throw error
        }
    }

    /// Sends one chunk of COPY data.
    private func send(_ bytes: [UInt8], _ connection: OpaquePointer) throws(PostgresError) {
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                sift_PQputCopyData(connection, $0.baseAddress, Int32(buffer.count))
            }
        }
        guard sent == 1 else { throw failure(connection) }
    }

    /// Reads and discards whatever results are left, so the connection is ready for the next call.
    private func drainResults(_ connection: OpaquePointer) {
        while let result = sift_PQgetResult(connection) {
            let status = sift_PQresultStatus(result)
            sift_PQclear(result)
            // A COPY left open would hand back the same status forever: end it instead.
            if status == PGRES_COPY_IN { _ = sift_PQputCopyEnd(connection, "abandoned") }
            if status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH { return }
        }
    }

    /// The error for a call libpq could not complete (no result at all): a lost connection, or a
    /// request it refused to send.
    private func failure(_ connection: OpaquePointer) -> PostgresError {
        let reason = Self.oneLine(sift_PQerrorMessage(connection)) ?? "unknown error"
        if sift_PQstatus(connection) != CONNECTION_OK {
            return PostgresError(kind: .connection, message: "lost the connection to PostgreSQL at \(host): \(reason)")
        }
        return PostgresError(kind: .query, message: reason)
    }

    /// The error a failed result reports: SQLSTATE, primary message, detail and hint.
    private static func error(from result: OpaquePointer, connection: OpaquePointer, target: String) -> PostgresError {
        func field(_ code: Character) -> String? {
            oneLine(sift_PQresultErrorField(result, Int32(code.asciiValue!)))
        }
        let state = field("C")
        var text =
            field("M") ?? oneLine(sift_PQresultErrorMessage(result)) ?? oneLine(sift_PQerrorMessage(connection))
            ?? "unknown error"
        if let detail = field("D") { text += " (detail: \(detail))" }
        if let hint = field("H") { text += " (hint: \(hint))" }
        if sift_PQstatus(connection) != CONNECTION_OK {
            return PostgresError(
                kind: .connection, sqlState: state, message: "lost the connection to PostgreSQL at \(target): \(text)")
        }
        return PostgresError(kind: .query, sqlState: state, message: text)
    }

    /// The rows of a successful result, each field mapped by its column's type.
    private static func rows(of result: OpaquePointer) -> [[SQLValue]] {
        let rowCount = sift_PQntuples(result)
        let columnCount = sift_PQnfields(result)
        guard rowCount > 0, columnCount > 0 else { return Array(repeating: [], count: Int(rowCount)) }
        let types = (0..<columnCount).map { sift_PQftype(result, $0) }
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for r in 0..<rowCount {
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columnCount))
            for c in 0..<columnCount {
                if sift_PQgetisnull(result, r, c) != 0 {
                    row.append(.null)
                } else {
                    let text = UnsafeRawBufferPointer(
                        start: sift_PQgetvalue(result, r, c), count: Int(sift_PQgetlength(result, r, c)))
                    row.append(PostgresText.value(text, type: types[Int(c)]))
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Where libpq tried to connect: `host:port`, or the socket file for a socket directory.
    private static func target(of connection: OpaquePointer) -> String {
        let host = sift_PQhost(connection).map { String(cString: $0) } ?? ""
        let port = sift_PQport(connection).map { String(cString: $0) } ?? ""
        if host.isEmpty { return "" }
        if host.hasPrefix("/") || host.hasPrefix("@") {
            return port.isEmpty ? host : host + (host.hasSuffix("/") ? "" : "/") + ".s.PGSQL." + port
        }
        let name = host.contains(":") ? "[" + host + "]" : host
        return port.isEmpty ? name : name + ":" + port
    }

    /// A libpq message on one line: its lines joined with single spaces, no trailing newline.
    /// Nil when there is no message.
    private static func oneLine(_ message: UnsafePointer<CChar>?) -> String? {
        guard let message else { return nil }
        let words = String(cString: message).split(whereSeparator: { $0 == "\n" || $0 == "\t" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}

/// Calls `body` with a NULL-terminated array of C strings copied from `strings`.
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    return body(copies.map { $0.map { UnsafePointer($0) } } + [nil])
}
