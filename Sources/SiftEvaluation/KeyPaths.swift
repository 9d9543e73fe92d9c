// Key-path steps, KVC collection operators and subscripts, as Apple's key-value coding applies them
// inside predicates (Predicate Semantics, "Key paths and collections"): a key on nil is nil, a key
// on an array maps over it, `@count` of nil is nil, `@sum` of nothing is 0, `@avg`/`@min`/`@max` of
// nothing are nil, and the union operators drop nils. Subscripts follow `objectFrom:withIndex:`.

import Foundation
import SiftSyntax

enum KeyPaths {
    /// Reads `key` from `value`.
    @inline(__always)
    static func step(_ value: Value, _ key: String, _ range: SourceRange, _ source: String?) throws(EvaluationError)
        -> Value
    {
        switch value {
        case .null: return .null
        case .dictionary(let d): return d[key] ?? .null
        default:
            do { return try value.value(forKey: key) } catch {
                throw EvaluationError(kind(of: error, key: key, value: value), range: range, source: source)
            }
        }
    }

    /// The error for a key a root reader failed to read.
    static func readError(_ error: any Error, key: String, typeName: String, _ range: SourceRange, _ source: String?)
        -> EvaluationError
    {
        switch error {
        case let e as EvaluationError: e
        case let e as KeyValueCodingError: EvaluationError(e.evaluationKind, range: range, source: source)
        default: EvaluationError(.unknownKey(key: key, type: typeName), range: range, source: source)
        }
    }

    private static func kind(of error: any Error, key: String, value: Value) -> EvaluationErrorKind {
        switch error {
        case let e as EvaluationError: e.kind
        case let e as KeyValueCodingError: e.evaluationKind
        default: .unknownKey(key: key, type: value.kindName)
        }
    }

    /// Applies a collection operator (`@count`, `@sum`, …) to `collection`; `element` reads the
    /// rest of the path from each element (nil means the elements themselves).
    static func collectionOperator(
        _ op: String, _ collection: Value, _ element: ExpressionFn?, _ scope: inout Scope,
        _ range: SourceRange, _ source: String?
    ) throws(EvaluationError) -> Value {
        func fail(_ k: EvaluationErrorKind) -> EvaluationError { EvaluationError(k, range: range, source: source) }
        if collection.isNull { return .null }
        if op == "@count" {
            switch collection {
            case .array(let a), .set(let a): return .integer(Int64(a.count))
            case .dictionary(let d): return .integer(Int64(d.count))
            case .object(let o):
                if let d = o.dictionaryValue { return .integer(Int64(d.count)) }
            default: break
            }
            throw fail(.notACollection(operation: op, value: collection.description))
        }
        guard let elements = collection.collectionElements else {
            throw fail(.notACollection(operation: op, value: collection.description))
        }
        var values: [Value] = []
        values.reserveCapacity(elements.count)
        for e in elements {
            var e = e
            let v = try element?(&e, &scope) ?? e
            values.append(v)
        }
        let present = values.filter { !$0.isNull }
        switch op {
        case "@sum", "@avg":
            var numbers: [Number] = []
            for v in present {
                guard let n = v.number else { throw fail(.notANumber(operation: op, value: v.description)) }
                numbers.append(n)
            }
            if op == "@avg" {
                if numbers.isEmpty { return .null }
                return .double(numbers.reduce(0) { $0 + $1.doubleValue } / Double(numbers.count))
            }
            guard let first = numbers.first else { return .integer(0) }
            return Value(numbers.dropFirst().reduce(first) { Arithmetic.combine($0, $1, { $0 &+ $1 }, +) })
        case "@min", "@max":
            guard var best = present.first else { return .null }
            let cmp = PrimitiveComparison(op: .lessThan, options: [], utis: .standard)
            for v in present.dropFirst() {
                let o: Int
                do { o = try cmp.order(v, best) } catch { throw fail(error) }
                if op == "@min" ? o < 0 : o > 0 { best = v }
            }
            return best
        case "@unionOfObjects":
            return .array(present)
        case "@distinctUnionOfObjects":
            return .array(Value.distinct(present))
        case "@unionOfArrays", "@distinctUnionOfArrays", "@unionOfSets", "@distinctUnionOfSets":
            var flat: [Value] = []
            for v in present {
                guard let inner = v.collectionElements else {
                    throw fail(.notACollection(operation: op, value: v.description))
                }
                flat.append(contentsOf: inner.filter { !$0.isNull })
            }
            if op == "@unionOfArrays" { return .array(flat) }
            return op == "@distinctUnionOfArrays" ? .array(Value.distinct(flat)) : .set(Value.distinct(flat))
        default:
            throw fail(.unknownKey(key: op, type: collection.kindName))
        }
    }

