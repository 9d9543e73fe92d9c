// The fast JSON reader behind `sift filter`: it walks a byte buffer (usually a memory-mapped file)
// one record at a time and, per value, either validates and skips it, builds only the parts of it
// a predicate reads (a `Projection`), or rewrites it as the compact text `JSONValue.write` prints,
// without building a `JSONValue` at all. It accepts exactly the language of `JSONReader` and fails
// with the same message at the same byte, so its errors print the same `line:column`; the line and
// column are only computed once an error is thrown. The tests compare the two readers on valid and
// broken documents.

import Foundation
import SiftEvaluation

/// A syntax error found by ``JSONScanner``: the message and the byte offset it happened at.
struct JSONScanError: Error {
    var message: String
    var offset: Int

    /// The error with its 1-based line and column in `bytes`, counted as `JSONReader` counts them.
    func located(in bytes: UnsafeBufferPointer<UInt8>) -> JSONError {
        var line = 1
        var col = 1
        var j = 0
        let end = Swift.min(offset, bytes.count)
        while j < end {
            let c = bytes[j]
            if c == 0x0A {
                line += 1
                col = 1
            } else if c & 0xC0 != 0x80 {
                col += 1
            }
            j += 1
        }
        return JSONError(message: message, line: line, column: col)
    }
}

/// Which parts of a JSON value to build: all of it, or, for an object, only some members (each with
/// its own projection). An array applies the projection to each of its elements, as a key path
/// maps over arrays.
indirect enum Projection: Equatable, Sendable {
    case whole
    case members([ProjectedKey])

    /// The union of two projections: a key needed whole by either is built whole.
    func merged(with other: Projection) -> Projection {
        guard case .members(var keys) = self, case .members(let more) = other else { return .whole }
        for k in more {
            if let n = keys.firstIndex(where: { $0.name == k.name }) {
                keys[n].projection = keys[n].projection.merged(with: k.projection)
            } else {
                keys.append(k)
            }
        }
        return .members(keys)
    }
}

/// An object built only in part, for a projection: the members the predicate reads, in the
/// projection's order (nil when absent), answered by a short scan instead of hashing a dictionary
/// both to build it and to read it. It is only ever read key by key: a value the predicate uses
/// whole (compared, counted, printed in an error) is built as a dictionary, so nothing can tell the
/// two apart.
struct ProjectedObject: KeyValueCoding {
    /// The projection's members (shared by every object built for it).
    let keys: [ProjectedKey]
    /// One value per key (`.null` for a missing member); nil when none was present.
    let values: ValueSlots?

    func value(forKey key: String) throws -> Value {
        guard let values else { return .null }
        for n in keys.indices where keys[n].name == key { return values[n] }
        return .null
    }
}

/// The values of a partly built object, one per projected key, in one allocation of a class of its
/// own. An array of `Value`s looked its generic metadata up in the runtime on every allocation
/// (about 650 instructions with the allocation, against about 150 here), and a record allocates one
/// per object it builds. Written only while its object is built, read-only after.
final class ValueSlots: ManagedBuffer<Int, Value> {
    /// `count` slots holding nil.
    static func make(count: Int) -> ValueSlots {
        let slots = unsafeDowncast(ValueSlots.create(minimumCapacity: count) { _ in count }, to: ValueSlots.self)
        slots.withUnsafeMutablePointerToElements { $0.initialize(repeating: .null, count: count) }
        return slots
    }

    deinit {
        _ = withUnsafeMutablePointers { count, values in values.deinitialize(count: count.pointee) }
    }

    subscript(n: Int) -> Value {
        get { withUnsafeMutablePointerToElements { $0[n] } }
        set { withUnsafeMutablePointerToElements { $0[n] = newValue } }
    }
}

/// One member a projection builds, with its name as bytes so that a member's key can be matched
/// without building a string.
struct ProjectedKey: Equatable, Sendable {
    var name: String
    var bytes: [UInt8]
    var projection: Projection

    init(_ name: String, _ projection: Projection) {
        self.name = name
        self.bytes = Array(name.utf8)
        self.projection = projection
    }
}

