// Comparisons of dynamically typed values in a dialect whose columns hold one type each
// (PostgreSQL). Such a value (a JSON scalar: a number, a boolean, a string or nil) is kept in two
// columns, its numbers (booleans as 0/1) as exact NUMERIC and its strings as text, at most one of
// them non-NULL in a row (`Scalar.text`). Each comparison reads the column of the other side's
// kind: a number constant compares with the NUMERIC column, a string with the text column, and two
// such values view by view. A row of the other kind then compares as NULL (false), which is
// memory's answer for `==` and `!=`; for orderings and text operators memory raises on such a row,
// and any answer is memory's. Numbers compare exactly: integers are bound as bigint, doubles as the
// exact decimal expansion of their binary value, so no comparison rounds.

import SiftSyntax

extension LoweringContext {
    /// The strings of a two-column value as a plain text value.
    func textView(_ s: Scalar) -> Scalar {
        Scalar(fragment: s.text ?? Fragment("NULL"), attribute: Schema.Attribute(name: s.attribute.name, type: .string))
    }

    /// A number constant as bound against a NUMERIC column, exactly; nil for a value that is not a
    /// finite number (booleans count as 0/1, as memory compares them with numbers).
    func exactNumber(_ c: LiteralValue) -> Fragment? {
        switch c {
        case .integer(let i): return .param(.integer(i))
        case .bool(let b): return .param(.integer(b ? 1 : 0))
        case .double(let d):
            guard let text = ExactDecimal.text(d) else { return nil }
            return Fragment("CAST(") + .param(.text(text)) + Fragment(" AS NUMERIC)")
        case .decimal(let d): return Fragment("CAST(") + .param(.text(d.description)) + Fragment(" AS NUMERIC)")
        default: return nil
        }
    }

    /// The views of an operand: its NUMERIC side and its text side (nil where it has none).
    private func views(_ o: Operand, _ range: SourceRange) throws(SQLLoweringError) -> (
        number: Fragment?, text: Fragment?, isNil: Fragment?
    )? {
        switch o {
        case .scalar(let s) where s.text != nil:
            return (
                s.fragment, s.text,
                Fragment("(") + s.fragment + Fragment(" IS NULL AND ") + s.text! + Fragment(" IS NULL)")
            )
        case .scalar(let s):
            switch s.attribute.type {
            case .integer, .boolean: return (s.fragment, nil, s.fragment + Fragment(" IS NULL"))
            case .string: return (nil, s.fragment, s.fragment + Fragment(" IS NULL"))
            case .any where s.fragment.sql == "NULL":
                // A key an open entity lacks: nil, NULL as a number and as a string.
                return (s.fragment, s.fragment, s.fragment + Fragment(" IS NULL"))
            default:
                throw unsupported(
                    "comparing the dynamically typed value with '\(s.attribute.name)', a \(s.attribute.type.rawValue), in this dialect (NUMERIC against it would round)",
                    range)
            }
        default: return nil
        }
    }

