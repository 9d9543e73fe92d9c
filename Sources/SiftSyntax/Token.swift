// Tokens produced by the lexer. Keywords are recognised case-insensitively here, once, so the
// parser compares small enums instead of strings.

/// Words with a meaning of their own. Reserved words cannot be used as bare keys; `#word` escapes them.
enum Keyword: String, CaseIterable, Sendable {
    case and = "AND"
    case or = "OR"
    case not = "NOT"
    case `in` = "IN"
    case all = "ALL"
    case any = "ANY"
    case some = "SOME"
    case none = "NONE"
    case like = "LIKE"
    case matches = "MATCHES"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case between = "BETWEEN"
    case caseInsensitive = "CASEINSENSITIVE"
    case ci = "CI"
    case null = "NULL"
    case nil_ = "NIL"
    case `self` = "SELF"
    case `true` = "TRUE"
    case yes = "YES"
    case `false` = "FALSE"
    case no = "NO"
    case first = "FIRST"
    case last = "LAST"
    case size = "SIZE"
    case anyKey = "ANYKEY"
    case subquery = "SUBQUERY"
    case fetch = "FETCH"
    case cast = "CAST"
    case truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE"
    case utiConformsTo = "UTI-CONFORMS-TO"
    case utiEquals = "UTI-EQUALS"

