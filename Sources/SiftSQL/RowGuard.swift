// The row guard: a query's outcome is memory's rows or memory's error, never a row on which memory
// raises. Over records whose kinds were inferred, not declared (an entity that keeps each row's
// document, `Entity.documentColumn`: `sift filter --backend sqlite`, a store's JSON records and
// documents), a comparison of a dynamically typed (`any`) value may meet a value of a kind memory
// refuses (`age > 30` with `"abc"`): SQLite would order any text above any number, and the row
// would come out. While lowering, each such comparison notes the condition under which a row's
// values could make memory raise there (`typeof(age) IN ('text', 'blob')`); forms whose raising
// the lowering cannot state as cheaply (computed operands, comparisons inside a to-many subquery,
// keys whose shape differs between rows, memory's own calls) mark every row instead. The WHERE
// clause then becomes
//
//     CASE WHEN <any noted condition> THEN sift_guard(<predicate>, <document>, <row>, <lenient>) ELSE (<where>) END
//
// so a row no condition holds for keeps the SQL answer (memory raises nowhere on it), and every
// other row is decided by memory, on the whole document, in memory's own order (its AND and OR
// stop early, so only memory knows whether a row raises). `sift_guard` returns memory's 1 or 0;
// strict (the default), where memory raises it fails the statement with the message
// `<error id>: row <primary key>: <memory's message>`, and SiftSQLite hands memory's
// `EvaluationError` and the row back on the `SQLiteError` (`SQLiteError.raised`), which the
// callers turn into their typed errors (`sift filter`: `record 1: cannot order "abc" and 30`).
// Lenient, it returns lenient memory's answer (false where a comparison raised, as memory's
// three-valued lenient logic says). Declared types (a store's typed attributes, a schema's own
// columns without documents) emit no guard: the lowering already refuses what memory would
// refuse there. A dialect that cannot call memory (PostgreSQL) keeps its SQL and hands the caller
// a second statement, `SQLQuery.rowsMemoryDecides`, selecting the primary keys of the rows a noted
// condition holds for (every row when one marked them all); the caller decides those rows in
// memory, strict or lenient, as `sift_guard` would (SiftTool's SQLBackend does, for `sift filter
// --backend postgres`).

import SiftSyntax

/// What the guard has noted while lowering one statement.
struct RowRisks {
    /// Conditions on the selected row (and its to-one joins): where one holds, memory may raise.
    var conditions: [Fragment] = []
    /// A comparison whose raising cannot be stated per row: memory decides every row.
    var everyRow = false

    var isEmpty: Bool { conditions.isEmpty && !everyRow }
}

extension LoweringContext {
    /// Whether comparisons note their risks: the selected entity's kinds were inferred (it keeps
    /// documents).
    var guardsRows: Bool { guardEnabled && rootScope?.entity.documentColumn != nil }

    /// Notes that memory may raise on any row here.
    func noteRiskOnEveryRow(_ range: SourceRange?) {
        guard guardsRows else { return }
        risks.everyRow = true
    }

