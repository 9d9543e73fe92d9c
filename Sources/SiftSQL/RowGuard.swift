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
// columns without documents) emit no guard for kinds: the lowering already refuses what memory
// would refuse there. One risk remains there: memory raises on a nil operand of arithmetic
// (`price + 1`, `abs:(price)`, `~price`) where SQL computes NULL, and the row would silently drop
// (or come out, under NOT or `== nil`). A comparison of such a computed operand notes where it is
// NULL, tested on the operands SQL computes it from (`t0."price" IS NULL` for `price * 2`; a
// TERNARY's `(<its SQL>) IS NULL`), so only the rows where SQL computes NULL go to memory (every
// row where the test reads an element inside a subquery); functions memory computes
// (`sift_call`) mark every row already; where no row alone can be evaluated (the predicate follows
// a relationship) the predicate is refused, and the store judges it in memory. A dialect that
// cannot call memory (PostgreSQL) keeps its SQL and hands the caller a second statement,
// `SQLQuery.rowsMemoryDecides`, selecting the primary keys of the rows a noted condition holds for
// (every row when one marked them all); the caller decides those rows in memory, strict or
// lenient, as `sift_guard` would (SiftTool's SQLBackend does, for `sift filter --backend
// postgres`).

import SiftSyntax

/// What the guard has noted while lowering one statement.
struct RowRisks {
    /// Conditions on the selected row (and its to-one joins): where one holds, memory may raise.
    var conditions: [Fragment] = []
    /// A comparison whose raising cannot be stated per row: memory decides every row.
    var everyRow = false
    /// Where the first risk from a dynamically typed value was noted (not from a call into memory).
    var dynamic: SourceRange?
    /// Where the first risk from a computed value that may be nil was noted (``Scalar/raisesOnNil``).
    var computed: SourceRange?
    /// Where memory was first called to compute a value from the row (NULL where it raises).
    var callsMemory: SourceRange?
    /// Where SQL first read NULL, or decided a comparison without reading, where memory may raise
    /// on rows only memory can tell: an index (`kids[1]`, `name[0]`: memory raises past the last
    /// element and on a value that is no collection), a SUBQUERY compared whole or over a value
    /// that is no collection (memory evaluates its predicate on each element).
    var unseen: SourceRange?

    var isEmpty: Bool { conditions.isEmpty && !everyRow }
}

extension LoweringContext {
    /// Whether comparisons note their risks (unless the lowering's ``SQLLowering/guardsRows`` is off).
    var guardsRows: Bool { guardEnabled && rootScope != nil }

    /// Whether the selected entity's kinds were inferred (it keeps documents): then any computed
    /// operand counts. Without documents a computed operand counts only where it reads a
    /// dynamically typed (`any`) column (SQL of declared types costs nothing); forms that call
    /// memory count everywhere.
    private var guardsDocuments: Bool { rootScope?.entity.documentColumn != nil }

    /// Notes that memory may raise on any row here (a call into memory, which gives NULL there).
    /// `callsMemory`: a value memory computes from the row (a function, date arithmetic), NULL
    /// where memory raises: refused where the entity's shapes (not a relationship) keep the row
    /// from being evaluated alone (see ``guarded(_:_:lenient:_:)``).
    func noteRiskOnEveryRow(_ range: SourceRange?, callsMemory: Bool = false) {
        guard guardsRows else { return }
        risks.everyRow = true
        if callsMemory, risks.callsMemory == nil { risks.callsMemory = range }
    }

    /// Notes that memory may raise where SQL reads NULL or decides without reading (see
    /// ``RowRisks/unseen``): on the rows `rows` holds for (an index: the collection has too few
    /// elements), or on any row (nil).
    func noteUnseenRisk(_ rows: Fragment?, _ range: SourceRange) {
        guard guardsRows else { return }
        if risks.unseen == nil { risks.unseen = range }
        if let rows { risks.conditions.append(rows) } else { risks.everyRow = true }
    }

    /// Notes that a comparison reading a dynamically typed value may raise on any row.
    private func markEveryRow(_ range: SourceRange) {
        risks.everyRow = true
        if risks.dynamic == nil { risks.dynamic = range }
    }

