// `sift filter`: evaluate one predicate against every record of a JSON file and print the
// matching records (or their count, or their positions), optionally sorted.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftSyntax

struct FilterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filter",
        abstract: "Print the JSON records a predicate matches.",
        discussion: """
        Reads FILE (standard input when omitted or '-'): either one JSON array whose elements are \
        the records, or a sequence of JSON values (NDJSON, or values concatenated with any \
        whitespace). The first non-blank character decides: '[' means an array. Records need not \
        be objects: 'SELF > 2' filters [1, 2, 3].

        Prints the matching records as NDJSON (one compact JSON value per line, object keys in \
        input order), in input order unless --sort is given. Every record is evaluated before \
        anything is printed, so an error never leaves partial output.

        --arg and --var values are JSON: null, true/false, integers, other numbers as Double, \
        strings, arrays, objects as dictionaries, {"$date": seconds since 1970} as a date. \
        --var NAME=JSON binds $NAME. --sort takes a key path, optionally string options and a \
        direction: 'age', 'age:desc', 'name[cd]', 'address.city[c]:desc'; nil sorts first when \
        ascending, last when descending; the sort is stable. A key that is not an identifier is \
        quoted as in a predicate: '#"user-agent"[c]:desc' (or %K with --arg in the predicate).

        --backend sqlite loads the records into an in-memory SQLite database (schema inferred \
        from the JSON) and runs the predicate as lowered SQL ('sift sql' shows such SQL). The \
        output is the same as with the default --backend memory for every predicate that \
        evaluates without error in memory; a predicate the SQL back-end cannot express is an \
        error (exit 1). SQL raises no per-record data errors: a record on which memory would \
        raise may come out either way, and --lenient only affects the memory back-end.

        Exit status: 0 success (also when nothing matches); 1 invalid predicate, invalid or \
        unreadable JSON input (FILE:line:column), or an evaluation error (reported as \
        'record N: ' with N the 0-based record index); 2 usage error.
        """
    )

    @Argument(help: "The predicate format string.")
    var predicate: String

    @Argument(help: "The JSON data: an array of records, or NDJSON ('-' or omitted: standard input).")
    var file: String?

    @OptionGroup var inputs: PredicateInputs

    @Flag(help: "Print only the number of matching records.")
    var count = false

    @Flag(help: "Print the 0-based positions of the matching records, one per line.")
    var indices = false

    @Flag(help: "Type mismatches (ordering a string and a number, ANY over a non-collection…) are false instead of errors.")
    var lenient = false

    @Flag(help: "Print record counts and timings to standard error.")
    var stats = false

    @Option(help: "Evaluate in memory, or load the records into SQLite and run the lowered SQL.")
    var backend: BackendKind = .memory

    func validate() throws {
        if count && indices { throw ValidationError("--count and --indices cannot be used together") }
    }

    func run() throws {
        let clock = ContinuousClock()
        func ms(_ d: Duration) -> String {
            let c = d.components
            return String(format: "%.3f", Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15)
        }
        let variableJSON = try inputs.variables()
        let descriptors = try inputs.sortDescriptors()
        let arguments = try inputs.arguments()

        var start = clock.now
        let compiled: SiftPredicate
        do {
            compiled = try SiftPredicate(format: predicate, arguments: arguments, options: EvaluationOptions(lenient: lenient))
        } catch {
            writeError(error.annotated)
            throw ExitCode.failure
        }
        let compileTime = clock.now - start

        start = clock.now
        let records: [JSONValue]
        do {
            records = try Records.load(file)
        } catch {
            writeError(error.description)
            throw ExitCode.failure
        }
        let readTime = clock.now - start

        start = clock.now
        var matches: [Int] = []
        var sorted = false
        if backend == .sqlite {
            do throws(SQLBackendError) {
                let sql = try SQLBackend(records: records)
                matches = try sql.matches(compiled.syntax, source: predicate, variables: variableJSON.mapValues(\.literal),
                                          sortedBy: count ? [] : descriptors)
                sorted = true
            } catch {
                writeError(error.description)
                throw ExitCode.failure
            }
        } else {
            // Only the memory back-end needs the records as evaluation values.
            let variables = variableJSON.mapValues(\.value)
            for (n, v) in records.lazy.map(\.value).enumerated() {
                do {
                    if try compiled.evaluate(with: v, variables: variables) { matches.append(n) }
                } catch {
                    writeError("record \(n): \(error.annotated)")
                    throw ExitCode.failure
                }
            }
        }
        let evaluateTime = clock.now - start

        start = clock.now
        if !descriptors.isEmpty && !count && !sorted {
            do {
                matches = try matches.map { records[$0].value }.sortedIndices(by: descriptors).map { matches[$0] }
            } catch {
                writeError("sort: \(error.annotated)")
                throw ExitCode.failure
            }
        }
        let sortTime = clock.now - start

        var out = ""
        if count {
            out = "\(matches.count)\n"
        } else if indices {
            for n in matches { out += String(n); out += "\n" }
        } else {
            for n in matches { records[n].write(into: &out); out += "\n" }
        }
        FileHandle.standardOutput.write(Data(out.utf8))

        if stats {
            var line = "\(records.count) records read, \(matches.count) matched; "
            line += "read \(ms(readTime)) ms, compile \(ms(compileTime)) ms, evaluate \(ms(evaluateTime)) ms"
            if !descriptors.isEmpty && !count { line += ", sort \(ms(sortTime)) ms" }
            writeError(line)
        }
    }
}

/// Parses `--sort KEY[opts][:desc]` options into sort descriptors.
func parseSortDescriptors(_ specs: [String]) throws -> [SiftSortDescriptor] {
    try specs.map { spec in
        var key = Substring(spec)
        var ascending = true
        if key.hasSuffix(":desc") { ascending = false; key = key.dropLast(5) }
        else if key.hasSuffix(":asc") { key = key.dropLast(4) }
        var options: ComparisonOptions = []
        if key.hasSuffix("]"), let open = key.lastIndex(of: "[") {
            let letters = key[key.index(after: open)..<key.index(before: key.endIndex)]
            let table: [Character: ComparisonOptions] = ["c": .caseInsensitive, "d": .diacriticInsensitive, "n": .normalized, "l": .localeSensitive]
            if !letters.isEmpty, letters.allSatisfy({ table[$0] != nil }) {
                for l in letters { options.insert(table[l]!) }
                key = key[..<open]
            }
        }
        guard !key.isEmpty else { throw ValidationError("--sort \(spec): missing key path") }
        do throws(SyntaxError) { return try SiftSortDescriptor(String(key), ascending: ascending, options: options) }
        catch { throw ValidationError("--sort \(spec): \(error.description)") }
    }
}
