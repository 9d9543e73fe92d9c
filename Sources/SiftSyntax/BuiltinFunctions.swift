// The built-in functions the parser accepts, by selector, with their arity. Calls may be written
// `sum({1, 2})` or `sum:({1, 2})`; multi-argument ones need the full selector (`modulus:by:(7, 2)`).
// Selectors that name an operator (`add:to:`) parse to that operator, so each has one tree.

/// A function callable from predicate syntax without `FUNCTION(...)`.
///
/// ```swift
/// BuiltinFunction.named("modulus:by:")?.arity   // 2
/// BuiltinFunction.named("sum")?.selector         // "sum:"
/// BuiltinFunction.named("nosuch")                // nil
/// ```
public struct BuiltinFunction: Hashable, Sendable {
    /// The selector, with colons: `sum:`, `modulus:by:`, `now`.
    public let selector: String
    /// The number of arguments the function takes.
    public let arity: Int

    /// Every built-in function, keyed by selector.
    public static let all: [String: BuiltinFunction] = {
        let nullary = ["now", "random"]
        let unary = [
            "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:",
            "sqrt:", "log:", "ln:", "exp:", "floor:", "ceiling:", "abs:", "trunc:",
            "uppercase:", "lowercase:", "length:", "canonical:", "randomn:", "noindex:", "onesComplement:",
        ]
        let binary =
            ["modulus:by:", "indexed:by:", "groupConcat:separator:", "objectFrom:withIndex:"]
            + BinaryOperator.allCases.map(\.selector)
        var table: [String: BuiltinFunction] = [:]
        for s in nullary { table[s] = BuiltinFunction(selector: s, arity: 0) }
        for s in unary { table[s] = BuiltinFunction(selector: s, arity: 1) }
        for s in binary { table[s] = BuiltinFunction(selector: s, arity: 2) }
        return table
    }()

    /// Resolves a name as written (`sum`, `sum:`, `modulus:by:`) to a built-in function.
    public static func named(_ written: String) -> BuiltinFunction? {
        if let f = all[written] { return f }
        if !written.contains(":"), let f = all[written + ":"] { return f }
        return nil
    }
}
