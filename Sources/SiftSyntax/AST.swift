// The typed syntax tree of a predicate. Predicates and expressions are structs wrapping an
// `indirect enum Kind` plus the source range they were parsed from. Equality and hashing look at
// the kind only: two predicates are equal when they have the same structure, wherever they were
// written, so `parse(print(p)) == p` can be checked directly. Canonicalisation happens at parse
// time so that every predicate has exactly one tree: `SOME` is `ANY`, `NONE p` is `NOT (ANY p)`,
// `AND`/`OR` chains (not parenthesised groups) are flattened, constant aggregates become constant arrays, and function calls
// spelled as operator selectors (`add:to:`) become the operator.

import Foundation

/// A node of the syntax tree: a kind plus the source range it came from. Equality and hashing
/// are defined once, here, on the kind alone, so a tree compares equal to its reprinted parse.
public protocol SyntaxNode: Hashable, Sendable {
    /// The node's kind: the enum of what it can be.
    associatedtype Kind: Hashable
    /// What this node is, with its children.
    var kind: Kind { get }
    /// The UTF-8 byte range of the source this node was parsed from.
    var range: SourceRange { get }
    /// A node of `kind` parsed from `range`.
    init(_ kind: Kind, range: SourceRange)
}

extension SyntaxNode {
    // The kinds' synthesized == and hash(into:) recurse through these for every child node, so
    // the stack check here covers the whole walk (see `StackGuard`).
    /// Whether two nodes have the same structure, wherever they were written (ranges are ignored).
    public static func == (lhs: Self, rhs: Self) -> Bool { StackGuard.ensure { lhs.kind == rhs.kind } }
    /// Hashes the kind alone, consistently with `==`.
    public func hash(into hasher: inout Hasher) { StackGuard.ensure { hasher.combine(kind) } }
}

/// The coding keys of both node types, spelled as the synthesized ones were.
private enum NodeCodingKeys: String, CodingKey { case kind, range }

extension SyntaxNode where Kind: Codable {
    /// Encodes the kind and range. Not stack-guarded: Foundation's JSONEncoder recurses in its
    /// own code between these calls and refuses deep nesting itself ("unable to encode the given
    /// top-level value"), so `sift parse --json` encodes on a large stack of its own.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: NodeCodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(range, forKey: .range)
    }

    /// Decodes the kind and range.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: NodeCodingKeys.self)
        self.init(
            try container.decode(Kind.self, forKey: .kind),
            range: try container.decode(SourceRange.self, forKey: .range))
    }
}

/// A parsed predicate.
///
/// ```swift
/// let p = try PredicateSyntax.parse("age >= 18 AND name BEGINSWITH[cd] %@", arguments: ["jo"])
/// print(p)  // age >= 18 AND name BEGINSWITH[cd] "jo"
/// ```
public struct PredicateSyntax: SyntaxNode, Codable, CustomStringConvertible {
    /// The forms a predicate takes.
    public indirect enum Kind: Hashable, Sendable, Codable {
        /// `TRUEPREDICATE` or `FALSEPREDICATE`.
        case constant(value: Bool)
        /// An n-ary conjunction. A chain `a AND b AND c` is one node; a parenthesised group
        /// `(a AND b) AND c` stays nested, as written.
        case and(operands: [PredicateSyntax])
        /// An n-ary disjunction, flattened like `and`.
        case or(operands: [PredicateSyntax])
        /// Logical negation.
        case not(operand: PredicateSyntax)
        /// A comparison, with an optional `ANY`/`ALL` quantifier on its left-hand side.
        case comparison(
            quantifier: Quantifier?, lhs: ExpressionSyntax, operator: ComparisonOperator,
            options: ComparisonOptions, rhs: ExpressionSyntax)
    }

    /// What this predicate is: a constant, a compound or a comparison.
    public var kind: Kind
    /// The UTF-8 byte range of the source this predicate was parsed from.
    public var range: SourceRange

    /// A predicate node; `range` defaults to an empty range for trees built in code.
    ///
    /// ```swift
    /// let always = PredicateSyntax(.constant(value: true))   // TRUEPREDICATE
    /// ```
    public init(_ kind: Kind, range: SourceRange = SourceRange(0, 0)) {
        self.kind = kind
        self.range = range
    }
}

