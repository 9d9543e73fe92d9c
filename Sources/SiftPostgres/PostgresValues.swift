// How `SQLValue`s travel to PostgreSQL and back as text: bound parameters (with explicit types, so
// the server never guesses an integer is text), result columns (mapped by their type OID to the
// five storage classes Sift works with), and rows of COPY's text format. Doubles are written in
// their shortest round-trip form and the server is asked for enough digits, so a double survives
// the trip bit for bit; text holding a NUL character is refused, because PostgreSQL text cannot
// store one and the C API would silently cut the string there.

import CLibPQ
import SiftSQL

/// Type OIDs of the built-in types the driver names or reads (`pg_type.oid`, fixed since 7.x).
enum PostgresType {
    static let bool: Oid = 16
    static let bytea: Oid = 17
    static let int8: Oid = 20
    static let int2: Oid = 21
    static let int4: Oid = 23
    static let text: Oid = 25
    static let float4: Oid = 700
    static let float8: Oid = 701
    static let numeric: Oid = 1700
    /// No type: the server infers the parameter's type from where it is used.
    static let unspecified: Oid = 0
}

/// The parameters of one statement, laid out for `PQexecParams`: every value's bytes in one buffer
/// (text NUL-terminated, bytea in binary with its length), plus the per-parameter arrays.
struct PostgresParameters {
    private(set) var types: [Oid] = []
    private(set) var formats: [Int32] = []
    private(set) var lengths: [Int32] = []
    /// Where each value starts in `bytes`; nil for SQL NULL.
    private var offsets: [Int?] = []
    private var bytes: [UInt8] = []

    /// The protocol's limit on parameters per statement (a 16-bit count).
    static let maximumCount = 65535

    init(_ values: [SQLValue]) throws(PostgresError) {
        guard values.count <= Self.maximumCount else {
            throw PostgresError(
                kind: .query,
                message:
                    "cannot bind \(values.count) parameters: PostgreSQL takes at most \(Self.maximumCount) per statement"
            )
        }
        types.reserveCapacity(values.count)
        formats.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        offsets.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            switch value {
            case .null:
                append(type: PostgresType.unspecified, format: 0, length: 0, offset: nil)
            case .integer(let n):
                appendText(String(n), type: PostgresType.int8)
            case .double(let d):
                appendText(PostgresText.double(d), type: PostgresType.float8)
            case .text(let s):
                guard !s.utf8.contains(0) else { throw PostgresText.nulError("text parameter $\(index + 1)") }
                appendText(s, type: PostgresType.text)
            case .blob(let b):
                guard let length = Int32(exactly: b.count) else {
                    throw PostgresError(
                        kind: .query,
                        message:
                            "blob parameter $\(index + 1) has \(b.count) bytes, more than a PostgreSQL value can hold")
                }
                // Binary format, so the bytes go as they are; the terminator after them only makes
                // sure an empty blob still has a non-null pointer (null would mean SQL NULL).
                append(type: PostgresType.bytea, format: 1, length: length, offset: bytes.count)
                bytes.append(contentsOf: b)
                bytes.append(0)
            }
        }
    }

    private mutating func appendText(_ s: String, type: Oid) {
        append(type: type, format: 0, length: 0, offset: bytes.count)
        bytes.append(contentsOf: s.utf8)
        bytes.append(0)
    }

    private mutating func append(type: Oid, format: Int32, length: Int32, offset: Int?) {
        types.append(type)
        formats.append(format)
        lengths.append(length)
        offsets.append(offset)
    }

    /// Calls `body` with the value pointers, valid only during the call.
    func withValuePointers<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress.map(UnsafeRawPointer.init)
            let pointers = offsets.map { offset in
                offset.flatMap { base?.advanced(by: $0).assumingMemoryBound(to: CChar.self) }
            }
            return body(pointers)
        }
    }
}

/// PostgreSQL's text forms of Sift's values, in both directions.
enum PostgresText {
    /// The error for text that holds a NUL character, which PostgreSQL cannot store.
    static func nulError(_ what: String) -> PostgresError {
        PostgresError(kind: .query, message: "\(what) contains a NUL character, which PostgreSQL text cannot hold")
    }

    /// A double as float8 input: Swift's shortest round-trip digits, or PostgreSQL's spellings of
    /// the special values.
    static func double(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return d.description
    }

