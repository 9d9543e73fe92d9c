// The SQL back-ends of `sift filter` and `sift batch` (`--backend sqlite`, `--backend postgres`):
// the JSON records are imported into an in-memory SiftStore as documents whose shapes JSONStore
// infers from them (and for PostgreSQL copied from there into a schema on the server, see
// PostgresBackend.swift), the predicate is lowered to SQL against that schema's root entity, and
// the matching record indices come back from the database. Memory stays the default and the
// reference: the back-ends print the same thing, or fail with memory's error. Where memory may
// raise on a record's values, SQLite asks memory about that record (the row guard, SiftSQL's
// RowGuard.swift): strict, the statement fails naming the row, and the error printed is memory's
// own on that record (`record 1: cannot order "abc" and 30`, found again by evaluating the
// predicate on it); `--lenient`, the row answers as lenient memory does. PostgreSQL cannot ask
// memory: the lowering gives a second statement selecting those rows (`SQLQuery.rowsMemoryDecides`),
// and they are evaluated here, in memory, with the same outcome. `sift batch` takes that second
// statement from SQLite too (`outcomes`), so that each record memory raises on gets its own error.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax

/// Which evaluator `sift filter` and `sift batch` use.
enum BackendKind: String, ExpressibleByArgument, CaseIterable {
    case memory, sqlite, postgres
}

/// Why the SQLite back-end could not answer; `description` is what the tool prints.
struct SQLBackendError: Error, CustomStringConvertible {
    /// `lower` (the predicate cannot be expressed in SQL), `load` (the records cannot be stored),
    /// `sql` (the database refused or failed the query) or `evaluation` (the predicate raises in
    /// memory on a record, as memory reports it).
    var stage: String
    var description: String
    /// The lowering error's id (`unknown-key`, `unsupported`, …) when the stage is `lower`, memory's
    /// (`incomparable-values`, …) when it is `evaluation`.
    var id: String? = nil
    /// The record the predicate raises on, when the stage is `evaluation`.
    var record: Int? = nil
}

/// Records loaded into SQLite (and, given a server, PostgreSQL) once, queried with any number of predicates.
final class SQLBackend {
    /// The root entity's name in the inferred schema.
    static let entity = "Record"
    let store: JSONStore
    /// The records as loaded, to find memory's own error on a record the guard says raises.
    let records: [JSONValue]
    let lowering: SQLLowering
    /// The copy on a PostgreSQL server that the queries run on, when there is one.
    let postgres: PostgresTablesOnServer?

    /// Loads `records`; with `server`, into PostgreSQL too, where the queries then run.
    init(records: [JSONValue], server: PostgresServer? = nil) throws(SQLBackendError) {
        self.records = records
        do throws(JSONStoreError) { store = try JSONStore(records: records, entity: SQLBackend.entity) } catch {
            throw SQLBackendError(stage: "load", description: "cannot load the records into SQLite: \(error)")
        }
        if let server {
            let onServer = try PostgresTablesOnServer(store: store, server: server)
            postgres = onServer
            do throws(SQLLoweringError) {
                lowering = try SQLLowering(
                    schema: onServer.tables.schema, entity: SQLBackend.entity, dialect: PostgreSQLDialect())
            } catch { throw SQLBackendError(stage: "load", description: error.description) }
        } else {
            postgres = nil
            do throws(SQLLoweringError) {
                lowering = try SQLLowering(schema: store.schema, entity: SQLBackend.entity)
            } catch { throw SQLBackendError(stage: "load", description: error.description) }
        }
    }

    /// The lowered query for `syntax`; a rejection carries line:column and a caret under `source`.
    /// `inDatabase: false` leaves the rows on which memory may raise to the caller in SQLite too
    /// (``SQLLowering/guardsInDatabase``).
    func query(
        _ syntax: PredicateSyntax, source: String, variables: [String: LiteralValue],
        sortedBy keys: [SiftSortDescriptor] = [], lenient: Bool = false, inDatabase: Bool = true
    ) throws(SQLBackendError) -> SQLQuery {
        var lowering = lowering
        lowering.guardsInDatabase = inDatabase
        do throws(SQLLoweringError) {
            return try lowering.select(
                syntax, source: source, variables: variables,
                sortedBy: keys.map { SQLSortKey(keyPath: $0.keyPath, ascending: $0.ascending, options: $0.options) },
                lenient: lenient)
        } catch {
            throw SQLBackendError(stage: "lower", description: error.annotated, id: error.id)
        }
    }

    /// The indices of the matching records, in the query's order; strict, an `evaluation` error
    /// where the predicate raises in memory on a record (see the file header).
    func matches(
        _ syntax: PredicateSyntax, source: String, variables: [String: LiteralValue],
        sortedBy keys: [SiftSortDescriptor] = [], lenient: Bool = false
    ) throws(SQLBackendError) -> [Int] {
        let q = try query(syntax, source: source, variables: variables, sortedBy: keys, lenient: lenient)
        if postgres != nil {
            let selected = try recordIndices(q)
            guard let decides = q.rowsMemoryDecides else { return selected }
            return try merged(
                selected, memoryDecides: try recordIndices(decides), syntax, source: source, variables: variables,
                sortedBy: keys, lenient: lenient)
        }
        do throws(StoreError) { return try store.recordIndices(sql: q.sql, bindings: q.bindings) } catch {
            if let row = error.raisedRow, let guardError = error.evaluationError {
                throw raised(row: row, guardError, syntax, source: source, variables: variables)
            }
            throw SQLBackendError(stage: "sql", description: "sql: \(error.message)")
        }
    }

