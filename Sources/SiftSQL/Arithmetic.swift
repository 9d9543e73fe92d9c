// Arithmetic on columns, mirroring the evaluator's number rules where SQL can be made exact:
// `+ - *` and unary minus on numbers (two integers stay integer, anything with a double is double,
// as in SQLite), and `/` between integers, where memory truncates like SQLite and gives 0 for a
// zero divisor (SQL gives NULL, hence the CASE). The bitwise operators between integers are
// SQLite's own (its shifts agree with Swift's smart shifts; XOR is `(x | y) & ~(x & y)`). What SQL
// computes differently (`/` that may involve a double: infinities and NaN; `**`; bitwise operators
// on doubles, which memory truncates) calls the evaluator's own operator through `sift_call`.
// Arithmetic with dates (date ± seconds, date − date) is memory's own operator through
// `sift_call`; TEXT-encoded decimals are rejected. A nil operand makes memory raise where SQL
// computes NULL (the zero-divisor CASE keeps a nil dividend NULL too): such a result is marked
// `raisesOnNil`, and the row guard hands the rows where it is NULL to memory (RowGuard.swift).
// Memory's Int64 arithmetic wraps where SQLite would switch to REAL: integer `+`, `-`, unary
// minus, `*` and `Int64.min / -1` are written to wrap too, on `any` columns on the rows where both
// operands are integers. Integer arithmetic nested so deeply that the repeated operands
// would pass 200 KB of SQL is rejected.

import SiftSyntax

extension LoweringContext {
    private static let integral: Set<Schema.ValueType> = [.integer, .boolean]
    private static let numeric: Set<Schema.ValueType> = [.integer, .boolean, .double, .decimal, .any]

    func arithmetic(
        _ op: BinaryOperator, _ l: ExpressionSyntax, _ r: ExpressionSyntax, _ scope: Scope,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        let lo = try scalarize(try operand(l, scope))
        let ro = try scalarize(try operand(r, scope))
        if let dated = try dateArithmetic(op, lo, ro, l, r, range) { return dated }
        let a = try numericOperand(lo, op, l.range)
        let b = try numericOperand(ro, op, r.range)
        if case .constant(let x) = a.op, case .constant(let y) = b.op {
            return .constant(
                try fold(
                    ExpressionSyntax(
                        .binary(
                            operator: op, lhs: ExpressionSyntax(.constant(value: x), range: l.range),
                            rhs: ExpressionSyntax(.constant(value: y), range: r.range)), range: range)))
        }
        let bothIntegers = a.integral && b.integral
        if a.type == .decimal && a.encodedAsText || b.type == .decimal && b.encodedAsText {
            throw unsupported("arithmetic on TEXT-encoded decimals", range)
        }
        let nan = a.mayBeNaN || b.mayBeNaN
        let bitwise: Set<BinaryOperator> = [.bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift]
        let traits = dialect.traits
        if !traits.contains(.silentFloatOverflow), !bothIntegers, [.add, .subtract, .multiply].contains(op) {
            throw unsupported(
                "'\(op.rawValue)' on doubles in this dialect (it raises on overflow where memory gives infinity)", range
            )
        }
        if !traits.contains(.integerShifts), op == .leftShift || op == .rightShift {
            throw unsupported("'\(op.rawValue)' in this dialect (its shifts take a 32-bit count)", range)
        }
        switch op {
        case _ where nan:
            // A NaN operand is a BLOB in SQL: only memory's operator computes with it.
            let type: Schema.ValueType =
                bitwise.contains(op) ? .integer : (a.type == .any || b.type == .any ? .any : .double)
            return try memoryCall(
                op.selector, [(a.op, l), (b.op, r)], type: type, mayBeNaN: !bitwise.contains(op), range)
        case .add, .subtract, .multiply: break
        case .divide where bothIntegers: break
        case _ where bitwise.contains(op) && bothIntegers:
            let sql = bitwiseSQL(op, a.fragment.parenthesized, b.fragment.parenthesized)
            var s = Scalar(
                fragment: sql, attribute: Schema.Attribute(name: "(\(l) \(op.rawValue) \(r))", type: .integer))
            s.mayBeNaN = nan
            return .computed(s, from: [a.op, b.op])
        default:
            // `**`, `/` that may involve a double, bitwise operators on doubles: memory's own operator.
            let type: Schema.ValueType =
                switch op {
                case .power: .double
                case .divide: a.type == .any || b.type == .any ? .any : .double
                default: .integer
                }
            return try memoryCall(
                op.selector, [(a.op, l), (b.op, r)], type: type, mayBeNaN: op == .power || op == .divide || nan, range)
        }
        let sql = wrappingSQL(op, a, b, bothIntegers: bothIntegers)
        // Each wrapping operation repeats its operands; deeply nested integer arithmetic would
        // grow past what a statement should hold.
        if sql.sql.utf8.count > 200_000 || sql.bindings.count > 5_000 {
            throw unsupported("integer arithmetic nested too deeply to lower with memory's wrapping", range)
        }
        let type: Schema.ValueType = bothIntegers ? .integer : (a.type == .any || b.type == .any ? .any : .double)
        var result = Scalar(fragment: sql, attribute: Schema.Attribute(name: "(\(l) \(op.rawValue) \(r))", type: type))
        result.mayBeNaN = nan
        return .computed(result, from: [a.op, b.op])
    }

