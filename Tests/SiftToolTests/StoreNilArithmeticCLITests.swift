// `sift store query` with nil into arithmetic over a typed attribute (issue 27): a store imported
// from `{"name":"a","price":3}`, `{"name":"b"}`, `{"name":"c","price":10}` types `price` as an
// optional integer, and `price + 1 > 5` must raise memory's error on b, as `sift filter` does,
// rather than print the rows SQL's NULL leaves (c); `--lenient` prints lenient memory's records.

import Foundation
import Testing

@testable import SiftTool

@Suite struct StoreNilArithmeticCLITests {
    let records =
        #"{"name":"a","price":3}"# + "\n" + #"{"name":"b"}"# + "\n" + #"{"name":"c","price":10}"# + "\n"

    @Test(arguments: ["price + 1 > 5", "abs(price) > 2", #"price * 2 > 5 AND name == "c""#])
    func theStoreRaisesWhereFilterRaises(_ predicate: String) throws {
        let (db, dir) = try StoreKeyCLITests().store(records)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("records.json").path
        let memory = try runSift(["filter", predicate, file])
        #expect(memory.status == 1 && memory.stderr.contains("needs numbers, got nil"), "\(memory.stderr)")
        for extra in [[], ["--count"]] {
            let strict = try runSift(["store", "query", db, "Record", predicate] + extra)
            #expect(strict.status == 1 && strict.stdout.isEmpty, "\(extra): \(strict.stdout)")
            // Memory's message (memory names the record's index, the store the object or the row).
            let message = try #require(memory.stderr.split(separator: "\n")[0].components(separatedBy: "error: ").last)
            #expect(strict.stderr.split(separator: "\n").first?.hasSuffix(message) == true, "\(strict.stderr)")
            // The user's own text under the caret, as memory shows it.
            #expect(
                strict.stderr.split(separator: "\n").dropFirst() == memory.stderr.split(separator: "\n").dropFirst(),
                "\(strict.stderr)")
        }
        let lenientMemory = try runSift(["filter", "--lenient", predicate, file])
        let lenient = try runSift(["store", "query", db, "Record", predicate, "--lenient"])
        #expect(lenient.status == 0 && lenient.stdout == lenientMemory.stdout, "\(lenient.stdout)")
        #expect(!lenient.stdout.contains(#""b""#), "\(lenient.stdout)")
        // A strict delete refuses and deletes nothing.
        #expect(try runSift(["store", "delete", db, "Record", predicate]).status == 1)
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "3\n")
    }
}
