// The built-in functions (Predicate Semantics, "Built-in functions") and the registry behind
// FUNCTION(target, 'selector', …). Functions over collections follow `_NSPredicateUtilities`:
// `sum:` of nothing is 0, `min:`/`max:` of nothing is an error, every element must be a number. A
// nil argument is an error (Apple raises), unlike the KVC collection operators (`@sum`), which skip
// nils as KVC does.

import Foundation
import SiftSyntax
import SiftText

/// Functions an application makes callable as `FUNCTION(target, "selector", args…)`.
///
/// ```swift
/// var functions = FunctionRegistry()
/// functions.register("double:") { target, args in
///     guard case .integer(let i) = args.first else { throw FunctionError("double: needs an integer") }
///     return .integer(i * 2)
/// }
/// let p = try SiftPredicate("FUNCTION(SELF, 'double:', age) > 60",
///                           options: EvaluationOptions(functions: functions))
/// ```
public struct FunctionRegistry: Sendable {
    /// A registered function: called with `FUNCTION`'s target and its remaining arguments, evaluated.
    public typealias Function = @Sendable (_ target: Value, _ arguments: [Value]) throws -> Value
    private var functions: [String: Function] = [:]

    /// An empty registry.
    public init() {}

    /// Registers (or replaces) the function for `selector`.
    public mutating func register(_ selector: String, _ function: @escaping Function) {
        functions[selector] = function
    }

    /// The function registered for `selector`.
    public func function(for selector: String) -> Function? { functions[selector] }
}

/// An error a registered function throws to reject its arguments; the evaluator reports it as an
/// ``EvaluationErrorKind/invalidArgument(function:message:)`` error of the `FUNCTION` call.
///
/// ```swift
/// options.functions.register("double") { _, args in
///     guard case .integer(let i) = args.first else { throw FunctionError("needs an integer") }
///     return .integer(i * 2)
/// }
/// // FUNCTION(age, 'double', 'x') raises: double: needs an integer
/// ```
public struct FunctionError: SiftError, Hashable {
    /// The one kind: the function rejected its arguments.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The arguments are out of the function's domain.
        case invalidArgument = "invalid-argument"
    }

    /// Always ``Kind/invalidArgument``.
    public var kind: Kind { .invalidArgument }
    /// `invalid-argument`.
    public var id: String { kind.rawValue }
    /// Why the arguments were rejected; becomes the `invalid-argument` error's message.
    public var message: String

    /// An error with its message.
    ///
    /// ```swift
    /// throw FunctionError("double: needs an integer")
    /// ```
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

enum BuiltinFunctions {
    /// Calls the built-in `selector` with evaluated arguments.
    static func call(_ selector: String, _ args: [Value]) throws(EvaluationErrorKind) -> Value {
        // The name is for error messages (and min/max): not worth computing on every call.
        var name: String { String(selector.prefix { $0 != ":" }) }
        switch selector {
        case "now": return .date(Date())
        case "random": return .double(Double.random(in: 0..<1))
        case "sum:":
            let xs = try numbers(name, args[0])
            if xs.isEmpty { return .integer(0) }
            return Value(xs.dropFirst().reduce(xs[0]) { Arithmetic.combine($0, $1, { $0 &+ $1 }, +) })
        case "count:":
            return .integer(Int64(try collection(name, args[0]).count))
        case "min:", "max:":
            return try extreme(selector, try collection(name, args[0]))
        case "average:":
            let xs = try numbers(name, args[0])
            if xs.isEmpty { return .null }
            return .double(xs.reduce(0) { $0 + $1.doubleValue } / Double(xs.count))
        case "median:":
            return median(try numbers(name, args[0]))
        case "mode:":
            return mode(try collection(name, args[0]))
        case "stddev:":
            let xs = try numbers(name, args[0]).map(\.doubleValue)
            if xs.isEmpty { return .null }
            let mean = xs.reduce(0, +) / Double(xs.count)
            return .double((xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(xs.count)).squareRoot())
        case "sqrt:": return .double(try number(name, args[0]).doubleValue.squareRoot())
        case "log:": return .double(log10(try number(name, args[0]).doubleValue))
        case "ln:": return .double(log(try number(name, args[0]).doubleValue))
        case "exp:": return .double(exp(try number(name, args[0]).doubleValue))
        case "floor:": return .double(try number(name, args[0]).doubleValue.rounded(.down))
        case "ceiling:": return .double(try number(name, args[0]).doubleValue.rounded(.up))
        case "trunc:": return .double(try number(name, args[0]).doubleValue.rounded(.towardZero))
        case "abs:":
            switch try number(name, args[0]) {
            case .integer(let i): return .integer(i == .min ? i : Swift.abs(i))
            case .double(let d): return .double(Swift.abs(d))
            }
        case "onesComplement:":
            return .integer(~Arithmetic.integerValue(try number(name, args[0])))
        case "modulus:by:":
            let (a, b) = (try number(name, args[0]), try number(name, args[1]))
            return Value(Arithmetic.combine(a, b, Arithmetic.integerModulus, fmod))
        case "randomn:":
            let n = Arithmetic.integerValue(try number(name, args[0]))
            guard n > 0 else { throw .invalidArgument(function: selector, message: "needs a positive bound, got \(n)") }
            return .integer(Int64.random(in: 0..<n))
        case "uppercase:": return .string(try string(name, args[0]).uppercased())
        case "lowercase:": return .string(try string(name, args[0]).lowercased())
        case "length:":
            return .integer(Int64(try string(name, args[0]).precomposedStringWithCanonicalMapping.unicodeScalars.count))
        case "canonical:":
            return .string(TextFolding.fold(try string(name, args[0]), [.caseInsensitive, .diacriticInsensitive]))
        case "noindex:", "indexed:by:":
            return args[0]
        case "groupConcat:separator:":
            let xs = try collection(name, args[0])
            let sep = try string(name, args[1])
            return .string(xs.filter { !$0.isNull }.map(\.stringDescription).joined(separator: sep))
        default:
            throw .invalidArgument(function: selector, message: "is not implemented")
        }
    }

