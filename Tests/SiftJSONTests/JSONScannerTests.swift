// The scanner's ways of reading a record (RecordCursor, RecordProjection: built in part, skipped,
// rewritten as text) against its whole-document reading (JSONReader, through Records.parse): the
// same values, the same compact text, and, on thousands of broken documents made by mutating valid
// ones, the same error message at the same line and column, whether members are built or skipped.
// Numbers are checked against Swift's own conversions (Int64(text), else Double(text)).

import Foundation
import SiftEvaluation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftJSON

/// Structural equality of values, case by case (unlike `==`, which compares numbers numerically).
private func same(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.null, .null): true
    case (.bool(let x), .bool(let y)): x == y
    case (.integer(let x), .integer(let y)): x == y
    case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
    case (.string(let x), .string(let y)): Array(x.utf8) == Array(y.utf8)
    case (.date(let x), .date(let y)): x == y
    case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.dictionary(let x), .dictionary(let y)):
        x.count == y.count && x.allSatisfy { k, v in y[k].map { same(v, $0) } ?? false }
    // An object built in part has every key of its projection; `project` below leaves absent ones out.
    case (.object(let o as ProjectedObject), .dictionary(let y)):
        y.keys.allSatisfy { k in o.keys.contains { $0.name == k } }
            && o.keys.allSatisfy { k in same((try? o.value(forKey: k.name)) ?? .null, y[k.name] ?? .null) }
    default: false
    }
}

/// A reader's answer: the records, or the error line `sift filter` prints.
private enum Outcome<T> {
    case success(T)
    case failure(String)
}

/// What the streaming reader makes of `text`: each record as built with `projection` and as
/// printed, or the error line `sift filter` prints.
private func scan(_ text: [UInt8], _ projection: Projection) -> Outcome<[(Value, String)]> {
    text.withUnsafeBufferPointer { bytes in
        var cursor = RecordCursor(bytes)
        var out: [(Value, String)] = []
        do throws(JSONScanError) {
            while let at = try cursor.next() {
                let v = try cursor.scanner.value(depth: cursor.depth, projection)
                var printer = JSONScanner(bytes, at: at)
                var printed: [UInt8] = []
                try printer.writeValue(depth: cursor.depth, into: &printed)
                #expect(printer.i == cursor.scanner.i, "printing and reading end at the same byte")
                out.append((v, String(decoding: printed, as: UTF8.self)))
            }
            return .success(out)
        } catch {
            return .failure("x:" + error.located(in: bytes).description)
        }
    }
}

/// What the reference reader makes of `text`.
private func reference(_ text: [UInt8]) -> Outcome<[JSONValue]> {
    do throws(RecordsError) { return .success(try Records.parse(text, name: "x")) } catch {
        return .failure(error.description)
    }
}

private let validDocuments: [String] = [
    #"[{"a": 1, "b": [true, false, null], "c": {"d": -2.5e3, "e": "x\"y\\z\/\b\f\n\r\t"}}, 2, "s", [], {}]"#,
    "{\"a\":1}\n{\"a\":2,\"b\":{\"c\":[1,{\"d\":\"é\u{1F600}\"}]}}\n\n  {\"a\": 3} 4 \"five\" [6]\n",
    #"{"name": "\u00e9\ud83d\ude00\u0041", "n": -0, "m": 007, "big": 9223372036854775808, "min": -9223372036854775808}"#,
    #"[1.5, -0.0, 0.1, 1e22, 1e23, 123456789012345678, 1.7976931348623157e308, 5e-324, 1e400, 2.5E+2, 0.000123, 100.0]"#,
    #"{"$date": 12} {"$date": 1.5, "x": 1} {"$date": "s"} {"d": {"$date": -3}} {"$date": 1, "$date": 2}"#,
    #"{"a": 1, "a": 2, "b": {"c": 1, "c": {"x": 3}}} {"\u0061": 9, "b\u00e9": 1}"#,
    "[{\"k\": [ {\"a\" : 1 } , {\"b\":2} ] ,\"a\":\"\u{7F}\"}\r\n,\t{}]",
    "",
    "   \n ",
    "[]",
    " [ ] ",
]

/// Projections that build everything, some members, or nearly nothing.
private let projections: [Projection] = [
    .whole,
    .members([]),
    .members([ProjectedKey("a", .whole)]),
    .members([ProjectedKey("b", .members([ProjectedKey("c", .whole)])), ProjectedKey("$date", .whole)]),
    .members([ProjectedKey("k", .members([ProjectedKey("a", .whole)])), ProjectedKey("name", .whole)]),
]

