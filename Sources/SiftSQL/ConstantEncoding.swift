// Type checks between attributes and constants, the encoding of a constant for the column it is
// compared with (dates per the attribute's storage encoding, booleans as 0/1, strings NFC except
// under [n]), folding of comparisons between constants, and ORDER BY terms.

import Foundation
import SiftSyntax
import SiftText

extension LoweringContext {
    private static let numeric: Set<Schema.ValueType> = [.integer, .double, .decimal, .boolean]

    /// The constant as bound for `attribute`, or `type-mismatch`.
    func encode(_ c: LiteralValue, for attribute: Schema.Attribute, _ options: ComparisonOptions, _ range: SourceRange)
        throws(SQLLoweringError) -> SQLValue
    {
        func mismatch() -> SQLLoweringError {
            .ofValues(
                .typeMismatch,
                "'\(attribute.name)' is \(attribute.type.rawValue) and cannot be compared with \(show(c))", range: range
            )
        }
        let t = attribute.type
        switch c {
        case .null: return .null
        case .string(let s):
            guard t == .string || t == .any else { throw mismatch() }
            if !dialect.traits.contains(.textWithNUL), s.utf8.contains(0) {
                throw unsupported(
                    "the string \(show(c)), which holds U+0000, in this dialect (its text cannot hold it)", range)
            }
            return .text(options.contains(.normalized) ? s : nfc(s))
        case .bool(let b):
            guard t == .any || Self.numeric.contains(t) else { throw mismatch() }
            return .integer(b ? 1 : 0)
        case .integer(let i):
            guard t == .any || Self.numeric.contains(t) else { throw mismatch() }
            if t == .decimal && attribute.effectiveEncoding == .text { return .text(String(i)) }
            return .integer(i)
        case .double(let d):
            guard t == .any || Self.numeric.contains(t) else { throw mismatch() }
            if t == .decimal && attribute.effectiveEncoding == .text {
                throw unsupported("comparing a TEXT-encoded decimal with a double", range)
            }
            return .double(d)
        case .decimal(let d):
            guard t == .any || Self.numeric.contains(t) else { throw mismatch() }
            if t == .decimal && attribute.effectiveEncoding == .text { return .text(d.description) }
            return .double(NSDecimalNumber(decimal: d).doubleValue)
        case .date(let date):
            guard t == .date else {
                if t == .any {
                    throw .forMemory("comparing the dynamically typed '\(attribute.name)' with a date", range: range)
                }
                throw mismatch()
            }
            switch attribute.effectiveEncoding {
            case .secondsSince1970: return .double(date.timeIntervalSince1970)
            case .iso8601:
                return .text(Self.isoText(date))
            default: return .double(date.timeIntervalSinceReferenceDate)
            }
        case .data(let d):
            guard t == .data || t == .any else { throw mismatch() }
            return .blob(Array(d))
        case .array, .dictionary, .object:
            // A list, a dictionary or an object equals no value a column holds, but memory may be asked
            // about it in other ways (an element of a list of lists): the document can answer.
            var e = mismatch()
            e.readsDocument = true
            throw e
        }
    }

    /// The ISO-8601 text of a date as an `iso8601` column stores it: UTC, whole milliseconds.
    static func isoText(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }

    /// The date a column with `encoding` can hold that is nearest to `date` on one side: the
    /// smallest such date ≥ `date` when `up`, the largest ≤ `date` otherwise; `date` itself when the
    /// column can hold it. An ISO-8601 column holds whole milliseconds, and seconds since 1970 are a
    /// double whose grid is coarser than that of the `Date` (seconds since 2001), so a constant
    /// between two storable dates must not be bound rounded: `updated >= 12:00:00.0004` would then
    /// pick up a row holding 12:00:00.000, which memory (comparing exact dates) does not. Snapping
    /// the constant to the right side keeps every comparison exact for every storable value.
    static func storableDate(_ date: Date, _ encoding: Schema.StorageEncoding?, up: Bool) -> Date {
        switch encoding {
        case .iso8601:
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            f.timeZone = TimeZone(identifier: "UTC")
            func held(_ d: Date) -> Date { f.date(from: f.string(from: d)) ?? d }
            if held(date) == date { return date }
            // Walk one millisecond at a time from just the wrong side (a few steps at most: the
            // formatter rounds, and the double of a millisecond is not exact).
            var ms = (date.timeIntervalSince1970 * 1000).rounded(up ? .down : .up)
            var candidate = held(Date(timeIntervalSince1970: ms / 1000))
            for _ in 0..<4 {
                candidate = held(Date(timeIntervalSince1970: ms / 1000))
                if up ? candidate >= date : candidate <= date { return candidate }
                ms += up ? 1 : -1
            }
            return candidate
        case .secondsSince1970:
            var x = date.timeIntervalSince1970
            var candidate = Date(timeIntervalSince1970: x)
            for _ in 0..<4 {
                candidate = Date(timeIntervalSince1970: x)
                if candidate == date || (up ? candidate > date : candidate < date) { return candidate }
                x = up ? x.nextUp : x.nextDown
            }
            return candidate
        default:
            return date
        }
    }

    /// Whether `c` is a date that the date attribute `a` cannot hold exactly (see `storableDate`).
    func isUnstorable(_ c: LiteralValue, _ a: Schema.Attribute) -> Bool {
        guard a.type == .date, case .date(let d) = c else { return false }
        switch a.effectiveEncoding {
        case .iso8601: return Self.storableDate(d, .iso8601, up: true) != d
        case .secondsSince1970: return Date(timeIntervalSince1970: d.timeIntervalSince1970) != d
        default: return false
        }
    }

