// `sift batch`: a line-oriented corpus runner for other tools and languages. Each input line is a
// JSON case; each case gets exactly one JSON line back, and no case can stop the batch.

import ArgumentParser
import Foundation
import SiftEvaluation
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

        Exit status: 0 once every line has been answered, whatever the cases' outcomes; 1 when \
        --data cannot be read or parsed; 2 usage error.
        """
    )

    @Option(help: "Default objects for cases without \"objects\": a JSON array of records, or NDJSON.")
    var data: String?

    func run() throws {
        var defaultObjects: [Value] = []
        if let data {
            do {
                defaultObjects = try Records.load(data).map(\.value)
            } catch {
                writeError(error.description)
                throw ExitCode.failure
            }
        }
        while var line = readLine(strippingNewline: true) {
            if line.hasSuffix("\r") { line.removeLast() }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let answer = BatchCase.answer(line, defaultObjects: defaultObjects)
            FileHandle.standardOutput.write(Data((answer.text + "\n").utf8))
        }
    }
}

enum BatchCase {
    struct InputError: Error { var message: String }

    /// The JSON line answering one case.
    static func answer(_ line: String, defaultObjects: [Value]) -> JSONValue {
        let document: JSONValue
        do {
            document = try JSONReader.parse(line)
        } catch {
            return .object([("id", .null), ("ok", .bool(false)), ("stage", .string("input")), ("error", .string("invalid JSON: \(error.description)"))])
        }
        guard case .object(let members) = document else {
            return .object([("id", .null), ("ok", .bool(false)), ("stage", .string("input")), ("error", .string("a case must be a JSON object"))])
        }
        let id = members.first { $0.0 == "id" }?.1 ?? .null
        func failure(_ stage: String, _ message: String) -> JSONValue {
            .object([("id", id), ("ok", .bool(false)), ("stage", .string(stage)), ("error", .string(message))])
        }
        do {
            let c = try Parsed(members, defaultObjects: defaultObjects)
            let predicate: SiftPredicate
            do {
                predicate = try SiftPredicate(format: c.format, arguments: c.arguments, options: EvaluationOptions(lenient: c.lenient))
            } catch {
                return failure("parse", error.description)
            }
            var out: [(String, JSONValue)] = [("id", id), ("ok", .bool(true)), ("canonical", .string(predicate.description))]
            if c.evaluate {
                let results: [JSONValue] = c.objects.map { object in
                    do throws(EvaluationError) { return .bool(try predicate.evaluate(with: object, variables: c.variables)) }
                    catch { return .object([("error", .string("\(error.id): \(error.description)"))]) }
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

    /// The fields of one case, checked.
    struct Parsed {
        var format = ""
        var arguments: [Any?] = []
        var variables: [String: Value] = [:]
        var objects: [Value]
        var evaluate = true
        var lenient = false

        init(_ members: [(String, JSONValue)], defaultObjects: [Value]) throws {
            objects = defaultObjects
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
                    for (k, v) in o { variables[k] = v.value }
                case "objects":
                    guard case .array(let a) = value else { throw InputError(message: "\"objects\" must be an array") }
                    objects = a.map(\.value)
                case "mode":
                    switch value {
                    case .string("parse"): evaluate = false
                    case .string("eval"): evaluate = true
                    default: throw InputError(message: "\"mode\" must be \"parse\" or \"eval\"")
                    }
                case "lenient":
                    guard case .bool(let b) = value else { throw InputError(message: "\"lenient\" must be true or false") }
                    lenient = b
                default:
                    break   // "id", and any field the caller keeps for itself ("expected"…)
                }
            }
            guard sawFormat else { throw InputError(message: "missing \"format\"") }
        }
    }
}
