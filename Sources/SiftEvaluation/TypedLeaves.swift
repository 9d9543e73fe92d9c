// Comparisons of a root key against a constant, when the root type reads that key with a typed
// `KeyReader` (`age > 30` on a struct whose `age` reader returns `Int?`). The value is tested as
// the Swift type the reader returns, without building a `Value`, so a leaf costs a call to the
// reader and a machine comparison. Each fast form must answer exactly as the general path
// (`ConstantComparison` / `PrimitiveComparison`) does; anything not special-cased here falls back
// to it, and nil always takes the general path's answer, computed once at compile time.

import Foundation
import SiftSyntax
import SiftText

/// What a typed leaf answers for a nil value, the general path's answer decided once at compile
/// time, and how it positions the general path's errors.
struct LeafFallback: Sendable {
    /// The answer for nil; nil when the general path raises for it (then `nilError`).
    let nilAnswer: Bool?
    let nilError: EvaluationError?
    let range: SourceRange
    let source: String?

    init(
        quantifier: Quantifier?, _ general: ValueTest, _ constant: Value, range: SourceRange, source: String?
    ) {
        self.range = range
        self.source = source
        if let quantifier {
            // ANY over nil is false, ALL over nil is true (nil is an empty collection).
            nilAnswer = quantifier == .all
            nilError = nil
        } else {
            do throws(EvaluationErrorKind) {
                nilAnswer = try general(.null, constant)
                nilError = nil
            } catch {
                nilAnswer = nil
                nilError = EvaluationError(error, range: range, source: source)
            }
        }
    }

    /// The answer for a nil value, or the general path's error for it.
    @inline(__always)
    func onNil() throws(EvaluationError) -> Bool {
        if let nilAnswer { return nilAnswer }
        throw nilError!
    }

    /// The general path's error `e`, positioned at the comparison.
    @inline(__always)
    func wrap(_ e: EvaluationErrorKind) -> EvaluationError {
        EvaluationError(e, range: range, source: source)
    }
}

enum TypedLeaf {
    /// A test for `key op constant` (or `ANY key op constant` / `ALL …`), or nil when the reader
    /// is untyped and the general path should be used.
    static func make<Root>(
        _ reader: KeyReader<Root>, quantifier: Quantifier?, _ p: PrimitiveComparison,
        _ constant: Value, _ general: @escaping ValueTest,
        range: SourceRange, lhsRange: SourceRange, source: String?
    ) -> Step<Root>? {
        let fallback = LeafFallback(quantifier: quantifier, general, constant, range: range, source: source)
        let strings = stringCondition(p, constant)
        if let quantifier {
            return quantified(
                reader, all: quantifier == .all, p, constant, general, strings, fallback, lhsRange: lhsRange,
                source: source)
        }
        return scalar(reader, p, constant, general, strings, fallback)
    }

