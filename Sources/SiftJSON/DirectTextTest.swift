// The string comparisons of `sift filter`'s direct form, decided where the string is written:
// `==`, `!=`, BEGINSWITH, ENDSWITH, CONTAINS and LIKE against a string constant, with or without
// [c], [d], [n], quantified or not. The constant is prepared once by SiftText, as memory prepares
// it (`PreparedText`, `LikePattern`, `TextFolding`), and a record string that is not plain ASCII is
// decoded and handed to those very tests. A string of ASCII bytes written without escapes is
// compared on its bytes: SiftText folds such a string to itself (lower-cased under [c] without
// [n]), it is already NFC, and no combining mark can follow any of its bytes, so comparing it with
// the folded constant is what `PreparedText`'s own ASCII path does on the same bytes. A value that
// is not a string gets memory's answer only where memory cannot raise (nil; a number or Boolean
// under `==`/`!=`); anything else is left to the general comparison. A string of ASCII and
// two-byte scalars below U+0300 (accented Latin) is folded on its bytes, scalar by scalar, with the
// folds SiftText gives each of those scalars alone, where every fold lies below U+0300 too: SiftText
// folds such a string scalar by scalar with the same table (`LatinTable`) and the result is NFC
// already, holds no combining mark, and its substring tests reduce to byte comparisons.

import Foundation
import SiftEvaluation
import SiftSyntax
import SiftText

extension DirectFilter {
    /// `s op k` for a string constant `k`. A class: a leaf hands it out once per comparison, and a
    /// struct of arrays would be retained field by field each time.
    final class TextTest: Sendable {
        enum Operation: Sendable { case equal, notEqual, beginsWith, endsWith, contains, like }

        let operation: Operation
        /// The constant as memory compares it: its fold under the options (its NFC form without any).
        let needle: [UInt8]
        /// Whether ASCII letters of the subject are lower-cased ([c], unless [n] overrides it).
        let lowers: Bool
        /// `==`/`!=` without an option that alters string equality: memory compares with Swift's `==`.
        let exact: Bool
        let constant: String
        let prepared: PreparedText
        let pattern: LikePattern?
        /// Which of the five folds SiftText makes the options ask for ([n] wins over c and d).
        let foldKind: Int
        static let foldWidth = 5
        static let noFold: UInt8 = 0xFF
        /// The fold of each scalar U+0080…U+02FF under each kind of options, `foldWidth` bytes a
        /// scalar with its length in the last one; `noFold` where the fold leaves U+0000…U+02FF.
        /// Built on the first string that needs one (as SiftText builds its own table then).
        private static let literalFolds = latinFolds(.normalized)
        private static let canonicalFolds = latinFolds([])
        private static let caseFolds = latinFolds(.caseInsensitive)
        private static let diacriticFolds = latinFolds(.diacriticInsensitive)
        private static let caseDiacriticFolds = latinFolds([.caseInsensitive, .diacriticInsensitive])

        private var latin: [UInt8] {
            switch foldKind {
            case 0: Self.literalFolds
            case 1: Self.canonicalFolds
            case 2: Self.caseFolds
            case 3: Self.diacriticFolds
            default: Self.caseDiacriticFolds
            }
        }

        /// The test, or nil for another operator, a constant that is not a string, or a LIKE
        /// pattern memory rejects (the general path then raises its error).
        init?(_ op: ComparisonOperator, _ options: ComparisonOptions, _ rhs: ExpressionSyntax) {
            guard case .constant(.string(let k)) = rhs.kind else { return nil }
            let text = TextOptions(rawValue: options.rawValue)
            switch op {
            case .equal: operation = .equal
            case .notEqual: operation = .notEqual
            case .beginsWith: operation = .beginsWith
            case .endsWith: operation = .endsWith
            case .contains: operation = .contains
            case .like: operation = .like
            default: return nil
            }
            if op == .like {
                guard let pattern = try? LikePattern(k, text) else { return nil }
                self.pattern = pattern
            } else {
                pattern = nil
            }
            needle = Array(TextFolding.fold(k, text).utf8)
            lowers = text.contains(.caseInsensitive) && !text.contains(.normalized)
            exact = text.intersection([.caseInsensitive, .diacriticInsensitive, .normalized]).isEmpty
            constant = k
            prepared = PreparedText(k, text)
            let c = text.contains(.caseInsensitive)
            let d = text.contains(.diacriticInsensitive)
            foldKind = text.contains(.normalized) ? 0 : c ? (d ? 4 : 2) : (d ? 3 : 1)
        }

        /// The folds of U+0080…U+02FF one by one, as SiftText folds each alone (see the header).
        private static func latinFolds(_ text: TextOptions) -> [UInt8] {
            var table = [UInt8](repeating: 0, count: 0x280 * foldWidth)
            for v in UInt32(0x80)..<0x300 {
                let folded = Array(TextFolding.fold(String(Unicode.Scalar(v)!), text).utf8)
                let slot = Int(v - 0x80) * foldWidth
                guard folded.count < foldWidth, folded.allSatisfy({ $0 < 0xCC }) else {
                    table[slot + foldWidth - 1] = noFold
                    continue
                }
                for (j, b) in folded.enumerated() { table[slot + j] = b }
                table[slot + foldWidth - 1] = UInt8(folded.count)
            }
            return table
        }

        /// The answer for a nil value.
        var ifNull: Bool { operation == .notEqual }

        /// The answer for a number or a Boolean: unequal to any string; nil where memory raises.
        var ifScalar: Bool? {
            switch operation {
            case .equal: false
            case .notEqual: true
            default: nil
            }
        }

