// The PostgreSQL back-end of `sift filter` and `sift batch` (`--backend postgres`): the records are
// imported exactly as for SQLite (an in-memory SiftStore of documents), then every table the
// lowering reads is copied into a fresh schema on the server (PostgresTables: typed columns, a
// NUMERIC and a text column for each dynamically typed key), the predicate is lowered in the
// PostgreSQL dialect against that schema and run there, and the matching primary keys map back to
// record indices. The schema is dropped when the back-end goes away, also after an error.

import Foundation
import SiftJSON
import SiftPostgres
import SiftSQL
import SiftSQLite
import SiftStore

/// A connection to the server named by `--database-url` (or `DATABASE_URL`), shared by every
/// back-end of one command.
final class PostgresServer {
    let connection: PostgresConnection
    private var schemas = 0
    /// The schema the connection's search path names now (set by the last query), nil at first.
    var searchPath: String?

    /// Connects; without a URL, or when the server cannot be reached, a `load` error naming the host.
    init(url: String?) throws(SQLBackendError) {
        guard let url = url ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
            throw SQLBackendError(
                stage: "load",
                description: "--backend postgres needs --database-url URL or the DATABASE_URL environment variable")
        }
        do throws(PostgresError) { connection = try PostgresConnection(url: url) } catch {
            throw SQLBackendError(stage: "load", description: error.description)
        }
    }

    /// A schema name no other back-end of this process (or another process) uses.
    func newSchemaName() -> String {
        schemas += 1
        return "sift_\(ProcessInfo.processInfo.processIdentifier)_\(schemas)_\(UInt32.random(in: 0...UInt32.max))"
    }
}

/// The records of one back-end in their own PostgreSQL schema.
final class PostgresTablesOnServer {
    let server: PostgresServer
    let schemaName: String
    let tables: PostgresTables

    /// Copies the tables of `store` into a new schema on `server`.
    init(store: JSONStore, server: PostgresServer) throws(SQLBackendError) {
        self.server = server
        schemaName = server.newSchemaName()
        do throws(PostgresError) { tables = try PostgresTables(schema: store.schema) } catch {
            throw SQLBackendError(
                stage: "load", description: "cannot load the records into PostgreSQL: \(error)")
        }
        let c = server.connection
        do throws(PostgresError) {
            try c.executeScript(
                "BEGIN; CREATE SCHEMA \(PostgresTables.quote(schemaName)); SET LOCAL search_path TO \(PostgresTables.quote(schemaName));"
                    + tables.tablesScript)
            // Indexes after the rows (one sort instead of one insertion per row), and only on tables
            // big enough for the planner to choose them: a few rows are read faster than an index.
            var indexes = ""
            let sqlite = SQLiteDialect()
            for table in tables.tables {
                let columns = table.columns.compactMap(\.source)
                let rows: [[SQLValue]]
                do throws(StoreError) {
                    rows = try store.query(
                        "SELECT " + columns.map(sqlite.quote).joined(separator: ", ") + " FROM "
                            + sqlite.quote(table.source))
                } catch {
                    throw PostgresError(
                        kind: .query, message: "cannot read '\(table.source)' from the SQLite store: \(error.message)")
                }
                try tables.load(table, rows: rows, on: c)
                if rows.count >= Self.indexedRows { indexes += tables.indexScript(table) }
            }
            try c.executeScript(
                indexes + "ANALYZE " + tables.tables.map { PostgresTables.quote($0.name) }.joined(separator: ", ")
                    + "; COMMIT;")
        } catch {
            try? c.executeScript("ROLLBACK")
            throw SQLBackendError(
                stage: "load", description: "cannot load the records into PostgreSQL: \(error)")
        }
    }

    /// Tables with fewer rows get no indexes.
    static let indexedRows = 1_000

    /// Runs `query` in this back-end's schema; the first result column is a root primary key.
    func primaryKeys(_ query: SQLQuery) throws(SQLBackendError) -> [Int64] {
        do throws(PostgresError) {
            let c = server.connection
            if server.searchPath != schemaName {
                _ = try c.execute(
                    "SELECT set_config('search_path', $1, false)", [.text(PostgresTables.quote(schemaName))])
                server.searchPath = schemaName
            }
            return try c.execute(query).map { row in
                if case .integer(let pk)? = row.first { return pk }
                return -1
            }
        } catch {
            throw SQLBackendError(stage: "sql", description: "sql: \(error)")
        }
    }

    deinit {
        _ = try? server.connection.execute("DROP SCHEMA IF EXISTS \(PostgresTables.quote(schemaName)) CASCADE")
    }
}
