import BenchSupport
// EvalBench: evaluation throughput of compiled SiftPredicates over 1M generated records, side by side
// with a hand-written Swift closure over the same representation (`[String: Any]` dictionaries and
// a typed `Person` struct) and, for the struct, Foundation's `#Predicate`. Every implementation must
// report the same match count for a predicate, or the run fails: a benchmark comparing different
// work is worthless.
//
// Usage: EvalBench [--records N] [--rounds R] [--only TEXT] [--impl NAME]
//   defaults: 1_000_000 records, median of 3 rounds; --only keeps the cases whose label contains TEXT;
//   --impl runs one implementation only (Sift, closure, "Sift 1-by-1" or #Predicate), and --repr one representation
//   only (dict or struct), for profiling: no table then.
import Foundation
import SiftEvaluation

// MARK: - Command line

nonisolated(unsafe) var recordCount = 1_000_000
nonisolated(unsafe) var rounds = 3
nonisolated(unsafe) var only: String? = nil
nonisolated(unsafe) var onlyImpl: String? = nil
nonisolated(unsafe) var onlyRepr: String? = nil
readOptions(
    [
        .integer("--records") { recordCount = $0 },
        .integer("--rounds") { rounds = $0 },
        .text("--only") { only = $0 },
        .text("--impl") { onlyImpl = $0 },
        .text("--repr") { onlyRepr = $0 },
    ], usage: "usage: EvalBench [--records N] [--rounds R] [--only TEXT] [--impl NAME] [--repr dict|struct]")

// MARK: - Data

struct Person: KeyValueCoding, Codable, Sendable {
    var name: String
    var age: Int?
    var city: String
    var score: Double
    var tags: [String]
    var active: Bool

    /// Typed readers, resolved once per key when a predicate is compiled for `Person`.
    static func reader(forKey key: String) -> KeyReader<Person>? {
        switch key {
        case "name": .string { $0.name }
        case "age": .integer { $0.age }
        case "city": .string { $0.city }
        case "score": .double { $0.score }
        case "tags": .strings { $0.tags }
        case "active": .bool { $0.active }
        default: nil
        }
    }

    /// The dictionary representation: same content; a missing age is a missing key.
    var dictionary: [String: Any] {
        var d: [String: Any] = ["name": name, "city": city, "score": score, "tags": tags, "active": active]
        if let age { d["age"] = age }
        return d
    }
}

// ASCII and non-ASCII first names, several of which begin with "jo" only after case, diacritic or
// width folding ("José", "JOÃO", "Jöns", "Ｊｏｅ"); some look close but do not ("Jürgen", "Ijon").
let firstNames = [
    "José", "Jörg", "joanna", "Bob", "Alice", "JOHN", "Jürgen", "Zoë", "Ana", "Jo",
    "Ágata", "Johan", "Émile", "Søren", "Mary", "jonas", "JOÃO", "Jöns", "Ｊｏｅ", "Ijon",
    "Chloé", "Karl", "Łukasz", "Mei",
]
let lastNames = ["Silva", "Müller", "Ng", "Smith", "Öberg", "Dubois", "Kowalski", "Sato"]
let cities = ["Lisbon", "Porto", "Paris", "Oslo", "Berlin", "Madrid", "Tokyo", "New York", "São Paulo", "Kraków"]
let tagPool = ["swift", "rust", "go", "python", "java", "kotlin", "c", "zig"]

func makePeople(_ n: Int, seed: UInt64) -> [Person] {
    var rng = SplitMix64(state: seed)
    var out: [Person] = []
    out.reserveCapacity(n)
    for _ in 0..<n {
        let name = rng.pick(firstNames) + " " + rng.pick(lastNames)
        let age: Int? = rng.below(10) == 0 ? nil : 18 + rng.below(63)  // ~10% missing
        let city = rng.pick(cities)
        let score = (rng.unit() * 10_000).rounded() / 100  // 0.00 ..< 100.00
        var tags: [String] = []
        for _ in 0..<rng.below(5) { tags.append(rng.pick(tagPool)) }  // 0–4, duplicates allowed
        let active = rng.below(2) == 0
        out.append(Person(name: name, age: age, city: city, score: score, tags: tags, active: active))
    }
    return out
}