    /// `min:`/`max:` of a collection, compared as the comparison operators do; nil among the
    /// elements raises.
    private static func extreme(_ selector: String, _ xs: [Value]) throws(EvaluationErrorKind) -> Value {
        guard var best = xs.first else { throw .emptyCollection(selector) }
        let cmp = PrimitiveComparison(op: .lessThan, options: [], utis: .standard)
        for x in xs.dropFirst() {
            if x.isNull || best.isNull { throw .notANumber(operation: selector, value: "nil") }
            let o = try cmp.order(x, best)
            if selector == "min:" ? o < 0 : o > 0 { best = x }
        }
        return best
    }

    /// `median:` of numbers: the middle one, or the mean of the two middle ones (two integers
    /// averaged without overflow); nil for none.
    private static func median(_ numbers: [Number]) -> Value {
        let xs = numbers.sorted { compareNumbers($0, $1) < 0 }
        if xs.isEmpty { return .null }
        if xs.count % 2 == 1 { return Value(xs[xs.count / 2]) }
        let (a, b) = (xs[xs.count / 2 - 1], xs[xs.count / 2])
        if case .integer(let x) = a, case .integer(let y) = b {
            return .integer(
                x.addingReportingOverflow(y).overflow ? Int64((Double(x) + Double(y)) / 2) : (x + y) / 2)
        }
        return .double((a.doubleValue + b.doubleValue) / 2)
    }

    /// `mode:`: the most frequent values, in the order each first appears.
    private static func mode(_ xs: [Value]) -> Value {
        var counts: [(Value, Int)] = []
        for x in xs {
            if let i = counts.firstIndex(where: { $0.0.isEqual(to: x) }) {
                counts[i].1 += 1
            } else {
                counts.append((x, 1))
            }
        }
        let top = counts.map(\.1).max() ?? 0
        return .array(counts.filter { $0.1 == top }.map(\.0))
    }

    static func number(_ f: @autoclosure () -> String, _ v: Value) throws(EvaluationErrorKind) -> Number {
        guard let n = v.number else { throw .notANumber(operation: f(), value: v.description) }
        return n
    }

    static func string(_ f: @autoclosure () -> String, _ v: Value) throws(EvaluationErrorKind) -> String {
        guard case .string(let s) = v else { throw .notAString(operation: f(), value: v.description) }
        return s
    }

    static func collection(_ f: @autoclosure () -> String, _ v: Value) throws(EvaluationErrorKind) -> [Value] {
        switch v {
        case .array(let a), .set(let a): return a
        case .dictionary(let d): return Array(d.values)
        default: throw .notACollection(operation: f(), value: v.description)
        }
    }

    static func numbers(_ f: @autoclosure () -> String, _ v: Value) throws(EvaluationErrorKind) -> [Number] {
        var out: [Number] = []
        for x in try collection(f(), v) {
            guard let n = x.number else { throw .notANumber(operation: f(), value: x.description) }
            out.append(n)
        }
        return out
    }
}
