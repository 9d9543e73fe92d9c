// The one catalog of evaluation errors. Each has a stable identifier (used by the golden corpus and
// `sift batch`), a lower-case message that names the values involved, and the source range of the
// part of the predicate that failed, so a caller can point at it the way syntax errors do.

import Foundation
import SiftSyntax
import SiftText

/// What went wrong while evaluating a predicate.
public enum EvaluationErrorKind: Error, Hashable, Sendable {
    /// `$name` has no binding.
    case unboundVariable(String)
    /// `<`, `<=`, `>`, `>=`, BETWEEN or @min/@max between values that have no order.
    case incomparableValues(String, String)
    /// A string operator (or `IN` a string) met a value that is not a string.
    case notAString(operation: String, value: String)
    /// ANY/ALL, IN/CONTAINS, SUBQUERY, an index or a collection function met a non-collection.
    case notACollection(operation: String, value: String)
    /// BETWEEN's right-hand side is not an array of two values.
    case invalidBetweenBounds(String)
    /// Arithmetic, a bitwise operator or a numeric function met a value that is not a number.
    case notANumber(operation: String, value: String)
    /// A LIKE pattern ends with an unescaped backslash.
    case invalidLikePattern(String)
    /// A MATCHES pattern does not compile.
    case invalidRegex(String)
    /// A MATCHES pattern exceeded the match or depth limit.
    case regexLimit(String)
    /// An index outside the array.
    case indexOutOfRange(index: String, count: Int)
    /// The key is not a property of the value.
    case unknownKey(key: String, type: String)
    /// `min:`/`max:` of an empty collection.
    case emptyCollection(String)
    /// CAST to an unknown type, or a value that cannot be converted.
    case invalidCast(value: String, type: String)
    /// FUNCTION(…) with a selector no one registered.
    case unknownFunction(String)
    /// A function's argument is out of its domain (or a registered function failed).
    case invalidArgument(function: String, message: String)

    /// The stable identifier, e.g. `incomparable-values`.
    public var id: String {
        switch self {
        case .unboundVariable: "unbound-variable"
        case .incomparableValues: "incomparable-values"
        case .notAString: "not-a-string"
        case .notACollection: "not-a-collection"
        case .invalidBetweenBounds: "invalid-between-bounds"
        case .notANumber: "not-a-number"
        case .invalidLikePattern: "invalid-like-pattern"
        case .invalidRegex: "invalid-regex"
        case .regexLimit: "regex-limit"
        case .indexOutOfRange: "index-out-of-range"
        case .unknownKey: "unknown-key"
        case .emptyCollection: "empty-collection"
        case .invalidCast: "invalid-cast"
        case .unknownFunction: "unknown-function"
        case .invalidArgument: "invalid-argument"
        }
    }

    /// The message, lower-case, values quoted as the predicate would write them.
    public var message: String {
        switch self {
        case .unboundVariable(let n): "variable '$\(n)' is not bound"
        case .incomparableValues(let a, let b): "cannot order \(a) and \(b)"
        case .notAString(let op, let v): "\(op) needs strings, got \(v)"
        case .notACollection(let op, let v): "\(op) needs a collection, got \(v)"
        case .invalidBetweenBounds(let v): "BETWEEN needs an array of two bounds, got \(v)"
        case .notANumber(let op, let v): "\(op) needs numbers, got \(v)"
        case .invalidLikePattern(let m): m
        case .invalidRegex(let m): m
        case .regexLimit(let m): m
        case .indexOutOfRange(let i, let n): "index \(i) is out of range for a collection of \(n) elements"
        case .unknownKey(let k, let t): "\(t) has no key '\(k)'"
        case .emptyCollection(let f): "\(f) of an empty collection"
        case .invalidCast(let v, let t): "cannot cast \(v) to '\(t)'"
        case .unknownFunction(let s): "no function is registered for '\(s)'"
        case .invalidArgument(let f, let m): "\(f): \(m)"
        }
    }

    init(_ e: TextError) {
        switch e.kind {
        case .likeTrailingBackslash: self = .invalidLikePattern(e.message)
        case .invalidRegex: self = .invalidRegex(e.message)
        case .regexLimitExceeded: self = .regexLimit(e.message)
        }
    }
}

/// An evaluation error with the place in the predicate that raised it.
///
/// ```swift
/// do { _ = try SiftPredicate("name < 5").evaluate(with: ["name": "Ann"]) }
/// catch let e as EvaluationError {
///     print(e)      // 1:1: error: cannot order "Ann" and 5
///     print(e.id)   // incomparable-values
/// }
/// ```
public struct EvaluationError: SiftError, Hashable {
    /// What went wrong, with the values involved.
    public var kind: EvaluationErrorKind
    /// The UTF-8 range of the failing node in the predicate's source (when it was parsed).
    public var range: SourceRange
    /// The predicate's source text, when known, for `line:column` and the caret line.
    public var source: String?

    /// An error of `kind` at `range`; pass the predicate's `source` for `line:column` and the caret line.
    public init(_ kind: EvaluationErrorKind, range: SourceRange, source: String? = nil) {
        self.kind = kind
        self.range = range
        self.source = source
    }

    /// The stable identifier of the kind, e.g. `incomparable-values`.
    public var id: String { kind.id }
    /// The message without position, e.g. `cannot order "Ann" and 5`.
    public var message: String { kind.message }

    /// `line:column` of the failing node, when the source is known.
    public var location: SourceLocation? {
        source.map { SourceText($0).location(of: range.lowerBound) }
    }

    /// `1:7: error: cannot order "Ann" and 5`.
    public var description: String {
        if let location { return "\(location): error: \(message)" }
        return "error: \(message)"
    }

    /// The description followed by the source line and a caret under the failing node.
    public var annotated: String {
        guard let source, let location else { return description }
        let text = SourceText(source)
        let line = text.line(location.line)
        let end = text.location(of: max(range.lowerBound, range.upperBound))
        let width = end.line == location.line ? max(1, end.column - location.column) : 1
        let caret = String(repeating: " ", count: location.column - 1) + "^" + String(repeating: "~", count: width - 1)
        return "\(description)\n\(line)\n\(caret)"
    }
}