/// A parsed expression: the operands of comparisons.
public struct ExpressionSyntax: SyntaxNode, Codable, CustomStringConvertible {
    /// The forms an expression takes.
    public indirect enum Kind: Hashable, Sendable, Codable {
        /// A literal or substituted value (`42`, `"x"`, `nil`, `{1, 2}`, `%@`).
        case constant(value: LiteralValue)
        /// `SELF`, the evaluated object.
        case evaluatedObject
        /// A key path. With no base it starts at the evaluated object (`a.b.@count`); otherwise it
        /// applies to the base's value (`$x.name`, `SUBQUERY(...).@count`). Components may be
        /// collection operators beginning with `@`.
        case keyPath(base: ExpressionSyntax?, components: [String])
        /// `base.$key` or `base.(expression)`: a key computed at evaluation time.
        case dynamicKey(base: ExpressionSyntax, key: ExpressionSyntax)
        /// `$name`.
        case variable(name: String)
        /// `{e1, e2, …}` with at least one non-constant element.
        case aggregate(elements: [ExpressionSyntax])
        /// `base[index]`, `base[FIRST]`, `base[LAST]`, `base[SIZE]`.
        case index(base: ExpressionSyntax, index: IndexSyntax)
        /// Arithmetic and bitwise operators.
        case binary(operator: BinaryOperator, lhs: ExpressionSyntax, rhs: ExpressionSyntax)
        /// Unary minus and bitwise complement.
        case unary(operator: UnaryOperator, operand: ExpressionSyntax)
        /// A built-in function, named by its selector (`sum:`, `modulus:by:`, `now`).
        case function(name: String, arguments: [ExpressionSyntax])
        /// `FUNCTION(target, "selector", args…)`: a function the application registers.
        case customFunction(target: ExpressionSyntax, selector: String, arguments: [ExpressionSyntax])
        /// `SUBQUERY(collection, $variable, predicate)`.
        case subquery(collection: ExpressionSyntax, variable: String, predicate: PredicateSyntax)
        /// `TERNARY(condition, then, else)`.
        case ternary(condition: PredicateSyntax, then: ExpressionSyntax, else: ExpressionSyntax)
        /// `CAST(value, "Type")`.
        case cast(value: ExpressionSyntax, type: ExpressionSyntax)
        /// `$name := value`.
        case assignment(variable: String, value: ExpressionSyntax)
    }

    /// What this expression is: a constant, a key path, an operator, a call…
    public var kind: Kind
    /// The UTF-8 byte range of the source this expression was parsed from.
    public var range: SourceRange

    /// An expression node; `range` defaults to an empty range for trees built in code.
    ///
    /// ```swift
    /// let age = ExpressionSyntax(.keyPath(base: nil, components: ["age"]))   // age
    /// ```
    public init(_ kind: Kind, range: SourceRange = SourceRange(0, 0)) {
        self.kind = kind
        self.range = range
    }
}

/// The subscript of an index expression.
public indirect enum IndexSyntax: Hashable, Sendable, Codable {
    /// `[FIRST]`: the first element (of a dictionary, the value of the smallest key).
    case first
    /// `[LAST]`: the last element (of a dictionary, the value of the largest key).
    case last
    /// `[SIZE]`: the number of elements.
    case size
    /// `[expression]`: an integer position, or a key for dictionaries.
    case expression(ExpressionSyntax)
}

/// A constant value in a predicate: a literal, or a value substituted for `%@` or `$variable`.
public indirect enum LiteralValue: Hashable, Sendable, Codable {
    /// `nil` (also `NULL`, and a nil `%@` argument).
    case null
    /// `YES`/`NO`, `TRUE`/`FALSE`.
    case bool(Bool)
    /// A 64-bit integer.
    case integer(Int64)
    /// A floating-point number.
    case double(Double)
    /// A `Decimal`, from a `%@` argument (prints as `CAST("1.5", "NSDecimalNumber")`).
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A date, from a `%@` argument or `CAST(<seconds since 2001>, "NSDate")`.
    case date(Date)
    /// Bytes, from a `%@` argument (prints as `CAST("<base64>", "NSData")`).
    case data(Data)
    /// An aggregate of constants, `{1, 'a'}`, or an array argument.
    case array([LiteralValue])
    /// A dictionary argument (prints as Apple's `{"key" = value}`, which does not parse back).
    case dictionary([String: LiteralValue])
    /// An object of a store passed for `%@` (a managed object), named by its identity; prints as
    /// `<URI>`, which does not parse back.
    case object(ObjectReference)

    // Written out instead of synthesized only to check the stack at each level: constant arrays
    // nest as deeply as aggregates (see `StackGuard`).
    public static func == (lhs: LiteralValue, rhs: LiteralValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return StackGuard.ensure { a == b }
        case (.dictionary(let a), .dictionary(let b)): return StackGuard.ensure { a == b }
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .integer(let v):
            hasher.combine(2)
            hasher.combine(v)
        case .double(let v):
            hasher.combine(3)
            hasher.combine(v)
        case .decimal(let v):
            hasher.combine(4)
            hasher.combine(v)
        case .string(let v):
            hasher.combine(5)
            hasher.combine(v)
        case .date(let v):
            hasher.combine(6)
            hasher.combine(v)
        case .data(let v):
            hasher.combine(7)
            hasher.combine(v)
        case .array(let v):
            hasher.combine(8)
            StackGuard.ensure { hasher.combine(v) }
        case .dictionary(let v):
            hasher.combine(9)
            StackGuard.ensure { hasher.combine(v) }
        case .object(let v):
            hasher.combine(10)
            hasher.combine(v)
        }
    }
}

