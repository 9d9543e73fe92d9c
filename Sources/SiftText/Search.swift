// Equality, ordering and substring search (BEGINSWITH, ENDSWITH, CONTAINS) under comparison
// options, in two shapes: free functions that fold both sides on every call, and `PreparedText`,
// which folds the constant side once and, for ASCII subjects, compares bytes with on-the-fly
// lower-casing so the common case allocates nothing. Everything works on the UTF-8 bytes of the
// folded NFC forms: UTF-8 byte order is Unicode scalar order, and a byte match in valid UTF-8 always
// starts and ends on scalar boundaries, so byte algorithms give scalar semantics.
//
// Grapheme rule for substring search: a match is a run of scalars of the folded NFC subject, and
// (except under `[n]`, which is literal) it may not end just before a combining mark (general
// category Mn, Mc or Me), because that would split a base character from its marks. So
// "e\u{301}" BEGINSWITH "e" is false (NFC makes it the single scalar "é"), and so is
// "q\u{301}" BEGINSWITH "q" ("q́" has no precomposed form; the rule catches it), as with Apple's
// non-literal search. Under `[n]` both are plain scalar prefixes and "q\u{301}" BEGINSWITH "q" is true.
// An empty needle never matches; so does a needle that folds to nothing, should folding ever
// remove a whole string.

/// Whether two strings are equal under comparison options.
///
/// ```swift
/// textEqual("Straße", "STRASSE", .caseInsensitive)  // true
/// textEqual("e\u{301}", "é", .normalized)           // false: [n] compares scalars literally
/// ```
public func textEqual(_ a: String, _ b: String, _ options: TextOptions) -> Bool {
    switch FoldMode(options) {
    case .canonical:
        return a == b
    case .literal:
        return a.utf8.elementsEqual(b.utf8)
    case let mode:
        return TextFolding.fold(a, mode).utf8.elementsEqual(TextFolding.fold(b, mode).utf8)
    }
}

/// The order of two strings under comparison options: -1, 0 or 1.
/// No options is Swift's `<`/`==` (NFC scalar order); `[n]` is literal scalar order; `c`/`d`
/// order the folded forms.
///
/// ```swift
/// textCompare("apple", "Banana", [])                 // 1 ("B" < "a")
/// textCompare("apple", "Banana", .caseInsensitive)   // -1
/// ```
public func textCompare(_ a: String, _ b: String, _ options: TextOptions) -> Int {
    switch FoldMode(options) {
    case .canonical:
        return a == b ? 0 : (a < b ? -1 : 1)
    case .literal:
        return withUTF8Bytes(a) { x in withUTF8Bytes(b) { y in compareBytes(x, y) } }
    case let mode:
        let fa = TextFolding.fold(a, mode)
        let fb = TextFolding.fold(b, mode)
        return withUTF8Bytes(fa) { x in withUTF8Bytes(fb) { y in compareBytes(x, y) } }
    }
}

/// Whether `s` begins with `needle` under comparison options; an empty needle is always false.
///
/// ```swift
/// textBeginsWith("José", "JO", [.caseInsensitive, .diacriticInsensitive])  // true
/// ```
public func textBeginsWith(_ s: String, _ needle: String, _ options: TextOptions) -> Bool {
    searchFolded(s, needle, options) { h, n, boundary in hasPrefix(h, n, boundary: boundary) }
}

/// Whether `s` ends with `needle` under comparison options; an empty needle is always false.
///
/// ```swift
/// textEndsWith("café", "E", [.caseInsensitive, .diacriticInsensitive])  // true
/// ```
public func textEndsWith(_ s: String, _ needle: String, _ options: TextOptions) -> Bool {
    searchFolded(s, needle, options) { h, n, _ in hasSuffix(h, n) }
}

/// Whether `needle` occurs in `s` under comparison options; an empty needle is always false.
///
/// ```swift
/// textContains("Ａｐｐｌｅ pie", "apple", .caseInsensitive)  // true (width folding)
/// ```
public func textContains(_ s: String, _ needle: String, _ options: TextOptions) -> Bool {
    searchFolded(s, needle, options) { h, n, boundary in firstMatch(h, n, boundary: boundary) }
}

