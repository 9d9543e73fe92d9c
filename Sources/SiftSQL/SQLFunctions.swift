// The names and op codes of the SQL functions and collations the lowering emits and a back-end
// (SiftSQLite) registers. They are the contract between the two sides, so they live in one place:
// changing a value here changes both the SQL text and what the database must provide.

import SiftSyntax

/// The SQL functions and collations Sift's lowering relies on.
///
/// ```swift
/// SQLFunctions.text                                    // "sift_text"
/// SQLFunctions.TextOp.beginsWith.rawValue              // 1
/// SQLFunctions.collation(for: [.caseInsensitive])      // "sift_c"
/// ```
package enum SQLFunctions {
    /// The `sift_call` selector of a comparison made by memory: `compare:<options>:<operator>`.
    package static func comparisonSelector(_ op: ComparisonOperator, _ options: ComparisonOptions) -> String {
        "compare:\(options.rawValue):\(op.rawValue)"
    }

    /// The operator and options of a `comparisonSelector`, or nil for any other selector.
    package static func comparison(_ selector: String) -> (ComparisonOperator, ComparisonOptions)? {
        // Called for every `sift_call` row: most selectors are functions, so test the prefix
        // before splitting (which allocates).
        guard selector.utf8.starts(with: "compare:".utf8) else { return nil }
        let parts = selector.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "compare", let raw = UInt8(parts[1]),
            let op = ComparisonOperator(rawValue: String(parts[2]))
        else { return nil }
        return (op, ComparisonOptions(rawValue: raw))
    }

    /// The `sift_call` selector of a quantified comparison made by memory, `ANY list op b` or
    /// `ALL list op b` over a list argument: `quantified:<quantifier>:<options>:<operator>`.
    package static func quantifiedSelector(_ q: Quantifier, _ op: ComparisonOperator, _ options: ComparisonOptions)
        -> String
    {
        "quantified:\(q.rawValue):\(options.rawValue):\(op.rawValue)"
    }

    /// The quantifier, operator and options of a `quantifiedSelector`, or nil for any other selector.
    package static func quantifiedComparison(_ selector: String) -> (Quantifier, ComparisonOperator, ComparisonOptions)?
    {
        guard selector.utf8.starts(with: "quantified:".utf8) else { return nil }
        let parts = selector.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let q = Quantifier(rawValue: String(parts[1])), let raw = UInt8(parts[2]),
            let op = ComparisonOperator(rawValue: String(parts[3]))
        else { return nil }
        return (q, op, ComparisonOptions(rawValue: raw))
    }

    /// `sift_text(op, s, needle, flags)` → 1 / 0, or NULL when an operand is NULL (or memory would raise).
    package static let text = "sift_text"
    /// `sift_compare(a, b, flags)` → -1 / 0 / 1, or NULL when either is NULL or they have no order.
    package static let compare = "sift_compare"
    /// `sift_call(selector, tags, arg…)`: the evaluator's built-in function `selector` (or `CAST`,
    /// selector `CAST:NSNumber` …) on the arguments, read as `tags` says (one ``ValueTag`` per
    /// argument). The result is stored as the lowering expects (``ValueTag/natural`` for numbers
    /// and text, 0/1 for booleans, seconds since 2001 for dates); NULL where memory raises or
    /// returns NaN, which the lowering accounts for.
    package static let call = "sift_call"
    /// `sift_collect(tag, value)`, an aggregate: the evaluator's array of the values in row order,
    /// serialized for `sift_call` (an argument tagged ``ValueTag/collection``).
    package static let collect = "sift_collect"
    /// `sift_document(predicate, document [, variables])`: memory's answer to `predicate` (its
    /// canonical text, `$VARIABLE`s already substituted) with the row's document (a BLOB in the
    /// binary form `ValueCodec` writes) as `SELF`: 1 or 0, or NULL where memory raises (or the document is
    /// NULL), which the lowering never relies on. `variables`, a dictionary in the same form, binds
    /// the constants the text cannot spell (dictionaries).
    package static let document = "sift_document"
    /// `sift_guard(predicate, document, row, lenient [, variables])`: memory's answer to the whole
    /// `predicate` on the row's document, as `sift_document`'s arguments, 1 or 0. Where memory raises,
    /// strict (`lenient` 0) the call fails the statement with `<error id>: row <row>: <message>`
    /// (the back-end hands memory's error back, see RowGuard.swift); lenient (1) memory's lenient
    /// answer is returned instead. A NULL document is nil as `SELF`.
    package static let guarded = "sift_guard"
    /// `sift_row(tags, key, value, key, value…)`: the dictionary `{key: value…}` in `ValueCodec`'s
    /// binary form, each value read as its ``ValueTag`` in `tags` says (one per pair): the object
    /// `sift_guard` evaluates on for an entity that keeps no document.
    package static let row = "sift_row"
    /// How a NaN result of `sift_call` is stored: SQLite turns a NaN REAL into NULL, which memory
    /// keeps apart from NaN (it orders NaN below every number and equal to itself). Sift's
    /// functions read this BLOB back as NaN; the lowering compares such values through
    /// `sift_compare` and computes with them through `sift_call`.
    package static let nanMarker: [UInt8] = Array("sift:NaN\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}".utf8)
    /// Collation for ORDER BY under `[c]`.
    package static let collationC = "sift_c"
    /// Collation for ORDER BY under `[d]`.
    package static let collationD = "sift_d"
    /// Collation for ORDER BY under `[cd]`.
    package static let collationCD = "sift_cd"

    /// The first argument of `sift_text`.
    package enum TextOp: Int64, Sendable, CaseIterable {
        /// `==` under string options.
        case equal = 0
        /// `BEGINSWITH`.
        case beginsWith = 1
        /// `ENDSWITH`.
        case endsWith = 2
        /// `CONTAINS` (and `IN` a string).
        case contains = 3
        /// `LIKE`.
        case like = 4
        /// `MATCHES`.
        case matches = 5
    }

    /// How `sift_call` reads one argument: the storage encoding of the value it is given.
    package enum ValueTag: Character, Sendable, CaseIterable {
        /// By storage class: INTEGER → integer, REAL → double, TEXT → string, BLOB → data.
        case natural = "v"
        /// INTEGER 0/1 → boolean.
        case boolean = "b"
        /// REAL seconds since 2001-01-01 → date.
        case secondsSince2001 = "d"
        /// REAL seconds since 1970-01-01 → date.
        case secondsSince1970 = "u"
        /// ISO-8601 TEXT → date.
        case iso8601 = "i"
        /// REAL or TEXT → decimal.
        case decimal = "x"
        /// A BLOB made by `sift_collect` (an array in `ValueCodec`'s form) → array; NULL → nil.
        case collection = "c"
    }

    /// The collation that orders text the way `[c]`, `[d]` or `[cd]` compare it, or nil when plain
    /// BINARY order is right (no options, or `[n]`, which overrides `c` and `d`; `[l]` is ignored,
    /// Sift compares with the root locale).
    package static func collation(for options: ComparisonOptions) -> String? {
        if options.contains(.normalized) { return nil }
        switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
        case (true, true): return collationCD
        case (true, false): return collationC
        case (false, true): return collationD
        case (false, false): return nil
        }
    }
}
