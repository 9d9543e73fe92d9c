// Computed operands: what the lowering hands to the evaluator, and what becomes SQL expressions
// beyond plain arithmetic. A subexpression that reads no row (constants, bound `$VAR`s, functions
// and casts of them, `now()`) is computed once by the evaluator itself and bound as one value, so it
// is memory's value by construction; a comparison between two constants is decided the same way.
// Built-in functions and casts over columns call the evaluator's implementation row by row through
// the dialect's memory-call function (`sift_call` in SQLite); a function of a collection gathers
// the elements first (`sift_collect`). TERNARY becomes a CASE on the lowered condition, which is
// TRUE exactly where memory's condition is true, so the ELSE branch covers false and nil alike.
//
// A call gives NULL where memory raises on that row (SQL may answer anything there) or returns nil.
// NaN (`sqrt:(-1)`, `0.0 / 0`) is a value in memory, ordered below every number and equal to
// itself; SQLite cannot store it as a REAL, so a call returns it as a marker BLOB
// (`SQLFunctions.nanMarker`). A scalar that may hold it is flagged (`Scalar.mayBeNaN`): ordering
// comparisons on it go through `sift_compare` (which reads the marker as NaN) and arithmetic on it
// through `sift_call`; equality, IN and BETWEEN need nothing, since a BLOB equals no number.

import Foundation
import SiftEvaluation
import SiftSyntax

extension LoweringContext {
    // MARK: Folding

    /// Whether the expression has one value for every row: it reads no key path, `SELF` or
    /// SUBQUERY variable, and every `$VAR` it reads is bound. `now()` counts (it is read once, when
    /// the predicate is lowered); `random()` and `randomn:` do not. A SUBQUERY over a constant
    /// collection whose predicate reads only its own variable (and constants) is constant too;
    /// `bound` holds the variables of the SUBQUERYs being looked into.
    func isConstant(_ e: ExpressionSyntax, bound: Set<String> = []) -> Bool {
        // Recursive over the subtree: it checks the stack like every walk (`StackGuard`).
        StackGuard.ensure { isConstantHere(e, bound: bound) }
    }

    private func isConstantHere(_ e: ExpressionSyntax, bound: Set<String>) -> Bool {
        switch e.kind {
        case .constant: return true
        case .variable(let name):
            return bound.contains(name) || (elementVariables[name] == nil && variables[name] != nil)
        case .aggregate(let elements): return elements.allSatisfy { isConstant($0, bound: bound) }
        case .index(let base, let index):
            if case .expression(let i) = index { return isConstant(base, bound: bound) && isConstant(i, bound: bound) }
            return isConstant(base, bound: bound)
        case .binary(_, let l, let r): return isConstant(l, bound: bound) && isConstant(r, bound: bound)
        case .unary(_, let o): return isConstant(o, bound: bound)
        case .function(let name, let args):
            return name != "random" && name != "randomn:" && args.allSatisfy { isConstant($0, bound: bound) }
        case .cast(let v, let t): return isConstant(v, bound: bound) && isConstant(t, bound: bound)
        case .ternary(let c, let a, let b):
            return isConstant(c, bound: bound) && isConstant(a, bound: bound) && isConstant(b, bound: bound)
        case .keyPath(let base?, _):
            // A key of a SUBQUERY's element (`$x.age`) inside that SUBQUERY.
            if case .variable(let name) = base.kind { return bound.contains(name) }
            return false
        case .subquery(let collection, let variable, let predicate):
            return isConstant(collection, bound: bound) && isConstant(predicate, bound: bound.union([variable]))
        case .evaluatedObject, .keyPath, .dynamicKey, .customFunction, .assignment: return false
        }
    }

    func isConstant(_ p: PredicateSyntax, bound: Set<String> = []) -> Bool {
        StackGuard.ensure { isConstantHere(p, bound: bound) }
    }

    private func isConstantHere(_ p: PredicateSyntax, bound: Set<String>) -> Bool {
        switch p.kind {
        case .constant: true
        case .not(let q): isConstant(q, bound: bound)
        case .and(let ops), .or(let ops): ops.allSatisfy { isConstant($0, bound: bound) }
        case .comparison(_, let l, _, _, let r): isConstant(l, bound: bound) && isConstant(r, bound: bound)
        }
    }

