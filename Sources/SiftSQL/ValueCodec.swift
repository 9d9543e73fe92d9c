// The one binary form of an evaluator `Value` that Sift writes: a store's document column
// (`Z_DOC`) and transformable attributes on disk, and the lists that `sift_collect`, the lowering
// and `sift_call` hand each other within a statement. JSON through Foundation cannot be that form
// (it turns 1.0 into 1, drops NaN, and has no dates or data), and two forms with their own tag
// numbers drifted apart, so every writer and reader goes through here. It lives in the lowering's
// target because the lowering binds such lists and SiftSQLite and SiftStore, both above it,
// read them; it needs nothing but `Value`.

import Foundation
import SiftEvaluation
import SiftSyntax

/// The binary form of a `Value`: a tag byte, then the payload. Integers, doubles and dates (seconds
/// since 2001) are their 64 bits little-endian; strings, dictionary keys and decimals (their text)
/// an 8-byte length and UTF-8; data an 8-byte length and the bytes; arrays and dictionaries an
/// 8-byte count and their members (a key before each dictionary value). Sets are written as arrays
/// and objects as their dictionaries (nil when they list no keys). The tags are those documents
/// have always been stored with, so existing store files read unchanged:
///
/// | tag | value | tag | value |
/// |-----|-------|-----|-------|
/// | 0 | nil | 6 | date |
/// | 1 | false | 7 | array |
/// | 2 | true | 8 | dictionary |
/// | 3 | integer | 9 | decimal |
/// | 4 | double | 10 | data |
/// | 5 | string | | |
///
/// ```swift
/// let bytes = ValueCodec.encode(.array([.integer(1), .double(1)]))
/// try ValueCodec.decode(bytes)   // [1, 1.0]: still an integer and a double
/// ```
package enum ValueCodec {
    /// The tag bytes, in the numbering documents are stored with.
    package enum Tag: UInt8, CaseIterable, Sendable {
        case null = 0
        case `false` = 1
        case `true` = 2
        case integer = 3
        case double = 4
        case string = 5
        case date = 6
        case array = 7
        case dictionary = 8
        case decimal = 9
        case data = 10
    }

    /// The bytes of `value`.
    ///
    /// ```swift
    /// ValueCodec.encode(.integer(1))   // [3, 1, 0, 0, 0, 0, 0, 0, 0]
    /// ```
    package static func encode(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        encode(value, into: &out)
        return out
    }

    /// Appends the bytes of `value` to `out`.
    package static func encode(_ value: Value, into out: inout [UInt8]) {
        write(value, into: &out, lowWater: StackGuard.lowWater)
    }

    /// The value of bytes `encode` wrote; a ``ValueCodecError`` for anything else (bytes cut
    /// short, an unknown tag, text that is not UTF-8, bytes after the value).
    ///
    /// ```swift
    /// try ValueCodec.decode([2])        // true
    /// try ValueCodec.decode([3, 1])     // throws: truncated at byte 1
    /// ```
    package static func decode(_ bytes: [UInt8]) throws(ValueCodecError) -> Value {
        // `withUnsafeBytes` rethrows untyped errors: the outcome comes out as a `Result`.
        let outcome = bytes.withUnsafeBytes { (raw) -> Result<Value, ValueCodecError> in
            var reader = Reader(bytes: raw, lowWater: StackGuard.lowWater)
            do throws(ValueCodecError) {
                let value = try reader.value()
                guard reader.at == raw.count else { throw ValueCodecError(.trailingBytes, at: reader.at) }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    // MARK: Writing

    private static func word(_ w: UInt64, into out: inout [UInt8]) {
        withUnsafeBytes(of: w.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func text(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            word(UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
        }
    }

    private static func write(_ v: Value, into out: inout [UInt8], lowWater: StackGuard.Limits) {
        switch v {
        case .null: out.append(Tag.null.rawValue)
        case .bool(let b): out.append(b ? Tag.true.rawValue : Tag.false.rawValue)
        case .integer(let i):
            out.append(Tag.integer.rawValue)
            word(UInt64(bitPattern: i), into: &out)
        case .double(let d):
            out.append(Tag.double.rawValue)
            word(d.bitPattern, into: &out)
        case .string(let s):
            out.append(Tag.string.rawValue)
            text(s, into: &out)
        case .date(let d):
            out.append(Tag.date.rawValue)
            word(d.timeIntervalSinceReferenceDate.bitPattern, into: &out)
        case .decimal(let d):
            out.append(Tag.decimal.rawValue)
            text(d.description, into: &out)
        case .data(let d):
            out.append(Tag.data.rawValue)
            word(UInt64(d.count), into: &out)
            out.append(contentsOf: d)
        case .array(let a), .set(let a):
            out.append(Tag.array.rawValue)
            word(UInt64(a.count), into: &out)
            nested(lowWater) { (lowWater) in for e in a { write(e, into: &out, lowWater: lowWater) } }
        case .dictionary(let d):
            out.append(Tag.dictionary.rawValue)
            word(UInt64(d.count), into: &out)
            // In the dictionary's own order: the bytes are read back into a dictionary.
            nested(lowWater) { (lowWater) in
                for (k, e) in d {
                    text(k, into: &out)
                    write(e, into: &out, lowWater: lowWater)
                }
            }
        case .object(let o):
            write(o.dictionaryValue.map { .dictionary($0) } ?? .null, into: &out, lowWater: lowWater)
        }
    }

    /// Runs `body` (one level deeper) here while the thread has stack to spare, else on a thread
    /// with a large stack (whose own low-water mark `body` then receives): values nested
    /// thousands of levels deep neither crash the writer nor the reader.
    @inline(__always)
    fileprivate static func nested<T, E: Error>(
        _ lowWater: StackGuard.Limits, _ body: (StackGuard.Limits) throws(E) -> T
    ) throws(E) -> T {
        if StackGuard.hasRoom(below: lowWater) { return try body(lowWater) }
        return try StackGuard.onLargeStack { () throws(E) -> T in try body(StackGuard.lowWater) }
    }

    // MARK: Reading

    /// A cursor over the bytes being read.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var lowWater: StackGuard.Limits
        var at = 0

        init(bytes: UnsafeRawBufferPointer, lowWater: StackGuard.Limits) {
            self.bytes = bytes
            self.lowWater = lowWater
        }

        mutating func word() throws(ValueCodecError) -> UInt64 {
            guard bytes.count - at >= 8 else { throw ValueCodecError(.truncated, at: at) }
            var w: UInt64 = 0
            for k in 0..<8 { w |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
            at += 8
            return w
        }

        /// A length or count, checked against what is left (each counted member takes a byte at
        /// least), so a corrupt count fails here instead of reserving memory for it.
        mutating func count() throws(ValueCodecError) -> Int {
            let start = at
            let n = try word()
            guard n <= UInt64(bytes.count - at) else { throw ValueCodecError(.truncated, at: start) }
            return Int(n)
        }

        mutating func payload() throws(ValueCodecError) -> UnsafeRawBufferPointer {
            let n = try count()
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
        }

        mutating func text() throws(ValueCodecError) -> String {
            let start = at
            guard let s = String(validating: try payload(), as: UTF8.self) else {
                throw ValueCodecError(.invalidText, at: start)
            }
            return s
        }

        mutating func value() throws(ValueCodecError) -> Value {
            guard at < bytes.count else { throw ValueCodecError(.truncated, at: at) }
            let start = at
            guard let tag = Tag(rawValue: bytes[at]) else { throw ValueCodecError(.unknownTag(bytes[at]), at: at) }
            at += 1
            switch tag {
            case .null: return .null
            case .false: return .bool(false)
            case .true: return .bool(true)
            case .integer: return .integer(Int64(bitPattern: try word()))
            case .double: return .double(Double(bitPattern: try word()))
            case .string: return .string(try text())
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try word())))
            case .decimal:
                // `description` writes NaN as "NaN", which `Decimal(string:)` does not read.
                let t = try text()
                guard let d = t == "NaN" ? Decimal.nan : Decimal(string: t, locale: ValueCodec.posix) else {
                    throw ValueCodecError(.invalidDecimal, at: start)
                }
                return .decimal(d)
            case .data: return .data(Data(try payload()))
            case .array, .dictionary:
                let n = try count()
                let outer = lowWater
                defer { lowWater = outer }
                return try ValueCodec.nested(lowWater) { (inner) throws(ValueCodecError) -> Value in
                    lowWater = inner
                    return tag == .array ? .array(try elements(n)) : .dictionary(try members(n))
                }
            }
        }

        mutating func elements(_ n: Int) throws(ValueCodecError) -> [Value] {
            var a: [Value] = []
            a.reserveCapacity(n)
            for _ in 0..<n { a.append(try value()) }
            return a
        }

        mutating func members(_ n: Int) throws(ValueCodecError) -> [String: Value] {
            var d: [String: Value] = [:]
            d.reserveCapacity(n)
            for _ in 0..<n {
                let start = at
                let k = try text()
                guard d.updateValue(try value(), forKey: k) == nil else {
                    throw ValueCodecError(.duplicateKey(k), at: start)
                }
            }
            return d
        }
    }

    /// Decimals are written with `description`, which always uses a period.
    private static let posix = Locale(identifier: "en_US_POSIX")
}

/// Why bytes are not a value ``ValueCodec`` wrote, and where (a byte offset).
///
/// ```swift
/// do { _ = try ValueCodec.decode([42]) } catch { error.kind }   // .unknownTag(42)
/// ```
package struct ValueCodecError: SiftError, Hashable {
    /// What is wrong with the bytes.
    package enum Kind: Hashable, Sendable {
        /// The bytes end inside a value (or a length or count runs past their end).
        case truncated
        /// A byte where a tag should be that is no tag.
        case unknownTag(UInt8)
        /// A string, key or decimal whose bytes are not UTF-8.
        case invalidText
        /// A decimal whose text is not a number.
        case invalidDecimal
        /// A dictionary that names a key twice.
        case duplicateKey(String)
        /// Bytes left over after the value.
        case trailingBytes
    }

    /// What is wrong.
    package let kind: Kind
    /// The offset of the byte where reading failed.
    package let offset: Int

    init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// `truncated`, `unknown-tag`, `invalid-text`, `invalid-decimal`, `duplicate-key` or `trailing-bytes`.
    package var id: String {
        switch kind {
        case .truncated: "truncated"
        case .unknownTag: "unknown-tag"
        case .invalidText: "invalid-text"
        case .invalidDecimal: "invalid-decimal"
        case .duplicateKey: "duplicate-key"
        case .trailingBytes: "trailing-bytes"
        }
    }

    /// What is wrong and at which byte.
    package var message: String {
        switch kind {
        case .truncated: "value bytes cut short at byte \(offset)"
        case .unknownTag(let t): "unknown value tag \(t) at byte \(offset)"
        case .invalidText: "text that is not UTF-8 at byte \(offset)"
        case .invalidDecimal: "a decimal that is not a number at byte \(offset)"
        case .duplicateKey(let k): "key \"\(k)\" repeated at byte \(offset)"
        case .trailingBytes: "bytes after the value at byte \(offset)"
        }
    }

    /// The message.
    package var description: String { message }
}

// MARK: - Flat lists

extension LiteralValue {
    /// Not a list, a dictionary or an object: the lowering hands memory lists of these only.
    var isScalar: Bool {
        switch self {
        case .array, .dictionary, .object: false
        default: true
        }
    }
}

extension Value {
    /// Not a collection or an object: `sift_call` passes on lists of these only (the lowering
    /// never asks for another collection as a result).
    package var isScalarValue: Bool {
        switch self {
        case .array, .set, .dictionary, .object: false
        default: true
        }
    }
}

extension LiteralValue {
    /// A `%@` object, or a list of only those.
    var namesObjects: Bool {
        if case .object = self { return true }
        if case .array(let list) = self { return ObjectReference.all(list) != nil }
        return false
    }
}

extension ObjectReference {
    /// The references of a list made only of `%@` objects (none empty), or nil.
    static func all(_ list: [LiteralValue]) -> [ObjectReference]? {
        var refs: [ObjectReference] = []
        for item in list {
            guard case .object(let r) = item else { return nil }
            refs.append(r)
        }
        return refs.isEmpty ? nil : refs
    }
}