/// `value` cut down to `projection`, as the reference reader's value would be projected.
private func project(_ value: Value, _ projection: Projection) -> Value {
    guard case .members(let keys) = projection else { return value }
    switch value {
    case .dictionary(let d):
        var out: [String: Value] = [:]
        for k in keys { if let v = d[k.name] { out[k.name] = project(v, k.projection) } }
        return .dictionary(out)
    case .array(let a): return .array(a.map { project($0, projection) })
    default: return value
    }
}

@Suite struct JSONScannerTests {
    @Test func valuesAndTextMatchTheReferenceReader() throws {
        for doc in validDocuments {
            let bytes = Array(doc.utf8)
            guard case .success(let expected) = reference(bytes) else {
                Issue.record("reference rejects \(doc)")
                continue
            }
            for projection in projections {
                guard case .success(let got) = scan(bytes, projection) else {
                    Issue.record("scanner rejects \(doc)")
                    continue
                }
                try #require(got.count == expected.count, "\(doc)")
                for (g, e) in zip(got, expected) {
                    #expect(same(g.0, project(e.value, projection)), "\(doc) with \(projection): \(g.0) vs \(e.value)")
                    #expect(g.1 == e.text, "\(doc)")
                }
            }
        }
    }

    @Test func numbersConvertAsTheReferenceDoes() throws {
        var rng = SplitMix64(seed: 14)
        var texts: [String] = []
        for _ in 0..<3000 {
            let digits = (0..<Int.random(in: 1...20, using: &rng)).map { _ in String(Int.random(in: 0...9, using: &rng))
            }.joined()
            let fraction = Bool.random(using: &rng) ? "." + String(Int.random(in: 0...99_999_999, using: &rng)) : ""
            let exponent =
                Int.random(in: 0...3, using: &rng) == 0 ? "e" + String(Int.random(in: -330...330, using: &rng)) : ""
            texts.append((Bool.random(using: &rng) ? "-" : "") + digits + fraction + exponent)
        }
        let doc = Array(("[" + texts.joined(separator: ",") + "]").utf8)
        guard case .success(let expected) = reference(doc), case .success(let got) = scan(doc, .whole) else {
            Issue.record("rejected")
            return
        }
        for (n, (g, e)) in zip(got, expected).enumerated() {
            let text = texts[n]
            let isInteger = !text.contains(".") && !text.contains("e")
            let oracle: Value = isInteger && Int64(text) != nil ? .integer(Int64(text)!) : .double(Double(text)!)
            #expect(same(g.0, oracle), "\(text): \(g.0) vs \(oracle)")
            #expect(same(e.value, oracle), "\(text): \(e.value) vs \(oracle)")
            #expect(g.1 == e.text, "\(text)")
        }
    }

