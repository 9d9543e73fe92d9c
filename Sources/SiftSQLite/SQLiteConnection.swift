// A thin Swift wrapper over one SQLite connection: open (with Sift's functions and collations
// registered), run scripts, prepare statements, query with bound `SQLValue`s, read query plans and
// run transactions. It adds no caching or ORM behaviour; errors carry SQLite's code, message and the
// SQL that failed so a failing lowering can be diagnosed from the error alone.

import CSQLite
import SiftEvaluation
import SiftSQL
import SiftSyntax

/// An SQLite failure: the result code, SQLite's message and the SQL being run.
///
/// ```swift
/// do { try db.execute("SELEC 1") } catch { print(error.code, error.message) }  // 1 near "SELEC": syntax error
/// ```
public struct SQLiteError: SiftError, Hashable {
    /// The class of failure, from the primary result code (the low byte of ``code``); the raw value
    /// is the error's id.
    ///
    /// ```swift
    /// if error.kind == .busy { /* another connection holds the write lock: try again later */ }
    /// ```
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// `SQLITE_ERROR`: an SQL error, a missing table, or an error a Sift function raised.
        case error = "sqlite-error"
        /// `SQLITE_BUSY`: another connection holds a lock this one needs.
        case busy
        /// `SQLITE_LOCKED`: a conflict within this connection (or a shared cache).
        case locked
        /// `SQLITE_CONSTRAINT`: a UNIQUE, NOT NULL, CHECK or foreign-key constraint failed.
        case constraint
        /// `SQLITE_READONLY`: a write to a database opened read-only.
        case readOnly = "read-only"
        /// `SQLITE_IOERR`: the operating system reported an I/O error.
        case ioError = "io-error"
        /// `SQLITE_CORRUPT`: the database file is malformed.
        case corrupt
        /// `SQLITE_NOTADB`: the file is not an SQLite database.
        case notADatabase = "not-a-database"
        /// `SQLITE_FULL`: the disk (or the database's size limit) is full.
        case full
        /// `SQLITE_CANTOPEN`: the file cannot be opened.
        case cannotOpen = "cannot-open"
        /// `SQLITE_MISUSE`: the library was used against its rules (e.g. SQL text without a statement).
        case misuse
        /// Any other result code.
        case other = "sqlite-other"

        /// The kind of an SQLite result code (primary or extended).
        public init(code: Int32) {
            switch code & 0xFF {
            case SQLITE_ERROR: self = .error
            case SQLITE_BUSY: self = .busy
            case SQLITE_LOCKED: self = .locked
            case SQLITE_CONSTRAINT: self = .constraint
            case SQLITE_READONLY: self = .readOnly
            case SQLITE_IOERR: self = .ioError
            case SQLITE_CORRUPT: self = .corrupt
            case SQLITE_NOTADB: self = .notADatabase
            case SQLITE_FULL: self = .full
            case SQLITE_CANTOPEN: self = .cannotOpen
            case SQLITE_MISUSE: self = .misuse
            default: self = .other
            }
        }
    }

    /// The (extended) SQLite result code, e.g. 1 for SQLITE_ERROR, 2067 for SQLITE_CONSTRAINT_UNIQUE.
    public var code: Int32
    /// The class of failure, from ``code``.
    public var kind: Kind { Kind(code: code) }
    /// The kind's raw value, e.g. `busy`, `constraint`, `sqlite-error`.
    public var id: String { kind.rawValue }
    /// SQLite's message; for errors raised by Sift's functions it starts with the evaluator's error
    /// id, e.g. `invalid-regex: …`.
    public var message: String
    /// The SQL being prepared or run, when there is one.
    public var sql: String?
    /// The row on which memory raised and memory's error, when the statement failed because the row
    /// guard's `sift_guard` met a row on which the predicate raises in memory (strict).
    ///
    /// ```swift
    /// catch let e as SQLiteError {
    ///     if let r = e.raised { print("row \(r.row): \(r.error.message)") }   // row 2: cannot order "abc" and 30
    /// }
    /// ```
    public var raised: RowRaised?

    /// An error with its result code, message and, when known, the SQL.
    ///
    /// ```swift
    /// SQLiteError(code: 1, message: "no such table: t").description   // "sqlite error 1: no such table: t"
    /// ```
    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The leading `id:` of a message raised by a Sift function (`invalid-like-pattern`,
    /// `invalid-regex`, `regex-limit`), or nil for other errors.
    public var siftErrorID: String? {
        guard let colon = message.firstIndex(of: ":") else { return nil }
        let id = message[..<colon]
        return ["invalid-like-pattern", "invalid-regex", "regex-limit"].contains(String(id)) ? String(id) : nil
    }

    /// `sqlite error CODE: message`, followed by the SQL when known.
    public var description: String {
        "sqlite error \(code): \(message)" + (sql.map { " (in: \($0))" } ?? "")
    }
}

