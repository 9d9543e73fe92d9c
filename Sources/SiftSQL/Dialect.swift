// What differs between SQL databases, as far as the lowering cares: how identifiers are quoted,
// how parameters are written, the names of Sift's functions, NULLS FIRST/LAST, boolean literals
// and null-safe equality. The lowering writes every identifier through `quote(_:)` and nowhere
// else, so a schema name can never be read as SQL. Only SQLite is implemented; the protocol keeps
// PostgreSQL's `$1` placeholders and `IS NOT DISTINCT FROM` in mind.

import SiftSyntax

/// A SQL dialect.
///
/// ```swift
/// let d = SQLiteDialect()
/// d.quote("order")        // "\"order\""
/// d.placeholder(1)        // "?"
/// ```
public protocol SQLDialect: Sendable {
    /// The identifier as a quoted SQL identifier.
    func quote(_ identifier: String) -> String
    /// The text of the `index`-th (1-based) parameter.
    func placeholder(_ index: Int) -> String
    /// The name of the text-operator function (`sift_text`).
    var textFunction: String { get }
    /// The name of the three-way comparison function (`sift_compare`).
    var compareFunction: String { get }
    /// The collation name for ORDER BY under these options, nil for the default order.
    func collation(for options: ComparisonOptions) -> String?
    /// Whether `ORDER BY x NULLS FIRST` is understood.
    var supportsNullsOrdering: Bool { get }
    /// The literal for true / false.
    func booleanLiteral(_ value: Bool) -> String
    /// Null-safe equality of two SQL expressions (`a IS b` in SQLite).
    func isNotDistinct(_ lhs: String, _ rhs: String) -> String
    /// Null-safe inequality (`a IS NOT b` in SQLite).
    func isDistinct(_ lhs: String, _ rhs: String) -> String
    /// The function that calls the evaluator's built-in functions and casts (`sift_call`), nil
    /// when the database cannot call into Swift (those forms are then rejected).
    var callFunction: String? { get }
    /// The aggregate that gathers a collection's elements for `callFunction` (`sift_collect`).
    var collectFunction: String? { get }
}

extension SQLDialect {
    /// No function calls into Swift by default: functions and string casts are rejected.
    public var callFunction: String? { nil }
    /// No collecting aggregate by default.
    public var collectFunction: String? { nil }
}

/// SQLite: double-quoted identifiers, `?` parameters, 1/0 booleans, `IS` / `IS NOT`.
public struct SQLiteDialect: SQLDialect {
    /// The SQLite dialect.
    ///
    /// ```swift
    /// SQLiteDialect().quote(#"say "hi""#)   // #""say ""hi""""#
    /// ```
    public init() {}
    /// Wraps the identifier in double quotes, doubling the quotes inside.
    public func quote(_ identifier: String) -> String {
        identifier.utf8.contains(0x22)
            ? "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            : "\"" + identifier + "\""
    }
    /// Always `?`: SQLite binds positional parameters in order.
    public func placeholder(_ index: Int) -> String { "?" }
    /// `sift_text`, registered by SiftSQLite.
    public var textFunction: String { SQLFunctions.text }
    /// `sift_compare`, registered by SiftSQLite.
    public var compareFunction: String { SQLFunctions.compare }
    /// `sift_c`, `sift_d` or `sift_cd` under `[c]`, `[d]`, `[cd]`; nil otherwise.
    public func collation(for options: ComparisonOptions) -> String? { SQLFunctions.collation(for: options) }
    /// SQLite understands NULLS FIRST/LAST since 3.30, but its default (NULL smallest) is already
    /// Sift's order, so the lowering does not need it.
    public var supportsNullsOrdering: Bool { true }
    /// `1` for true, `0` for false.
    public func booleanLiteral(_ value: Bool) -> String { value ? "1" : "0" }
    /// `lhs IS rhs`.
    public func isNotDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS \(rhs)" }
    /// `lhs IS NOT rhs`.
    public func isDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS NOT \(rhs)" }
    /// `sift_call`, registered by SiftSQLite.
    public var callFunction: String? { SQLFunctions.call }
    /// `sift_collect`, registered by SiftSQLite.
    public var collectFunction: String? { SQLFunctions.collect }
}
