// The exact form of a whole JSON document as a store keeps it in one BLOB column: written by the
// store when it saves a document entity, read back by the store and by `sift_document`, which
// evaluates comparisons on it from SQL. Both sides of that contract live here, in the lowering's
// target, as `CollectedValues` does for `sift_call`'s lists.

import Foundation
import SiftEvaluation

/// A document as a store keeps it whole (a document entity's `Z_DOC` column, see
/// ``Entity/documentColumn``): a tag byte per value, then its payload (integers and doubles
/// as their 64 bits, strings and keys as a length and UTF-8, arrays and objects as a count and
/// their members). Unlike JSON through Foundation, integers and integral doubles stay apart.
public enum DocumentValues {
    /// The bytes of `v`.
    ///
    /// ```swift
    /// let bytes = DocumentValues.encode(.dictionary(["a": .double(1)]))
    /// DocumentValues.decode(bytes)   // ["a": 1.0], still a double
    /// ```
    public static func encode(_ v: Value) -> [UInt8] {
        var out: [UInt8] = []
        write(v, into: &out)
        return out
    }

    private static func int(_ n: UInt64, into out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: n >> (8 * UInt64(i)))) }
    }

    private static func text(_ s: String, into out: inout [UInt8]) {
        let bytes = Array(s.utf8)
        int(UInt64(bytes.count), into: &out)
        out += bytes
    }

    private static func write(_ v: Value, into out: inout [UInt8]) {
        switch v {
        case .null: out.append(0)
        case .bool(let b): out.append(b ? 2 : 1)
        case .integer(let i): out.append(3); int(UInt64(bitPattern: i), into: &out)
        case .double(let d): out.append(4); int(d.bitPattern, into: &out)
        case .string(let s): out.append(5); text(s, into: &out)
        case .date(let d): out.append(6); int(d.timeIntervalSinceReferenceDate.bitPattern, into: &out)
        case .array(let a), .set(let a):
            out.append(7)
            int(UInt64(a.count), into: &out)
            for e in a { write(e, into: &out) }
        case .dictionary(let d):
            out.append(8)
            int(UInt64(d.count), into: &out)
            // In the dictionary's own order: the form is read back into a dictionary.
            for (k, e) in d { text(k, into: &out); write(e, into: &out) }
        case .decimal(let d): out.append(9); text("\(d)", into: &out)
        case .data(let d): out.append(10); int(UInt64(d.count), into: &out); out += d
        case .object(let o):
            write(o.dictionaryValue.map { .dictionary($0) } ?? .null, into: &out)
        }
    }

    /// The value `encode` wrote (`.null` for bytes it did not write).
    public static func decode(_ bytes: [UInt8]) -> Value {
        var at = 0
        return read(bytes, &at) ?? .null
    }

    private static func readInt(_ b: [UInt8], _ at: inout Int) -> UInt64? {
        guard at + 8 <= b.count else { return nil }
        var n: UInt64 = 0
        for i in 0..<8 { n |= UInt64(b[at + i]) << (8 * UInt64(i)) }
        at += 8
        return n
    }

    private static func readText(_ b: [UInt8], _ at: inout Int) -> String? {
        guard let n = readInt(b, &at), n <= UInt64(b.count - at) else { return nil }
        let s = String(decoding: b[at..<(at + Int(n))], as: UTF8.self)
        at += Int(n)
        return s
    }

    private static func read(_ b: [UInt8], _ at: inout Int) -> Value? {
        guard at < b.count else { return nil }
        let tag = b[at]
        at += 1
        switch tag {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return readInt(b, &at).map { .integer(Int64(bitPattern: $0)) }
        case 4: return readInt(b, &at).map { .double(Double(bitPattern: $0)) }
        case 5: return readText(b, &at).map { .string($0) }
        case 6: return readInt(b, &at).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case 7:
            guard let n = readInt(b, &at) else { return nil }
            var a: [Value] = []
            for _ in 0..<n { guard let e = read(b, &at) else { return nil }; a.append(e) }
            return .array(a)
        case 8:
            guard let n = readInt(b, &at) else { return nil }
            var d: [String: Value] = [:]
            for _ in 0..<n {
                guard let k = readText(b, &at), let e = read(b, &at) else { return nil }
                d[k] = e
            }
            return .dictionary(d)
        case 9: return readText(b, &at).flatMap { Decimal(string: $0) }.map { .decimal($0) }
        case 10:
            guard let n = readInt(b, &at), n <= UInt64(b.count - at) else { return nil }
            let d = Data(b[at..<(at + Int(n))])
            at += Int(n)
            return .data(d)
        default: return nil
        }
    }
}