        /// The answer for a string that is not plain ASCII, decoded: memory's own test.
        func callAsFunction(_ s: String) -> Bool {
            switch operation {
            case .equal: exact ? s == constant : prepared.equals(s)
            case .notEqual: !(exact ? s == constant : prepared.equals(s))
            case .beginsWith: prepared.isPrefix(of: s)
            case .endsWith: prepared.isSuffix(of: s)
            case .contains: prepared.isContained(in: s)
            case .like: pattern!.matches(s)
            }
        }

        /// The answer for the `count` ASCII bytes at `s` (a string written without escapes).
        func callAsFunction(ascii s: UnsafePointer<UInt8>, _ count: Int) -> Bool {
            if operation == .like {
                // LIKE's own matcher takes an ASCII subject byte by byte; a string of up to 15
                // bytes is built without allocating.
                return pattern!.matches(String(decoding: UnsafeBufferPointer(start: s, count: count), as: UTF8.self))
            }
            return compare(s, count, lowers: lowers)
        }

        /// The answer for the `count` bytes at `s` (a string written without escapes, not all
        /// ASCII) when they are ASCII and two-byte scalars whose folds `latin` holds: folded into
        /// a buffer on the stack and compared as folded; nil otherwise (and for LIKE).
        func callAsFunction(latin s: UnsafePointer<UInt8>, _ count: Int) -> Bool? {
            guard operation != .like else { return nil }
            // A fold is at most two bytes longer than its scalar's two: room for twice the bytes.
            let latin = self.latin
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * count) { out -> Bool? in
                guard let o = out.baseAddress else { return nil }
                var n = 0
                var j = 0
                while j < count {
                    let b = s[j]
                    if b < 0x80 {
                        o[n] = lowers && b &- 0x41 < 26 ? b | 0x20 : b
                        n += 1
                        j += 1
                        continue
                    }
                    // A lead byte of U+0080…U+02FF and its continuation byte; anything else (a
                    // longer sequence, or bytes that are not UTF-8) leaves the test to SiftText.
                    guard b &- 0xC2 < 10, j + 1 < count, s[j + 1] & 0xC0 == 0x80 else { return nil }
                    let slot = ((Int(b & 0x1F) << 6 | Int(s[j + 1] & 0x3F)) - 0x80) * Self.foldWidth
                    let length = latin[slot + Self.foldWidth - 1]
                    guard length != Self.noFold else { return nil }
                    for k in 0..<Int(length) { o[n + k] = latin[slot + k] }
                    n += Int(length)
                    j += 2
                }
                return compare(UnsafePointer(o), n, lowers: false)
            }
        }

        /// `==`, `!=`, BEGINSWITH, ENDSWITH or CONTAINS on the `count` bytes at `s` (lower-cased
        /// as compared when `lowers`) against the needle.
        @inline(__always)
        private func compare(_ s: UnsafePointer<UInt8>, _ count: Int, lowers: Bool) -> Bool {
            needle.withUnsafeBufferPointer { n in
                let m = n.count
                // An empty needle equals only the empty string and is found in none.
                guard m > 0, let k = n.baseAddress else {
                    switch operation {
                    case .equal: return count == 0
                    case .notEqual: return count != 0
                    default: return false
                    }
                }
                switch operation {
                case .equal: return count == m && same(s, k, m, lowers)
                case .notEqual: return !(count == m && same(s, k, m, lowers))
                case .beginsWith: return count >= m && same(s, k, m, lowers)
                case .endsWith: return count >= m && same(s + count - m, k, m, lowers)
                default:
                    guard count >= m else { return false }
                    for start in 0...(count - m) where same(s + start, k, m, lowers) { return true }
                    return false
                }
            }
        }

        /// Whether the `m` (at least one) subject bytes at `s`, lower-cased when `lowers`, are the
        /// needle's at `k`. The first bytes are compared before calling memcmp: CONTAINS tries every
        /// position, and most differ there.
        @inline(__always)
        private func same(_ s: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>, _ m: Int, _ lowers: Bool) -> Bool {
            guard lowers else { return s[0] == k[0] && memcmp(s, k, m) == 0 }
            for j in 0..<m {
                let b = s[j]
                if (b &- 0x41 < 26 ? b | 0x20 : b) != k[j] { return false }
            }
            return true
        }
    }
}

extension JSONScanner {
    /// The answer of `test` on the (already validated) value at `i`, or nil where the general
    /// comparison may answer otherwise or raise (an object, an array, a string operator on a
    /// number). A string read leaves `i` just past it (an array's walk then goes on from there);
    /// any other value leaves `i` where it was.
    mutating func textValueAnswer(_ test: DirectFilter.TextTest) -> Bool? {
        switch base[i] {
        case UInt8(ascii: "\""):
            let start = i + 1
            guard let escaped = try? scanString() else { return nil }
            let count = i - 1 - start
            if !escaped {
                if Self.isASCII(base + start, count) { return test(ascii: base + start, count) }
                if let answer = test(latin: base + start, count) { return answer }
            }
            return test(stringContent(start, start + count, escaped: escaped))
        case UInt8(ascii: "n"):
            return test.ifNull
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return test.ifScalar
        default:
            return nil
        }
    }

    /// Whether the `count` bytes at `p` are all ASCII, eight at a time.
    @inline(__always)
    static func isASCII(_ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var j = 0
        while j + 8 <= count {
            if UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            j += 8
        }
        while j < count {
            if p[j] >= 0x80 { return false }
            j += 1
        }
        return true
    }
}