private func searchFolded(
    _ s: String, _ needle: String, _ options: TextOptions,
    _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, Bool) -> Bool
) -> Bool {
    let mode = FoldMode(options)
    let fn = TextFolding.fold(needle, mode)
    guard !fn.isEmpty else { return false }
    let fs = TextFolding.fold(s, mode)
    return withUTF8Bytes(fs) { h in withUTF8Bytes(fn) { n in body(h, n, mode != .literal) } }
}

/// A constant string folded once, compared against many subjects.
///
/// Equivalent to the free functions (`textEqual`, `textCompare`, `textBeginsWith`, …) with the
/// needle on the right, but an ASCII subject is compared byte by byte, lower-cased on the fly,
/// without folding or allocating; a non-ASCII subject is folded once per call.
///
/// ```swift
/// let jo = PreparedText("jo", [.caseInsensitive, .diacriticInsensitive])
/// jo.isPrefix(of: "Joanna")   // true
/// jo.isPrefix(of: "Jörg")     // true
/// jo.compare("Abe")           // -1: "abe" sorts before "jo"
/// ```
public struct PreparedText: Sendable {
    private let mode: FoldMode
    private let needle: [UInt8]
    /// The needle (folded) is empty, so substring tests are false.
    private let noNeedle: Bool

    /// Folds `needle` once under `options`, for testing many strings against it.
    public init(_ needle: String, _ options: TextOptions) {
        mode = FoldMode(options)
        self.needle = Array(TextFolding.fold(needle, mode).utf8)
        noNeedle = self.needle.isEmpty
    }

    /// Whether `s` equals the needle under the options.
    public func equals(_ s: String) -> Bool {
        run(
            s, quick: { h, n, lower in quickCompare(h, n, lower: lower).map { $0 == 0 } },
            slow: { h, n in h.count == n.count && compareBytes(h, n) == 0 })
    }

    /// The sign of `s` compared with the needle: -1 when `s` sorts first, 0 when equal, 1 after.
    public func compare(_ s: String) -> Int {
        run(
            s, quick: { h, n, lower in quickCompare(h, n, lower: lower) },
            slow: { h, n in compareBytes(h, n) })
    }

    /// Whether `s` begins with the needle (BEGINSWITH).
    public func isPrefix(of s: String) -> Bool {
        if noNeedle { return false }
        let boundary = mode != .literal
        return run(
            s, quick: { h, n, lower in quickPrefix(h, n, lower: lower) },
            slow: { h, n in hasPrefix(h, n, boundary: boundary) })
    }

    /// Whether `s` ends with the needle (ENDSWITH).
    public func isSuffix(of s: String) -> Bool {
        if noNeedle { return false }
        return run(
            s, quick: { h, n, lower in quickSuffix(h, n, lower: lower) },
            slow: { h, n in hasSuffix(h, n) })
    }

    /// Whether the needle occurs in `s` (CONTAINS).
    public func isContained(in s: String) -> Bool {
        if noNeedle { return false }
        let boundary = mode != .literal
        return run(
            s,
            quick: { h, n, lower in
                guard TextFolding.isASCII(h) else { return nil }
                return firstMatch(h, n, boundary: false, lower: lower)
            }, slow: { h, n in firstMatch(h, n, boundary: boundary) })
    }

    /// `quick` sees the raw subject bytes and answers when ASCII bytes settle the question (nil
    /// otherwise); `slow` sees the folded subject. Under `[n]` the raw bytes are the folded form.
    @inline(__always)
    private func run<R>(
        _ s: String,
        quick: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, Bool) -> R?,
        slow: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        needle.withUnsafeBufferPointer { n in
            if mode == .literal { return withUTF8Bytes(s) { slow($0, n) } }
            let lower = mode.lowersASCII
            if let answer = withUTF8Bytes(s, { quick($0, n, lower) }) { return answer }
            let folded = TextFolding.fold(s, mode)
            return withUTF8Bytes(folded) { slow($0, n) }
        }
    }
}

// MARK: - Byte algorithms on folded forms

