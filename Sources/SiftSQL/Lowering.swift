// The SQL lowering: a parsed predicate plus a schema becomes one SELECT whose WHERE clause is TRUE
// for exactly the rows on which the in-memory evaluator returns true. NOT is pushed to the leaves
// (negation-normal form); each leaf has a positive rendering and a negated one that explicitly
// keeps the NULL cases (the fallback `(pos) IS NOT 1` is always correct). To-one paths become one
// LEFT JOIN per distinct path; to-many collections become EXISTS / NOT EXISTS or scalar subqueries.
// Every constant is bound, never spliced; every identifier comes from the schema and is quoted by
// the dialect.
//
// Where the entity keeps each row's whole document (`Entity.documentColumn`, a store's JSON
// records) and the dialect can call memory, a top-level comparison rejected below for a reason the
// document settles (`SQLLoweringError.documentCanDecide`: the object case's dictionary semantics,
// null elements, a to-many inside another, SUBQUERY results, objects compared whole, unknown keys
// of entities that are not open, keys of values, assignments) is decided by memory on the document
// instead (DocumentComparison.swift), as are the parts of a statement too deep for SQLite's parser.
// What stays rejected there: type errors on which memory raises for every row with a value,
// unbound variables, constant parts that raise, `random()`.
//
// Rejected forms (each throws `SQLLoweringError`, never emits SQL that could differ):
// - unknown keys (of entities that are not open: an open entity reads nil for them) or entities (`unknown-key`, `unknown-entity`); `$VAR` not in `variables`
//   (`unbound-variable`);
// - a to-many key path without a quantifier, collection operator, SUBQUERY or IN/CONTAINS, except
//   `rel == nil` / `rel != nil` and an ordered one `==`/`!=` `{}`, a list of non-nil plain values or
//   one value; a to-many path inside a to-many path or SUBQUERY (`to-many-key-path`);
// - ANY/ALL, SUBQUERY or IN/CONTAINS over something that is neither a to-many relationship nor
//   (for IN/CONTAINS) a string (`not-a-collection`);
// - comparing a relationship object with anything but nil, the objects of a to-many collection
//   without a key, an attribute with a constant or attribute of another type family (strings,
//   numbers incl. booleans, dates, data; `any` accepts all), text operators on non-strings,
//   arithmetic on non-numbers (`type-mismatch`);
// - (`unsupported`) SELF where the entity has no `selfShape`, and the object case's dictionary
//   semantics (`SELF.@count`, `SELF CONTAINS x`); a mixed key where its shape column is not in
//   scope (inside a to-many aggregate), and more than 256 lowerings of mixed-key combinations; `$x` alone when it is an entity object; `random()`/`randomn:`; a constant
//   part that raises in memory; `mode:` of an unordered collection, an element of its list, a
//   TERNARY branch or sort key holding such a list; FUNCTION(), assignments, dynamic keys;
//   element objects (or lists holding nil) compared with objects whole, a SUBQUERY result compared
//   with anything but a constant, ordered or quantified;
//   indexes of unordered collections, non-constant indexes;
//   aggregates with non-constant elements; `@unionOfArrays`, `@distinctUnionOfArrays`, a union
//   followed by another operator, and unknown collection operators; functions, string casts, UTI operators,
//   date arithmetic and comparisons of dates in two encodings in a dialect without `callFunction`;
//   TERNARY branches stored differently; arithmetic on TEXT-encoded decimals; arithmetic with dates
//   other than date ± number and date − date (memory raises on every row); BETWEEN with non-constant bounds, unorderable
//   bounds, or string options; ordering TEXT-encoded decimals;
//   comparisons between constants that cannot be folded exactly (string options, mixed kinds);
//   ordering a date column against a constant its encoding cannot hold when no storable neighbour
//   is found (not seen in practice: constants between two storable dates are moved to the right
//   neighbour, see `storableDate`); integer arithmetic nested so deeply that its wrapping form
//   (which repeats operands) would pass 200 KB of SQL.

import Foundation
import SiftSyntax

