// The BLOB that carries a list of evaluator values into `sift_call`: written by `sift_collect` (the
// elements of a to-many collection) and by the lowering (a constant list compared by memory), read
// by `sift_call`. Both sides of the contract live here, next to the function names in SQLFunctions.

import Foundation
import SiftEvaluation
import SiftSyntax

/// The BLOB form of a list of scalar values passed to `sift_call` (tag ``SQLFunctions/ValueTag/collection``),
/// made by `sift_collect` or bound by the lowering for a constant list: per value a kind byte, then
/// 8 bytes (integers, doubles, dates as seconds since 2001) or a 4-byte length and UTF-8 or raw
/// bytes (strings, decimals as text, data). Nested collections have no form here (nil).
///
/// ```swift
/// CollectedValues.decode(CollectedValues.encode([.integer(1), .string("a")]))  // [1, "a"]
/// ```
public enum CollectedValues {
    /// The values as one BLOB, in the format ``decode(_:)`` reads.
    ///
    /// ```swift
    /// let blob = CollectedValues.encode([.integer(1), .string("a")])
    /// CollectedValues.decode(blob)?.count   // 2
    /// ```
    public static func encode(_ values: [Value]) -> [UInt8] {
        var out: [UInt8] = []
        func word(_ w: UInt64) { withUnsafeBytes(of: w.littleEndian) { out.append(contentsOf: $0) } }
        func bytes(_ b: some Swift.Collection<UInt8>) { withUnsafeBytes(of: UInt32(b.count).littleEndian) { out.append(contentsOf: $0) }; out.append(contentsOf: b) }
        for v in values {
            switch v {
            case .bool(let b): out.append(1); out.append(b ? 1 : 0)
            case .integer(let i): out.append(2); word(UInt64(bitPattern: i))
            case .double(let d): out.append(3); word(d.bitPattern)
            case .string(let s): out.append(4); bytes(s.utf8)
            case .date(let d): out.append(5); word(d.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let d): out.append(6); bytes(d)
            case .decimal(let d): out.append(7); bytes(d.description.utf8)
            case .null, .array, .set, .dictionary, .object: out.append(0)
            }
        }
        return out
    }

    /// The values of a BLOB written by ``encode(_:)``, or nil when the bytes are not such a BLOB.
    public static func decode(_ b: [UInt8]) -> [Value]? {
        var i = 0, out: [Value] = []
        func word() -> UInt64? {
            guard i + 8 <= b.count else { return nil }
            var w: UInt64 = 0
            for k in 0..<8 { w |= UInt64(b[i + k]) << (8 * UInt64(k)) }
            i += 8
            return w
        }
        func bytes() -> ArraySlice<UInt8>? {
            guard i + 4 <= b.count else { return nil }
            let n = Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24
            i += 4
            guard i + n <= b.count else { return nil }
            defer { i += n }
            return b[i..<(i + n)]
        }
        while i < b.count {
            let kind = b[i]
            i += 1
            switch kind {
            case 0: out.append(.null)
            case 1: guard i < b.count else { return nil }; out.append(.bool(b[i] != 0)); i += 1
            case 2: guard let w = word() else { return nil }; out.append(.integer(Int64(bitPattern: w)))
            case 3: guard let w = word() else { return nil }; out.append(.double(Double(bitPattern: w)))
            case 4: guard let s = bytes() else { return nil }; out.append(.string(String(decoding: s, as: UTF8.self)))
            case 5: guard let w = word() else { return nil }; out.append(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: w))))
            case 6: guard let d = bytes() else { return nil }; out.append(.data(Data(d)))
            case 7:
                guard let s = bytes(), let d = Decimal(string: String(decoding: s, as: UTF8.self), locale: Locale(identifier: "en_US_POSIX")) else { return nil }
                out.append(.decimal(d))
            default: return nil
            }
        }
        return out
    }
}

extension LiteralValue {
    /// Not a list or a dictionary: a value `CollectedValues` can carry.
    var isScalar: Bool {
        switch self {
        case .array, .dictionary: false
        default: true
        }
    }
}

/// What ``CollectedValues`` can carry.
extension Value {
    /// Not a collection or an object: a value `CollectedValues` can carry.
    public var isScalarValue: Bool {
        switch self {
        case .array, .set, .dictionary, .object: false
        default: true
        }
    }
}