func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    let m = min(a.count, b.count)
    var i = 0
    while i < m {
        if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        i += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// Whether the scalar starting at byte `i` of `h` is a combining mark; false at the end.
func isCombiningMark(_ h: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
    guard i < h.count, h[i] >= 0x80 else { return false }
    var value: UInt32
    var length: Int
    let lead = h[i]
    switch lead {
    case 0xC0..<0xE0:
        value = UInt32(lead & 0x1F)
        length = 2
    case 0xE0..<0xF0:
        value = UInt32(lead & 0x0F)
        length = 3
    default:
        value = UInt32(lead & 0x07)
        length = 4
    }
    guard i + length <= h.count else { return false }
    for k in 1..<length { value = value << 6 | UInt32(h[i + k] & 0x3F) }
    guard let scalar = Unicode.Scalar(value) else { return false }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .spacingMark, .enclosingMark: return true
    default: return false
    }
}

func hasPrefix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>, boundary: Bool) -> Bool {
    guard h.count >= n.count else { return false }
    for i in 0..<n.count where h[i] != n[i] { return false }
    return !(boundary && isCombiningMark(h, at: n.count))
}

func hasSuffix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
    guard h.count >= n.count else { return false }
    let start = h.count - n.count
    for i in 0..<n.count where h[start + i] != n[i] { return false }
    return true
}

/// Naive search; needles are short predicate constants, so the simple loop beats a table setup.
func firstMatch(
    _ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>, boundary: Bool, lower: Bool = false
) -> Bool {
    guard !n.isEmpty, h.count >= n.count else { return false }
    let first = n[0]
    let last = h.count - n.count
    var start = 0
    search: while start <= last {
        let b = lower ? lowerASCII(h[start]) : h[start]
        if b == first {
            var k = 1
            while k < n.count {
                let c = lower ? lowerASCII(h[start + k]) : h[start + k]
                if c != n[k] {
                    start += 1
                    continue search
                }
                k += 1
            }
            if !(boundary && isCombiningMark(h, at: start + n.count)) { return true }
        }
        start += 1
    }
    return false
}

// MARK: - ASCII fast paths
//
// Each looks at the raw subject. The fold of an ASCII byte is its lower-case form (or itself), and
// it cannot be changed by its neighbours unless the next scalar is non-ASCII (a combining mark could
// compose with it, or fold away under `d`). So an answer reached on ASCII bytes, with an ASCII byte
// or the end right after the last byte looked at, is final; anything else returns nil.

@inline(__always)
func quickCompare(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>, lower: Bool) -> Int? {
    let m = min(h.count, n.count)
    var i = 0
    while i < m {
        let raw = h[i]
        if raw >= 0x80 { return nil }
        let b = lower ? lowerASCII(raw) : raw
        if b != n[i] {
            if i + 1 < h.count && h[i + 1] >= 0x80 { return nil }
            return b < n[i] ? -1 : 1
        }
        i += 1
    }
    if h.count == n.count { return 0 }
    if h.count < n.count { return -1 }
    return h[n.count] >= 0x80 ? nil : 1
}

@inline(__always)
func quickPrefix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>, lower: Bool) -> Bool? {
    // Folding can lengthen a non-ASCII subject ("ß" → "ss"), so a short subject settles nothing
    // unless it is ASCII.
    if h.count < n.count { return TextFolding.isASCII(h) ? false : nil }
    var i = 0
    while i < n.count {
        let raw = h[i]
        if raw >= 0x80 { return nil }
        if (lower ? lowerASCII(raw) : raw) != n[i] {
            return i + 1 < h.count && h[i + 1] >= 0x80 ? nil : false
        }
        i += 1
    }
    return n.count < h.count && h[n.count] >= 0x80 ? nil : true
}

@inline(__always)
func quickSuffix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>, lower: Bool) -> Bool? {
    if h.count < n.count { return TextFolding.isASCII(h) ? false : nil }
    // Walking backwards, every byte after the current one is already known to be ASCII.
    let start = h.count - n.count
    var k = n.count - 1
    while k >= 0 {
        let raw = h[start + k]
        if raw >= 0x80 { return nil }
        if (lower ? lowerASCII(raw) : raw) != n[k] { return false }
        k -= 1
    }
    return true
}
