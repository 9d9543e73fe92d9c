// PostgreSQL as a lowering target. PostgreSQL cannot call Sift's Swift functions, so this dialect
// has none: the lowering writes native SQL where that SQL selects exactly the rows memory selects
// (comparisons under the "C" collation, which orders text by Unicode scalars as memory does on its
// NFC strings; LIKE through PostgreSQL's LIKE; BEGINSWITH, ENDSWITH and CONTAINS through regular
// expressions that carry memory's rule against ending a match before a combining mark) and
// rejects, with a typed error, every form whose native SQL would differ (string options,
// MATCHES, functions, double arithmetic, dynamically typed columns…). The regular-expression
// pieces live here because they are PostgreSQL's syntax (Advanced Regular Expressions).

import SiftSyntax

/// PostgreSQL: double-quoted identifiers, `$1` parameters, `TRUE`/`FALSE`, `IS [NOT] DISTINCT FROM`.
///
/// ```swift
/// let lowering = try SQLLowering(schema: schema, entity: "Person", dialect: PostgreSQLDialect())
/// let q = try lowering.select(try PredicateSyntax.parse("name BEGINSWITH 'Jo' AND age > 30"))
/// q.sql       // … WHERE ((t0."name" >= $1 COLLATE "C" AND …)) AND (t0."age" > $5) …
/// ```
public struct PostgreSQLDialect: SQLDialect {
    /// The PostgreSQL dialect.
    public init() {}
    /// Wraps the identifier in double quotes, doubling the quotes inside.
    public func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
    /// `$1`, `$2`, …
    public func placeholder(_ index: Int) -> String { "$\(index)" }
    /// None: PostgreSQL cannot call Sift's text functions.
    public var textFunction: String? { nil }
    /// None.
    public var compareFunction: String? { nil }
    /// None: string options need Sift's folding, which PostgreSQL does not have.
    public func collation(for options: ComparisonOptions) -> String? { nil }
    /// `TRUE` / `FALSE`.
    public func booleanLiteral(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
    /// `lhs IS NOT DISTINCT FROM rhs`.
    public func isNotDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS NOT DISTINCT FROM \(rhs)" }
    /// `lhs IS DISTINCT FROM rhs`.
    public func isDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS DISTINCT FROM \(rhs)" }
    /// `(sql) IS NOT TRUE`, standard SQL.
    public func isNotTrue(_ sql: String) -> String { "(\(sql)) IS NOT TRUE" }
    /// None: PostgreSQL cannot call the evaluator, so functions and string casts are rejected.
    public var callFunction: String? { nil }
    /// None (no `callFunction` to hand the elements to).
    public var collectFunction: String? { nil }
    /// None: comparisons on a whole document are rejected.
    public var documentFunction: String? { nil }
    /// Typed columns only; float overflow raises; bigint compared with double precision is
    /// compared as doubles; text cannot hold U+0000; shifts take a 32-bit count.
    public var traits: SQLDialectTraits { [] }
    /// NULL: `LIMIT NULL` is no limit (a negative LIMIT is an error).
    public var noLimit: SQLValue { .null }
    /// `CAST(SUM(sql) AS BIGINT)`: SUM of bigint is numeric, which the wrapping recombination
    /// (shifts, bitwise OR) cannot take.
    public func integerSum(_ sql: String) -> String { "CAST(SUM(\(sql)) AS BIGINT)" }
    /// `AVG(CAST(sql AS DOUBLE PRECISION))`: AVG of bigint is an exact numeric, memory's is a double.
    public func doubleAverage(_ sql: String) -> String { "AVG(CAST(\(sql) AS DOUBLE PRECISION))" }
    /// `C`: byte order of UTF-8, which is Unicode scalar order, whatever the database's default.
    public var scalarOrderCollation: String? { "C" }
    /// False: PostgreSQL's NULL is the largest value, so ORDER BY terms say NULLS FIRST / LAST.
    public var nullsSortFirst: Bool { false }
    /// `CAST(n AS BIGINT)`: a bare literal is a 32-bit integer, and `1 >> 32` is 1 there.
    public func integerLiteral(_ value: Int64) -> String { "CAST(\(value) AS BIGINT)" }
    /// Nil: PostgreSQL plans an EXISTS as a semi-join and places it by its cost.
    public func bundledSubqueryTerm(_ conjunction: String) -> String? { nil }
}

/// The pieces of PostgreSQL regular expressions (ARE) the lowering builds text operators from.
enum PostgreSQLPatterns {
    /// A bracket expression matching one combining mark (general category Mn, Mc or Me), the
    /// scalars a non-literal match may not end before (see SiftText's search). Built from Swift's
    /// Unicode tables, with `\u`/`\U` escapes so the pattern is ASCII.
    static let combiningMark: String = {
        var ranges: [(UInt32, UInt32)] = []
        for v in UInt32(0x300)...0x10FFFF {
            guard let s = Unicode.Scalar(v) else { continue }
            switch s.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                if let last = ranges.last, last.1 == v - 1 {
                    ranges[ranges.count - 1].1 = v
                } else {
                    ranges.append((v, v))
                }
            default: break
            }
        }
        func escape(_ x: UInt32) -> String {
            let hex = String(x, radix: 16, uppercase: true)
            return x <= 0xFFFF
                ? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                : "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
        }
        return "[" + ranges.map { $0.0 == $0.1 ? escape($0.0) : escape($0.0) + "-" + escape($0.1) }.joined() + "]"
    }()