/// A row on which the predicate raises in memory, found by the row guard (`sift_guard`): the row's
/// primary key and memory's error, with its place in the predicate.
///
/// ```swift
/// let r = RowRaised(row: 2, error: EvaluationError(.incomparableValues("\"abc\"", "30"), range: range))
/// r.error.id   // "incomparable-values"
/// ```
public struct RowRaised: Hashable, Sendable {
    /// The primary key of the row.
    public var row: Int64
    /// Memory's error on that row.
    public var error: EvaluationError
    /// The row and memory's error.
    public init(row: Int64, error: EvaluationError) {
        self.row = row
        self.error = error
    }
}

/// The C API's "copy this value now" destructor, which Swift cannot import as a macro.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One open SQLite database connection with Sift's functions and collations registered.
///
/// Threading: the connection is opened with `SQLITE_OPEN_FULLMUTEX` (serialized mode), so SQLite
/// itself serializes every call on the handle; that is why the class is `@unchecked Sendable`.
/// `query`, `queryPlan` and `execute` each use their own statement and may be called from several
/// threads. A `SQLiteStatement` and a `transaction` body, however, must stay on one thread at a time:
/// SQLite's mutex protects single calls, not sequences of steps or the BEGIN…COMMIT span. A
/// connection opened with `serialized: false` has no such mutex: its owner serializes every call.
///
/// ```swift
/// let db = try SQLiteConnection()
/// try db.execute("CREATE TABLE t(name TEXT); INSERT INTO t VALUES ('Jörg')")
/// let rows = try db.query("SELECT name FROM t WHERE sift_text(1, name, ?, 3)", [.text("jo")])
/// ```
public final class SQLiteConnection: @unchecked Sendable {
    /// The raw `sqlite3*`, for calls this wrapper does not cover.
    public let handle: OpaquePointer

    /// Opens (creating if needed) the database at `path`, ":memory:" by default, and registers
    /// Sift's SQL functions and collations. `serialized: false` opens the handle without SQLite's
    /// per-call mutex, for an owner that already serializes every use of the connection itself
    /// (a store behind its own lock); such a connection must never be used from two threads at once.
    public init(path: String = ":memory:", serialized: Bool = true) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags =
            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (serialized ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX)
            | SQLITE_OPEN_URI
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "cannot open '\(path)': \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        do { try SQLiteFunctions.register(on: db) } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    /// Rows (by primary key) on which the row guard's `sift_guard` answers 0 rather than fail the
    /// statement where memory raises: rows whose owner discards what SQL says of them (a store's
    /// objects with pending changes, judged in memory instead). Empty by default.
    ///
    /// ```swift
    /// db.rowsTheGuardSkips = [3]    // row 3 is changed in memory: its stored values do not count
    /// defer { db.rowsTheGuardSkips = [] }
    /// ```
    public var rowsTheGuardSkips: Set<Int64> {
        get { RaisedRows.shared.skipped(for: handle) }
        set { RaisedRows.shared.setSkipped(newValue, for: handle) }
    }

    deinit {
        RaisedRows.shared.setSkipped([], for: handle)
        _ = RaisedRows.shared.take(for: handle)
        sqlite3_close_v2(handle)
    }

    /// The current error of the connection as a `SQLiteError`.
    func error(_ code: Int32, sql: String?) -> SQLiteError {
        var e = SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
        if let raised = RaisedRows.shared.take(for: handle),
            e.message == "\(raised.error.id): row \(raised.row): \(raised.error.message)"
        {
            e.raised = raised
        }
        return e
    }

