// `sift batch`: a line-oriented corpus runner for other tools and languages. Each input line is a
// JSON case; each case gets exactly one JSON line back, and no case can stop the batch.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON
import SiftSyntax

struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Parse and evaluate JSON test cases, one per line of standard input.",
        discussion: """
            Each non-blank line of standard input is one JSON case:
              {"id": any, "format": "...", "args": [...], "vars": {...}, "objects": [...],
               "mode": "parse" | "eval", "lenient": bool}
            Only "format" is required. "mode" defaults to "eval"; "objects" defaults to the records of \
            --data (a JSON array of records, or NDJSON, as for 'sift filter'), or none. "args" and \
            "vars" values follow the --arg conventions ({"$date": seconds} is a date).

            Each case prints one line of compact JSON, keys in this order:
              {"id": …, "ok": true, "canonical": "…", "results": [true, false, {"error": "<id>: <message>"}]}
              {"id": …, "ok": false, "stage": "parse", "error": "1:7: error: …"}
              {"id": …, "ok": false, "stage": "input", "error": "…"}
            "results" has one entry per object (absent in parse mode); an evaluation error is an \
            entry, not a failed case. A malformed line reports the stage "input" with its id, or null.

            With --backend sqlite, the objects of each case are loaded into an in-memory SQLite \
            database (the --data records once for all cases that use them) and the predicate runs \
            as lowered SQL; "results" are the same entries as in memory (an object the predicate raises \
            on has memory's error entry, with or without "lenient"), and a predicate the SQL back-end \
            cannot express, or a failing query, is a failed case with the stage "lower" or "sql". \
            --backend postgres does the same on the server named by --database-url URL (default: \
            DATABASE_URL), each case's objects in a schema of their own, dropped afterwards; a server \
            that cannot be reached is an error naming the host (exit 1).

            Exit status: 0 once every line has been answered, whatever the cases' outcomes; 1 when the \
            PostgreSQL server of --backend postgres cannot be reached, or when \
            --data cannot be read or parsed; 2 usage error.
            """
    )

    @Option(help: "Default objects for cases without \"objects\": a JSON array of records, or NDJSON.")
    var data: String?

    @OptionGroup var target: BackendOptions

    func run() throws {
        var defaultObjects: [JSONValue] = []
        if let data {
            do {
                defaultObjects = try Records.load(data)
            } catch {
                writeError(error.description)
                throw ExitCode.failure
            }
        }
        let cache = BatchCase.StoreCache()
        if target.backend == .postgres {
            do throws(SQLBackendError) { cache.server = try PostgresServer(url: target.databaseURL) } catch {
                writeError(error.description)
                throw ExitCode.failure
            }
        }
        while var line = readLine(strippingNewline: true) {
            if line.hasSuffix("\r") { line.removeLast() }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let answer = BatchCase.answer(line, defaultObjects: defaultObjects, backend: target.backend, cache: cache)
            FileHandle.standardOutput.write(Data((answer.text + "\n").utf8))
        }
    }
}

enum BatchCase {
    struct InputError: Error { var message: String }

    /// The SQLite store of the --data records, built on first use and shared by every case.
    final class StoreCache {
        var defaultStore: SQLBackend?
        /// The server of `--backend postgres`.
        var server: PostgresServer?
    }

