// `sift filter`: evaluate one predicate against every record of a JSON file and print the
// matching records (or their count, or their positions), optionally sorted.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON
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
            output is the same as with the default --backend memory: the same records, or the \
            same error naming a record on which the predicate raises (with --lenient, the same \
            records as lenient memory); a predicate the SQL back-end cannot express is an error \
            (exit 1).

            --backend postgres does the same on the PostgreSQL server named by --database-url URL \
            (default: the DATABASE_URL environment variable; a libpq URI or key=value string): the \
            records go into a fresh schema there, which is dropped afterwards. What PostgreSQL cannot \
            select exactly (string options [c]/[d], MATCHES, functions, arithmetic on doubles or on \
            keys of mixed types) is an error naming the construct; records on which memory may \
            raise are evaluated in memory, so the outcome is memory's there too; a server that cannot be reached \
            is an error naming the host (exit 1).

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

    @Flag(
        help:
            "Type mismatches (ordering a string and a number, ANY over a non-collection…) are false instead of errors.")
    var lenient = false

    @Flag(help: "Print record counts and timings to standard error.")
    var stats = false

    @Flag(help: "No progress line on standard error (it only appears on a terminal, for inputs taking over a second).")
    var quiet = false

    @OptionGroup var target: BackendOptions

    func validate() throws {
        if count && indices { throw ValidationError("--count and --indices cannot be used together") }
    }

    func run() throws {
        let clock = ContinuousClock()
        let variableJSON = try inputs.variables()
        let descriptors = try inputs.sortDescriptors()
        let arguments = try inputs.arguments()

        let start = clock.now
        let compiled: SiftPredicate
        do {
            compiled = try SiftPredicate(
                format: predicate, arguments: arguments, options: EvaluationOptions(lenient: lenient))
        } catch {
            writeError(error.annotated)
            throw ExitCode.failure
        }
        let compileTime = clock.now - start
        if target.backend != .memory {
            try runSQL(compiled, variableJSON, descriptors, compileTime: compileTime)
        } else {
            try runInMemory(compiled, variableJSON.mapValues(\.value), descriptors, compileTime: compileTime)
        }
    }

    /// The memory back-end, streaming (`RecordFilter`): the input is mapped, each record is read
    /// only as far as the predicate looks into it and evaluated at once, and only the positions of
    /// the matches are kept; the matching records are read again (whole) to sort and print them.
    /// Nothing is printed before the whole input has been read and evaluated, so an error leaves no
    /// partial output.
    private func runInMemory(
        _ compiled: SiftPredicate, _ variables: [String: Value], _ descriptors: [SiftSortDescriptor],
        compileTime: Duration
    ) throws {
        let clock = ContinuousClock()
        let name = Records.displayName(file)
        var start = clock.now
        let input: MappedInput
        do { input = try MappedInput.open(file) } catch {
            writeError(error.description)
            throw ExitCode.failure
        }
        let openTime = clock.now - start
        var filter = RecordFilter(compiled, variables: variables)
        filter.timed = stats
        var progress = FilterProgress(enabled: !quiet)
        func failed(_ error: RecordFilterError) -> ExitCode {
            progress.finish()
            switch error.kind {
            case .syntax(let located): writeError("\(name):\(located.description)")
            case .evaluation: writeError(error.description)
            }
            return ExitCode.failure
        }
        if count {
            let tally: RecordFilter.Count
            do throws(RecordFilterError) { tally = try filter.count(in: input, progress: &progress) } catch {
                throw failed(error)
            }
            progress.finish()
            FileHandle.standardOutput.write(Data("\(tally.matches)\n".utf8))
            if stats {
                writeStats(
                    records: tally.records, matched: tally.matches, read: openTime + tally.readTime,
                    compile: compileTime, evaluate: tally.evaluateTime, sort: nil)
            }
            return
        }
        var selection: RecordFilter.Selection
        do throws(RecordFilterError) { selection = try filter.select(from: input, progress: &progress) } catch {
            throw failed(error)
        }
        progress.finish()

        start = clock.now
        do { try selection.sort(by: descriptors) } catch {
            writeError("sort: \(error.annotated)")
            throw ExitCode.failure
        }
        let sortTime = clock.now - start

        let output = FileHandle.standardOutput
        if indices {
            var out: [UInt8] = []
            out.reserveCapacity(1 << 20)
            for n in selection.indices {
                out.append(contentsOf: String(n).utf8)
                out.append(0x0A)
                if out.count >= 1 << 20 {
                    output.write(Data(out))
                    out.removeAll(keepingCapacity: true)
                }
            }
            if !out.isEmpty { output.write(Data(out)) }
        } else {
            selection.write { output.write(Data($0)) }
        }

        if stats {
            writeStats(
                records: selection.recordCount, matched: selection.indices.count,
                read: openTime + selection.readTime, compile: compileTime, evaluate: selection.evaluateTime,
                sort: !descriptors.isEmpty ? sortTime : nil)
        }
    }

    /// The SQLite back-end: the records loaded into an in-memory database, the predicate lowered.
    private func runSQL(
        _ compiled: SiftPredicate, _ variableJSON: [String: JSONValue], _ descriptors: [SiftSortDescriptor],
        compileTime: Duration
    ) throws {
        let clock = ContinuousClock()
        var start = clock.now
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
        do throws(SQLBackendError) {
            let server = target.backend == .postgres ? try PostgresServer(url: target.databaseURL) : nil
            let sql = try SQLBackend(records: records, server: server)
            matches = try sql.matches(
                compiled.syntax, source: predicate, variables: variableJSON.mapValues(\.literal),
                sortedBy: count ? [] : descriptors, lenient: lenient)
        } catch {
            writeError(error.description)
            throw ExitCode.failure
        }
        let evaluateTime = clock.now - start

        var out = ""
        if count {
            out = "\(matches.count)\n"
        } else if indices {
            for n in matches {
                out += String(n)
                out += "\n"
            }
        } else {
            for n in matches {
                records[n].write(into: &out)
                out += "\n"
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))

        if stats {
            writeStats(
                records: records.count, matched: matches.count, read: readTime, compile: compileTime,
                evaluate: evaluateTime, sort: !descriptors.isEmpty && !count ? .zero : nil)
        }
    }

    private func writeStats(
        records: Int, matched: Int, read: Duration, compile: Duration, evaluate: Duration, sort: Duration?
    ) {
        func ms(_ d: Duration) -> String {
            let c = d.components
            return String(format: "%.3f", Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15)
        }
        var line = "\(records) records read, \(matched) matched; "
        line += "read \(ms(read)) ms, compile \(ms(compile)) ms, evaluate \(ms(evaluate)) ms"
        if let sort { line += ", sort \(ms(sort)) ms" }
        writeError(line)
    }
}