    /// Notes where `l op r` may raise in memory, from its operands' kinds.
    func noteRisk(_ l: Operand, _ op: ComparisonOperator, _ r: Operand, _ range: SourceRange) {
        guard guardsRows, !risks.everyRow else { return }
        if isLoweringOneShape { return noteRiskOnEveryRow(range) }
        let ordering: [ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        let textual: [ComparisonOperator] = [.beginsWith, .endsWith, .like, .matches]
        var found: [Fragment] = []
        switch op {
        case .equal, .notEqual:
            // Equality never raises; only computed operands might.
            for o in [l, r] { if case .opaque = kind(of: o) { return noteRiskOnEveryRow(range) } }
        case _ where ordering.contains(op):
            found = orderingRisk(l, r) ?? orderingRisk(r, l) ?? []
            if case .opaque = kind(of: l) { return noteRiskOnEveryRow(range) }
            if case .opaque = kind(of: r) { return noteRiskOnEveryRow(range) }
        case .between:
            found = orderingRisk(l, r) ?? []
            if case .opaque = kind(of: l) { return noteRiskOnEveryRow(range) }
        case _ where textual.contains(op):
            for o in [l, r] {
                switch kind(of: o) {
                case .opaque: return noteRiskOnEveryRow(range)
                case .dynamic(let col): found.append(notText(col))
                default: break
                }
            }
        case .in, .contains:
            let (container, element) = op == .contains ? (l, r) : (r, l)
            switch (kind(of: container), kind(of: element)) {
            case (.opaque, _), (_, .opaque): return noteRiskOnEveryRow(range)
            case (.dynamic(let c), .dynamic(let e)): found = [notText(c), notText(e)]
            case (.dynamic(let c), _): found = [notText(c)]
            case (.constant(let c), .dynamic(let e)):
                if case .string = c { found = [notText(e)] }
            default: break
            }
        default:
            for o in [l, r] {
                switch kind(of: o) {
                case .opaque, .dynamic: return noteRiskOnEveryRow(range)
                default: break
                }
            }
        }
        guard !found.isEmpty else { return }
        risks.conditions += found
    }

    /// How an operand's kind is known to the guard.
    private enum OperandKind {
        /// A constant.
        case constant(LiteralValue)
        /// A column of the selected row (or a to-one join of it) holding values of any kind.
        case dynamic(Scalar)
        /// A declared type, an object, a collection: the lowering checks it.
        case declared
        /// A computed value, or a dynamic one inside a subquery: only memory knows.
        case opaque
    }

    private func kind(of o: Operand) -> OperandKind {
        switch o {
        case .constant(let c): return .constant(c)
        case .object: return .declared
        case .collection(let c):
            // A key of an element's key (`kids.name.x`) or keys of values: memory may raise on
            // each element where the comparison only reads the collection.
            return c.rest.count > 1 || c.nullElements ? .opaque : .declared
        case .scalar(let s):
            guard let alias = plainColumnAlias(s.fragment) else {
                return s.fragment.sql == "NULL" ? .constant(.null) : .opaque
            }
            guard s.attribute.type == .any else { return .declared }
            return visibleAliases.contains(alias) ? .dynamic(s) : .opaque
        }
    }

    /// The row's aliases a condition in the top-level WHERE clause can read.
    private var visibleAliases: Set<String> {
        guard let root = rootScope else { return [] }
        return Set([root.alias] + root.joinAliases.values.map(\.alias))
    }

    /// `t3` for a plain column reference `t3."name"`, nil for anything computed.
    private func plainColumnAlias(_ f: Fragment) -> String? {
        guard f.bindings.isEmpty, let dot = f.sql.firstIndex(of: "."), f.sql.hasSuffix("\"") else { return nil }
        let alias = f.sql[..<dot]
        let rest = f.sql[f.sql.index(after: dot)...]
        guard alias.first == "t", alias.dropFirst().allSatisfy(\.isNumber), rest.first == "\"",
            !rest.dropFirst().dropLast().contains(where: { $0 == "(" || $0 == " " })
        else { return nil }
        return String(alias)
    }

    /// The condition under which ordering `a` against `b` raises, when `a` is a dynamic column.
    private func orderingRisk(_ a: Operand, _ b: Operand) -> [Fragment]? {
        guard case .dynamic(let col) = kind(of: a) else { return nil }
        switch kind(of: b) {
        case .constant(let c): return constantRisk(col, c).map { [$0] } ?? []
        case .dynamic(let other):
            // A number against a string, either way round; nil orders with nothing but raises nowhere.
            return [
                Fragment("((") + notText(col) + Fragment(" AND ") + notNumber(other) + Fragment(") OR (")
                    + notNumber(col) + Fragment(" AND ") + notText(other) + Fragment("))")
            ]
        case .declared:
            if case .scalar(let s) = b, s.attribute.type == .string {
                return [Fragment("(") + notText(col) + Fragment(" AND ") + s.fragment + Fragment(" IS NOT NULL)")]
            }
            if case .scalar(let s) = b, [.integer, .double, .decimal, .boolean].contains(s.attribute.type) {
                return [Fragment("(") + notNumber(col) + Fragment(" AND ") + s.fragment + Fragment(" IS NOT NULL)")]
            }
            return [present(col)]
        case .opaque: return []
        }
    }

    /// Where `col` ordered against the constant `c` raises: a number against text, a string
    /// against numbers, anything else against every value but nil.
    private func constantRisk(_ col: Scalar, _ c: LiteralValue) -> Fragment? {
        switch c {
        case .null: return nil
        case .integer, .double, .decimal, .bool: return notNumber(col)
        case .string: return notText(col)
        case .array(let bounds) where bounds.count == 2:
            let risks = bounds.compactMap { constantRisk(col, $0) }
            if risks.count == 2, risks[0].sql == risks[1].sql { return risks[0] }
            return present(col)
        default: return present(col)
        }
    }

    // A dynamic value keeps its storage class in SQLite (`typeof`); in a dialect whose columns
    // hold one type each its numbers (booleans as 0/1) are in `fragment` and its strings in `text`.

    /// The value is there and is not a string.
    private func notText(_ s: Scalar) -> Fragment {
        if let text = s.text {
            return Fragment("(") + s.fragment + Fragment(" IS NOT NULL AND ") + text + Fragment(" IS NULL)")
        }
        return Fragment("typeof(\(s.fragment.sql)) IN ('integer', 'real', 'blob')")
    }
    /// The value is there and is not a number.
    private func notNumber(_ s: Scalar) -> Fragment {
        if let text = s.text { return text + Fragment(" IS NOT NULL") }
        return Fragment("typeof(\(s.fragment.sql)) IN ('text', 'blob')")
    }
    /// The value is not nil.
    private func present(_ s: Scalar) -> Fragment {
        if let text = s.text {
            return Fragment("(") + s.fragment + Fragment(" IS NOT NULL OR ") + text + Fragment(" IS NOT NULL)")
        }
        return s.fragment + Fragment(" IS NOT NULL")
    }

    /// `whereClause` guarded as the file header says, or unchanged when nothing was noted or the
    /// dialect cannot call memory (then ``memoryDecides`` says which rows the caller must ask
    /// memory about).
    func guarded(
        _ whereClause: Lowered, _ predicate: PredicateSyntax, lenient: Bool, _ scope: Scope
    ) -> Lowered {
        guard guardsRows, !risks.isEmpty, let call = guardCall(predicate, lenient: lenient, scope) else {
            return whereClause
        }
        if risks.everyRow { return .sql(call + Fragment(" = 1")) }
        let otherwise: Fragment
        switch whereClause {
        case .constant(let b): otherwise = Fragment(dialect.booleanLiteral(b))
        case .sql(let f): otherwise = f
        }
        return .sql(
            Fragment("(CASE WHEN ") + Fragment.join(risks.conditions.map(\.parenthesized), " OR ")
                + Fragment(" THEN ") + call + Fragment(" ELSE ") + otherwise.parenthesized + Fragment(" END) = 1"))
    }

    /// In a dialect that cannot call memory, the rows on which memory may raise (every row, or
    /// those a noted condition holds for): the caller decides them in memory
    /// (``SQLQuery/rowsMemoryDecides``). nil when nothing was noted or `sift_guard` decides them.
    var memoryDecides: Lowered? {
        guard guardsRows, !risks.isEmpty, dialect.documentFunction == nil else { return nil }
        if risks.everyRow { return .constant(true) }
        return .sql(Fragment.join(risks.conditions.map(\.parenthesized), " OR "))
    }
}
