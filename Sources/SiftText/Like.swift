// LIKE: whole-string wildcard matching. The pattern is parsed once (escapes resolved, literal runs
// folded like the subject will be) into a list of byte, any-one-scalar and star elements, and
// matched by the classic single-star-backtracking scan: on a mismatch only the most recent star is
// retried one scalar further on, which is enough for `*`/`?` patterns and bounds the work at
// O(pattern × subject) — no regex engine, no exponential blow-up.

/// A compiled LIKE pattern: `*` is zero or more characters, `?` exactly one Unicode scalar (of the
/// folded NFC form), `\` escapes the next character; every other character, `.` and `[` included,
/// is literal. The options fold pattern and subject alike (`c`, `d`; `[n]` none).
///
/// ```swift
/// let p = try LikePattern("prefix*SUFFIX", .caseInsensitive)
/// p.matches("PREFIXxsuffix")                 // true
/// try LikePattern("a.c", []).matches("abc")  // false: "." is literal
/// ```
public struct LikePattern: Sendable {
    /// A literal byte (0...255), `anyScalar` or `star`.
    private typealias Element = UInt16
    private static let anyScalar: Element = 0x100
    private static let star: Element = 0x101

    private let elements: [Element]
    private let mode: FoldMode

    /// Parses `pattern`; a backslash with nothing after it throws `.likeTrailingBackslash`.
    public init(_ pattern: String, _ options: TextOptions) throws(TextError) {
        let mode = FoldMode(options)
        var parsed: [Element] = []
        // Literal characters are collected into runs and folded run by run, so that a base letter
        // and an escaped combining mark after it still compose the way they do in the subject.
        var run = String.UnicodeScalarView()
        func flush() {
            guard !run.isEmpty else { return }
            parsed.append(contentsOf: TextFolding.fold(String(run), mode).utf8.map(Element.init))
            run.removeAll()
        }
        var scalars = pattern.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\\":
                guard let escaped = scalars.next() else {
                    throw TextError(
                        kind: .likeTrailingBackslash,
                        message: "the backslash cannot end a LIKE pattern: '\(pattern)'")
                }
                run.append(escaped)
            case "*":
                flush()
                // Consecutive stars match what one star matches.
                if parsed.last != Self.star { parsed.append(Self.star) }
            case "?":
                flush()
                parsed.append(Self.anyScalar)
            default:
                run.append(scalar)
            }
        }
        flush()
        self.mode = mode
        self.elements = parsed
    }

    /// Whether the whole of `s` matches the pattern.
    public func matches(_ s: String) -> Bool {
        elements.withUnsafeBufferPointer { p in
            if mode != .literal {
                let lower = mode.lowersASCII
                if let r = withUTF8Bytes(s, { h in TextFolding.isASCII(h) ? Self.match(p, h, lower: lower) : nil }) {
                    return r
                }
                return withUTF8Bytes(TextFolding.fold(s, mode)) { Self.match(p, $0, lower: false) }
            }
            return withUTF8Bytes(s) { Self.match(p, $0, lower: false) }
        }
    }

    /// Bytes in the UTF-8 sequence whose lead byte is at `i`.
    @inline(__always)
    private static func scalarLength(_ h: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
        let b = h[i]
        return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4
    }

    private static func match(_ p: UnsafeBufferPointer<Element>, _ h: UnsafeBufferPointer<UInt8>, lower: Bool) -> Bool {
        var pi = 0
        var si = 0
        // Where the last star was seen and the subject position its current attempt started from.
        var starP = -1
        var starS = 0
        while si < h.count {
            if pi < p.count {
                let e = p[pi]
                if e == star {
                    starP = pi
                    starS = si
                    pi += 1
                    continue
                }
                if e == anyScalar {
                    pi += 1
                    si += scalarLength(h, si)
                    continue
                }
                if e == Element(lower ? lowerASCII(h[si]) : h[si]) {
                    pi += 1
                    si += 1
                    continue
                }
            }
            // Mismatch (or pattern used up): let the last star swallow one more scalar.
            guard starP >= 0 else { return false }
            starS += scalarLength(h, starS)
            si = starS
            pi = starP + 1
        }
        while pi < p.count && p[pi] == star { pi += 1 }
        return pi == p.count
    }
}
