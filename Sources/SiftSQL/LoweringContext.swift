// The state and the recursive steps of one lowering: scopes (a table alias plus the LEFT JOINs its
// to-one paths needed), key-path resolution against the schema, and predicates in negation-normal
// form. Leaves live in LeafLowering.swift.

import Foundation
import SiftSyntax

/// A row source: the entity whose columns key paths read, its alias, and the joins added for it.
final class Scope {
    let entity: Schema.Entity
    let alias: String
    /// True inside a to-many subquery (a second to-many path there is rejected).
    let insideCollection: Bool
    /// Creation order within one lowering: a scope created before a comparison started is visible
    /// in that comparison's SQL (see `splitOnShapes`).
    let serial: Int
    var joins: [String] = []
    var joinAliases: [String: (alias: String, entity: Schema.Entity)] = [:]
    init(entity: Schema.Entity, alias: String, insideCollection: Bool = false, serial: Int) {
        self.entity = entity
        self.alias = alias
        self.insideCollection = insideCollection
        self.serial = serial
    }
}

/// A mixed key met while lowering one comparison, whose case has not been chosen yet.
struct ShapeRequest {
    /// The qualified shape column, also the key of `LoweringContext.shapeChoices`.
    var column: String
    var tags: [Int64]
    /// The serial of the scope whose row holds the shape column.
    var serial: Int
    /// The error thrown to unwind to the comparison; anything else that catches it rethrows it.
    var error: SQLLoweringError
}

/// A scalar SQL expression with what the type checks need.
struct Scalar {
    var fragment: Fragment
    /// The attribute it reads (type, encoding); nil type means a computed number.
    var attribute: Schema.Attribute
    /// The value may be NaN, stored as `SQLFunctions.nanMarker` (see ExpressionOperands.swift).
    var mayBeNaN = false
    /// The value is a list (a function's collection result, `mode:`) as the BLOB
    /// `ValueCodec` writes for an array, or NULL where memory raised: only memory can compare it, count it
    /// or quantify over it, so every use goes through `sift_call`.
    var isCollection = false
    /// A dynamically typed value in a dialect whose columns hold one type each: its strings are
    /// here, and `fragment` holds its numbers (booleans as 0/1) as exact NUMERIC; at most one of
    /// the two is non-NULL in a row. Only the comparisons of DynamicLowering.swift read both;
    /// every other use rejects it (``LoweringContext/singleTyped(_:_:_:)``).
    var text: Fragment?
    /// The writer-kept folded copies of its strings (`[c]`, `[d]`, `[cd]`), in a dialect without
    /// Sift's folding (see ``Schema/FoldedColumns``).
    var folded: Schema.FoldedColumns?
    /// The alias of the row holding `folded`.
    var foldedAlias: String?
    /// Computed by SQL from operands on which memory raises when they are nil (arithmetic,
    /// `abs:`, `~`), where SQL computes NULL instead: the row guard sends the rows where it is
    /// NULL to memory (RowGuard.swift).
    var raisesOnNil = false
    /// A condition true where this computed value is NULL, cheaper than `(<fragment>) IS NULL`:
    /// its operands' tests (`t0."price" IS NULL` for `price * 2`). The guard's test where set.
    var nullWhen: Fragment?
}

/// A to-many collection reached from a scope: the relationship and the path after it.
struct Collection {
    var relationship: Schema.Relationship
    var shape: Schema.Relationship.Shape
    var owner: Scope
    var rest: [String]
    var range: SourceRange
    /// The owner row was reached through a to-one relationship, so it (and the collection) may be nil.
    var ownerNullable = false
    /// Values read through a key they do not have (`name` of a record `["a", "b"]`): memory raises
    /// on each element, so only the number of elements matters and each reads NULL.
    var nullElements = false
    /// `@unionOfObjects` or `@distinctUnionOfObjects` before `rest`: the elements' non-nil values
    /// of `rest` (distinct ones for the second), as memory's array.
    var union: String?

    /// `rest` starting with a union operator becomes `union` (see ``withUnion``).
    static let unionOperators: Set<String> = ["@unionOfObjects", "@distinctUnionOfObjects"]
}

/// What an expression lowers to.
enum Operand {
    case constant(LiteralValue)
    case scalar(Scalar)
    /// A to-one relationship object: its foreign-key column.
    case object(Fragment, String)
    case collection(Collection)

    /// A scalar holding a list computed by memory (``Scalar/isCollection``).
    var isComputedList: Bool {
        if case .scalar(let s) = self { return s.isCollection }
        return false
    }

    /// A scalar SQL computes as NULL where memory raises on a nil operand (``Scalar/raisesOnNil``).
    var raisesOnNil: Bool {
        if case .scalar(let s) = self { return s.raisesOnNil }
        return false
    }

    /// Where a scalar is NULL: its own cheap test, or `(<its SQL>) IS NULL`; nil for a constant.
    var nullTest: Fragment? {
        guard case .scalar(let s) = self else { return nil }
        return s.nullWhen ?? (s.fragment.parenthesized + Fragment(" IS NULL"))
    }

