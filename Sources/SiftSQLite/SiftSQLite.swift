// SQLite runtime support for Sift's SQL back-end: a thin wrapper over the C API and the functions
// and collations that lowered SQL calls, registered on a connection so that SQL results agree with
// in-memory evaluation for every string, option and pattern.

import CSQLite
import SiftSQL
import SiftText

/// Namespace for registering Sift's SQL functions and collations on a connection.
public enum SiftSQLite {
    /// The version of the SQLite library linked in, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