// MARK: - The hand-written BEGINSWITH[cd] test

let cdFold: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]

/// The straightforward honest test: fold the whole name with Foundation, then a prefix test.
@inline(__always)
func beginsWithJoFolding(_ s: String) -> Bool {
    s.folding(options: cdFold, locale: nil).hasPrefix("jo")
}

/// The same test with the fast path a careful hand-writer would add: an all-ASCII string only
/// needs ASCII case folding of its first two bytes; anything else goes through Foundation.
@inline(__always)
func beginsWithJoFast(_ s: String) -> Bool {
    let u = s.utf8
    if u.allSatisfy({ $0 < 0x80 }) {
        var it = u.makeIterator()
        guard let a = it.next(), let b = it.next() else { return false }
        return a | 0x20 == UInt8(ascii: "j") && b | 0x20 == UInt8(ascii: "o")
    }
    return beginsWithJoFolding(s)
}

// MARK: - Counting loops (one indirect call per pass; the closure literal is inlined into the loop)

@inline(__always)
func countMatches<T>(_ xs: ArraySlice<T>, _ test: (T) -> Bool) -> Int {
    var n = 0
    for x in xs where test(x) { n += 1 }
    return n
}

@inline(never)
func siftCount<T: KeyValueCoding>(_ p: CompiledPredicate<T>, _ xs: ArraySlice<T>) -> Int {
    var n = 0
    do {
        n = try p.count(in: xs)
    } catch {
        fatalError("Sift evaluation failed for \(p): \(error)")
    }
    return n
}

/// The same compiled predicate called object by object, as a user's own loop would call it.
@inline(never)
func siftEvaluateCount<T: KeyValueCoding>(_ p: CompiledPredicate<T>, _ xs: ArraySlice<T>) -> Int {
    var n = 0
    do {
        for x in xs where try p.evaluate(with: x) { n += 1 }
    } catch {
        fatalError("Sift evaluation failed for \(p): \(error)")
    }
    return n
}

@inline(never)
func foundationCount(_ p: Predicate<Person>, _ xs: ArraySlice<Person>) -> Int {
    var n = 0
    do {
        for x in xs where try p.evaluate(x) { n += 1 }
    } catch {
        fatalError("#Predicate evaluation failed: \(error)")
    }
    return n
}

// MARK: - Cases

struct Case {
    let label: String
    let format: String
    let dictClosure: @Sendable (ArraySlice<[String: Any]>) -> Int
    let personClosure: @Sendable (ArraySlice<Person>) -> Int
    /// nil when the predicate cannot be written with `#Predicate` on this toolchain.
    let foundation: Predicate<Person>?
}

let cityList: Set<String> = ["Lisbon", "Porto", "Paris", "Oslo"]