    @Test func brokenDocumentsFailAtTheSamePlaceWithTheSameMessage() {
        var rng = SplitMix64(seed: 1414)
        let pieces: [String] = [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "u", "d8", "\\ud800", "e", ".", "-", "+", "0", "1",
            "t", "nul", "\n", " ", "\u{01}", "é", "\u{FF}", "x",
        ]
        var checked = 0
        for doc in validDocuments where !doc.isEmpty {
            for _ in 0..<600 {
                var bytes = Array(doc.utf8)
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: bytes.remove(at: at)
                    case 1: bytes.insert(contentsOf: Array(pieces.randomElement(using: &rng)!.utf8), at: at)
                    default: bytes.removeSubrange(at...)
                    }
                    if bytes.isEmpty { bytes = [UInt8(ascii: "[")] }
                }
                // Some documents are made invalid UTF-8 on purpose (positions count code points).
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    bytes.insert(0xC3, at: Int.random(in: 0..<bytes.count, using: &rng))
                }
                let expected = reference(bytes)
                for projection in [Projection.whole, .members([ProjectedKey("a", .whole)])] {
                    let got = scan(bytes, projection)
                    switch (expected, got) {
                    case (.failure(let e), .failure(let g)):
                        #expect(e == g, "\(String(decoding: bytes, as: UTF8.self))")
                    case (.success(let e), .success(let g)): #expect(e.map(\.text) == g.map(\.1))
                    default:
                        Issue.record(
                            "reference \(expected), scanner \(got) on \(String(decoding: bytes, as: UTF8.self))")
                    }
                }
                checked += 1
            }
        }
        #expect(checked > 5000)
    }

    /// The writers the store's printing uses: text from bytes prints as the `String` the bytes decode
    /// to (escapes, non-ASCII, invalid UTF-8 repaired), doubles as their interpolation.
    @Test func bytesAndDoublesWriteAsTheirStrings() {
        let texts: [[UInt8]] = [
            [], Array("plain".utf8), Array("tab\there \"q\" back\\slash \u{1} \n\r".utf8), Array("Çity 日本".utf8),
            [0x61, 0xFF, 0x62], [0xE6, 0x97], [0x22, 0xC3, 0x28, 0x5C],
        ]
        for bytes in texts {
            var fromBytes: [UInt8] = []
            bytes.withUnsafeBufferPointer { JSONScanner.writeQuoted(utf8: $0, into: &fromBytes) }
            var fromString: [UInt8] = []
            JSONScanner.writeQuoted(String(decoding: bytes, as: UTF8.self), into: &fromString)
            #expect(fromBytes == fromString, "\(bytes)")
            var quoted = ""
            JSONValue.quote(String(decoding: bytes, as: UTF8.self), into: &quoted)
            #expect(String(decoding: fromString, as: UTF8.self) == quoted)
        }
        for d in [56.05, -2.25, 0.1, 1e-7, 1.5e300, 123_456_789.125, 1e15, .leastNonzeroMagnitude, 1.0, -0.0] {
            var out: [UInt8] = []
            JSONScanner.write(d, into: &out)
            let expected = d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)"
            #expect(String(decoding: out, as: UTF8.self) == expected, "\(d)")
        }
    }

    /// Doubles print as their interpolation (Swift's shortest decimal that reads back), the
    /// short plain decimals most stored numbers are included, which are written without a
    /// `String`: random decimals of 1 to 17 significant digits at every magnitude from 1e-6 to
    /// 1e17, random bit patterns, and the neighbours of powers of ten and of the range's ends.
    @Test func doublesWriteAsTheirInterpolation() {
        var generator = SplitMix64(seed: 0x5EED_D0B1)
        var values: [Double] = [0.001, 0.0009999999999999998, 0.0010000000000000002, 999_999_999_999_999.9, 1e15 - 0.5]
        for e in -6...17 {
            let p = pow(10.0, Double(e))
            values += [p, p.nextUp, p.nextDown, -p.nextUp, p * 1.5, p / 3]
        }
        for _ in 0..<60_000 {
            let digits = Int.random(in: 1...17, using: &generator)
            let mantissa = Double(UInt64.random(in: 0..<UInt64(pow(10.0, Double(digits))), using: &generator))
            let value = mantissa / pow(10.0, Double(Int.random(in: 0...20, using: &generator)))
            values.append(Bool.random(using: &generator) ? value : -value)
        }
        for _ in 0..<20_000 {
            values.append(
                Double(bitPattern: UInt64.random(in: 0x3F40_0000_0000_0000...0x4340_0000_0000_0000, using: &generator)))
        }
        var mismatches: [Double] = []
        for d in values {
            var out: [UInt8] = []
            JSONScanner.write(d, into: &out)
            let expected = d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)"
            if String(decoding: out, as: UTF8.self) != expected { mismatches.append(d) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { "\($0)" })")
    }

    @Test func nestingLimitIsTheReferenceOne() {
        for depth in [510, 511, 512, 513] {
            for array in [false, true] {
                let inner = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                let bytes = Array((array ? "[" + inner + "]" : inner).utf8)
                let e = reference(bytes)
                let g = scan(bytes, .whole)
                switch (e, g) {
                case (.failure(let x), .failure(let y)): #expect(x == y)
                case (.success, .success): break
                default: Issue.record("depth \(depth) array \(array): \(e) vs \(g)")
                }
            }
        }
    }

    @Test func projectionsFollowTheKeyPathsAPredicateReads() throws {
        func of(_ text: String) throws -> Projection { RecordProjection.of(try PredicateSyntax.parse(text)) }
        #expect(try of("age > 3") == .members([ProjectedKey("age", .whole)]))
        #expect(
            try of("age > 3 AND address.city == 'x' AND address.zip == 1")
                == .members([
                    ProjectedKey("age", .whole),
                    ProjectedKey("address", .members([ProjectedKey("city", .whole), ProjectedKey("zip", .whole)])),
                ]))
        // A key read whole and through a path is built whole.
        #expect(try of("address.city == 'x' OR address != nil") == .members([ProjectedKey("address", .whole)]))
        // What follows a collection operator reads inside the value before it.
        #expect(try of("kids.@max.age > 3") == .members([ProjectedKey("kids", .whole)]))
        #expect(
            try of("ANY kids.age < 10") == .members([ProjectedKey("kids", .members([ProjectedKey("age", .whole)]))]))
        #expect(
            try of("SUBQUERY(kids, $k, $k.age < 10 AND name == 'x').@count > 0")
                == .members([ProjectedKey("kids", .whole), ProjectedKey("name", .whole)]))
        #expect(try of("@count > 2") == .whole)
        #expect(try of("SELF > 2") == .whole)
        #expect(try of("FUNCTION(SELF, 'f') == 1") == .whole)
        #expect(try of("$x == 1 AND TRUEPREDICATE") == .members([]))
    }
}