/// Lowers predicates over one entity of a schema to SQL.
///
/// ```swift
/// let lowering = try SQLLowering(schema: schema, entity: "Person")
/// let q = try lowering.select(try PredicateSyntax.parse("age >= 18 AND address.city == 'Oslo'"))
/// q.sql       // SELECT t0."id" FROM "person" AS t0 LEFT JOIN "address" AS t1 ON … WHERE …
/// q.bindings  // [.integer(18), .text("Oslo")]
/// ```
public struct SQLLowering: Sendable {
    /// The schema the key paths are resolved against.
    public let schema: Schema
    /// The entity whose rows are selected.
    public let entity: Schema.Entity
    /// The SQL dialect written.
    public let dialect: any SQLDialect
    /// Whether rows on which memory may raise are decided by memory (the row guard,
    /// RowGuard.swift), as they are by default. `false` gives the SQL of the comparisons alone,
    /// whose answer on such rows is unspecified: for measuring the guard and testing the lowering
    /// under it.
    ///
    /// ```swift
    /// var lowering = try SQLLowering(schema: records.schema, entity: "Record")
    /// lowering.guardsRows = false
    /// ```
    public var guardsRows = true
    /// Whether a database that can call memory (SQLite) decides the rows on which memory may raise
    /// inside the statement (`sift_guard`), as it does by default. `false` leaves them to the
    /// caller, as in PostgreSQL: the WHERE clause is the comparisons' SQL alone, and
    /// ``SQLQuery/rowsMemoryDecides`` selects the rows to evaluate in memory instead (what
    /// `sift batch` does, to give each raising record its own error).
    ///
    /// ```swift
    /// var lowering = try SQLLowering(schema: records.schema, entity: "Record")
    /// lowering.guardsInDatabase = false
    /// let q = try lowering.select(try PredicateSyntax.parse("age > 30"))
    /// q.rowsMemoryDecides  // SELECT t0."Z_PK" FROM … WHERE (typeof(t0."age") IN ('text', 'blob'))
    /// ```
    public var guardsInDatabase = true

    /// A lowering for the rows of `entity`; throws `unknown-entity` when the schema has no such entity.
    public init(schema: Schema, entity: String, dialect: any SQLDialect = SQLiteDialect()) throws(SQLLoweringError) {
        guard let e = schema.entity(named: entity) else {
            throw SQLLoweringError(.unknownEntity, "the schema has no entity '\(entity)'")
        }
        self.schema = schema
        self.entity = e
        self.dialect = dialect
    }

    /// `SELECT <columns> FROM <table> AS t0 LEFT JOIN … WHERE … ORDER BY …, t0.<pk>`.
    /// `columns` are attribute key paths of the entity (default: its primary key). `limit` and
    /// `offset` add a bound `LIMIT ? OFFSET ?`. `tableColumns` instead names raw columns of the
    /// entity's table (names that come from the schema's owner, such as a store's own columns).
    /// Over records whose kinds were inferred (an entity keeping documents), the rows on which
    /// memory may raise are decided by memory (RowGuard.swift): strict, a row that raises fails the
    /// statement with memory's error; `lenient`, it answers as memory's lenient mode does.
    public func select(
        _ predicate: PredicateSyntax, source: String? = nil,
        variables: [String: LiteralValue] = [:], sortedBy: [SQLSortKey] = [],
        columns: [String]? = nil, tableColumns: [String]? = nil,
        limit: Int? = nil, offset: Int = 0, lenient: Bool = false
    ) throws(SQLLoweringError) -> SQLQuery {
        try build(
            predicate, source: source, variables: variables, sortedBy: sortedBy, lenient: lenient, limit: limit,
            offset: offset
        ) {
            (ctx, scope) throws(SQLLoweringError) in
            // Raw columns of the entity's table (a store reading whole rows), quoted here like every identifier.
            if let tableColumns {
                return Fragment(tableColumns.map { ctx.column(scope.alias, $0) }.joined(separator: ", "))
            }
            guard let columns else { return Fragment(ctx.column(scope.alias, entity.primaryKey)) }
            var parts: [Fragment] = []
            for c in columns {
                let e: ExpressionSyntax
                do { e = try ExpressionSyntax.parse(c) } catch {
                    throw SQLLoweringError(.unknownKey, "column '\(c)' is not a key path")
                }
                let op = try ctx.operand(e, scope)
                guard case .scalar(let s) = op else {
                    throw SQLLoweringError(.unsupported, "column '\(c)' is not an attribute")
                }
                parts.append(try ctx.singleTyped(s, "selecting the column '\(c)'", e.range).fragment)
            }
            return Fragment.join(parts, ", ")
        }
    }

