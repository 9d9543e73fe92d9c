// Comparison leaves: the positive and negated SQL of one comparison (The SQL back-end and its
// guarantees, "How it stays exact"), quantifiers over to-many collections as EXISTS / NOT EXISTS,
// collection operators as scalar subqueries, membership, BETWEEN and the nil rules. The type
// checks, the encoding of constants for the column they meet and the folding of constant
// comparisons are in ConstantEncoding.swift.

import Foundation
import SiftSyntax
import SiftText

extension LoweringContext {
    func comparison(
        _ q: Quantifier?, _ l: ExpressionSyntax, _ op: ComparisonOperator, _ options: ComparisonOptions,
        _ r: ExpressionSyntax, negated: Bool, range: SourceRange, _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered {
        // Tested first without allocating: every comparison passes here.
        if q == nil, op == .equal || op == .notEqual, isSubqueryResult(l) || isSubqueryResult(r) {
            if let lowered = try wholeSubqueryComparison(l, op, options, r, negated: negated, range: range, scope) {
                return lowered
            }
        }
        let lo = try scalarize(try operand(l, scope))
        let ro = try scalarize(try operand(r, scope))
        // Matched without binding first: binding an operand's payload copies it (a retain per
        // string and array it holds), and most comparisons have a key path on one side.
        if case .constant = lo, case .constant = ro, case .constant(let a) = lo, case .constant(let b) = ro {
            // Two constants: the evaluator's own answer, quantifiers and options included.
            guard let v = evaluateConstants(q, a, op, options, b, range) else {
                throw SQLLoweringError.everyRow(
                    "comparing the constants \(show(a)) and \(show(b)), which raises in memory, cannot be lowered to SQL",
                    range: range)
            }
            return .constant(v != negated)
        }
        guard let q else { return try leaf(lo, op, options, ro, negated: negated, range: range) }
        return try quantified(q, lo, l, op, options, ro, r, negated: negated, range: range, scope)
    }

    /// A SUBQUERY's result as a whole against a constant (nil, a list) or against its own
    /// collection; nil when neither side is one that lowers so.
    private func wholeSubqueryComparison(
        _ l: ExpressionSyntax, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: ExpressionSyntax,
        negated: Bool, range: SourceRange, _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered? {
        // See SubqueryComparison.swift. Memory evaluates the SUBQUERY's predicate on each element,
        // which may raise where the comparison folds (see RowGuard.swift).
        noteRiskOnEveryRow(range)
        for (a, b) in [(l, r), (r, l)] where isSubqueryResult(a) {
            if !isConstant(b) {
                // Against its own collection (`SUBQUERY(kids, $k, P) == kids`).
                if options.isEmpty,
                    let lowered = try subqueryAgainstItsCollection(a, op, b, negated: negated, scope)
                {
                    return lowered
                }
                continue
            }
            guard case .constant(let v) = try operand(b, scope) else { continue }
            if let lowered = try subqueryComparison(a, op, options, v, negated: negated, range: range, scope) {
                return lowered
            }
        }
        return nil
    }

    /// `ANY`/`ALL lhs op rhs`: over a constant list, one leaf per element; over a list computed by
    /// memory, memory's own comparison; over a to-many key path, EXISTS / NOT EXISTS an element.
    private func quantified(
        _ q: Quantifier, _ lo: Operand, _ l: ExpressionSyntax, _ op: ComparisonOperator,
        _ options: ComparisonOptions, _ ro: Operand, _ r: ExpressionSyntax, negated: Bool, range: SourceRange,
        _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered {
        if case .constant = lo, case .constant(let c) = lo,
            c == .null || { if case .array = c { true } else { false } }()
        {
            // ANY / ALL over a constant list: one leaf per element, ORed (ANY) or ANDed (ALL); nil
            // is an empty list (memory quantifies over no element).
            var items: [LiteralValue] = []
            if case .array(let list) = c { items = list }
            let isAny = q == .any
            var parts: [PredicateSyntax] = []
            for item in items {
                parts.append(
                    PredicateSyntax(
                        .comparison(
                            quantifier: nil, lhs: ExpressionSyntax(.constant(value: item), range: l.range),
                            operator: op, options: options, rhs: r), range: range))
            }
            let junction = PredicateSyntax(isAny ? .or(operands: parts) : .and(operands: parts), range: range)
            if parts.isEmpty { return .constant(isAny == negated) }
            return try predicate(junction, negated: negated, scope)
        }
        if lo.isComputedList {
            // ANY/ALL over a list computed by memory (`mode:`): memory's own quantified comparison.
            guard
                case .scalar(let call) = try memoryCall(
                    SQLFunctions.quantifiedSelector(q, op, options), [(lo, l), (ro, r)],
                    type: .boolean, range)
            else { throw unsupported(op.symbol, range) }
            return .sql(call.fragment + Fragment(negated ? " = 0" : " = 1"))
        }
        guard case .collection(let c) = lo else {
            if isLoweringOneShape {
                // One shape of a mixed key (or of SELF) that is not a collection: memory raises on a
                // value or an object, and quantifies over nothing for nil.
                return .constant((q == .all) != negated)
            }
            throw SQLLoweringError(
                .notACollection, "\(q.rawValue) needs a to-many key path, got '\(l)'", range: l.range)
        }
        // ANY: EXISTS an element where pos; ALL: NOT EXISTS an element where neg (true when empty or nil).
        let inner = try exists(c) { (es, value) throws(SQLLoweringError) in
            // Split here as well: a mixed key of the element row is visible only inside EXISTS.
            try splitOnShapes { () throws(SQLLoweringError) in
                let element: Operand
                if c.rest.isEmpty, value == nil, let es, case .constant(let k) = ro, k.namesObjects {
                    // The element objects against `%@` objects: their primary keys (`ANY reports == %@`).
                    element = .object(Fragment(column(es.alias, es.entity.primaryKey)), c.relationship.name)
                } else if c.rest.isEmpty {
                    guard let value else {
                        throw SQLLoweringError(
                            .typeMismatch,
                            "\(q.rawValue) compares the objects of '\(c.relationship.name)'; name a key of them",
                            range: l.range)
                    }
                    element = .scalar(value)
                } else if let es {
                    element = try scalarize(try keyPath(c.rest, es, l.range))
                } else {
                    throw SQLLoweringError(
                        .unknownKey, "the values of '\(c.relationship.name)' have no key '\(c.rest[0])'", range: l.range
                    )
                }
                let test = try leaf(element, op, options, ro, negated: q == .all, range: range)
                guard c.union != nil, case .scalar(let s) = element else { return test }
                // A union holds only the values that are not nil.
                let present = Fragment("(") + s.fragment + Fragment(" IS NOT NULL)")
                switch test {
                case .constant(false): return test
                case .constant(true): return .sql(present)
                case .sql(let f): return .sql(present + Fragment(" AND ") + f.parenthesized)
                }
            }
        }
        let existsTrue = (q == .any) != negated
        return existsTrue ? inner : not(inner)
    }

    /// NOT of a two-valued lowering (EXISTS).
    func not(_ l: Lowered) -> Lowered {
        switch l {
        case .constant(let v): .constant(!v)
        case .sql(let f): .sql(Fragment("NOT ") + f)
        }
    }

    /// Collection operators (`@count`, `@sum.x`, …) become scalar subqueries.
    func scalarize(_ o: consuming Operand) throws(SQLLoweringError) -> Operand {
        // One binding of the collection (a copy of it costs retains on every operand lowered),
        // and none for the other operands, which are handed back as they came.
        guard case .collection = o else { return o }
        guard case .collection(var c) = o else { return o }
        if let counted = try mappedCount(c) { c = counted }
        guard let first = c.rest.first, KeyPathComponent.isCollectionOperator(first) else { return o }
        let key = Array(c.rest.dropFirst())
        let countColumn = c.relationship.countColumn.map { column(c.owner.alias, $0) }
        func nilWhenCollectionNil(_ f: Fragment) -> Fragment {
            guard let isNil = collectionIsNil(c) else { return f }
            return Fragment("CASE WHEN \(isNil) THEN NULL ELSE ") + f + Fragment(" END")
        }
        switch first {
        case "@count":
            guard key.isEmpty else { throw unsupported("a key path after @count", c.range) }
            // The count column is NULL when the collection is nil, and NULL with a missing owner.
            if let countColumn {
                return .scalar(
                    Scalar(fragment: Fragment(countColumn), attribute: Schema.Attribute(name: "@count", type: .integer))
                )
            }
            let (f, a, _) = try aggregate(c, "COUNT", [])
            return .scalar(Scalar(fragment: nilWhenCollectionNil(f), attribute: a))
        case _
        where (first == "@min" || first == "@max") && c.rest.count == 2 && (try? elementAttribute(c))?.type == .any
            && dialect.callFunction != nil:
            // Among equal numbers of both kinds (10 and 10.0) memory keeps the first, SQL any one:
            // the kind decides `/` and CAST, so a dynamically typed key is left to memory.
            var whole = c
            whole.rest = [c.rest[1]]
            return try memoryCall(
                first,
                [
                    (
                        .collection(whole),
                        ExpressionSyntax(
                            .keyPath(base: nil, components: [c.relationship.name] + whole.rest), range: c.range)
                    )
                ],
                type: .any, c.range)
        case "@sum", "@avg", "@min", "@max":
            let fn = ["@sum": "SUM", "@avg": "AVG", "@min": "MIN", "@max": "MAX"][first]!
            let (f, a, dualText) = try aggregate(c, fn, key)
            if fn == "SUM" || fn == "AVG" {
                guard [.integer, .double, .decimal, .boolean, .any].contains(a.type) else {
                    throw SQLLoweringError(
                        .typeMismatch, "\(first) needs numbers, '\(a.name)' is \(a.type.rawValue)", range: c.range)
                }
            }
            if a.type == .decimal && a.effectiveEncoding == .text {
                throw unsupported("\(first) of TEXT-encoded decimals", c.range)
            }
            // SUM of nothing is 0 in memory, NULL in SQL.
            let value = fn == "SUM" ? Fragment("COALESCE(") + f + Fragment(", 0)") : f
            let type: Schema.ValueType = (fn == "SUM" || fn == "AVG") ? .double : a.type
            var result = Scalar(
                fragment: nilWhenCollectionNil(value),
                attribute: Schema.Attribute(name: first, type: type, encoding: type == a.type ? a.encoding : nil))
            result.text = dualText.map(nilWhenCollectionNil)
            return .scalar(result)
        default:
            throw unsupported("the collection operator '\(first)'", c.range)
        }
    }

    /// `kids.age.@count` as `kids.@count`: memory maps a key over the elements and keeps a nil for
    /// every element without a value, so the mapped array has exactly one entry per element (and is
    /// nil when the collection is). The key is still resolved in the element's scope, so a path
    /// memory would raise on (a key of an attribute, a to-many inside) is rejected as before.
    /// nil when `c` is not such a count.
    func mappedCount(_ c: Collection) throws(SQLLoweringError) -> Collection? {
        guard c.union == nil, c.rest.count >= 2, c.rest.last == "@count",
            !c.rest.dropLast().contains(where: KeyPathComponent.isCollectionOperator)
        else { return nil }
        let key = Array(c.rest.dropLast())
        guard let es = try elements(c).element else {
            throw SQLLoweringError(
                .unknownKey, "the values of '\(c.relationship.name)' have no key '\(key[0])'", range: c.range)
        }
        switch try keyPath(key, es, c.range) {
        case .scalar, .object: break
        case .constant, .collection:
            throw SQLLoweringError(
                .toManyKeyPath,
                "'\(key.joined(separator: "."))' of the elements of '\(c.relationship.name)' is not a value",
                range: c.range)
        }
        var counted = c
        counted.rest = ["@count"]
        return counted
    }

    /// Whether the objects of `c` (memory's array of dictionaries) equal the constant `other`, as
    /// two-valued SQL (never NULL) in both polarities (`equal`, `unequal`); nil when it cannot be
    /// said here. `{}` holds exactly for an empty, non-nil collection (nil is no array). A
    /// dictionary equals no string, number, date or data, so a list of such values (no nil in it:
    /// the store keeps a null element apart from an empty object in no way) is equal to no
    /// collection, and a single value equals no array.
    func emptyOrObjectsEqual(_ c: Collection, _ other: LiteralValue) throws(SQLLoweringError) -> (
        equal: Lowered, unequal: Lowered
    )? {
        switch other {
        case .array(let items) where items.isEmpty: return try collectionIsEmpty(c, nil)
        case .array(let items):
            return items.allSatisfy({ $0.isScalar && $0 != .null }) ? (.constant(false), .constant(true)) : nil
        case .null, .dictionary: return nil
        default: return (.constant(false), .constant(true))
        }
    }

    /// Two-valued SQL that is true exactly when the collection is not nil and no element of it
    /// passes `kept` (nil: no element at all), and its complement.
    func collectionIsEmpty(_ c: Collection, _ kept: ((Scope?, Scalar?) throws(SQLLoweringError) -> Lowered)?)
        throws(SQLLoweringError) -> (Lowered, Lowered)
    {
        if kept == nil, let cc = c.relationship.countColumn {
            // The count column is NULL when the collection (or its owner) is nil: `IS` makes that false.
            let empty = Fragment(
                dialect.isNotDistinct(column(c.owner.alias, cc), String(Fragment.marker)), [.integer(0)])
            return (
                .sql(empty),
                .sql(Fragment(dialect.isDistinct(column(c.owner.alias, cc), String(Fragment.marker)), [.integer(0)]))
            )
        }
        let isNil = collectionIsNil(c)
        let any = try exists(c) { (es, value) throws(SQLLoweringError) in try kept?(es, value) ?? .constant(true) }
        switch (isNil, any) {
        case (nil, _): return (not(any), any)
        case (let n?, .constant(false)): return (.sql(Fragment("NOT \(n)")), .sql(Fragment(n)))
        case (_?, .constant(true)): return (.constant(false), .constant(true))
        case (let n?, .sql(let f)):
            return (.sql(Fragment("NOT \(n) AND NOT ") + f), .sql(Fragment("\(n) OR ") + f))
        }
    }

    /// One comparison without quantifier, in the requested polarity.
    func leaf(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        if l.isComputedList || r.isComputedList {
            // A list computed by memory (`mode:`) is compared by memory, whatever the operator.
            return try memoryComparison(l, op, options, r, negated: negated, range: range)
        }
        func isCollection(_ o: Operand) -> Bool { if case .collection = o { true } else { false } }
        func isList(_ o: Operand) -> Bool { if case .constant(.array) = o { true } else { isCollection(o) } }
        // A collection's elements are folded where each is compared (the inner `leaf`); IN and
        // CONTAINS over a list compare elements with `==` without options, as memory does.
        if dialect.textFunction == nil, Schema.FoldedColumns.fold(options), !isCollection(l), !isCollection(r),
            !((op == .in || op == .contains) && (isList(l) || isList(r)))
        {
            // No Sift folding in the database: compare the writer's folded copies, and the
            // constants folded here, as memory folds both sides.
            var plain = options
            plain.subtract([.caseInsensitive, .diacriticInsensitive, .localeSensitive])
            return try unfoldedLeaf(
                try foldedOperand(l, options, range), op, plain,
                try foldedOperand(r, options, range, likePattern: op == .like), negated: negated, range: range)
        }
        // The operands are passed on as they are: copying an operand costs a retain per string it holds.
        return try unfoldedLeaf(l, op, options, r, negated: negated, range: range)
    }

    /// `leaf` once string options need no folded copies.
    private func unfoldedLeaf(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        noteRisk(l, op, r, range)
        do {
            if let dynamic = try dynamicLeaf(l, op, options, r, negated: negated, range: range) { return dynamic }
            return try typedLeaf(l, op, options, r, negated: negated, range: range)
        } catch {
            // A type error only for one shape of a mixed key, or under == and != over records
            // whose types were inferred, not declared (memory answers those between any two
            // values): elsewhere it is worth reporting (a store then runs the comparison in memory,
            // which raises where the types do not fit).
            let inferred = (op == .equal || op == .notEqual) && canDecideOnDocuments
            guard error.askMemory || (error.betweenValues && (isLoweringOneShape || inferred)) else { throw error }
            return try memoryComparison(l, op, options, r, negated: negated, range: range)
        }
    }

    /// A comparison whose types SQL cannot compare (a date with a number, a string with a date):
    /// memory's own comparison, called from SQL with both values. It returns 1 or 0, and NULL
    /// where memory raises.
    func memoryComparison(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        guard dialect.callFunction != nil else {
            throw unsupported("\(op.symbol) of these values in this dialect (only memory can compare them)", range)
        }
        let placeholder = ExpressionSyntax(.constant(value: .null), range: range)
        guard
            case .scalar(let call) = try memoryCall(
                SQLFunctions.comparisonSelector(op, options),
                [(l, placeholder), (r, placeholder)], type: .boolean, range)
        else {
            throw unsupported(op.symbol, range)
        }
        return .sql(call.fragment + Fragment(negated ? " = 0" : " = 1"))
    }

    /// A leaf's SQL under its polarity: the positive form, or when `negated` the negated form
    /// (`neg`, or the positive's IS NOT TRUE, which keeps the NULL rows).
    func pick(_ negated: Bool, _ pos: Fragment, _ neg: Fragment? = nil) -> Lowered {
        .sql(negated ? (neg ?? notTrue(pos)) : pos)
    }

    /// `leaf` for operands whose types SQL can compare.
    func typedLeaf(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        switch op {
        case .in: return try membership(collection: r, value: l, options, negated: negated, range: range)
        case .contains: return try membership(collection: l, value: r, options, negated: negated, range: range)
        case .utiConformsTo, .utiEquals:
            // The type table is the evaluator's; no SQL expression knows it, so memory answers
            // from SQL (a dialect that cannot call Swift rejects this).
            return try memoryComparison(l, op, options, r, negated: negated, range: range)
        default: break
        }

        if isLoweringOneShape, case .object(let a, _) = l, case .object(let b, _) = r, a.sql == b.sql,
            a.bindings.isEmpty, b.bindings.isEmpty, op == .equal || op == .notEqual
        {
            // The same object (or nil) on both sides.
            return .constant((op == .equal) != negated)
        }
        // Relationship objects and bare to-many paths: only nil comparisons. (Tested first: the
        // array of pairs copies both operands, which most leaves, two values, do not need.)
        func isObjectOrCollection(_ o: Operand) -> Bool {
            switch o {
            case .object, .collection: true
            default: false
            }
        }
        for (side, other) in isObjectOrCollection(l) || isObjectOrCollection(r) ? [(l, r), (r, l)] : [] {
            switch side {
            case .object(let fk, let name):
                return try objectLeaf(fk, name, op, other, negated: negated, range: range)
            case .collection(let c):
                return try collectionLeaf(c, l, op, options, r, other: other, negated: negated, range: range)
            default: continue
            }
        }
        return try valueLeaf(l, op, options, r, negated: negated, range: range)
    }

    /// A relationship object (its foreign key `fk`) compared with `other`: only nil comparisons
    /// are SQL; an object against a scalar is decided when one shape of a mixed key is lowered.
    private func objectLeaf(
        _ fk: Fragment, _ name: String, _ op: ComparisonOperator, _ other: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        if case .constant(.object(let ref)) = other, op == .equal || op == .notEqual {
            return sameObject(fk, ref, equal: op == .equal, negated: negated)
        }
        if isLoweringOneShape, case .constant(let c) = other, c != .null {
            // An object equals no number, string, date or list; ordering or matching it
            // raises in memory, and a nil object (a missing to-one) is false there.
            switch (op, c.isScalar) {
            case (.equal, _): if case .dictionary = c {} else { return .constant(negated) }
            case (.notEqual, _): if case .dictionary = c {} else { return .constant(!negated) }
            case (.lessThan, true), (.lessThanOrEqual, true), (.greaterThan, true), (.greaterThanOrEqual, true),
                (.beginsWith, true), (.endsWith, true), (.like, true), (.matches, true):
                return .constant(negated)
            default: break
            }
        }
        guard case .constant(.null) = other, op == .equal || op == .notEqual else {
            var e = SQLLoweringError(
                .typeMismatch, "the relationship '\(name)' can only be compared with nil", range: range)
            // Equality of dictionaries is memory's, on the document; ordering one raises.
            e.readsDocument = op == .equal || op == .notEqual
            throw e
        }
        let isNull = Fragment(fk.sql + " IS NULL")
        let notNull = Fragment(fk.sql + " IS NOT NULL")
        return op == .equal ? pick(negated, isNull, notNull) : pick(negated, notNull, isNull)
    }

    /// A relationship object (its foreign key `fk`) compared with a `%@` object: the key of the
    /// object's row, bound; nil, or an object without a row (unsaved: memory judges the pending
    /// objects that point at it), is not it.
    private func sameObject(_ fk: Fragment, _ ref: ObjectReference, equal: Bool, negated: Bool) -> Lowered {
        guard let key = ref.primaryKey else { return .constant(equal == negated) }
        let same = Fragment(fk.sql + " = ", fk.bindings) + .param(.integer(key))
        let differs = Fragment("(" + fk.sql + " IS NULL OR " + fk.sql + " <> ", fk.bindings + fk.bindings)
        let other = differs + .param(.integer(key)) + Fragment(")")
        return equal ? pick(negated, same, other) : pick(negated, other, same)
    }

    /// A relationship object (its foreign key `fk`) in a list of `%@` objects: one of their rows'
    /// keys (the unsaved ones have none).
    private func objectInList(_ fk: Fragment, _ refs: [ObjectReference], negated: Bool) -> Lowered {
        let keys = refs.compactMap(\.primaryKey)
        guard !keys.isEmpty else { return .constant(negated) }
        let marks = Array(repeating: String(Fragment.marker), count: keys.count).joined(separator: ", ")
        let params = keys.map { SQLValue.integer($0) }
        let inside = Fragment(fk.sql + " IN (" + marks + ")", fk.bindings + params)
        let outside = Fragment(
            "(" + fk.sql + " IS NULL OR " + fk.sql + " NOT IN (" + marks + "))", fk.bindings + fk.bindings + params)
        return pick(negated, inside, outside)
    }

    /// A bare to-many path `c` (one side of `l op r`) compared with `other`: a union or an ordered
    /// collection as memory's array, compared by memory; the objects of an ordered to-many against
    /// a constant list; otherwise only nil comparisons.
    private func collectionLeaf(
        _ c: Collection, _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions,
        _ r: Operand, other: Operand, negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        if c.union != nil && (op == .equal || op == .notEqual || isLoweringOneShape) {
            // Memory's own union and comparison, nil included.
            return try memoryComparison(l, op, options, r, negated: negated, range: range)
        }
        if c.rest.isEmpty, c.union == nil, !c.shape.isValuesShape, c.relationship.orderColumn != nil,
            op == .equal || op == .notEqual, case .constant(let list) = other,
            let (equal, unequal) = try emptyOrObjectsEqual(c, list)
        {
            // The objects of an ordered to-many (an array of dictionaries in memory) compared with a constant.
            return (op == .equal) != negated ? equal : unequal
        }
        // Only an ordered collection is an array in memory; a set's equality ignores order.
        // Equality never raises in memory; other operators do on an array, which only one
        // shape of a mixed key may lower (to anything).
        // (A dialect without Sift's functions rejects it there, naming the comparison.)
        if c.relationship.orderColumn != nil, !c.rest.contains(where: KeyPathComponent.isCollectionOperator),
            op == .equal || op == .notEqual || isLoweringOneShape,
            !c.rest.isEmpty || c.shape.isValuesShape
        {
            switch other {
            case .constant(.null) where op == .equal || op == .notEqual: break
            case .constant, .scalar, .collection:
                // The collection as memory's array, compared by memory (`kids.name == {'a'}`).
                return try memoryComparison(l, op, options, r, negated: negated, range: range)
            default: break
            }
        }
        guard case .constant(.null) = other, op == .equal || op == .notEqual else {
            throw SQLLoweringError(
                .toManyKeyPath,
                "the to-many key path '\(c.relationship.name)' needs ANY, ALL, NONE, IN or a collection operator",
                range: range)
        }
        guard let isNilSQL = collectionIsNil(c) else { return .constant((op == .notEqual) != negated) }
        let isNull = Fragment(isNilSQL)
        let notNull = Fragment("NOT " + isNilSQL)
        return op == .equal ? pick(negated, isNull, notNull) : pick(negated, notNull, isNull)
    }

    /// Whether `options` change how text compares here. `[n]` alone compares the stored text
    /// literally, which a dialect without Sift's functions does natively (its constants are bound
    /// as written); folding options are handled before this point there (see `leaf`), or rejected.
    private func isAltering(_ options: ComparisonOptions) -> Bool {
        !options.intersection([.caseInsensitive, .diacriticInsensitive, .normalized]).isEmpty
            && !(dialect.textFunction == nil
                && options.intersection([.caseInsensitive, .diacriticInsensitive]).isEmpty)
    }

    /// Two values (constants and columns) compared: folded, swapped so the column is on the
    /// left, or rendered by the column/constant and column/column forms.
    private func valueLeaf(
        _ l: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ r: Operand,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        switch (l, r) {
        case (.constant(let a), .constant(let b)):
            guard let v = try foldConstant(a, op, options, b, range) else {
                throw unsupported("comparing the constants \(show(a)) and \(show(b)) with \(op.symbol)", range)
            }
            return .constant(v != negated)

        case (.constant(let c), .scalar(let s))
        where [.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains(op):
            // Swap so the column is on the left.
            let swapped: ComparisonOperator =
                [
                    .lessThan: .greaterThan, .greaterThan: .lessThan,
                    .lessThanOrEqual: .greaterThanOrEqual, .greaterThanOrEqual: .lessThanOrEqual,
                ][op] ?? op
            return try leaf(.scalar(s), swapped, options, .constant(c), negated: negated, range: range)

        case (.scalar(let s), .constant(let c)) where isUnstorable(c, s.attribute):
            // A date the column cannot hold (between two milliseconds of an ISO-8601 column, or
            // finer than seconds since 1970 can say): no stored value equals it, and an ordering
            // holds exactly when it holds for the nearest storable date on the right side
            // (see `storableDate`).
            switch op {
            case .equal: return .constant(negated)
            case .notEqual: return .constant(!negated)
            default:
                let snapped = snappedToStorable(c, s.attribute, up: op == .lessThan || op == .greaterThanOrEqual)
                guard !isUnstorable(snapped, s.attribute) else {
                    throw unsupported(
                        "comparing the date '\(s.attribute.name)' with \(show(c)), which its encoding cannot hold",
                        range)
                }
                return try leaf(l, op, options, .constant(snapped), negated: negated, range: range)
            }

        case (.scalar(let s), .constant(let c)):
            return try columnConstantLeaf(s, op, options, c, negated: negated, range: range)

        case (.constant(let c), .scalar(let s)):
            // Text operators with the constant as the searched string.
            guard [.beginsWith, .endsWith, .like, .matches].contains(op) else {
                throw unsupported("\(op.symbol) with a constant on the left", range)
            }
            if c == .null { return .constant(negated) }
            try checkText(s.attribute, op, range)
            guard case .string = c else {
                throw SQLLoweringError(.typeMismatch, "\(op.symbol) needs a string, got \(show(c))", range: range)
            }
            let v = try encode(c, for: Schema.Attribute(name: "", type: .string), options, range)
            return pick(negated, try textCall(op, .param(v), s.fragment, .integer(Int64(options.rawValue)), range))

        case (.scalar(let a), .scalar(let b)):
            return try columnColumnLeaf(a, op, options, b, negated: negated, range: range)

        default:
            throw unsupported(op.symbol, range)
        }
    }

    /// A column compared with a constant it can hold.
    private func columnConstantLeaf(
        _ s: Scalar, _ op: ComparisonOperator, _ options: ComparisonOptions, _ c: LiteralValue,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        let col = s.fragment
        let f = SQLValue.integer(Int64(options.rawValue))
        let altering = isAltering(options)
        switch op {
        case .equal, .notEqual:
            let (pos, neg): (Fragment, Fragment?)
            if c == .null {
                (pos, neg) = (col + Fragment(" IS NULL"), col + Fragment(" IS NOT NULL"))
            } else if altering, case .string = c, [.string, .any].contains(s.attribute.type) {
                let v = try encode(c, for: s.attribute, options, range)
                (pos, neg) = (try textCall(.equal, col, .param(v), f, range), nil)
            } else if let exact = try integerDoubleComparison(s, c, op, range) {
                return pick(negated, exact.pos, exact.neg)
            } else {
                let v = try encode(c, for: s.attribute, options, range)
                (pos, neg) = (
                    col + Fragment(" = ") + .param(v),
                    Fragment(dialect.isDistinct(col.sql, String(Fragment.marker)), col.bindings + [v])
                )
            }
            if op == .equal { return pick(negated, pos, neg) }
            return .sql(negated ? pos : (neg ?? (notTrue(pos))))
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            if c == .null {
                // Both nil is true for <= and >=; one nil is false.
                if op == .lessThan || op == .greaterThan { return .constant(negated) }
                return pick(negated, col + Fragment(" IS NULL"), col + Fragment(" IS NOT NULL"))
            }
            try checkOrderable(s.attribute, range)
            if let exact = try integerDoubleComparison(s, c, op, range) { return pick(negated, exact.pos, exact.neg) }
            let v = try encode(c, for: s.attribute, options, range)
            if s.mayBeNaN
                || (altering && { if case .string = c { true } else { false } }()
                    && [.string, .any].contains(s.attribute.type))
            {
                // Text under options, or a NaN (a BLOB here): Sift's order, not SQLite's.
                let compare = try compareFunction(
                    s.mayBeNaN ? "ordering a value that may be NaN" : "ordering text under string options", range)
                return pick(
                    negated,
                    Fragment("\(compare)(") + col + Fragment(", ") + .param(v) + Fragment(", ") + .param(f)
                        + Fragment(") \(op.symbol) 0"))
            }
            let negOp = [
                ComparisonOperator.lessThan: ">=", .lessThanOrEqual: ">", .greaterThan: "<=", .greaterThanOrEqual: "<",
            ][op]!
            let bound = textOrdered(.param(v), s.attribute)
            return pick(
                negated, col + Fragment(" \(op.symbol) ") + bound,
                Fragment("(") + col + Fragment(" \(negOp) ") + bound + Fragment(" OR ") + col + Fragment(" IS NULL)"))
        case .beginsWith, .endsWith, .like, .matches:
            if c == .null { return .constant(negated) }
            try checkText(s.attribute, op, range)
            guard case .string = c else {
                throw SQLLoweringError(.typeMismatch, "\(op.symbol) needs a string, got \(show(c))", range: range)
            }
            let v = try encode(c, for: Schema.Attribute(name: "", type: .string), options, range)
            if op == .beginsWith, !altering, case .text(let prefix) = v {
                if prefix.isEmpty { return .constant(negated) }  // an empty needle never matches
                if let prefixed = try prefixRange(col, prefix, f, range) { return pick(negated, prefixed) }
            }
            return pick(negated, try textCall(op, col, .param(v), f, range))
        case .between:
            return try between(s, c, options, negated: negated, range: range)
        default:
            throw unsupported(op.symbol, range)
        }
    }

    /// Two columns compared.
    private func columnColumnLeaf(
        _ a: Scalar, _ op: ComparisonOperator, _ options: ComparisonOptions, _ b: Scalar,
        negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        try checkCompatible(a.attribute, b.attribute, range)
        if let datePair = dateAgainstDynamic(a, op, b, negated: negated) { return datePair }
        let (x, y) = (withoutAffinity(a, against: b), withoutAffinity(b, against: a))
        let f = SQLValue.integer(Int64(options.rawValue))
        let textual =
            isAltering(options)
            && ([.string, .any].contains(a.attribute.type) || [.string, .any].contains(b.attribute.type))
        // NaN is a BLOB here, which SQLite orders above numbers and memory below them.
        let nan = a.mayBeNaN || b.mayBeNaN
        switch op {
        case .equal, .notEqual:
            let pos: Fragment
            let neg: Fragment?
            if textual {
                pos =
                    Fragment("((") + x + Fragment(" IS NULL AND ") + y + Fragment(" IS NULL) OR ")
                    + (try textCall(.equal, x, y, f, range)) + Fragment(")")
                neg = nil
            } else {
                (pos, neg) = (
                    Fragment(dialect.isNotDistinct(x.sql, y.sql), x.bindings + y.bindings),
                    Fragment(dialect.isDistinct(x.sql, y.sql), x.bindings + y.bindings)
                )
            }
            if op == .equal { return pick(negated, pos, neg) }
            return .sql(negated ? pos : (neg ?? (notTrue(pos))))
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            try checkOrderable(a.attribute, range)
            var pos: Fragment
            if textual || nan {
                let compare = try compareFunction(
                    nan ? "ordering a value that may be NaN" : "ordering text under string options", range)
                pos =
                    Fragment("\(compare)(") + x + Fragment(", ") + y + Fragment(", ") + .param(f)
                    + Fragment(") \(op.symbol) 0")
            } else {
                pos = x + Fragment(" \(op.symbol) ") + textOrdered(y, b.attribute)
            }
            if op == .lessThanOrEqual || op == .greaterThanOrEqual {
                pos =
                    Fragment("(") + pos + Fragment(" OR (") + x + Fragment(" IS NULL AND ") + y + Fragment(" IS NULL))")
            }
            return pick(negated, pos)
        case .beginsWith, .endsWith, .like, .matches:
            try checkText(a.attribute, op, range)
            try checkText(b.attribute, op, range)
            return pick(negated, try textCall(op, x, y, f, range))
        default:
            throw unsupported("\(op.symbol) between two key paths", range)
        }
    }

    /// A declared side compared with a dynamically typed one, without its column's affinity. SQLite
    /// applies a declared column's affinity to the other side of a comparison: an INTEGER or REAL
    /// column converts numeric-looking text (`3 IS '3'` is true), a TEXT one converts a number
    /// computed by an expression. Memory never finds a number equal to a string, so beside an
    /// `any` side the declared one is written `+(x)`: no affinity, still a column for its collation.
    func withoutAffinity(_ a: Scalar, against b: Scalar) -> Fragment {
        guard dialect.traits.contains(.dynamicTyping), a.attribute.type != .any, b.attribute.type == .any else {
            return a.fragment
        }
        return Fragment("+(") + a.fragment + Fragment(")")
    }

    /// A date compared for equality with a dynamically typed value, which never holds a date: equal
    /// only when both are nil. (Stored as seconds or as ISO text, a date would otherwise equal a
    /// number or a string of the same content.) Nil when the comparison is not of that form.
    private func dateAgainstDynamic(_ a: Scalar, _ op: ComparisonOperator, _ b: Scalar, negated: Bool) -> Lowered? {
        guard op == .equal || op == .notEqual,
            Set([a.attribute.type, b.attribute.type]) == [.date, .any]
        else { return nil }
        let bothNil = Fragment("(") + a.fragment + Fragment(" IS NULL AND ") + b.fragment + Fragment(" IS NULL)")
        return pick(negated != (op == .notEqual), bothNil)
    }

    /// Case-sensitive BEGINSWITH as an index range on the NFC store. With p⁺ = p with its last
    /// scalar incremented (UTF-8 byte order is scalar order), every string starting with p lies in
    /// [p, p⁺). The evaluator also requires that a match not end just before a combining mark, and
    /// every combining mark is ≥ U+0300, so the strings below p‖U+0300 match outright and only the
    /// rest of the range needs `sift_text`:
    /// `(col >= p AND col < p⁺ AND (col < p‖U+0300 OR sift_text(…) = 1))`.
    /// One index range, and in the common case one more comparison per row and no function call.
    /// (Two ranges joined by OR read the same rows but make SQLite build a row set: measured slower.)
    /// nil when p ends in U+10FFFF (no successor): use `sift_text` alone.
    func prefixRange(_ col: Fragment, _ prefix: String, _ flags: SQLValue, _ range: SourceRange)
        throws(SQLLoweringError) -> Fragment?
    {
        var scalars = Array(prefix.unicodeScalars)
        let last = scalars.removeLast().value
        let next: UInt32 = last == 0xD7FF ? 0xE000 : last + 1
        guard last < 0x10FFFF, let succ = Unicode.Scalar(next) else { return nil }
        var upper = String.UnicodeScalarView(scalars)
        upper.append(succ)
        var marked = prefix.unicodeScalars
        marked.append("\u{300}")
        let split = String(marked)
        let text = Schema.Attribute(name: "", type: .string)
        let inRange =
            Fragment("(") + col + Fragment(" >= ") + textOrdered(.param(.text(prefix)), text) + Fragment(" AND ") + col
            + Fragment(" < ")
            + textOrdered(.param(.text(String(upper))), text) + Fragment(" AND ")
        let below = col + Fragment(" < ") + textOrdered(.param(.text(split)), text)
        let check = try textCall(.beginsWith, col, .param(.text(prefix)), flags, range)
        if dialect.textFunction == nil {
            // PostgreSQL estimates `col ~ pattern` by running the pattern over the column's
            // statistics at every planning, which cost more than the lookup; a CASE hides it from
            // the estimate (and runs it only past U+0300, as the OR did). col is not NULL in range.
            return inRange + Fragment("CASE WHEN ") + below + Fragment(" THEN TRUE ELSE ") + check + Fragment(" END)")
        }
        return inRange + Fragment("(") + below + Fragment(" OR ") + check + Fragment("))")
    }

    /// A text operator (`==` under options, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES) that is
    /// 1 exactly where memory says true: Sift's `sift_text`, or in a dialect without it the native
    /// SQL of ``nativeText(_:_:_:_:_:)``.
    func textCall(_ op: ComparisonOperator, _ s: Fragment, _ needle: Fragment, _ flags: SQLValue, _ range: SourceRange)
        throws(SQLLoweringError) -> Fragment
    {
        guard let function = dialect.textFunction else { return try nativeText(op, s, needle, flags, range) }
        let code: SQLFunctions.TextOp =
            switch op {
            case .beginsWith: .beginsWith
            case .endsWith: .endsWith
            case .like: .like
            case .matches: .matches
            case .contains, .in: .contains
            default: .equal
            }
        return Fragment("\(function)(\(code.rawValue), ") + s + Fragment(", ") + needle + Fragment(", ") + .param(flags)
            + Fragment(") = 1")
    }

    /// A text operator in a dialect that cannot call Sift (PostgreSQL), exact or rejected:
    /// - string options `[c]`/`[d]` need Sift's Unicode folding: rejected; `[n]` drops the
    ///   combining-mark rule, as memory's literal search does;
    /// - MATCHES: PostgreSQL's regular expressions are not PCRE2's: rejected;
    /// - LIKE with a constant pattern: PostgreSQL's LIKE (`?` and `_` are both one scalar);
    /// - BEGINSWITH, ENDSWITH, CONTAINS: a regular expression with memory's rule that a match may
    ///   not end before a combining mark, built here for a constant needle, in SQL otherwise.
    /// NULL on either side gives NULL, which the callers treat as memory's false.
    func nativeText(
        _ op: ComparisonOperator, _ s: Fragment, _ needle: Fragment, _ flags: SQLValue, _ range: SourceRange
    ) throws(SQLLoweringError) -> Fragment {
        guard case .integer(let raw) = flags else { throw unsupported(op.symbol, range) }
        let options = ComparisonOptions(rawValue: UInt8(truncatingIfNeeded: raw))
        let literal = options.contains(.normalized)
        if !literal && !options.intersection([.caseInsensitive, .diacriticInsensitive]).isEmpty {
            throw unsupported(
                "string options [c] and [d] in this dialect (they need Sift's Unicode case and diacritic folding)",
                range)
        }
        // A bound constant needle, which the pattern can be built from here.
        var constant: String?
        if needle.sql == String(Fragment.marker), needle.bindings.count == 1, case .text(let t) = needle.bindings[0] {
            constant = t
        }
        switch op {
        case .matches:
            throw unsupported(
                "MATCHES in this dialect (its regular expressions are not the ICU/PCRE2 dialect memory uses)", range)
        case .like:
            guard let pattern = constant else {
                throw unsupported("LIKE with a pattern that is not a constant in this dialect", range)
            }
            guard let translated = PostgreSQLPatterns.like(pattern, normalize: literal ? { $0 } : nfc) else {
                throw unsupported(
                    "the LIKE pattern '\(pattern)' in this dialect: it ends in a lone backslash (memory raises on it)",
                    range)
            }
            return Fragment("(") + s + Fragment(" LIKE ") + .param(.text(translated)) + Fragment(" ESCAPE ")
                + .param(.text("\\")) + Fragment(")")
        case .equal:
            // `==[n]`: the stored NFC text against the literal constant, byte for byte.
            return Fragment("(") + s + Fragment(" = ") + needle + Fragment(")")
        case .beginsWith, .endsWith, .contains, .in:
            let mark = literal || op == .endsWith ? "" : "(?!" + PostgreSQLPatterns.combiningMark + ")"
            if let constant {
                if constant.isEmpty { return Fragment(dialect.booleanLiteral(false)) }
                let body = PostgreSQLPatterns.literal(constant)
                let pattern = op == .beginsWith ? "^" + body + mark : op == .endsWith ? body + "$" : body + mark
                return Fragment("(") + s + Fragment(" ~ ") + .param(.text(pattern)) + Fragment(")")
            }
            // The needle is a column: escape it in SQL (a backslash before every ASCII character
            // that is not a letter or digit) and build the same expression.
            let escaped =
                Fragment("regexp_replace(") + needle + Fragment(", ") + .param(.text("([^0-9A-Za-z\u{80}-\u{10FFFF}])"))
                + Fragment(", ") + .param(.text("\\\\\\1")) + Fragment(", ") + .param(.text("g")) + Fragment(")")
            var pattern = op == .beginsWith ? Fragment.param(.text("^")) + Fragment(" || ") + escaped : escaped
            pattern = pattern + Fragment(" || ") + .param(.text(op == .endsWith ? "$" : mark))
            return Fragment("(char_length(") + needle + Fragment(") > 0 AND ") + s + Fragment(" ~ (") + pattern
                + Fragment("))")
        default:
            throw unsupported(op.symbol, range)
        }
    }

    /// `o` as `[c]`, `[d]` or `[cd]` (in `options`) folds it: a string constant folded here, a
    /// string column read from its folded copy, a two-column value with its strings folded; values
    /// that are not strings unchanged (folding does not touch them). A string column without
    /// folded copies is `unsupported`.
    func foldedOperand(_ o: Operand, _ options: ComparisonOptions, _ range: SourceRange, likePattern: Bool = false)
        throws(SQLLoweringError) -> Operand
    {
        let textOptions = TextOptions(rawValue: options.rawValue)
        func fold(_ v: LiteralValue) -> LiteralValue {
            switch v {
            case .string(let s) where likePattern:
                // Memory folds a LIKE pattern run by run (a mark after `*` folds on its own).
                return PostgreSQLPatterns.foldedLike(s) { TextFolding.fold($0, textOptions) }.map(LiteralValue.string)
                    ?? v
            case .string(let s): return .string(TextFolding.fold(s, textOptions))
            case .array(let items): return .array(items.map(fold))
            default: return v
            }
        }
        switch o {
        case .constant(let v): return .constant(fold(v))
        case .scalar(var s) where s.attribute.type == .string || s.text != nil:
            guard let columns = s.folded, let alias = s.foldedAlias, let name = columns.column(for: options) else {
                throw unsupported(
                    "string options [c] and [d] on '\(s.attribute.name)', which has no folded copies, in this dialect (they need Sift's Unicode case and diacritic folding)",
                    range)
            }
            if s.text != nil {
                s.text = Fragment(column(alias, name))
            } else {
                s.fragment = Fragment(column(alias, name))
            }
            s.folded = nil
            return .scalar(s)
        default: return o
        }
    }

    /// `(pos) IS NOT TRUE` in the dialect's words: the negation that keeps rows where `pos` is NULL.
    func notTrue(_ pos: Fragment) -> Fragment { Fragment(dialect.isNotTrue(pos.sql), pos.bindings) }

    /// The dialect's three-way comparison function, or `unsupported` naming `what` needs it.
    func compareFunction(_ what: String, _ range: SourceRange) throws(SQLLoweringError) -> String {
        guard let f = dialect.compareFunction else { throw unsupported("\(what) in this dialect", range) }
        return f
    }

    /// The right side of an ordering comparison, with the dialect's scalar-order collation when it
    /// is text (PostgreSQL: `COLLATE "C"`, whatever the column's own collation).
    func textOrdered(_ f: Fragment, _ a: Schema.Attribute) -> Fragment {
        guard a.type == .string, let c = dialect.scalarOrderCollation else { return f }
        return f + Fragment(" COLLATE " + dialect.quote(c))
    }

    /// An integer column compared with a double constant (or a double column with an integer
    /// constant) in a dialect that compares the two as doubles (inexact beyond 2^53): the
    /// constant moved to the other column's type, exactly. `x < 2.5` is `x < 3` on integers,
    /// `x == 2.5` is false; `d == 9007199254740993` is false on doubles (no double equals it).
    /// Returns the positive and negated SQL, or a constant as SQL; nil when no rewrite is needed.
    func integerDoubleComparison(_ s: Scalar, _ c: LiteralValue, _ op: ComparisonOperator, _ range: SourceRange)
        throws(SQLLoweringError) -> (pos: Fragment, neg: Fragment?)?
    {
        guard !dialect.traits.contains(.exactIntegerDoubleComparison) else { return nil }
        let integral = s.attribute.type == .integer || s.attribute.type == .boolean
        let floating =
            s.attribute.type == .double || s.attribute.type == .date
            || (s.attribute.type == .decimal && s.attribute.effectiveEncoding != .text)
        let col = s.fragment
        let t = dialect.booleanLiteral(true)
        let f = dialect.booleanLiteral(false)
        func notNull(_ v: Bool) -> (Fragment, Fragment?) {
            // A comparison true (false) for every non-nil value; nil is false under `<`…, true under `!=`.
            v ? (col + Fragment(" IS NOT NULL"), col + Fragment(" IS NULL")) : (Fragment(f), Fragment(t))
        }
        func ordered(_ symbol: String, _ bound: SQLValue) -> (Fragment, Fragment?) {
            let negOp = ["<": ">=", "<=": ">", ">": "<=", ">=": "<"][symbol]!
            return (
                col + Fragment(" \(symbol) ") + .param(bound),
                Fragment("(") + col + Fragment(" \(negOp) ") + .param(bound) + Fragment(" OR ") + col
                    + Fragment(" IS NULL)")
            )
        }
        if integral, case .double(let d) = c {
            if d.isNaN {
                throw unsupported("comparing the integer '\(s.attribute.name)' with NaN in this dialect", range)
            }
            // The integers below and above d (equal when d is one), or past the Int64 range.
            let lo = d.rounded(.down)
            let hi = d.rounded(.up)
            let fitsLo = lo >= -9.223372036854775808e18 && lo < 9.223372036854775808e18
            let fitsHi = hi >= -9.223372036854775808e18 && hi < 9.223372036854775808e18
            switch op {
            case .equal:
                return lo == d && fitsLo
                    ? (
                        col + Fragment(" = ") + .param(.integer(Int64(lo))),
                        Fragment(
                            dialect.isDistinct(col.sql, String(Fragment.marker)), col.bindings + [.integer(Int64(lo))])
                    ) : (Fragment(f), nil)
            case .notEqual:
                return lo == d && fitsLo
                    ? (
                        Fragment(
                            dialect.isDistinct(col.sql, String(Fragment.marker)), col.bindings + [.integer(Int64(lo))]),
                        col + Fragment(" = ") + .param(.integer(Int64(lo)))
                    ) : (Fragment(t), Fragment(f))
            case .lessThan:  // x < d  ⇔  x < ceil(d)
                if !fitsHi { return notNull(hi > 0) }
                return ordered("<", .integer(Int64(hi)))
            case .greaterThanOrEqual:  // x >= d ⇔ x >= ceil(d)
                if !fitsHi { return notNull(hi < 0) }
                return ordered(">=", .integer(Int64(hi)))
            case .lessThanOrEqual:  // x <= d ⇔ x <= floor(d)
                if !fitsLo { return notNull(lo > 0) }
                return ordered("<=", .integer(Int64(lo)))
            case .greaterThan:  // x > d ⇔ x > floor(d)
                if !fitsLo { return notNull(lo < 0) }
                return ordered(">", .integer(Int64(lo)))
            default: return nil
            }
        }
        if floating, case .integer(let i) = c, Double(exactly: i) == nil {
            // No double equals i; the doubles around it bound the orderings.
            let nearest = Double(i)
            let nearestAbove = Int64(exactly: nearest).map { $0 > i } ?? (nearest > 0)
            let below = nearestAbove ? nearest.nextDown : nearest
            let above = below.nextUp
            switch op {
            case .equal: return (Fragment(f), nil)
            case .notEqual: return (Fragment(t), Fragment(f))
            case .lessThan, .lessThanOrEqual: return ordered("<=", .double(below))
            case .greaterThan, .greaterThanOrEqual: return ordered(">=", .double(above))
            default: return nil
            }
        }
        return nil
    }

    /// IN/CONTAINS in a value that is neither a collection nor a string (memory raises on it,
    /// and is false for nil): left to memory.
    private func notSearchable(_ a: Schema.Attribute, _ range: SourceRange) -> SQLLoweringError {
        .ofValues(
            .notACollection, "IN/CONTAINS needs a collection or a string, '\(a.name)' is \(a.type.rawValue)",
            range: range)
    }

    /// `value IN collection` / `collection CONTAINS value`.
    func membership(
        collection: Operand, value: Operand, _ options: ComparisonOptions, negated: Bool, range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        func pick(_ pos: Fragment, _ neg: Fragment? = nil) -> Lowered { self.pick(negated, pos, neg) }
        let f = SQLValue.integer(Int64(options.rawValue))
        if case .constant(.null) = value { return .constant(negated) }
        // Values kept in two columns (see DynamicLowering.swift): a list tests each kind against
        // its column; a string search reads the strings.
        if case .scalar(let s) = value, s.text != nil, case .constant(.array(let list)) = collection {
            return dynamicInList(s, list.filter { $0 != .null }, negated: negated)
        }
        let dynamicText: (Operand) -> Operand = { o in
            if case .scalar(let s) = o, s.text != nil { return .scalar(self.textView(s)) }
            return o
        }
        var collection = collection
        var value = value
        if case .collection = collection {} else { (collection, value) = (dynamicText(collection), dynamicText(value)) }
        if case .collection(let c) = value {
            // Memory asks whether the array itself is an element (or a substring): its own answer.
            throw .ofValues(
                .toManyKeyPath,
                "the to-many key path '\(c.relationship.name)' needs ANY, ALL or NONE on this side of IN/CONTAINS",
                range: range)
        }
        if case .object(let fk, _) = value, case .constant(.array(let list)) = collection,
            let refs = ObjectReference.all(list)
        {
            return objectInList(fk, refs, negated: negated)
        }
        if case .object(_, let name) = value {
            return try object(name, in: collection, negated: negated, range)
        }
        switch (collection, value) {
        case (.constant(.null), _): return .constant(negated)
        case (.constant(.array(let list)), .scalar(let s)):
            return try scalar(s, inList: list, negated: negated, range)
        case (.constant(.array(let list)), .constant(let v)):
            return try constant(v, inList: list, negated: negated, range)
        case (.constant(.string), .scalar(let s)):
            try checkText(s.attribute, .in, range)
            let v = try encode(
                collectionConstant(collection), for: Schema.Attribute(name: "", type: .string), options, range)
            return pick(try textCall(.contains, .param(v), s.fragment, f, range))
        case (.scalar(let s), .constant(let c)):
            guard [.string, .any].contains(s.attribute.type) else { throw notSearchable(s.attribute, range) }
            guard case .string = c else {
                // Memory raises on any value here but nil: one shape of a mixed key asks memory.
                throw .ofValues(.typeMismatch, "CONTAINS in a string needs a string, got \(show(c))", range: range)
            }
            let v = try encode(c, for: Schema.Attribute(name: "", type: .string), options, range)
            return pick(try textCall(.contains, s.fragment, .param(v), f, range))
        case (.scalar(let s), .scalar(let t)):
            guard [.string, .any].contains(s.attribute.type) else { throw notSearchable(s.attribute, range) }
            try checkText(t.attribute, .contains, range)
            return pick(try textCall(.contains, s.fragment, t.fragment, f, range))
        case (.collection(let c), .constant), (.collection(let c), .scalar):
            return try element(of: c, equals: value, negated: negated, range)
        case (.constant(.string), .constant):
            throw unsupported("a substring test between two constants", range)
        case (.scalar, _), (.constant, _):
            var e = SQLLoweringError(.notACollection, "IN/CONTAINS needs a collection or a string", range: range)
            // A dictionary is searched by its values in memory: the document can answer.
            if case .constant(.dictionary) = collection { e.readsDocument = true }
            throw e
        default:
            throw unsupported("this IN/CONTAINS", range)
        }
    }

    /// Relationship `name`'s object IN/CONTAINED in `collection`: an object is an element of no
    /// list of values (and nil of none); any other collection is memory's error.
    private func object(_ name: String, in collection: Operand, negated: Bool, _ range: SourceRange)
        throws(SQLLoweringError) -> Lowered
    {
        if isLoweringOneShape, case .constant(.array(let list)) = collection, list.allSatisfy(\.isScalar) {
            return .constant(negated)
        }
        var e = SQLLoweringError(
            .typeMismatch, "the relationship '\(name)' can only be compared with nil", range: range)
        e.readsDocument = true
        throw e
    }

    /// `constant IN {list}` between constants, folded.
    private func constant(_ v: LiteralValue, inList list: [LiteralValue], negated: Bool, _ range: SourceRange)
        throws(SQLLoweringError) -> Lowered
    {
        var found = false
        for item in list where item != .null {
            guard let eq = try foldConstant(item, .equal, [], v, range) else {
                throw unsupported("IN between constants", range)
            }
            if eq { found = true }
        }
        return .constant(found != negated)
    }

    /// `scalar IN {list}`: the list's values as parameters (nil and what the column cannot hold
    /// dropped); negated, a NULL column also matches.
    private func scalar(
        _ s: Scalar, inList list: [LiteralValue], negated: Bool, _ range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        // nil is never IN anything; a date the column cannot hold equals no row.
        var items = list.filter { $0 != .null && !isUnstorable($0, s.attribute) }
        if !dialect.traits.contains(.exactIntegerDoubleComparison) {
            // Each number as the column's own type, exactly; one it cannot equal is dropped.
            let integral = s.attribute.type == .integer || s.attribute.type == .boolean
            items = items.compactMap { item in
                switch item {
                case .double(let d) where integral: return Int64(exactly: d).map { .integer($0) }
                case .integer(let i) where !integral && s.attribute.type != .any:
                    return Double(exactly: i) == nil ? nil : item
                default: return item
                }
            }
        }
        if items.isEmpty { return .constant(negated) }
        var params: [Fragment] = []
        for item in items { params.append(.param(try encode(item, for: s.attribute, [], range))) }
        let inList = Fragment.join(params, ", ")
        return self.pick(
            negated,
            s.fragment + Fragment(" IN (") + inList + Fragment(")"),
            Fragment("(") + s.fragment + Fragment(" NOT IN (") + inList + Fragment(") OR ") + s.fragment
                + Fragment(" IS NULL)"))
    }

    /// `value IN collection.key` over a to-many key path: an EXISTS over the related rows.
    private func element(
        of c: Collection, equals value: Operand, negated: Bool, _ range: SourceRange
    ) throws(SQLLoweringError) -> Lowered {
        guard !(c.rest.first.map(KeyPathComponent.isCollectionOperator) ?? false) else {
            throw unsupported("IN over a collection operator", range)
        }
        let inner = try exists(c) { (es, elementColumn) throws(SQLLoweringError) in
            let element: Scalar
            if c.rest.isEmpty {
                guard let elementColumn else {
                    throw SQLLoweringError(
                        .typeMismatch, "IN compares the objects of '\(c.relationship.name)'; name a key of them",
                        range: range)
                }
                element = elementColumn
            } else if let es, case .scalar(let s) = try keyPath(c.rest, es, range) {
                element = s
            } else {
                throw SQLLoweringError(
                    .unknownKey, "'\(c.relationship.name)' has no attribute '\(c.rest.joined(separator: "."))'",
                    range: range)
            }
            if let dynamic = try dynamicElementEquals(element, value, range) { return dynamic }
            switch value {
            case .constant(let v):
                if isUnstorable(v, element.attribute) { return .constant(false) }
                return .sql(
                    element.fragment + Fragment(" = ") + .param(try encode(v, for: element.attribute, [], range)))
            case .scalar(let s):
                try checkCompatible(element.attribute, s.attribute, range)
                return .sql(element.fragment + Fragment(" = ") + s.fragment)
            default: throw unsupported("IN", range)
            }
        }
        return negated ? not(inner) : inner
    }

    private func collectionConstant(_ o: Operand) -> LiteralValue {
        if case .constant(let v) = o { return v }
        return .null
    }

    /// `x BETWEEN {lo, hi}` with constant bounds (inclusive, swapped when reversed, nil bound → false).
    func between(_ s: Scalar, _ c: LiteralValue, _ options: ComparisonOptions, negated: Bool, range: SourceRange)
        throws(SQLLoweringError) -> Lowered
    {
        guard case .array(let bounds) = c, bounds.count == 2 else {
            throw SQLLoweringError(.typeMismatch, "BETWEEN needs an array of two bounds, got \(show(c))", range: range)
        }
        var (lo, hi) = (bounds[0], bounds[1])
        if lo == .null || hi == .null { return .constant(negated) }
        try checkOrderable(s.attribute, range)
        let altering = !options.intersection([.caseInsensitive, .diacriticInsensitive, .normalized]).isEmpty
        if altering, case .string = lo, [.string, .any].contains(s.attribute.type) {
            throw unsupported("BETWEEN with string options", range)
        }
        guard let greater = try foldConstant(lo, .greaterThan, [], hi, range) else {
            throw unsupported("BETWEEN with bounds \(show(lo)) and \(show(hi)) that cannot be ordered", range)
        }
        if greater { swap(&lo, &hi) }
        if !dialect.traits.contains(.exactIntegerDoubleComparison),
            s.attribute.type == .integer || s.attribute.type == .boolean
        {
            // Fractional bounds of integers move inwards, exactly (the dialect compares as doubles).
            func inward(_ v: LiteralValue, up: Bool) throws(SQLLoweringError) -> LiteralValue {
                guard case .double(let d) = v else { return v }
                let r = d.rounded(up ? .up : .down)
                guard let i = Int64(exactly: r) else {
                    throw unsupported(
                        "BETWEEN with the bound \(show(v)) beyond the integers of '\(s.attribute.name)' in this dialect",
                        range)
                }
                return .integer(i)
            }
            (lo, hi) = (try inward(lo, up: true), try inward(hi, up: false))
        }
        // Bounds the column cannot hold move inwards to storable dates (see `storableDate`).
        (lo, hi) = (snappedToStorable(lo, s.attribute, up: true), snappedToStorable(hi, s.attribute, up: false))
        let a = Fragment.param(try encode(lo, for: s.attribute, options, range))
        let b = Fragment.param(try encode(hi, for: s.attribute, options, range))
        let col = s.fragment
        let pos = col + Fragment(" BETWEEN ") + a + Fragment(" AND ") + b
        let neg =
            Fragment("(") + col + Fragment(" NOT BETWEEN ") + a + Fragment(" AND ") + b + Fragment(" OR ") + col
            + Fragment(" IS NULL)")
        return .sql(negated ? neg : pos)
    }
}
