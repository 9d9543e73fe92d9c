// The scanner's first stage for records: the input classified 64 bytes at a time into bit masks
// (CJSONBlocks: SSE2/AVX2 on x86_64, a scalar loop elsewhere), a window of 512 bytes at a time,
// and a reader that walks a record over the masks' set bits: a string's plain run ends at the next
// quote, backslash or control character, a run of blanks at the next byte that is not one. The
// reader only accepts what it can prove valid; on anything else (an escape it cannot vouch for, a
// control character, a syntax error, deep nesting, the end of the input) it answers nil and the
// exact scanner reads the record again from its start, so that errors, their messages and their
// positions are always the exact scanner's.

import CJSONBlocks

/// The masks of the input around the record being read, and where the reader is: a struct used
/// `inout` (no reference counting or exclusivity checks on the hot path); its buffers belong to a
/// `StructuralIndex.Storage`, which outlives it. One per thread: it is mutable state.
struct StructuralIndex {
    let base: UnsafePointer<UInt8>
    let count: Int
    /// Blocks of 64 bytes classified per refill.
    static let windowBlocks = 8
    private let masks: UnsafeMutablePointer<CJSONBlockMasks>
    /// A zero-padded copy of the input's last bytes, classified instead of reading past its end
    /// (a zero byte is a control character, so nothing past the end reads as valid).
    private let tail: UnsafeMutablePointer<UInt8>
    /// The offsets the masks cover: a multiple of 64 up to the window's end.
    private var windowStart = 0
    private var windowEnd = 0
    /// The offset of the next byte to read.
    var i = 0

    /// The buffers of an index, freed with it.
    final class Storage {
        let masks = UnsafeMutablePointer<CJSONBlockMasks>.allocate(capacity: StructuralIndex.windowBlocks)
        let tail = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 * StructuralIndex.windowBlocks)