    /// A scalar computed from `operands` by SQL that is NULL exactly where one of them is: NULL
    /// where memory raises on a nil operand, with the operands' NULL tests as its cheap test.
    static func computed(_ s: Scalar, from operands: [Operand]) -> Operand {
        var s = s
        s.raisesOnNil = true
        let tests = operands.compactMap(\.nullTest)
        s.nullWhen = tests.isEmpty ? nil : tests.count == 1 ? tests[0] : Fragment.join(tests, " OR ").parenthesized
        return .scalar(s)
    }
}

final class LoweringContext {
    let schema: Schema
    let dialect: any SQLDialect
    let variables: [String: LiteralValue]
    private var aliasCount = 0
    private var scopeCount = 0
    /// SUBQUERY variables in scope: the element row (entity collections) or element column (values).
    var elementVariables: [String: (scope: Scope?, value: Scalar?)] = [:]
    /// The scope of the rows being selected: what `SELF` is.
    var rootScope: Scope?
    /// Shape column → the case chosen for the comparison being lowered (nil: the key is nil).
    private var shapeChoices: [String: Int64?] = [:]
    private var pendingShape: ShapeRequest?
    /// The records' own predicates whose SQL would nest past ``SQLNesting/limit`` are decided by
    /// memory on the document (the second try of a statement too deep for the parser).
    var guardsNesting = false
    /// Lowering one case of a mixed key: a shape where memory raises may be lowered to anything.
    var isLoweringOneShape: Bool { !shapeChoices.isEmpty }
    /// Comparisons lowered once per case, counted to bound the product of several mixed keys.
    private var shapeLowerings = 0
    /// Where memory may raise on a row's values, noted for the row guard (RowGuard.swift).
    var risks = RowRisks()
    /// The lowering's ``SQLLowering/guardsRows``.
    var guardEnabled = true
    /// Set before lowering a predicate that is an AND: its parts and the risks each noted are
    /// kept in ``conjuncts``, from which the guard's SQL pre-filter is made.
    var recordsConjuncts = false
    /// The parts of the predicate's top-level AND, each lowered, with the risks it noted.
    var conjuncts: [(lowered: Lowered, risks: RowRisks)] = []
    /// The lowering's ``SQLLowering/guardsInDatabase``.
    var guardInDatabaseEnabled = true
    /// Set when the WHERE clause got a guard that asks memory about some rows (`sift_guard`).
    var asksMemoryPerRow = false
    /// The dynamically typed columns read (`t0."misc"`): a computed value reading one may raise on kinds.
    var dynamicColumns: Set<String> = []
    /// The selected row's own attributes read, in first-read order: the object `sift_guard`
    /// evaluates on where the entity keeps no document (RowGuard.swift).
    var rowAttributes: [Schema.Attribute] = []
    /// Whether a key path went past the selected row's own attributes (a relationship, a key of
    /// several shapes): then only whole documents, or the caller's objects, can decide a row.
    var readsBeyondRow = false

    init(schema: Schema, dialect: any SQLDialect, variables: [String: LiteralValue]) {
        self.schema = schema
        self.dialect = dialect
        self.variables = variables
    }

    func newAlias() -> String {
        defer { aliasCount += 1 }
        return "t\(aliasCount)"
    }

    func makeScope(entity: Schema.Entity, alias: String, insideCollection: Bool = false) -> Scope {
        defer { scopeCount += 1 }
        return Scope(entity: entity, alias: alias, insideCollection: insideCollection, serial: scopeCount)
    }

    func column(_ alias: String, _ name: String) -> String { "\(alias).\(dialect.quote(name))" }

    /// The value of attribute `a` in the row `alias`. A dynamically typed attribute in a dialect
    /// whose columns hold one type each is read from two columns (``Scalar/text``); without a
    /// text column it is `unsupported`.
    func attributeScalar(_ alias: String, _ a: Schema.Attribute, _ range: SourceRange) throws(SQLLoweringError)
        -> Scalar
    {
        var s = Scalar(fragment: Fragment(column(alias, a.column)), attribute: a)
        if alias == rootScope?.alias, !rowAttributes.contains(where: { $0.name == a.name }) { rowAttributes.append(a) }
        if a.type == .any { dynamicColumns.insert(s.fragment.sql) }
        if dialect.textFunction == nil, let f = a.foldedColumns {
            s.folded = f
            s.foldedAlias = alias
        }
        if a.type == .any && !dialect.traits.contains(.dynamicTyping) {
            guard let t = a.textColumn else {
                throw unsupported(
                    "the dynamically typed '\(a.name)' without a text column in this dialect (its columns hold one type each)",
                    range)
            }
            s.text = Fragment(column(alias, t))
        }
        return s
    }

    /// `s` when it has one SQL value; `unsupported` for a dynamically typed value kept in two
    /// columns, which only comparisons, IN, BETWEEN, @min/@max and sorting can read.
    @discardableResult
    func singleTyped(_ s: Scalar, _ what: String, _ range: SourceRange) throws(SQLLoweringError) -> Scalar {
        if s.text != nil {
            throw unsupported(
                "\(what) of the dynamically typed '\(s.attribute.name)' in this dialect (its numbers and strings are in two columns)",
                range)
        }
        return s
    }

    func destination(_ name: String, _ range: SourceRange) throws(SQLLoweringError) -> Schema.Entity {
        guard let e = schema.entity(named: name) else {
            throw SQLLoweringError(.unknownEntity, "the schema has no entity '\(name)'", range: range)
        }
        return e
    }