    /// The evaluator's value of a constant expression. One that raises in memory raises on every
    /// row that reaches it, which no SQL can reproduce exactly: it is rejected.
    func fold(_ e: ExpressionSyntax) throws(SQLLoweringError) -> LiteralValue {
        let value: Value
        do { value = try SiftExpression(e).evaluate(variables: variableValues) } catch {
            throw SQLLoweringError.everyRow(
                "'\(e)' raises in memory (\(error.message)), so no SQL can stand for it", range: e.range)
        }
        guard let literal = value.literal else { throw unsupported("the value of '\(e)'", e.range) }
        return literal
    }

    /// The evaluator's answer to a comparison of constants (`ANY`/`ALL` over a constant list
    /// included), or nil when memory raises on it.
    func evaluateConstants(
        _ q: Quantifier?, _ a: LiteralValue, _ op: ComparisonOperator, _ options: ComparisonOptions,
        _ b: LiteralValue, _ range: SourceRange
    ) -> Bool? {
        let p = PredicateSyntax(
            .comparison(
                quantifier: q, lhs: ExpressionSyntax(.constant(value: a), range: range), operator: op,
                options: options, rhs: ExpressionSyntax(.constant(value: b), range: range)), range: range)
        return try? SiftPredicate(p).evaluate(with: Value.null)
    }

    /// `$VAR` bindings as the evaluator reads them.
    var variableValues: [String: Value] { variables.mapValues(Value.init) }

    // MARK: TERNARY

    /// `CASE WHEN <condition> THEN a ELSE b END`. A constant condition picks its branch, and the
    /// other is never lowered (memory never evaluates it either).
    func ternary(
        _ condition: PredicateSyntax, _ a: ExpressionSyntax, _ b: ExpressionSyntax, _ scope: Scope,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        let cond = try predicate(condition, negated: false, scope)
        let sql: Fragment
        switch cond {
        case .constant(let v): return try scalarize(try operand(v ? a : b, scope))
        case .sql(let f): sql = f
        }
        let x = try scalarize(try operand(a, scope))
        let y = try scalarize(try operand(b, scope))
        if x.isComputedList || y.isComputedList {
            // The CASE would lose which rows hold a list: memory's collection has no plain SQL form.
            let e = x.isComputedList ? a : b
            throw unsupported("a TERNARY branch that is a collection ('\(e)')", e.range)
        }
        let (attribute, fx, fy, nan) = try unify(x, y, a, b, range)
        let f = Fragment("(CASE WHEN ") + sql + Fragment(" THEN ") + fx + Fragment(" ELSE ") + fy + Fragment(" END)")
        var s = Scalar(fragment: f, attribute: attribute)
        s.mayBeNaN = nan
        // NULL where the branch taken is (memory raises where that branch raises).
        s.raisesOnNil = x.raisesOnNil || y.raisesOnNil
        return .scalar(s)
    }