    /// `l op r` when either side is a two-column value, or nil when neither is.
    func dynamicLeaf(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered? {
        func dual(_ o: Operand) -> Scalar? {
            if case .scalar(let s) = o, s.text != nil { return s }
            return nil
        }
        guard dual(l) != nil || dual(r) != nil else { return nil }
        guard ![.in, .contains].contains(op) else { return nil }  // membership reads the views itself
        let ordering: [ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        let textOps: [ComparisonOperator] = [.beginsWith, .endsWith, .like, .matches]

        // A constant on the left: swap (orderings mirrored), as the typed comparisons do.
        if case .constant = l, dual(r) != nil, op == .equal || op == .notEqual || ordering.contains(op) {
            let swapped: ComparisonOperator =
                [
                    .lessThan: .greaterThan, .greaterThan: .lessThan,
                    .lessThanOrEqual: .greaterThanOrEqual, .greaterThanOrEqual: .lessThanOrEqual,
                ][op] ?? op
            return try dynamicLeaf(r, swapped, options, l, negated: negated, range: range)
        }
        // Text operators read the strings of both sides.
        if textOps.contains(op) {
            let lv: Operand = dual(l).map { .scalar(textView($0)) } ?? l
            let rv: Operand = dual(r).map { .scalar(textView($0)) } ?? r
            return try typedLeaf(lv, op, options, rv, negated: negated, range: range)
        }

        if let s = dual(l), case .constant(let c) = r {
            return try dynamic(s, op, options, constant: c, negated: negated, range: range)
        }
        return try viewByView(l, op, r, negated: negated, range: range)
    }

    /// A two-column value against a constant: nil tests both columns, a string compares the
    /// strings, a number (or BETWEEN two numbers) the numbers.
    private func dynamic(
        _ s: Scalar, _ op: ComparisonOperator, _ options: ComparisonOptions, constant c: LiteralValue,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        func pick(_ pos: Fragment, _ neg: Fragment? = nil) -> Lowered { self.pick(negated, pos, neg) }
        let ordering: [ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        let r = Operand.constant(c)
        let isNil = Fragment("(") + s.fragment + Fragment(" IS NULL AND ") + s.text! + Fragment(" IS NULL)")
        let notNil = Fragment("(") + s.fragment + Fragment(" IS NOT NULL OR ") + s.text! + Fragment(" IS NOT NULL)")
        switch c {
        case .null:
            switch op {
            case .equal, .lessThanOrEqual, .greaterThanOrEqual: return pick(isNil, notNil)
            case .notEqual: return pick(notNil, isNil)
            case .lessThan, .greaterThan: return .constant(negated)
            default: throw unsupported("\(op.symbol) nil on a dynamically typed value in this dialect", range)
            }
        case .string:
            return try typedLeaf(.scalar(textView(s)), op, options, r, negated: negated, range: range)
        case .array(let bounds) where op == .between:
            guard bounds.count == 2 else {
                throw SQLLoweringError(
                    .typeMismatch, "BETWEEN needs an array of two bounds, got \(show(c))", range: range)
            }
            if bounds.contains(.null) { return .constant(negated) }
            if bounds.allSatisfy({ if case .string = $0 { true } else { false } }) {
                return try between(textView(s), c, options, negated: negated, range: range)
            }
            guard var lo = exactNumber(bounds[0]), var hi = exactNumber(bounds[1]),
                let greater = try foldConstant(bounds[0], .greaterThan, [], bounds[1], range)
            else {
                throw unsupported(
                    "BETWEEN with the bounds \(show(bounds[0])) and \(show(bounds[1])) on a dynamically typed value in this dialect",
                    range)
            }
            if greater { swap(&lo, &hi) }
            let col = s.fragment
            return pick(
                col + Fragment(" BETWEEN ") + lo + Fragment(" AND ") + hi,
                Fragment("(") + col + Fragment(" NOT BETWEEN ") + lo + Fragment(" AND ") + hi + Fragment(" OR ")
                    + col + Fragment(" IS NULL)"))
        default:
            guard let p = exactNumber(c) else {
                throw unsupported(
                    "comparing the dynamically typed '\(s.attribute.name)' with \(show(c)) in this dialect", range)
            }
            let col = s.fragment
            switch op {
            case .equal:
                return pick(
                    col + Fragment(" = ") + p,
                    Fragment(dialect.isDistinct(col.sql, p.sql), col.bindings + p.bindings))
            case .notEqual:
                return pick(
                    Fragment(dialect.isDistinct(col.sql, p.sql), col.bindings + p.bindings),
                    col + Fragment(" = ") + p)
            case _ where ordering.contains(op):
                let negOp = [
                    ComparisonOperator.lessThan: ">=", .lessThanOrEqual: ">", .greaterThan: "<=",
                    .greaterThanOrEqual: "<",
                ][op]!
                return pick(
                    col + Fragment(" \(op.symbol) ") + p,
                    Fragment("(") + col + Fragment(" \(negOp) ") + p + Fragment(" OR ") + col
                        + Fragment(" IS NULL)"))
            default:
                throw unsupported("\(op.symbol) with a number on a dynamically typed value in this dialect", range)
            }
        }
    }

    /// Two values, at least one of them in two columns: each view (numbers, strings) against the
    /// other side's.
    private func viewByView(
        _ l: Operand, _ op: ComparisonOperator, _ r: Operand, negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        func pick(_ pos: Fragment, _ neg: Fragment? = nil) -> Lowered { self.pick(negated, pos, neg) }
        let ordering: [ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        guard let a = try views(l, range), let b = try views(r, range) else {
            throw unsupported(
                "\(op.symbol) between a dynamically typed value and a relationship in this dialect", range)
        }
        let pairs: [(Fragment?, Fragment?, Bool)] = [(a.number, b.number, false), (a.text, b.text, true)]
        switch op {
        case .equal, .notEqual:
            var terms: [Fragment] = []
            for (x, y, _) in pairs {
                switch (x, y) {
                case (let x?, let y?):
                    terms.append(Fragment(dialect.isNotDistinct(x.sql, y.sql), x.bindings + y.bindings))
                case (let x?, nil), (nil, let x?): terms.append(x + Fragment(" IS NULL"))
                case (nil, nil): continue
                }
            }
            let equal = Fragment("(") + Fragment.join(terms, " AND ") + Fragment(")")
            let unequal = Fragment("NOT ") + equal
            return op == .equal ? pick(equal, unequal) : pick(unequal, equal)
        case _ where ordering.contains(op):
            var terms: [Fragment] = []
            for (x, y, isText) in pairs {
                guard let x, let y else { continue }
                terms.append(
                    x + Fragment(" \(op.symbol) ")
                        + (isText ? textOrdered(y, Schema.Attribute(name: "", type: .string)) : y))
            }
            if op == .lessThanOrEqual || op == .greaterThanOrEqual, let an = a.isNil, let bn = b.isNil {
                terms.append(Fragment("(") + an + Fragment(" AND ") + bn + Fragment(")"))
            }
            if terms.isEmpty { return .constant(negated) }
            return pick(Fragment("(") + Fragment.join(terms, " OR ") + Fragment(")"))
        default:
            throw unsupported("\(op.symbol) with a dynamically typed value in this dialect", range)
        }
    }

    /// `element == value` for IN over a collection whose elements (or the value) are kept in two
    /// columns; nil when neither is.
    func dynamicElementEquals(_ element: Scalar, _ value: Operand, _ range: SourceRange) throws(SQLLoweringError)
        -> Lowered?
    {
        if element.text == nil, case .scalar(let s) = value, s.text == nil { return nil }
        if element.text == nil, case .constant = value { return nil }
        return try dynamicLeaf(.scalar(element), .equal, [], value, negated: false, range: range)
    }

    /// `s IN list` for a two-column `s`: numbers against its NUMERIC column, strings against its text.
    func dynamicInList(_ s: Scalar, _ list: [LiteralValue], negated: Bool) -> Lowered {
        var numbers: [Fragment] = []
        var strings: [Fragment] = []
        for item in list {
            if case .string(let t) = item {
                strings.append(.param(.text(nfc(t))))
            } else if let p = exactNumber(item) {
                numbers.append(p)
            }
        }
        var parts: [Fragment] = []
        if !numbers.isEmpty {
            parts.append(s.fragment + Fragment(" IN (") + Fragment.join(numbers, ", ") + Fragment(")"))
        }
        if !strings.isEmpty { parts.append(s.text! + Fragment(" IN (") + Fragment.join(strings, ", ") + Fragment(")")) }
        if parts.isEmpty { return .constant(negated) }
        let pos = parts.count == 1 ? parts[0] : Fragment("(") + Fragment.join(parts, " OR ") + Fragment(")")
        return .sql(negated ? notTrue(pos) : pos)
    }

    /// ORDER BY terms for a two-column value: nil first, then numbers, then strings (memory's
    /// order of kinds), each kind in its own order.
    func dynamicOrderTerms(_ s: Scalar, ascending: Bool) -> Fragment {
        let dir = ascending ? " ASC" : " DESC"
        let rank =
            Fragment("(CASE WHEN ") + s.fragment + Fragment(" IS NOT NULL THEN 1 WHEN ") + s.text!
            + Fragment(" IS NOT NULL THEN 2 ELSE 0 END)" + dir)
        return rank + Fragment(", ") + s.fragment + Fragment(dir) + Fragment(", ")
            + textOrdered(s.text!, Schema.Attribute(name: "", type: .string)) + Fragment(dir)
    }
}

/// The exact decimal expansion of a double's binary value (`0.1` → `0.1000000000000000055511151231257827021181583404541015625`),
/// for databases whose exact NUMERIC must compare as memory compares doubles with integers.
///
/// ```swift
/// ExactDecimal.text(2.5)        // "2.5"
/// ExactDecimal.text(1e20)       // "100000000000000000000"
/// ExactDecimal.text(.infinity)  // nil
/// ```
package enum ExactDecimal {
    /// The digits of `d` (no exponent, no trailing zeros after the point), or nil for infinities and NaN.
    package static func text(_ d: Double) -> String? {
        guard d.isFinite else { return nil }
        if d == 0 { return "0" }
        // d = significand × 2^exponent with an integer significand.
        let significand = d.significandBitPattern | (d.isNormal ? (1 << 52) : 0)
        var exponent = Int(d.exponentBitPattern) - 1075
        if !d.isNormal { exponent = -1074 }
        // Little-endian base-10^9 limbs.
        var limbs: [UInt64] = []
        var m = significand
        while m > 0 {
            limbs.append(m % 1_000_000_000)
            m /= 1_000_000_000
        }
        func multiply(by f: UInt64) {
            var carry: UInt64 = 0
            for i in limbs.indices {
                let v = limbs[i] * f + carry
                limbs[i] = v % 1_000_000_000
                carry = v / 1_000_000_000
            }
            while carry > 0 {
                limbs.append(carry % 1_000_000_000)
                carry /= 1_000_000_000
            }
        }
        // m × 2^e for e ≥ 0; m × 5^k / 10^k for e = -k.
        var fractionDigits = 0
        if exponent >= 0 {
            for _ in 0..<exponent { multiply(by: 2) }
        } else {
            for _ in 0..<(-exponent) { multiply(by: 5) }
            fractionDigits = -exponent
        }
        var digits = String(limbs.last ?? 0)
        for limb in limbs.dropLast().reversed() {
            let s = String(limb)
            digits += String(repeating: "0", count: 9 - s.count) + s
        }
        if fractionDigits > 0 {
            if digits.count <= fractionDigits {
                digits = String(repeating: "0", count: fractionDigits - digits.count + 1) + digits
            }
            var integer = String(digits.prefix(digits.count - fractionDigits))
            var fraction = String(digits.suffix(fractionDigits))
            while fraction.hasSuffix("0") { fraction.removeLast() }
            if integer.isEmpty { integer = "0" }
            digits = fraction.isEmpty ? integer : integer + "." + fraction
        }
        return (d < 0 ? "-" : "") + digits
    }
}
