// Predicates compiled for a root type (`SiftPredicate.compiled(for:)`) must answer exactly as the
// general path does: the typed checks of `KeyReader`, the `[String: Any]` specialisation and the
// top-level programs are all shortcuts, and a shortcut that disagrees on one value (nil, NaN, a
// Boolean against a number, a string against a number, ALL over an empty array…) is a bug. These
// tests run thousands of generated predicates over rows holding such values through three roots
// (a struct with typed readers, a `[String: Any]`, and the general `Value` path) and compare
// every answer, errors included.

import Foundation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftEvaluation

/// A row whose keys are read by every kind of typed reader.
struct TypedRow: KeyValueCoding {
    var b: Bool?, i: Int?, j: Int64?, d: Double?, s: String?, t: Date?, tags: [String]?
    var v: SiftEvaluation.Value

    init(b: Bool?, i: Int?, j: Int64?, d: Double?, s: String?, t: Date?, tags: [String]?, v: SiftEvaluation.Value) {
        (self.b, self.i, self.j, self.d, self.s, self.t, self.tags, self.v) = (b, i, j, d, s, t, tags, v)
    }

    static func reader(forKey key: String) -> KeyReader<TypedRow>? {
        switch key {
        case "b": .bool { $0.b }
        case "i": .integer { $0.i }
        case "j": .integer { $0.j }
        case "d": .double { $0.d }
        case "s": .string { $0.s }
        case "t": .date { $0.t }
        case "tags": .strings { $0.tags }
        case "v": .value { $0.v }
        default: nil
        }
    }

    /// The same content as a dictionary; nil is a missing key.
    var dictionary: [String: Any] {
        var out: [String: Any] = [:]
        if let b { out["b"] = b }
        if let i { out["i"] = i }
        if let j { out["j"] = j }
        if let d { out["d"] = d }
        if let s { out["s"] = s }
        if let t { out["t"] = t }
        if let tags { out["tags"] = tags }
        switch v {
        case .null: break
        case .integer(let x): out["v"] = Int(x)
        case .string(let x): out["v"] = x
        case .array(let xs): out["v"] = xs.map { v -> String in if case .string(let s) = v { s } else { "?" } }
        default: out["v"] = v
        }
        return out
    }
}

/// An answer: true, false, or the id of the error raised.
private enum Outcome: Equatable, CustomStringConvertible {
    case answer(Bool)
    case error(String)

    init(_ body: () throws(EvaluationError) -> Bool) {
        do { self = .answer(try body()) } catch { self = .error(error.id) }
    }

    var description: String {
        switch self {
        case .answer(let b): "\(b)"
        case .error(let id): "error \(id)"
        }
    }
}

@Suite struct CompiledPredicateTests {
    static let rows = makeRows(60, seed: 0xC0FFEE)