    /// One attribute (type and encoding) for both branches of a TERNARY, with each branch's SQL.
    private func unify(
        _ x: Operand, _ y: Operand, _ a: ExpressionSyntax, _ b: ExpressionSyntax,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> (Schema.Attribute, Fragment, Fragment, Bool) {
        let name = "TERNARY"
        func plain(_ c: LiteralValue) -> (Schema.ValueType, SQLValue)? {
            switch c {
            case .null: return nil
            case .bool(let v): return (.boolean, .integer(v ? 1 : 0))
            case .integer(let i): return (.integer, .integer(i))
            case .double(let d): return (.double, .double(d))
            case .string(let s): return (.string, .text(nfc(s)))
            case .data(let d): return (.data, .blob(Array(d)))
            case .date(let d): return (.date, .double(d.timeIntervalSinceReferenceDate))
            case .decimal(let d): return (.decimal, .double(NSDecimalNumber(decimal: d).doubleValue))
            case .array, .dictionary, .object: return nil
            }
        }
        // Types whose values are stored as themselves (booleans as the integers 0/1), so one
        // dynamically typed result can hold either branch.
        let natural: Set<Schema.ValueType> = [.string, .integer, .double, .boolean, .any, .data]
        func branch(_ o: Operand, _ e: ExpressionSyntax) throws(SQLLoweringError) -> (Schema.Attribute?, Fragment, Bool)
        {
            switch o {
            case .constant(.null): return (nil, Fragment("NULL"), false)
            case .constant(let c):
                guard let (t, v) = plain(c) else { throw unsupported("a TERNARY branch of \(show(c))", e.range) }
                return (Schema.Attribute(name: name, type: t), .param(v), false)
            case .scalar(let s):
                try singleTyped(s, "a TERNARY branch", e.range)
                return (s.attribute, s.fragment, s.mayBeNaN)
            case .object, .collection:
                throw SQLLoweringError(
                    .typeMismatch, "a TERNARY branch must be a value, '\(e)' is a relationship", range: e.range)
            }
        }
        var (ax, fx, nx) = try branch(x, a)
        var (ay, fy, ny) = try branch(y, b)
        // A constant branch takes the other branch's encoding when it fits (a date constant next
        // to a date column stored since 1970).
        if case .constant(let c) = x, c != .null, let other = ay, other.type == ax?.type || other.type == .any {
            if let v = try? encode(c, for: other, [], a.range) {
                fx = .param(v)
                ax = other
            }
        }
        if case .constant(let c) = y, c != .null, let other = ax, other.type == ay?.type || other.type == .any {
            if let v = try? encode(c, for: other, [], b.range) {
                fy = .param(v)
                ay = other
            }
        }
        let attribute: Schema.Attribute
        switch (ax, ay) {
        case (nil, nil): attribute = Schema.Attribute(name: name, type: .any)
        case (let p?, nil): attribute = p
        case (nil, let q?): attribute = q
        case (let p?, let q?):
            if p.type == q.type && p.effectiveEncoding == q.effectiveEncoding {
                attribute = p
            } else if natural.contains(p.type) && natural.contains(q.type) {
                attribute = Schema.Attribute(name: name, type: .any)
            } else {
                throw unsupported(
                    "a TERNARY whose branches are stored differently (\(p.type.rawValue) and \(q.type.rawValue))", range
                )
            }
        }
        nx = nx || ny
        return (
            Schema.Attribute(name: name, column: attribute.column, type: attribute.type, encoding: attribute.encoding),
            fx, fy, nx
        )
    }

    // MARK: Calls into memory

    /// How the memory-call function reads a value stored for `attribute`.
    func tag(_ attribute: Schema.Attribute) -> SQLFunctions.ValueTag {
        switch attribute.type {
        case .boolean: return .boolean
        case .decimal: return .decimal
        case .date:
            switch attribute.effectiveEncoding {
            case .secondsSince1970: return .secondsSince1970
            case .iso8601: return .iso8601
            default: return .secondsSince2001
            }
        default: return .natural
        }
    }

    /// One argument of a memory call: its SQL and its tag.
    private func callArgument(_ o: Operand, _ e: ExpressionSyntax, selector: String) throws(SQLLoweringError) -> (
        Fragment, SQLFunctions.ValueTag
    ) {
        switch o {
        case .constant(let c):
            switch c {
            case .null: return (Fragment("NULL"), .natural)
            case .bool(let b): return (.param(.integer(b ? 1 : 0)), .boolean)
            case .integer(let i): return (.param(.integer(i)), .natural)
            case .double(let d): return (.param(.double(d)), .natural)
            case .string(let s): return (.param(.text(s)), .natural)
            case .data(let d): return (.param(.blob(Array(d))), .natural)
            case .date(let d): return (.param(.double(d.timeIntervalSinceReferenceDate)), .secondsSince2001)
            case .decimal(let d): return (.param(.text(d.description)), .decimal)
            case .array(let items)
            where (SQLFunctions.comparison(selector) != nil || SQLFunctions.quantifiedComparison(selector) != nil)
                && items.allSatisfy(\.isScalar):
                // A list compared by memory: bound as the BLOB `sift_collect` makes.
                return (.param(.blob(ValueCodec.encode(.array(items.map(Value.init))))), .collection)
            case .array, .dictionary, .object:
                throw unsupported("\(selector) of the constant \(show(c)) next to a key path", e.range)
            }
        case .scalar(let s):
            try singleTyped(s, "\(selector)", e.range)
            return (s.fragment, s.isCollection ? .collection : tag(s.attribute))
        case .collection(let c):
            if let union = c.union {
                // The elements' values through memory's own union (nil dropped, and for the distinct
                // union the first of equal values kept, in element order).
                guard c.relationship.orderColumn != nil || union == "@distinctUnionOfObjects" && selector == "count:"
                else {
                    throw unsupported("'\(union)' of the unordered collection '\(c.relationship.name)'", c.range)
                }
                var whole = c
                whole.union = nil
                return (
                    try callSQL(union, [(try collected(whole, selector: "count:"), .collection)], c.range), .collection
                )
            }
            if SQLFunctions.comparison(selector) != nil || SQLFunctions.quantifiedComparison(selector) != nil {
                // Compared as memory's array: only an ordered collection is one (a set's equality ignores order).
                guard c.relationship.orderColumn != nil else {
                    throw unsupported("comparing the unordered collection '\(c.relationship.name)'", c.range)
                }
                return (try collected(c, selector: selector), .collection)
            }
            guard Self.collectionFunctions.contains(selector) else {
                // A collection where memory needs a number or a string: it raises on every row.
                return (Fragment("NULL"), .natural)
            }
            return (try collected(c, selector: selector), .collection)
        case .object(_, let name):
            throw SQLLoweringError(
                .typeMismatch, "\(selector) of the relationship '\(name)' (an object)", range: e.range)
        }
    }

    /// `(SELECT sift_collect(tag, element) FROM <elements> WHERE <correlation>)`, NULL when the
    /// collection is nil: the collection as the evaluator's array, in row order. `filter` (a
    /// SUBQUERY's predicate over one element) keeps only the elements it is true for.
    func collected(
        _ c: Collection, selector: String,
        filter: ((Scope?, Scalar?) throws(SQLLoweringError) -> Lowered)? = nil
    ) throws(SQLLoweringError) -> Fragment {
        guard let collect = dialect.collectFunction else {
            throw unsupported("\(selector) of a collection in this dialect", c.range)
        }
        let (from, corr, es, value, order) = try elementSource(c)
        let element: Scalar
        if c.rest.isEmpty {
            if let value {
                element = value
            } else {
                // Objects: only their number matters to count:; any other function raises on them.
                guard selector == "count:" else {
                    throw SQLLoweringError(
                        .typeMismatch, "\(selector) needs values, the elements of '\(c.relationship.name)' are objects",
                        range: c.range)
                }
                element = Scalar(
                    fragment: Fragment("1"), attribute: Schema.Attribute(name: c.relationship.name, type: .integer))
            }
        } else if let es {
            let rest = c.rest
            guard !(rest.first.map(KeyPathComponent.isCollectionOperator) ?? false) else {
                throw unsupported("\(selector) of a collection operator", c.range)
            }
            guard case .scalar(let s) = try keyPath(rest, es, c.range) else {
                throw SQLLoweringError(
                    .toManyKeyPath, "\(selector) needs an attribute of the elements of '\(c.relationship.name)'",
                    range: c.range)
            }
            element = s
        } else {
            throw SQLLoweringError(
                .unknownKey, "the values of '\(c.relationship.name)' have no key '\(c.rest[0])'", range: c.range)
        }
        // The elements in element order: SQLite keeps a subquery's ORDER BY under an aggregate (it
        // does not flatten such a subquery), and before 3.44 an aggregate has no ORDER BY of its own.
        // Lowered before the joins are written: the filter may add joins to the element scope.
        let kept = try filter?(es, value)
        var elements = Fragment("SELECT ") + element.fragment + Fragment(" AS sift_element FROM \(from)")
        for j in es?.joins ?? [] { elements = elements + Fragment(" " + j) }
        elements = elements + Fragment(" WHERE \(corr)")
        switch kept {
        case nil, .constant(true)?: break
        case .constant(false)?: elements = elements + Fragment(" AND " + dialect.booleanLiteral(false))
        case .sql(let f)?: elements = elements + Fragment(" AND ") + f.parenthesized
        }
        elements = elements + Fragment(order.map { " ORDER BY \($0)" } ?? "")
        var sql =
            Fragment("(SELECT \(collect)(") + .param(.text(String(tag(element.attribute).rawValue)))
            + Fragment(", sift_element) FROM (") + elements + Fragment("))")
        if let isNil = collectionIsNil(c) {
            sql = Fragment("(CASE WHEN \(isNil) THEN NULL ELSE ") + sql + Fragment(" END)")
        }
        return sql
    }

    /// `sift_call(selector, tags, args…)` with the result typed `type`.
    /// `sift_call(?, ?, args…)`: the selector and the arguments' tags bound, then the arguments.
    func callSQL(_ selector: String, _ arguments: [(Fragment, SQLFunctions.ValueTag)], _ range: SourceRange?)
        throws(SQLLoweringError) -> Fragment
    {
        guard let call = dialect.callFunction else { throw unsupported("\(selector) in this dialect", range) }
        let tags = String(arguments.map(\.1.rawValue))
        let parts: [Fragment] = [.param(.text(selector)), .param(.text(tags))] + arguments.map(\.0)
        return Fragment("\(call)(") + Fragment.join(parts, ", ") + Fragment(")")
    }

    func memoryCall(
        _ selector: String, _ args: [(Operand, ExpressionSyntax)], type: Schema.ValueType, mayBeNaN: Bool = false,
        encoding: Schema.StorageEncoding? = nil, _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        var arguments: [(Fragment, SQLFunctions.ValueTag)] = []
        for (o, e) in args { arguments.append(try callArgument(o, e, selector: selector)) }
        // NULL where memory raises: the row guard hands every row to memory (RowGuard.swift),
        // except for a comparison, whose operands the guard has already weighed.
        if SQLFunctions.comparison(selector) == nil { noteRiskOnEveryRow(range, callsMemory: true) }
        var s = Scalar(
            fragment: try callSQL(selector, arguments, range),
            attribute: Schema.Attribute(name: selector, type: type, encoding: encoding))
        s.mayBeNaN = mayBeNaN
        return .scalar(s)
    }

    // MARK: Functions

    /// The built-in functions whose argument is a collection.
    static let collectionFunctions: Set<String> = [
        "count:", "sum:", "min:", "max:", "average:", "median:", "stddev:", "groupConcat:separator:",
        "mode:", "@min", "@max",
    ]

    /// A built-in function over operands that read the row.
    func function(_ name: String, _ arguments: [ExpressionSyntax], _ scope: Scope, _ range: SourceRange)
        throws(SQLLoweringError) -> Operand
    {
        switch name {
        case "abs:": return try absolute(arguments[0], scope, range)
        case "noindex:", "indexed:by:":
            // Identity on the first argument; memory's only effect is its value.
            return try scalarize(try operand(arguments[0], scope))
        case "random", "randomn:":
            throw SQLLoweringError.everyRow(
                "'\(name)', whose value in memory is random for each object, cannot be lowered to SQL", range: range)
        default: break
        }
        let args = try functionArguments(name, arguments, scope)
        switch name {
        case "mode:":
            if case .collection(let c) = args[0].0, c.relationship.orderColumn == nil {
                // The most frequent values in the order they first appear: a set has memory's order.
                throw unsupported("mode: of the unordered collection '\(c.relationship.name)'", range)
            }
            // The list memory returns (it raises on nil and on anything but a collection).
            guard case .scalar(var s) = try memoryCall(name, args, type: .any, range) else {
                throw unsupported(name, range)
            }
            s.isCollection = true
            return .scalar(s)
        case "sqrt:", "log:", "ln:", "exp:", "floor:", "ceiling:", "trunc:":
            return try memoryCall(name, args, type: .double, mayBeNaN: true, range)
        case "onesComplement:", "count:", "length:":
            return try memoryCall(name, args, type: .integer, range)
        case "uppercase:", "lowercase:", "canonical:", "groupConcat:separator:":
            // Strings, typed `any` so that comparing them with a number is memory's (false for
            // ==, raises for ordering) rather than a type error.
            return try memoryCall(name, args, type: .any, range)
        case "modulus:by:":
            let integral = args.allSatisfy { o, _ in
                if case .scalar(let s) = o { return [.integer, .boolean].contains(s.attribute.type) }
                if case .constant(let c) = o {
                    if case .integer = c { return true }
                    if case .bool = c { return true }
                }
                return false
            }
            return try memoryCall(name, args, type: integral ? .integer : .any, mayBeNaN: !integral, range)
        case "sum:":
            let t = elementType(args[0].0)
            return try memoryCall(
                name, args, type: [.integer, .boolean].contains(t) ? .integer : (t == .double ? .double : .any), range)
        case "average:", "median:", "stddev:":
            return try memoryCall(name, args, type: name == "median:" ? .any : .double, range)
        case "min:", "max:":
            let t = elementType(args[0].0)
            guard [.integer, .double, .string, .any].contains(t) else {
                throw unsupported("\(name) of \(t.rawValue) values", range)
            }
            return try memoryCall(name, args, type: t, range)
        default:
            throw unsupported("the function '\(name)'", range)
        }
    }

    /// The operands of a function's arguments: a collection function's first argument is the
    /// collection itself; any other argument its scalar value.
    private func functionArguments(_ name: String, _ arguments: [ExpressionSyntax], _ scope: Scope)
        throws(SQLLoweringError) -> [(Operand, ExpressionSyntax)]
    {
        var args: [(Operand, ExpressionSyntax)] = []
        for (i, a) in arguments.enumerated() {
            let o = try operand(a, scope)
            // A collection function takes the collection itself; anything else its scalar value.
            if i == 0, Self.collectionFunctions.contains(name),
                case .collection(let c) = o, !(c.rest.first.map(KeyPathComponent.isCollectionOperator) ?? false)
            {
                args.append((o, a))
            } else {
                args.append((try scalarize(o), a))
            }
        }
        return args
    }

    /// The type of the values a function's first operand holds, `.any` when unknown.
    private func elementType(_ first: Operand) -> Schema.ValueType {
        if case .scalar(let s) = first { return s.attribute.type }
        if case .collection(let c) = first {
            if c.rest.isEmpty, case .values(let v) = c.shape { return v.type }
            if !c.rest.isEmpty, let dest = try? elements(c).element,
                case .scalar(let s)? = try? keyPath(c.rest, dest, c.range)
            {
                return s.attribute.type
            }
        }
        return .any
    }

    // MARK: CAST

    /// `CAST(x, 'Type')` of a value read from the row.
    func cast(_ value: ExpressionSyntax, _ type: ExpressionSyntax, _ scope: Scope, _ range: SourceRange)
        throws(SQLLoweringError) -> Operand
    {
        guard isConstant(type), case .string(let target) = try fold(type) else {
            throw unsupported("CAST to a type that is not a constant string", type.range)
        }
        let o = try scalarize(try operand(value, scope))
        guard case .scalar(let s) = o else {
            // A constant value was folded with its CAST before this point.
            throw SQLLoweringError(.typeMismatch, "CAST of '\(value)', which is not a value", range: value.range)
        }
        let a = s.attribute
        switch (target, a.type) {
        case ("NSNumber", .integer), ("NSNumber", .double), ("NSNumber", .boolean):
            return o
        case ("NSNumber", .date) where a.effectiveEncoding == .secondsSince2001:
            return .scalar(
                Scalar(
                    fragment: Fragment("(") + s.fragment + Fragment(" + 0.0)"),
                    attribute: Schema.Attribute(name: "CAST", type: .double), raisesOnNil: s.raisesOnNil,
                    nullWhen: s.nullWhen))
        case ("NSNumber", .date) where a.effectiveEncoding == .secondsSince1970:
            // Foundation keeps seconds since 2001 and converts with this one subtraction.
            return .scalar(
                Scalar(
                    fragment: Fragment("(") + s.fragment + Fragment(" - 978307200.0)"),
                    attribute: Schema.Attribute(name: "CAST", type: .double), raisesOnNil: s.raisesOnNil,
                    nullWhen: s.nullWhen))
        case ("NSDate", .date):
            return o
        case ("NSDate", .integer), ("NSDate", .double), ("NSDate", .boolean):
            return .scalar(
                Scalar(
                    fragment: Fragment("(") + s.fragment + Fragment(" + 0.0)"),
                    attribute: Schema.Attribute(name: "CAST", type: .date, encoding: .secondsSince2001),
                    raisesOnNil: s.raisesOnNil))
        case ("NSNumber", _):
            return try memoryCall("CAST:NSNumber", [(o, value)], type: .any, range)
        case ("NSString", _):
            return try memoryCall("CAST:NSString", [(o, value)], type: .any, range)
        case ("NSDate", _):
            return try memoryCall("CAST:NSDate", [(o, value)], type: .date, encoding: .secondsSince2001, range)
        case ("NSDecimalNumber", _):
            return try memoryCall("CAST:NSDecimalNumber", [(o, value)], type: .decimal, encoding: .real, range)
        default:
            // Memory raises on every value but nil, which it returns unchanged.
            return try memoryCall("CAST:" + target, [(o, value)], type: .any, range)
        }
    }
}

extension LoweringContext {
    // MARK: Indexes

