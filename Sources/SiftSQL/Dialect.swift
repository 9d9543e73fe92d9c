// What differs between SQL databases, as far as the lowering cares: how identifiers are quoted,
// how parameters are written, the names of Sift's functions (or their absence), the default place
// of NULL in an ordering, boolean literals, null-safe equality, and the traits that decide whether
// a form can be exact at all (dynamic typing, silent float overflow, exact integer/double
// comparison…). The protocol has no defaults: each dialect states every answer, so a new one
// cannot inherit SQLite's claims by omission. The lowering writes every identifier through
// `quote(_:)` and nowhere else, so a schema name can never be read as SQL. Two dialects: SQLite,
// where Sift registers its own functions, and PostgreSQL, which cannot call Swift, so the lowering
// writes native SQL for what it can make exact and rejects the rest.

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
    /// The name of the text-operator function (`sift_text`), nil when the database cannot call
    /// Sift's (text operators are then written natively where that is exact, and rejected otherwise).
    var textFunction: String? { get }
    /// The name of the three-way comparison function (`sift_compare`), nil when there is none
    /// (ordering under string options, or of values that may be NaN, is then rejected).
    var compareFunction: String? { get }
    /// The collation name for ORDER BY under these options, nil for the default order.
    func collation(for options: ComparisonOptions) -> String?
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
    /// The function that evaluates a comparison on a row's whole document (`sift_document`, see
    /// ``Schema/Entity/documentColumn``), nil when the database cannot call into Swift.
    var documentFunction: String? { get }
    /// `(sql) IS NOT TRUE`: true when the condition is false or NULL (the negation that keeps NULL rows).
    func isNotTrue(_ sql: String) -> String
    /// What the database can do exactly (see ``SQLDialectTraits``).
    var traits: SQLDialectTraits { get }
    /// The bound value of `LIMIT` that means no limit (SQLite needs a LIMIT before an OFFSET).
    var noLimit: SQLValue { get }
    /// The sum of integer expression `sql` as a 64-bit integer (PostgreSQL's SUM of bigint is numeric).
    func integerSum(_ sql: String) -> String
    /// The average of numeric expression `sql` as a double, as memory computes `@avg`.
    func doubleAverage(_ sql: String) -> String
    /// The collation that orders text by Unicode scalar values (UTF-8 bytes), written after text
    /// comparisons and ORDER BY terms; nil when the default already does (SQLite's BINARY).
    var scalarOrderCollation: String? { get }
    /// Whether NULL sorts first ascending and last descending by default (memory's nil order);
    /// when not, ORDER BY terms say NULLS FIRST / NULLS LAST.
    var nullsSortFirst: Bool { get }
    /// A 64-bit integer literal the lowering writes itself (not a value from the predicate), such
    /// as the 1 of `~x + 1`: PostgreSQL types a bare `1` as a 32-bit integer, whose shifts differ.
    func integerLiteral(_ value: Int64) -> String
    /// How the top-level AND's parts that run a subquery over the row (ANY/ALL over a to-many),
    /// with a test that is always true on each joined row the other parts read, are written as
    /// one term the planner cannot split (`a AND +(EXISTS … AND t1."pk" IS t1."pk")`), or nil to
    /// leave the AND as it is. SQLite tests each term at the outermost join loop where its tables
    /// are read: a subquery over the root row alone would run before the to-one joins' tests;
    /// reading the joined rows too, it runs after them, on the rows they keep. The same truth
    /// value in every case.
    func bundledSubqueryTerm(_ conjunction: String) -> String?
}

/// What a database does exactly, as far as the lowering's exactness depends on it.
///
/// ```swift
/// SQLiteDialect().traits.contains(.dynamicTyping)    // true
/// PostgreSQLDialect().traits.contains(.dynamicTyping) // false
/// ```
public struct SQLDialectTraits: OptionSet, Hashable, Sendable {
    /// The traits as bits, one per trait.
    public let rawValue: UInt8
    /// A trait set from its raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A column may hold values of several types (`any` attributes, `typeof`).
    public static let dynamicTyping = SQLDialectTraits(rawValue: 1 << 0)
    /// Double arithmetic overflows to infinity as memory's does (PostgreSQL raises instead).
    public static let silentFloatOverflow = SQLDialectTraits(rawValue: 1 << 1)
    /// An integer compared with a double is compared exactly (PostgreSQL converts the integer to
    /// a double, which is inexact beyond 2^53).
    public static let exactIntegerDoubleComparison = SQLDialectTraits(rawValue: 1 << 2)
    /// Text may contain U+0000 (PostgreSQL's cannot).
    public static let textWithNUL = SQLDialectTraits(rawValue: 1 << 3)
    /// `x << y` and `x >> y` take a 64-bit count and shift like Swift's smart shifts.
    public static let integerShifts = SQLDialectTraits(rawValue: 1 << 4)
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
    public var textFunction: String? { SQLFunctions.text }
    /// `sift_compare`, registered by SiftSQLite.
    public var compareFunction: String? { SQLFunctions.compare }
    /// `sift_c`, `sift_d` or `sift_cd` under `[c]`, `[d]`, `[cd]`; nil otherwise.
    public func collation(for options: ComparisonOptions) -> String? { SQLFunctions.collation(for: options) }
    /// `1` for true, `0` for false.
    public func booleanLiteral(_ value: Bool) -> String { value ? "1" : "0" }
    /// `lhs IS rhs`.
    public func isNotDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS \(rhs)" }
    /// `lhs IS NOT rhs`.
    public func isDistinct(_ lhs: String, _ rhs: String) -> String { "\(lhs) IS NOT \(rhs)" }
    /// `(sql) IS NOT 1`: SQLite's booleans are the integers 0 and 1.
    public func isNotTrue(_ sql: String) -> String { "(\(sql)) IS NOT 1" }
    /// `sift_call`, registered by SiftSQLite.
    public var callFunction: String? { SQLFunctions.call }
    /// `sift_collect`, registered by SiftSQLite.
    public var collectFunction: String? { SQLFunctions.collect }
    /// `sift_document`, registered by SiftSQLite.
    public var documentFunction: String? { SQLFunctions.document }
    /// Every trait: dynamically typed columns, IEEE double arithmetic, exact integer/double
    /// comparison, text with NUL, 64-bit shifts.
    public var traits: SQLDialectTraits {
        [.dynamicTyping, .silentFloatOverflow, .exactIntegerDoubleComparison, .textWithNUL, .integerShifts]
    }
    /// `-1`, SQLite's "no limit".
    public var noLimit: SQLValue { .integer(-1) }
    /// `SUM(sql)`: SQLite's SUM of integers is an integer.
    public func integerSum(_ sql: String) -> String { "SUM(\(sql))" }
    /// `AVG(sql)`: SQLite's AVG is a double.
    public func doubleAverage(_ sql: String) -> String { "AVG(\(sql))" }
    /// None: the default BINARY collation already orders by bytes.
    public var scalarOrderCollation: String? { nil }
    /// True: SQLite's NULL is the smallest value.
    public var nullsSortFirst: Bool { true }
    /// The digits: every SQLite integer is 64 bits.
    public func integerLiteral(_ value: Int64) -> String { String(value) }
    /// `+(conjunction)`: SQLite's unary plus keeps the AND one term.
    public func bundledSubqueryTerm(_ conjunction: String) -> String? { "+(\(conjunction))" }
}