    /// `count` rows holding the values where a shortcut could plausibly differ.
    static func makeRows(_ count: Int, seed: UInt64) -> [TypedRow] {
        var rng = SplitMix64(seed: seed)
        func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
        let bools: [Bool?] = [nil, true, false]
        let ints: [Int?] = [nil, 0, 1, 5, 42, -3, 3, 7, Int.max, Int.min]
        let doubles: [Double?] = [
            nil, 0.0, -0.0, 2.5, .nan, .infinity, -.infinity, 9_007_199_254_740_992, 1e300, 42.0, 3.0,
        ]
        let strings: [String?] = [nil, "", "a", "5", "José", "jose", "JOSE", "x", "m", "Straße", "STRASSE", "y"]
        let dates: [Date?] = [nil, Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1e6)]
        let arrays: [[String]?] = [nil, [], ["x"], ["x", "y"], ["a", "5", "José"], ["x", "x"]]
        let values: [Value] = [.null, .integer(3), .string("a"), .array([.string("x")])]
        var rows: [TypedRow] = []
        for _ in 0..<count {
            rows.append(
                TypedRow(
                    b: pick(bools), i: pick(ints), j: pick(ints).map { Int64($0) }, d: pick(doubles),
                    s: pick(strings), t: pick(dates), tags: pick(arrays), v: pick(values)))
        }
        return rows
    }

    static let keys = ["b", "i", "j", "d", "s", "t", "tags", "v"]
    static let operators = [
        "==", "!=", "<", "<=", ">", ">=", "BETWEEN", "IN", "BEGINSWITH", "CONTAINS", "LIKE",
        "==[c]", "==[cd]", "!=[cd]", "IN[c]", "<[c]", "ENDSWITH[cd]",
    ]
    static let constants = [
        "0", "1", "-3", "42", "2.5", "-0.0", "9007199254740993", "1e300", "YES", "NO", "nil",
        #""a""#, #""5""#, #""José""#, #""jose""#, #""""#, #""x""#, #""strasse""#,
        #"{1, 2.0, "a", nil}"#, #"{"x", "y"}"#, "{3, 7}", "{7, 3}", "{2.5, 1e10}", #"{"a", "m"}"#,
        "{YES}", #"{-3, "x", 42}"#,
    ]

    /// One comparison, maybe quantified.
    static func comparison(_ rng: inout SplitMix64) -> String {
        func pick(_ xs: [String]) -> String { xs[Int(rng.next() % UInt64(xs.count))] }
        let key = pick(keys)
        let op = pick(operators)
        let constant = pick(constants)
        let quantifier = rng.next() % 4 == 0 ? pick(["ANY ", "ALL ", "NONE ", "SOME "]) : ""
        return "\(quantifier)\(key) \(op) \(constant)"
    }

    /// A random predicate (`predicate`), as text, for the general path, and compiled for `TypedRow`
    /// and for dictionaries.
    static func randomCompiled(_ rng: inout SplitMix64, lenient: Bool) throws -> (
        format: String, general: SiftPredicate, typed: CompiledPredicate<TypedRow>,
        dictionary: CompiledPredicate<[String: Any]>
    ) {
        let format = predicate(&rng)
        let p = try SiftPredicate(format, options: EvaluationOptions(lenient: lenient))
        return (format, p, p.compiled(for: TypedRow.self), p.compiled(for: [String: Any].self))
    }

    static func predicate(_ rng: inout SplitMix64) -> String {
        switch rng.next() % 6 {
        case 0: return comparison(&rng) + " AND " + comparison(&rng)
        case 1: return comparison(&rng) + " OR " + comparison(&rng)
        case 2: return "NOT (" + comparison(&rng) + ")"
        case 3: return (0..<4).map { _ in comparison(&rng) }.joined(separator: " AND ")
        case 4: return "(" + comparison(&rng) + " OR " + comparison(&rng) + ") AND " + comparison(&rng)
        default: return comparison(&rng)
        }
    }

    /// Every generated predicate answers the same for the typed struct, the dictionary compiled
    /// for `[String: Any]`, and the general path, row by row; `count(in:)` and `filter` agree.
    @Test(arguments: [false, true])
    func typedAndDictionaryRootsAgreeWithTheGeneralPath(lenient: Bool) throws {
        var rng = SplitMix64(seed: lenient ? 77 : 1_234_567)
        let rows = Self.rows
        let dictionaries = rows.map(\.dictionary)
        var compared = 0
        var typedLeaves = 0
        for _ in 0..<1_500 {
            let (format, p, typed, dict) = try Self.randomCompiled(&rng, lenient: lenient)
            if case .single(let step) = typed.program, case .closure = step {} else { typedLeaves += 1 }
            var expectedMatches: [Int]? = []
            for (n, row) in rows.enumerated() {
                let expected = Outcome { () throws(EvaluationError) in try p.evaluate(with: dictionaries[n] as Any) }
                let viaStruct = Outcome { () throws(EvaluationError) in try typed.evaluate(with: row) }
                let viaDictionary = Outcome { () throws(EvaluationError) in try dict.evaluate(with: dictionaries[n]) }
                #expect(viaStruct == expected, "\(format) on row \(n) \(row): struct \(viaStruct), general \(expected)")
                #expect(
                    viaDictionary == expected, "\(format) on row \(n): dictionary \(viaDictionary), general \(expected)"
                )
                switch expected {
                case .answer(true): expectedMatches?.append(n)
                case .answer(false): break
                case .error: expectedMatches = nil
                }
                compared += 1
            }
            if let expectedMatches {
                #expect(try typed.count(in: rows) == expectedMatches.count, "\(format)")
                #expect(try dict.filter(dictionaries).count == expectedMatches.count, "\(format)")
                #expect(try rows.filter(p).map(\.s) == expectedMatches.map { rows[$0].s }, "\(format)")
            } else {
                #expect(throws: EvaluationError.self, "\(format)") { try typed.count(in: rows) }
            }
        }
        #expect(compared == 1_500 * rows.count)
        // The shortcuts were exercised, not skipped (a top-level typed check or program; lenient
        // mode keeps its three-valued closures at the top and uses typed checks inside them).
        if !lenient { #expect(typedLeaves > 500, "only \(typedLeaves) predicates compiled to typed programs") }
    }

    /// Hand-picked cases where a shortcut could plausibly differ.
    @Test func edgeCases() throws {
        let nan = TypedRow(b: nil, i: nil, j: nil, d: .nan, s: nil, t: nil, tags: [], v: .null)
        let cases: [(String, TypedRow, Bool)] = [
            ("d < 1", nan, true),  // NaN orders below every number
            ("d <= -1e308", nan, true),
            ("d > -1e308", nan, false),
            ("d BETWEEN {-1e308, 1e308}", nan, false),
            ("ALL tags == 'x'", nan, true),  // ALL over an empty array
            ("ANY tags == 'x'", nan, false),
            ("NONE tags == 'x'", nan, true),
            ("i == nil", nan, true),
            ("i != 3", nan, true),
            ("s != 'a'", nan, true),
            ("s IN {'a', nil}", nan, false),
            ("b == NO", TypedRow(b: false, i: nil, j: nil, d: nil, s: nil, t: nil, tags: nil, v: .null), true),
            ("b == 0", TypedRow(b: false, i: nil, j: nil, d: nil, s: nil, t: nil, tags: nil, v: .null), true),
            ("b == 1.0", TypedRow(b: true, i: nil, j: nil, d: nil, s: nil, t: nil, tags: nil, v: .null), true),
            ("i IN {1.0, 'x'}", TypedRow(b: nil, i: 1, j: nil, d: nil, s: nil, t: nil, tags: nil, v: .null), true),
            (
                "j == 9007199254740993",
                TypedRow(b: nil, i: nil, j: 9_007_199_254_740_993, d: nil, s: nil, t: nil, tags: nil, v: .null), true
            ),
            (
                "d == 9007199254740993",
                TypedRow(b: nil, i: nil, j: nil, d: 9_007_199_254_740_992, s: nil, t: nil, tags: nil, v: .null), false
            ),
            (
                "d < 9007199254740993",
                TypedRow(b: nil, i: nil, j: nil, d: 9_007_199_254_740_992, s: nil, t: nil, tags: nil, v: .null), true
            ),
            (
                "ALL tags IN {'x', 'y'}",
                TypedRow(b: nil, i: nil, j: nil, d: nil, s: nil, t: nil, tags: ["x", "y", "x"], v: .null), true
            ),
        ]
        for (format, row, expected) in cases {
            let p = try SiftPredicate(format)
            #expect(try p.compiled(for: TypedRow.self).evaluate(with: row) == expected, "\(format)")
            #expect(try p.compiled(for: [String: Any].self).evaluate(with: row.dictionary) == expected, "\(format)")
            #expect(try p.evaluate(with: row.dictionary as Any) == expected, "\(format)")
        }
    }

    /// A key the type has no reader for is an error when evaluated, with its position; typed
    /// errors from the checks carry the comparison's position.
    @Test func unknownKeysAndTypeErrorsPointAtTheSource() throws {
        let row = Self.rows[0]
        let p = try SiftPredicate("i == 1 OR\n  nope == 2").compiled(for: TypedRow.self)
        var noMatch = row
        noMatch.i = 0
        do {
            _ = try p.evaluate(with: noMatch)
            Issue.record("expected an unknown-key error")
        } catch {
            #expect(error.id == "unknown-key")
            #expect(error.location == SiftSyntax.SourceLocation(line: 2, column: 3))
            #expect(error.message.contains("nope"))
        }
        // An unknown key never read raises nothing, as in Apple's predicates.
        var match = row
        match.i = 1
        #expect(try p.evaluate(with: match))
        // A type mismatch in a typed leaf is the general path's error.
        let q = try SiftPredicate("s < 5").compiled(for: TypedRow.self)
        var withString = row
        withString.s = "a"
        #expect(throws: EvaluationError.self) { try q.evaluate(with: withString) }
        let lenient = try SiftPredicate("s < 5", options: EvaluationOptions(lenient: true)).compiled(for: TypedRow.self)
        #expect(try lenient.evaluate(with: withString) == false)
    }

    /// A type that implements only `reader(forKey:)` answers `value(forKey:)` through it, so the
    /// per-object API and `SELF` comparisons see the same values.
    @Test func valueForKeyDefaultsToTheReaders() throws {
        let row = TypedRow(b: true, i: 4, j: nil, d: 1.5, s: "José", t: nil, tags: ["x"], v: .integer(3))
        #expect(try row.value(forKey: "i") == .integer(4))
        #expect(try row.value(forKey: "j") == .null)
        #expect(try row.value(forKey: "tags") == .array([.string("x")]))
        #expect(throws: KeyValueCodingError.self) { try row.value(forKey: "nope") }
        #expect(try SiftPredicate("i == 4 AND s ==[cd] 'jose' AND ANY tags == 'x'").evaluate(with: row))
        #expect(try SiftPredicate("tags.@count == 1 AND v + 1 == i").compiled(for: TypedRow.self).evaluate(with: row))
    }

    /// The indices of the rows `evaluate` accepts, called row by row in order, up to the first
    /// error, and that error's text.
    static func objectByObject(_ p: CompiledPredicate<TypedRow>, _ rows: [TypedRow]) -> (
        matches: [Int], firstError: String?
    ) {
        var matches: [Int] = []
        for n in rows.indices {
            do { if try p.evaluate(with: rows[n]) { matches.append(n) } } catch { return (matches, "\(error)") }
        }
        return (matches, nil)
    }

    /// The text of the error `body` raises, or nil when it raises none.
    static func raised<T>(_ body: () throws(EvaluationError) -> T) -> String? {
        do {
            _ = try body()
            return nil
        } catch { return "\(error)" }
    }

    /// `count(in:)` and `filter` test runs of objects step by step (`Program.select`) rather than
    /// object by object. Over enough rows to span several runs, with a partial last one, they select
    /// exactly the objects `evaluate` accepts, in order, and raise exactly the error that testing
    /// the objects in order raises first.
    @Test(arguments: [false, true])
    func runsOfObjectsAgreeWithObjectByObject(lenient: Bool) throws {
        let rows = Self.makeRows(2_405, seed: lenient ? 5 : 6)
        try #require(rows.count > 2 * CompiledPredicate<TypedRow>.runLength, "the rows must span several runs")
        let dictionaries = rows.map(\.dictionary)
        var rng = SplitMix64(seed: lenient ? 99 : 98)
        var selected = 0
        var failed = 0
        for _ in 0..<100 {
            let (format, _, typed, dict) = try Self.randomCompiled(&rng, lenient: lenient)
            let (expected, firstError) = Self.objectByObject(typed, rows)
            if let firstError {
                failed += 1
                #expect(throws: EvaluationError.self) { try typed.count(in: rows) }
                #expect(Self.raised { () throws(EvaluationError) in try typed.filter(rows) } == firstError, "\(format)")
                #expect(
                    Self.raised { () throws(EvaluationError) in try dict.filter(dictionaries) } == firstError,
                    "\(format)")
            } else {
                selected += expected.count
                #expect(try typed.count(in: rows) == expected.count, "\(format)")
                #expect(try typed.filter(rows).map { "\($0)" } == expected.map { "\(rows[$0])" }, "\(format)")
                #expect(
                    try dict.filter(dictionaries).map { "\($0)" } == expected.map { "\(dictionaries[$0])" }, "\(format)"
                )
            }
        }
        // Both outcomes were exercised, not only one.
        #expect(selected > 10_000)
        if !lenient { #expect(failed > 10) }
    }

    /// When a later step of an AND fails on an earlier object than an earlier step does, selecting
    /// runs step by step meets the later object's error first; the error raised is still the one of
    /// the first failing object, within the first run and across runs.
    @Test func theFirstFailingObjectsErrorIsRaised() throws {
        let run = CompiledPredicate<TypedRow>.runLength
        let n = 3 * run + 10
        for (early, late) in [(10, 20), (run + 100, run + 150), (2 * run - 30, 2 * run - 1)] {
            var rows = Array(
                repeating: TypedRow(b: nil, i: 0, j: nil, d: nil, s: nil, t: nil, tags: nil, v: .integer(0)), count: n)
            rows[early].i = 5  // passes `i > 1`; `s > 1` fails: a string against a number
            rows[early].s = "a"
            rows[late].v = .string("b")  // `v > 1` fails at the first step
            let format = "v > 1 OR i > 1 AND s > 1"
            let p = try SiftPredicate(format).compiled(for: TypedRow.self)
            let expected = Self.objectByObject(p, rows).firstError
            #expect(expected?.hasPrefix("1:20:") == true, "\(expected ?? "no error")")
            #expect(Self.raised { () throws(EvaluationError) in try p.count(in: rows) } == expected)
            let q = try SiftPredicate("v < 10 AND i > 1 AND s > 1").compiled(for: TypedRow.self)
            let expectedAll = Self.objectByObject(q, rows).firstError
            #expect(expectedAll?.hasPrefix("1:22:") == true, "\(expectedAll ?? "no error")")
            #expect(Self.raised { () throws(EvaluationError) in try q.filter(rows) } == expectedAll)
        }
    }

    /// Variables bind per evaluation in compiled predicates too, and sequences that are not
    /// contiguous arrays are filtered element by element.
    @Test func variablesAndNonContiguousSequences() throws {
        let p = try SiftPredicate("i > $min").compiled(for: TypedRow.self)
        let rows = Self.rows
        let expected = rows.filter { ($0.i ?? .min) > 3 }.count
        #expect(try p.count(in: rows, variables: ["min": .integer(3)]) == expected)
        #expect(try p.count(in: rows.lazy.map { $0 }, variables: ["min": .integer(3)]) == expected)
        #expect(throws: EvaluationError.self) { try p.count(in: rows) }  // $min unbound
    }
}
