// Compiled predicates, sort descriptors and the regex cache are shared between threads: the README
// says so, and users build them once and use them everywhere. These tests evaluate one compiled
// predicate over one shared array from many threads at once (structs with typed readers,
// `[String: Any]`, JSON `Value`s and `Codable` values), sort one shared array from many threads,
// and run MATCHES with a shared pattern cache, checking that every thread gets the single-threaded
// answer. The answers alone rarely show a race; `make test` also runs this suite in a build with
// ThreadSanitizer, which turns any overlapping modifying access into a failure.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftEvaluation

/// A `Codable` record, evaluated through `ValueEncoder` and through its own typed readers.
private struct Visit: Codable, KeyValueCoding {
    var id: Int
    var name: String
    var age: Int?
    var score: Double
    var tags: [String]

    static func reader(forKey key: String) -> KeyReader<Visit>? {
        switch key {
        case "id": .integer { $0.id }
        case "name": .string { $0.name }
        case "age": .integer { $0.age }
        case "score": .double { $0.score }
        case "tags": .strings { $0.tags }
        default: nil
        }
    }

    var dictionary: [String: Any] {
        var out: [String: Any] = ["id": id, "name": name, "score": score, "tags": tags]
        if let age { out["age"] = age }
        return out
    }
}

private func visits(_ n: Int) -> [Visit] {
    var rng = SplitMix64(seed: 0x7A5_0015)
    let names = ["Ann", "Bob", "Chloé", "dave", "Émile", "Zoë", "ann-marie"]
    let tags = ["a", "b", "vip", "new", "old"]
    return (0..<n).map { i in
        Visit(
            id: i, name: names[Int(rng.next() % UInt64(names.count))] + String(i % 13),
            age: rng.next() % 5 == 0 ? nil : Int(rng.next() % 90),
            score: Double(rng.next() % 1000) / 10,
            tags: (0..<Int(rng.next() % 3)).map { _ in tags[Int(rng.next() % UInt64(tags.count))] })
    }
}

/// Predicates that take each kind of step: typed integer, double and string checks, ANY over
/// strings, and compiled closures (NOT, arithmetic, MATCHES, a function call).
private let formats = [
    "age >= 18 AND score < 50.5",
    "name BEGINSWITH[cd] 'E' OR ANY tags == 'vip'",
    "NOT (age BETWEEN {20, 40}) AND name MATCHES '[A-Z].*[0-9]'",
    "score * 2 > age OR tags.@count == 2",
    "uppercase:(name) CONTAINS 'ANN' AND age != nil",
]

@Suite struct ThreadSafetyTests {
    /// The `id` of an encoded `Visit`.
    static func id(_ value: Value) -> Int {
        guard case .dictionary(let d) = value, case .integer(let id)? = d["id"] else { return -1 }
        return Int(id)
    }