    /// Runs a script of one or more statements without bindings or results.
    ///
    /// ```swift
    /// try db.execute("CREATE TABLE a(x); CREATE INDEX ax ON a(x)")
    /// ```
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: rc, message: text, sql: sql)
        }
    }

    /// Whether no transaction is open (SQLite's autocommit mode).
    ///
    /// ```swift
    /// if db.isAutocommit { try db.execute("BEGIN") }
    /// ```
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Prepares one statement.
    ///
    /// ```swift
    /// let insert = try db.prepare("INSERT INTO t VALUES (?)")
    /// try insert.bind([.text("a")]); _ = try insert.step(); try insert.reset()
    /// ```
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Runs one statement with `bindings` and returns every result row.
    ///
    /// ```swift
    /// try db.query("SELECT ?1 + 1", [.integer(41)])  // [[.integer(42)]]
    /// ```
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        var rows: [[SQLValue]] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// Runs a lowered query and returns its rows.
    ///
    /// ```swift
    /// let q = try SQLLowering(schema: schema, entity: "Person").select(PredicateSyntax.parse("age > 30"))
    /// let ids = try connection.query(q).map { $0[0] }
    /// ```
    public func query(_ query: SQLQuery) throws(SQLiteError) -> [[SQLValue]] {
        try self.query(query.sql, query.bindings)
    }

    /// The EXPLAIN QUERY PLAN lines of a lowered query.
    public func queryPlan(_ query: SQLQuery) throws(SQLiteError) -> [String] {
        try queryPlan(query.sql, query.bindings)
    }

    /// The detail lines of `EXPLAIN QUERY PLAN sql`, e.g. `SEARCH t USING INDEX tx (x=?)`.
    ///
    /// ```swift
    /// try db.queryPlan("SELECT * FROM t WHERE x = ?", [.integer(1)])
    /// ```
    public func queryPlan(_ sql: String, _ bindings: [SQLValue] = []) throws(SQLiteError) -> [String] {
        try query("EXPLAIN QUERY PLAN " + sql, bindings).compactMap { row in
            if case .text(let detail)? = row.last { return detail }
            return nil
        }
    }

    /// Runs `body` inside BEGIN … COMMIT, rolling back when it throws.
    ///
    /// ```swift
    /// try db.transaction { () throws(SQLiteError) in try db.execute("INSERT INTO t VALUES (1)") }
    /// ```
    public func transaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A prepared statement; finalized when released. Use it from one thread at a time.
