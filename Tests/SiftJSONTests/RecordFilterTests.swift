// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The public record filter (RecordFilter, MappedInput) against the plainest reading of the same
// records: each record parsed whole by JSONReader and evaluated by the predicate. Also the DocC
// samples of SiftJSON's catalog, copied verbatim and run, and the `filter-ndjson` sample program
// (a target that depends on SiftJSON alone) run as a subprocess on the bundled people.

import Foundation
import Testing
import SiftJSON
import SiftSyntax
import SiftTestSupport

/// The indices of `records` the predicate matches, record by record (the reference).
private func reference(_ format: String, _ records: [JSONValue], lenient: Bool = false) throws -> [Int] {
    let p = try SiftPredicate(format: format, arguments: [], options: EvaluationOptions(lenient: lenient))
    return try records.indices.filter { try p.evaluate(with: records[$0].value) }
}

private let people = packageRoot.appendingPathComponent("Samples/people.json").path

@Suite struct RecordFilterTests {
    static let predicates = [
        "age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] 'sao'",
        "name CONTAINS[c] 'an' OR ANY tags == 'remote'",
        "score > 80.5",
        "kids.@count == 0",
        "SUBQUERY(kids, $k, $k.age > 5).@count > 0",
        "TRUEPREDICATE",
    ]

    @Test(arguments: predicates)
    func selectsTheRecordsEachRecordsEvaluationSelects(format: String) throws {
        let records = try Records.load(people)
        let input = try MappedInput.open(people)
        let selection = try RecordFilter(try SiftPredicate(format)).select(from: input)
        #expect(selection.recordCount == records.count)
        #expect(selection.indices == (try reference(format, records)))
        let tally = try RecordFilter(try SiftPredicate(format)).count(in: input)
        #expect(tally.records == records.count && tally.matches == selection.indices.count)
        #expect(selection.records() == selection.indices.map { records[$0] })
        var text: [UInt8] = []
        selection.write { text += $0 }
        let expected = selection.indices.map { records[$0].text + "\n" }.joined()
        #expect(String(decoding: text, as: UTF8.self) == expected)
    }

    @Test func sequencesAndArraysReadAlike() throws {
        let records = try Records.load(people)
        let ndjson = records.map(\.text).joined(separator: "\n")
        let p = try SiftPredicate("age < 40")
        let fromArray = try RecordFilter(p).select(from: try MappedInput.open(people))
        let fromLines = try RecordFilter(p).select(from: MappedInput(copying: Array(ndjson.utf8)))
        #expect(fromArray.indices == fromLines.indices)
        #expect(fromArray.records() == fromLines.records())
        #expect(!fromArray.indices.isEmpty)
    }

    @Test func sortingIsStableAndFollowsTheDescriptors() throws {
        let records = try Records.load(people)
        var selection = try RecordFilter(try SiftPredicate("age >= 18")).select(from: try MappedInput.open(people))
        let unsorted = selection.indices
        try selection.sort(by: [try SiftSortDescriptor("age", ascending: false)])
        #expect(Set(selection.indices) == Set(unsorted))
        let ages = selection.records().map { record -> Int64 in
            guard case .object(let members) = record, let age = members.first(where: { $0.0 == "age" }),
                  case .integer(let n) = age.1 else { return -1 }
            return n
        }
        #expect(ages == ages.sorted(by: >))
        #expect(selection.indices.map { records[$0] } == selection.records())
    }

    @Test func theLowestRecordThatRaisesIsTheError() throws {
        let input = MappedInput(copying: Array(#"{"age": 40} {"age": "abc"} {"age": "x"} {"age": 50}"#.utf8))
        #expect {
            _ = try RecordFilter(try SiftPredicate("age > 30")).select(from: input)
        } throws: { error in
            guard let error = error as? RecordFilterError, case .evaluation(let record, _) = error.kind else {
                return false
            }
            return record == 1 && "\(error)".hasPrefix("record 1: ")
        }
        #expect {
            _ = try RecordFilter(try SiftPredicate("age > 30")).count(in: input)
        } throws: { error in
            guard let error = error as? RecordFilterError, case .evaluation(let record, _) = error.kind else {
                return false
            }
            return record == 1 && "\(error)".hasPrefix("record 1: ")
        }
        let lenient = try SiftPredicate(format: "age > 30", arguments: [], options: EvaluationOptions(lenient: true))
        #expect(try RecordFilter(lenient).select(from: input).indices == [0, 3])
        let tally = try RecordFilter(lenient).count(in: input)
        #expect(tally.records == 4 && tally.matches == 2)
    }

    /// Inputs large enough to be read on two threads, with room for the matches reserved after the
    /// first records: counting and selecting agree with each other and with the reference, whether
    /// few or most records match and whether the records' sizes change along the input.
    @Test func largeInputsCountAsTheySelect() throws {
        var text = ""
        for n in 0..<60_000 {
            // Short records first, then longer ones: the early estimate of the room is too small.
            let pad = String(repeating: "x", count: n < 30_000 ? 4 : 120)
            text += "{\"n\": \(n), \"pad\": \"\(pad)\"}\n"
        }
        let input = MappedInput(copying: Array(text.utf8))
        for format in ["modulus:by:(n, 3) != 0", "modulus:by:(n, 997) == 5", "n < 5000", "n >= 5000", "FALSEPREDICATE"] {
            let p = try SiftPredicate(format)
            let selection = try RecordFilter(p).select(from: input)
            var expected: [Int] = []
            for n in 0..<60_000 where try p.evaluate(with: .dictionary(["n": .integer(Int64(n))])) { expected.append(n) }
            #expect(selection.indices == expected, "\(format)")
            let tally = try RecordFilter(p).count(in: input)
            #expect(tally.records == 60_000 && tally.matches == expected.count, "\(format)")
        }
    }