    // MARK: Predicates

    // The two recursive steps check the stack first: deep trees continue on a larger one
    // (see `StackGuard`).
    func predicate(_ p: PredicateSyntax, negated: Bool, _ scope: Scope) throws(SQLLoweringError) -> Lowered {
        try StackGuard.ensure { () throws(SQLLoweringError) in try predicateHere(p, negated: negated, scope) }
    }

    private func predicateHere(_ p: PredicateSyntax, negated: Bool, _ scope: Scope) throws(SQLLoweringError) -> Lowered
    {
        let lowered = try predicateKind(p, negated: negated, scope)
        // Bottom-up, so only the lowest parts that pass the depth are handed to memory.
        if guardsNesting, case .sql(let f) = lowered, SQLNesting.exceeds(f.sql),
            let decided = documentCall(p, negated: negated, scope)
        {
            return decided
        }
        return lowered
    }

    private func predicateKind(_ p: PredicateSyntax, negated: Bool, _ scope: Scope) throws(SQLLoweringError) -> Lowered
    {
        switch p.kind {
        case .constant(let v): return .constant(v != negated)
        case .not(let q): return try predicate(q, negated: !negated, scope)
        case .and(let ops): return try junction(ops, isAnd: !negated, negated: negated, scope)
        case .or(let ops): return try junction(ops, isAnd: negated, negated: negated, scope)
        case .comparison(let q, let l, let op, let o, let r):
            do {
                return try splitOnShapes { () throws(SQLLoweringError) in
                    try comparison(q, l, op, o, r, negated: negated, range: p.range, scope)
                }
            } catch {
                guard let decided = try documentComparison(p, negated: negated, scope, rejectedWith: error) else {
                    throw error
                }
                return decided
            }
        }
    }

    // MARK: Mixed shapes

    /// Lowers `lower` once per case of each mixed key it meets (see ``Schema/MixedKey``) and lets each row
    /// take the lowering of its own case: `(shape IS NULL AND P_nil) OR (shape = ? AND P_1) OR …`.
    /// Each `P` is exact for the rows of its case, and the cases partition the rows, so the whole
    /// is exact, in either polarity. Only shape columns of scopes that existed before `lower` ran
    /// can be tested here (a collection's element row is visible only inside its subquery).
    func splitOnShapes(_ lower: () throws(SQLLoweringError) -> Lowered) throws(SQLLoweringError) -> Lowered {
        let mark = scopeCount
        do {
            return try lower()
        } catch {
            guard let request = pendingShape, request.error == error else { throw error }
            pendingShape = nil
            guard request.serial < mark else { throw error }
            shapeLowerings += request.tags.count + 1
            guard shapeLowerings <= 256 else {
                throw SQLLoweringError(
                    .unsupported, "too many combinations of keys whose shape differs between rows", range: error.range)
            }
            defer { shapeChoices[request.column] = nil }
            var parts: [Fragment] = []
            for choice in [nil] + request.tags.map(Optional.some) {
                shapeChoices[request.column] = .some(choice)
                let lowered = try splitOnShapes(lower)
                let test =
                    choice.map { Fragment(request.column + " = ") + Fragment.param(.integer($0)) }
                    ?? Fragment(request.column + " IS NULL")
                switch lowered {
                case .constant(false): continue
                case .constant(true): parts.append(test)
                case .sql(let f): parts.append((test + Fragment(" AND ") + f.parenthesized).parenthesized)
                }
            }
            if parts.isEmpty { return .constant(false) }
            return .sql(parts.count == 1 ? parts[0] : Fragment.join(parts, " OR "))
        }
    }

    /// The case of `key` chosen for the comparison being lowered (nil: the key is nil in these
    /// rows); when none is chosen yet, unwinds to `splitOnShapes` to choose each in turn.
    func shapeCase(_ key: Schema.MixedKey, alias: String, _ scope: Scope, _ range: SourceRange) throws(SQLLoweringError)
        -> Schema.MixedKey.Case?
    {
        let shapeColumn = column(alias, key.shapeColumn)
        // A key whose shape differs between rows: memory may raise on some shapes (see RowGuard.swift).
        noteRiskOnEveryRow(range)
        if let chosen = shapeChoices[shapeColumn] {
            guard let tag = chosen else { return nil }
            return key.cases.first { $0.tag == tag }
        }
        let what =
            key.name == "SELF" && scope.entity.selfShape == key
            ? "the records, which are not all objects," : "'\(key.name)', whose shape differs between records,"
        let error = SQLLoweringError(
            .unsupported,
            "\(what) cannot be lowered here (only inside a comparison on the records themselves or their to-one objects)",
            range: range)
        pendingShape = ShapeRequest(column: shapeColumn, tags: key.cases.map(\.tag), serial: scope.serial, error: error)
        throw error
    }

    /// `SELF`: the record in each of its shapes (an object is only ever compared with nil).
    func selfOperand(_ range: SourceRange) throws(SQLLoweringError) -> Operand {
        guard let root = rootScope, let shapes = root.entity.selfShape else { throw unsupported("SELF", range) }
        guard let c = try shapeCase(shapes, alias: root.alias, root, range) else { return .constant(.null) }
        if c.object { return .object(Fragment(column(root.alias, root.entity.primaryKey)), "SELF") }
        if let a = c.attribute { return .scalar(try attributeScalar(root.alias, a, range)) }
        return try ownedCollection(c.relationship!, root, rest: [], range)
    }

