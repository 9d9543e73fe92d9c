// Case, diacritic and width folding: the "comparable form" every text operation works on, so that
// equality, ordering, substring search and LIKE agree with each other and, through the shared
// SQLite functions, across back-ends. Pure-ASCII input takes a fast path that needs no Foundation
// call (and no allocation when nothing changes); anything else goes through Foundation's
// `folding(options:locale:)` and is then made canonical (NFC), because Foundation keeps the input's
// normalisation form: "é" precomposed and "e\u{301}" decomposed would otherwise fold differently.

import Foundation

/// Which transformation an option set asks for; `[n]` wins over `c` and `d`, `[l]` is ignored.
enum FoldMode: Sendable, Equatable {
    /// `[n]`: the strings are compared scalar for scalar, untouched.
    case literal
    /// No `c`/`d`: canonical equivalence only (the NFC form).
    case canonical
    /// `c` and/or `d`, always with width folding.
    case folded(caseInsensitive: Bool, diacriticInsensitive: Bool)

    init(_ options: TextOptions) {
        if options.contains(.normalized) {
            self = .literal
        } else {
            let c = options.contains(.caseInsensitive)
            let d = options.contains(.diacriticInsensitive)
            self = c || d ? .folded(caseInsensitive: c, diacriticInsensitive: d) : .canonical
        }
    }

    /// Whether ASCII bytes are lower-cased; the only change folding makes to ASCII text.
    var lowersASCII: Bool {
        if case .folded(true, _) = self { return true }
        return false
    }
}

/// The comparable form of a string under comparison options.
public enum TextFolding {
    /// The form two strings are compared in: `[n]` leaves `s` untouched; otherwise `c` folds case
    /// (full folding: "ß" → "ss", "ς" → "σ", "ﬁ" → "fi"), `d` removes diacritics, either one folds
    /// width ("ＡＢＣ" → "ABC"), and the result is NFC.
    ///
    /// Turkish dotted "İ" folds under `[c]` to "i\u{307}" (root-locale full case folding keeps the
    /// dot as a combining mark), so it equals "i" only under `[cd]`.
    ///
    /// ```swift
    /// TextFolding.fold("Straße", .caseInsensitive)  // "strasse"
    /// TextFolding.fold("José", [.caseInsensitive, .diacriticInsensitive])  // "jose"
    /// ```
    public static func fold(_ s: String, _ options: TextOptions) -> String {
        fold(s, FoldMode(options))
    }

    static func fold(_ s: String, _ mode: FoldMode) -> String {
        switch mode {
        case .literal:
            return s
        case .canonical:
            return isASCII(s) ? s : nfc(s)
        case .folded(let c, let d):
            if isASCII(s) { return c ? asciiLowercased(s) : s }
            if let folded = LatinTable.fold(s, caseInsensitive: c, diacriticInsensitive: d) { return folded }
            return foundationFold(s, caseInsensitive: c, diacriticInsensitive: d)
        }
    }

    /// The NFC form of `s`: what Sift stores and binds, so that `==` and ordering in SQL are byte
    /// comparisons of the same text memory compares. Text whose UTF-8 bytes are all below 0xCC
    /// (every scalar below U+0300: ASCII, Latin-1, Latin Extended, IPA) is NFC already and is
    /// returned as it is, without calling Foundation (every scalar below U+0300 has
    /// NFC_Quick_Check = Yes and none of them composes with a preceding scalar); most text is like
    /// that.
    ///
    /// ```swift
    /// TextFolding.nfc("e\u{301}") == "\u{E9}"  // true
    /// ```
    public static func nfc(_ s: String) -> String {
        let stable = s.utf8.withContiguousStorageIfAvailable { belowU0300($0) } ?? !s.utf8.contains { $0 >= 0xCC }
        return stable ? s : s.precomposedStringWithCanonicalMapping
    }

    /// Whether every byte is below 0xCC. Stores bind every string through `nfc`, so the ASCII
    /// runs are skipped eight bytes at a time before the bytes are looked at one by one.
    static func belowU0300(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= bytes.count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            i += 8
        }
        while i < bytes.count {
            if base[i] >= 0xCC { return false }
            i += 1
        }
        return true
    }

    /// The reference fold: Foundation's, made canonical.
    static func foundationFold(_ s: String, caseInsensitive c: Bool, diacriticInsensitive d: Bool) -> String {
        var foundationOptions: String.CompareOptions = [.widthInsensitive]
        if c { foundationOptions.insert(.caseInsensitive) }
        if d { foundationOptions.insert(.diacriticInsensitive) }
        return nfc(s.folding(options: foundationOptions, locale: nil))
    }

    static func isASCII(_ s: String) -> Bool {
        if let r = s.utf8.withContiguousStorageIfAvailable({ isASCII($0) }) { return r }
        return s.utf8.allSatisfy { $0 < 0x80 }
    }

    static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for b in buffer { any |= b }
        return any < 0x80
    }

    private static func asciiLowercased(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 &- 0x41 < 26 }) else { return s }
        return String(decoding: s.utf8.map { lowerASCII($0) }, as: UTF8.self)
    }
}

/// Folds of U+0080…U+02FF (Latin-1, Latin Extended-A/B, IPA), taken once from Foundation, so the
/// common accented-Latin subject folds by table lookup instead of a Foundation call per string.
/// Valid because these scalars are never combining marks: each is its own character, Foundation
/// folds it independently of its neighbours, and the concatenation is then made NFC like any fold
/// (only a few entries, such as "İ" → "i\u{307}", contain a mark). The test suite checks the table
/// against Foundation on random strings.
enum LatinTable {
    static let limit: UInt32 = 0x300

    /// UTF-8 of each scalar's fold, indexed by `scalar - 0x80`, for c, d and cd.
    private static let tables: [[[UInt8]]] = [(true, false), (false, true), (true, true)].map { c, d in
        // No surrogates below U+0300, so every value is a scalar.
        (0x80..<limit).map { value in
            Array(
                TextFolding.foundationFold(String(Unicode.Scalar(value)!), caseInsensitive: c, diacriticInsensitive: d)
                    .utf8)
        }
    }

    /// The fold of `s` when every scalar is below U+0300, nil otherwise.
    static func fold(_ s: String, caseInsensitive c: Bool, diacriticInsensitive d: Bool) -> String? {
        let table = tables[c ? (d ? 2 : 0) : 1]
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 4)
        for scalar in s.unicodeScalars {
            let v = scalar.value
            if v < 0x80 {
                let b = UInt8(v)
                out.append(c ? lowerASCII(b) : b)
            } else if v < limit {
                out.append(contentsOf: table[Int(v - 0x80)])
            } else {
                return nil
            }
        }
        return TextFolding.nfc(String(decoding: out, as: UTF8.self))
    }
}

/// ASCII lower-casing of one byte; bytes outside A–Z (including UTF-8 bytes) pass unchanged.
@inline(__always)
func lowerASCII(_ b: UInt8) -> UInt8 {
    b &- 0x41 < 26 ? b | 0x20 : b
}

/// Runs `body` on the UTF-8 bytes of `s` without copying when the string is contiguous.
@inline(__always)
func withUTF8Bytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let r = s.utf8.withContiguousStorageIfAvailable(body) { return r }
    var copy = s
    return copy.withUTF8(body)
}
