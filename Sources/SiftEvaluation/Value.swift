// The values a predicate sees while it is evaluated. Everything a user hands to Sift (dictionaries,
// JSON, Codable values, plain structs, NSNumber, NSNull…) is read through this one enum, so the
// operators are written once, against a closed set of cases, with Apple's rules: numbers compare
// numerically across integer, double and Bool (NSNumber), strings never compare equal to numbers,
// and JSON null, NSNull, a missing key and nil are the same `.null`.

import Foundation
import SiftSyntax
import SiftText

/// A value as a predicate sees it.
///
/// ```swift
/// let v = Value(any: ["name": "Ann", "age": 41] as [String: Any])
/// try v.value(forKey: "age")        // .integer(41)
/// Value.integer(1) == Value.double(1.0)   // true: numbers compare numerically
/// ```
///
/// `Value` is `@unchecked Sendable`: every case but `.object` is a value type, and a compiled
/// predicate only ever stores values built from literals (never `.object`), so compiled predicates
/// are safe to share between threads. A `.object` value is as thread-safe as the object it wraps.
public enum Value: @unchecked Sendable {
    /// nil: a missing key, JSON null, `NSNull`, or a nil optional.
    case null
    /// A Boolean; compares numerically with numbers (`true == 1`).
    case bool(Bool)
    /// A 64-bit integer.
    case integer(Int64)
    /// A double.
    case double(Double)
    /// A `Decimal`; compared with other numbers as a double.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An ordered collection (arrays, JSON arrays, the result of a SUBQUERY).
    case array([Value])
    /// An unordered collection of distinct values (Swift `Set`, `NSSet`).
    case set([Value])
    /// A dictionary with string keys; a missing key reads as `.null`.
    case dictionary([String: Value])
    /// Anything else that answers keys: `[String: Any]`, user types conforming to
    /// ``KeyValueCoding``, and the reflection fallback for plain structs.
    case object(any KeyValueReading)

    /// Whether the value is nil (`.null`).
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The elements when the value is an array or set, else nil.
    public var collectionElements: [Value]? {
        switch self {
        case .array(let a), .set(let a): a
        default: nil
        }
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .bool: "boolean"
        case .integer, .double, .decimal: "number"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .set: "set"
        case .dictionary: "dictionary"
        case .object(let o): "object of type \(type(of: o))"
        }
    }
}

// MARK: - Literals

extension Value {
    /// The value of a predicate constant.
    public init(_ literal: LiteralValue) {
        switch literal {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .double(let d): self = .double(d)
        case .decimal(let d): self = .decimal(d)
        case .string(let s): self = .string(s)
        case .date(let d): self = .date(d)
        case .data(let d): self = .data(d)
        // Constant arrays nest as deeply as aggregates: check the stack (`StackGuard`).
        case .array(let a): self = StackGuard.ensure { .array(a.map(Value.init)) }
        case .dictionary(let d): self = .dictionary(d.mapValues(Value.init))
        case .object(let r): self = .object(r)
        }
    }

    /// The constant for this value, or nil for an object (which has no literal form).
    public var literal: LiteralValue? {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        case .string(let s): return .string(s)
        case .date(let d): return .date(d)
        case .data(let d): return .data(d)
        case .array(let a), .set(let a):
            var out: [LiteralValue] = []
            out.reserveCapacity(a.count)
            for e in a {
                guard let l = e.literal else { return nil }
                out.append(l)
            }
            return .array(out)
        case .dictionary(let d):
            var out: [String: LiteralValue] = [:]
            for (k, v) in d {
                guard let l = v.literal else { return nil }
                out[k] = l
            }
            return .dictionary(out)
        case .object: return nil
        }
    }
}

// MARK: - Numbers

/// A number in the arithmetic type Foundation would use for it: signed integer or double.
/// (Decimals are computed as doubles; Bool is the integer 0 or 1, as an NSNumber.)
enum Number {
    case integer(Int64)
    case double(Double)

    var doubleValue: Double {
        switch self {
        case .integer(let i): Double(i)
        case .double(let d): d
        }
    }
}

extension Value {
    /// The number this value stands for, if it is one (Bool counts, as NSNumber does).
    var number: Number? {
        switch self {
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .bool(let b): .integer(b ? 1 : 0)
        case .decimal(let d): .double(NSDecimalNumber(decimal: d).doubleValue)
        default: nil
        }
    }

