// `sift filter`'s streaming memory back-end, run as a subprocess, against the reference pipeline
// computed in this process (the whole input read by JSONReader, every record converted to a
// Value, evaluated, sorted and printed with JSONValue.write): the same stdout, stderr and status
// for predicates that read part of a record, all of it, or nothing, on inputs with duplicate keys,
// `$date` objects, non-object records, evaluation errors and syntax errors after them; and on
// sequences large enough to be read on two threads (FirstPass), wherever the errors are and
// whether or not the middle of the input falls between two records.

import Foundation
import SiftEvaluation
import Testing

@testable import SiftJSON
@testable import SiftTool

/// What `sift filter ARGS PREDICATE` printed before the streaming reader, computed in process.
private func reference(
    _ predicate: String, _ input: String, sort: [String] = [], count: Bool = false, indices: Bool = false
) throws -> SiftOutput {
    let compiled = try SiftPredicate(format: predicate, arguments: [])
    let records: [JSONValue]
    do throws(RecordsError) { records = try Records.parse(Array(input.utf8), name: "<stdin>") } catch {
        return SiftOutput(status: 1, stdout: "", stderr: error.description + "\n")
    }
    var matches: [Int] = []
    for (n, r) in records.enumerated() {
        do throws(EvaluationError) { if try compiled.evaluate(with: r.value) { matches.append(n) } } catch {
            return SiftOutput(status: 1, stdout: "", stderr: "record \(n): \(error.annotated)\n")
        }
    }
    if !sort.isEmpty && !count {
        let descriptors = try parseSortDescriptors(sort)
        do {
            let order = try matches.map { records[$0].value }.sortedIndices(by: descriptors)
            matches = order.map { matches[$0] }
        } catch {
            return SiftOutput(status: 1, stdout: "", stderr: "sort: \(error.annotated)\n")
        }
    }
    var out = ""
    if count {
        out = "\(matches.count)\n"
    } else if indices {
        for n in matches { out += "\(n)\n" }
    } else {
        for n in matches {
            records[n].write(into: &out)
            out += "\n"
        }
    }
    return SiftOutput(status: 0, stdout: out, stderr: "")
}

private func expectSame(
    _ predicate: String, _ input: String, sort: [String] = [], count: Bool = false, indices: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    var args = ["filter", predicate]
    for s in sort { args += ["--sort", s] }
    if count { args.append("--count") }
    if indices { args.append("--indices") }
    let got = try runSift(args, stdin: input)
    let expected = try reference(predicate, input, sort: sort, count: count, indices: indices)
    #expect(got.status == expected.status, "\(predicate)", sourceLocation: sourceLocation)
    #expect(got.stdout == expected.stdout, "\(predicate)", sourceLocation: sourceLocation)
    #expect(got.stderr == expected.stderr, "\(predicate)", sourceLocation: sourceLocation)
}

private let mixed = """
    {"name": "Ann", "age": 41, "address": {"city": "Oslo", "zip": "0150"}, "kids": [{"age": 7}, {"age": 12}], "x": [1, 2.5e1, "\\u00e9"]}
    {"name": "Bo", "age": 7, "age": 70, "address": {"city": "Lima", "city": "Oslo"}}
    {"name": "Cé", "age": null, "kids": [], "address": null}
    {"$date": 12}
    {"d": {"$date": 5}, "age": 30, "name": "Dan", "address": {"$date": 3}}
    {"name": "Eve", "age": 29.5, "kids": [{"age": 3}, {"name": "no age"}]}
    [1, 2, 3]
    "text"
    {"a": {"b": {"c": [{"d": 1}, {"d": 2}]}}, "age": 18}

    """

@Suite(.serialized) struct FilterStreamingTests {
    @Test func agreesWithTheReferenceOnPartialAndWholeReads() throws {
        let predicates = [
            "age >= 18",
            "age == 70",  // duplicate keys: the last one wins
            "address.city == 'Oslo'",
            "ANY kids.age < 10",
            "kids.@count > 1",
            "SUBQUERY(kids, $k, $k.age > 5).@count > 0",
            "a.b.c.d CONTAINS 2",
            "x[2] == 'é'",
            "TRUEPREDICATE",
            "SELF == 'text'",
            "d < CAST(10, 'NSDate')",
        ]
        for p in predicates {
            try expectSame(p, mixed)
            try expectSame(p, mixed, count: true)
            try expectSame(p, mixed, indices: true)
        }
        try expectSame("TRUEPREDICATE", mixed, sort: ["name:desc"])  // a date record has no key: an error
        try expectSame("name != nil", mixed, sort: ["name:desc"])
        try expectSame("age != nil", mixed, sort: ["address.city", "age:desc"])
    }

    @Test func evaluationErrorsAndSyntaxErrorsAsBefore() throws {
        // A key read on a record that is a date (`{"$date": 12}`) or an array of numbers raises.
        try expectSame("name == 'x' OR address.city == 'Oslo'", mixed)
        try expectSame("address.zip == '0150'", mixed)
        // A syntax error after the record that raises is still the error reported.
        try expectSame("v > 2", "{\"v\": \"x\"}\n{\"v\": 3}\n{\"v\": }\n")
        try expectSame("v > 2", "[{\"v\": 3}, {\"v\": \"x\"}, {\"v\": 4} {}]")
        try expectSame("v > 2", "{\"v\": \"x\"}\n{\"v\": 3}\n")
        // Skipped members are still checked.
        try expectSame("v > 2", "{\"v\": 3, \"w\": [1, 2,]}\n")
        try expectSame("v > 2", "{\"v\": 3, \"w\": \"\\q\"}\n")
        try expectSame("v > 2", "[{\"v\": 3}] [")
    }