    /// `base[index]` followed by `path` (`kids[FIRST].name`): an element of an ordered collection
    /// as a scalar subquery (`ORDER BY <order column> LIMIT 1 OFFSET k`), `[SIZE]` as the count,
    /// `object['key']` as the key of a to-one object. Out of range and non-collections raise in
    /// memory (NULL here is free); a nil collection gives nil in both.
    func indexed(
        _ base: ExpressionSyntax, _ index: IndexSyntax, path: [String], _ scope: Scope,
        _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        let b = try operand(base, scope)
        switch b {
        case .object:
            return try objectIndex(base, index, path: path, scope, range)
        case .constant(.null):
            // An index of nil is nil.
            return .scalar(Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: "[]", type: .any)))
        case .scalar(let s) where s.isCollection:
            // A function's list (`mode:(x)[SIZE]`): memory counts it; its elements have no SQL form.
            guard case .size = index, path.isEmpty else {
                throw unsupported("an element of '\(base)', a collection computed by memory", range)
            }
            return try memoryCall("count:", [(b, base)], type: .integer, range)
        case .scalar(let s) where path.isEmpty:
            // A value that is not a collection: memory raises, or gives nil when it is nil.
            noteUnseenRisk(nil, range)
            return .scalar(
                Scalar(
                    fragment: Fragment("NULL"),
                    attribute: Schema.Attribute(
                        name: "\(s.attribute.name)[]", type: s.attribute.type,
                        encoding: s.attribute.encoding)))
        case .collection(let c):
            return try elementIndex(c, base, index, path: path, range)
        default:
            throw unsupported("this index", range)
        }
    }

    /// `object['key']` on a to-one object: the key of the related row (a constant string only).
    private func objectIndex(
        _ base: ExpressionSyntax, _ index: IndexSyntax, path: [String], _ scope: Scope, _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        if isLoweringOneShape, case .expression(let key) = index, isConstant(key), path.isEmpty {
            switch try fold(key) {
            case .string: break
            default:
                // Memory indexes a dictionary only by key: it raises on any other index, and a
                // nil object gives nil.
                return .scalar(
                    Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: "[]", type: .any)))
            }
        }
        var components: [String] = []
        switch base.kind {
        case .keyPath(nil, let c): components = c
        case .evaluatedObject: break
        default: throw unsupported("this index of an object", range)
        }
        guard case .expression(let key) = index, isConstant(key), case .string(let k) = try fold(key),
            !k.hasPrefix("@")
        else {
            throw unsupported("this index of an object (memory orders a dictionary's keys by name)", range)
        }
        return try keyPath(
            components + [k] + path, base.kind == .evaluatedObject ? rootScope ?? scope : scope, range)
    }

    /// `collection[i]` (FIRST, LAST, SIZE) on a to-many relationship: the count, or a subquery
    /// reading one ordered element.
    private func elementIndex(
        _ c: Collection, _ base: ExpressionSyntax, _ index: IndexSyntax, path: [String], _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        var c = c
        guard !(c.rest.first.map(KeyPathComponent.isCollectionOperator) ?? false) else {
            throw unsupported("an index of a collection operator's result", range)
        }
        if c.union != nil {
            guard case .size = index, path.isEmpty else {
                throw unsupported("an element of '\(c.union!)' (memory's union order)", range)
            }
            return try memoryCall("count:", [(.collection(c), base)], type: .integer, range)
        }
        if case .size = index {
            guard path.isEmpty else {
                throw SQLLoweringError(.unknownKey, "a count has no key '\(path[0])'", range: range)
            }
            c.rest = ["@count"]
            return try scalarize(.collection(c))
        }
        guard c.relationship.orderColumn != nil else {
            throw unsupported("an index of '\(c.relationship.name)', which is unordered (a set in memory)", range)
        }
        let (offset, descending) = try offset(of: index)
        let path = c.rest + path
        let (from, corr, es, value, order) = try elementSource(c)
        let element: Scalar
        if path.isEmpty {
            guard let value else {
                throw unsupported("an element object of '\(c.relationship.name)' (name a key of it)", range)
            }
            element = value
        } else if let es {
            guard case .scalar(let s) = try keyPath(path, es, range) else {
                throw unsupported("a key path of an element that is not an attribute", range)
            }
            element = s
        } else {
            throw SQLLoweringError(
                .unknownKey, "the values of '\(c.relationship.name)' have no key '\(path[0])'", range: range)
        }
        if offset < 0 {
            // Out of range in memory (or not a number): it raises on every non-nil collection.
            noteUnseenRisk(nil, range)
            return .scalar(Scalar(fragment: Fragment("NULL"), attribute: element.attribute))
        }
        guard let order else { throw unsupported("an index of '\(c.relationship.name)'", range) }
        if case .expression = index {
            // Past the last element memory raises (FIRST and LAST of no elements are nil): where
            // the collection has no more elements than the index, memory decides the row.
            noteUnseenRisk(
                Fragment("(SELECT COUNT(*) FROM \(from) WHERE \(corr)) <= ") + .param(.integer(offset)), range)
        }
        func pick(_ value: Fragment) -> Fragment {
            var sql = Fragment("(SELECT ") + value + Fragment(" FROM \(from)")
            for j in es?.joins ?? [] { sql = sql + Fragment(" " + j) }
            return sql + Fragment(" WHERE \(corr) ORDER BY \(order) \(descending ? "DESC" : "ASC") LIMIT 1 OFFSET ")
                + .param(.integer(offset)) + Fragment(")")
        }
        var s = Scalar(fragment: pick(element.fragment), attribute: element.attribute)
        s.mayBeNaN = element.mayBeNaN
        // A dynamically typed element in two columns: the same element's two columns.
        s.text = element.text.map(pick)
        return .scalar(s)
    }

    /// The row offset an index reads and whether it counts from the end; -1 where memory raises
    /// (out of range, or not a number).
    private func offset(of index: IndexSyntax) throws(SQLLoweringError) -> (Int64, Bool) {
        let offset: Int64
        var descending = false
        switch index {
        case .first: offset = 0
        case .last:
            offset = 0
            descending = true
        case .size: offset = 0
        case .expression(let k):
            guard isConstant(k) else { throw unsupported("an index that is not a constant", k.range) }
            switch try fold(k) {
            case .integer(let i): offset = i
            case .double(let d):
                // Memory truncates (Foundation's integerValue); NaN and the infinities raise out of range.
                guard d.isFinite, abs(d) < 9.2e18 else {
                    offset = -1
                    break
                }
                offset = Int64(d.rounded(.towardZero))
            case .bool(let x): offset = x ? 1 : 0
            default: offset = -1  // memory raises: not a number
            }
        }
        return (offset, descending)
    }
}

extension LoweringContext {
    /// The attribute `c.rest.dropFirst()` names in the collection's elements (after an operator),
    /// read from the schema alone (no alias is taken, so the SQL text does not change).
    func elementAttribute(_ c: Collection) throws(SQLLoweringError) -> Schema.Attribute? {
        let key = Array(c.rest.dropFirst())
        switch c.shape {
        case .values(let v): return key.isEmpty ? v.elementAttribute(named: c.relationship.name) : nil
        case .toMany(let d, _), .manyToMany(let d, _):
            guard key.count == 1 else { return nil }
            return try destination(d, c.range).attribute(named: key[0])
        case .toOne: return nil
        }
    }
}