    /// Memory's outcome on every record, as `sift batch` reports it in memory: the records
    /// `predicate` selects, and memory's error on each record it raises on (strict). The SQL
    /// answers the rows on which memory cannot raise; the rest (``SQLQuery/rowsMemoryDecides``,
    /// asked of either database) are evaluated here, each on its own.
    func outcomes(
        _ predicate: SiftPredicate, literals: [String: LiteralValue], variables: [String: Value]
    ) throws(SQLBackendError) -> (selected: Set<Int>, raised: [Int: EvaluationError]) {
        let q = try query(
            predicate.syntax, source: predicate.source ?? predicate.description, variables: literals,
            lenient: predicate.options.lenient, inDatabase: false)
        var selected = Set(try recordIndices(q))
        var raised: [Int: EvaluationError] = [:]
        guard let decides = q.rowsMemoryDecides else { return (selected, raised) }
        for i in try recordIndices(decides) {
            do throws(EvaluationError) {
                if try predicate.evaluate(with: records[i].value, variables: variables) {
                    selected.insert(i)
                } else {
                    selected.remove(i)
                }
            } catch {
                selected.remove(i)
                raised[i] = error
            }
        }
        return (selected, raised)
    }

    /// The records a query's rows are (its first column is the records' key), from whichever
    /// database the queries run on.
    private func recordIndices(_ q: SQLQuery) throws(SQLBackendError) -> [Int] {
        guard let postgres else {
            do throws(StoreError) { return try store.recordIndices(sql: q.sql, bindings: q.bindings) } catch {
                throw SQLBackendError(stage: "sql", description: "sql: \(error.message)")
            }
        }
        return try postgres.primaryKeys(q).map { (pk) throws(SQLBackendError) -> Int in
            guard let i = store.recordIndex(ofKey: pk) else {
                throw SQLBackendError(
                    stage: "sql", description: "sql: the first result column is not a record's key: \(pk)")
            }
            return i
        }
    }

    /// The SQL's `selected` records with the answers of the records `memoryDecides` taken from
    /// memory instead (strict, memory's error on the lowest of them that raises; the rest raise
    /// nowhere), in the SQL's order (by record, or by `keys` as memory sorts).
    func merged(
        _ selected: [Int], memoryDecides risky: [Int], _ syntax: PredicateSyntax, source: String,
        variables: [String: LiteralValue], sortedBy keys: [SiftSortDescriptor], lenient: Bool
    ) throws(SQLBackendError) -> [Int] {
        guard !risky.isEmpty else { return selected }
        let predicate = SiftPredicate(syntax, source: source, options: EvaluationOptions(lenient: lenient))
        let bound = variables.mapValues(Value.init)
        var decided: [Int: Bool] = [:]
        for i in risky.sorted() {
            do throws(EvaluationError) {
                decided[i] = try predicate.evaluate(with: records[i].value, variables: bound)
            } catch {
                throw SQLBackendError(
                    stage: "evaluation", description: RecordFilterError(.evaluation(record: i, error)).description,
                    id: error.id, record: i)
            }
        }
        let out = (selected.filter { decided[$0] == nil } + decided.filter(\.value).map(\.key)).sorted()
        guard !keys.isEmpty else { return out }
        do throws(EvaluationError) {
            return try out.map { records[$0].value }.sortedIndices(by: keys).map { out[$0] }
        } catch {
            throw SQLBackendError(stage: "evaluation", description: error.annotated, id: error.id)
        }
    }

    /// The error of a record the row guard found raising: memory's own on that record (its text
    /// and caret in `source`), as `sift filter` prints it in memory.
    func raised(
        row: Int64, _ guardError: EvaluationError, _ syntax: PredicateSyntax, source: String,
        variables: [String: LiteralValue]
    ) -> SQLBackendError {
        guard let record = store.recordIndex(ofKey: row) else {
            return SQLBackendError(
                stage: "evaluation", description: "row \(row): \(guardError.message)", id: guardError.id)
        }
        var found = guardError
        do throws(EvaluationError) {
            _ = try SiftPredicate(syntax, source: source).evaluate(
                with: records[record].value, variables: variables.mapValues(Value.init))
        } catch { found = error }
        return SQLBackendError(
            stage: "evaluation", description: RecordFilterError(.evaluation(record: record, found)).description,
            id: found.id, record: record)
    }
}

extension SQLValue {
    /// The bound value as JSON: null, numbers, strings; a blob as `{"$blob": "hex"}`.
    var json: JSONValue {
        switch self {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .text(let s): return .string(s)
        case .blob(let bytes): return .object([("$blob", .string(SQLValue.hex(bytes)))])
        }
    }
}
