// The command line at the nesting limit: for every nesting family, its deepest accepted predicate
// (1,000 levels) and one level more go through the built `sift` executable, as a user would run it:
// `sift parse` (argument and standard input), `sift filter` on both back-ends and `sift sql`. At the
// limit each command gives its ordinary result (the library's nesting tests check the walks on a
// small stack; this checks nothing in the tool's own path recurses without a guard); one level
// beyond, each gives the clear nested-too-deeply error with its position, and no output.

import Foundation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftTool

/// The deepest member of each family the parser accepts, by family name: searched once, upwards
/// from two levels below the limit (every family reaches that far; the syntax tests check it), on a
/// large stack so that the search itself cannot overflow the test's thread.
private let deepestByFamily: [String: Int] = {
    try! onSmallStack(stackSize: 64 << 20) {
        var result: [String: Int] = [:]
        for family in nestingFamilies {
            func accepts(_ n: Int) -> Bool { (try? PredicateSyntax.parse(family.make(n))) != nil }
            var low = PredicateSyntax.maximumDepth - 2
            var step = 1
            precondition(accepts(low), "\(family) at \(low)")
            while accepts(low + step) {
                low += step
                step *= 2
            }
            // low is accepted and low + step is not: bisect between them.
            var high = low + step
            while high - low > 1 {
                let mid = (low + high) / 2
                if accepts(mid) { low = mid } else { high = mid }
            }
            result[family.name] = low
        }
        return result
    }
}()

private func deepestAccepted(_ family: NestingFamily) -> Int { deepestByFamily[family.name]! }

/// The canonical form of `text`, printed on a large stack.
private func canonical(_ text: String) throws -> String {
    try onSmallStack(stackSize: 64 << 20) { try PredicateSyntax.parse(text).description }
}

/// `nestingRecordJSON` as `sift filter` prints it: compact, keys in input order.
private let printedRecord = #"{"a":1,"s":"x","nums":[0,1],"tags":["x"],"kids":[{"age":2}]}"# + "\n"

/// The record and the schema, written once to a temporary folder for the commands to read.
private let files: (record: String, schema: String) = {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-deep-cli-\(getpid())")
    try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let record = dir.appendingPathComponent("record.json")
    let schema = dir.appendingPathComponent("record.schema.json")
    try! Data(nestingRecordJSON.utf8).write(to: record)
    try! Data(nestingRecordSchemaJSON.utf8).write(to: schema)
    return (record.path, schema.path)
}()

/// Checks that `r` is the nested-too-deeply error for `text`: exit 1, nothing on standard output,
/// and the diagnostic with a position inside the text, the limit, the line and a caret.
private func expectTooDeep(_ r: SiftOutput, _ text: String, _ context: String) {
    #expect(r.status == 1, "\(context): status \(r.status), \(r.stderr.prefix(200))")
    #expect(r.stdout.isEmpty, "\(context): \(r.stdout.prefix(200))")
    let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 4, "\(context): \(r.stderr.prefix(300))")
    guard lines.count == 4 else { return }
    #expect(lines[0].hasPrefix("1:"), "\(context): \(lines[0])")
    #expect(
        lines[0].hasSuffix(
            "error: predicate is nested too deeply (the limit is \(PredicateSyntax.maximumDepth) levels)"),
        "\(context): \(lines[0])")
    #expect(lines[1] == text, "\(context): the predicate is not echoed")
    let caret = lines[2].drop { $0 == " " }
    #expect(caret.hasPrefix("^") && lines[2].count <= text.count, "\(context): no caret under the predicate")
}

/// Whether a refusal is one the SQL back-end gives deep trees on purpose (see the lowering's own
/// nesting tests): deep integer arithmetic outgrows a statement; nested constant arrays compare
/// with nothing.
private func isKnownLoweringRefusal(_ stderr: String) -> Bool {
    stderr.contains("nested too deeply to lower") || stderr.contains("cannot be compared with")
}

/// Whether the command refusing `family` at the limit (`deep`) refuses its depth-1 member too, with
/// the same message (positions aside): a construct the SQL back-end cannot express at any depth.
private func refusedAtAnyDepth(_ command: [String], _ family: NestingFamily, _ deep: SiftOutput, _ rest: [String])
    throws -> Bool
{
    let shallow = try runSift(command + [family.make(1)] + rest)
    func message(_ stderr: String) -> Substring? {
        guard let first = stderr.split(separator: "\n").first, let at = first.range(of: "error: ") else { return nil }
        return first[at.upperBound...]
    }
    return deep.stdout.isEmpty && shallow.status == 1 && message(shallow.stderr) != nil
        && message(shallow.stderr) == message(deep.stderr)
}

@Suite struct DeepNestingCLITests {
    /// The predicates below are a thousand levels deep: each family's deepest member is at least
    /// that, and one more level is refused.
    @Test(arguments: nestingFamilies)
    func theDeepestAreAtTheLimit(_ family: NestingFamily) throws {
        #expect(PredicateSyntax.maximumDepth == 1000)
        let n = deepestAccepted(family)
        #expect(n >= PredicateSyntax.maximumDepth - 2, "\(family): \(n)")
    }

    @Test(arguments: nestingFamilies)
    func parseArgument(_ family: NestingFamily) throws {
        let n = deepestAccepted(family)
        let deep = family.make(n)
        let beyond = family.make(n + 1)
        let r = try runSift(["parse", "--", deep])
        #expect(r.status == 0, "\(family) at \(n): \(r.stderr.prefix(300))")
        #expect(r.stdout == (try canonical(deep)) + "\n", "\(family) at \(n)")
        #expect(r.stderr.isEmpty)
        expectTooDeep(try runSift(["parse", "--", beyond]), beyond, "\(family) at \(n + 1)")
    }