    /// A to-many (or values) relationship of the row of `owner` itself.
    private func ownedCollection(_ r: Schema.Relationship, _ owner: Scope, rest: [String], _ range: SourceRange)
        throws(SQLLoweringError) -> Operand
    {
        let shape: Schema.Relationship.Shape
        do { shape = try r.shape() } catch { throw SQLLoweringError(.unknownKey, error.message, range: range) }
        guard shape.isToMany else {
            throw SQLLoweringError(.unknownKey, "SELF is not a to-one relationship", range: range)
        }
        if owner.insideCollection {
            throw nestedToMany(r.name, range)
        }
        return .collection(
            try withUnion(Collection(relationship: r, shape: shape, owner: owner, rest: rest, range: range)))
    }

    /// AND/OR with constant simplification (De Morgan already applied through `isAnd`).
    private func junction(_ ops: [PredicateSyntax], isAnd: Bool, negated: Bool, _ scope: Scope) throws(SQLLoweringError)
        -> Lowered
    {
        var parts: [Fragment] = []
        // The predicate's own top-level AND: each part's risks are kept apart (RowGuard.swift).
        let recording = isAnd && !negated && recordsConjuncts
        recordsConjuncts = false
        for op in ops {
            let outer = risks
            if recording { risks = RowRisks() }
            let lowered = try predicate(op, negated: negated, scope)
            if recording {
                conjuncts.append((lowered, risks))
                risks.conditions = outer.conditions + risks.conditions
                risks.everyRow = risks.everyRow || outer.everyRow
                risks.dynamic = outer.dynamic ?? risks.dynamic
                risks.computed = outer.computed ?? risks.computed
                risks.callsMemory = outer.callsMemory ?? risks.callsMemory
                risks.unseen = outer.unseen ?? risks.unseen
            }
            switch lowered {
            case .constant(let v):
                if v != isAnd { return .constant(v) }  // false in AND, true in OR decides
            case .sql(let f): parts.append(f.parenthesized)
            }
        }
        if parts.isEmpty { return .constant(isAnd) }
        if parts.count == 1 { return .sql(parts[0]) }
        if recording, let deferred = deferringSubqueries(parts, scope) { return .sql(deferred) }
        return .sql(Fragment.join(parts, isAnd ? " AND " : " OR "))
    }

    /// The predicate's top-level AND of `parts` (of `scope`'s rows) with the parts that run a
    /// subquery written last, in one term with a test that is always true on each joined row the
    /// other parts read (`a AND +(EXISTS … AND t1."pk" IS t1."pk")`, as the dialect bundles it): the
    /// subquery then runs only on rows the other parts keep, to-one joins' tests included. Nil when
    /// the dialect leaves the AND as it is, or no part (or every part) runs a subquery, or the
    /// others read no joined row (the subquery already runs after them).
    private func deferringSubqueries(_ parts: [Fragment], _ scope: Scope) -> Fragment? {
        let plain = parts.filter { !$0.runsSubquery }
        guard plain.count < parts.count, !plain.isEmpty else { return nil }
        // Column references are always `alias."name"` (`column(_:_:)`).
        let read = scope.joinAliases.values.filter { j in plain.contains { $0.sql.contains(j.alias + ".\"") } }
        guard !read.isEmpty else { return nil }
        let touches = read.sorted { $0.alias < $1.alias }.map { j in
            let key = column(j.alias, j.entity.primaryKey)
            return Fragment(dialect.isNotDistinct(key, key))
        }
        let deferred = Fragment.join(parts.filter(\.runsSubquery) + touches, " AND ")
        guard let bundled = dialect.bundledSubqueryTerm(deferred.sql) else { return nil }
        return Fragment.join(plain + [Fragment(bundled, deferred.bindings)], " AND ")
    }

    // MARK: Operands

    func operand(_ e: ExpressionSyntax, _ scope: Scope) throws(SQLLoweringError) -> Operand {
        try StackGuard.ensure { () throws(SQLLoweringError) in try operandHere(e, scope) }
    }