    @Test func aSyntaxErrorComesBeforeAnyEvaluationError() throws {
        // Record 1 raises, but the input is broken further on: the syntax error wins.
        let input = MappedInput(copying: Array("{\"age\": 40}\n{\"age\": \"abc\"}\n{\"age\": }\n".utf8))
        #expect {
            _ = try RecordFilter(try SiftPredicate("age > 30")).select(from: input)
        } throws: { error in
            guard let error = error as? RecordFilterError, case .syntax(let located) = error.kind else {
                return false
            }
            return located.location == SourceLocation(line: 3, column: 9) && error.id == "invalid-json"
                && located.message == "unexpected '}' where a JSON value was expected"
        }
    }

    @Test func variablesAreBound() throws {
        let records = try Records.load(people)
        let p = try SiftPredicate("age > $limit")
        let selection = try RecordFilter(p, variables: ["limit": .integer(40)]).select(from: try MappedInput.open(people))
        #expect(selection.indices == (try reference("age > 40", records)))
    }

    @Test func progressIsReportedEveryThousandRecords() throws {
        struct Counter: RecordFilterProgress {
            var calls: [(Int, Int)] = []
            mutating func update(records: Int, matches: Int, offset: Int) { calls.append((records, matches)) }
        }
        let lines = (0..<5000).map { "{\"n\": \($0)}" }.joined(separator: "\n")
        var counter = Counter()
        let selection = try RecordFilter(try SiftPredicate("n < 2500"))
            .select(from: MappedInput(copying: Array(lines.utf8)), progress: &counter)
        #expect(selection.indices == Array(0..<2500))
        #expect(counter.calls.map(\.0) == [1024, 2048, 3072, 4096])
        #expect(counter.calls.allSatisfy { $0.1 <= $0.0 && $0.1 <= 2500 })
    }

    @Test func aMissingFileIsAnErrorNamingIt() {
        #expect {
            _ = try MappedInput.open("/nonexistent/records.json")
        } throws: { error in
            "\(error)" == "/nonexistent/records.json: error: no such file"
        }
    }
}

@Suite struct DocumentationSampleTests {
    static let catalog = "Sources/SiftJSON/SiftJSON.docc"

    @Test(arguments: ["SiftJSON.md", "FilteringRecords.md"])
    func articleSamplesAreTested(article: String) throws {
        var source = try String(contentsOfFile: #filePath, encoding: .utf8)
        // The FilteringRecords program is the sample target's source, run below.
        source += try String(contentsOf: packageRoot.appendingPathComponent("Samples/FilterNDJSON/main.swift"), encoding: .utf8)
        let found = try samplesMissing(fromArticle: "\(Self.catalog)/\(article)", testSource: source)
        #expect(found.blocks > 0)
        #expect(found.missing == [])
    }

    @Test func readmeSampleIsTested() throws {
        let found = try readmeSamples(of: "SiftJSON")
        #expect(found.blocks == 1)
        #expect(found.missing == [])
    }

    /// The README's example (`swift test` runs in the package root, where its path is relative to).
    @Test func readme() throws {
        let input = try MappedInput.open("Samples/people.json")   // a JSON array, or NDJSON
        let adults = try RecordFilter(try SiftPredicate("age >= 18 AND ANY kids.age < 10")).select(from: input)
        let positions = adults.indices                            // [0, 5, 6, 9, …]: the matching records
        let records = try Records.load(people)
        #expect(positions == (try reference("age >= 18 AND ANY kids.age < 10", records)))
        #expect(positions.prefix(4) == [0, 5, 6, 9])
    }

    @Test func landingPage() throws {
        let value = try JSONReader.parse(#"{"name": "Ann", "age": 40}"#)
        let adult = try SiftPredicate("age >= 18").evaluate(with: value.value)   // true
        #expect(adult)
    }

    @Test func sortingAndReadingTheMatches() throws {
        let input = try MappedInput.open(people)
        var selection = try RecordFilter(try SiftPredicate("age >= 30")).select(from: input)
        try selection.sort(by: [try SiftSortDescriptor("age", ascending: false)])
        let oldestFirst = selection.records().map(\.text)
        let records = try Records.load(people)
        let expected = try reference("age >= 30", records).map { records[$0] }
        #expect(oldestFirst.count == expected.count && !oldestFirst.isEmpty)
        #expect(Set(oldestFirst) == Set(expected.map(\.text)))
    }

    /// The sample program prints what the filter selects in this process, and fails as documented.
    @Test func theSampleProgramFiltersLikeTheLibrary() throws {
        let exe = try #require(builtExecutable(named: "filter-ndjson"))
        let format = "age >= 18 AND ANY kids.age < 10"
        let records = try Records.load(people)
        let expected = try reference(format, records).map { records[$0].text + "\n" }.joined()
        let run = try runProcess(exe, [format, people])
        #expect(run.status == 0)
        #expect(run.stdout == expected && !expected.isEmpty)
        let bad = try runProcess(exe, ["age >", people])
        #expect(bad.status == 1 && bad.stderr.contains("error"))
    }
}

/// Runs `exe` with `arguments`, returning its exit status and outputs.
private func runProcess(_ exe: URL, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = exe
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}
