// Tokens produced by the lexer. Keywords are recognised case-insensitively here, once, so the
// parser compares small enums instead of strings.

/// Words with a meaning of their own. Reserved words cannot be used as bare keys; `#word` escapes them.
enum Keyword: String, CaseIterable, Sendable {
    case and = "AND", or = "OR", not = "NOT", `in` = "IN"
    case all = "ALL", any = "ANY", some = "SOME", none = "NONE"
    case like = "LIKE", matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case between = "BETWEEN", caseInsensitive = "CASEINSENSITIVE", ci = "CI"
    case null = "NULL", nil_ = "NIL", `self` = "SELF", `true` = "TRUE", yes = "YES", `false` = "FALSE", no = "NO"
    case first = "FIRST", last = "LAST", size = "SIZE", anyKey = "ANYKEY", subquery = "SUBQUERY", fetch = "FETCH"
    case cast = "CAST", truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"

    static let byUppercasedName: [String: Keyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// Keywords spelled as identifiers (not the UTI operators), grouped by length, in upper case.
    private static let byLength: [[([UInt8], Keyword)]] = {
        var table = [[([UInt8], Keyword)]](repeating: [], count: 16)
        for k in allCases where !k.rawValue.contains("-") {
            table[k.rawValue.utf8.count].append((Array(k.rawValue.utf8), k))
        }
        return table
    }()

    /// The keyword spelled by ASCII identifier bytes `word`, in any case; no string is built.
    static func lookup(_ word: ArraySlice<UInt8>) -> Keyword? {
        guard word.count < byLength.count else { return nil }
        let start = word.startIndex
        candidates: for (spelling, keyword) in byLength[word.count] {
            for k in 0..<spelling.count where word[start + k] & 0xDF != spelling[k] { continue candidates }
            return keyword
        }
        return nil
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
    /// `@count`, `@sum`, …
    case atIdentifier
    case variable
    /// A string literal: its decoded value is `strings[index]`.
    case string(index: Int)
    /// A non-negative integer literal; `decimal` is false for `0x`, `0o` and `0b` forms.
    case integer(UInt64, decimal: Bool)
    case double(Double)
    case format(conversion: UInt8, bits: UInt8)
    case punctuation(Punctuation)
    case end
}

enum Punctuation: String, Hashable, Sendable {
    case leftParen = "(", rightParen = ")", leftBrace = "{", rightBrace = "}", leftBracket = "[", rightBracket = "]"
    case comma = ",", dot = ".", colon = ":", assign = ":="
    case equal = "=", equalEqual = "==", notEqual = "!=", lessGreater = "<>"
    case less = "<", lessEqual = "<=", equalLess = "=<", greater = ">", greaterEqual = ">=", equalGreater = "=>"
    case ampAmp = "&&", pipePipe = "||", bang = "!"
    case plus = "+", minus = "-", star = "*", slash = "/", starStar = "**"
    case amp = "&", pipe = "|", caret = "^", tilde = "~", shiftLeft = "<<", shiftRight = ">>"
}

struct Token: Sendable {
    var kind: TokenKind
    var range: SourceRange

    /// The token as the user wrote it, for messages.
    func text(in source: [UInt8]) -> String {
        if case .end = kind { return "end of input" }
        let lo = Swift.min(range.lowerBound, source.count), hi = Swift.min(range.upperBound, source.count)
        return String(decoding: source[lo..<hi], as: UTF8.self)
    }
}