    /// Notes where `l op r` may raise in memory, from its operands' kinds.
    func noteRisk(_ l: Operand, _ op: ComparisonOperator, _ r: Operand, _ range: SourceRange) {
        // Noted even where every row already goes to memory (a key of several shapes before it):
        // where no row alone can be handed to memory, the kind of risk decides the refusal.
        guard guardsRows else { return }
        // One shape of a key of several (a shape on which memory raises may be lowered to
        // anything): memory decides every row, except, without documents, where the operator
        // never raises on kinds (`==`, `!=`, IN), whose SQL stays exact on every shape.
        if isLoweringOneShape && (guardsDocuments || ![.equal, .notEqual, .in].contains(op)) {
            return markEveryRow(range)
        }
        let ordering: [ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        let textual: [ComparisonOperator] = [.beginsWith, .endsWith, .like, .matches]
        noteNilRisks(l, r, range)
        var found: [Fragment] = []
        switch op {
        case .equal, .notEqual:
            // Equality never raises; only computed operands might (without documents, a column
            // read inside a subquery is not computed).
            for o in [l, r] {
                if case .opaque = kind(of: o), guardsDocuments || !isPlainColumn(o) { return markEveryRow(range) }
            }
        case _ where ordering.contains(op):
            found += orderingRisk(l, r) ?? orderingRisk(r, l) ?? []
            if case .opaque = kind(of: l) { return markEveryRow(range) }
            if case .opaque = kind(of: r) { return markEveryRow(range) }
        case .between:
            found += orderingRisk(l, r) ?? []
            if case .opaque = kind(of: l) { return markEveryRow(range) }
        case _ where textual.contains(op):
            for o in [l, r] {
                switch kind(of: o) {
                case .opaque: return markEveryRow(range)
                case .dynamic(let col): found.append(notText(col))
                default: break
                }
            }
        case .in, .contains:
            let (container, element) = op == .contains ? (l, r) : (r, l)
            switch (kind(of: container), kind(of: element)) {
            case (.opaque, _), (_, .opaque): return markEveryRow(range)
            case (.dynamic(let c), .dynamic(let e)): found = [notText(c), notText(e)]
            case (.dynamic(let c), _): found = [notText(c)]
            case (.constant(let c), .dynamic(let e)):
                if case .string = c { found = [notText(e)] }
            default: break
            }
        default:
            for o in [l, r] {
                switch kind(of: o) {
                case .opaque, .dynamic: return markEveryRow(range)
                default: break
                }
            }
        }
        guard !found.isEmpty else { return }
        risks.conditions += found
        if risks.dynamic == nil { risks.dynamic = range }
    }

    /// How an operand's kind is known to the guard.
    private enum OperandKind {
        /// A constant.
        case constant(LiteralValue)
        /// A column of the selected row (or a to-one join of it) holding values of any kind.
        case dynamic(Scalar)
        /// A declared type, an object, a collection: the lowering checks it.
        case declared
        /// A value SQL computes from declared types, NULL where memory raises on a nil operand.
        case computed(Scalar)
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
            return guardsDocuments && (c.rest.count > 1 || c.nullElements) ? .opaque : .declared
        case .scalar(let s):
            guard let alias = plainColumnAlias(s.fragment) else {
                if s.fragment.sql == "NULL" { return .constant(.null) }
                // Without documents, a computed value raises on kinds only where it reads an `any`
                // column or is one itself (a TERNARY of a number and a string: SQLite orders text
                // above numbers where memory does not), and otherwise only on nil, where SQL
                // computes NULL.
                if guardsDocuments || readsDynamicColumn(s) || s.attribute.type == .any { return .opaque }
                return s.raisesOnNil ? .computed(s) : .declared
            }
            guard s.attribute.type == .any else { return .declared }
            return visibleAliases.contains(alias) ? .dynamic(s) : .opaque
        }
    }