    /// `text` as an ARE matching itself: every ASCII character that is not a letter or digit gets
    /// a backslash (in an ARE, a backslash before such a character makes it literal); other
    /// characters stand for themselves.
    static func literal(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count * 2)
        for s in text.unicodeScalars {
            if s.isASCII && !(("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s)) {
                out.unicodeScalars.append("\\")
            }
            out.unicodeScalars.append(s)
        }
        return out
    }

    /// `needle` (NFC, non-empty) as an ARE for BEGINSWITH, ENDSWITH or CONTAINS under memory's
    /// rule: a match may not end just before a combining mark (so `é` written as `e` + U+0301 does
    /// not begin with `e`). At the end of the subject nothing follows, so ENDSWITH needs no look-ahead.
    static func search(_ op: ComparisonOperator, _ needle: String) -> String {
        let body = literal(needle)
        switch op {
        case .beginsWith: return "^" + body + "(?!" + combiningMark + ")"
        case .endsWith: return body + "$"
        default: return body + "(?!" + combiningMark + ")"
        }
    }

    /// A LIKE pattern of the predicate language rewritten run by run: `transform` turns each
    /// literal run (escapes resolved) into `escaping(scalar)`-escaped text, `wildcard` each `*`
    /// and `?`. nil for a pattern ending in a lone backslash (memory raises on it).
    private static func rewriteLike(
        _ pattern: String, transform: (String) -> String, escaping: Set<Unicode.Scalar>,
        wildcard: (Unicode.Scalar) -> String
    ) -> String? {
        var out = ""
        var run = String.UnicodeScalarView()
        func flush() {
            guard !run.isEmpty else { return }
            for s in transform(String(run)).unicodeScalars {
                if escaping.contains(s) { out.unicodeScalars.append("\\") }
                out.unicodeScalars.append(s)
            }
            run.removeAll()
        }
        var scalars = pattern.unicodeScalars.makeIterator()
        while let s = scalars.next() {
            switch s {
            case "\\":
                guard let escaped = scalars.next() else { return nil }
                run.append(escaped)
            case "*", "?":
                flush()
                out += wildcard(s)
            default: run.append(s)
            }
        }
        flush()
        return out
    }

    /// A LIKE pattern of the predicate language with each literal run folded by `fold`, written
    /// back in the predicate language (`*`, `?` and `\\` in the folded text escaped), as memory
    /// folds a pattern under `[c]`/`[d]`; nil for a pattern ending in a lone backslash.
    static func foldedLike(_ pattern: String, fold: (String) -> String) -> String? {
        rewriteLike(pattern, transform: fold, escaping: ["*", "?", "\\"]) { String($0) }
    }

    /// A LIKE pattern of the predicate language (`*`, `?`, `\\` escapes) as PostgreSQL's LIKE with
    /// `ESCAPE '\\'`: `*` → `%`, `?` → `_` (one character: one Unicode scalar in a UTF-8 database,
    /// as memory's `?` is one scalar), literal runs NFC like the subject and with `%`, `_` and `\\`
    /// escaped. nil for a pattern ending in a lone backslash (memory raises on it).
    static func like(_ pattern: String, normalize: (String) -> String) -> String? {
        rewriteLike(pattern, transform: normalize, escaping: ["%", "_", "\\"]) { $0 == "*" ? "%" : "_" }
    }
}