    @Test func largeInputThroughAPipe() throws {
        // Several megabytes on standard input (spooled to a temporary file in chunks).
        var input = ""
        for n in 0..<40_000 {
            input += "{\"n\": \(n), \"pad\": \"\(String(repeating: "p", count: 60))\", \"even\": \(n % 2 == 0)}\n"
        }
        let r = try runSift(["filter", "--count", "even == true AND n >= 1000"], stdin: input)
        #expect(r.status == 0)
        #expect(r.stdout == "19500\n")
        let last = try runSift(["filter", "--quiet", "n > 39998"], stdin: input)
        #expect(last.stdout == "{\"n\":39999,\"pad\":\"\(String(repeating: "p", count: 60))\",\"even\":false}\n")
        #expect(last.stderr.isEmpty, "no progress line when standard error is not a terminal")
    }

    @Test func inputFromAFileIsMapped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("mixed.ndjson").path
        try Data(mixed.utf8).write(to: URL(fileURLWithPath: path))
        let r = try runSift(["filter", "age >= 18", path])
        #expect(r.stdout == (try reference("age >= 18", mixed)).stdout)
        let empty = dir.appendingPathComponent("empty.json").path
        try Data().write(to: URL(fileURLWithPath: empty))
        let e = try runSift(["filter", "--count", "TRUEPREDICATE", empty])
        #expect(e.status == 0)
        #expect(e.stdout == "0\n")
        let broken = dir.appendingPathComponent("broken.json").path
        try Data("[{\"a\": 1},\n {\"a\" 2}]".utf8).write(to: URL(fileURLWithPath: broken))
        let b = try runSift(["filter", "a > 0", broken])
        #expect(b.status == 1)
        #expect(b.stderr == "\(broken):2:7: error: expected ':', found '2'\n")
    }
}

/// Inputs over `FirstPass.parallelThreshold`, read in two halves: the reference reads them whole.
@Suite(.serialized) struct FilterTwoThreadTests {
    /// `count` NDJSON records of about 120 bytes, `line(n)` replacing record `n` where it answers one.
    static func records(_ count: Int, pretty: Bool = false, _ line: (Int) -> String? = { _ in nil }) -> String {
        var input = ""
        input.reserveCapacity(count * 130)
        let pad = String(repeating: "p", count: 60)
        for n in 0..<count {
            if let replaced = line(n) {
                input += replaced + "\n"
                continue
            }
            if pretty {
                input += "{\n  \"n\": \(n),\n  \"pad\": \"\(pad)\",\n  \"even\": \(n % 2 == 0)\n}\n"
            } else {
                input += "{\"n\": \(n), \"pad\": \"\(pad)\", \"even\": \(n % 2 == 0)}\n"
            }
        }
        return input
    }

    @Test func largeInputsAreBigEnough() {
        #expect(Self.records(50_000).utf8.count > FirstPass.parallelThreshold)
    }

    @Test func matchesInInputOrder() throws {
        let input = Self.records(50_000)
        try expectSame("even == true AND modulus:by:(n, 7) == 3", input, indices: true)
        try expectSame("modulus:by:(n, 1000) == 999", input)
        try expectSame("n > 100", input, count: true)
        try expectSame("modulus:by:(n, 5000) == 1", input, sort: ["n:desc"])
    }

    @Test func recordsSpanningTheMiddle() throws {
        // Multi-line records: the middle of the input is most likely inside one, and the records
        // after it are read again by the first thread.
        let pretty = Self.records(50_000, pretty: true)
        try expectSame("modulus:by:(n, 999) == 0", pretty, indices: true)
        // One line holding every record: no line boundary to cut at.
        let oneLine = Self.records(50_000).replacingOccurrences(of: "\n", with: " ")
        try expectSame("modulus:by:(n, 999) == 0", oneLine, indices: true)
        try expectSame("modulus:by:(n, 999) == 0", pretty, count: true)
        try expectSame("modulus:by:(n, 999) == 0", oneLine, count: true)
    }

    @Test func errorsAsOnOneThread() throws {
        let late = 40_000
        let early = 10_000
        // An evaluation error in the second half, with the record's position in the whole input.
        try expectSame("n > 2", Self.records(50_000) { $0 == late ? "{\"n\": \"x\"}" : nil })
        // In both halves: the first is reported.
        try expectSame("n > 2", Self.records(50_000) { $0 == early || $0 == late ? "{\"n\": \"x\"}" : nil })
        // A syntax error in the second half is reported before an evaluation error in the first.
        try expectSame(
            "n > 2", Self.records(50_000) { $0 == early ? "{\"n\": \"x\"}" : $0 == late ? "{\"n\": }" : nil })
        // A syntax error in each half: the first.
        try expectSame("n > 2", Self.records(50_000) { $0 == early ? "[1," : $0 == late ? "{\"n\": }" : nil })
        // Counting reports the same errors.
        try expectSame("n > 2", Self.records(50_000) { $0 == late ? "{\"n\": \"x\"}" : nil }, count: true)
        try expectSame(
            "n > 2", Self.records(50_000) { $0 == early ? "{\"n\": \"x\"}" : $0 == late ? "{\"n\": }" : nil },
            count: true)
    }
}