        deinit {
            masks.deallocate()
            tail.deallocate()
        }
    }

    /// An index over the scanner's input, in `storage`'s buffers (which must outlive it).
    init(_ scanner: JSONScanner, _ storage: Storage) {
        base = scanner.base
        count = scanner.count
        masks = storage.masks
        tail = storage.tail
    }

    /// Classifies the window that starts at the block holding `p` (< count). Never inlined: the
    /// readers that call it stay small enough to keep their state in registers.
    @inline(never)
    private mutating func fill(at p: Int) {
        windowStart = p & ~63
        let span = 64 * Self.windowBlocks
        if windowStart + span <= count {
            cjson_classify_blocks(base + windowStart, Self.windowBlocks, masks)
            windowEnd = windowStart + span
            return
        }
        let left = count - windowStart
        let blocks = (left + 63) >> 6
        tail.update(from: base + windowStart, count: left)
        (tail + left).initialize(repeating: 0, count: 64 * blocks - left)
        cjson_classify_blocks(tail, blocks, masks)
        windowEnd = windowStart + 64 * blocks
    }

    /// The first offset at or after `p` whose byte is a quote, a backslash or a control character;
    /// `count` or more when there is none.
    @inline(__always)
    mutating func nextSpecial(_ p: Int) -> Int {
        var p = p
        while p < count {
            if p < windowStart || p >= windowEnd { fill(at: p) }
            let k = p - windowStart
            let m = masks[k &>> 6].special &>> UInt64(k & 63)
            if m != 0 { return p &+ m.trailingZeroBitCount }
            p = (p | 63) &+ 1
        }
        return p
    }

    /// The first offset at or after `p` whose byte is not a blank; `count` or more when there is
    /// none.
    @inline(__always)
    mutating func nextNonBlank(_ p: Int) -> Int {
        var p = p
        while p < count {
            if p < windowStart || p >= windowEnd { fill(at: p) }
            let k = p - windowStart
            let m = ~masks[k &>> 6].blank &>> UInt64(k & 63)
            if m != 0 { return p &+ m.trailingZeroBitCount }
            p = (p | 63) &+ 1
        }
        return p
    }

    // MARK: Reading over the masks

    /// The byte at `j`, or 0 (which no valid token starts with) past the end.
    @inline(__always)
    func byte(_ j: Int) -> UInt8 { j < count ? base[j] : 0 }

    /// The exact scanner at `i`.
    @inline(__always)
    var scanner: JSONScanner {
        var s = JSONScanner(UnsafeBufferPointer(start: base, count: count))
        s.i = i
        return s
    }

    /// Moves past the blanks at `i`.
    @inline(__always)
    mutating func skipBlanks() {
        if byte(i) <= 0x20 { i = nextNonBlank(i) }
    }

    /// Moves past the string whose opening quote is at `i` and answers the offset of its closing
    /// quote and whether it holds escapes, or nil when the exact scanner must read it (a control
    /// character or the end of the input inside it). A string with escapes is checked by the exact
    /// `scanString`.
    @inline(__always)
    mutating func string() -> (end: Int, escaped: Bool)? {
        let q = nextSpecial(i &+ 1)
        guard q < count else { return nil }
        if base[q] == UInt8(ascii: "\"") {
            i = q &+ 1
            return (q, false)
        }
        return escapedString()
    }

    /// `string` for a string with a backslash (or a control character): the exact scanner's.
    @inline(never)
    private mutating func escapedString() -> (end: Int, escaped: Bool)? {
        var s = scanner
        guard (try? s.scanString()) != nil else { return nil }
        i = s.i
        return (i - 1, true)
    }

    /// Moves past a number, `true`, `false` or `null` at `i` with the exact scanner; false when it
    /// is not one.
    @inline(__always)
    private mutating func scalar() -> Bool {
        var s = scanner
        let valid: Bool
        switch base[i] {
        case UInt8(ascii: "t"): valid = (try? s.word(0x74_72_75_65, 4)) != nil
        case UInt8(ascii: "f"): valid = (try? s.word(0x66_61_6C_73_65, 5)) != nil
        case UInt8(ascii: "n"): valid = (try? s.word(0x6E_75_6C_6C, 4)) != nil
        default: valid = (try? s.scanNumber()) != nil
        }
        i = s.i
        return valid
    }

    /// Moves past the valid value at `i`, reading it over the masks; false when it is not one this
    /// reader vouches for (the position is then undefined).
    mutating func skipValue(depth: Int) -> Bool {
        guard depth < JSONScanner.maximumDepth else { return false }
        switch byte(i) {
        case UInt8(ascii: "\""):
            return string() != nil
        case UInt8(ascii: "{"):
            i &+= 1
            skipBlanks()
            if byte(i) == UInt8(ascii: "}") {
                i &+= 1
                return true
            }
            while true {
                guard byte(i) == UInt8(ascii: "\""), string() != nil else { return false }
                skipBlanks()
                guard byte(i) == UInt8(ascii: ":") else { return false }
                i &+= 1
                skipBlanks()
                guard skipValue(depth: depth &+ 1) else { return false }
                guard let more = separator(UInt8(ascii: "}")) else { return false }
                if !more { return true }
            }
        case UInt8(ascii: "["):
            i &+= 1
            skipBlanks()
            if byte(i) == UInt8(ascii: "]") {
                i &+= 1
                return true
            }
            while true {
                guard skipValue(depth: depth &+ 1) else { return false }
                guard let more = separator(UInt8(ascii: "]")) else { return false }
                if !more { return true }
            }
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "-"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return scalar()
        default: return false
        }
    }

    /// Reads the blanks and the ',' (true, blanks after it read too) or `close` (false) after a
    /// member or element; nil for anything else.
    @inline(__always)
    mutating func separator(_ close: UInt8) -> Bool? {
        skipBlanks()
        let c = byte(i)
        i &+= 1
        if c == UInt8(ascii: ",") {
            skipBlanks()
            return true
        }
        return c == close ? false : nil
    }
}