    /// `SELECT COUNT(*) FROM … WHERE …`: the number of matching rows (guarded as `select` is).
    public func count(
        _ predicate: PredicateSyntax, source: String? = nil,
        variables: [String: LiteralValue] = [:], lenient: Bool = false
    ) throws(SQLLoweringError) -> SQLQuery {
        try build(predicate, source: source, variables: variables, sortedBy: [], lenient: lenient, ordered: false) {
            _, _ in
            Fragment("COUNT(*)")
        }
    }

    private func build(
        _ predicate: PredicateSyntax, source: String?, variables: [String: LiteralValue],
        sortedBy: [SQLSortKey], lenient: Bool, ordered: Bool = true, limit: Int? = nil, offset: Int = 0,
        columns: (LoweringContext, Scope) throws(SQLLoweringError) -> Fragment
    ) throws(SQLLoweringError) -> SQLQuery {
        func lower(guardingNesting: Bool) throws(SQLLoweringError) -> (LoweringContext, Scope, Lowered) {
            let ctx = LoweringContext(schema: schema, dialect: dialect, variables: variables)
            let scope = ctx.makeScope(entity: entity, alias: ctx.newAlias())
            ctx.rootScope = scope
            ctx.guardsNesting = guardingNesting
            ctx.guardEnabled = guardsRows
            ctx.guardInDatabaseEnabled = guardsInDatabase
            if case .and = predicate.kind { ctx.recordsConjuncts = true }
            return (ctx, scope, try ctx.predicate(predicate, negated: false, scope))
        }
        do {
            var (ctx, scope, whereClause) = try lower(guardingNesting: false)
            if case .sql(let f) = whereClause, ctx.canDecideOnDocuments, SQLNesting.exceeds(f.sql) {
                // Too deep for the database's parser: again, with the deep parts decided by memory.
                (ctx, scope, whereClause) = try lower(guardingNesting: true)
            }
            let memoryDecides = ctx.memoryDecides(lenient: lenient)
            whereClause = try ctx.guarded(whereClause, predicate, lenient: lenient, scope)
            var discriminator: Fragment?
            if let d = entity.discriminator {
                let test =
                    Fragment(ctx.column(scope.alias, d.column) + " IN (")
                    + Fragment.join(d.values.map { Fragment.param(.integer($0)) }, ", ") + Fragment(")")
                discriminator = test
                switch whereClause {
                case .constant(true): whereClause = .sql(test)
                case .constant(false): break
                case .sql(let f): whereClause = .sql(test + Fragment(" AND ") + f.parenthesized)
                }
            }
            let cols = try columns(ctx, scope)
            var orderParts: [Fragment] = []
            for key in sortedBy { orderParts.append(try ctx.orderTerm(key, scope)) }
            var sql = Fragment("SELECT ") + cols + Fragment(" FROM \(dialect.quote(entity.table)) AS \(scope.alias)")
            for j in scope.joins { sql = sql + Fragment(" " + j) }
            switch whereClause {
            case .constant(true): break
            case .constant(false): sql = sql + Fragment(" WHERE " + dialect.booleanLiteral(false))
            case .sql(let f): sql = sql + Fragment(" WHERE ") + f
            }
            if ordered {
                orderParts.append(Fragment(ctx.column(scope.alias, entity.primaryKey) + " ASC"))
                sql = sql + Fragment(" ORDER BY ") + Fragment.join(orderParts, ", ")
            }
            if limit != nil || offset > 0 {
                // SQLite needs a LIMIT before an OFFSET; the dialect says what "no limit" is.
                sql =
                    sql + Fragment(" LIMIT ") + Fragment.param(limit.map { .integer(Int64($0)) } ?? dialect.noLimit)
                    + Fragment(" OFFSET ") + Fragment.param(.integer(Int64(offset)))
            }
            var query = sql.query(dialect)
            query.asksMemoryPerRow = ctx.asksMemoryPerRow
            if let memoryDecides {
                // The rows the caller decides in memory (RowGuard.swift), with the same joins.
                var rows = Fragment("SELECT " + ctx.column(scope.alias, entity.primaryKey))
                rows = rows + Fragment(" FROM \(dialect.quote(entity.table)) AS \(scope.alias)")
                for j in scope.joins { rows = rows + Fragment(" " + j) }
                var tests = discriminator.map { [$0] } ?? []
                if case .sql(let f) = memoryDecides { tests.append(f.parenthesized) }
                if !tests.isEmpty { rows = rows + Fragment(" WHERE ") + Fragment.join(tests, " AND ") }
                let decided = rows.query(dialect)
                query.memoryDecidesSQL = decided.sql
                query.memoryDecidesBindings = decided.bindings
            }
            return query
        } catch {
            var e = error
            e.source = source
            throw e
        }
    }
}