    static let byUppercasedName: [String: Keyword] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The keyword spelled by the ASCII identifier bytes `word[start..<end]`, in any case; no string
    /// is built. The bytes are packed into two upper-cased words (`packedUppercase`), then compared
    /// with the spellings below, generated from the raw values (the UTI operators, spelled with `-`,
    /// are lexed separately). `KeywordTests` checks the table against `allCases`. The rest of this
    /// function is that table, data only, which is why it stays one long switch.
    @inline(__always)
    static func lookup(_ word: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Keyword? {
        let count = end - start
        guard count >= 2 && count <= 15 else { return nil }
        let (lo, hi) = packedUppercase(word, from: start, count: count)
        switch count {
        case 2:
            switch lo {
            case 0x524F: return Keyword.or  // OR
            case 0x4E49: return Keyword.`in`  // IN
            case 0x4943: return Keyword.ci  // CI
            case 0x4F4E: return Keyword.no  // NO
            default: return nil
            }
        case 3:
            switch lo {
            case 0x444E41: return Keyword.and  // AND
            case 0x544F4E: return Keyword.not  // NOT
            case 0x4C4C41: return Keyword.all  // ALL
            case 0x594E41: return Keyword.any  // ANY
            case 0x4C494E: return Keyword.nil_  // NIL
            case 0x534559: return Keyword.yes  // YES
            default: return nil
            }
        case 4:
            switch lo {
            case 0x454D_4F53: return Keyword.some  // SOME
            case 0x454E_4F4E: return Keyword.none  // NONE
            case 0x454B_494C: return Keyword.like  // LIKE
            case 0x4C4C_554E: return Keyword.null  // NULL
            case 0x464C_4553: return Keyword.`self`  // SELF
            case 0x4555_5254: return Keyword.`true`  // TRUE
            case 0x5453_414C: return Keyword.last  // LAST
            case 0x455A_4953: return Keyword.size  // SIZE
            case 0x5453_4143: return Keyword.cast  // CAST
            default: return nil
            }
        case 5:
            switch lo {
            case 0x45_534C_4146: return Keyword.`false`  // FALSE
            case 0x54_5352_4946: return Keyword.first  // FIRST
            case 0x48_4354_4546: return Keyword.fetch  // FETCH
            default: return nil
            }
        case 6:
            switch lo {
            case 0x5945_4B59_4E41: return Keyword.anyKey  // ANYKEY
            default: return nil
            }
        case 7:
            switch lo {
            case 0x53_4548_4354_414D: return Keyword.matches  // MATCHES
            case 0x4E_4545_5754_4542: return Keyword.between  // BETWEEN
            default: return nil
            }
        case 8:
            switch lo {
            case 0x534E_4941_544E_4F43: return Keyword.contains  // CONTAINS
            case 0x4854_4957_5344_4E45: return Keyword.endsWith  // ENDSWITH
            case 0x5952_4555_5142_5553: return Keyword.subquery  // SUBQUERY
            default: return nil
            }
        case 10:
            switch (lo, hi) {
            case (0x4957_534E_4947_4542, 0x4854): return Keyword.beginsWith  // BEGINSWITH
            default: return nil
            }
        case 13:
            switch (lo, hi) {
            case (0x4445_5250_4555_5254, 0x45_5441_4349): return Keyword.truePredicate  // TRUEPREDICATE
            default: return nil
            }
        case 14:
            switch (lo, hi) {
            case (0x4552_5045_534C_4146, 0x4554_4143_4944): return Keyword.falsePredicate  // FALSEPREDICATE
            default: return nil
            }
        case 15:
            switch (lo, hi) {
            case (0x4553_4E49_4553_4143, 0x45_5649_5449_534E): return Keyword.caseInsensitive  // CASEINSENSITIVE
            default: return nil
            }
        default: return nil
        }
    }

    /// The `count` (2 to 15) bytes at `word[start...]` packed little-endian into two words and
    /// upper-cased with `& 0xDF` (exact for identifier characters: letters, digits and `_` stay
    /// distinct); the bytes past the word are zero.
    @inline(__always)
    private static func packedUppercase(
        _ word: UnsafeBufferPointer<UInt8>, from start: Int, count: Int
    ) -> (UInt64, UInt64) {
        var lo: UInt64 = 0
        var hi: UInt64 = 0
        if start + 16 <= word.count, let base = word.baseAddress {
            // Two unaligned loads, then the bytes past the word are cleared.
            let p = UnsafeRawPointer(base + start)
            lo = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
            hi = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            if count < 8 {
                lo &= (1 << (UInt64(count) &* 8)) &- 1
                hi = 0
            } else {
                hi &= (1 << (UInt64(count - 8) &* 8)) &- 1
            }
        } else {
            var k = 0
            while k < count && k < 8 {
                lo |= UInt64(word[start + k]) << (UInt64(k) &* 8)
                k += 1
            }
            while k < count {
                hi |= UInt64(word[start + k]) << (UInt64(k - 8) &* 8)
                k += 1
            }
        }
        return (lo & 0xDFDF_DFDF_DFDF_DFDF, hi & 0xDFDF_DFDF_DFDF_DFDF)
    }

    /// Whether `word` (any case) is reserved and must be written `#word` to be a key.
    static func isReserved(_ word: String) -> Bool {
        byUppercasedName[word.uppercased()] != nil
    }
}

/// A printf-style or object format specifier outside quotes: `%@`, `%K`, `%d`, `%lld`, `%f`…
/// Plain data, so tokens copy without reference counting; the text comes from the token's range.
struct FormatSpecifier: Hashable, Sendable {
    /// The specifier as written, e.g. `%lld`.
    var text: String = ""
    /// The conversion character: `@`, `K`, `d`, `i`, `u`, `x`, `o`, `f`, `e`, `g`, `c`, `s`.
    var conversion: UInt8
    /// The size limit its length modifier sets: 8 for `hh`, 16 for `h`, 64 otherwise.
    var bits: UInt8
}

/// Token kinds carry no strings (names come from the source range, decoded string literals
/// from the lexer's side table), so tokens are plain data and cheap to copy.
enum TokenKind: Hashable, Sendable {
    case identifier
    case keyword(Keyword)
    /// `#word`: always an ordinary key, even when `word` is reserved.
    case escapedIdentifier
    /// `@count`, `@sum`, …: always one of `KeyPathComponent.collectionOperators`.
    case atIdentifier
    /// `#"…"` or `#'…'`: a key that need not be an identifier. Its value is decoded like a string
    /// literal's: `strings[index]`, or, when `index` is negative, the bytes between the quotes.
    case quotedKey(index: Int)
    case variable
    /// A string literal: its decoded value is `strings[index]`, or, when `index` is negative (no
    /// escapes, the common case), the bytes between the quotes.
    case string(index: Int)
    /// A non-negative integer literal; `decimal` is false for `0x`, `0o` and `0b` forms.
    case integer(UInt64, decimal: Bool)
    case double(Double)
    case format(conversion: UInt8, bits: UInt8)
    case punctuation(Punctuation)
    case end
}

enum Punctuation: String, Hashable, Sendable {
    case leftParen = "("
    case rightParen = ")"
    case leftBrace = "{"
    case rightBrace = "}"
    case leftBracket = "["
    case rightBracket = "]"
    case comma = ","
    case dot = "."
    case colon = ":"
    case assign = ":="
    case equal = "="
    case equalEqual = "=="
    case notEqual = "!="
    case lessGreater = "<>"
    case less = "<"
    case lessEqual = "<="
    case equalLess = "=<"
    case greater = ">"
    case greaterEqual = ">="
    case equalGreater = "=>"
    case ampAmp = "&&"
    case pipePipe = "||"
    case bang = "!"
    case plus = "+"
    case minus = "-"
    case star = "*"
    case slash = "/"
    case starStar = "**"
    case amp = "&"
    case pipe = "|"
    case caret = "^"
    case tilde = "~"
    case shiftLeft = "<<"
    case shiftRight = ">>"
}

struct Token: Sendable {
    var kind: TokenKind
    var range: SourceRange

    /// The token as the user wrote it, for messages.
    func text(in source: UnsafeBufferPointer<UInt8>) -> String {
        if case .end = kind { return "end of input" }
        let lo = Swift.min(range.lowerBound, source.count)
        let hi = Swift.min(range.upperBound, source.count)
        return String(decoding: UnsafeBufferPointer(rebasing: source[lo..<hi]), as: UTF8.self)
    }
}
