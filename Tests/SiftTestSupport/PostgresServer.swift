// Where the PostgreSQL tests find their server. The server is a throwaway cluster that
// scripts/with-postgres.sh starts and removes around the test run and announces through
// SIFT_POSTGRES_URL. Without it the tests fail with instructions instead of being skipped, so a
// run that forgot the server can never pass as a run that tested PostgreSQL.

import Foundation

/// The test server is not running: the tests were started without scripts/with-postgres.sh.
public struct PostgresServerMissing: Error, CustomStringConvertible {
    /// How to run the tests with a server.
    public var description: String {
        "SIFT_POSTGRES_URL is not set: the PostgreSQL tests need the throwaway server that "
            + "`make test` starts; run them through `make test` or "
            + "`bash scripts/with-postgres.sh swift test …`"
    }
}

/// The connection URL of the test run's PostgreSQL server (`SIFT_POSTGRES_URL`), or
/// `PostgresServerMissing` when the tests run without one.
///
/// ```swift
/// let db = try PostgresConnection(url: postgresTestURL())
/// ```
public func postgresTestURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["SIFT_POSTGRES_URL"], !url.isEmpty else {
        throw PostgresServerMissing()
    }
    return url
}