    /// The SQL of a bitwise operator between two integers (SQLite's own; XOR spelled with AND/OR).
    private func bitwiseSQL(_ op: BinaryOperator, _ x: Fragment, _ y: Fragment) -> Fragment {
        return
            switch op
        {
        case .bitwiseAnd: Fragment("(") + x + Fragment(" & ") + y + Fragment(")")
        case .bitwiseOr: Fragment("(") + x + Fragment(" | ") + y + Fragment(")")
        case .bitwiseXor:
            Fragment("((") + x + Fragment(" | ") + y + Fragment(") & ~(") + x + Fragment(" & ") + y
                + Fragment("))")
        case .leftShift: Fragment("(") + x + Fragment(" << ") + y + Fragment(")")
        default: Fragment("(") + x + Fragment(" >> ") + y + Fragment(")")
        }
    }

    /// The SQL of `+ - * /` computed by SQL: wrapped as memory's Int64 arithmetic where both
    /// operands are (or, in a dynamically typed column, hold) integers, plain otherwise.
    private func wrappingSQL(
        _ op: BinaryOperator, _ a: NumericOperand, _ b: NumericOperand, bothIntegers: Bool
    ) -> Fragment {
        let x = a.fragment.parenthesized
        let y = b.fragment.parenthesized
        let sql: Fragment
        switch op {
        case .divide:
            if case .constant(.integer(let c)) = b.op, c != 0, c != -1 {
                // A constant divisor other than 0 and -1: SQLite's truncating division is memory's.
                sql = Fragment("(") + x + Fragment(" / ") + y + Fragment(")")
                break
            }
            // Only Int64.min / -1 overflows; memory wraps it to Int64.min, which is ~x + 1 wrapped.
            // A nil dividend stays NULL (memory raises there; the row guard looks for NULL).
            sql =
                Fragment("(CASE WHEN ") + y + Fragment(" = 0 AND ") + x + Fragment(" IS NOT NULL THEN 0 WHEN ") + y
                + Fragment(" = -1 THEN ")
                + Self.wrappingAdd(Fragment("(~") + x + Fragment(")"), Fragment(dialect.integerLiteral(1)))
                + Fragment(" ELSE ") + x + Fragment(" / ") + y + Fragment(" END)")
        case .add, .subtract, .multiply:
            let wrapped: Fragment
            switch op {
            case .add: wrapped = Self.wrappingAdd(x, y)
            // x - y = x + ~y + 1 in two's complement (negating y could itself overflow).
            case .subtract: wrapped = Self.wrappingAdd(x, Fragment("(~") + y + Fragment(")"), carry: true)
            default: wrapped = Self.wrappingMultiply(x, y)
            }
            let plain = Fragment("(") + x + Fragment(" \(op.rawValue) ") + y + Fragment(")")
            if bothIntegers {
                sql = wrapped
            } else if (a.integral || a.type == .any) && (b.integral || b.type == .any) {
                // A dynamically typed column holds integers on some rows: wrap there, as memory
                // does for two integers; anything with a double is plain IEEE arithmetic.
                var checks: [Fragment] = []
                if !a.integral { checks.append(Fragment("typeof(") + x + Fragment(") = 'integer'")) }
                if !b.integral { checks.append(Fragment("typeof(") + y + Fragment(") = 'integer'")) }
                sql =
                    Fragment("(CASE WHEN ") + Fragment.join(checks, " AND ") + Fragment(" THEN ") + wrapped
                    + Fragment(" ELSE ") + plain + Fragment(" END)")
            } else {
                sql = plain
            }
        default:
            sql = Fragment("(") + x + Fragment(" \(op.rawValue) ") + y + Fragment(")")
        }
        return sql
    }