    /// All families in one standard input: each deepest line prints its canonical form, each line
    /// beyond the limit its diagnostic, in order, and the status is 1.
    @Test func parseStandardInput() throws {
        var input = ""
        var expected: [String] = []
        for family in nestingFamilies {
            let n = deepestAccepted(family)
            let deep = family.make(n)
            let beyond = family.make(n + 1)
            input += deep + "\n" + beyond + "\n"
            expected.append(try canonical(deep))
            let error = try onSmallStack(stackSize: 64 << 20) { () -> SyntaxError? in
                do {
                    _ = try PredicateSyntax.parse(beyond)
                    return nil
                } catch let e as SyntaxError { return e }
            }
            let description = try #require(error, "\(family) at \(n + 1) parsed").description
            #expect(description.contains("nested too deeply"), "\(family): \(description)")
            expected.append(description)
        }
        let r = try runSift(["parse"], stdin: input)
        #expect(r.status == 1)
        #expect(r.stderr.isEmpty)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines == expected + [""])
    }

    /// The memory back-end evaluates the deepest predicate to the family's expected result (or its
    /// evaluation error, for the families that raise one); one level beyond is the syntax error.
    @Test(arguments: nestingFamilies)
    func filterInMemory(_ family: NestingFamily) throws {
        let n = deepestAccepted(family)
        let deep = family.make(n)
        let beyond = family.make(n + 1)
        let r = try runSift(["filter", "--", deep, files.record])
        switch family.expected(n) {
        case true?:
            #expect(
                r.status == 0 && r.stdout == printedRecord, "\(family) at \(n): \(r.status) \(r.stderr.prefix(300))")
        case false?:
            #expect(r.status == 0 && r.stdout.isEmpty, "\(family) at \(n): \(r.status) \(r.stderr.prefix(300))")
        case nil:
            #expect(r.status == 1 && r.stdout.isEmpty, "\(family) at \(n): \(r.status)")
            #expect(r.stderr.hasPrefix("record 0: "), "\(family) at \(n): \(r.stderr.prefix(300))")
        }
        let counted = try runSift(["filter", "--count", "--", deep, files.record])
        if let expected = family.expected(n) {
            #expect(
                counted.status == 0 && counted.stdout == (expected ? "1\n" : "0\n"),
                "\(family) at \(n): \(counted.stderr.prefix(300))")
        } else {
            #expect(counted.status == 1 && counted.stdout.isEmpty, "\(family) at \(n)")
        }
        expectTooDeep(try runSift(["filter", "--", beyond, files.record]), beyond, "\(family) at \(n + 1), memory")
    }

    /// The SQLite back-end gives the memory back-end's matches for the deepest predicate, or one of
    /// the refusals the lowering gives deep trees on purpose; one level beyond is the syntax error.
    /// SQLite's parser holds about a hundred nested entries (18 CASEs): the parts of these records'
    /// predicates too deep for it are decided by memory on the document, so none fails there.
    @Test(arguments: nestingFamilies)
    func filterWithSQLite(_ family: NestingFamily) throws {
        let n = deepestAccepted(family)
        let deep = family.make(n)
        let beyond = family.make(n + 1)
        let r = try runSift(["filter", "--backend", "sqlite", "--", deep, files.record])
        if r.status == 1, isKnownLoweringRefusal(r.stderr) {
            #expect(r.stdout.isEmpty)
        } else if r.status == 1,
            try refusedAtAnyDepth(["filter", "--backend", "sqlite", "--"], family, r, [files.record])
        {
            // A construct the SQL back-end refuses at depth 1 too, for the same reason.
        } else if let expected = family.expected(n) {
            #expect(
                r.status == 0 && r.stdout == (expected ? printedRecord : ""),
                "\(family) at \(n): \(r.status) \(r.stderr.prefix(300))")
        } else {
            // Memory raises an evaluation error here: so does SQL (the row guard), with memory's message.
            let memory = try runSift(["filter", "--", deep, files.record])
            #expect(
                r.status == 1 && r.stdout.isEmpty && r.stderr == memory.stderr,
                "\(family) at \(n): \(r.status) \(r.stderr.prefix(300))")
        }
        expectTooDeep(
            try runSift(["filter", "--backend", "sqlite", "--", beyond, files.record]), beyond,
            "\(family) at \(n + 1), sqlite")
    }

    @Test(arguments: nestingFamilies)
    func sql(_ family: NestingFamily) throws {
        let n = deepestAccepted(family)
        let deep = family.make(n)
        let beyond = family.make(n + 1)
        let args = ["--schema", files.schema, "--entity", "Record", "--"]
        let r = try runSift(["sql"] + args + [deep])
        if r.status == 1, isKnownLoweringRefusal(r.stderr) {
            #expect(r.stdout.isEmpty)
        } else if r.status == 1, try refusedAtAnyDepth(["sql"] + args, family, r, []) {
            // A construct the lowering refuses at depth 1 too, for the same reason.
        } else {
            #expect(r.status == 0, "\(family) at \(n): \(r.stderr.prefix(300))")
            #expect(
                r.stdout.hasPrefix("SELECT ") && r.stdout.contains(" WHERE "),
                "\(family) at \(n): \(r.stdout.prefix(300))")
        }
        expectTooDeep(try runSift(["sql"] + args + [beyond]), beyond, "\(family) at \(n + 1), sql")
    }
}