    /// The JSON line answering one case.
    static func answer(
        _ line: String, defaultObjects: [JSONValue], backend: BackendKind = .memory,
        cache: StoreCache = StoreCache()
    ) -> JSONValue {
        let document: JSONValue
        do {
            document = try JSONReader.parse(line)
        } catch {
            return .object([
                ("id", .null), ("ok", .bool(false)), ("stage", .string("input")),
                ("error", .string("invalid JSON: \(error.description)")),
            ])
        }
        guard case .object(let members) = document else {
            return .object([
                ("id", .null), ("ok", .bool(false)), ("stage", .string("input")),
                ("error", .string("a case must be a JSON object")),
            ])
        }
        let id = members.first { $0.0 == "id" }?.1 ?? .null
        func failure(_ stage: String, _ message: String) -> JSONValue {
            .object([("id", id), ("ok", .bool(false)), ("stage", .string(stage)), ("error", .string(message))])
        }
        do {
            let c = try Parsed(members, defaultObjects: defaultObjects)
            let predicate: SiftPredicate
            do {
                predicate = try SiftPredicate(
                    format: c.format, arguments: c.arguments, options: EvaluationOptions(lenient: c.lenient))
            } catch {
                return failure("parse", error.description)
            }
            var out: [(String, JSONValue)] = [
                ("id", id), ("ok", .bool(true)), ("canonical", .string(predicate.description)),
            ]
            if c.evaluate && backend != .memory {
                let literals = c.variables.mapValues(\.literal)
                do throws(SQLBackendError) {
                    let store: SQLBackend
                    if c.ownObjects {
                        store = try SQLBackend(records: c.json, server: cache.server)
                    } else if let s = cache.defaultStore {
                        store = s
                    } else {
                        store = try SQLBackend(records: c.json, server: cache.server)
                        cache.defaultStore = store
                    }
                    let (matched, raised) = try store.outcomes(
                        predicate, literals: literals, variables: c.variables.mapValues(\.value))
                    out.append(
                        (
                            "results",
                            .array(
                                c.json.indices.map { i in
                                    raised[i].map(entry) ?? .bool(matched.contains(i))
                                })
                        ))
                } catch {
                    return failure(error.stage, error.description)
                }
            } else if c.evaluate {
                let variables = c.variables.mapValues(\.value)
                let results: [JSONValue] = c.objects.map { object in
                    do throws(EvaluationError) {
                        return .bool(try predicate.evaluate(with: object, variables: variables))
                    } catch { return entry(error) }
                }
                out.append(("results", .array(results)))
            }
            return .object(out)
        } catch let e as InputError {
            return failure("input", e.message)
        } catch {
            return failure("input", "\(error)")
        }
    }

    /// The entry of an object the predicate raises on, the same from every back-end.
    static func entry(_ error: EvaluationError) -> JSONValue {
        .object([("error", .string("\(error.id): \(error.description)"))])
    }

    /// The fields of one case, checked.
    struct Parsed {
        var format = ""
        var arguments: [Any?] = []
        var variables: [String: JSONValue] = [:]
        /// The objects as JSON (for the SQLite back-end) and as values (for memory).
        var json: [JSONValue]
        var objects: [Value]
        /// Whether the case brings its own "objects" instead of the --data records.
        var ownObjects = false
        var evaluate = true
        var lenient = false

        init(_ members: [(String, JSONValue)], defaultObjects: [JSONValue]) throws {
            json = defaultObjects
            objects = defaultObjects.map(\.value)
            var sawFormat = false
            for (key, value) in members {
                switch key {
                case "format":
                    guard case .string(let s) = value else { throw InputError(message: "\"format\" must be a string") }
                    format = s
                    sawFormat = true
                case "args":
                    guard case .array(let a) = value else { throw InputError(message: "\"args\" must be an array") }
                    arguments = a.map { $0.literal as Any? }
                case "vars":
                    guard case .object(let o) = value else { throw InputError(message: "\"vars\" must be an object") }
                    for (k, v) in o { variables[k] = v }
                case "objects":
                    guard case .array(let a) = value else { throw InputError(message: "\"objects\" must be an array") }
                    json = a
                    objects = a.map(\.value)
                    ownObjects = true
                case "mode":
                    switch value {
                    case .string("parse"): evaluate = false
                    case .string("eval"): evaluate = true
                    default: throw InputError(message: "\"mode\" must be \"parse\" or \"eval\"")
                    }
                case "lenient":
                    guard case .bool(let b) = value else {
                        throw InputError(message: "\"lenient\" must be true or false")
                    }
                    lenient = b
                default:
                    break  // "id", and any field the caller keeps for itself ("expected"…)
                }
            }
            guard sawFormat else { throw InputError(message: "missing \"format\"") }
        }
    }
}
