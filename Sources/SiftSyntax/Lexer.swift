// Turns predicate text into tokens in one linear pass over its UTF-8 bytes. Quoted strings are
// lexed here, which is what keeps `%@` and `$var` inside quotes literal: they never become tokens.

struct Lexer {
    /// The source's UTF-8, borrowed (not copied) for the duration of the parse; see `Parser.withParser`.
    let bytes: UnsafeBufferPointer<UInt8>
    let source: String
    private var i = 0
    /// Decoded string literals that contained escapes, indexed by `TokenKind.string(index:)`;
    /// literals without escapes are read straight from the source and need no entry.
    private(set) var strings: [String] = []

    init(_ source: String, bytes: UnsafeBufferPointer<UInt8>) {
        self.source = source
        self.bytes = bytes
    }

    private func error(_ kind: SyntaxErrorKind, _ lo: Int, _ hi: Int) -> SyntaxError {
        SyntaxError(kind, range: SourceRange(lo, hi), source: source)
    }

    /// Lexes all tokens, ending with `.end`, into `sink`. On error the sink is left for the
    /// caller to deallocate.
    ///
    /// The common tokens (ASCII whitespace, identifiers and keywords, operators and punctuation)
    /// and the plainest numbers and strings are lexed by this loop with the cursor in a local;
    /// everything else (other numbers and strings, `#@$%` forms, non-ASCII input, the UTI
    /// operators, errors) goes through `next()`, which lexes exactly the same tokens one at a time.
    mutating func tokenize(into sink: inout TokenBuffer) throws(SyntaxError) {
        let n = bytes.count
        var j = i
        while true {
            while j < n, bytes[j] == 0x20 || (bytes[j] &- 0x09) < 5 { j += 1 }
            let start = j
            if j < n {
                let b = bytes[j]
                if Self.isIdentStart(b) {
                    j += 1
                    while j < n && Self.isIdentContinue(bytes[j]) { j += 1 }
                    // A non-ASCII letter may continue the word (`café`): next() reads it.
                    if j == n || bytes[j] < 0x80 {
                        if let k = Keyword.lookup(bytes, from: start, to: j) {
                            sink.append(Token(kind: .keyword(k), range: SourceRange(start, j)))
                            continue
                        }
                        // "UTI" may begin UTI-CONFORMS-TO or UTI-EQUALS: next() decides.
                        if j - start != 3 || b & 0xDF != 0x55 {
                            sink.append(Token(kind: .identifier, range: SourceRange(start, j)))
                            continue
                        }
                    }
                } else if let (p, length) = Self.punctuation(b, j + 1 < n ? bytes[j + 1] : 0) {
                    j += length
                    sink.append(Token(kind: .punctuation(p), range: SourceRange(start, j)))
                    continue
                } else if Self.isDigit(b) {
                    // A plain decimal integer: digits not followed by '.', an exponent, a letter or
                    // '_' (which covers 0x/0o/0b and invalid numbers), at most 19 digits so it cannot
                    // overflow. Anything else is number()'s.
                    var value = UInt64(b &- 0x30)
                    j += 1
                    while j < n && Self.isDigit(bytes[j]) {
                        value = value &* 10 &+ UInt64(bytes[j] &- 0x30)
                        j += 1
                    }
                    if j - start <= 19 && (j == n || (bytes[j] != 0x2E && !Self.isIdentStart(bytes[j]))) {
                        sink.append(Token(kind: .integer(value, decimal: true), range: SourceRange(start, j)))
                        continue
                    }
                } else if b == 0x22 || b == 0x27 {
                    // A string literal without escapes; with one (or unterminated) it is string()'s.
                    j += 1
                    while j < n && bytes[j] != b && bytes[j] != 0x5C { j += 1 }
                    if j < n && bytes[j] == b {
                        j += 1
                        sink.append(Token(kind: .string(index: -1), range: SourceRange(start, j)))
                        continue
                    }
                }
            } else {
                sink.append(Token(kind: .end, range: SourceRange(n, n)))
                return
            }
            i = start
            let t = try next()
            j = i
            sink.append(t)
            if case .end = t.kind { return }
        }
    }

    private func peek(_ offset: Int = 0) -> UInt8 {
        let j = i + offset
        return j < bytes.count ? bytes[j] : 0
    }

