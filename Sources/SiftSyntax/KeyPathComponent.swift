// What a key-path component is, decided once for the lexer, the printer, `%K` and every back-end.
// A tree holds components as plain strings; whether one is a collection operator depends on the
// string alone (one of the eleven KVC operator names), never on how it was written, so the
// evaluator, the SQL lowering and the store all read a component the same way. Anything that is
// not an operator is a key, and any string can be one: keys that are not identifiers print in
// the quoted form `#"…"`, which the lexer reads back as exactly that one component.

/// Key-path components: which are collection operators, how `%K` splits its argument, and how a
/// component is spelled so that it parses back to itself.
///
/// ```swift
/// KeyPathComponent.isCollectionOperator("@count")   // true
/// KeyPathComponent.isCollectionOperator("@timestamp") // false: a key
/// KeyPathComponent.split("ISO 3166-1:2006.code")     // ["ISO 3166-1:2006", "code"]
/// KeyPathComponent.spelling("user-agent")            // #"user-agent"
/// ```
public enum KeyPathComponent {
    /// The KVC collection operators Sift implements. A component equal to one of them (exactly,
    /// case included, as KVC compares) is that operator; every other component is a key.
    public static let collectionOperators: Set<String> = [
        "@count", "@sum", "@avg", "@min", "@max",
        "@unionOfObjects", "@distinctUnionOfObjects",
        "@unionOfArrays", "@distinctUnionOfArrays",
        "@unionOfSets", "@distinctUnionOfSets",
    ]

    /// Whether `component` is a collection operator rather than a key.
    @inline(__always)
    public static func isCollectionOperator(_ component: String) -> Bool {
        component.utf8.first == UInt8(ascii: "@") && collectionOperators.contains(component)
    }

    /// The components of a `%K` argument: the text split at every ".", as KVC's
    /// `value(forKeyPath:)` splits it. Nothing else is special, so `"a b.c"` is the key `c` of the
    /// key `a b`, and `"a..b"` has an empty middle key.
    public static func split(_ keyPath: String) -> [String] {
        keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether `word` can be written as a bare key: a letter (any script: Unicode `XID_Start`) or
    /// `_`, then letters, digits, `_` and combining marks (`XID_Continue`). Reserved words pass
    /// this test; they are bare keys only with `#` in front.
    public static func isIdentifier(_ word: String) -> Bool {
        // Most keys are ASCII: decide those on bytes, without Unicode property lookups.
        if word.utf8.allSatisfy({ $0 < 0x80 }) {
            guard let first = word.utf8.first, first == UInt8(ascii: "_") || isASCIILetter(first) else { return false }
            return word.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isASCIILetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
        }
        var scalars = word.unicodeScalars.makeIterator()
        guard let first = scalars.next(), isIdentifierStart(first) else { return false }
        while let s = scalars.next() {
            guard isIdentifierContinue(s) else { return false }
        }
        return true
    }

    private static func isASCIILetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }

    /// The first scalar of an identifier.
    @inline(__always)
    static func isIdentifierStart(_ s: Unicode.Scalar) -> Bool {
        s == "_" || s.properties.isXIDStart
    }

    /// A scalar after the first of an identifier.
    @inline(__always)
    static func isIdentifierContinue(_ s: Unicode.Scalar) -> Bool {
        s.properties.isXIDContinue
    }

    /// The canonical spelling of one component: an operator as itself (`@count`), an identifier
    /// bare (`name`, `café`), a reserved word or call-form name escaped (`#size`, `#ternary`),
    /// and any other key quoted (`#"user-agent"`, `#"@timestamp"`, `#"a.b"`, `#""`) with `"` and
    /// `\` escaped as in string literals.
    public static func spelling(_ component: String) -> String {
        var out = PrintBuffer()
        spell(component, into: &out)
        return out.string
    }

    /// Appends `spelling(component)` to `out`.
    static func spell(_ component: String, into out: inout PrintBuffer) {
        // Printing spells every key: the common ASCII identifier is classified on its bytes in
        // one pass, with no upper-cased copy and no dictionary lookup.
        var utf8 = component
        let ascii = utf8.withUTF8 { asciiSpelling($0) }
        switch ascii {
        case .bare: out += component
        case .escaped:
            out += "#"
            out += component
        case .other:
            if isCollectionOperator(component) {
                out += component
            } else if isIdentifier(component) {
                if Keyword.isReserved(component) || isCallForm(component) { out += "#" }
                out += component
            } else {
                out += "#"
                PredicatePrinter.string(component, into: &out)
            }
        }
    }

    private enum ASCIISpelling { case bare, escaped, other }

    /// How an ASCII identifier is spelled: bare, or escaped with `#` when it is a keyword or a
    /// call form; `.other` for anything else (operators, non-ASCII, keys to quote), which the
    /// general path decides.
    @inline(__always)
    private static func asciiSpelling(_ bytes: UnsafeBufferPointer<UInt8>) -> ASCIISpelling {
        guard let first = bytes.first, first == UInt8(ascii: "_") || isASCIILetter(first) else { return .other }
        for b in bytes where !(b == UInt8(ascii: "_") || isASCIILetter(b) || (b >= 0x30 && b <= 0x39)) { return .other }
        if Keyword.lookup(bytes, from: 0, to: bytes.count) != nil { return .escaped }
        // TERNARY and FUNCTION, in any case: letters compared lower-cased with `| 0x20` (digits
        // and `_` never become letters that way).
        let callForm: StaticString? = bytes.count == 7 ? "ternary" : bytes.count == 8 ? "function" : nil
        if let callForm,
            zip(bytes, UnsafeBufferPointer(start: callForm.utf8Start, count: callForm.utf8CodeUnitCount)).allSatisfy({
                $0 | 0x20 == $1
            })
        {
            return .escaped
        }
        return .bare
    }

    /// `ternary` and `function` are call forms only before "(": a key with that name needs no
    /// escape, but escaping it costs nothing and keeps the output unambiguous.
    private static func isCallForm(_ c: String) -> Bool {
        let u = c.uppercased()
        return u == "TERNARY" || u == "FUNCTION"
    }
}
