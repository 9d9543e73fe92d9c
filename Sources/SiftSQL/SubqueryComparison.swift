// A SUBQUERY's result compared as a whole with a constant: `SUBQUERY(kids, $k, P) == nil`, `== {}`,
// `!= {}`, `SUBQUERY(tags, $t, P) == {'a', 'b'}`, `SUBQUERY(kids, $k, P).name == {'Carl'}`. Memory's
// SUBQUERY is nil where its collection is nil and otherwise the array of the elements P is true for
// (a key after it maps over them), and equality between arrays never raises, so each form has an
// exact two-valued rendering: the collection's nil test, NOT EXISTS over the kept elements, or the
// kept values collected in element order and compared by memory (`sift_call`). Against its own
// collection (`SUBQUERY(kids, $k, P) == kids`) it is a subsequence, equal exactly when nothing was
// dropped: NOT EXISTS an element where P is false.

import SiftEvaluation
import SiftSyntax

extension LoweringContext {
    /// Whether `e` is `SUBQUERY(…)` or `SUBQUERY(…).key…` (no collection operator): a cheap test
    /// made before any folding, so that other comparisons pay nothing for this form.
    func isSubqueryResult(_ e: ExpressionSyntax) -> Bool {
        switch e.kind {
        case .subquery: return true
        case .keyPath(let base?, _):
            // The components are read only behind a SUBQUERY: binding them costs every key path a retain.
            guard case .subquery = base.kind, case .keyPath(_, let components) = e.kind else { return false }
            return !components.contains(where: KeyPathComponent.isCollectionOperator)
        default: return false
        }
    }

    /// `sub op other` for `==` / `!=`, `sub` a SUBQUERY result (``isSubqueryResult(_:)``) that
    /// reads the row and `other` a constant; nil when this form has no exact rendering here (the
    /// caller then rejects it as before).
    func subqueryComparison(
        _ sub: ExpressionSyntax, _ op: ComparisonOperator, _ options: ComparisonOptions,
        _ other: LiteralValue, negated: Bool, range: SourceRange, _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered? {
        let target: ExpressionSyntax
        let key: [String]
        if case .keyPath(let base?, let components) = sub.kind {
            (target, key) = (base, components)
        } else {
            (target, key) = (sub, [])
        }
        guard case .subquery(let source, let variable, let body) = target.kind, !isConstant(target) else { return nil }
        // Two-valued `equal`: NOT is its complement.
        func answer(_ equal: Lowered) -> Lowered { (op == .equal) != negated ? equal : not(equal) }
        guard var c = try subqueryCollection(source, scope) else {
            // A nil SUBQUERY (and any key of it is nil): memory's nil against the constant.
            guard let v = evaluateConstants(nil, .null, op, options, other, range) else { return nil }
            return .constant(v != negated)
        }
        c.rest = key
        // The kept elements: the SUBQUERY's predicate, and the key checked in the element's scope
        // (memory raises on a key the elements cannot have).
        func kept(_ es: Scope?, _ value: Scalar?) throws(SQLLoweringError) -> Lowered {
            if !key.isEmpty {
                guard let es else {
                    throw SQLLoweringError(
                        .unknownKey, "the values of '\(c.relationship.name)' have no key '\(key[0])'", range: sub.range)
                }
                switch try keyPath(key, es, sub.range) {
                case .scalar, .object: break
                case .constant, .collection:
                    throw unsupported("a key of SUBQUERY's elements that is not a value", sub.range)
                }
            }
            return try subqueryCondition(variable, body, es, value, scope)
        }
        // Where the answer does not read the kept elements, memory still evaluates the predicate on
        // every element: lowered all the same (and dropped), so that what memory refuses there is
        // refused here too and its risks are noted (`$k.name > 1.5` over a string attribute).
        func checkKept() throws(SQLLoweringError) {
            _ = try exists(c) { (es, v) throws(SQLLoweringError) in try kept(es, v) }
        }
        switch other {
        case .null:
            try checkKept()
            return answer(collectionIsNil(c).map { .sql(Fragment($0)) } ?? .constant(false))
        case .array(let items) where items.isEmpty:
            let (empty, nonEmpty) = try collectionIsEmpty(c, kept)
            return (op == .equal) != negated ? empty : nonEmpty
        case .array(let items) where key.isEmpty && !c.shape.isValuesShape:
            // Dictionaries equal no plain value (a nil in the list could match a null element,
            // which the store does not keep apart from an empty object).
            guard items.allSatisfy({ $0.isScalar && $0 != .null }) else { return nil }
            try checkKept()
            return answer(.constant(false))
        case .array(let items):
            // The kept values in element order, compared with the list by memory.
            guard items.allSatisfy(\.isScalar), c.relationship.orderColumn != nil else { return nil }
            guard dialect.callFunction != nil else {
                throw unsupported(
                    "comparing the elements of a SUBQUERY with a list in this dialect (only memory compares arrays)",
                    range)
            }
            let selector = SQLFunctions.comparisonSelector(op, options)
            let values = try collected(c, selector: selector, filter: kept)
            let list = Fragment.param(.blob(ValueCodec.encode(.array(items.map(Value.init)))))
            let call = try callSQL(selector, [(values, .collection), (list, .collection)], range)
            return .sql(call + Fragment(negated ? " = 0" : " = 1"))
        case .dictionary:
            return nil
        default:
            // A string, number, date or data equals neither an array nor nil.
            try checkKept()
            return answer(.constant(false))
        }
    }

    /// `SUBQUERY(c, $v, P) == c` / `!=`, the same collection on the other side: the kept elements
    /// are a subsequence of `c`, and a subsequence is equal to the whole exactly when it is as long,
    /// so the two are equal when `c` is nil (nil == nil) or when P is false for no element (an
    /// element where P raises makes memory raise on the row: any answer will do there). nil when
    /// `other` is not `sub`'s own collection.
    func subqueryAgainstItsCollection(
        _ sub: ExpressionSyntax, _ op: ComparisonOperator, _ other: ExpressionSyntax,
        negated: Bool, _ scope: Scope
    ) throws(SQLLoweringError) -> Lowered? {
        guard case .subquery(let source, let variable, let body) = sub.kind, source.description == other.description,
            !isConstant(sub)
        else { return nil }
        let wantEqual = (op == .equal) != negated
        // Nil (equal to itself), or a value or an object memory raises on.
        guard let c = try subqueryCollection(source, scope) else { return .constant(wantEqual) }
        // A set's SUBQUERY has memory's order of a set.
        guard c.relationship.orderColumn != nil else { return nil }
        let dropped = try exists(c) { (es, value) throws(SQLLoweringError) in
            try subqueryCondition(variable, body, es, value, scope, negated: true)
        }
        let equal: Lowered
        let unequal: Lowered
        switch (collectionIsNil(c), dropped) {
        case (nil, _): (equal, unequal) = (not(dropped), dropped)
        case (_?, .constant(false)): (equal, unequal) = (.constant(true), .constant(false))
        case (let n?, .constant(true)): (equal, unequal) = (.sql(Fragment(n)), .sql(Fragment("NOT \(n)")))
        case (let n?, .sql(let f)):
            (equal, unequal) = (.sql(Fragment("\(n) OR NOT ") + f), .sql(Fragment("NOT \(n) AND ") + f))
        }
        return wantEqual ? equal : unequal
    }
}
