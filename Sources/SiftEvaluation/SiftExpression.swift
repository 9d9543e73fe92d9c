// Expressions evaluated on their own, outside a comparison, and the built-in functions and casts
// called by name. Other back-ends use these to compute exactly what memory computes: the SQL
// lowering folds a subexpression that reads no object into one bound value, and SQLite calls the
// built-in functions and casts row by row through a registered SQL function. One implementation of
// each function serves every back-end, so they cannot drift apart.

import Foundation
import SiftSyntax
import SiftText

/// An expression of the predicate language, compiled once, evaluated against values.
///
/// ```swift
/// let e = SiftExpression(try ExpressionSyntax.parse("sqrt:(16) + age"))
/// try e.evaluate(with: .dictionary(["age": .integer(2)]))   // .double(6.0)
/// ```
public struct SiftExpression: Sendable, CustomStringConvertible {
    /// The parsed expression.
    public let syntax: ExpressionSyntax
    /// The text it was parsed from, for `line:column` in errors.
    public let source: String?
    private let compute: Expr<Value>

    /// Compiles a parsed expression; `source` is its text, for `line:column` in errors.
    ///
    /// ```swift
    /// let e = SiftExpression(try ExpressionSyntax.parse("2 + 3"))
    /// try e.evaluate()   // .integer(5)
    /// ```
    public init(_ syntax: ExpressionSyntax, source: String? = nil, options: EvaluationOptions = EvaluationOptions()) {
        self.syntax = syntax
        self.source = source
        self.compute = Compiler<Value>(options: options, source: source, access: .value).expression(syntax)
    }

    /// The canonical form of the expression.
    public var description: String { syntax.description }

    /// The value of the expression with `object` as `SELF` (nil by default) and `variables`
    /// binding `$name`s. Errors are those a predicate using the expression would raise.
    public func evaluate(with object: Value = .null, variables: [String: Value] = [:]) throws(EvaluationError) -> Value
    {
        var scope = Scope(variables: variables)
        var root = object
        return try compute(&root, &scope)
    }

    /// Whether the expression reads nothing but constants: no key path, `SELF`, variable,
    /// SUBQUERY, assignment, TERNARY, application function, nor `now()` / `random()` /
    /// `randomn:`, whose values change between calls. Such an expression has one value.
    public var isConstant: Bool { syntax.isConstantFoldable }
}

/// The built-in functions and `CAST`, called by name with evaluated arguments.
///
/// ```swift
/// try Builtins.call("sqrt:", [.integer(16)])            // .double(4.0)
/// try Builtins.cast(.string("42"), to: "NSNumber")      // .integer(42)
/// ```
package enum Builtins {
    /// Calls the built-in function `selector` (or an operator's selector, `raise:toPower:`) with
    /// `arguments`, exactly as a predicate does.
    /// An unknown selector or a wrong number of arguments is `invalid-argument`.
    package static func call(_ selector: String, _ arguments: [Value]) throws(EvaluationErrorKind) -> Value {
        guard let f = BuiltinFunction.all[selector] else { throw .unknownFunction(selector) }
        guard arguments.count == f.arity else {
            throw .invalidArgument(
                function: selector,
                message: "takes \(f.arity) argument\(f.arity == 1 ? "" : "s"), got \(arguments.count)")
        }
        // The parser turns operator selectors (`add:to:`, `raise:toPower:`) into operators.
        if let op = BinaryOperator.allCases.first(where: { $0.selector == selector }) {
            return try Arithmetic.binary(op, arguments[0], arguments[1])
        }
        return try BuiltinFunctions.call(selector, arguments)
    }

    /// A collection operator (`@max`, `@sum`, …) applied to `collection`, exactly as a key path does.
    package static func collectionOperator(_ op: String, _ collection: Value) throws(EvaluationErrorKind) -> Value {
        var scope = Scope(variables: [:])
        do { return try KeyPaths.collectionOperator(op, collection, nil, &scope, SourceRange(0, 0), nil) } catch {
            throw error.kind
        }
    }

    /// `lhs op[options] rhs`, exactly as a comparison does: its answer, or the error memory raises.
    ///
    /// ```swift
    /// try Builtins.compare(.string("Ab"), .equal, [.caseInsensitive], .string("aB"))  // true
    /// ```
    package static func compare(
        _ lhs: Value, _ op: ComparisonOperator, _ options: ComparisonOptions,
        _ rhs: Value
    ) throws(EvaluationErrorKind) -> Bool {
        try PrimitiveComparison(op: op, options: TextOptions(options), utis: .standard).evaluate(lhs, rhs)
    }

    /// `CAST(value, 'type')`, exactly as a predicate does.
    package static func cast(_ value: Value, to type: String) throws(EvaluationErrorKind) -> Value {
        try Cast.cast(value, to: .string(type))
    }
}
