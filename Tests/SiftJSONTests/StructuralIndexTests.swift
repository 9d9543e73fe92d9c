// The scanner's first stage (StructuralIndex, CJSONBlocks) against the exact scanner it stands in
// front of: the vector classification against the scalar loop, and the reader over the masks
// against `skipValue` and `DirectFilter.locate` without the index, on random and adversarial
// records: quotes, backslashes and runs of backslashes on both sides of the 16-, 32- and 64-byte
// block boundaries, multi-byte UTF-8 straddling them, invalid bytes, control characters, blanks,
// deep nesting and inputs cut anywhere (so that the zero-padded last block is read). What the
// reader accepts must be accepted by the exact scanner, ending at the same byte with the same
// offsets; what it declines is read by the exact scanner, so errors stay the exact scanner's.

import CJSONBlocks
import Foundation
import SiftEvaluation
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftJSON

@Suite struct StructuralIndexTests {
    /// Bytes that matter to the classification, with ordinary ones, at every alignment.
    @Test func vectorClassificationIsTheScalarLoop() {
        var rng = SplitMix64(seed: 64)
        let alphabet: [UInt8] = [0x22, 0x5C, 0x20, 0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F, 0x80, 0xFF, 0x61, 0x7B, 0x3A]
        let bytes = (0..<(64 * 40 + 63)).map { _ in
            rng.next() % 3 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : alphabet[Int(rng.next() % 14)]
        }
        var compared = 0
        bytes.withUnsafeBufferPointer { buffer in
            for shift in 0..<64 {
                var vector = [CJSONBlockMasks](repeating: CJSONBlockMasks(), count: 40)
                var scalar = vector
                cjson_classify_blocks(buffer.baseAddress! + shift, 40, &vector)
                cjson_classify_blocks_scalar(buffer.baseAddress! + shift, 40, &scalar)
                for b in 0..<40 {
                    #expect(vector[b].special == scalar[b].special && vector[b].blank == scalar[b].blank)
                    compared += 1
                }
            }
        }
        #expect(compared == 64 * 40)
        #expect(["avx2", "sse2", "scalar"].contains(String(cString: cjson_classifier_name())))
    }

    /// Every generated input, its cuts included: where the reader over the masks accepts a value,
    /// the exact scanner accepts it too and ends at the same byte. (On a large stack: both recurse
    /// to the nesting limit, which a debug build's frames make deep.)
    @Test func indexedSkipAcceptsOnlyWhatTheExactScannerAccepts() throws {
        let (accepted, declined, wrong) = try onSmallStack(stackSize: 64 << 20) {
            var rng = SplitMix64(seed: 6464)
            var accepted = 0
            var declined = 0
            var wrong: [String] = []
            let storage = StructuralIndex.Storage()
            for input in Self.inputs(&rng) {
                input.withUnsafeBufferPointer { buffer in
                    var exact = JSONScanner(buffer)
                    let exactEnd: Int? = (try? exact.skipValue(depth: 0)) != nil ? exact.i : nil
                    var index = StructuralIndex(JSONScanner(buffer), storage)
                    guard index.skipValue(depth: 0) else {
                        declined += 1
                        return
                    }
                    accepted += 1
                    if exactEnd != index.i { wrong.append(String(decoding: input, as: UTF8.self)) }
                }
            }
            return (accepted, declined, wrong)
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(accepted > 2000 && declined > 1000, "\(accepted) accepted, \(declined) declined")
    }

    /// `locate` with the index against `locate` without it, record by record through one index
    /// (as a pass reads them): the same error, or the same answer, offsets and end.
    @Test func locateWithTheIndexIsLocateWithout() throws {
        let filter = try #require(
            DirectFilter(try SiftPredicate(format: "a == 1 AND b.c == 2 AND ANY tags == 'x'", arguments: [])))
        let (agreed, differences) = try onSmallStack(stackSize: 64 << 20) {
            var rng = SplitMix64(seed: 2026)
            let records = Self.inputs(&rng)
            var agreed = 0
            var differences: [String] = []
            for cut in [false, true] {
                let bytes = Array(records.joined(separator: [0x0A]).prefix(cut ? 200_000 : Int.max))
                bytes.withUnsafeBufferPointer { buffer in
                    var fast = RecordCursor(buffer)
                    let storage = StructuralIndex.Storage()
                    var index = StructuralIndex(fast.scanner, storage)
                    var offsets = [Int](repeating: -1, count: filter.memberNames.count)
                    var exactOffsets = offsets
                    while let at = try? fast.next() {
                        var exact = fast.scanner
                        let expected = Result { () throws(JSONScanError) in
                            try filter.locate(&exact, depth: 0, offsets: &exactOffsets)
                        }
                        let got = Result { () throws(JSONScanError) in
                            try filter.locate(&fast.scanner, depth: 0, offsets: &offsets, index: &index)
                        }
                        switch (expected, got) {
                        case (.success(let e), .success(let g)) where e == g && offsets == exactOffsets:
                            if exact.i == fast.scanner.i { agreed += 1 } else { differences.append("end at \(at)") }
                        case (.failure(let e), .failure(let g)) where e.message == g.message && e.offset == g.offset:
                            agreed += 1
                            // Go on at the next line, as the inputs are lines.
                            var j = at
                            while j < buffer.count, buffer[j] != 0x0A { j += 1 }
                            fast.scanner.i = j
                        default:
                            differences.append("at \(at): \(expected) vs \(got)")
                            return
                        }
                    }
                }
            }
            return (agreed, differences)
        }
        #expect(differences.isEmpty, "\(differences.prefix(5))")
        #expect(agreed > 8000, "\(agreed)")
    }