    private func operandHere(_ e: ExpressionSyntax, _ scope: Scope) throws(SQLLoweringError) -> Operand {
        switch e.kind {
        case .constant, .variable, .keyPath: break
        default:
            // Computed once by the evaluator: memory's value by construction.
            if isConstant(e) { return .constant(try fold(e)) }
        }
        switch e.kind {
        case .constant(let v): return .constant(v)
        case .variable(let name):
            if let bound = elementVariables[name] {
                guard let value = bound.value else {
                    throw unsupported("the object '$\(name)' itself (name a key of it)", e.range)
                }
                return .scalar(value)
            }
            guard let v = variables[name] else {
                throw SQLLoweringError(.unboundVariable, "variable '$\(name)' is not bound", range: e.range)
            }
            return .constant(v)
        case .keyPath(nil, let components): return try keyPath(components, scope, e.range)
        case .keyPath(let base?, let components):
            if case .variable(let name) = base.kind, let bound = elementVariables[name] {
                guard let es = bound.scope else {
                    throw SQLLoweringError(
                        .unknownKey, "the values bound to '$\(name)' have no key '\(components[0])'", range: e.range)
                }
                return try keyPath(components, es, e.range)
            }
            if case .subquery(let c, let v, let p) = base.kind, components == ["@count"] {
                return try subqueryCount(c, v, p, scope, e.range)
            }
            if case .index(let b, let index) = base.kind {
                return try indexed(b, index, path: components, scope, e.range)
            }
            if components == ["@count"], case .scalar(let s) = try operand(base, scope), s.isCollection {
                // `mode:(x).@count`: memory counts the list it returned.
                return try memoryCall("count:", [(.scalar(s), base)], type: .integer, e.range)
            }
            throw unsupported("a key path on a computed value", e.range)
        case .index(let base, .size):
            if case .subquery(let c, let v, let p) = base.kind { return try subqueryCount(c, v, p, scope, e.range) }
            return try indexed(base, .size, path: [], scope, e.range)
        case .evaluatedObject: return try selfOperand(e.range)
        case .dynamicKey: throw unsupported("a computed key", e.range)
        case .aggregate(let elements):
            // `{$lo, $hi}` or `{-1, 2}`: elements that are constants once `$VAR`s are bound make a
            // constant list, as in memory; anything else (a key path, CAST…) cannot be lowered.
            var values: [LiteralValue] = []
            for element in elements {
                guard case .constant(let v) = try operand(element, scope) else {
                    throw unsupported("an aggregate with non-constant elements", e.range)
                }
                values.append(v)
            }
            return .constant(.array(values))
        case .index(let base, let index): return try indexed(base, index, path: [], scope, e.range)
        case .binary(let op, let l, let r): return try arithmetic(op, l, r, scope, e.range)
        case .unary(.negate, let o):
            return try arithmetic(
                .subtract, ExpressionSyntax(.constant(value: .integer(0)), range: e.range), o, scope, e.range)
        case .unary(.bitwiseNot, let o): return try complement(o, scope, e.range)
        case .function(let name, let args): return try function(name, args, scope, e.range)
        case .customFunction(_, let s, _): throw unsupported("FUNCTION '\(s)'", e.range)
        case .subquery: throw unsupported("SUBQUERY", e.range)
        case .ternary(let c, let a, let b): return try ternary(c, a, b, scope, e.range)
        case .cast(let v, let t): return try cast(v, t, scope, e.range)
        case .assignment: throw unsupported("an assignment", e.range)
        }
    }

    /// A to-many relationship inside another (arrays of arrays): no SQL reads it in one piece, but
    /// the row's document holds it.
    func nestedToMany(_ name: String, _ range: SourceRange) -> SQLLoweringError {
        var e = SQLLoweringError(
            .toManyKeyPath, "the to-many relationship '\(name)' is inside another to-many key path", range: range)
        e.readsDocument = true
        return e
    }

    func unsupported(_ what: String, _ range: SourceRange?) -> SQLLoweringError {
        SQLLoweringError(.unsupported, "\(what) cannot be lowered to SQL", range: range)
    }

    /// Resolves a key path from `scope`: attributes, to-one joins (one per distinct path), and a
    /// to-many relationship with the rest of the path.
    func keyPath(_ components: [String], _ scope: Scope, _ range: SourceRange) throws(SQLLoweringError) -> Operand {
        if scope === rootScope, let shapes = scope.entity.selfShape, let first = components.first,
            let value = try keyOfSelf(shapes, first: first, components, scope, range)
        {
            return value
        }
        // The common case, one attribute of the scope's own entity, read in place: the general walk
        // below copies the entity (and retains each of its arrays and names) to follow joins.
        if components.count == 1, scope.entity.mixedKeys.isEmpty, !KeyPathComponent.isCollectionOperator(components[0]),
            let a = scope.entity.attribute(named: components[0])
        {
            return .scalar(try attributeScalar(scope.alias, a, range))
        }
        var entity = scope.entity
        var alias = scope.alias
        var path = ""
        for (i, key) in components.enumerated() {
            let isLast = i == components.count - 1
            // An operator is never a property, even where a JSON key is spelled like one:
            // memory applies it, so the lowering must not read a column of that name.
            let isOperator = KeyPathComponent.isCollectionOperator(key)
            var attribute = isOperator ? nil : entity.attribute(named: key)
            var relationship = isOperator ? nil : entity.relationship(named: key)
            if !isOperator, let m = entity.mixedKey(named: key) {
                readsBeyondRow = true
                // In rows where the key is nil, the rest of the path is nil too.
                guard let c = try shapeCase(m, alias: alias, scope, range) else { return nilValue(key) }
                attribute = c.attribute
                relationship = c.relationship
            }
            if let a = attribute {
                if !isLast && isLoweringOneShape {
                    // A key of a value: nil of nil, and memory raises on any other value.
                    return nilValue(key)
                }
                guard isLast else {
                    // Memory raises on the rows holding a value, and answers on the others (nil of
                    // nil, or a short-circuit before it): the document can tell which.
                    var error = SQLLoweringError(
                        .unknownKey, "'\(key)' of \(entity.name) is an attribute; it has no key '\(components[i + 1])'",
                        range: range)
                    error.readsDocument = true
                    throw error
                }
                return .scalar(try attributeScalar(alias, a, range))
            }
            guard let r = relationship else {
                // An open entity answers nil for a key it does not declare, and a key on nil is nil,
                // so the rest of the path is nil too.
                // Collection operators (`@count`, …) are not keys: memory applies them to the object.
                if entity.open && !isOperator { return nilValue(key) }
                var error = SQLLoweringError(.unknownKey, "\(entity.name) has no key '\(key)'", range: range)
                error.readsDocument = true
                throw error
            }
            readsBeyondRow = true
            let shape: Schema.Relationship.Shape
            do { shape = try r.shape() } catch { throw SQLLoweringError(.unknownKey, error.message, range: range) }
            switch shape {
            case .toOne(let d, let fk):
                if isLast { return .object(Fragment(column(alias, fk)), key) }
                path += "." + key
                (alias, entity) = try joinToOne(d, fk, from: alias, path: path, scope, range)
            case .toMany, .manyToMany, .values:
                if scope.insideCollection {
                    throw nestedToMany(key, range)
                }
                return .collection(
                    try toManyCollection(
                        r, shape, entity: entity, alias: alias, rest: Array(components[(i + 1)...]), scope, range))
            }
        }
        throw SQLLoweringError(.unknownKey, "empty key path", range: range)
    }