    /// The value of one result field, from its text and its column's type OID.
    static func value(_ text: UnsafeRawBufferPointer, type: Oid) -> SQLValue {
        switch type {
        case PostgresType.int8, PostgresType.int4, PostgresType.int2:
            if let n = integer(text) { return .integer(n) }
        case PostgresType.float8, PostgresType.float4:
            if let d = double(text) { return .double(d) }
        case PostgresType.numeric:
            if let d = numeric(text) { return .double(d) }
        case PostgresType.bool:
            return .integer(text.first == UInt8(ascii: "t") ? 1 : 0)
        case PostgresType.bytea:
            if let b = bytea(text) { return .blob(b) }
        default:
            break
        }
        return .text(String(decoding: text, as: UTF8.self))
    }

    /// A decimal integer (optional minus sign, digits), nil when it is not one or overflows.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < text.count else { return nil }
        var n: Int64 = 0
        while i < text.count {
            let digit = text[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            // Accumulated with the final sign, so Int64.min parses without overflowing.
            let (shifted, o1) = n.multipliedReportingOverflow(by: 10)
            let (next, o2) =
                negative
                ? shifted.subtractingReportingOverflow(Int64(digit))
                : shifted.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            n = next
            i += 1
        }
        return n
    }

    /// A float4/float8 output value, PostgreSQL's `Infinity`, `-Infinity` and `NaN` included.
    static func double(_ text: UnsafeRawBufferPointer) -> Double? {
        let s = String(decoding: text, as: UTF8.self)
        switch s {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default: return Double(s)
        }
    }

    /// A numeric output value as a double, or nil when the double would not stand for it: beyond
    /// the double range (which would read as an infinity) or so small it would read as zero.
    static func numeric(_ text: UnsafeRawBufferPointer) -> Double? {
        let s = String(decoding: text, as: UTF8.self)
        switch s {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default: break
        }
        guard let d = Double(s), d.isFinite else { return nil }
        if d == 0 {
            // Only the digits before any exponent say whether the number itself is zero.
            for byte in text {
                if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
                if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return nil }
            }
        }
        return d
    }

    /// bytea output: the `\x` hex form (what `bytea_output = hex`, set on every connection, gives),
    /// or libpq's decoding of the older escape form.
    static func bytea(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        if text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") {
            guard text.count % 2 == 0 else { return nil }
            var out = [UInt8]()
            out.reserveCapacity((text.count - 2) / 2)
            var i = 2
            while i < text.count {
                guard let high = hexDigit(text[i]), let low = hexDigit(text[i + 1]) else { return nil }
                out.append(high << 4 | low)
                i += 2
            }
            return out
        }
        // The escape form needs the NUL terminator libpq keeps after every field.
        guard let start = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return [] }
        var count = 0
        guard let decoded = sift_PQunescapeBytea(start, &count) else { return nil }
        defer { sift_PQfreemem(decoded) }
        return Array(UnsafeBufferPointer(start: decoded, count: count))
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Appends `value` as one field of COPY's text format: `\N` for NULL, backslash, tab, newline
    /// and carriage return escaped in text, bytea as `\\x` and hex (COPY unescapes the first
    /// backslash, bytea input reads the rest).
    static func appendCopyField(_ value: SQLValue, to out: inout [UInt8], row: Int, column: Int) throws(PostgresError) {
        switch value {
        case .null:
            out.append(UInt8(ascii: "\\"))
            out.append(UInt8(ascii: "N"))
        case .integer(let n):
            out.append(contentsOf: String(n).utf8)
        case .double(let d):
            out.append(contentsOf: double(d).utf8)
        case .text(let s):
            for byte in s.utf8 {
                switch byte {
                case 0: throw nulError("the text in row \(row + 1), column \(column + 1)")
                case UInt8(ascii: "\\"):
                    out.append(byte)
                    out.append(byte)
                case UInt8(ascii: "\t"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(UInt8(ascii: "t"))
                case UInt8(ascii: "\n"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(UInt8(ascii: "r"))
                default: out.append(byte)
                }
            }
        case .blob(let b):
            out.append(UInt8(ascii: "\\"))
            out.append(UInt8(ascii: "\\"))
            out.append(UInt8(ascii: "x"))
            out.append(contentsOf: SQLValue.hex(b).utf8)
        }
    }

    /// An identifier in double quotes, inner quotes doubled.
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
