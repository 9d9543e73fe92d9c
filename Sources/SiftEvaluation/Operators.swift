// The primitive comparison operations, one value against another, with Apple's rules (Predicate
// Semantics, "Nil, null and missing keys" to "BETWEEN"): the nil table, no coercion between numbers
// and strings, options only between strings, IN/CONTAINS as one operation with the sides swapped,
// BETWEEN inclusive with swapped bounds. The compiler's fast paths specialise these for constant
// right-hand sides and must agree with them; the tests check both against each other.

import Foundation
import SiftSyntax
import SiftText

/// A compiled string matcher for LIKE or MATCHES: compiled once for a constant pattern, or per
/// evaluation for a computed one.
enum PatternMatcher {
    case like(LikePattern)
    case regex(RegexPattern)

    static func compile(_ op: ComparisonOperator, _ pattern: String, _ options: TextOptions) throws(EvaluationErrorKind)
        -> PatternMatcher
    {
        do {
            return op == .like
                ? .like(try LikePattern(pattern, options)) : .regex(try RegexPattern.compile(pattern, options))
        } catch {
            throw EvaluationErrorKind(error)
        }
    }

    func matches(_ s: String) throws(EvaluationErrorKind) -> Bool {
        switch self {
        case .like(let p): return p.matches(s)
        case .regex(let r):
            do throws(TextError) { return try r.matches(s) } catch { throw EvaluationErrorKind(error) }
        }
    }
}

extension TextOptions {
    init(_ options: ComparisonOptions) { self.init(rawValue: options.rawValue) }

    /// Whether string equality and ordering differ from Swift's own `==` and `<`.
    var altersComparison: Bool { !intersection([.caseInsensitive, .diacriticInsensitive, .normalized]).isEmpty }
}

/// Evaluates one comparison between two already-evaluated values.
struct PrimitiveComparison: Sendable {
    let op: ComparisonOperator
    let options: TextOptions
    let utis: UTITable

    func evaluate(_ l: Value, _ r: Value) throws(EvaluationErrorKind) -> Bool {
        switch op {
        case .equal: return equal(l, r)
        case .notEqual: return !equal(l, r)
        case .lessThan: return try ordered(l, r) { $0 < 0 }
        case .lessThanOrEqual: return try ordered(l, r, bothNil: true) { $0 <= 0 }
        case .greaterThan: return try ordered(l, r) { $0 > 0 }
        case .greaterThanOrEqual: return try ordered(l, r, bothNil: true) { $0 >= 0 }
        case .beginsWith, .endsWith:
            guard let (s, needle) = try strings(l, r) else { return false }
            return op == .beginsWith ? textBeginsWith(s, needle, options) : textEndsWith(s, needle, options)
        case .like, .matches:
            guard let (s, pattern) = try strings(l, r) else { return false }
            return try PatternMatcher.compile(op, pattern, options).matches(s)
        case .contains: return try membership(collection: l, value: r)
        case .in: return try membership(collection: r, value: l)
        case .between: return try between(l, r)
        case .utiConformsTo, .utiEquals:
            guard let (a, b) = try strings(l, r) else { return false }
            return op == .utiEquals ? a == b : utis.conforms(a, to: b)
        }
    }

    func equal(_ l: Value, _ r: Value) -> Bool {
        if options.altersComparison, case .string(let a) = l, case .string(let b) = r {
            return textEqual(a, b, options)
        }
        return l.isEqual(to: r)
    }

    /// `<`-style operators: nil on one side is false, on both sides `bothNil`.
    func ordered(_ l: Value, _ r: Value, bothNil: Bool = false, _ accept: (Int) -> Bool) throws(EvaluationErrorKind)
        -> Bool
    {
        switch (l.isNull, r.isNull) {
        case (true, true): return bothNil
        case (true, false), (false, true): return false
        default: break
        }
        return accept(try order(l, r))
    }

    /// The order of two non-nil values, honouring the options between strings.
    func order(_ l: Value, _ r: Value) throws(EvaluationErrorKind) -> Int {
        if options.altersComparison, case .string(let a) = l, case .string(let b) = r {
            return textCompare(a, b, options)
        }
        guard let o = l.order(comparedTo: r) else { throw .incomparableValues(l.description, r.description) }
        return o
    }

    /// Both operands as strings; nil when either is nil; an error when either is something else.
    func strings(_ l: Value, _ r: Value) throws(EvaluationErrorKind) -> (String, String)? {
        if l.isNull || r.isNull { return nil }
        guard case .string(let a) = l else { throw .notAString(operation: op.symbol, value: l.description) }
        guard case .string(let b) = r else { throw .notAString(operation: op.symbol, value: r.description) }
        return (a, b)
    }

    /// `value IN collection` / `collection CONTAINS value` (Predicate Semantics, "IN and CONTAINS").
    func membership(collection: Value, value: Value) throws(EvaluationErrorKind) -> Bool {
        if collection.isNull || value.isNull { return false }
        switch collection {
        case .string(let s):
            guard case .string(let needle) = value else {
                throw .notAString(operation: op.symbol, value: value.description)
            }
            return textContains(s, needle, options)
        case .array(let a), .set(let a):
            return a.contains { $0.isEqual(to: value) }
        case .dictionary(let d):
            return d.values.contains { $0.isEqual(to: value) }
        case .object(let o):
            if let d = o.dictionaryValue { return d.values.contains { $0.isEqual(to: value) } }
            throw .notACollection(operation: op.symbol, value: collection.description)
        default:
            throw .notACollection(operation: op.symbol, value: collection.description)
        }
    }

    /// `value BETWEEN {lo, hi}`, inclusive, bounds swapped when reversed (Predicate Semantics, "BETWEEN").
    func between(_ l: Value, _ r: Value) throws(EvaluationErrorKind) -> Bool {
        if l.isNull || r.isNull { return false }
        guard case .array(let bounds) = r, bounds.count == 2 else { throw .invalidBetweenBounds(r.description) }
        var (lo, hi) = (bounds[0], bounds[1])
        if lo.isNull || hi.isNull { return false }
        if try order(lo, hi) > 0 { swap(&lo, &hi) }
        if try order(lo, l) > 0 { return false }
        return try order(l, hi) <= 0
    }
}