    @Test(arguments: formats)
    func oneCompiledPredicateOverOneArrayOfStructs(format: String) throws {
        let objects = visits(2_000)
        let predicate = try SiftPredicate(format).compiled(for: Visit.self)
        let expected = try objects.indices.filter { try predicate.evaluate(with: objects[$0]) }.map { objects[$0].id }
        #expect(!expected.isEmpty && expected.count < objects.count, "the predicate should split the data")
        let answers = try concurrently { _ throws -> [Int] in
            let count = try predicate.count(in: objects)
            let ids = try predicate.filter(objects).map(\.id)
            #expect(count == ids.count)
            return ids
        }
        #expect(answers.count == 24)
        for ids in answers { #expect(ids == expected) }
        // evaluate(with:) from many threads on elements of the same array.
        let singles = try concurrently { _ throws -> [Int] in
            try objects.filter { try predicate.evaluate(with: $0) }.map(\.id)
        }
        for ids in singles { #expect(ids == expected) }
    }

    @Test(arguments: formats)
    func oneCompiledPredicateOverOneArrayOfDictionaries(format: String) throws {
        let records = visits(2_000)
        // `[String: Any]` is not Sendable to the compiler; these hold only integers, strings,
        // doubles and arrays of strings, which are.
        nonisolated(unsafe) let objects = records.map(\.dictionary)
        let predicate = try SiftPredicate(format).compiled(for: [String: Any].self)
        let expected = try records.filter { try SiftPredicate(format).evaluate(with: $0) }.map(\.id)
        let answers = try concurrently { _ throws -> [Int] in
            #expect(try predicate.count(in: objects) == expected.count)
            return try predicate.filter(objects).map { $0["id"] as! Int }
        }
        for ids in answers { #expect(ids == expected) }
    }

    @Test(arguments: formats)
    func onePredicateOverOneArrayOfJSONValuesAndCodables(format: String) throws {
        let records = visits(1_000)
        let values = try records.map { try ValueEncoder.encode($0) }
        let predicate = try SiftPredicate(format)
        let expected = try records.filter { try predicate.evaluate(with: $0) }.map(\.id)
        let answers = try concurrently { _ throws -> [[Int]] in
            let fromValues = try values.indices.filter { try predicate.evaluate(with: values[$0]) }
            let viaFilter = try values.filter(predicate).map(Self.id)
            let fromCodables = try records.filter { try predicate.evaluate(with: $0) }.map(\.id)
            return [fromValues, viaFilter, fromCodables]
        }
        for three in answers { for ids in three { #expect(ids == expected) } }
    }

    @Test func oneUncompiledPredicateOverFreshDictionaries() throws {
        // The general path: `SiftPredicate.evaluate(with: Any)`, its pattern caches shared.
        let p = try SiftPredicate("name MATCHES[c] 'a.*' AND age BETWEEN {10, 20} AND name LIKE[cd] '*N*'")
        let counts = try concurrently(rounds: 1) { t throws -> (thread: Int, count: Int) in
            var n = 0
            for i in 0..<2_000 where try p.evaluate(with: ["name": t % 2 == 0 ? "Anna" : "Bob", "age": i % 30]) {
                n += 1
            }
            return (t, n)
        }
        let expected = (0..<2_000).filter { (10...20).contains($0 % 30) }.count
        #expect(counts.count == 8)
        for (t, n) in counts { #expect(n == (t % 2 == 0 ? expected : 0)) }
    }

    @Test func sortingOneArrayFromManyThreads() throws {
        let records = visits(500)
        let values = try records.map { try ValueEncoder.encode($0) }
        let descriptors = [
            try SiftSortDescriptor("name", options: [.caseInsensitive, .diacriticInsensitive]),
            try SiftSortDescriptor("age", ascending: false),
            try SiftSortDescriptor("id"),
        ]
        let expected = try values.sortedIndices(by: descriptors)
        #expect(expected != Array(values.indices), "the sort should reorder the data")
        let answers = try concurrently { _ throws -> [[Int]] in
            let byValue = try values.sorted(by: descriptors).map(Self.id)
            return [try values.sortedIndices(by: descriptors), byValue]
        }
        for pair in answers { for order in pair { #expect(order == expected) } }
    }

    @Test func regexCacheSharedByManyThreads() throws {
        // More distinct patterns than the cache holds, so threads evict each other's entries.
        let patterns = (0..<300).map { "a{\($0 % 7)}[b-z]*\($0)" }
        let subjects = patterns.indices.map { String(repeating: "a", count: $0 % 7) + "xyz\($0)" }
        let answers = try concurrently(rounds: 2) { _ throws -> Int in
            var matched = 0
            for (p, s) in zip(patterns, subjects) {
                if try SiftPredicate("SELF MATCHES %@", p).evaluate(with: Value.string(s)) { matched += 1 }
            }
            return matched
        }
        for n in answers { #expect(n == patterns.count) }
    }
}