    /// `base[index]`, `base[FIRST]`, `base[LAST]`, `base[SIZE]`.
    static func index(_ base: Value, _ index: IndexSyntax, _ subscriptValue: Value?) throws(EvaluationErrorKind)
        -> Value
    {
        switch base {
        case .null:
            return .null
        case .array(let a):
            switch index {
            case .first: return a.first ?? .null
            case .last: return a.last ?? .null
            case .size: return .integer(Int64(a.count))
            case .expression:
                let i = subscriptValue ?? .null
                guard let n = i.number else { throw .notANumber(operation: "index", value: i.description) }
                let k = Arithmetic.integerValue(n)
                guard k >= 0, k < a.count else { throw .indexOutOfRange(index: i.description, count: a.count) }
                return a[Int(k)]
            }
        case .set(let a):
            switch index {
            case .first, .last: return a.first ?? .null
            case .size: return .integer(Int64(a.count))
            case .expression:
                let i = subscriptValue ?? .null
                return a.first { $0.isEqual(to: i) } ?? .null
            }
        default:
            guard let d = base.dictionaryContent else {
                if case .object(let o) = base, case .expression = index, case .string(let key)? = subscriptValue {
                    do { return try o.value(forKey: key) } catch { throw .unknownKey(key: key, type: base.kindName) }
                }
                throw .notACollection(operation: "index", value: base.description)
            }
            // Dictionary keys have no order of their own; FIRST and LAST use sorted keys so the
            // answer is at least stable.
            switch index {
            case .first: return d.keys.min().map { d[$0]! } ?? .null
            case .last: return d.keys.max().map { d[$0]! } ?? .null
            case .size: return .integer(Int64(d.count))
            case .expression:
                let i = subscriptValue ?? .null
                guard case .string(let key) = i else {
                    if i.isNull { return .null }
                    throw .notAString(operation: "index", value: i.description)
                }
                return d[key] ?? .null
            }
        }
    }
}

/// CAST(value, "Type") (Predicate Semantics, "CAST"): NSString, NSNumber, NSDate, NSDecimalNumber.
enum Cast {
    static func cast(_ v: Value, to typeValue: Value) throws(EvaluationErrorKind) -> Value {
        guard case .string(let type) = typeValue else {
            throw .invalidCast(value: v.description, type: typeValue.description)
        }
        if v.isNull { return .null }
        switch type {
        case "NSString":
            return .string(v.stringDescription)
        case "NSNumber":
            switch v {
            case .integer, .double, .bool: return v
            case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue)
            case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
            case .string(let s):
                let t = s.trimmingCharacters(in: .whitespaces)
                if !t.contains("."), !t.lowercased().contains("e"), let i = Int64(t) { return .integer(i) }
                if let d = Double(t), !t.isEmpty, t.lowercased() != "nan", !t.lowercased().contains("inf") {
                    return .double(d)
                }
                throw .invalidCast(value: v.description, type: type)
            default: throw .invalidCast(value: v.description, type: type)
            }
        case "NSDate":
            switch v {
            case .date: return v
            case .string(let s):
                let f = ISO8601DateFormatter()
                if let d = f.date(from: s) { return .date(d) }
                f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                if let d = f.date(from: s) { return .date(d) }
                f.formatOptions = [.withFullDate]
                if let d = f.date(from: s) { return .date(d) }
                throw .invalidCast(value: v.description, type: type)
            default:
                guard let n = v.number else { throw .invalidCast(value: v.description, type: type) }
                return .date(Date(timeIntervalSinceReferenceDate: n.doubleValue))
            }
        case "NSDecimalNumber":
            switch v {
            case .decimal: return v
            case .integer(let i): return .decimal(Decimal(i))
            case .double(let d): return .decimal(Decimal(d))
            case .bool(let b): return .decimal(b ? 1 : 0)
            case .string(let s):
                guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw .invalidCast(value: v.description, type: type)
                }
                return .decimal(d)
            default: throw .invalidCast(value: v.description, type: type)
            }
        default:
            throw .invalidCast(value: v.description, type: type)
        }
    }
}

extension KeyValueCodingError {
    /// The evaluator's error for this one.
    var evaluationKind: EvaluationErrorKind {
        switch kind {
        case .unknownKey(let key, let type): .unknownKey(key: key, type: type)
        }
    }
}
