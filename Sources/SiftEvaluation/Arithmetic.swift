// Arithmetic and bitwise operators with Foundation's number rules (Predicate Semantics, "Numbers
// and arithmetic"): two integers stay integers (division truncates, division or modulus by zero is
// 0, overflow wraps), any double makes the operation double, `**` is always double, dates move by
// seconds and subtract to seconds. A nil or non-number operand is an error: Apple raises, and
// silently producing nil would make in-memory results differ from what users expect.

import Foundation
import SiftSyntax

enum Arithmetic {
    static func binary(_ op: BinaryOperator, _ l: Value, _ r: Value) throws(EvaluationErrorKind) -> Value {
        switch op {
        case .add:
            if case .date(let d) = l, let n = r.number { return .date(d.addingTimeInterval(n.doubleValue)) }
            if case .date(let d) = r, let n = l.number { return .date(d.addingTimeInterval(n.doubleValue)) }
            let (a, b) = try numbers(op, l, r)
            return Value(combine(a, b, { $0 &+ $1 }, +))
        case .subtract:
            if case .date(let d) = l {
                if let n = r.number { return .date(d.addingTimeInterval(-n.doubleValue)) }
                if case .date(let e) = r { return .double(d.timeIntervalSince(e)) }
            }
            let (a, b) = try numbers(op, l, r)
            return Value(combine(a, b, { $0 &- $1 }, -))
        case .multiply:
            let (a, b) = try numbers(op, l, r)
            return Value(combine(a, b, { $0 &* $1 }, *))
        case .divide:
            let (a, b) = try numbers(op, l, r)
            return Value(combine(a, b, integerDivide, /))
        case .power:
            let (a, b) = try numbers(op, l, r)
            return .double(pow(a.doubleValue, b.doubleValue))
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift:
            let (a, b) = try numbers(op, l, r)
            let x = integerValue(a)
            let y = integerValue(b)
            switch op {
            case .bitwiseAnd: return .integer(x & y)
            case .bitwiseOr: return .integer(x | y)
            case .bitwiseXor: return .integer(x ^ y)
            case .leftShift: return .integer(x << y)
            default: return .integer(x >> y)
            }
        }
    }

    static func unary(_ op: UnaryOperator, _ v: Value) throws(EvaluationErrorKind) -> Value {
        guard let n = v.number else { throw .notANumber(operation: op.rawValue, value: v.description) }
        switch (op, n) {
        case (.negate, .integer(let i)): return .integer(0 &- i)
        case (.negate, .double(let d)): return .double(-d)
        case (.bitwiseNot, _): return .integer(~integerValue(n))
        }
    }

    /// Both operands as numbers, or the error naming the first that is not one.
    static func numbers(_ op: BinaryOperator, _ l: Value, _ r: Value) throws(EvaluationErrorKind) -> (Number, Number) {
        guard let a = l.number else { throw .notANumber(operation: op.rawValue, value: l.description) }
        guard let b = r.number else { throw .notANumber(operation: op.rawValue, value: r.description) }
        return (a, b)
    }

    @inline(__always)
    static func combine(
        _ a: Number, _ b: Number, _ ints: (Int64, Int64) -> Int64, _ doubles: (Double, Double) -> Double
    ) -> Number {
        if case .integer(let x) = a, case .integer(let y) = b { return .integer(ints(x, y)) }
        return .double(doubles(a.doubleValue, b.doubleValue))
    }

    /// C integer division, except that dividing by zero gives 0 (as Foundation does) and
    /// `Int64.min / -1` wraps instead of trapping.
    static func integerDivide(_ x: Int64, _ y: Int64) -> Int64 {
        if y == 0 { return 0 }
        return x.dividedReportingOverflow(by: y).partialValue
    }

    static func integerModulus(_ x: Int64, _ y: Int64) -> Int64 {
        if y == 0 { return 0 }
        return x.remainderReportingOverflow(dividingBy: y).partialValue
    }

    /// `integerValue` of an NSNumber: doubles truncate toward zero (saturating at the Int64 range).
    static func integerValue(_ n: Number) -> Int64 {
        switch n {
        case .integer(let i): return i
        case .double(let d):
            if d.isNaN { return 0 }
            if d >= 9.2233720368547758e18 { return .max }
            if d <= -9.2233720368547758e18 { return .min }
            return Int64(d.rounded(.towardZero))
        }
    }
}
