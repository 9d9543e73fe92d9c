// The evaluation API users call first: build a predicate once from a format string (or a parsed
// tree), then evaluate it against any number of objects, or filter and sort collections with it.
// Named `SiftPredicate` so it never clashes with Foundation's `Predicate` macro type.

import Foundation
import SiftSyntax

/// A compiled predicate, ready to evaluate against many objects.
///
/// ```swift
/// let p = try SiftPredicate("age > %@ AND name BEGINSWITH[cd] %@", 30, "jo")
/// try p.evaluate(with: ["name": "José", "age": 41])          // true
/// let adults = try people.filter(p)                           // [[String: Any]] in, same out
/// let q = try SiftPredicate("score >= $min")
/// try q.evaluate(with: ["score": 12], variables: ["min": 10])  // true
/// ```
///
/// Compiling parses the format, then turns the tree into closures once: key paths are split,
/// constants converted, string constants folded for `[c]`/`[d]`, LIKE and MATCHES patterns
/// compiled, constant IN lists hashed. A `SiftPredicate` is immutable and safe to share between
/// threads.
public struct SiftPredicate: Sendable, CustomStringConvertible {
    /// The parsed predicate.
    public let syntax: PredicateSyntax
    /// The options it was compiled with.
    public let options: EvaluationOptions
    private let test: PredicateFn

    /// Parses `format`, substituting `arguments` for `%@`, `%K`, `%d`… left to right, and compiles it.
    public init(_ format: String, _ arguments: Any?..., options: EvaluationOptions = EvaluationOptions()) throws(SyntaxError) {
        try self.init(format: format, arguments: arguments, options: options)
    }

    /// Parses `format` with an argument array and compiles it.
    public init(format: String, arguments: [Any?], options: EvaluationOptions = EvaluationOptions()) throws(SyntaxError) {
        let syntax = try PredicateSyntax.parse(format, arguments: arguments)
        self.init(syntax, source: format, options: options)
    }

    /// Compiles an already parsed predicate. `source`, when given, is the text the tree was parsed
    /// from, so evaluation errors can report `line:column`.
    public init(_ syntax: PredicateSyntax, source: String? = nil, options: EvaluationOptions = EvaluationOptions()) {
        self.syntax = syntax
        self.options = options
        self.test = Compiler(options: options, source: source).predicate(syntax)
    }

    /// The canonical form of the predicate.
    public var description: String { syntax.description }

    /// Evaluates the predicate with `object` as `SELF`; `variables` bind `$name`s.
    public func evaluate(with object: Any?, variables: [String: Any] = [:]) throws(EvaluationError) -> Bool {
        try evaluate(with: Value(any: object), variables: variables.mapValues { Value(any: $0) })
    }

    /// Evaluates the predicate against a type that answers keys itself (no conversion needed).
    public func evaluate(with object: some KeyValueCoding, variables: [String: Value] = [:]) throws(EvaluationError) -> Bool {
        try evaluate(with: .object(object), variables: variables)
    }

    /// Evaluates the predicate against a ``Value``.
    public func evaluate(with value: Value, variables: [String: Value] = [:]) throws(EvaluationError) -> Bool {
        var scope = Scope(variables: variables)
        return try test(value, &scope)
    }
}

extension Sequence {
    /// The elements for which `predicate` is true, in order.
    ///
    /// ```swift
    /// let people: [[String: Any]] = [["name": "Ann", "age": 41], ["name": "Bo", "age": 7]]
    /// try people.filter(SiftPredicate("age >= 18"))   // [["name": "Ann", "age": 41]]
    /// ```
    public func filter(_ predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element] {
        let bound = variables.mapValues { Value(any: $0) }
        var out: [Element] = []
        for element in self where try predicate.evaluate(with: Value(any: element), variables: bound) {
            out.append(element)
        }
        return out
    }

    /// Same as ``filter(_:variables:)``, under Foundation's name.
    public func filtered(using predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element] {
        try filter(predicate, variables: variables)
    }
}

extension Sequence where Element: KeyValueCoding {
    /// The elements for which `predicate` is true; elements answer keys directly.
    public func filter(_ predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element] {
        let bound = variables.mapValues { Value(any: $0) }
        var out: [Element] = []
        for element in self where try predicate.evaluate(with: .object(element), variables: bound) {
            out.append(element)
        }
        return out
    }

    /// Same as ``filter(_:variables:)``, under Foundation's name.
    public func filtered(using predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element] {
        try filter(predicate, variables: variables)
    }
}
