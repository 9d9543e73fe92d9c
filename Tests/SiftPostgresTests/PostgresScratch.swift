// A schema of its own for each test. swift-testing runs tests in parallel against one server, so
// every test creates its tables in a fresh schema on its own connection and cannot see (or trip
// over) another test's tables. It lives here rather than in SiftTestSupport so that target keeps
// depending on nothing.

import Foundation
import SiftPostgres
import SiftTestSupport

/// A connection to the test server whose `search_path` is a new, empty schema.
///
/// ```swift
/// let scratch = try PostgresScratch()
/// defer { scratch.drop() }
/// try scratch.connection.executeScript("CREATE TABLE t(x bigint)")   // in the scratch schema
/// ```
final class PostgresScratch {
    let connection: PostgresConnection
    let schema: String

    init(url: String? = nil) throws {
        connection = try PostgresConnection(url: url ?? postgresTestURL())
        schema = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try connection.executeScript("CREATE SCHEMA \(schema); SET search_path TO \(schema)")
    }

    /// Drops the schema and everything in it, and closes the connection.
    func drop() {
        _ = try? connection.executeScript("DROP SCHEMA \(schema) CASCADE")
        connection.close()
    }
}
