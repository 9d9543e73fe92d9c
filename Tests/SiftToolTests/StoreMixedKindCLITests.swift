// `sift store` over records whose keys take different kinds (issue 27): a store imported from
// `{"age": 40}`, `{"age": "abc"}`, `{"age": 50}` gets a `.dynamic` attribute, and its queries,
// counts, updates and deletes give memory's outcome — memory's error naming the record, or with
// `--lenient` lenient memory's records — never the rows SQL's ordering would pick ("abc" > 30).

import Foundation
import Testing

@testable import SiftTool

@Suite struct StoreMixedKindCLITests {
    let records = #"{"age": 40}"# + "\n" + #"{"age": "abc"}"# + "\n" + #"{"age": 50}"# + "\n"

    @Test(arguments: ["age > 30", #"age < "b""#])
    func strictRaisesMemorysErrorAndLenientAnswersItsRecords(_ predicate: String) throws {
        let (db, dir) = try StoreKeyCLITests().store(records)
        defer { try? FileManager.default.removeItem(at: dir) }
        let memory = try runSift(["filter", predicate, dir.appendingPathComponent("records.json").path])
        #expect(memory.status == 1)
        let strict = try runSift(["store", "query", db, "Record", predicate])
        #expect(strict.status == 1 && strict.stdout.isEmpty, "\(strict.stdout)")
        // The same message as memory's, naming the object (memory names the record's index).
        let message = memory.stderr.split(separator: "\n")[0].split(separator: ": ", maxSplits: 1)[1]
        #expect(strict.stderr.split(separator: "\n").first?.hasSuffix(message) == true, "\(strict.stderr)")
        let counted = try runSift(["store", "query", db, "Record", predicate, "--count"])
        #expect(counted.status == 1)
        let lenientMemory = try runSift([
            "filter", "--lenient", predicate, dir.appendingPathComponent("records.json").path,
        ])
        let lenient = try runSift(["store", "query", db, "Record", predicate, "--lenient"])
        #expect(
            lenient.status == 0 && lenient.stdout == lenientMemory.stdout, "\(lenient.stdout) / \(lenientMemory.stdout)"
        )
        let lenientCount = try runSift(["store", "query", db, "Record", predicate, "--lenient", "--count"])
        let lines = lenientMemory.stdout.split(separator: "\n").count
        #expect(lenientCount.stdout == "\(lines)\n")
        // A strict delete refuses and deletes nothing; a lenient one deletes lenient memory's records.
        #expect(try runSift(["store", "delete", db, "Record", predicate]).status == 1)
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "3\n")
        let deleted = try runSift(["store", "delete", db, "Record", predicate, "--lenient"])
        #expect(deleted.status == 0 && deleted.stdout == "\(lines)\n", "\(deleted.stderr)")
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "\(3 - lines)\n")
    }
}
