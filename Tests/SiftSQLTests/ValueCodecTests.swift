// `ValueCodec`, the one binary form of a `Value` (documents and transformables on disk, lists
// between SQL functions): every kind reads back as itself to the bit (1 stays apart from 1.0, -0.0
// from 0.0, NaN stays NaN), the tag numbers documents were always stored with stay fixed, deep
// values survive a small stack, and bytes it did not write fail with a typed error, never a crash.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSyntax
import SiftTestSupport
import Testing

@Suite struct ValueCodecTests {
    /// Same kind and same bits: `==` calls 1 and 1.0 equal, and -0.0 and 0.0.
    static func identical(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.decimal(let x), .decimal(let y)): x == y || (x.isNaN && y.isNaN)
        case (.string(let x), .string(let y)): x.utf8.elementsEqual(y.utf8)
        case (.date(let x), .date(let y)):
            x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let x), .data(let y)): x == y
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy(identical)
        case (.dictionary(let x), .dictionary(let y)):
            x.count == y.count && x.allSatisfy { k, v in y[k].map { identical(v, $0) } ?? false }
        default: false
        }
    }

    static let scalars: [Value] = [
        .null, .bool(false), .bool(true),
        .integer(0), .integer(1), .integer(-1), .integer(.min), .integer(.max),
        .double(1), .double(0), .double(-0.0), .double(.nan), .double(-.nan), .double(.signalingNaN),
        .double(.infinity), .double(-.infinity), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
        .double(0.1),
        .decimal(Decimal(string: "12345678901234567.891")!), .decimal(Decimal(string: "-0.001")!), .decimal(0),
        .decimal(.nan),
        .decimal(.greatestFiniteMagnitude), .decimal(Decimal(string: "1e-30")!),
        .string(""), .string("Zoë"), .string("e\u{301}"), .string("a\u{0}b"), .string("👩‍👩‍👧"),
        .date(Date(timeIntervalSinceReferenceDate: 12.5)), .date(.distantPast), .date(.distantFuture),
        .date(Date(timeIntervalSince1970: -1)),
        .data(Data()), .data(Data(0...255)),
    ]

    @Test func everyScalarReadsBackAsItself() throws {
        for v in Self.scalars {
            let back = try ValueCodec.decode(ValueCodec.encode(v))
            #expect(Self.identical(back, v), "\(v) read back as \(back)")
        }
    }

    @Test func integersAndDoublesStayApart() throws {
        #expect(ValueCodec.encode(.integer(1)) != ValueCodec.encode(.double(1)))
        let back = try ValueCodec.decode(
            ValueCodec.encode(.array([.integer(1), .double(1), .bool(true), .string("1")])))
        guard case .array(let xs) = back, xs.count == 4 else {
            Issue.record("not a 4-element array: \(back)")
            return
        }
        if case .integer(1) = xs[0] {} else { Issue.record("integer 1 read back as \(xs[0])") }
        if case .double(let d) = xs[1], d == 1 {} else { Issue.record("double 1.0 read back as \(xs[1])") }
        if case .bool(true) = xs[2] {} else { Issue.record("true read back as \(xs[2])") }
        if case .string("1") = xs[3] {} else { Issue.record("\"1\" read back as \(xs[3])") }
    }

    @Test func collectionsAndNestingReadBack() throws {
        let big = String(repeating: "sift ✓ ", count: 200_000)
        let nested: Value = .dictionary([
            "": .null, "ints": .array(Self.scalars), "big": .string(big), "empty": .array([]), "none": .dictionary([:]),
            "deeper": .dictionary(["a": .array([.dictionary(["b": .array([.integer(1), .double(1)])])])]),
        ])
        let bytes = ValueCodec.encode(nested)
        #expect(Self.identical(try ValueCodec.decode(bytes), nested))
        #expect(bytes.count > big.utf8.count)
        // A set is written as an array, an object as its dictionary.
        #expect(
            Self.identical(
                try ValueCodec.decode(ValueCodec.encode(.set([.integer(2), .integer(3)]))),
                .array([.integer(2), .integer(3)])))
    }

    /// The numbering documents have always been stored with (store files keep it in `Z_DOC`).
    @Test func tagNumbersAreTheStoredOnes() {
        func tag(_ v: Value) -> UInt8? { ValueCodec.encode(v).first }
        let expected: [(Value, UInt8)] = [
            (.null, 0), (.bool(false), 1), (.bool(true), 2), (.integer(5), 3), (.double(5), 4), (.string("x"), 5),
            (.date(Date(timeIntervalSinceReferenceDate: 0)), 6), (.array([]), 7), (.dictionary([:]), 8),
            (.decimal(1), 9), (.data(Data([1])), 10),
        ]
        for (v, t) in expected { #expect(tag(v) == t, "\(v)") }
        #expect(ValueCodec.encode(.integer(258)) == [3, 2, 1, 0, 0, 0, 0, 0, 0])
        #expect(ValueCodec.encode(.string("é")) == [5, 2, 0, 0, 0, 0, 0, 0, 0, 0xC3, 0xA9])
        #expect(ValueCodec.encode(.array([.bool(true)])) == [7, 1, 0, 0, 0, 0, 0, 0, 0, 2])
    }

    @Test func damagedBytesThrowTypedErrors() {
        func reason(_ bytes: [UInt8]) -> ValueCodecError? {
            do {
                _ = try ValueCodec.decode(bytes)
                return nil
            } catch { return error }
        }
        #expect(reason([])?.kind == .truncated)
        #expect(reason([3, 1, 0])?.kind == .truncated)
        #expect(reason([3, 1, 0])?.offset == 1)
        #expect(reason([11])?.kind == .unknownTag(11))
        #expect(reason([0xFF])?.kind == .unknownTag(0xFF))
        #expect(reason([0, 0])?.kind == .trailingBytes)
        #expect(reason([0, 0])?.offset == 1)
        #expect(reason([5, 1, 0, 0, 0, 0, 0, 0, 0, 0xFF])?.kind == .invalidText)
        #expect(reason([9, 3, 0, 0, 0, 0, 0, 0, 0] + Array("abc".utf8))?.kind == .invalidDecimal)
        // A count far beyond the bytes fails at once instead of reserving memory for it.
        #expect(reason([7] + Array(repeating: 0xFF, count: 8))?.kind == .truncated)
        #expect(reason([10, 0, 0, 0, 0, 0, 0, 0, 0x80, 1])?.kind == .truncated)
        let twice: [UInt8] =
            [8, 2, 0, 0, 0, 0, 0, 0, 0] + [1, 0, 0, 0, 0, 0, 0, 0, 0x6B, 0] + [1, 0, 0, 0, 0, 0, 0, 0, 0x6B, 2]
        #expect(reason(twice)?.kind == .duplicateKey("k"))
    }

    @Test func everyCutAndFlipFailsOrReadsNeverCrashes() throws {
        let bytes = ValueCodec.encode(
            .dictionary(["list": .array(Self.scalars), "n": .dictionary(["x": .decimal(2)])]))
        // Every proper prefix is cut short: an error, never a value.
        for n in 0..<bytes.count {
            #expect(throws: ValueCodecError.self) { try ValueCodec.decode(Array(bytes.prefix(n))) }
        }
        var random = SplitMix64(seed: 26)
        var failed = 0
        for _ in 0..<3_000 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do { _ = try ValueCodec.decode(damaged) } catch { failed += 1 }
        }
        // Damage to a tag or a length is noticed; a change inside a payload reads as another value.
        #expect(failed > 300, "\(failed) of 3000 damaged inputs failed")
    }

    /// Deep values are written and read on a 512 KB stack (the codec moves to a larger one when
    /// it runs low), and bytes nested far deeper than that stack could recurse still read.
    @Test func deepNestingOnASmallStack() throws {
        let depth = 20_000
        let bytes =
            Array([[UInt8]](repeating: [7, 1, 0, 0, 0, 0, 0, 0, 0], count: depth).joined()) + [
                3, 7, 0, 0, 0, 0, 0, 0, 0,
            ]
        let holder = Holder()
        let again = try onSmallStack { () throws -> [UInt8] in
            holder.value = try ValueCodec.decode(bytes)
            return ValueCodec.encode(holder.value!)
        }
        #expect(again == bytes)
        // Released on a large stack: dropping a value this deep recurses once per level.
        StackGuard.onLargeStack { holder.value = nil }
    }

    /// Keeps the deep value alive past the small-stack thread.
    private final class Holder: @unchecked Sendable { var value: Value? }
}