/// Parses `--sort KEY[opts][:desc]` options into sort descriptors.
func parseSortDescriptors(_ specs: [String]) throws -> [SiftSortDescriptor] {
    try specs.map { spec in
        var key = Substring(spec)
        var ascending = true
        if key.hasSuffix(":desc") {
            ascending = false
            key = key.dropLast(5)
        } else if key.hasSuffix(":asc") {
            key = key.dropLast(4)
        }
        var options: ComparisonOptions = []
        if key.hasSuffix("]"), let open = key.lastIndex(of: "[") {
            let letters = key[key.index(after: open)..<key.index(before: key.endIndex)]
            let table: [Character: ComparisonOptions] = [
                "c": .caseInsensitive, "d": .diacriticInsensitive, "n": .normalized, "l": .localeSensitive,
            ]
            if !letters.isEmpty, letters.allSatisfy({ table[$0] != nil }) {
                for l in letters { options.insert(table[l]!) }
                key = key[..<open]
            }
        }
        guard !key.isEmpty else { throw ValidationError("--sort \(spec): missing key path") }
        do throws(SyntaxError) {
            return try SiftSortDescriptor(String(key), ascending: ascending, options: options)
        } catch { throw ValidationError("--sort \(spec): \(error.description)") }
    }
}

/// `--backend` and `--database-url`: where `sift filter` and `sift batch` run their predicates.
struct BackendOptions: ParsableArguments {
    @Option(help: "Evaluate in memory, or load the records into SQLite or PostgreSQL and run the lowered SQL.")
    var backend: BackendKind = .memory

    @Option(
        help: ArgumentHelp("The PostgreSQL server for --backend postgres (default: $DATABASE_URL).", valueName: "URL"))
    var databaseURL: String?
}