    /// Notes where an operand computed by SQL may hide memory's error on a nil operand (`price + 1`
    /// with `price` nil): the rows where its SQL is NULL, whatever the operator (`price + 1 == nil`
    /// would select them), tested on its operands where it keeps their tests
    /// (``Scalar/nullWhen``: `t0."price" IS NULL`), else `(<its SQL>) IS NULL`. Where the test
    /// reads rows a condition of the top-level WHERE clause cannot see (an element inside a
    /// subquery), every row.
    private func noteNilRisks(_ l: Operand, _ r: Operand, _ range: SourceRange) {
        for o in [l, r] {
            guard case .computed = kind(of: o), let test = o.nullTest else { continue }
            if risks.computed == nil { risks.computed = range }
            guard readsVisibleRowsOnly(test) else {
                risks.everyRow = true
                return
            }
            risks.conditions.append(test)
        }
    }

    /// Whether every alias `f` reads a column of (`t3."name"`) is one of ``visibleAliases``.
    private func readsVisibleRowsOnly(_ f: Fragment) -> Bool {
        let visible = visibleAliases
        let sql = Array(f.sql.utf8)
        func isWordByte(_ b: UInt8) -> Bool {
            b == UInt8(ascii: "_") || b == UInt8(ascii: "\"") || b >= 0x80
                || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
        }
        var i = 0
        while i < sql.count {
            guard sql[i] == UInt8(ascii: "t"), i == 0 || !isWordByte(sql[i - 1]) else {
                i += 1
                continue
            }
            var j = i + 1
            while j < sql.count, sql[j] >= UInt8(ascii: "0"), sql[j] <= UInt8(ascii: "9") { j += 1 }
            if j > i + 1, j < sql.count, sql[j] == UInt8(ascii: "."),
                !visible.contains(String(decoding: sql[i..<j], as: UTF8.self))
            {
                return false
            }
            i = j
        }
        return true
    }

    /// Whether a computed value's SQL reads a dynamically typed column.
    private func readsDynamicColumn(_ s: Scalar) -> Bool {
        dynamicColumns.contains { s.fragment.sql.contains($0) || s.text?.sql.contains($0) == true }
    }