    /// ASCII letters and `_`: bits 0x41–0x5A, 0x5F, 0x61–0x7A of the upper half of the ASCII table.
    private static let identStartBits: UInt64 = 0x07FF_FFFE_87FF_FFFE
    /// Digits: bits 0x30–0x39 of the lower half.
    private static let digitBits: UInt64 = 0x03FF_0000_0000_0000

    @inline(__always)
    private static func isIdentStart(_ b: UInt8) -> Bool {
        b & 0xC0 == 0x40 && (identStartBits >> UInt64(b & 0x3F)) & 1 != 0
    }
    @inline(__always)
    private static func isIdentContinue(_ b: UInt8) -> Bool {
        switch b & 0xC0 {
        case 0x40: (identStartBits >> UInt64(b & 0x3F)) & 1 != 0
        case 0x00: (digitBits >> UInt64(b)) & 1 != 0
        default: false
        }
    }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Decodes the scalar starting at `j` (the input is valid UTF-8, coming from a String).
    private func scalar(at j: Int) -> (Unicode.Scalar, Int) {
        var it = UnsafeBufferPointer(rebasing: bytes[j...]).makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let s) = decoder.decode(&it) {
            return (s, s.utf8.count)
        }
        return ("\u{FFFD}", 1)
    }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x20 || (b >= 0x09 && b <= 0x0D) {
                i += 1
            } else if b >= 0x80 {
                let (s, n) = scalar(at: i)
                if s.properties.isWhitespace || s == "\u{FEFF}" { i += n } else { return }
            } else {
                return
            }
        }
    }

    /// Moves past the identifier starting at `i`, whose first scalar was checked by the caller;
    /// returns whether it is ASCII (and so may be a keyword).
    private mutating func scanIdentifier() -> Bool {
        var ascii = true
        if bytes[i] < 0x80 {
            i += 1
        } else {
            i += scalar(at: i).1
            ascii = false
        }
        while i < bytes.count {
            let c = bytes[i]
            if c < 0x80 {
                guard Self.isIdentContinue(c) else { break }
                i += 1
            } else {
                let (s, n) = scalar(at: i)
                guard KeyPathComponent.isIdentifierContinue(s) else { break }
                i += n
                ascii = false
            }
        }
        return ascii
    }

    /// Case-insensitive match of ASCII `text` at the current position, not followed by an identifier character.
    private func matchesWord(_ text: String, at j: Int) -> Bool {
        let t = Array(text.utf8)
        guard j + t.count <= bytes.count else { return false }
        for k in 0..<t.count where bytes[j + k] & 0xDF != t[k] & 0xDF || (t[k] == 0x2D) != (bytes[j + k] == 0x2D) {
            return false
        }
        let k = j + t.count
        guard k < bytes.count else { return true }
        return bytes[k] < 0x80
            ? !Self.isIdentContinue(bytes[k]) : !KeyPathComponent.isIdentifierContinue(scalar(at: k).0)
    }

    mutating func next() throws(SyntaxError) -> Token {
        skipWhitespace()
        let start = i
        guard i < bytes.count else { return Token(kind: .end, range: SourceRange(i, i)) }
        let b = bytes[i]

        if Self.isIdentStart(b) || (b >= 0x80 && KeyPathComponent.isIdentifierStart(scalar(at: i).0)) {
            // Keywords are ASCII: a word with any other letter is an identifier.
            guard scanIdentifier() else { return Token(kind: .identifier, range: SourceRange(start, i)) }
            if let k = Keyword.lookup(bytes, from: start, to: i) {
                return Token(kind: .keyword(k), range: SourceRange(start, i))
            }
            if i - start == 3, bytes[start] & 0xDF == 0x55, bytes[start + 1] & 0xDF == 0x54,
                bytes[start + 2] & 0xDF == 0x49
            {
                if matchesWord("-CONFORMS-TO", at: i) {
                    i += 12
                    return Token(kind: .keyword(.utiConformsTo), range: SourceRange(start, i))
                }
                if matchesWord("-EQUALS", at: i) {
                    i += 7
                    return Token(kind: .keyword(.utiEquals), range: SourceRange(start, i))
                }
            }
            return Token(kind: .identifier, range: SourceRange(start, i))
        }
        if Self.isDigit(b) { return try number() }

        switch b {
        case 0x22, 0x27: return try string(quote: b)
        case 0x23, 0x40, 0x24:  // # @ $
            i += 1
            if b == 0x23, i < bytes.count, bytes[i] == 0x22 || bytes[i] == 0x27 {
                // #"…": a key spelled as a string literal, so that any string can be a key.
                let quoted = try string(quote: bytes[i])
                guard case .string(let index) = quoted.kind else { preconditionFailure("string() made \(quoted.kind)") }
                return Token(kind: .quotedKey(index: index), range: SourceRange(start, i))
            }
            guard i < bytes.count,
                Self.isIdentStart(bytes[i]) || (bytes[i] >= 0x80 && KeyPathComponent.isIdentifierStart(scalar(at: i).0))
            else {
                throw error(.unexpectedCharacter(String(UnicodeScalar(b))), start, start + 1)
            }
            _ = scanIdentifier()
            if b == 0x40 {
                // Only the operators are written with "@": any other word would be a key that
                // every back-end reads as an operator, so a typo like @cout is caught here.
                let word = text(start, i)
                guard KeyPathComponent.isCollectionOperator(word) else {
                    throw error(.unknownCollectionOperator(word), start, i)
                }
            }
            let kind: TokenKind = b == 0x23 ? .escapedIdentifier : b == 0x40 ? .atIdentifier : .variable
            return Token(kind: kind, range: SourceRange(start, i))
        case 0x25: return try formatSpecifier()
        default: break
        }

        // Operators and punctuation, longest match first.
        if let (p, length) = Self.punctuation(b, peek(1)) {
            i += length
            return Token(kind: .punctuation(p), range: SourceRange(start, i))
        }
        let (s, n) = b < 0x80 ? (Unicode.Scalar(b), 1) : scalar(at: i)
        // Report the whole character (a base letter with its combining marks) as the culprit.
        var end = i + n
        while end < bytes.count, bytes[end] >= 0x80 {
            let (m, k) = scalar(at: end)
            guard m.properties.isGraphemeExtend else { break }
            end += k
        }
        let culprit = String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<end]), as: UTF8.self)
        throw error(.unexpectedCharacter(culprit.isEmpty ? String(s) : culprit), start, end)
    }

    /// The operator or punctuation starting with bytes `a`, `b`, and its length (longest match).
    @inline(__always)
    private static func punctuation(_ a: UInt8, _ b: UInt8) -> (Punctuation, Int)? {
        switch a {
        case 0x3D:  // =
            switch b {
            case 0x3D: return (.equalEqual, 2)  // ==
            case 0x3C: return (.equalLess, 2)  // =<
            case 0x3E: return (.equalGreater, 2)  // =>
            default: return (.equal, 1)
            }
        case 0x21: return b == 0x3D ? (.notEqual, 2) : (.bang, 1)  // != !
        case 0x3C:  // <
            switch b {
            case 0x3E: return (.lessGreater, 2)  // <>
            case 0x3D: return (.lessEqual, 2)  // <=
            case 0x3C: return (.shiftLeft, 2)  // <<
            default: return (.less, 1)
            }
        case 0x3E:  // >
            switch b {
            case 0x3D: return (.greaterEqual, 2)  // >=
            case 0x3E: return (.shiftRight, 2)  // >>
            default: return (.greater, 1)
            }
        case 0x26: return b == 0x26 ? (.ampAmp, 2) : (.amp, 1)  // && &
        case 0x7C: return b == 0x7C ? (.pipePipe, 2) : (.pipe, 1)  // || |
        case 0x2A: return b == 0x2A ? (.starStar, 2) : (.star, 1)  // ** *
        case 0x3A: return b == 0x3D ? (.assign, 2) : (.colon, 1)  // := :
        case 0x28: return (.leftParen, 1)
        case 0x29: return (.rightParen, 1)
        case 0x7B: return (.leftBrace, 1)
        case 0x7D: return (.rightBrace, 1)
        case 0x5B: return (.leftBracket, 1)
        case 0x5D: return (.rightBracket, 1)
        case 0x2C: return (.comma, 1)
        case 0x2E: return (.dot, 1)
        case 0x2B: return (.plus, 1)
        case 0x2D: return (.minus, 1)
        case 0x2F: return (.slash, 1)
        case 0x5E: return (.caret, 1)
        case 0x7E: return (.tilde, 1)
        default: return nil
        }
    }

    private mutating func number() throws(SyntaxError) -> Token {
        let start = i
        if bytes[i] == 0x30, i + 1 < bytes.count {
            let radix: UInt64
            switch bytes[i + 1] | 0x20 {
            case 0x78: radix = 16
            case 0x6F: radix = 8
            case 0x62: radix = 2
            default: radix = 0
            }
            if radix != 0 { return try radixInteger(from: start, radix: radix) }
        }
        return try decimalNumber(from: start)
    }

    /// `0x…`, `0o…` or `0b…` at `start`: at least one digit of the radix, up to 2⁶⁴ - 1.
    @inline(__always)
    private mutating func radixInteger(from start: Int, radix: UInt64) throws(SyntaxError) -> Token {
        i += 2
        var value: UInt64 = 0
        var digits = 0
        var overflow = false
        while i < bytes.count {
            let c = bytes[i]
            let d: UInt64
            if Self.isDigit(c) {
                d = UInt64(c - 0x30)
            } else if (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 {
                d = UInt64((c | 0x20) - 0x61 + 10)
            } else if Self.isIdentContinue(c) {
                d = 99
            } else {
                break
            }
            if d >= radix {
                while i < bytes.count && Self.isIdentContinue(bytes[i]) { i += 1 }
                throw error(.invalidNumber(text(start, i)), start, i)
            }
            let (m, o1) = value.multipliedReportingOverflow(by: radix)
            let (s, o2) = m.addingReportingOverflow(d)
            overflow = overflow || o1 || o2
            value = s
            digits += 1
            i += 1
        }
        if digits == 0 { throw error(.invalidNumber(text(start, i)), start, i) }
        if overflow { throw error(.numberOutOfRange(text(start, i)), start, i) }
        return Token(kind: .integer(value, decimal: false), range: SourceRange(start, i))
    }

    /// A decimal integer or double at `start`: digits, then an optional fraction and exponent.
    @inline(__always)
    private mutating func decimalNumber(from start: Int) throws(SyntaxError) -> Token {
        // Decimal digits, accumulated as they are scanned so that integers need no text.
        var value: UInt64 = 0
        var overflow = false
        accumulateDigits(into: &value, &overflow)
        var isDouble = false
        var fractionDigits = 0
        if i + 1 < bytes.count, bytes[i] == 0x2E, Self.isDigit(bytes[i + 1]) {
            isDouble = true
            i += 1
            // The fraction's digits continue the integer part's, for the exact path below.
            fractionDigits = accumulateDigits(into: &value, &overflow)
        }
        let hasExponent = try exponent(from: start)
        if hasExponent { isDouble = true }
        if i < bytes.count, Self.isIdentStart(bytes[i]) {
            while i < bytes.count && Self.isIdentContinue(bytes[i]) { i += 1 }
            throw error(.invalidNumber(text(start, i)), start, i)
        }
        if !isDouble && !overflow {
            return Token(kind: .integer(value, decimal: true), range: SourceRange(start, i))
        }
        if isDouble && !hasExponent && !overflow && value <= 1 << 53 && fractionDigits <= 22 {
            // Clinger's fast path: the digits and 10^k (k <= 22) are exact doubles, so one
            // correctly rounded division gives the correctly rounded value, as Double(String) does.
            var scale = 1.0
            for _ in 0..<fractionDigits { scale *= 10 }
            return Token(kind: .double(Double(value) / scale), range: SourceRange(start, i))
        }
        let t = text(start, i)
        if !isDouble, let v = UInt64(t) {
            return Token(kind: .integer(v, decimal: true), range: SourceRange(start, i))
        }
        guard let d = Double(t), d.isFinite else { throw error(.numberOutOfRange(t), start, i) }
        return Token(kind: .double(d), range: SourceRange(start, i))
    }

    /// Scans the decimal digits at `i` into `value` (setting `overflow` past 2⁶⁴ - 1) and returns
    /// how many there were.
    @inline(__always)
    @discardableResult
    private mutating func accumulateDigits(into value: inout UInt64, _ overflow: inout Bool) -> Int {
        let first = i
        while i < bytes.count && Self.isDigit(bytes[i]) {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(bytes[i] &- 0x30))
            overflow = overflow || o1 || o2
            value = s
            i += 1
        }
        return i - first
    }

    /// Whether an exponent (`e`, an optional sign, digits) follows at `i`, scanning it; an `e`
    /// without digits ends an invalid number that began at `start`.
    @inline(__always)
    private mutating func exponent(from start: Int) throws(SyntaxError) -> Bool {
        guard i < bytes.count, bytes[i] | 0x20 == 0x65 else { return false }
        var j = i + 1
        if j < bytes.count, bytes[j] == 0x2B || bytes[j] == 0x2D { j += 1 }
        i = j
        guard j < bytes.count, Self.isDigit(bytes[j]) else { throw error(.invalidNumber(text(start, i)), start, i) }
        while i < bytes.count && Self.isDigit(bytes[i]) { i += 1 }
        return true
    }

    private func text(_ lo: Int, _ hi: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[lo..<Swift.min(hi, bytes.count)]), as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case 0x30...0x39: UInt32(b - 0x30)
        case 0x41...0x46: UInt32(b - 0x41 + 10)
        case 0x61...0x66: UInt32(b - 0x61 + 10)
        default: nil
        }
    }

    private mutating func string(quote: UInt8) throws(SyntaxError) -> Token {
        let start = i
        i += 1
        // Common case: no escapes. The value is the bytes between the quotes, which the parser
        // reads from the source when it builds the constant, so nothing is copied here.
        while i < bytes.count {
            let c = bytes[i]
            if c == quote {
                i += 1
                return Token(kind: .string(index: -1), range: SourceRange(start, i))
            }
            if c == 0x5C { break }
            i += 1
        }
        i = start + 1
        return try escapedString(from: start, quote: quote)
    }

    /// A string with escapes (or unterminated) whose opening quote is at `start`: its value is
    /// decoded into `strings`, which the token indexes.
    @inline(__always)
    private mutating func escapedString(from start: Int, quote: UInt8) throws(SyntaxError) -> Token {
        var out: [UInt8] = []
        var runStart = i
        while true {
            guard i < bytes.count else { throw error(.unterminatedString, start, start + 1) }
            let c = bytes[i]
            if c == quote {
                out.append(contentsOf: bytes[runStart..<i])
                i += 1
                strings.append(String(decoding: out, as: UTF8.self))
                return Token(kind: .string(index: strings.count - 1), range: SourceRange(start, i))
            }
            if c != 0x5C {
                i += 1
                continue
            }
            out.append(contentsOf: bytes[runStart..<i])
            try escape(into: &out, stringStart: start)
            runStart = i
        }
    }

    /// The escape whose backslash is at `i`, decoded onto `out`.
    @inline(__always)
    private mutating func escape(into out: inout [UInt8], stringStart start: Int) throws(SyntaxError) {
        let escStart = i
        i += 1
        guard i < bytes.count else { throw error(.unterminatedString, start, start + 1) }
        let e = bytes[i]
        i += 1
        var scalarValue: UInt32? = nil
        switch e {
        case 0x61: out.append(0x07)  // \a
        case 0x62: out.append(0x08)  // \b
        case 0x66: out.append(0x0C)  // \f
        case 0x6E: out.append(0x0A)  // \n
        case 0x72: out.append(0x0D)  // \r
        case 0x74: out.append(0x09)  // \t
        case 0x76: out.append(0x0B)  // \v
        case 0x30...0x37:  // \o, \oo, \ooo
            var v = UInt32(e - 0x30)
            var n = 1
            while n < 3, i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x37 {
                v = v * 8 + UInt32(bytes[i] - 0x30)
                i += 1
                n += 1
            }
            scalarValue = v
        case 0x78, 0x58, 0x75, 0x55:  // \xHH, \uHHHH
            scalarValue = try hexEscape(digits: (e | 0x20) == 0x78 ? 2 : 4, escStart)
        default:
            // Any other escaped character stands for itself (this covers \\ \' \").
            if e >= 0x80 {
                i -= 1
                let (_, n) = scalar(at: i)
                out.append(contentsOf: bytes[i..<i + n])
                i += n
            } else {
                out.append(e)
            }
        }
        if let v = scalarValue {
            guard let s = Unicode.Scalar(v) else {
                throw error(.invalidEscape(text(escStart, i)), escStart, i)
            }
            out.append(contentsOf: Array(String(Character(s)).utf8))
        }
    }

    /// The `count` hexadecimal digits at `i` of the escape at `escStart`, as a number.
    private mutating func hexEscape(digits count: Int, _ escStart: Int) throws(SyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<count {
            guard i < bytes.count, let h = Self.hexValue(bytes[i]) else {
                throw error(
                    .invalidEscape(text(escStart, Swift.min(i + 1, bytes.count))), escStart,
                    Swift.min(i + 1, bytes.count))
            }
            v = v * 16 + h
            i += 1
        }
        return v
    }

    private mutating func formatSpecifier() throws(SyntaxError) -> Token {
        let start = i
        i += 1
        guard i < bytes.count else { throw error(.unknownFormatSpecifier("%"), start, i) }
        if bytes[i] == 0x25 {  // %% is a literal percent sign, which is not a token of the language
            i += 1
            throw error(.unexpectedCharacter("%"), start, i)
        }
        if Self.isDigit(bytes[i]) {
            var j = i
            while j < bytes.count && Self.isDigit(bytes[j]) { j += 1 }
            if j < bytes.count, bytes[j] == 0x24 {
                var k = j + 1
                if k < bytes.count { k += 1 }
                i = k
                throw error(.positionalSpecifier(text(start, k)), start, k)
            }
        }
        var modifier = ""
        while i < bytes.count, [0x68, 0x6C, 0x71].contains(bytes[i]), modifier.count < 2 {
            modifier.append(Character(UnicodeScalar(bytes[i])))
            i += 1
        }
        guard i < bytes.count else { throw error(.unknownFormatSpecifier(text(start, i)), start, i) }
        let c = bytes[i]
        i += 1
        let spec = text(start, i)
        let allowed: [String: Set<UInt8>] = [
            "": Set("@Kdiuxofegcs".utf8), "h": Set("diuxo".utf8), "hh": Set("diuxo".utf8),
            "l": Set("diuxofeg".utf8), "ll": Set("diuxo".utf8), "q": Set("diuxo".utf8),
        ]
        guard let set = allowed[modifier], set.contains(c) else {
            throw error(.unknownFormatSpecifier(spec), start, i)
        }
        let bits: UInt8 = modifier == "hh" ? 8 : modifier == "h" ? 16 : 64
        return Token(kind: .format(conversion: c, bits: bits), range: SourceRange(start, i))
    }
}

