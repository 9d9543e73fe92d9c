// Specialised tests for comparisons whose right-hand side is a constant, the common case
// (`age > 30`, `name BEGINSWITH[cd] "jo"`, `state IN {"CA", "NY"}`). Each is decided once at
// compile time and handles the expected value kinds inline, without allocation; anything else
// falls back to `PrimitiveComparison`, so the answer (and any error) is the same as the general path.

import Foundation
import SiftSyntax
import SiftText

typealias ValueTest = @Sendable (Value, Value) throws(EvaluationErrorKind) -> Bool

enum ConstantComparison {
    static func make(_ p: PrimitiveComparison, _ constant: Value) -> ValueTest {
        let generic: ValueTest = { l, r throws(EvaluationErrorKind) in try p.evaluate(l, r) }
        switch (p.op, constant) {
        case (.equal, _), (.notEqual, _):
            return equality(p, constant, expect: p.op == .equal) ?? generic
        case (.lessThan, _), (.lessThanOrEqual, _), (.greaterThan, _), (.greaterThanOrEqual, _):
            return ordering(p, constant) ?? generic
        case (.beginsWith, .string(let needle)), (.endsWith, .string(let needle)), (.contains, .string(let needle)):
            let prepared = PreparedText(needle, p.options)
            let op = p.op
            return { l, r throws(EvaluationErrorKind) in
                guard case .string(let s) = l else { return try p.evaluate(l, r) }
                switch op {
                case .beginsWith: return prepared.isPrefix(of: s)
                case .endsWith: return prepared.isSuffix(of: s)
                default: return prepared.isContained(in: s)
                }
            }
        case (.like, .string(let pattern)), (.matches, .string(let pattern)):
            let compiled: Result<PatternMatcher, EvaluationErrorKind>
            do throws(EvaluationErrorKind) {
                compiled = .success(try PatternMatcher.compile(p.op, pattern, p.options))
            } catch { compiled = .failure(error) }
            return { l, r throws(EvaluationErrorKind) in
                guard case .string(let s) = l else { return try p.evaluate(l, r) }
                switch compiled {
                case .success(let m): return try m.matches(s)
                case .failure(let e): throw e
                }
            }
        case (.in, .array(let elements)), (.in, .set(let elements)):
            var hashed = Set<HashKey>()
            for e in elements where !e.isNull {
                guard let k = HashKey(e) else { return generic }
                hashed.insert(k)
            }
            let keys = hashed
            return { l, r throws(EvaluationErrorKind) in
                if l.isNull { return false }
                if let k = HashKey(l) { return keys.contains(k) }
                return try p.evaluate(l, r)
            }
        case (.between, .array(let bounds)) where bounds.count == 2:
            guard let a = bounds[0].number, let b = bounds[1].number else { return generic }
            let (lo, hi) = compareNumbers(a, b) <= 0 ? (a, b) : (b, a)
            return { l, r throws(EvaluationErrorKind) in
                guard let n = l.number else { return try p.evaluate(l, r) }
                return compareNumbers(lo, n) <= 0 && compareNumbers(n, hi) <= 0
            }
        default:
            return generic
        }
    }

    private static func equality(_ p: PrimitiveComparison, _ constant: Value, expect: Bool) -> ValueTest? {
        switch constant {
        case .string(let k):
            if p.options.altersComparison {
                let prepared = PreparedText(k, p.options)
                return { l, _ in
                    if case .string(let s) = l { return prepared.equals(s) == expect }
                    return !expect
                }
            }
            return { l, _ in
                if case .string(let s) = l { return (s == k) == expect }
                return !expect
            }
        case .integer, .double, .bool:
            let k = constant.number!
            return { l, r in
                switch l {
                case .integer(let i): return (compareNumbers(.integer(i), k) == 0) == expect
                case .double(let d): return (compareNumbers(.double(d), k) == 0) == expect
                default: return l.isEqual(to: r) == expect
                }
            }
        case .null:
            return { l, _ in l.isNull == expect }
        default:
            return nil
        }
    }

    private static func ordering(_ p: PrimitiveComparison, _ constant: Value) -> ValueTest? {
        let accept: @Sendable (Int) -> Bool
        switch p.op {
        case .lessThan: accept = { $0 < 0 }
        case .lessThanOrEqual: accept = { $0 <= 0 }
        case .greaterThan: accept = { $0 > 0 }
        default: accept = { $0 >= 0 }
        }
        switch constant {
        case .integer, .double:
            let k = constant.number!
            return { l, r throws(EvaluationErrorKind) in
                switch l {
                case .integer(let i): return accept(compareNumbers(.integer(i), k))
                case .double(let d): return accept(compareNumbers(.double(d), k))
                default: return try p.evaluate(l, r)
                }
            }
        case .string(let k):
            if p.options.altersComparison {
                let prepared = PreparedText(k, p.options)
                return { l, r throws(EvaluationErrorKind) in
                    if case .string(let s) = l { return accept(prepared.compare(s)) }
                    return try p.evaluate(l, r)
                }
            }
            return { l, r throws(EvaluationErrorKind) in
                if case .string(let s) = l { return accept(s == k ? 0 : (s < k ? -1 : 1)) }
                return try p.evaluate(l, r)
            }
        default:
            return nil
        }
    }
}
