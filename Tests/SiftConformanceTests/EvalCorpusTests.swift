// Runs every evaluation case in Corpus/eval (format in Corpus/README.md): each predicate is
// evaluated against every record of its dataset, and the matching ids (or the first error, with
// its record id and error id) must equal the expectation written beside it. Lenient expectations
// are checked in lenient mode. Later back-ends run the same cases.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSyntax
import SiftTestSupport
import Testing

struct EvalCase {
    var file: String
    var line: Int
    var input = ""
    var dataset: String?
    var args: [Any?] = []
    var vars: [String: Value] = [:]
    var objects: [Value]?
    var match: [Int]?
    var error: (id: Int, kind: String)?
    var lenient: [Int]?
    /// `sql:` — the SQL back-end must reject this case: `unsupported` (any lowering error) or
    /// the lowering error's id.
    var sqlRejection: String?
    /// `postgres: unsupported # why`: PostgreSQL (only) rejects the case, for the reason given.
    var postgresRejection: String?
    /// `vars:` and `objects:` as JSON, for the SQL back-end.
    var varsJSON: [String: JSONValue] = [:]
    var objectsJSON: [JSONValue]?

    var location: String { "\(file):\(line): \(input)" }
}

/// The outcome of running one predicate over a list of records.
enum EvalOutcome: Equatable, CustomStringConvertible {
    case match([Int])
    case error(Int, String)

    var description: String {
        switch self {
        case .match(let ids): "match: " + (ids.isEmpty ? "none" : ids.map(String.init).joined(separator: " "))
        case .error(let id, let kind): "error: \(id) \(kind)"
        }
    }
}

enum EvalCorpus {
    static var directory: URL { Corpus.directory.appendingPathComponent("eval") }

    /// Every dataset, by name, checked so that each record's `id` is its position.
    static func datasets() throws -> [String: [Value]] {
        try datasetsJSON().mapValues { $0.map(\.value) }
    }

    /// Every dataset as JSON records, by name, checked so that each record's `id` is its position.
    static func datasetsJSON() throws -> [String: [JSONValue]] {
        let dir = directory.appendingPathComponent("data")
        var out: [String: [JSONValue]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".json") {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            guard case .array(let records) = try JSONReader.parse(text) else {
                throw CorpusError.malformed(name, 1, "a dataset is a JSON array")
            }
            let values = records.map(\.value)
            for (i, v) in values.enumerated() {
                guard case .dictionary(let d) = v, case .integer(let id)? = d["id"], id == i else {
                    throw CorpusError.malformed(name, 1, "record \(i) needs \"id\": \(i)")
                }
            }
            out[String(name.dropLast(5))] = records
        }
        return out
    }

    static func ids(_ text: String, _ file: String, _ line: Int) throws -> [Int] {
        if text.trimmingCharacters(in: .whitespaces) == "none" { return [] }
        return try text.split(separator: " ").map {
            guard let i = Int($0) else { throw CorpusError.malformed(file, line, "expected ids, got '\($0)'") }
            return i
        }
    }

    static func cases() throws -> [EvalCase] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sift") }
            .sorted()
        var all: [EvalCase] = []
        for name in files {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            var dataset: String?
            var current: EvalCase?
            func finish() throws {
                guard let c = current else { return }
                guard (c.match == nil) != (c.error == nil) else {
                    throw CorpusError.malformed(name, c.line, "a case needs exactly one of 'match:' and 'error:'")
                }
                guard c.dataset != nil || c.objects != nil else {
                    throw CorpusError.malformed(name, c.line, "no 'data:' or 'objects:'")
                }
                all.append(c)
                current = nil
            }
            for (key, value, number) in try Corpus.entries(text, name) {
                if key == "data" {
                    try finish()
                    dataset = value.split(separator: "#").first.map { $0.trimmingCharacters(in: .whitespaces) }
                    continue
                }
                if key == "in" || key == "in-json" {
                    try finish()
                    current = EvalCase(file: name, line: number, dataset: dataset)
                    current!.input = key == "in" ? value : try Corpus.jsonString(value, name, number)
                    continue
                }
                guard current != nil else { throw CorpusError.malformed(name, number, "'\(key):' before 'in:'") }
                switch key {
                case "args":
                    guard case .array(let items) = try JSONReader.parse(value) else {
                        throw CorpusError.malformed(name, number, "'args:' needs a JSON array")
                    }
                    current!.args = items.map { $0.literal as Any? }
                case "vars":
                    guard case .object(let members) = try JSONReader.parse(value) else {
                        throw CorpusError.malformed(name, number, "'vars:' needs a JSON object")
                    }
                    for (k, v) in members {
                        current!.vars[k] = v.value
                        current!.varsJSON[k] = v
                    }
                case "objects":
                    guard case .array(let items) = try JSONReader.parse(value) else {
                        throw CorpusError.malformed(name, number, "'objects:' needs a JSON array")
                    }
                    current!.objects = items.map(\.value)
                    current!.objectsJSON = items
                case "match":
                    current!.match = try ids(value, name, number)
                case "sql":
                    current!.sqlRejection = value.split(separator: "#").first.map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                case "postgres":
                    current!.postgresRejection = value.split(separator: "#").first.map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                case "lenient":
                    current!.lenient = try ids(value, name, number)
                case "error":
                    let parts = value.split(separator: " ")
                    guard parts.count == 2, let id = Int(parts[0]) else {
                        throw CorpusError.malformed(name, number, "'error:' needs 'ID error-id'")
                    }
                    current!.error = (id, String(parts[1]))
                default:
                    throw CorpusError.malformed(name, number, "unknown key '\(key)'")
                }
            }
            try finish()
        }
        return all
    }

    /// Evaluates `predicate` over `records` in order: the matching ids, or the first error.
    static func run(_ predicate: SiftPredicate, _ records: [Value], _ vars: [String: Value]) -> EvalOutcome {
        var ids: [Int] = []
        for (i, r) in records.enumerated() {
            do {
                if try predicate.evaluate(with: r, variables: vars) { ids.append(i) }
            } catch {
                return .error(i, error.id)
            }
        }
        return .match(ids)
    }
}

@Suite struct EvalCorpusTests {
    @Test func evalCorpus() throws {
        let datasets = try EvalCorpus.datasets()
        let cases = try EvalCorpus.cases()
        var failures: [String] = []
        var errors = 0
        for c in cases {
            guard let records = c.objects ?? datasets[c.dataset ?? ""] else {
                failures.append("\(c.location): unknown dataset '\(c.dataset ?? "")'")
                continue
            }
            let syntax: PredicateSyntax
            do { syntax = try PredicateSyntax.parse(c.input, arguments: c.args) } catch {
                failures.append("\(c.location): does not parse: \(error)")
                continue
            }
            let expected: EvalOutcome = c.error.map { .error($0.id, $0.kind) } ?? .match(c.match ?? [])
            if c.error != nil { errors += 1 }
            let got = EvalCorpus.run(SiftPredicate(syntax, source: c.input), records, c.vars)
            if got != expected { failures.append("\(c.location): expected \(expected), got \(got)") }
            if let lenient = c.lenient {
                let l = EvalCorpus.run(
                    SiftPredicate(syntax, options: EvaluationOptions(lenient: true)), records, c.vars)
                if l != .match(lenient) {
                    failures.append("\(c.location): lenient: expected \(EvalOutcome.match(lenient)), got \(l)")
                }
            }
        }
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(cases.count) eval cases failed:\n\(failures.joined(separator: "\n"))")
        #expect(cases.count >= 400, "only \(cases.count) eval cases")
        #expect(errors >= 40, "only \(errors) error cases")
    }
}