/// Where `tokenize` puts tokens: the caller's small buffer first, then, when that is full, a heap
/// buffer that grows by doubling (tokens are plain data, so they are moved with a memcpy and
/// need no deinitialization). A struct rather than a local function, so that appending needs
/// no captured, dynamically checked variables, and no uniqueness checks as an Array would.
struct TokenBuffer {
    private(set) var base: UnsafeMutablePointer<Token>
    private(set) var capacity: Int
    private(set) var count = 0
    /// Whether `base` was allocated here and must be freed with `deallocate()`.
    private(set) var isAllocated = false
    private let sourceCount: Int

    init(small: UnsafeMutableBufferPointer<Token>, sourceCount: Int) {
        base = small.baseAddress!
        capacity = small.count
        self.sourceCount = sourceCount
    }

    var tokens: UnsafeBufferPointer<Token> { UnsafeBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func append(_ t: Token) {
        if count == capacity { grow() }
        (base + count).initialize(to: t)
        count += 1
    }

    @inline(never)
    private mutating func grow() {
        let newCapacity = Swift.max(2 * capacity, sourceCount / 3 + 2)
        let new = UnsafeMutablePointer<Token>.allocate(capacity: newCapacity)
        new.moveInitialize(from: base, count: count)
        if isAllocated { base.deallocate() }
        base = new
        capacity = newCapacity
        isAllocated = true
    }

    /// Frees the heap buffer, if any; the tokens must no longer be used.
    mutating func deallocate() {
        if isAllocated { base.deallocate() }
        isAllocated = false
        count = 0
    }
}