    /// `ANY key op constant` / `ALL …` over a reader of arrays; nil for a scalar reader, whose
    /// quantifier is the general path's error (not a collection).
    private static func quantified<Root>(
        _ reader: KeyReader<Root>, all: Bool, _ p: PrimitiveComparison, _ constant: Value,
        _ general: @escaping ValueTest, _ strings: StringCondition?, _ fallback: LeafFallback,
        lhsRange: SourceRange, source: String?
    ) -> Step<Root>? {
        switch reader.storage {
        case .strings(let get, let checks):
            if let strings, let nilAnswer = fallback.nilAnswer {
                return .strings(checks, QuantifiedStringCondition(strings, all: all), ifNil: nilAnswer)
            }
            let t = elementTest(p, constant, general)
            return .closure { root, _ throws(EvaluationError) in
                guard let xs = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try quantify(xs, all: all, t) } catch {
                    throw fallback.wrap(error)
                }
            }
        case .any(let get):
            // Arrays of strings are tested in place; anything else as the general path does.
            let quantified = strings.map { QuantifiedStringCondition($0, all: all) }
            return .closure { root, _ throws(EvaluationError) in
                guard let v = get(root) else { return try fallback.onNil() }
                if let quantified, type(of: v) == [String].self { return quantified.test(v as! [String]) }
                let value = Value(any: v)
                let elements: [Value]
                switch value {
                case .null: return try fallback.onNil()
                case .array(let e), .set(let e): elements = e
                default:
                    throw EvaluationError(
                        .notACollection(operation: all ? "ALL" : "ANY", value: value.description), range: lhsRange,
                        source: source)
                }
                do throws(EvaluationErrorKind) {
                    return try quantify(elements, all: all) { e throws(EvaluationErrorKind) in
                        try general(e, constant)
                    }
                } catch { throw fallback.wrap(error) }
            }
        default:
            // A scalar under ANY/ALL is the general path's error (not a collection).
            return nil
        }
    }

    /// `key op constant` over a reader of one value: a typed condition when the constant allows
    /// one, else a closure handing the read value to the general path.
    private static func scalar<Root>(
        _ reader: KeyReader<Root>, _ p: PrimitiveComparison, _ constant: Value, _ general: @escaping ValueTest,
        _ strings: StringCondition?, _ fallback: LeafFallback
    ) -> Step<Root>? {
        let nilAnswer = fallback.nilAnswer
        switch reader.storage {
        case .value, .strings:
            return nil
        case .integer(let get, let checks):
            if let c = integerCondition(p, constant), let nilAnswer { return .integer(checks, c, ifNil: nilAnswer) }
            return .closure { root, _ throws(EvaluationError) in
                guard let x = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try general(.integer(x), constant) } catch {
                    throw fallback.wrap(error)
                }
            }
        case .double(let get, let checks):
            if let c = doubleCondition(p, constant), let nilAnswer { return .double(checks, c, ifNil: nilAnswer) }
            return .closure { root, _ throws(EvaluationError) in
                guard let x = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try general(.double(x), constant) } catch {
                    throw fallback.wrap(error)
                }
            }
        case .bool(let get, let checks):
            if let c = boolCondition(p, constant), let nilAnswer { return .bool(checks, c, ifNil: nilAnswer) }
            return .closure { root, _ throws(EvaluationError) in
                guard let b = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try general(.bool(b), constant) } catch {
                    throw fallback.wrap(error)
                }
            }
        case .string(let get, let checks):
            if let strings, let nilAnswer { return .string(checks, strings, ifNil: nilAnswer) }
            let t = elementTest(p, constant, general)
            return .closure { root, _ throws(EvaluationError) in
                guard let s = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try t(s) } catch { throw fallback.wrap(error) }
            }
        case .date(let get):
            return .closure { root, _ throws(EvaluationError) in
                guard let d = get(root) else { return try fallback.onNil() }
                do throws(EvaluationErrorKind) { return try general(.date(d), constant) } catch {
                    throw fallback.wrap(error)
                }
            }
        case .any(let get):
            return untyped(get, p, constant, general, strings, fallback)
        }
    }

    /// Values of unknown type: the exact Swift types a condition tests are tested in place (a
    /// metadata comparison, then a cast that cannot fail); any other value, NSNumber included, is
    /// converted and tested as the general path does.
    private static func untyped<Root>(
        _ get: @escaping @Sendable (Root) -> Any?, _ p: PrimitiveComparison, _ constant: Value,
        _ general: @escaping ValueTest, _ strings: StringCondition?, _ fallback: LeafFallback
    ) -> Step<Root> {
        let integers = integerCondition(p, constant)
        let doubles = doubleCondition(p, constant)
        let bools = boolCondition(p, constant)
        return .closure { root, _ throws(EvaluationError) in
            guard let v = get(root) else { return try fallback.onNil() }
            let t = type(of: v)
            if t == Int.self, let integers { return integers.test(Int64(v as! Int)) }
            if t == String.self, let strings { return strings.test(v as! String) }
            if t == Double.self, let doubles { return doubles.test(v as! Double) }
            if t == Bool.self, let bools { return (v as! Bool) ? bools.ifTrue : bools.ifFalse }
            do throws(EvaluationErrorKind) { return try general(Value(any: v), constant) } catch {
                throw fallback.wrap(error)
            }
        }
    }

    /// The test of one string against the constant, as the general path answers it.
    private static func elementTest(_ p: PrimitiveComparison, _ constant: Value, _ general: @escaping ValueTest)
        -> @Sendable (String) throws(EvaluationErrorKind) -> Bool
    {
        if let c = stringCondition(p, constant) { return { c.test($0) } }
        return { s throws(EvaluationErrorKind) in try general(.string(s), constant) }
    }

    /// The hash keys of a constant IN list, or nil when an element has none (a nested
    /// collection), in which case membership takes the general path.
    private static func hashKeys(_ elements: [Value]) -> [HashKey]? {
        var keys: [HashKey] = []
        for e in elements {
            guard let k = HashKey(e) else { return nil }
            keys.append(k)
        }
        return keys
    }

    /// `x op k` for integer constants.
    static func integerCondition(_ p: PrimitiveComparison, _ constant: Value) -> IntegerCondition? {
        switch (p.op, constant) {
        case (.equal, .integer(let k)): return .equal(k)
        case (.notEqual, .integer(let k)): return .notEqual(k)
        case (.lessThan, .integer(let k)): return .less(k)
        case (.lessThanOrEqual, .integer(let k)): return .lessOrEqual(k)
        case (.greaterThan, .integer(let k)): return .greater(k)
        case (.greaterThanOrEqual, .integer(let k)): return .greaterOrEqual(k)
        case (.between, .array(let bounds)) where bounds.count == 2:
            guard case .integer(let a) = bounds[0], case .integer(let b) = bounds[1] else { return nil }
            return .between(min(a, b), max(a, b))
        case (.in, .array(let elements)), (.in, .set(let elements)):
            // Numbers equal integers by numeric value (1.0 and true hash as 1); nothing else does.
            return hashKeys(elements).map { keys in
                .member(Set(keys.compactMap { if case .integer(let i) = $0 { i } else { nil } }))
            }
        default:
            return nil
        }
    }

    /// `x op k` for doubles, when `k` is exactly a double and not NaN (integers up to 2⁵³).
    static func doubleCondition(_ p: PrimitiveComparison, _ constant: Value) -> DoubleCondition? {
        func exact(_ v: Value) -> Double? {
            switch v {
            case .double(let d) where !d.isNaN: d
            case .integer(let i) where i.magnitude <= 1 << 53: Double(i)
            default: nil
            }
        }
        switch p.op {
        case .lessThan: return exact(constant).map { .less($0) }
        case .lessThanOrEqual: return exact(constant).map { .lessOrEqual($0) }
        case .greaterThan: return exact(constant).map { .greater($0) }
        case .greaterThanOrEqual: return exact(constant).map { .greaterOrEqual($0) }
        case .between:
            guard case .array(let bounds) = constant, bounds.count == 2,
                let a = exact(bounds[0]), let b = exact(bounds[1])
            else { return nil }
            return .between(min(a, b), max(a, b))
        default: return nil
        }
    }

    /// `b == k` / `b != k` for Booleans: a Boolean equals a number when it is 1 (true) or 0 (false).
    static func boolCondition(_ p: PrimitiveComparison, _ constant: Value) -> BoolCondition? {
        guard p.op == .equal || p.op == .notEqual, let k = constant.number else { return nil }
        let expect = p.op == .equal
        return BoolCondition(
            ifTrue: (compareNumbers(.integer(1), k) == 0) == expect,
            ifFalse: (compareNumbers(.integer(0), k) == 0) == expect)
    }

    /// `s == k`, `s != k` without options, and `s IN {…}` (membership ignores options).
    static func stringCondition(_ p: PrimitiveComparison, _ constant: Value) -> StringCondition? {
        switch (p.op, constant) {
        case (.equal, .string(let k)) where !p.options.altersComparison:
            return .equal(k)
        case (.notEqual, .string(let k)) where !p.options.altersComparison:
            return .notEqual(k)
        case (.in, .array(let elements)), (.in, .set(let elements)):
            // A string equals only strings.
            return hashKeys(elements).map { keys in
                .member(Set(keys.compactMap { if case .string(let s) = $0 { s } else { nil } }))
            }
        default:
            return nil
        }
    }
}