    /// `c` moved to the storable date of `a` on one side (see `storableDate`); other constants unchanged.
    func snappedToStorable(_ c: LiteralValue, _ a: Schema.Attribute, up: Bool) -> LiteralValue {
        guard isUnstorable(c, a), case .date(let d) = c else { return c }
        return .date(Self.storableDate(d, a.effectiveEncoding, up: up))
    }

    func checkOrderable(_ a: Schema.Attribute, _ range: SourceRange) throws(SQLLoweringError) {
        if a.type == .decimal && a.effectiveEncoding == .text {
            throw unsupported("ordering the TEXT-encoded decimal '\(a.name)'", range)
        }
    }

    func checkText(_ a: Schema.Attribute, _ op: ComparisonOperator, _ range: SourceRange) throws(SQLLoweringError) {
        guard a.type == .string || a.type == .any else {
            throw .ofValues(
                .typeMismatch, "\(op.symbol) needs strings, '\(a.name)' is \(a.type.rawValue)", range: range)
        }
    }

    func checkCompatible(_ a: Schema.Attribute, _ b: Schema.Attribute, _ range: SourceRange) throws(SQLLoweringError) {
        if a.type == .any || b.type == .any {
            // A dynamic number never equals the decimal's text, though memory compares the two as numbers.
            if [a, b].contains(where: { $0.type == .decimal && $0.effectiveEncoding == .text }) {
                throw unsupported("comparing a TEXT-encoded decimal with a dynamically typed value", range)
            }
            return
        }
        if Self.numeric.contains(a.type) && Self.numeric.contains(b.type) {
            let integral: Set<Schema.ValueType> = [.integer, .boolean]
            if !dialect.traits.contains(.exactIntegerDoubleComparison),
                integral.contains(a.type) != integral.contains(b.type)
            {
                throw unsupported(
                    "comparing the integer and double values '\(a.name)' and '\(b.name)' in this dialect (it compares them as doubles, inexact beyond 2^53)",
                    range)
            }
            if a.effectiveEncoding == .text || b.effectiveEncoding == .text {
                if a.effectiveEncoding != b.effectiveEncoding {
                    throw unsupported("comparing a TEXT-encoded decimal with a number", range)
                }
            }
            return
        }
        guard a.type == b.type else {
            throw .ofValues(
                .typeMismatch, "'\(a.name)' is \(a.type.rawValue) and '\(b.name)' is \(b.type.rawValue)", range: range)
        }
        if a.type == .date && a.effectiveEncoding != b.effectiveEncoding {
            throw .forMemory("comparing dates stored with different encodings", range: range)
        }
    }

    /// The evaluator's answer to a comparison of two constants, or nil when memory raises on it.
    func foldConstant(
        _ a: LiteralValue, _ op: ComparisonOperator, _ options: ComparisonOptions, _ b: LiteralValue,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> Bool? {
        evaluateConstants(nil, a, op, options, b, range)
    }

    /// One ORDER BY term: the key path, its collation under [c]/[d]/[cd], and the direction.
    /// SQLite's NULL-first ascending (NULL-last descending) order is the evaluator's nil order, and
    /// its storage-class order (numbers < text < blobs) is the evaluator's kind order. Remaining
    /// differences: a dynamically typed (`any`) column cannot hold dates as such, so the evaluator's
    /// "dates between numbers and strings" rank has no counterpart; ties end with the primary key
    /// ascending, which equals the evaluator's stable order only when its input is in key order.
    func orderTerm(_ key: SQLSortKey, _ scope: Scope) throws(SQLLoweringError) -> Fragment {
        let e: ExpressionSyntax
        do { e = try ExpressionSyntax.parse(key.keyPath) } catch {
            throw SQLLoweringError(.unknownKey, "sort key '\(key.keyPath)' is not a key path")
        }
        guard case .scalar(var s) = try scalarize(try operand(e, scope)) else {
            throw SQLLoweringError(
                .unsupported, "sort key '\(key.keyPath)' is not an attribute or a collection operator")
        }
        // A list (`mode:`) has no SQL order.
        guard !s.isCollection else { throw SQLLoweringError(.unsupported, "sort key '\(key.keyPath)' is a collection") }
        if dialect.textFunction == nil, Schema.FoldedColumns.fold(key.options),
            s.attribute.type == .string || s.text != nil
        {
            // No Sift collation in the database: order by the writer's folded copy.
            guard s.folded != nil,
                case .scalar(let folded) = try? foldedOperand(.scalar(s), key.options, SourceRange(0, 0))
            else {
                throw SQLLoweringError(
                    .unsupported,
                    "sort key '\(key.keyPath)' with string options in this dialect ('\(s.attribute.name)' has no folded copies, and the database cannot call Sift's folding)"
                )
            }
            s = folded
        }
        if s.text != nil { return dynamicOrderTerms(s, ascending: key.ascending) }
        var term = s.fragment
        if [.string, .any].contains(s.attribute.type), let coll = dialect.collation(for: key.options) {
            term = term + Fragment(" COLLATE \(dialect.quote(coll))")
        } else {
            term = textOrdered(term, s.attribute)
        }
        // Memory sorts nil first ascending, last descending: SQLite's default, not PostgreSQL's.
        let nulls = dialect.nullsSortFirst ? "" : (key.ascending ? " NULLS FIRST" : " NULLS LAST")
        return term + Fragment((key.ascending ? " ASC" : " DESC") + nulls)
    }
}

/// A constant as the predicate language writes it (`5`, `"x"`, `{1, 2}`), for messages.
func show(_ v: LiteralValue) -> String {
    ExpressionSyntax(.constant(value: v)).description
}

/// The NFC form the store holds (SiftText's, which skips Foundation for text that is NFC already).
func nfc(_ s: String) -> String { TextFolding.nfc(s) }