/// A lowered statement: SQL text with parameters, and the values to bind to them in order.
///
/// ```swift
/// let q = SQLQuery(sql: "SELECT 1 WHERE ? = 1", bindings: [.integer(1)])
/// ```
public struct SQLQuery: Hashable, Sendable, CustomStringConvertible {
    /// The statement, with one placeholder per bound value.
    public var sql: String
    /// The values to bind, in placeholder order.
    public var bindings: [SQLValue]
    /// With ``memoryDecidesBindings``: a statement selecting the primary keys of the rows on
    /// which memory may raise, in a dialect that cannot ask memory itself (see
    /// ``rowsMemoryDecides``); nil when there are none.
    public var memoryDecidesSQL: String?
    /// The values to bind to ``memoryDecidesSQL``.
    public var memoryDecidesBindings: [SQLValue] = []
    /// Whether the statement's row guard asks memory about some rows in the database (SQLite),
    /// and so raises memory's error when it reaches a row memory raises on. A LIMIT may stop the
    /// statement before that row, where memory, judging every row, raises.
    package var asksMemoryPerRow = false
    /// The rows (by primary key) whose answer the caller takes from memory instead of from this
    /// statement, strict or lenient as the predicate is (RowGuard.swift): memory may raise on
    /// them. Only in a dialect that cannot call memory (PostgreSQL); SQLite asks memory itself.
    ///
    /// ```swift
    /// if let rows = q.rowsMemoryDecides { /* run it, evaluate those records in memory */ }
    /// ```
    public var rowsMemoryDecides: SQLQuery? {
        memoryDecidesSQL.map { SQLQuery(sql: $0, bindings: memoryDecidesBindings) }
    }
    /// A statement and its bindings.
    public init(sql: String, bindings: [SQLValue]) {
        self.sql = sql
        self.bindings = bindings
    }
    /// The SQL followed by ` -- ` and the bindings, for logs.
    public var description: String {
        bindings.isEmpty ? sql : sql + " -- " + bindings.map(\.description).joined(separator: ", ")
    }
}

/// One ORDER BY key, mirroring SiftEvaluation's sort descriptors.
///
/// ```swift
/// let k = SQLSortKey(keyPath: "address.city", ascending: false, options: .caseInsensitive)
/// ```
public struct SQLSortKey: Hashable, Sendable {
    /// The key path (or expression) to sort by.
    public var keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// String options (`[c]`, `[d]`), which choose a collation.
    public var options: ComparisonOptions
    /// A sort key; ascending and without options by default.
    public init(keyPath: String, ascending: Bool = true, options: ComparisonOptions = []) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.options = options
    }
}