    // MARK: Inputs

    /// Records with strings whose special bytes fall around block boundaries, generated and
    /// mutated valid records, and every input cut short.
    static func inputs(_ rng: inout SplitMix64) -> [[UInt8]] {
        var out: [[UInt8]] = []
        // A quote, escapes or a multi-byte scalar at each offset around 16, 32, 64 and 128.
        let tails: [[UInt8]] = [
            Array("\"".utf8), Array("\\\"\"".utf8), Array("\\\\\"".utf8), Array("\\\\\\\"\"".utf8),
            Array("\\\\\\\\\"".utf8), Array("\\u00e9\"".utf8), Array("\\ud834\\udd1e\"".utf8), Array("é\"".utf8),
            Array("𝄞\"".utf8), [0xFF, 0x22], [0xC3, 0x22], [0x80, 0x22], [0x01, 0x22], [0x1F, 0x22], [0x7F, 0x22],
            Array("\\x\"".utf8), Array("\\u12\"".utf8), Array("\\ud800\"".utf8), Array("\\".utf8), [],
        ]
        for boundary in [16, 32, 64, 128] {
            for delta in -3...3 {
                for tail in tails {
                    // `{"a":"` is 6 bytes: the tail starts at `boundary + delta`.
                    let pad = [UInt8](repeating: UInt8(ascii: "p"), count: max(0, boundary + delta - 6))
                    let record = Array("{\"a\":\"".utf8) + pad + tail + Array(",\"b\":{\"c\":2},\"tags\":[\"x\"]}".utf8)
                    out.append(record)
                    out.append(Array(record.prefix(boundary + delta + 1)))
                }
            }
        }
        for _ in 0..<3000 {
            var record = Array(randomRecord(&rng, depth: 0).utf8)
            if rng.next() % 3 == 0 {
                for _ in 0..<(1 + rng.next() % 3) where !record.isEmpty {
                    let bytes: [UInt8] = [
                        0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x3A, 0x2C, 0x20, 0x0A, 0x00, 0xFF, 0x31, 0x2D,
                    ]
                    record[Int(rng.next() % UInt64(record.count))] = bytes[Int(rng.next() % UInt64(bytes.count))]
                }
            }
            out.append(record)
            if rng.next() % 4 == 0 { out.append(Array(record.prefix(Int(rng.next() % UInt64(record.count + 1))))) }
        }
        // Nesting around the limit.
        for depth in [510, 511, 512, 513] {
            out.append(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
            out.append(
                Array(
                    ("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8
                ))
        }
        return out
    }

    /// A random JSON value with blanks, escapes and non-ASCII text here and there.
    static func randomRecord(_ rng: inout SplitMix64, depth: Int) -> String {
        let blank = [" ", "", "", "", "\n", "\t", "\r\n"][Int(rng.next() % 7)]
        switch depth == 0 ? 0 : depth > 3 ? 2 + rng.next() % 4 : rng.next() % 6 {
        case 0:
            let keys = ["a", "b", "tags", "$date", "c", "long key with spaces", "k\\u0061", "é"]
            let members = (0..<(rng.next() % 6)).map { _ in
                "\"\(keys[Int(rng.next() % 8)])\"\(blank):\(blank)\(randomRecord(&rng, depth: depth + 1))"
            }
            return "{\(blank)" + members.joined(separator: ",\(blank)") + "}"
        case 1:
            let items = (0..<(rng.next() % 5)).map { _ in randomRecord(&rng, depth: depth + 1) }
            return "[" + items.joined(separator: "\(blank),") + "]"
        case 2:
            let parts = ["x", "é", "\\n", "\\\"", "\\\\", "\\u00e9", "𝄞", String(repeating: "y", count: 20), "\\/"]
            return "\"" + (0..<(rng.next() % 8)).map { _ in parts[Int(rng.next() % 9)] }.joined() + "\""
        default:
            return ["1", "-0", "2.5e3", "true", "false", "null", "12345678901234567890", "-1.0E-2"][Int(rng.next() % 8)]
        }
    }
}
