// The `sift` command-line tool: one subcommand per pipeline stage. Exit status: 0 success,
// 1 invalid predicate or data, 2 usage error.

import ArgumentParser
import Foundation
import SiftSyntax

public struct SiftCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sift",
        abstract: "The NSPredicate format language on every platform.",
        subcommands: [ParseCommand.self, FilterCommand.self, BatchCommand.self, SQLCommand.self, StoreCommand.self]
    )
    public init() {}

    /// Runs the tool with `arguments` (the process arguments when nil) and returns the exit status.
    public static func run(_ arguments: [String]? = nil) -> Int32 {
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
        do { return try JSONReader.parse(text).literal as Any? }
        catch { throw ValidationError("--arg #\(n + 1): \(error)") }
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

    @Option(name: .customLong("arg"), parsing: .unconditionalSingleValue, help: "A JSON value for the next %@, %K, %d… specifier.")
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
        var output = OutputBuffer()
        var input = LineInput(fd: STDIN_FILENO)
        defer { input.deallocate() }
        var failed = false
        let completed = try input.forEachLine(beforeRead: { output.flush() }) { bytes in
            let line = String(decoding: bytes, as: UTF8.self)
            do {
                let p = try PredicateSyntax.parse(line, arguments: values)
                if canonical { p.printCanonical(into: &output.text) } else { output.text += try render(p) }
            } catch let e as SyntaxError {
                output.text += e.description
                failed = true
            }
            output.text.bytes.append(0x0A)
            output.flushIfFull()
        }
        output.flush()
        if !completed {
            writeError("<stdin>: error: cannot read the input (\(String(cString: strerror(errno))))")
            throw ExitCode.failure
        }
        if failed { throw ExitCode.failure }
    }
}
