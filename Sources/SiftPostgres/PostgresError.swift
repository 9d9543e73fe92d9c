// The one error type of the PostgreSQL driver. Callers need to tell two situations apart: the
// server is unreachable or the connection broke (retry elsewhere, report the host), or the server
// refused one statement (report PostgreSQL's SQLSTATE and words). Both carry a message that reads
// well on its own, because a command-line tool prints it as it is.

/// A failure to connect to PostgreSQL, or a statement the server (or the driver, before sending
/// it) refused.
///
/// ```swift
/// do { _ = try db.execute("SELEC 1") } catch {
///     print(error.kind, error.sqlState ?? "-")   // query 42601
///     print(error)                               // postgres error 42601: syntax error at or near "SELEC"
/// }
/// ```
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which side failed: the connection, or one statement on a working connection.
    ///
    /// ```swift
    /// if error.kind == .connection { /* reconnect, or report error.message */ }
    /// ```
    public enum Kind: Hashable, Sendable {
        /// The server could not be reached, refused the login, or the connection was lost or closed.
        case connection
        /// The server rejected a statement (its SQLSTATE is in `sqlState`), or the driver refused
        /// to send it (a NUL character in text, a row of the wrong width for `copy`).
        case query
    }

    /// Which side failed.
    public var kind: Kind
    /// The five-character SQLSTATE PostgreSQL reported (`PG_DIAG_SQLSTATE`), e.g. `"42601"` for a
    /// syntax error or `"23505"` for a unique violation; nil for errors raised on the client side.
    public var sqlState: String?
    /// The whole message, starting lower-case: `cannot connect to PostgreSQL at 127.0.0.1:1: …`,
    /// `postgres error 42601: syntax error at or near "SELEC"`.
    public var message: String

    /// An error of `kind` with its message and, when the server reported one, its SQLSTATE.
    ///
    /// ```swift
    /// PostgresError(kind: .query, sqlState: "42P01", message: "postgres error 42P01: relation \"t\" does not exist")
    /// ```
    public init(kind: Kind, sqlState: String? = nil, message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
    }

    /// The message.
    ///
    /// ```swift
    /// print(error)   // postgres error 42601: syntax error at or near "SELEC"
    /// ```
    public var description: String { message }
}
