// The two sides of the differential test behind one small protocol: the in-memory evaluator (the
// oracle, which says per record whether it matches or raises) and a back-end under test that loads
// a dataset once and answers, per predicate, the set of matching record indices. Swapping the
// back-end under test is a change to `DiffBackends.underTest` only.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax
import SiftTestSupport

@testable import SiftTool

/// What the back-end under test answered for one predicate.
enum BackendAnswer: Equatable {
    case matches(Set<Int>, sql: String)
    /// The back-end refused the predicate (e.g. a lowering error), with its error id and message.
    case rejected(kind: String, message: String)
    /// The predicate was accepted but running it failed (e.g. an SQL function raised).
    case runtimeError(String, sql: String)
    /// The predicate raises in memory on this record, with this error id: the back-end's
    /// outcome is memory's error (the SQL row guard met the record).
    case raised(record: Int, id: String, sql: String)
    /// The back-end declined a form it documents it cannot select exactly (PostgreSQL's string options…).
    case declined(String)
}

/// A dataset loaded into a back-end, ready for many predicates.
protocol LoadedDataset {
    /// The matching records for `syntax` with `$variables` bound to JSON values.
    func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer
}

/// A back-end that can load datasets.
protocol DiffBackend {
    var name: String { get }
    func load(_ records: [JSONValue]) throws -> any LoadedDataset
}

/// The oracle's verdict on one record.
enum OracleResult: Equatable {
    case match, noMatch
    case error(String)
}

enum Oracle {
    /// Evaluates `syntax` on every record in memory.
    static func evaluate(
        _ syntax: PredicateSyntax, source: String, on values: [Value],
        variables: [String: Value] = [:]
    ) -> [OracleResult] {
        let predicate = SiftPredicate(syntax, source: source)
        return values.map { v in
            do throws(EvaluationError) {
                return try predicate.evaluate(with: v, variables: variables) ? .match : .noMatch
            } catch { return .error(error.id) }
        }
    }
}

/// The in-memory evaluator as a back-end: used to check the harness itself.
struct MemoryBackend: DiffBackend {
    var name: String { "memory" }
    struct Loaded: LoadedDataset {
        var values: [Value]
        func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer {
            var set = Set<Int>()
            for (i, r) in Oracle.evaluate(syntax, source: source, on: values, variables: variables.mapValues(\.value))
                .enumerated()
            {
                switch r {
                case .match: set.insert(i)
                case .noMatch: break
                case .error(let id): return .raised(record: i, id: id, sql: "")
                }
            }
            return .matches(set, sql: "")
        }
    }
    func load(_ records: [JSONValue]) throws -> any LoadedDataset { Loaded(values: records.map(\.value)) }
}

/// The SQLite back-end of `sift filter --backend sqlite`: the records in a store (JSONStore), the lowering,
/// and the query run on the store.
struct SQLiteBackend: DiffBackend {
    var name: String { "sqlite" }
    struct Loaded: LoadedDataset {
        var backend: SQLBackend
        func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer {
            answer(syntax, source: source, variables: variables.mapValues(\.literal))
        }
        func answer(_ syntax: PredicateSyntax, source: String, variables: [String: LiteralValue]) -> BackendAnswer {
            let q: SQLQuery
            do { q = try backend.query(syntax, source: source, variables: variables) } catch {
                return .rejected(kind: error.id ?? error.stage, message: error.description)
            }
            return run(q)
        }
        /// The answer of running `q` on the records' store.
        func run(_ q: SQLQuery) -> BackendAnswer {
            do throws(StoreError) {
                return .matches(
                    Set(try backend.store.recordIndices(sql: q.sql, bindings: q.bindings)), sql: Self.render(q))
            } catch {
                if let row = error.raisedRow, let record = backend.store.recordIndex(ofKey: row) {
                    return .raised(record: record, id: error.evaluationError?.id ?? error.id, sql: Self.render(q))
                }
                return .runtimeError("\(error)", sql: Self.render(q))
            }
        }
        static func render(_ q: SQLQuery) -> String {
            var b = ""
            JSONValue.array(q.bindings.map(\.json)).write(into: &b)
            return q.sql + "\nbindings: " + b
        }
    }
    func load(_ records: [JSONValue]) throws -> any LoadedDataset { Loaded(backend: try SQLBackend(records: records)) }
}

/// The PostgreSQL back-end of `sift filter --backend postgres`: the records copied from the store
/// into a schema of their own on the test server, the lowering in PostgreSQL's dialect, the query
/// run there. A rejection the dialect declares (a form PostgreSQL cannot select exactly, whose
/// message says "in this dialect") is counted, not failed; every other rejection fails as for SQLite.
final class PostgresDiffBackend: DiffBackend {
    var name: String { "postgres" }
    let server: PostgresServer
    /// Predicates answered and declined, over all datasets.
    var answered = 0, declined = 0
    var declinedReasons: [String: Int] = [:]

