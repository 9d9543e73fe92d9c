// Runs every evaluation case in Corpus/eval through the SQL back-ends too: each dataset is loaded
// into a JSONStore (an in-memory SiftStore) once (and for PostgreSQL copied into a schema on the
// test server), each predicate is lowered against the inferred schema and run, and the selected
// records must be exactly those for which in-memory evaluation is true, or, where memory raises on
// a record, the outcome must be an error naming such a record with memory's error id (SQL answering
// rows there is a failure). A case the SQL back-ends must reject carries `sql:` in its corpus
// file, one only PostgreSQL rejects `postgres:` (Corpus/README.md); the rejection must then
// happen, and nothing else may be rejected.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax
import Testing

@testable import SiftTool

@Suite struct EvalCorpusSQLTests {
    @Test func evalCorpusOnSQLite() throws {
        try run(
            name: "SQLite", load: { SQLiteBackend.Loaded(backend: try SQLBackend(records: $0)) },
            declared: { $0.sqlRejection })
    }

    @Test func evalCorpusOnPostgreSQL() throws {
        let server = try PostgresDiffBackend()
        try run(
            name: "PostgreSQL", load: { try server.load($0) }, declared: { $0.sqlRejection ?? $0.postgresRejection })
    }

    func run(name: String, load: ([JSONValue]) throws -> any LoadedDataset, declared: (EvalCase) -> String?) throws {
        let datasets = try EvalCorpus.datasetsJSON()
        let cases = try EvalCorpus.cases()
        var stores: [String: any LoadedDataset] = [:]
        var failures: [String] = []
        var agreed = 0
        var declaredCount = 0
        // Undeclared declines: with SIFT_CORPUS_UNDECLARED=FILE, also listed there as
        // `file:line<TAB>reason`, for a maintainer to review and declare with `postgres:`.
        var undeclared: [String] = []
        defer {
            if let path = ProcessInfo.processInfo.environment["SIFT_CORPUS_UNDECLARED"], !undeclared.isEmpty {
                try? Data((undeclared.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
        }
        for c in cases {
            guard let records = c.objectsJSON ?? datasets[c.dataset ?? ""] else {
                failures.append("\(c.location): unknown dataset '\(c.dataset ?? "")'")
                continue
            }
            let loaded: any LoadedDataset
            if c.objectsJSON == nil, let s = stores[c.dataset ?? ""] {
                loaded = s
            } else {
                do { loaded = try load(records) } catch {
                    failures.append("\(c.location): cannot load the records: \(error)")
                    continue
                }
                if c.objectsJSON == nil { stores[c.dataset ?? ""] = loaded }
            }
            let syntax: PredicateSyntax
            do { syntax = try PredicateSyntax.parse(c.input, arguments: c.args) } catch {
                failures.append("\(c.location): does not parse: \(error)")
                continue
            }
            let oracle = Oracle.evaluate(syntax, source: c.input, on: records.map(\.value), variables: c.vars)
            let answer = loaded.answer(syntax, source: c.input, variables: c.varsJSON)
            let expected = declared(c)
            switch answer {
            case .rejected(let kind, let message):
                if let expected, expected == "unsupported" || expected == kind {
                    declaredCount += 1
                } else {
                    failures.append("\(c.location): \(name) rejected it (\(kind)), not declared\n\(message)")
                }
                continue
            case .declined(let reason):
                if expected != nil {
                    declaredCount += 1
                } else {
                    failures.append("\(c.location): \(name) declined it, not declared with 'postgres:': \(reason)")
                    undeclared.append("\(c.file):\(c.line)\t\(reason)")
                }
                continue
            case _ where expected != nil:
                failures.append("\(c.location): declared '\(expected!)' but \(name) accepted it")
                continue
            case .runtimeError(let message, let sql):
                if oracle.contains(where: { if case .error = $0 { true } else { false } }) {
                    agreed += 1
                } else {
                    failures.append("\(c.location): SQL failed though memory raised on no record: \(message)\n\(sql)")
                }
            case .raised(let record, let id, let sql):
                if record < oracle.count, oracle[record] == .error(id) {
                    agreed += 1
                } else {
                    failures.append(
                        "\(c.location): \(name) raised \(id) on record \(record); memory: \(oracle)\n\(sql)")
                }
            case .matches(let set, let sql):
                if let i = oracle.firstIndex(where: { if case .error = $0 { true } else { false } }) {
                    failures.append("\(c.location): memory raises on record \(i), \(name) answered rows\n\(sql)")
                    continue
                }
                var wrong: [Int] = []
                for (i, r) in oracle.enumerated() where (r == .match) != set.contains(i) { wrong.append(i) }
                if wrong.isEmpty {
                    agreed += 1
                } else {
                    let mem = oracle.enumerated().filter { $0.element == .match }.map(\.offset)
                    failures.append(
                        "\(c.location): records \(wrong) differ; memory true for \(mem), SQL selected \(set.sorted())\n\(sql)"
                    )
                }
            }
        }
        print(
            "eval corpus on \(name): \(agreed) cases agree, \(declaredCount) declared rejections, \(failures.count) failures, of \(cases.count)"
        )
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(cases.count) eval cases differ on \(name):\n\(failures.joined(separator: "\n"))")
        #expect(agreed >= 300, "only \(agreed) eval cases agree on \(name)")
    }
}
