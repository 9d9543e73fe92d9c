// The one error type of the PostgreSQL driver. Callers need to tell two situations apart: the
// server is unreachable or the connection broke (retry elsewhere, report the host), or the server
// refused one statement (report PostgreSQL's SQLSTATE and words). Both carry a message that reads
// well on its own, because a command-line tool prints it as it is.

import SiftSyntax

/// A failure to connect to PostgreSQL, or a statement the server (or the driver, before sending
/// it) refused.
///
/// ```swift
/// do { _ = try db.execute("SELEC 1") } catch {
///     print(error.id, error.sqlState ?? "-")     // query 42601
///     print(error)                               // postgres error 42601: syntax error at or near "SELEC"
/// }
/// ```
public struct PostgresError: SiftError, Hashable {
    /// Which side failed: the connection, or one statement on a working connection.
    ///
    /// ```swift
    /// if error.kind == .connection { /* reconnect, or report error.message */ }
    /// ```
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The server could not be reached, refused the login, or the connection was lost or closed.
        case connection
        /// The server rejected a statement (its SQLSTATE is in `sqlState`), or the driver refused
        /// to send it (a NUL character in text, a row of the wrong width for `copy`).
        case query
    }

    /// Which side failed.
    public var kind: Kind
    /// `connection` or `query`; the server's SQLSTATE, when there is one, is ``sqlState``.
    public var id: String { kind.rawValue }
    /// The five-character SQLSTATE PostgreSQL reported (`PG_DIAG_SQLSTATE`), e.g. `"42601"` for a
    /// syntax error or `"23505"` for a unique violation; nil for errors raised on the client side.
    public var sqlState: String?
    /// What failed, in the server's words for a statement it refused (`syntax error at or near
    /// "SELEC"`, with its detail and hint), or the driver's (`cannot connect to PostgreSQL at
    /// 127.0.0.1:1: …`); ``description`` adds the SQLSTATE.
    public var message: String

    /// An error of `kind` with its message and, when the server reported one, its SQLSTATE.
    ///
    /// ```swift
    /// PostgresError(kind: .query, sqlState: "42P01", message: "relation \"t\" does not exist")
    /// ```
    public init(kind: Kind, sqlState: String? = nil, message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
    }

    /// A refused statement: `postgres error`, the SQLSTATE when the server reported one, and the
    /// message. A connection failure: the message (which names the server), and the SQLSTATE.
    ///
    /// ```swift
    /// print(error)   // postgres error 42601: syntax error at or near "SELEC"
    /// ```
    public var description: String {
        switch kind {
        case .query: "postgres error" + (sqlState.map { " \($0)" } ?? "") + ": " + message
        case .connection: message + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
        }
    }
}