    /// Builds the value of an arithmetic result.
    init(_ number: Number) {
        switch number {
        case .integer(let i): self = .integer(i)
        case .double(let d): self = .double(d)
        }
    }
}

/// Compares an integer with a double exactly (no rounding of large integers).
@inline(__always)
func compareNumbers(_ a: Number, _ b: Number) -> Int {
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : (x > y ? 1 : compareNaN(x, y)))
    case (.integer(let x), .double(let y)): return -compareExactly(y, x)
    case (.double(let x), .integer(let y)): return compareExactly(x, y)
    }
}

/// NaN sorts below every number and equal to itself, as NSNumber's compare: does.
private func compareNaN(_ x: Double, _ y: Double) -> Int {
    switch (x.isNaN, y.isNaN) {
    case (true, true): 0
    case (true, false): -1
    default: 1
    }
}

// MARK: - Equality and ordering

extension Value {
    /// Apple's `isEqual:` as predicates use it: numbers numerically across integer, double and
    /// Bool; strings by canonical equivalence; collections element by element (sets regardless of
    /// order); never a number equal to a string.
    public func isEqual(to other: Value) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let a), .string(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEqual(to: $1) }
        case (.set(let a), .set(let b)):
            return a.count == b.count && a.allSatisfy { x in b.contains { x.isEqual(to: $0) } }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { k, v in b[k].map { v.isEqual(to: $0) } ?? false }
        case (.object(let a), .object(let b)):
            // Objects are equal when they are the same instance, or when both can list their
            // contents (dictionaries) and those are equal.
            if type(of: a) is AnyClass, type(of: b) is AnyClass, (a as AnyObject) === (b as AnyObject) { return true }
            // Store objects (and references to them from `%@`) are equal when they name the same object.
            if let x = a as? any PredicateArgumentConvertible, let y = b as? any PredicateArgumentConvertible,
                case .object(let p) = x.predicateArgument, case .object(let q) = y.predicateArgument
            {
                return p == q
            }
            if let x = a.dictionaryValue, let y = b.dictionaryValue {
                return Value.dictionary(x).isEqual(to: .dictionary(y))
            }
            return false
        case (.object(let a), .dictionary(_)):
            return a.dictionaryValue.map { Value.dictionary($0).isEqual(to: other) } ?? false
        case (.dictionary(_), .object(let b)):
            return b.dictionaryValue.map { self.isEqual(to: .dictionary($0)) } ?? false
        default:
            if let x = number, let y = other.number { return compareNumbers(x, y) == 0 }
            return false
        }
    }

    /// The order of two values as `compare:` gives it (-1, 0, 1), or nil when they cannot be
    /// ordered: numbers with numbers, strings with strings (Unicode scalar order of the NFC forms),
    /// dates with dates, data byte-wise.
    public func order(comparedTo other: Value) -> Int? {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.date(let a), .date(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.data(let a), .data(let b)):
            return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        default:
            if let x = number, let y = other.number { return compareNumbers(x, y) }
            return nil
        }
    }
}

extension Value: Equatable {
    /// Same as ``isEqual(to:)``.
    public static func == (lhs: Value, rhs: Value) -> Bool { lhs.isEqual(to: rhs) }
}

// MARK: - Printing

extension Value: CustomStringConvertible {
    /// The value as it would be written in a predicate (strings quoted, arrays in braces).
    public var description: String {
        switch self {
        case .object(let r as ObjectReference): return "<\(r.uri)>"
        case .object(let o): return "<\(type(of: o))>"
        case .set(let a): return "{" + a.map(\.description).joined(separator: ", ") + "}"
        case .array(let a): return "{" + a.map(\.description).joined(separator: ", ") + "}"
        case .dictionary(let d):
            return "{" + d.keys.sorted().map { "\"\($0)\" = \(d[$0]!.description)" }.joined(separator: ", ") + "}"
        default:
            return ExpressionSyntax(.constant(value: literal ?? .null)).description
        }
    }

    /// The text `CAST(x, "NSString")` gives: a string as is, numbers and dates as Foundation
    /// describes them.
    var stringDescription: String {
        switch self {
        case .string(let s): return s
        case .null: return "nil"
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .double(let d):
            if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return String(d)
        case .decimal(let d): return NSDecimalNumber(decimal: d).stringValue
        case .date(let d):
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: d)
        default: return description
        }
    }
}