package struct JSONScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    /// The offset of the next byte to read.
    var i: Int
    static let maximumDepth = 512

    init(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int = 0) {
        // A zero-length buffer may have no address; one static byte stands in (never read).
        base = buffer.baseAddress ?? UnsafePointer(JSONScanner.empty)
        count = buffer.count
        i = offset
    }

    private nonisolated(unsafe) static let empty = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    // MARK: Errors (the messages of JSONReader)

    private func char(_ j: Int) -> String {
        guard j < count else { return "end of input" }
        var k = j + 1
        while k < count, base[k] & 0xC0 == 0x80 { k += 1 }
        return String(decoding: UnsafeBufferPointer(start: base + j, count: k - j), as: UTF8.self)
    }

    func fail(_ message: String, at offset: Int? = nil) -> JSONScanError {
        JSONScanError(message: message, offset: offset ?? i)
    }

    func unexpected() -> JSONScanError { fail("unexpected '\(char(i))' where a JSON value was expected") }

    func trailing() -> JSONScanError { fail("unexpected '\(char(i))' after the JSON value") }

    func expectedSeparator(_ close: Character) -> JSONScanError {
        i < count
            ? fail("expected ',' or '\(close)', found '\(char(i))'")
            : fail("expected ',' or '\(close)', found end of input")
    }

    // MARK: Whitespace

    @inline(__always)
    mutating func skipSpace() {
        while i < count {
            let c = base[i]
            guard c <= 0x20, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    var atEnd: Bool { i >= count }

    @inline(__always)
    var current: UInt8 { base[i] }

    // MARK: Skipping

    /// Validates the value at `i` and moves past it.
    mutating func skipValue(depth: Int) throws(JSONScanError) {
        guard depth < Self.maximumDepth else { throw fail("JSON nested too deeply") }
        guard i < count else { throw fail("expected a JSON value, found end of input") }
        switch base[i] {
        case UInt8(ascii: "{"):
            guard !open(UInt8(ascii: "}")) else { return }
            repeat {
                try memberKey()
                // `skipElement`, spelled out: a call from here to it would put it in a cycle with
                // this function, and the compiler then inlines it nowhere.
                if depth + 1 < Self.maximumDepth, try skipScalar() { continue }
                try skipValue(depth: depth + 1)
            } while try separator(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            guard !open(UInt8(ascii: "]")) else { return }
            repeat {
                skipSpace()
                if depth + 1 < Self.maximumDepth, try skipScalar() { continue }
                try skipValue(depth: depth + 1)
            } while try separator(UInt8(ascii: "]"))
        default:
            guard try skipScalar() else { throw unexpected() }
        }
    }

    // MARK: Containers

    /// Moves past the opening bracket at `i` and the blanks after it, and answers whether the
    /// container is empty (its `close` then read too).
    @inline(__always)
    mutating func open(_ close: UInt8) -> Bool {
        i += 1
        skipSpace()
        guard i < count, base[i] == close else { return false }
        i += 1
        return true
    }

    /// Reads what follows a member or an element: blanks, then a ',' (true: another one follows)
    /// or `close` (false: the container ended). Anything else is `JSONReader`'s error.
    @inline(__always)
    mutating func separator(_ close: UInt8) throws(JSONScanError) -> Bool {
        skipSpace()
        if i < count {
            if base[i] == UInt8(ascii: ",") {
                i += 1
                return true
            }
            if base[i] == close {
                i += 1
                return false
            }
        }
        throw expectedSeparator(Character(Unicode.Scalar(close)))
    }

    /// Validates the member or element value at `i` and moves past it, as `skipValue` does; scalars,
    /// most of what is skipped, without the call. Transparent: the optimizer declined to inline it
    /// (as `@inline(__always)`) into the large loops that call it, a call per member.
    @_transparent
    mutating func skipElement(depth: Int) throws(JSONScanError) {
        if depth < Self.maximumDepth, try skipScalar() { return }
        try skipValue(depth: depth)
    }

    /// Validates the string, number, `true`, `false` or `null` at `i` and moves past it, failing as
    /// `skipValue` fails; answers false, having read nothing, for anything else (a container, the
    /// end of the input, a byte no value starts with), which `skipValue` then reads. Transparent,
    /// as `skipElement` is.
    @_transparent
    mutating func skipScalar() throws(JSONScanError) -> Bool {
        guard i < count else { return false }
        switch base[i] {
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try scanNumber()
        case UInt8(ascii: "t"): try word(0x74_72_75_65, 4)
        case UInt8(ascii: "f"): try word(0x66_61_6C_73_65, 5)
        case UInt8(ascii: "n"): try word(0x6E_75_6C_6C, 4)
        default: return false
        }
        return true
    }

    /// Reads `, "key" :` up to the member's value (the opening brace or comma already read), and
    /// returns where the key's bytes are and whether they hold escapes.
    @inline(__always) @discardableResult
    mutating func memberKey() throws(JSONScanError) -> (start: Int, end: Int, escaped: Bool) {
        skipSpace()
        // Most keys are short, plain and followed at once by the colon: one word read decides.
        if i + 9 <= count, base[i] == UInt8(ascii: "\"") {
            let special = Self.specialBytes(UnsafeRawPointer(base + i + 1).loadUnaligned(as: UInt64.self))
            if special != 0 {
                let end = i + 1 + special.trailingZeroBitCount >> 3
                if base[end] == UInt8(ascii: "\""), end + 1 < count, base[end + 1] == UInt8(ascii: ":") {
                    let start = i + 1
                    i = end + 2
                    skipSpace()
                    return (start, end, false)
                }
            }
        }
        return try memberKeyInFull()
    }

    /// `memberKey` for any key, spaces and errors included: a call of its own, so that the short
    /// path above stays small enough to inline.
    @inline(never)
    private mutating func memberKeyInFull() throws(JSONScanError) -> (start: Int, end: Int, escaped: Bool) {
        guard i < count, base[i] == UInt8(ascii: "\"") else { throw fail("expected a string key, found '\(char(i))'") }
        let start = i + 1
        let escaped = try scanString()
        let end = i - 1
        skipSpace()
        guard i < count, base[i] == UInt8(ascii: ":") else { throw fail("expected ':', found '\(char(i))'") }
        i += 1
        skipSpace()
        return (start, end, escaped)
    }

    /// `true`, `false` or `null` (`length` 4 or 5): `bytes` holds the word's letters, first letter
    /// highest. Its last four letters are compared as one word.
    @inline(__always)
    mutating func word(_ bytes: UInt64, _ length: Int) throws(JSONScanError) {
        guard i + length <= count,
            UInt32(littleEndian: UnsafeRawPointer(base + i + length - 4).loadUnaligned(as: UInt32.self))
                == UInt32(truncatingIfNeeded: bytes).byteSwapped,
            length == 4 || base[i] == UInt8(truncatingIfNeeded: bytes >> 32)
        else { throw unexpected() }
        i += length
    }

    /// Moves past the string whose opening quote is at `i`, validating its escapes; answers whether
    /// it has any (when not, its bytes are its content).
    @inline(__always)
    mutating func scanString() throws(JSONScanError) -> Bool {
        let open = i
        i += 1
        var escaped = false
        while true {
            // Eight bytes at a time while none of them is a quote, a backslash or a control character.
            while i + 8 <= count {
                let special = Self.specialBytes(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                // The lowest flagged byte is exact, so the scan goes straight to it.
                if special != 0 {
                    i += special.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < count else { throw fail("unterminated string", at: open) }
            let c = base[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return escaped
            }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            escaped = true
            try skipEscape()
        }
    }

    /// Validates the escape whose backslash is at `i` and moves past it: out of line, so that the
    /// strings most values are (without escapes) inline a small loop.
    @inline(never)
    private mutating func skipEscape() throws(JSONScanError) {
        i += 1
        guard i < count else { throw fail("unterminated string") }
        let e = base[i]
        i += 1
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            _ = try escapedScalar()
        default:
            throw fail("invalid escape '\\\(char(i - 1))'")
        }
    }

    /// The high bit of each byte of `w` (read little-endian) that is a quote, a backslash or a
    /// control character. Only bytes above a flagged one can be flagged wrongly (by the borrow), so
    /// the lowest flagged byte is always exact.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let q = w ^ (ones &* 0x22)
        let b = w ^ (ones &* 0x5C)
        return (((q &- ones) & ~q) | ((b &- ones) & ~b) | ((w &- ones &* 0x20) & ~w)) & highs
    }

    /// The scalar of a `\u` escape whose `u` was just read (a surrogate pair takes two escapes).
    private mutating func escapedScalar() throws(JSONScanError) -> Unicode.Scalar {
        var v = try hex4()
        if v >= 0xD800 && v < 0xDC00 {
            guard i + 1 < count, base[i] == UInt8(ascii: "\\"), base[i + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate in string")
            }
            i += 2
            let lo = try hex4()
            guard lo >= 0xDC00 && lo < 0xE000 else { throw fail("unpaired surrogate in string") }
            v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
        }
        guard let s = Unicode.Scalar(v) else { throw fail("invalid \\u escape") }
        return s
    }

    private mutating func hex4() throws(JSONScanError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard i < count else { throw fail("invalid \\u escape") }
            let c = base[i] | 0x20
            let d: UInt32
            if c >= 0x30 && c <= 0x39 {
                d = UInt32(c - 0x30)
            } else if c >= 0x61 && c <= 0x66 {
                d = UInt32(c - 0x61 + 10)
            } else {
                throw fail("invalid \\u escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    /// The content of the string that was scanned between `start` and `end` (quotes excluded).
    func stringContent(_ start: Int, _ end: Int, escaped: Bool) -> String {
        guard escaped else {
            return String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(end - start)
        var copy = self
        copy.i = start
        while copy.i < end {
            let c = base[copy.i]
            copy.i += 1
            if c != UInt8(ascii: "\\") {
                out.append(c)
                continue
            }
            let e = base[copy.i]
            copy.i += 1
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                // Already validated by `scanString`.
                let s = (try? copy.escapedScalar()) ?? "\u{FFFD}"
                out.append(contentsOf: String(Character(s)).utf8)
            default: out.append(e)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads the string at `i` (its opening quote) into a `String`.
    @inline(__always)
    mutating func string() throws(JSONScanError) -> String {
        let start = i + 1
        let escaped = try scanString()
        return stringContent(start, i - 1, escaped: escaped)
    }

    // MARK: Numbers

    /// A number's text, as `JSONReader` reads it: an integer when written without '.' or an
    /// exponent and in Int64's range, else a Double.
    enum Number {
        case integer(Int64)
        case double(Double)
    }

    /// Validates the number at `i`, moves past it and answers where it was and whether it is
    /// written as an integer.
    @inline(__always)
    mutating func scanNumber() throws(JSONScanError) -> (start: Int, isInteger: Bool) {
        let start = i
        if base[i] == UInt8(ascii: "-") { i += 1 }
        @inline(__always) func digits(_ s: inout JSONScanner) -> Bool {
            let from = s.i
            while s.i < s.count, s.base[s.i] &- 0x30 < 10 { s.i += 1 }
            return s.i > from
        }
        guard digits(&self) else { throw fail("invalid number") }
        var isInteger = true
        if i < count, base[i] == UInt8(ascii: ".") {
            i += 1
            isInteger = false
            guard digits(&self) else { throw fail("invalid number") }
        }
        if i < count, base[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            isInteger = false
            if i < count, base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) else { throw fail("invalid number") }
        }
        return (start, isInteger)
    }

    /// The number scanned between `start` and `i`.
    func numberValue(_ start: Int, isInteger: Bool) -> Number {
        let negative = base[start] == UInt8(ascii: "-")
        var j = negative ? start + 1 : start
        if isInteger {
            var magnitude: UInt64 = 0
            var overflow = false
            while j < i {
                let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(UInt64(base[j] &- 0x30))
                magnitude = a
                overflow = overflow || o1 || o2
                j += 1
            }
            if !overflow {
                if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
                if negative, magnitude <= UInt64(Int64.max) + 1 {
                    return .integer(Int64(truncatingIfNeeded: 0 &- magnitude))
                }
            }
        } else if let d = fastDouble(start, negative: negative) {
            return .double(d)
        }
        // Beyond the fast cases: the standard library's correctly rounded conversion.
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        return .double(Double(text) ?? .nan)
    }

    /// Decimal numbers whose significant digits fit in 53 bits and whose power of ten is exact in
    /// a Double: one IEEE multiplication or division of two exact values is correctly rounded, so
    /// this gives the same Double as `Double(String)`. Nil for anything else.
    private func fastDouble(_ start: Int, negative: Bool) -> Double? {
        var j = negative ? start + 1 : start
        var mantissa: UInt64 = 0
        var digitCount = 0
        var scale = 0
        var seenDot = false
        while j < i {
            let c = base[j]
            if c == UInt8(ascii: ".") {
                seenDot = true
                j += 1
                continue
            }
            if c | 0x20 == UInt8(ascii: "e") { break }
            if mantissa != 0 || c != 0x30 { digitCount += 1 }
            if digitCount > 15 { return nil }
            mantissa = mantissa * 10 + UInt64(c &- 0x30)
            if seenDot { scale -= 1 }
            j += 1
        }
        if j < i {
            j += 1
            var sign = 1
            if base[j] == UInt8(ascii: "-") {
                sign = -1
                j += 1
            } else if base[j] == UInt8(ascii: "+") {
                j += 1
            }
            var e = 0
            while j < i {
                e = e * 10 + Int(base[j] &- 0x30)
                if e > 1000 { return nil }
                j += 1
            }
            scale += sign * e
        }
        var d = Double(mantissa)
        if mantissa == 0 {
            d = 0
        } else if scale >= 0 {
            guard scale <= 22 else { return nil }
            d *= Self.powersOfTen[scale]
        } else {
            guard scale >= -22 else { return nil }
            d /= Self.powersOfTen[-scale]
        }
        return negative ? -d : d
    }

    private static let powersOfTen: [Double] = (0...22).map { (k: Int) -> Double in
        var p = 1.0
        for _ in 0..<k { p *= 10 }
        return p
    }
}

// MARK: - Building values

extension JSONScanner {
    /// The value at `i` as the evaluator sees it (`JSONValue.value`), built only as far as
    /// `projection` asks; the members it leaves out are validated and skipped.
    mutating func value(depth: Int, _ projection: Projection) throws(JSONScanError) -> Value {
        guard depth < Self.maximumDepth else { throw fail("JSON nested too deeply") }
        guard i < count else { throw fail("expected a JSON value, found end of input") }
        switch base[i] {
        case UInt8(ascii: "{"):
            return try objectValue(depth: depth, projection)
        case UInt8(ascii: "["):
            var items: [Value] = []
            guard !open(UInt8(ascii: "]")) else { return .array(items) }
            repeat {
                skipSpace()
                items.append(try value(depth: depth + 1, projection))
            } while try separator(UInt8(ascii: "]"))
            return .array(items)
        default:
            return try scalar(
                string: Value.string, bool: Value.bool, null: .null, integer: Value.integer, double: Value.double)
        }
    }

    /// Reads the scalar at `i` (a string, a Boolean, null or a number), moves past it and builds
    /// it with the given cases of the caller's value type; anything else is `JSONReader`'s error.
    @inline(__always)
    mutating func scalar<T>(
        string: (String) -> T, bool: (Bool) -> T, null: T, integer: (Int64) -> T, double: (Double) -> T
    ) throws(JSONScanError) -> T {
        switch base[i] {
        case UInt8(ascii: "\""):
            return string(try self.string())
        case UInt8(ascii: "t"):
            try word(0x74_72_75_65, 4)
            return bool(true)
        case UInt8(ascii: "f"):
            try word(0x66_61_6C_73_65, 5)
            return bool(false)
        case UInt8(ascii: "n"):
            try word(0x6E_75_6C_6C, 4)
            return null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let (start, isInteger) = try scanNumber()
            switch numberValue(start, isInteger: isInteger) {
            case .integer(let n): return integer(n)
            case .double(let d): return double(d)
            }
        default: throw unexpected()
        }
    }

    /// The object at `i`, built as `value` builds it: whole as a dictionary, or, for a projection
    /// of members, only those (see ProjectedObject); `{"$date": number}` and nothing else is a date.
    private mutating func objectValue(depth: Int, _ projection: Projection) throws(JSONScanError) -> Value {
        var members: [String: Value] = [:]
        guard !open(UInt8(ascii: "}")) else { return .dictionary(members) }
        // The first member is kept aside for a date.
        var memberCount = 0
        var date: Value?
        // A partly built object keeps its members in the projection's order.
        var slots: ValueSlots?
        repeat {
            let key = try memberKey()
            memberCount += 1
            if case .members(let keys) = projection {
                if let slot = wantedSlot(key, keys) {
                    let v = try value(depth: depth + 1, keys[slot].projection)
                    if memberCount == 1, keys[slot].name == "$date" { date = v }
                    if slots == nil { slots = ValueSlots.make(count: keys.count) }
                    slots![slot] = v
                } else if memberCount == 1, isDateKey(key) {
                    date = try value(depth: depth + 1, .whole)
                } else {
                    try skipValue(depth: depth + 1)
                }
            } else if let (name, sub) = wantedMember(key, projection) {
                let v = try value(depth: depth + 1, sub)
                if memberCount == 1, name == "$date" { date = v }
                members[name] = v
            } else if memberCount == 1, isDateKey(key) {
                date = try value(depth: depth + 1, .whole)
            } else {
                try skipValue(depth: depth + 1)
            }
        } while try separator(UInt8(ascii: "}"))
        if memberCount == 1, let date {
            switch date {
            case .integer(let n): return .date(Date(timeIntervalSince1970: Double(n)))
            case .double(let d): return .date(Date(timeIntervalSince1970: d))
            default: break
            }
        }
        if case .members(let keys) = projection {
            return .object(ProjectedObject(keys: keys, values: slots))
        }
        return .dictionary(members)
    }

    /// Whether a member's key is `$date`.
    private func isDateKey(_ key: (start: Int, end: Int, escaped: Bool)) -> Bool {
        if key.escaped { return stringContent(key.start, key.end, escaped: true) == "$date" }
        return key.end - key.start == 5 && memcmp(base + key.start, "$date", 5) == 0
    }

    /// The index in `keys` of a member the projection builds, nil for one it skips.
    @inline(__always)
    private func wantedSlot(_ key: (start: Int, end: Int, escaped: Bool), _ keys: [ProjectedKey]) -> Int? {
        if key.escaped {
            let name = stringContent(key.start, key.end, escaped: true)
            return keys.firstIndex { $0.name == name }
        }
        let length = key.end - key.start
        for (n, k) in keys.enumerated() where k.bytes.count == length {
            if k.bytes.withUnsafeBufferPointer({ memcmp(base + key.start, $0.baseAddress!, length) == 0 }) { return n }
        }
        return nil
    }

    /// The name and projection of a member the projection builds, nil for one it skips.
    @inline(__always)
    private func wantedMember(_ key: (start: Int, end: Int, escaped: Bool), _ projection: Projection) -> (
        String, Projection
    )? {
        guard case .members(let keys) = projection else {
            return (stringContent(key.start, key.end, escaped: key.escaped), .whole)
        }
        let length = key.end - key.start
        if key.escaped {
            let name = stringContent(key.start, key.end, escaped: true)
            return keys.first { $0.name == name }.map { ($0.name, $0.projection) }
        }
        for k in keys where k.bytes.count == length {
            let same = k.bytes.withUnsafeBufferPointer { memcmp(base + key.start, $0.baseAddress!, length) == 0 }
            if same { return (k.name, k.projection) }
        }
        return nil
    }
}

// MARK: - Printing

extension JSONScanner {
    /// Appends the compact text of the value at `i` to `out`, exactly as `JSONValue.write` prints
    /// the parsed value: no whitespace, strings re-escaped, numbers re-printed.
    mutating func writeValue(depth: Int, into out: inout [UInt8]) throws(JSONScanError) {
        guard depth < Self.maximumDepth else { throw fail("JSON nested too deeply") }
        guard i < count else { throw fail("expected a JSON value, found end of input") }
        switch base[i] {
        case UInt8(ascii: "{"):
            out.append(UInt8(ascii: "{"))
            if !open(UInt8(ascii: "}")) {
                repeat {
                    let key = try memberKey()
                    writeString(key.start, key.end, escaped: key.escaped, into: &out)
                    out.append(UInt8(ascii: ":"))
                    try writeValue(depth: depth + 1, into: &out)
                } while try writeSeparator(UInt8(ascii: "}"), into: &out)
            } else {
                out.append(UInt8(ascii: "}"))
            }
        case UInt8(ascii: "["):
            out.append(UInt8(ascii: "["))
            if !open(UInt8(ascii: "]")) {
                repeat {
                    skipSpace()
                    try writeValue(depth: depth + 1, into: &out)
                } while try writeSeparator(UInt8(ascii: "]"), into: &out)
            } else {
                out.append(UInt8(ascii: "]"))
            }
        case UInt8(ascii: "\""):
            let start = i + 1
            let escaped = try scanString()
            writeString(start, i - 1, escaped: escaped, into: &out)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let start = i
            try skipValue(depth: depth)
            out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: i - start))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let (start, isInteger) = try scanNumber()
            switch numberValue(start, isInteger: isInteger) {
            case .integer(let n): Self.write(n, into: &out)
            case .double(let d): Self.write(d, into: &out)
            }
        default: throw unexpected()
        }
    }

    /// `separator`, printing the ',' or `close` it reads.
    @inline(__always)
    private mutating func writeSeparator(_ close: UInt8, into out: inout [UInt8]) throws(JSONScanError) -> Bool {
        let more = try separator(close)
        out.append(more ? UInt8(ascii: ",") : close)
        return more
    }

    /// A string as `JSONValue.quote` prints it. Plain ASCII without escapes prints as it is written.
    private func writeString(_ start: Int, _ end: Int, escaped: Bool, into out: inout [UInt8]) {
        if !escaped {
            var ascii = true
            for j in start..<end where base[j] >= 0x80 {
                ascii = false
                break
            }
            if ascii {
                Self.appendQuoted(UnsafeBufferPointer(start: base + start, count: end - start), into: &out)
                return
            }
        }
        Self.writeQuoted(stringContent(start, end, escaped: escaped), into: &out)
    }

    /// Appends `str` as `JSONValue.quote` prints it (the same escapes, other text as its UTF-8).
    package static func writeQuoted(_ str: String, into out: inout [UInt8]) {
        var str = str
        str.withUTF8 { utf8 in
            if utf8.contains(where: needsEscape) {
                writeEscaped(utf8, into: &out)
            } else {
                appendQuoted(utf8, into: &out)
            }
        }
    }

    /// Appends the string UTF-8 `bytes` decode to as `writeQuoted` prints it, without making a
    /// `String` when they are ASCII (text that is not goes through one, whose decoding repairs
    /// invalid UTF-8 as every other printed string's does).
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// Array("tab\t".utf8).withUnsafeBufferPointer { JSONScanner.writeQuoted(utf8: $0, into: &out) }
    /// // out holds "tab\t", quoted and escaped as JSON
    /// ```
    package static func writeQuoted(utf8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var plain = true
        for b in bytes where b >= 0x80 || needsEscape(b) {
            guard b < 0x80 else {
                writeQuoted(String(decoding: bytes, as: UTF8.self), into: &out)
                return
            }
            plain = false
        }
        if plain { appendQuoted(bytes, into: &out) } else { writeEscaped(bytes, into: &out) }
    }

    /// Whether byte `b` of a string is written escaped: a control character, a quote, a backslash.
    @inline(__always)
    private static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
    }

    /// Appends `bytes` between quotes in one append: most strings printed are short and need no
    /// escape, and each `append` call costs more than copying a short string.
    private static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let n = bytes.count
        out.append(addingCapacity: n + 2) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                buffer[count] = UInt8(ascii: "\"")
                if let from = bytes.baseAddress, let to = buffer.baseAddress {
                    (to + count + 1).update(from: from, count: n)
                }
                buffer[count + n + 1] = UInt8(ascii: "\"")
                count += n + 2
            }
        }
    }

    /// Appends valid UTF-8 `bytes` quoted, with `JSONValue.quote`'s escapes.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        do {
            var from = 0
            for (j, b) in bytes.enumerated() where needsEscape(b) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<j]))
                from = j + 1
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hex[Int(b >> 4)])
                    out.append(hex[Int(b & 15)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `n` as `JSONValue.write` prints it.
    package static func write(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        writeDigits(n.magnitude, into: &out)
    }

    private static func writeDigits(_ m: UInt64, into out: inout [UInt8]) {
        let count = digitCount(m)
        out.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                putDigits(m, count: count, before: initialized + count, in: buffer)
                initialized += count
            }
        }
    }

    /// How many decimal digits `m` has (one for 0).
    private static func digitCount(_ m: UInt64) -> Int {
        var count = 1
        var rest = m / 10
        while rest != 0 {
            count += 1
            rest /= 10
        }
        return count
    }

    /// Writes the last `count` decimal digits of `m` (zeros where it has fewer) into `buffer`,
    /// ending before `end`, last digit first: numbers are written in place, in one append.
    @inline(__always)
    private static func putDigits(
        _ m: UInt64, count: Int, before end: Int, in buffer: UnsafeMutableBufferPointer<UInt8>
    ) {
        var m = m
        for at in stride(from: end - 1, through: end - count, by: -1) {
            buffer[at] = UInt8(truncatingIfNeeded: m % 10) + 0x30
            m /= 10
        }
    }

    /// A Double as `JSONValue.write` prints it (`%.1f` for integral values under 1e15, Swift's
    /// shortest form otherwise, null for infinities and NaN).
    package static func write(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if d == d.rounded() && abs(d) < 1e15 {
            if d.sign == .minus { out.append(UInt8(ascii: "-")) }
            writeDigits(UInt64(abs(d)), into: &out)
            out.append(contentsOf: ".0".utf8)
        } else if !writeShortDecimal(d, into: &out) {
            // `description` (the interpolation's text) without the interpolation's buffer.
            var text = d.description
            text.withUTF8 { out.append(contentsOf: $0) }
        }
    }

    /// Writes `d` (finite, not integral) as `description` prints it when that is a plain decimal
    /// of at most 15 significant digits between 0.001 and 1e15 (most stored numbers), without
    /// making a `String`; false, nothing written, otherwise. The digits: the fewest decimals `k`
    /// for which `n / 10^k` (n the nearest integer to d·10^k, below 10^15) reads back as `d`
    /// (division is correctly rounded, and 10^k and n are exact). No other decimal of at most
    /// 15 significant digits reads back as the same Double (15 is Double's decimal precision), so
    /// the shortest decimal `description` prints has this value: trailing zeros dropped, it is
    /// the same text.
    private static func writeShortDecimal(_ d: Double, into out: inout [UInt8]) -> Bool {
        let a = d.magnitude
        guard a >= 1e-3, a < 1e15 else { return false }
        var scale = 1.0
        for decimals in 1...18 {
            scale *= 10
            let m = (a * scale).rounded()
            guard m < 1e15 else { return false }
            guard m / scale == a else { continue }
            var n = UInt64(m)
            var k = decimals
            while k > 0, n % 10 == 0 {
                n /= 10
                k -= 1
            }
            guard k > 0 else { return false }
            writeDecimal(n, decimals: k, negative: d < 0, into: &out)
            return true
        }
        return false
    }

    /// Appends `n / 10^decimals` with exactly `decimals` digits after the point (at least one
    /// before it), `-` first when `negative`: at most 15 digits, so 18 bytes.
    private static func writeDecimal(_ n: UInt64, decimals: Int, negative: Bool, into out: inout [UInt8]) {
        var whole = n
        for _ in 0..<decimals { whole /= 10 }
        let wholeDigits = digitCount(whole)
        let count = (negative ? 1 : 0) + wholeDigits + 1 + decimals
        out.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                let point = initialized + count - decimals - 1
                putDigits(n, count: decimals, before: initialized + count, in: buffer)
                buffer[point] = UInt8(ascii: ".")
                putDigits(whole, count: wholeDigits, before: point, in: buffer)
                if negative { buffer[initialized] = UInt8(ascii: "-") }
                initialized += count
            }
        }
    }
}