let cases: [Case] = [
    Case(
        label: "numeric range", format: "age BETWEEN {25, 45}",
        dictClosure: { countMatches($0) { d in (d["age"] as? Int).map { $0 >= 25 && $0 <= 45 } ?? false } },
        personClosure: { countMatches($0) { p in p.age.map { $0 >= 25 && $0 <= 45 } ?? false } },
        foundation: #Predicate<Person> { p in p.age.flatMap { a in a >= 25 && a <= 45 } ?? false }),
    Case(
        label: "string equality", format: #"city == "Lisbon""#,
        dictClosure: { countMatches($0) { d in (d["city"] as? String) == "Lisbon" } },
        personClosure: { countMatches($0) { p in p.city == "Lisbon" } },
        foundation: #Predicate<Person> { $0.city == "Lisbon" }),
    Case(
        label: "BEGINSWITH[cd] (closure: fold)", format: #"name BEGINSWITH[cd] "jo""#,
        dictClosure: { countMatches($0) { d in (d["name"] as? String).map(beginsWithJoFolding) ?? false } },
        personClosure: { countMatches($0) { p in beginsWithJoFolding(p.name) } },
        foundation: nil),
    Case(
        label: "BEGINSWITH[cd] (closure: ASCII fast path)", format: #"name BEGINSWITH[cd] "jo""#,
        dictClosure: { countMatches($0) { d in (d["name"] as? String).map(beginsWithJoFast) ?? false } },
        personClosure: { countMatches($0) { p in beginsWithJoFast(p.name) } },
        foundation: nil),
    Case(
        label: "IN list", format: #"city IN {"Lisbon", "Porto", "Paris", "Oslo"}"#,
        dictClosure: { countMatches($0) { d in (d["city"] as? String).map { cityList.contains($0) } ?? false } },
        personClosure: { countMatches($0) { p in cityList.contains(p.city) } },
        foundation: #Predicate<Person> { ["Lisbon", "Porto", "Paris", "Oslo"].contains($0.city) }),
    Case(
        label: "ANY over array", format: #"ANY tags == "swift""#,
        dictClosure: { countMatches($0) { d in (d["tags"] as? [String])?.contains("swift") ?? false } },
        personClosure: { countMatches($0) { p in p.tags.contains("swift") } },
        foundation: #Predicate<Person> { $0.tags.contains("swift") }),
    Case(
        label: "4-clause compound", format: #"age > 30 AND active == YES AND score < 50.0 AND city != "Oslo""#,
        dictClosure: {
            countMatches($0) { d in
                guard let a = d["age"] as? Int, a > 30 else { return false }
                guard let act = d["active"] as? Bool, act else { return false }
                guard let s = d["score"] as? Double, s < 50.0 else { return false }
                return (d["city"] as? String) != "Oslo"
            }
        },
        personClosure: {
            countMatches($0) { p in
                (p.age.map { $0 > 30 } ?? false) && p.active && p.score < 50.0 && p.city != "Oslo"
            }
        },
        foundation: #Predicate<Person> { p in
            p.age.flatMap { a in a > 30 } ?? false && p.active && p.score < 50.0 && p.city != "Oslo"
        }),
]

// MARK: - Measurement

struct Impl {
    let name: String
    /// Counts the matches among the first `n` records.
    let run: (_ n: Int) -> Int
}

struct Measured {
    var nsPerRecord: Double
    var count: Int
}

nonisolated(unsafe) var failures: [String] = []

func fail(_ message: String) {
    let line = "!!! MISMATCH: \(message)"
    print(line)
    FileHandle.standardError.write((line + "\n").data(using: .utf8)!)
    failures.append(message)
}

/// One warm-up pass of every implementation over the first tenth of the records (enough to warm
/// caches and lazily initialized state, at a tenth of the cost), then `rounds` round-robin passes
/// over all records (interleaved so that noise from other processes spreads over all of them);
/// the median time of each.
func measure(_ label: String, records: Int, _ allImpls: [Impl]) -> [Measured] {
    if let onlyImpl {
        for impl in allImpls where impl.name == onlyImpl {
            for _ in 0...rounds { consume(impl.run(records)) }
        }
        return allImpls.map { _ in Measured(nsPerRecord: 1, count: 0) }
    }
    let impls = allImpls
    var times = Array(repeating: [Double](), count: impls.count)
    var counts = Array(repeating: -1, count: impls.count)
    for impl in impls { consume(impl.run(max(1, records / 10))) }
    for _ in 0..<rounds {
        for (i, impl) in impls.enumerated() {
            let start = now()
            let c = impl.run(records)
            let elapsed = now() - start
            consume(c)
            if counts[i] >= 0 && c != counts[i] {
                fail("\(label): \(impl.name) counted \(c), then \(counts[i]) in another pass")
            }
            counts[i] = c
            times[i].append(Double(elapsed) / Double(records))
        }
    }
    for i in impls.indices where counts[i] != counts[0] {
        fail("\(label): \(impls[i].name) counted \(counts[i]) but \(impls[0].name) counted \(counts[0])")
    }
    return impls.indices.map { Measured(nsPerRecord: median(times[$0]), count: counts[$0]) }
}

/// Microseconds per `SiftPredicate(format)` (parse + compile), median of `rounds` batches.
func compileMicros(_ format: String, iterations: Int = 2_000) -> Double {
    var samples: [Double] = []
    for _ in 0..<(rounds + 1) {
        let start = now()
        var acc = 0
        for _ in 0..<iterations {
            do { acc &+= try SiftPredicate(format).description.utf8.count } catch { fatalError("\(format): \(error)") }
        }
        consume(acc)
        samples.append(Double(now() - start) / Double(iterations) / 1_000)
    }
    return median(Array(samples.dropFirst()))  // the first batch is the warm-up
}

// MARK: - Formatting

func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
    let n = s.count
    if n >= w { return s }
    let fill = String(repeating: " ", count: w - n)
    return right ? fill + s : s + fill
}

func fmt(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }

// MARK: - Run

let genStart = now()
let people = makePeople(recordCount, seed: 0x5EED_5EED)
let dicts = people.map(\.dictionary)
print(
    "EvalBench: \(recordCount) records (generated in \(fmt(Double(now() - genStart) / 1e9, 2)) s), median of \(rounds) rounds after a warm-up over the first tenth"
)
print("")

struct Row {
    let label: String, format: String, repr: String, matches: Int
    let sift: Double, closure: Double, foundation: Double?
    /// `evaluate(with:)` per object (informational; the targets are for `count(in:)`).
    let oneByOne: Double
}
var rows: [Row] = []
var compileRows: [(String, Double)] = []

let totalStart = now()
for c in cases where only.map({ c.label.contains($0) }) ?? true {
    let sift: SiftPredicate
    do { sift = try SiftPredicate(c.format) } catch { fatalError("\(c.format): \(error)") }
    // Compiled once per element type, as `filter` does; the per-object loop only evaluates.
    let siftDict = sift.compiled(for: [String: Any].self)
    let siftPerson = sift.compiled(for: Person.self)

    if onlyRepr == "struct" {
        _ = measure(
            "\(c.label) / Person", records: people.count, [Impl(name: "Sift") { siftCount(siftPerson, people[..<$0]) }])
        continue
    }
    if onlyRepr == "dict" {
        _ = measure(
            "\(c.label) / dictionaries", records: dicts.count,
            [Impl(name: "Sift") { siftCount(siftDict, dicts[..<$0]) }])
        continue
    }
    let d = measure(
        "\(c.label) / dictionaries", records: dicts.count,
        [
            Impl(name: "Sift") { siftCount(siftDict, dicts[..<$0]) },
            Impl(name: "closure") { c.dictClosure(dicts[..<$0]) },
            Impl(name: "Sift 1-by-1") { siftEvaluateCount(siftDict, dicts[..<$0]) },
        ])
    rows.append(
        Row(
            label: c.label, format: c.format, repr: "[String: Any]", matches: d[0].count,
            sift: d[0].nsPerRecord, closure: d[1].nsPerRecord, foundation: nil, oneByOne: d[2].nsPerRecord))

    var impls = [
        Impl(name: "Sift") { siftCount(siftPerson, people[..<$0]) },
        Impl(name: "closure") { c.personClosure(people[..<$0]) },
        Impl(name: "Sift 1-by-1") { siftEvaluateCount(siftPerson, people[..<$0]) },
    ]
    if let f = c.foundation { impls.append(Impl(name: "#Predicate") { foundationCount(f, people[..<$0]) }) }
    let s = measure("\(c.label) / Person", records: people.count, impls)
    rows.append(
        Row(
            label: c.label, format: c.format, repr: "Person", matches: s[0].count,
            sift: s[0].nsPerRecord, closure: s[1].nsPerRecord, foundation: s.count > 3 ? s[3].nsPerRecord : nil,
            oneByOne: s[2].nsPerRecord))
    if s[0].count != d[0].count {
        fail("\(c.label): \(s[0].count) matches over Person but \(d[0].count) over dictionaries (same data)")
    }
    if !compileRows.contains(where: { $0.0 == c.format }) {
        compileRows.append((c.format, compileMicros(c.format)))
    }
}
let totalSeconds = Double(now() - totalStart) / 1e9

// Table
let header = [
    pad("predicate", 42), pad("repr", 13), pad("matches", 8, right: true), pad("Sift ns", 8, right: true),
    pad("closure", 8, right: true), pad("#Pred ns", 9, right: true), pad("Sift/clo", 9, right: true),
    pad("#Pred/Sift", 10, right: true), pad("1-by-1 ns", 9, right: true),
].joined(separator: " ")
print(header)
print(String(repeating: "-", count: header.count))
for r in rows {
    let ratio = r.sift / r.closure
    let fcol = r.foundation.map { fmt($0) } ?? (r.repr == "Person" ? "n/a" : "-")
    let frat = r.foundation.map { fmt($0 / r.sift, 2) + "x" } ?? (r.repr == "Person" ? "n/a" : "-")
    print(
        [
            pad(r.label, 42), pad(r.repr, 13), pad(String(r.matches), 8, right: true), pad(fmt(r.sift), 8, right: true),
            pad(fmt(r.closure), 8, right: true), pad(fcol, 9, right: true), pad(fmt(ratio, 2) + "x", 9, right: true),
            pad(frat, 10, right: true), pad(fmt(r.oneByOne), 9, right: true),
        ].joined(separator: " "))
}
print("")
print("Targets: Sift/closure <= 1.5x over the same representation; #Pred/Sift >= 10x.")
for r in rows {
    let ratio = r.sift / r.closure
    var notes: [String] = []
    notes.append(ratio <= 1.5 ? "Sift/closure ok" : "Sift/closure MISSED (\(fmt(ratio, 2))x)")
    if let f = r.foundation {
        notes.append(f / r.sift >= 10 ? "#Pred/Sift ok" : "#Pred/Sift MISSED (\(fmt(f / r.sift, 2))x)")
    }
    print("  \(pad(r.label, 42)) \(pad(r.repr, 13)) \(notes.joined(separator: ", "))")
}
print("")
print("Compile (parse + compile, µs per SiftPredicate(...)):")
for (format, us) in compileRows {
    print("  \(pad(fmt(us, 2), 7, right: true)) µs  \(format)")
}
print("")
print("Notes: BEGINSWITH[cd] has no #Predicate form on this toolchain (localizedStandardContains and")
print("lowercased() are unsupported in #Predicate on Linux), so that column is n/a. Closures: \"fold\" =")
print("name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)")
print(".hasPrefix(\"jo\"); \"ASCII fast path\" = same, but all-ASCII names compare their first two bytes")
print("case-insensitively. IN-list closures use a Set<String>; #Predicate uses an array literal.")
print("Sift: SiftPredicate(format).compiled(for: T.self) once, then count(in:) over the records (Person")
print("answers keys through typed KeyReaders; [String: Any] through Sift's code specialised for it);")
print("count(in:) tests runs of objects one comparison at a time. \"1-by-1\" is the same compiled")
print("predicate's evaluate(with:) called per object in a loop: informational, not a target.")
print("Measured part took \(fmt(totalSeconds, 1)) s. (sink: \(blackhole & 1))")

if !failures.isEmpty {
    print("")
    print("!!! \(failures.count) MISMATCH(ES): the implementations did not do the same work; results are invalid.")
    exit(1)
}
