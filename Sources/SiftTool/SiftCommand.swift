// The `sift` command-line tool: one subcommand per pipeline stage. Exit status: 0 success,
// 1 invalid predicate or data, 2 usage error.

import ArgumentParser
import Foundation
import SiftJSON
import SiftSyntax

package struct SiftCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "sift",
        abstract: "The NSPredicate format language on every platform.",
        subcommands: [ParseCommand.self, FilterCommand.self, BatchCommand.self, SQLCommand.self, StoreCommand.self]
    )
    package init() {}

    /// Runs the tool with `arguments` (the process arguments when nil) and returns the exit status.
    package static func run(_ arguments: [String]? = nil) -> Int32 {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            return 0
        } catch let code as ExitCode {
            return code.rawValue
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                return 0
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            return code == .failure ? 1 : 2
        }
    }
}

/// Reads `--arg` values: each is one JSON document.
func parseArguments(_ texts: [String]) throws -> [Any?] {
    try texts.enumerated().map { (n, text) in
        do { return try JSONReader.parse(text).literal as Any? } catch {
            throw ValidationError("--arg #\(n + 1): \(error)")
        }
    }
}

func writeError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

struct ParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse predicates and print their canonical form.",
        discussion: """
            With PREDICATE, prints its canonical form. Without it, reads one predicate per line from
            standard input and prints one line for each: the canonical form, or the diagnostic.
            --arg values are JSON: null, true/false, integers, other numbers as Double, strings,
            arrays, objects as dictionaries, {"$date": seconds since 1970} as a date.
            """
    )

    @Argument(help: "The predicate format string (read lines from standard input when omitted).")
    var predicate: String?

    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: "A JSON value for the next %@, %K, %d… specifier.")
    var args: [String] = []

    @Flag(help: "Print the syntax tree.")
    var tree = false

    @Flag(help: "Print the syntax tree as JSON.")
    var json = false

    func validate() throws {
        if tree && json { throw ValidationError("--tree and --json cannot be used together") }
    }

    func render(_ p: PredicateSyntax) throws -> String {
        if tree { return SyntaxTreePrinter.render(p) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            // Foundation's JSON writer recurses over the encoded tree where no StackGuard check
            // reaches: deep trees are encoded on a large stack of their own.
            let data = try StackGuard.onLargeStack { () throws(any Error) -> Data in try encoder.encode(p) }
            return String(decoding: data, as: UTF8.self)
        }
        return p.description
    }

    func run() throws {
        let values = try parseArguments(args)
        if let predicate {
            do {
                print(try render(try PredicateSyntax.parse(predicate, arguments: values)))
            } catch let e as SyntaxError {
                writeError(e.annotated)
                throw ExitCode.failure
            }
            return
        }
        // One predicate per line of standard input, read and written in large blocks (see
        // LineInput): per line, `readLine` and `print` cost more than parsing does. The flags are
        // read once: each read of an ArgumentParser property looks up generic metadata.
        let canonical = !tree && !json
        let render: ((PredicateSyntax) throws -> String)? = canonical ? nil : { try self.render($0) }
        var output = OutputBuffer()
        var input = LineInput(fd: STDIN_FILENO)
        defer { input.deallocate() }
        var failed = false
        let completed = try input.forEachRun(beforeRead: { output.flush() }) { run in
            if canonical, run.count >= Self.parallelRun, let cut = LineInput.middleLineBoundary(of: run) {
                // A large run is cut in two at a line boundary and the halves parsed on both
                // cores, each into a buffer of its own, written in order.
                output.flush()
                let halves = Halves(
                    first: UnsafeBufferPointer(rebasing: run[..<cut]),
                    second: UnsafeBufferPointer(rebasing: run[cut...]), values: values)
                DispatchQueue.concurrentPerform(iterations: 2) { k in halves.parse(k) }
                OutputBuffer.write(halves.output0.bytes)
                OutputBuffer.write(halves.output1.bytes)
                if halves.failed0 || halves.failed1 { failed = true }
                return
            }
            try LineInput.forEachLine(in: run) { line in
                if try !Self.parseLine(line, values, into: &output.text, render: render) { failed = true }
                output.flushIfFull()
            }
        }
        output.flush()
        if !completed {
            writeError("<stdin>: error: cannot read the input (\(String(cString: strerror(errno))))")
            throw ExitCode.failure
        }
        if failed { throw ExitCode.failure }
    }

    /// Runs of standard input at least this long are parsed on two threads: below it, starting the
    /// second costs more than it saves, and interactive input (a line per read) stays on one.
    static let parallelRun = 64 << 10

    /// Parses one line and appends its result and a newline to `out`: the canonical form (or
    /// `render`'s, for --tree and --json), or the diagnostic. Answers false for a diagnostic.
    static func parseLine(
        _ bytes: UnsafeBufferPointer<UInt8>, _ values: [Any?], into out: inout PrintBuffer,
        render: ((PredicateSyntax) throws -> String)?
    ) throws -> Bool {
        let line = String(decoding: bytes, as: UTF8.self)
        defer { out.bytes.append(0x0A) }
        do {
            let p = try PredicateSyntax.parse(line, arguments: values)
            if let render { out += try render(p) } else { p.printCanonical(into: &out) }
            return true
        } catch let e as SyntaxError {
            out += e.description
            return false
        }
    }
}

/// The two halves of a run of lines parsed on two threads: each thread reads only its half and
/// writes only its own slot, and the caller reads the slots after both threads are done.
private final class Halves: @unchecked Sendable {
    let runs: [UnsafeBufferPointer<UInt8>]
    /// The `--arg` values, only read.
    let values: [Any?]
    /// Each half's output and whether a line of it failed: separate properties, as the two
    /// threads must not write into one array.
    var output0 = PrintBuffer(), output1 = PrintBuffer()
    var failed0 = false, failed1 = false

    init(first: UnsafeBufferPointer<UInt8>, second: UnsafeBufferPointer<UInt8>, values: [Any?]) {
        runs = [first, second]
        self.values = values
    }

    func parse(_ k: Int) {
        var out = PrintBuffer()
        out.reserve(runs[k].count + runs[k].count / 4)
        var anyFailed = false
        // Canonical forms only (no renderer), so nothing but a syntax error can be thrown.
        try? LineInput.forEachLine(in: runs[k]) { line in
            if try !ParseCommand.parseLine(line, values, into: &out, render: nil) { anyFailed = true }
        }
        if k == 0 {
            output0 = out
            failed0 = anyFailed
        } else {
            output1 = out
            failed1 = anyFailed
        }
    }
}