///
/// ```swift
/// let s = try db.prepare("SELECT x FROM t WHERE x > ?")
/// try s.bind([.integer(3)])
/// while try s.step() { print(s.column(0)) }
/// ```
public final class SQLiteStatement {
    /// The connection the statement was prepared on (kept alive by the statement).
    public let connection: SQLiteConnection
    /// The statement's SQL text.
    public let sql: String
    let pointer: OpaquePointer

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw rc == SQLITE_OK
                ? SQLiteError(code: SQLITE_MISUSE, message: "no statement in the sql text", sql: sql)
                : connection.error(rc, sql: sql)
        }
        self.connection = connection
        self.sql = sql
        self.pointer = statement
    }

    deinit { sqlite3_finalize(pointer) }

    /// Binds `values` to parameters 1…n (clearing earlier bindings first).
    public func bind(_ values: [SQLValue]) throws(SQLiteError) {
        clearBindings()
        for (i, value) in values.enumerated() { try bind(value, at: i + 1) }
    }

    /// Sets every parameter to NULL.
    public func clearBindings() { sqlite3_clear_bindings(pointer) }

    /// Binds one value to parameter `index` (1-based), for callers that bind a row's values as
    /// they compute them rather than collecting them in an array first.
    ///
    /// ```swift
    /// s.clearBindings()
    /// try s.bind(.integer(7), at: 1)
    /// ```
    public func bind(_ value: SQLValue, at position: Int) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: position)
        case .integer(let v): try bind(int64: v, at: position)
        case .double(let v): try bind(double: v, at: position)
        case .text(let s): try bind(text: s, at: position)
        case .blob(let b):
            let rc = b.withUnsafeBytes { raw in
                // A zero-length blob needs a non-null pointer to be a blob rather than NULL.
                sqlite3_bind_blob(
                    pointer, Int32(position), raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count),
                    sqliteTransient)
            }
            try check(rc)
        }
    }

    // Typed binds: a caller that knows a value's storage class binds it without wrapping it in a
    // `SQLValue` first (a bulk save binds every column of every row).

    /// Binds NULL to parameter `position` (1-based).
    @inline(__always)
    public func bindNull(at position: Int) throws(SQLiteError) {
        try check(sqlite3_bind_null(pointer, Int32(position)))
    }

    /// Binds an integer to parameter `position` (1-based).
    ///
    /// ```swift
    /// try s.bind(int64: 7, at: 1)
    /// ```
    @inline(__always)
    public func bind(int64 value: Int64, at position: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(pointer, Int32(position), value))
    }

    /// Binds a REAL to parameter `position` (1-based).
    @inline(__always)
    public func bind(double value: Double, at position: Int) throws(SQLiteError) {
        try check(sqlite3_bind_double(pointer, Int32(position), value))
    }

    /// Binds text to parameter `position` (1-based), by its UTF-8 bytes (copied by SQLite).
    public func bind(text: String, at position: Int) throws(SQLiteError) {
        let index = Int32(position)
        let rc: Int32
        // Bound with its byte length, so an embedded NUL does not cut the text short.
        var text = text
        if text.isEmpty {
            // A nil pointer would bind NULL; the empty string needs a real one.
            rc = sqlite3_bind_text(pointer, index, "", 0, sqliteTransient)
        } else {
            rc = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text(pointer, index, chars.baseAddress, Int32(chars.count), sqliteTransient)
                }
            }
        }
        try check(rc)
    }

    /// Throws the connection's error for a failed bind.
    @inline(__always)
    func check(_ rc: Int32) throws(SQLiteError) {
        if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
    }

    /// Advances to the next row: true when a row is available, false when done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(pointer)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, sql: sql)
            sqlite3_reset(pointer)
            throw error
        }
    }

    /// Resets the statement so it can be stepped again (bindings are kept).
    public func reset() throws(SQLiteError) {
        let rc = sqlite3_reset(pointer)
        if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
    }

    /// The number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(pointer)) }

    /// Column `i` (0-based) of the current row, with its own storage class.
    public func column(_ i: Int) -> SQLValue {
        let index = Int32(i)
        switch sqlite3_column_type(pointer, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(pointer, index))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(pointer, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(pointer, index))
            guard let bytes = sqlite3_column_text(pointer, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(pointer, index))
            guard count > 0, let bytes = sqlite3_column_blob(pointer, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// Every column of the current row.
    public func row() -> [SQLValue] { (0..<columnCount).map(column) }

    /// A column's storage class in the current row.
    public enum StorageClass: Sendable {
        /// A 64-bit signed integer.
        case integer
        /// An IEEE double.
        case double
        /// UTF-8 text.
        case text
        /// Bytes.
        case blob
        /// NULL.
        case null
    }

    /// The storage class of column `i` (0-based) of the current row, for readers that take a
    /// column's value by the type they expect instead of through an `SQLValue`.
    ///
    /// ```swift
    /// if s.storageClass(0) == .integer { total += s.int64(0) }
    /// ```
    @inline(__always)
    public func storageClass(_ i: Int) -> StorageClass {
        switch sqlite3_column_type(pointer, Int32(i)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .double
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// Column `i` as an integer (SQLite's conversion when it is not one; check
    /// ``storageClass(_:)`` first).
    @inline(__always)
    public func int64(_ i: Int) -> Int64 { sqlite3_column_int64(pointer, Int32(i)) }

    /// Column `i` as a double (SQLite's conversion when it is not one).
    @inline(__always)
    public func double(_ i: Int) -> Double { sqlite3_column_double(pointer, Int32(i)) }

    /// Column `i` of the current row for typed reads: its storage class, then its value, at the
    /// cost of one lookup of the column instead of one per question (valid until the next
    /// `step`, `reset` or `bind`).
    ///
    /// ```swift
    /// let v = s.value(0)
    /// if v.storageClass == .integer { total += v.int64 }
    /// ```
    public func value(_ i: Int) -> ColumnValue { ColumnValue(handle: sqlite3_column_value(pointer, Int32(i))) }

    /// `body` of column `i`'s UTF-8 bytes when it holds text (nil otherwise), without a `String`
    /// in between; the bytes are SQLite's, valid only inside `body`.
    ///
    /// ```swift
    /// let length = s.withText(0) { $0.count }  // nil when column 0 is not text
    /// ```
    public func withText<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        textBytes(i).map(body)
    }

    /// Column `i`'s UTF-8 bytes when it holds text, nil otherwise: SQLite's own buffer, valid
    /// only until the statement reads that column again, steps or resets (`withText` without a
    /// closure, for a caller that copies the bytes at once).
    package func textBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>? {
        // One column call (each costs a lock and an error check), then the value's own.
        let v = sqlite3_column_value(pointer, Int32(i))
        guard sqlite3_value_type(v) == SQLITE_TEXT else { return nil }
        let bytes = sqlite3_value_text(v)
        return UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(sqlite3_value_bytes(v)))
    }

    /// Column `i` as text (SQLite's conversion when it is not text; "" for NULL).
    public func text(_ i: Int) -> String {
        let index = Int32(i)
        guard let bytes = sqlite3_column_text(pointer, index) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(pointer, index))), as: UTF8.self
        )
    }
}

/// One column of a statement's current row (`SQLiteStatement.value(_:)`). SQLite calls the value
/// "unprotected": reading it is safe while nothing else uses the connection at the same time,
/// which holds for any statement used from one thread at a time (a store holds its lock).
///
/// ```swift
/// let statement = try connection.prepare("SELECT 1.5")
/// _ = try statement.step()
/// let v = statement.value(0)
/// v.storageClass   // .double
/// v.int64          // 1, SQLite's conversion
/// ```
public struct ColumnValue {
    let handle: OpaquePointer?

    /// The value's storage class.
    public var storageClass: SQLiteStatement.StorageClass {
        switch sqlite3_value_type(handle) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .double
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// The value as an integer (SQLite's conversion when it is not one).
    public var int64: Int64 { sqlite3_value_int64(handle) }

    /// The value as a double (SQLite's conversion when it is not one).
    public var double: Double { sqlite3_value_double(handle) }

    /// The value as text (SQLite's conversion when it is not text; "" for NULL).
    public var text: String {
        guard let bytes = sqlite3_value_text(handle) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(handle))), as: UTF8.self)
    }
}