    /// Arithmetic with a date operand, or nil when neither is a date. Memory adds seconds to a date
    /// (date ± number, number + date) and subtracts dates (date − date, in seconds); any other
    /// operator or operand raises. Memory's own operator computes it from SQL (`sift_call`): the
    /// columns' date encodings and memory's double rounding then cannot drift apart, and the date
    /// comes back as seconds since 2001, as a `date` result is compared.
    private func dateArithmetic(
        _ op: BinaryOperator, _ lo: Operand, _ ro: Operand, _ l: ExpressionSyntax, _ r: ExpressionSyntax,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand? {
        enum Kind { case date, number, other }
        func kind(_ o: Operand) -> Kind {
            switch o {
            case .scalar(let s):
                s.attribute.type == .date ? .date : Self.numeric.contains(s.attribute.type) ? .number : .other
            case .constant(.date): .date
            case .constant(.integer), .constant(.double), .constant(.bool), .constant(.decimal): .number
            default: .other
            }
        }
        let (x, y) = (kind(lo), kind(ro))
        guard x == .date || y == .date else { return nil }
        let result: Schema.ValueType
        switch (op, x, y) {
        case (.add, .date, .number), (.add, .number, .date), (.subtract, .date, .number): result = .date
        case (.subtract, .date, .date): result = .double
        default:
            // Memory raises on every row here. Within one shape of SELF or a mixed key any value
            // will do; elsewhere the schema's types say it, as for any type error.
            if isLoweringOneShape {
                return .scalar(Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: "nil", type: .any)))
            }
            let date = x == .date ? l : r
            throw SQLLoweringError(
                .typeMismatch,
                "'\(op.rawValue)' adds or subtracts seconds to '\(date)', a date; it cannot \(op == .add ? "add" : "apply") this",
                range: range)
        }
        if case .constant = lo, case .constant = ro {
            return .constant(try fold(ExpressionSyntax(.binary(operator: op, lhs: l, rhs: r), range: range)))
        }
        return try memoryCall(op.selector, [(lo, l), (ro, r)], type: result, range)
    }

    /// `~x`: SQLite's own on integers; memory's (which truncates a double first) otherwise.
    func complement(_ arg: ExpressionSyntax, _ scope: Scope, _ range: SourceRange) throws(SQLLoweringError) -> Operand {
        let a = try numericOperand(try scalarize(try operand(arg, scope)), .bitwiseXor, arg.range)
        if a.integral && !a.mayBeNaN {
            var s = Scalar(
                fragment: Fragment("(~") + a.fragment.parenthesized + Fragment(")"),
                attribute: Schema.Attribute(name: "~\(arg)", type: .integer))
            s.mayBeNaN = a.mayBeNaN
            return .computed(s, from: [a.op])
        }
        if a.type == .decimal && a.encodedAsText { throw unsupported("'~' of a TEXT-encoded decimal", range) }
        return try memoryCall("onesComplement:", [(a.op, arg)], type: .integer, range)
    }

    /// `x + y (+ 1 with carry)` modulo 2^64, as memory's Int64 arithmetic wraps; SQLite would switch
    /// to REAL on overflow. The 32-bit halves are added apart (no overflow possible), then
    /// recombined with a shift (SQLite shifts as u64, dropping the bits past 64) and a bitwise OR.
    static func wrappingAdd(_ x: Fragment, _ y: Fragment, carry: Bool = false) -> Fragment {
        let low =
            Fragment("((") + x + Fragment(" & 4294967295) + (") + y
            + Fragment(" & 4294967295)" + (carry ? " + 1)" : ")"))
        let high =
            Fragment("((") + x + Fragment(" >> 32) + (") + y + Fragment(" >> 32) + (") + low + Fragment(" >> 32))")
        return Fragment("((") + high + Fragment(" << 32) | (") + low + Fragment(" & 4294967295))")
    }

    /// `x * y` modulo 2^64, as memory's Int64 multiplication wraps. With x = xh·2^32 + xl and
    /// y = yh·2^32 + yl (xl, yl unsigned 32-bit), x·y ≡ xl·yl + 2^32·(xh·yl + xl·yh) (mod 2^64).
    /// xl·yl may need 64 unsigned bits, so it is built from 16-bit pieces; each cross product fits
    /// in Int64 (|xh| ≤ 2^31, yl < 2^32) and only its low 32 bits matter. No step overflows.
    static func wrappingMultiply(_ x: Fragment, _ y: Fragment) -> Fragment {
        func f(_ parts: Fragment...) -> Fragment { parts.reduce(Fragment("")) { $0 + $1 } }
        let m = Fragment("4294967295")
        let x1 = f(Fragment("((("), x, Fragment(") >> 16) & 65535)"))
        let x0 = f(Fragment("(("), x, Fragment(") & 65535)"))
        let y1 = f(Fragment("((("), y, Fragment(") >> 16) & 65535)"))
        let y0 = f(Fragment("(("), y, Fragment(") & 65535)"))
        let mid = f(Fragment("("), x1, Fragment(" * "), y0, Fragment(" + "), x0, Fragment(" * "), y1, Fragment(")"))
        let low = f(Fragment("("), x0, Fragment(" * "), y0, Fragment(" + (("), mid, Fragment(" & 65535) << 16))"))
        let high = f(
            Fragment("("), x1, Fragment(" * "), y1, Fragment(" + ("), mid, Fragment(" >> 16) + ("), low,
            Fragment(" >> 32))"))
        let cross = f(
            Fragment("((((("), x, Fragment(") >> 32) * (("), y, Fragment(") & "), m, Fragment(")) & "), m,
            Fragment(") + (((("), x, Fragment(") & "), m, Fragment(") * (("), y, Fragment(") >> 32)) & "), m,
            Fragment("))"))
        return f(
            Fragment("((("), high, Fragment(" + "), cross, Fragment(") << 32) | ("), low, Fragment(" & "), m,
            Fragment("))"))
    }

    /// `abs:(x)`: as memory, |Int64.min| stays Int64.min (SQLite's abs() would raise instead).
    func absolute(_ arg: ExpressionSyntax, _ scope: Scope, _ range: SourceRange) throws(SQLLoweringError) -> Operand {
        let a = try numericOperand(try scalarize(try operand(arg, scope)), .subtract, arg.range)
        switch a.op {
        case .constant(.integer(let i)): return .constant(.integer(i == .min ? i : Swift.abs(i)))
        case .constant(.bool(let b)): return .constant(.integer(b ? 1 : 0))
        case .constant(.double(let d)): return .constant(.double(Swift.abs(d)))
        default: break
        }
        if a.type == .decimal && a.encodedAsText { throw unsupported("abs: of a TEXT-encoded decimal", range) }
        if a.mayBeNaN { return try memoryCall("abs:", [(a.op, arg)], type: a.type, mayBeNaN: true, range) }
        let x = a.fragment.parenthesized
        // The operand is written four times: nested abs: grows as 4^depth and is refused, like
        // deep wrapping arithmetic, long before the statement is too large to build.
        if x.sql.utf8.count > 50_000 || x.bindings.count > 1_250 {
            throw unsupported("abs: nested too deeply to lower (its operand is repeated)", range)
        }
        let sql =
            Fragment("(CASE WHEN ") + x + Fragment(" < 0 AND ") + x + Fragment(" <> -9223372036854775808 THEN -") + x
            + Fragment(" ELSE ") + x + Fragment(" END)")
        return .computed(
            Scalar(fragment: sql, attribute: Schema.Attribute(name: "abs:(\(arg))", type: a.type)), from: [a.op])
    }

    private struct NumericOperand {
        var op: Operand
        var fragment: Fragment
        var type: Schema.ValueType
        var integral: Bool
        var encodedAsText: Bool
        var mayBeNaN = false
    }

    private func numericOperand(_ o: Operand, _ op: BinaryOperator, _ range: SourceRange) throws(SQLLoweringError)
        -> NumericOperand
    {
        do {
            return try checkedNumericOperand(o, op, range)
        } catch {
            // One shape of SELF or of a mixed key that is not a number (nil, a string, an array, an
            // object): memory raises on arithmetic with it, so any value will do on those rows, and
            // NULL keeps the rest of the expression lowerable.
            guard isLoweringOneShape, error.kind == .typeMismatch else { throw error }
            let null = Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: "nil", type: .any))
            return NumericOperand(
                op: .scalar(null), fragment: null.fragment, type: .any, integral: false, encodedAsText: false)
        }
    }

    private func checkedNumericOperand(_ o: Operand, _ op: BinaryOperator, _ range: SourceRange)
        throws(SQLLoweringError) -> NumericOperand
    {
        switch o {
        case .constant(let v):
            switch v {
            case .integer(let i):
                return NumericOperand(
                    op: o, fragment: .param(.integer(i)), type: .integer, integral: true, encodedAsText: false)
            case .bool(let b):
                return NumericOperand(
                    op: o, fragment: .param(.integer(b ? 1 : 0)), type: .integer, integral: true, encodedAsText: false)
            case .double(let d):
                return NumericOperand(
                    op: o, fragment: .param(.double(d)), type: .double, integral: false, encodedAsText: false)
            default:
                throw SQLLoweringError(.typeMismatch, "'\(op.rawValue)' needs numbers, got \(show(v))", range: range)
            }
        case .scalar(let s):
            guard Self.numeric.contains(s.attribute.type) else {
                throw SQLLoweringError(
                    .typeMismatch,
                    "'\(op.rawValue)' needs numbers, '\(s.attribute.name)' is \(s.attribute.type.rawValue)",
                    range: range)
            }
            // Memory keeps integers and doubles apart (wrapping or IEEE); a NUMERIC column does not.
            try singleTyped(s, "'\(op.rawValue)'", range)
            return NumericOperand(
                op: o, fragment: s.fragment, type: s.attribute.type, integral: Self.integral.contains(s.attribute.type),
                encodedAsText: s.attribute.effectiveEncoding == .text, mayBeNaN: s.mayBeNaN)
        default:
            throw SQLLoweringError(.typeMismatch, "'\(op.rawValue)' needs numbers", range: range)
        }
    }
}