    /// Whether `o` is a column read as it is stored, in any row.
    private func isPlainColumn(_ o: Operand) -> Bool {
        if case .scalar(let s) = o { return plainColumnAlias(s.fragment) != nil }
        return false
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
        case .declared, .computed:
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
    /// database does not call memory (then ``memoryDecides`` says which rows the caller must ask
    /// memory about).
    /// Where a dynamically typed value may make memory raise but the row cannot be evaluated in
    /// memory (an entity without documents, whose predicate follows a relationship), the
    /// predicate is refused rather than answered where memory raises.
    func guarded(
        _ whereClause: Lowered, _ predicate: PredicateSyntax, lenient: Bool, _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered {
        guard guardsRows, guardsInDatabase, !risks.isEmpty else { return whereClause }
        guard let call = guardCall(predicate, lenient: lenient, scope) else {
            if let range = risks.dynamic, scope.entity.documentColumn == nil {
                throw unsupported(
                    "comparing a dynamically typed value in a predicate that also follows a relationship of an "
                        + "entity without documents (memory may raise on some rows, and no row alone tells)",
                    range)
            }
            // A value memory computes (NULL where it raises) that no row alone can be evaluated for.
            if let range = risks.computed ?? risks.callsMemory, scope.entity.documentColumn == nil {
                throw unsupported(
                    "a computed value (memory may raise there) in a predicate that also follows a relationship "
                        + "or a key of several shapes of an entity without documents (no row alone tells)",
                    range)
            }
            // An index, a SUBQUERY compared whole: SQL reads NULL or decides where memory raises.
            if let range = risks.unseen, scope.entity.documentColumn == nil {
                throw unsupported(
                    "an index or a SUBQUERY compared whole (memory may raise there: past the last element, on a "
                        + "value that is no collection, in the SUBQUERY's predicate) in a predicate that also "
                        + "follows a relationship of an entity without documents (no row alone tells)",
                    range)
            }
            return whereClause
        }
        asksMemoryPerRow = true
        if risks.everyRow {
            guard let pre = preFilter(lenient: lenient) else { return .sql(call + Fragment(" = 1")) }
            return .sql(pre + Fragment(" AND ") + call + Fragment(" = 1"))
        }
        let otherwise: Fragment
        switch whereClause {
        case .constant(let b): otherwise = Fragment(dialect.booleanLiteral(b))
        case .sql(let f): otherwise = f
        }
        return .sql(
            Fragment("(CASE WHEN ") + Fragment.join(risks.conditions.map(\.parenthesized), " OR ")
                + Fragment(" THEN ") + call + Fragment(" ELSE ") + otherwise.parenthesized + Fragment(" END) = 1"))
    }

    /// Whether `sift_guard` decides the risky rows inside the statement: the dialect can call
    /// memory and the lowering was not asked to leave them to the caller
    /// (``SQLLowering/guardsInDatabase``).
    private var guardsInDatabase: Bool { guardInDatabaseEnabled && dialect.documentFunction != nil }

    /// Where the database does not decide them itself, the rows on which memory may raise (every
    /// row, or those a noted condition holds for): the caller decides them in memory
    /// (``SQLQuery/rowsMemoryDecides``). nil when nothing was noted or `sift_guard` decides them.
    func memoryDecides(lenient: Bool) -> Lowered? {
        guard guardsRows, !risks.isEmpty, !guardsInDatabase else { return nil }
        if risks.everyRow { return preFilter(lenient: lenient).map(Lowered.sql) ?? .constant(true) }
        return .sql(Fragment.join(risks.conditions.map(\.parenthesized), " OR "))
    }

    /// Where memory decides every row, the SQL that may still discard rows first: rows on which
    /// memory answers false without raising. For each part `c` of the predicate's top-level AND
    /// that noted conditions only (not every row), `c OR <its conditions>`: where none of its
    /// conditions holds, SQL's `c` is memory's, and false makes the AND false. Strict, memory stops
    /// at the first part that raises, so a part counts only before any part that may raise on
    /// every row, and with the conditions of the parts before it too (where one holds, an earlier
    /// part may raise first). Lenient, a raising part is false, so every such part counts as it
    /// stands. A part the lowering folded to a constant keeps its conditions: folded true, it
    /// discards nothing, but strict memory may still raise in it (`NOT (code LIKE "" AND
    /// FALSEPREDICATE)` with a numeric `code`) before a later part is false; folded false, it
    /// keeps only the rows its conditions hold for. nil when no part qualifies.
    func preFilter(lenient: Bool) -> Fragment? {
        var tests: [Fragment] = []
        var earlier: [Fragment] = []
        for (lowered, risk) in conjuncts {
            if risk.everyRow {
                if lenient { continue } else { break }
            }
            let conditions = (lenient ? risk.conditions : earlier + risk.conditions).map(\.parenthesized)
            earlier += risk.conditions
            let terms: [Fragment]
            switch lowered {
            case .constant(true): continue
            case .constant(false): terms = conditions
            case .sql(let f): terms = [f.parenthesized] + conditions
            }
            if terms.isEmpty { return Fragment(dialect.booleanLiteral(false)) }
            tests.append(terms.count == 1 ? terms[0] : Fragment.join(terms, " OR ").parenthesized)
        }
        return tests.isEmpty ? nil : Fragment.join(tests, " AND ")
    }

    /// What `sift_guard` evaluates the predicate on: the row's document, or, for an entity that
    /// keeps none, an object made of the row's own attributes as memory reads them
    /// (`sift_row(<tags>, <key>, <column>, …)`); nil where the predicate reads beyond the row
    /// (relationships, keys of several shapes), which only the caller's own objects can answer.
    func guardedObject(_ root: Scope) -> Fragment? {
        if let documentColumn = root.entity.documentColumn { return Fragment(column(root.alias, documentColumn)) }
        guard !readsBeyondRow, root.entity.mixedKeys.isEmpty, root.entity.selfShape == nil else { return nil }
        var parts = [Fragment.param(.text(String(rowAttributes.map { tag($0).rawValue })))]
        for a in rowAttributes { parts += [Fragment.param(.text(a.name)), Fragment(column(root.alias, a.column))] }
        return Fragment("\(SQLFunctions.row)(") + Fragment.join(parts, ", ") + Fragment(")")
    }
}
