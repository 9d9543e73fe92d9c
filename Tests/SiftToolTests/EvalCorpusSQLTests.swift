// Runs every evaluation case in Corpus/eval through the SQL back-end too: each dataset is loaded
// into a JSONStore (an in-memory SiftStore) once, each predicate is lowered against the inferred schema and run, and the
// selected records must be exactly those for which in-memory evaluation is true, compared on the
// records where memory does not raise. A case the SQL back-end must reject carries `sql:` in its
// corpus file (Corpus/README.md); the rejection must then happen, and nothing else may be rejected.

import Foundation
import Testing
import SiftSyntax
import SiftEvaluation
import SiftSQL
import SiftSQLite
@testable import SiftTool

@Suite struct EvalCorpusSQLTests {
    @Test func evalCorpusOnSQLite() throws {
        let datasets = try EvalCorpus.datasetsJSON()
        let cases = try EvalCorpus.cases()
        var stores: [String: SQLiteBackend.Loaded] = [:]
        var failures: [String] = []
        var agreed = 0, declared = 0
        for c in cases {
            guard let records = c.objectsJSON ?? datasets[c.dataset ?? ""] else {
                failures.append("\(c.location): unknown dataset '\(c.dataset ?? "")'")
                continue
            }
            let loaded: SQLiteBackend.Loaded
            if c.objectsJSON == nil, let s = stores[c.dataset ?? ""] {
                loaded = s
            } else {
                do { loaded = SQLiteBackend.Loaded(backend: try SQLBackend(records: records)) } catch {
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
            let answer = loaded.answer(syntax, source: c.input, variables: c.varsJSON.mapValues(\.literal))
            switch answer {
            case .rejected(let kind, let message):
                if let expected = c.sqlRejection, expected == "unsupported" || expected == kind {
                    declared += 1
                } else {
                    failures.append("\(c.location): the SQL back-end rejected it (\(kind)), not declared with 'sql:'\n\(message)")
                }
                continue
            case _ where c.sqlRejection != nil:
                failures.append("\(c.location): declared 'sql: \(c.sqlRejection!)' but the SQL back-end accepted it")
                continue
            case .runtimeError(let message, let sql):
                if oracle.contains(where: { if case .error = $0 { true } else { false } }) { agreed += 1 }
                else { failures.append("\(c.location): SQL failed though memory raised on no record: \(message)\n\(sql)") }
            case .matches(let set, let sql):
                var wrong: [Int] = []
                for (i, r) in oracle.enumerated() {
                    if case .error = r { continue }
                    if (r == .match) != set.contains(i) { wrong.append(i) }
                }
                if wrong.isEmpty { agreed += 1 }
                else {
                    let mem = oracle.enumerated().filter { $0.element == .match }.map(\.offset)
                    failures.append("\(c.location): records \(wrong) differ; memory true for \(mem), SQL selected \(set.sorted())\n\(sql)")
                }
            }
        }
        print("eval corpus on SQLite: \(agreed) cases agree, \(declared) declared rejections, \(failures.count) failures, of \(cases.count)")
        #expect(failures.isEmpty, "\(failures.count) of \(cases.count) eval cases differ on SQLite:\n\(failures.joined(separator: "\n"))")
        #expect(agreed >= 300, "only \(agreed) eval cases agree on SQLite")
    }
}