    init() throws {
        let url = try postgresTestURL()
        do throws(SQLBackendError) { server = try PostgresServer(url: url) } catch { throw error }
    }

    struct Loaded: LoadedDataset {
        var backend: SQLBackend
        var owner: PostgresDiffBackend
        func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer {
            let q: SQLQuery
            do { q = try backend.query(syntax, source: source, variables: variables.mapValues(\.literal)) } catch {
                if error.description.contains("in this dialect") {
                    owner.declined += 1
                    let reason =
                        error.description.split(separator: "\n").first.map {
                            $0.split(separator: "error: ", maxSplits: 1).last.map(String.init) ?? ""
                        } ?? ""
                    owner.declinedReasons[String(reason.prefix(60)), default: 0] += 1
                    return .declined(reason)
                }
                return .rejected(kind: error.id ?? error.stage, message: error.description)
            }
            owner.answered += 1
            do throws(SQLBackendError) {
                return .matches(
                    Set(try backend.matches(syntax, source: source, variables: variables.mapValues(\.literal))),
                    sql: SQLiteBackend.Loaded.render(q))
            } catch {
                if error.stage == "evaluation", let record = error.record, let id = error.id {
                    // Memory decided the rows it may raise on (`SQLQuery.rowsMemoryDecides`), and raised.
                    return .raised(record: record, id: id, sql: SQLiteBackend.Loaded.render(q))
                }
                return .runtimeError(error.description, sql: SQLiteBackend.Loaded.render(q))
            }
        }
    }
    func load(_ records: [JSONValue]) throws -> any LoadedDataset {
        Loaded(backend: try SQLBackend(records: records, server: server), owner: self)
    }
}

/// The SQLite back-end over the same tables without their documents, as a hand-written schema
/// maps them (`Entity.documentColumn` removed, no entity open): the row guard then evaluates the row's own
/// attributes in memory (`sift_row`) where a dynamically typed column may make memory raise. What
/// only documents decide is refused without them and counted as declined, not failed.
final class NoDocumentsDiffBackend: DiffBackend {
    var name: String { "sqlite without documents" }
    /// Predicates answered and declined, over all datasets.
    var answered = 0, declined = 0
    /// Answered predicates whose guard hands memory the rows where a computed value over typed
    /// columns is NULL (nil into arithmetic, RowGuard.swift).
    var nilGuarded = 0

    /// Whether the guard's conditions (`CASE WHEN … THEN sift_guard`) test a computed value for NULL.
    static func guardsNil(_ sql: String) -> Bool {
        guard let call = sql.range(of: " THEN sift_guard("),
            let start = sql.range(of: "(CASE WHEN ", options: .backwards, range: sql.startIndex..<call.lowerBound)
        else { return false }
        return sql[start.upperBound..<call.lowerBound].contains(" IS NULL)")
    }

    struct Loaded: LoadedDataset {
        var sqlite: SQLiteBackend.Loaded
        var lowering: SQLLowering
        var owner: NoDocumentsDiffBackend
        func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer {
            let q: SQLQuery
            do throws(SQLLoweringError) {
                q = try lowering.select(syntax, source: source, variables: variables.mapValues(\.literal))
            } catch {
                owner.declined += 1
                return .declined(error.message)
            }
            owner.answered += 1
            if NoDocumentsDiffBackend.guardsNil(q.sql) { owner.nilGuarded += 1 }
            return sqlite.run(q)
        }
    }

    /// Declares as integer the records' own columns that hold integers or nil alone, as a
    /// hand-written schema would (JSON keeps every scalar column dynamically typed): nil into
    /// their arithmetic is then memory's error where SQL computes NULL (RowGuard.swift).
    static func typeIntegerColumns(_ schema: inout Schema, _ records: [JSONValue]) {
        guard let i = schema.entities.firstIndex(where: { $0.name == SQLBackend.entity }) else { return }
        for j in schema.entities[i].attributes.indices where schema.entities[i].attributes[j].type == .any {
            let name = schema.entities[i].attributes[j].name
            var integers = 0
            let only = records.allSatisfy { r in
                guard case .object(let fields) = r, let v = fields.last(where: { $0.0 == name })?.1 else { return true }
                switch v {
                case .integer:
                    integers += 1
                    return true
                case .null: return true
                default: return false
                }
            }
            if only && integers > 0 { schema.entities[i].attributes[j].type = .integer }
        }
    }

    func load(_ records: [JSONValue]) throws -> any LoadedDataset {
        let backend = try SQLBackend(records: records)
        var schema = backend.store.schema
        for i in schema.entities.indices {
            schema.entities[i].documentColumn = nil
            schema.entities[i].open = false
        }
        Self.typeIntegerColumns(&schema, records)
        return Loaded(
            sqlite: SQLiteBackend.Loaded(backend: backend),
            lowering: try SQLLowering(schema: schema, entity: SQLBackend.entity), owner: self)
    }
}
