// The UTF-8 bytes the printer writes a canonical form into. A predicate prints as many short
// pieces (operators, keys, punctuation); appending each to a `String` goes through the standard
// library's general string append (capacity and ASCII bookkeeping, an out-of-line call), which made
// printing slower than parsing. Appending to a byte array is a bounds check and a copy. The bytes
// become a `String` once, at the end, or are written out as they are (`sift parse`).

/// UTF-8 text being printed. `+=` appends a literal or a string; the text is valid UTF-8 because
/// only whole strings and scalars are appended.
package struct PrintBuffer {
    /// The UTF-8 printed so far.
    package var bytes: [UInt8] = []

    package init() {}

    /// Reserves room for `count` more bytes.
    package mutating func reserve(_ count: Int) { bytes.reserveCapacity(bytes.count + count) }

    /// The text printed so far.
    package var string: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    package static func += (out: inout PrintBuffer, text: StaticString) {
        text.withUTF8Buffer { out.bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    package static func += (out: inout PrintBuffer, text: String) {
        // A native string's bytes are copied in one piece; the generic sequence append would
        // go through the UTF-8 view's copy machinery, which cost more than the copy itself.
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { out.bytes.append(contentsOf: $0) }
        if copied == nil { out.bytes.append(contentsOf: text.utf8) }
    }

    /// Appends one scalar, encoded.
    @inline(__always)
    package mutating func append(_ scalar: Unicode.Scalar) {
        if scalar.isASCII {
            bytes.append(UInt8(truncatingIfNeeded: scalar.value))
            return
        }
        UTF8.encode(scalar) { bytes.append($0) }
    }

    /// Appends `value` in decimal, as `String(value)` spells it, without building that string.
    package mutating func append(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold UInt64.max; they are produced backwards into a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var i = 20
            repeat {
                i -= 1
                digits[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i..<20]))
        }
    }
}