/// `ANY` (also spelled `SOME`) or `ALL`. `NONE` is parsed as `NOT (ANY …)`.
public enum Quantifier: String, Hashable, Sendable, Codable, CaseIterable {
    /// `ANY` (also written `SOME`): true when the comparison holds for at least one element.
    case any = "ANY"
    /// `ALL`: true when the comparison holds for every element (vacuously on none).
    case all = "ALL"
}

/// The operator of a comparison predicate.
public enum ComparisonOperator: String, Hashable, Sendable, Codable, CaseIterable {
    /// `<`
    case lessThan = "<"
    /// `<=` (also written `=<`).
    case lessThanOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=` (also written `=>`).
    case greaterThanOrEqual = ">="
    /// `==` (also written `=`).
    case equal = "=="
    /// `!=` (also written `<>`).
    case notEqual = "!="
    /// `MATCHES`: a whole-string regular expression match (PCRE2).
    case matches = "MATCHES"
    /// `LIKE`: a wildcard match with `*` and `?`.
    case like = "LIKE"
    /// `BEGINSWITH`
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`
    case endsWith = "ENDSWITH"
    /// `IN`: membership of the left value in the right collection, or substring of the right string.
    case `in` = "IN"
    /// `CONTAINS`: the left collection holds the right value, or the left string contains it.
    case contains = "CONTAINS"
    /// `BETWEEN {low, high}`, bounds included.
    case between = "BETWEEN"
    /// `UTI-CONFORMS-TO`: the left type identifier conforms to the right one.
    case utiConformsTo = "UTI-CONFORMS-TO"
    /// `UTI-EQUALS`: the two type identifiers are equal.
    case utiEquals = "UTI-EQUALS"

    /// The canonical spelling.
    public var symbol: String { rawValue }
}

/// The `[c]`, `[d]`, `[n]`, `[l]` options of a comparison.
public struct ComparisonOptions: OptionSet, Hashable, Sendable, Codable {
    /// The option bits.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `c`: Unicode case folding (implies width-insensitivity).
    public static let caseInsensitive = ComparisonOptions(rawValue: 1 << 0)
    /// `d`: diacritics removed (implies width-insensitivity).
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 1 << 1)
    /// `n`: strings are pre-normalised; compare literally, overriding `c` and `d`.
    public static let normalized = ComparisonOptions(rawValue: 1 << 2)
    /// `l`: locale-sensitive (Sift compares with the root locale).
    public static let localeSensitive = ComparisonOptions(rawValue: 1 << 3)

    /// Letters in canonical print order: c, d, l, n.
    static let letters: [(Character, ComparisonOptions)] = [
        ("c", .caseInsensitive), ("d", .diacriticInsensitive), ("l", .localeSensitive), ("n", .normalized),
    ]

    /// The option letters in canonical order, e.g. `"cd"`.
    public var letters: String { String(Self.letters.filter { contains($0.1) }.map(\.0)) }
}

/// Arithmetic and bitwise operators. Precedence is defined here once; the parser and printer use it.
public enum BinaryOperator: String, Hashable, Sendable, Codable, CaseIterable {
    /// `|`, bitwise or.
    case bitwiseOr = "|"
    /// `^`, bitwise exclusive or.
    case bitwiseXor = "^"
    /// `&`, bitwise and.
    case bitwiseAnd = "&"
    /// `<<`, shift left.
    case leftShift = "<<"
    /// `>>`, shift right.
    case rightShift = ">>"
    /// `+`
    case add = "+"
    /// `-`
    case subtract = "-"
    /// `*`
    case multiply = "*"
    /// `/` (two integers divide as integers; division by zero is 0).
    case divide = "/"
    /// `**`, always a double.
    case power = "**"

    /// Higher binds tighter. All levels are left-associative.
    public var precedence: Int {
        switch self {
        case .bitwiseOr: 1
        case .bitwiseXor: 2
        case .bitwiseAnd: 3
        case .leftShift, .rightShift: 4
        case .add, .subtract: 5
        case .multiply, .divide: 6
        case .power: 7
        }
    }

    /// The Foundation selector that implements this operator (`add:to:`).
    public var selector: String {
        switch self {
        case .bitwiseOr: "bitwiseOr:with:"
        case .bitwiseXor: "bitwiseXor:with:"
        case .bitwiseAnd: "bitwiseAnd:with:"
        case .leftShift: "leftshift:by:"
        case .rightShift: "rightshift:by:"
        case .add: "add:to:"
        case .subtract: "from:subtract:"
        case .multiply: "multiply:by:"
        case .divide: "divide:by:"
        case .power: "raise:toPower:"
        }
    }

    static let bySelector: [String: BinaryOperator] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0.selector, $0) })
}

/// Prefix operators on expressions.
public enum UnaryOperator: String, Hashable, Sendable, Codable, CaseIterable {
    /// Unary `-`.
    case negate = "-"
    /// `~`, bitwise not.
    case bitwiseNot = "~"
}