    /// A key of a record that is not an object (`selfShape`): nil of nil, each element's key of
    /// an array, and an error in memory for a string, number or date (any value will do); nil when
    /// the record is an object and the key is read as usual.
    private func keyOfSelf(
        _ shapes: Schema.MixedKey, first: String, _ components: [String], _ scope: Scope, _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand? {
        switch try shapeCase(shapes, alias: scope.alias, scope, range) {
        case nil: return nilValue(first)
        case let c? where c.object: return nil
        case let c?:
            guard let r = c.relationship else { return nilValue(first) }
            guard case .collection(let values) = try ownedCollection(r, scope, rest: components, range) else {
                return nilValue(first)
            }
            return .collection(keyOfValues(values))
        }
    }

    /// nil, as the value of the key `key` (a dynamically typed NULL).
    private func nilValue(_ key: String) -> Operand {
        .scalar(Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: key, type: .any)))
    }

    /// The alias and entity of the to-one relationship `fk` leads to from `alias`: one LEFT JOIN
    /// per distinct key path of the scope.
    private func joinToOne(
        _ d: String, _ fk: String, from alias: String, path: String, _ scope: Scope, _ range: SourceRange
    ) throws(SQLLoweringError) -> (String, Schema.Entity) {
        let dest = try destination(d, range)
        if let j = scope.joinAliases[path] {
            return (j.alias, j.entity)
        } else {
            let a2 = newAlias()
            scope.joins.append(
                "LEFT JOIN \(dialect.quote(dest.table)) AS \(a2) ON \(column(a2, dest.primaryKey)) = \(column(alias, fk))"
            )
            scope.joinAliases[path] = (a2, dest)
            return (a2, dest)
        }
    }

    /// The to-many relationship `r` of the row reached so far (`alias`), with the rest of the path.
    private func toManyCollection(
        _ r: Schema.Relationship, _ shape: Schema.Relationship.Shape, entity: Schema.Entity, alias: String,
        rest: [String], _ scope: Scope, _ range: SourceRange
    ) throws(SQLLoweringError) -> Collection {
        // The owner of the collection is the row reached so far.
        let owner: Scope
        if alias == scope.alias {
            owner = scope
        } else {
            owner = makeScope(entity: entity, alias: alias)
        }
        return keyOfValues(
            try withUnion(
                Collection(
                    relationship: r, shape: shape, owner: owner,
                    rest: rest, range: range,
                    ownerNullable: owner !== scope)))
    }

    /// A key of plain values (`tags.name`, or `name` of a record `["a", "b"]`): memory raises on
    /// each element, so an empty collection stays empty, nil stays nil, and the rest does not matter:
    /// the same collection whose elements read NULL.
    func keyOfValues(_ c: Collection) -> Collection {
        guard isLoweringOneShape, c.shape.isValuesShape, c.union == nil, let first = c.rest.first,
            !KeyPathComponent.isCollectionOperator(first)
        else { return c }
        var v = c
        v.rest = Array(c.rest.drop { !KeyPathComponent.isCollectionOperator($0) })
        v.nullElements = true
        return v
    }

    /// `kids.@unionOfObjects.name`: the collection of `kids` whose elements are their non-nil
    /// names. Only a plain key path may follow (memory applies the rest to each element).
    func withUnion(_ c: Collection) throws(SQLLoweringError) -> Collection {
        guard let first = c.rest.first, Collection.unionOperators.contains(first) else { return c }
        let key = Array(c.rest.dropFirst())
        guard !key.isEmpty || c.shape.isValuesShape, !key.contains(where: KeyPathComponent.isCollectionOperator) else {
            throw unsupported(
                "'\(first)' followed by \(key.isEmpty ? "nothing" : "another collection operator")", c.range)
        }
        var u = c
        u.rest = key
        u.union = first
        return u
    }

    /// `FROM … WHERE <correlation>` of a collection's elements, with a fresh alias (a new scope).
    func elements(_ c: Collection) throws(SQLLoweringError) -> (
        from: String, correlation: String, element: Scope?, valueColumn: Scalar?
    ) {
        let e = try elementSource(c)
        return (e.from, e.correlation, e.element, e.valueColumn)
    }

    /// `elements(_:)` plus the qualified order column of an ordered collection.
    func elementSource(_ c: Collection) throws(SQLLoweringError) -> (
        from: String, correlation: String, element: Scope?, valueColumn: Scalar?, order: String?
    ) {
        let a = newAlias()
        let ownerPK = column(c.owner.alias, c.owner.entity.primaryKey)
        switch c.shape {
        case .toOne:
            throw SQLLoweringError(.notACollection, "'\(c.relationship.name)' is not a collection", range: c.range)
        case .toMany(let d, let fk):
            let dest = try destination(d, c.range)
            return (
                "\(dialect.quote(dest.table)) AS \(a)", "\(column(a, fk)) = \(ownerPK)",
                makeScope(entity: dest, alias: a, insideCollection: true), nil,
                c.relationship.orderColumn.map { column(a, $0) }
            )
        case .manyToMany(let d, let j):
            let dest = try destination(d, c.range)
            let ja = newAlias()
            return (
                "\(dialect.quote(j.table)) AS \(ja) JOIN \(dialect.quote(dest.table)) AS \(a) ON \(column(a, dest.primaryKey)) = \(column(ja, j.destination))",
                "\(column(ja, j.source)) = \(ownerPK)", makeScope(entity: dest, alias: a, insideCollection: true), nil,
                c.relationship.orderColumn.map { column(ja, $0) }
            )
        case .values(let v):
            let attr = v.elementAttribute(named: c.relationship.name)
            return (
                "\(dialect.quote(v.table)) AS \(a)", "\(column(a, v.owner)) = \(ownerPK)", nil,
                c.nullElements
                    ? Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: attr.name, type: .any))
                    : try attributeScalar(a, attr, c.range),
                c.relationship.orderColumn.map { column(a, $0) }
            )
        }
    }

    /// `EXISTS (SELECT 1 FROM <elements> <joins> WHERE <correlation> AND <condition>)`; the
    /// condition is built in the element scope (its to-one joins land inside the subquery).
    func exists(_ c: Collection, _ condition: (Scope?, Scalar?) throws(SQLLoweringError) -> Lowered)
        throws(SQLLoweringError) -> Lowered
    {
        let (from, corr, scope, value) = try elements(c)
        let cond = try condition(scope, value)
        var sql = "EXISTS (SELECT 1 FROM \(from)"
        for j in scope?.joins ?? [] { sql += " " + j }
        sql += " WHERE \(corr)"
        var exists: Fragment
        switch cond {
        case .constant(false): return .constant(false)
        case .constant(true): exists = Fragment(sql + ")")
        case .sql(let f): exists = Fragment(sql + " AND ") + f.parenthesized + Fragment(")")
        }
        exists.runsSubquery = true
        return .sql(exists)
    }

    /// `SUBQUERY(rel, $x, P).@count` (or `[SIZE]`): `(SELECT COUNT(*) … WHERE <correlation> AND P)`,
    /// with `$x` bound to the element row while P is lowered; nil when the collection is nil.
    func subqueryCount(
        _ collection: ExpressionSyntax, _ variable: String, _ body: PredicateSyntax,
        _ scope: Scope, _ range: SourceRange
    ) throws(SQLLoweringError) -> Operand {
        let whole = ExpressionSyntax(
            .subquery(collection: collection, variable: variable, predicate: body), range: range)
        if isConstant(whole) {
            // Over a constant collection: memory's own filtering, once.
            guard case .array(let selected) = try fold(whole) else {
                throw unsupported("the value of '\(whole)'", range)
            }
            return .constant(.integer(Int64(selected.count)))
        }
        guard let c = try subqueryCollection(collection, scope) else {
            // Not a collection: memory raises on a value (see RowGuard.swift).
            noteUnseenRisk(nil, range)
            return .scalar(
                Scalar(fragment: Fragment("NULL"), attribute: Schema.Attribute(name: "SUBQUERY", type: .integer)))
        }
        let (from, corr, es, value) = try elements(c)
        let cond = try subqueryCondition(variable, body, es, value, scope)
        var sql = Fragment("(SELECT COUNT(*) FROM \(from)")
        for j in es?.joins ?? [] { sql = sql + Fragment(" " + j) }
        sql = sql + Fragment(" WHERE \(corr)")
        switch cond {
        case .constant(true): break
        case .constant(false): sql = sql + Fragment(" AND " + dialect.booleanLiteral(false))
        case .sql(let f): sql = sql + Fragment(" AND ") + f.parenthesized
        }
        sql = sql + Fragment(")")
        if let isNil = collectionIsNil(c) {
            sql = Fragment("CASE WHEN \(isNil) THEN NULL ELSE ") + sql + Fragment(" END")
        }
        return .scalar(Scalar(fragment: sql, attribute: Schema.Attribute(name: "SUBQUERY", type: .integer)))
    }

    /// The collection a SUBQUERY filters, or nil where it is nil. One shape of `SELF` or of a mixed
    /// key (records that are not all arrays) may be nil (SUBQUERY of nil is nil), or a value or an
    /// object, on which memory raises ("SUBQUERY needs a collection"), so any answer will do: nil.
    func subqueryCollection(_ collection: ExpressionSyntax, _ scope: Scope) throws(SQLLoweringError) -> Collection? {
        switch try operand(collection, scope) {
        case .collection(let c) where c.rest.isEmpty && c.union == nil: return c
        case .constant(.null): return nil
        case .scalar where isLoweringOneShape, .object where isLoweringOneShape: return nil
        default:
            throw SQLLoweringError(
                .notACollection, "SUBQUERY needs a to-many relationship, got '\(collection)'", range: collection.range)
        }
    }

    /// A SUBQUERY's predicate over one element (`es` for objects, `value` for values), with its
    /// variable bound while it is lowered, in the requested polarity; the rest of the predicate
    /// reads the outer row.
    func subqueryCondition(
        _ variable: String, _ body: PredicateSyntax, _ es: Scope?, _ value: Scalar?,
        _ scope: Scope, negated: Bool = false
    ) throws(SQLLoweringError) -> Lowered {
        let saved = elementVariables[variable]
        elementVariables[variable] = (es, value)
        defer { elementVariables[variable] = saved }
        return try predicate(body, negated: negated, scope)
    }

    /// The SQL condition under which the collection itself is nil (its count column is NULL, or
    /// its owner, reached through a to-one relationship, is missing); nil when it never is.
    func collectionIsNil(_ c: Collection) -> String? {
        var parts: [String] = []
        if c.ownerNullable { parts.append("\(column(c.owner.alias, c.owner.entity.primaryKey)) IS NULL") }
        if let cc = c.relationship.countColumn { parts.append("\(column(c.owner.alias, cc)) IS NULL") }
        if parts.isEmpty { return nil }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// A scalar subquery over a collection: `(SELECT <agg> FROM … WHERE <correlation>)`.
    /// The third value is the strings' result of `@min`/`@max` over dynamically typed values kept
    /// in two columns (see ``Scalar/text``).
    func aggregate(_ c: Collection, _ fn: String, _ key: [String]) throws(SQLLoweringError) -> (
        Fragment, Schema.Attribute, Fragment?
    ) {
        let (from, corr, scope, value) = try elements(c)
        let arg: Fragment
        var dualText: Fragment?
        var dualResult: Fragment?
        var attr = Schema.Attribute(name: "@count", type: .integer)
        if fn == "COUNT" {
            arg = Fragment("*")
        } else {
            let target: Scalar
            if let value, key.isEmpty {
                target = value
            } else if let scope, !key.isEmpty {
                guard case .scalar(let s) = try keyPath(key, scope, c.range) else {
                    throw SQLLoweringError(
                        .unsupported, "the collection operator needs an attribute key path", range: c.range)
                }
                target = s
            } else {
                throw SQLLoweringError(
                    .unsupported, "the collection operator needs a key path of numbers", range: c.range)
            }
            if target.text != nil && fn != "MIN" && fn != "MAX" {
                try singleTyped(target, fn == "SUM" ? "@sum" : "@avg", c.range)
            }
            arg = target.fragment
            attr = target.attribute
            dualText = target.text
        }
        var sql: Fragment
        if fn == "SUM" && (attr.type == .integer || attr.type == .boolean) {
            // Memory sums Int64s with wrapping (C arithmetic); SQLite's SUM raises "integer
            // overflow" instead. Summing the high and low 32-bit halves separately cannot overflow
            // (fewer than 2^31 rows), and recombining them with a shift (SQLite shifts as u64) and
            // a bitwise OR gives the sum modulo 2^64: exactly memory's wrapped sum.
            let x = arg.parenthesized
            // The dialect wraps the text; the parameter markers inside keep their bindings' order.
            func sum(_ f: Fragment) -> Fragment { Fragment(dialect.integerSum(f.sql), f.bindings) }
            let low = sum(x + Fragment(" & 4294967295"))
            sql =
                Fragment("(SELECT (((") + sum(x + Fragment(" >> 32")) + Fragment(" + (") + low
                + Fragment(" >> 32)) << 32) | (")
                + low + Fragment(" & 4294967295)) FROM \(from)")
        } else if fn == "AVG" {
            sql =
                Fragment("(SELECT ") + Fragment(dialect.doubleAverage(arg.sql), arg.bindings)
                + Fragment(" FROM \(from)")
        } else if let dualText {
            // @min/@max of dynamically typed values: of the numbers and of the strings apart (memory
            // raises on a collection holding both, so at most one is asked for).
            sql = Fragment("(SELECT \(fn)(") + arg + Fragment(") FROM \(from)")
            var text =
                Fragment("(SELECT \(fn)(") + textOrdered(dualText, Schema.Attribute(name: "", type: .string))
                + Fragment(") FROM \(from)")
            for j in scope?.joins ?? [] { text = text + Fragment(" " + j) }
            dualResult = text + Fragment(" WHERE \(corr))")
        } else if fn == "MIN" || fn == "MAX" {
            sql = Fragment("(SELECT \(fn)(") + textOrdered(arg, attr) + Fragment(") FROM \(from)")
        } else {
            sql = Fragment("(SELECT \(fn)(") + arg + Fragment(") FROM \(from)")
        }
        for j in scope?.joins ?? [] { sql = sql + Fragment(" " + j) }
        return (sql + Fragment(" WHERE \(corr))"), attr, dualResult)
    }
}
