// `$VARIABLE` substitution: replacing variables with constants to get a new predicate, as
// `NSPredicate.withSubstitutionVariables(_:)` does. Variables bound by SUBQUERY inside their own
// predicate and assignment targets are left alone; unbound variables stay for evaluation time.

extension PredicateSyntax {
    /// A copy with every `$name` found in `variables` replaced by that constant.
    ///
    /// ```swift
    /// let p = try PredicateSyntax.parse("age > $min")
    /// p.withSubstitutionVariables(["min": .integer(18)])  // age > 18
    /// ```
    public func withSubstitutionVariables(_ variables: [String: LiteralValue]) -> PredicateSyntax {
        var copy = self
        copy.kind = Substituter(variables: variables).predicate(kind)
        return copy
    }

    /// The names of the variables that occur free in this predicate (not bound by SUBQUERY).
    public var variableNames: Set<String> {
        var names = Set<String>()
        Substituter.collect(self, bound: [], targets: false, into: &names)
        return names
    }

    /// The names of the variables this predicate assigns (`$v := …`) outside a SUBQUERY that binds
    /// them; they are also in ``variableNames``.
    ///
    /// ```swift
    /// try PredicateSyntax.parse("$v := age * 2 == 10").assignedVariableNames   // ["v"]
    /// ```
    public var assignedVariableNames: Set<String> {
        var names = Set<String>()
        Substituter.collect(self, bound: [], targets: true, into: &names)
        return names
    }
}

extension ExpressionSyntax {
    /// A copy with every `$name` found in `variables` replaced by that constant.
    public func withSubstitutionVariables(_ variables: [String: LiteralValue]) -> ExpressionSyntax {
        Substituter(variables: variables).expression(self)
    }
}

extension PredicateSyntax {
    /// A copy with every constant for which `lift` is true replaced by a new `$variable`, and the
    /// values those variables stand for: the inverse of ``withSubstitutionVariables(_:)``, for a
    /// predicate that must travel as text although some of its constants have no spelling in the
    /// language (a dictionary from a `%@` argument). The new names start with `prefix` and do not
    /// clash with the predicate's own variables.
    ///
    /// ```swift
    /// let p = try PredicateSyntax.parse("SELF == %@", arguments: [["a": 1]])
    /// let (q, values) = p.liftingConstants { if case .dictionary = $0 { true } else { false } }
    /// q.description   // SELF == $c1
    /// values          // ["c1": .dictionary(["a": .integer(1)])]
    /// ```
    public func liftingConstants(prefix: String = "c", where lift: (LiteralValue) -> Bool) -> (
        PredicateSyntax, [String: LiteralValue]
    ) {
        withoutActuallyEscaping(lift) { lift in
            let lifter = Substituter.Lifter(prefix: prefix, taken: variableNames, lift: lift)
            var copy = self
            copy.kind = Substituter(variables: [:], lifter: lifter).predicate(kind)
            return (copy, lifter.values)
        }
    }
}

private struct Substituter {
    var variables: [String: LiteralValue]
    /// Set when constants are lifted into variables instead (``PredicateSyntax/liftingConstants(prefix:where:)``).
    var lifter: Lifter?

    init(variables: [String: LiteralValue], lifter: Lifter? = nil) {
        self.variables = variables
        self.lifter = lifter
    }

    /// The constants lifted so far; a class so the walk's copies share it.
    final class Lifter {
        let prefix: String
        let taken: Set<String>
        let lift: (LiteralValue) -> Bool
        var values: [String: LiteralValue] = [:]
        private var count = 0

        init(prefix: String, taken: Set<String>, lift: @escaping (LiteralValue) -> Bool) {
            self.prefix = prefix
            self.taken = taken
            self.lift = lift
        }

        /// A fresh variable name for `value`.
        func name(for value: LiteralValue) -> String {
            var name: String
            repeat {
                count += 1
                name = "\(prefix)\(count)"
            } while taken.contains(name)
            values[name] = value
            return name
        }
    }

    // Each walk checks the stack at its recursion point (see `StackGuard`).
    func predicate(_ kind: PredicateSyntax.Kind) -> PredicateSyntax.Kind {
        StackGuard.ensure { predicateBody(kind) }
    }

    private func predicateBody(_ kind: PredicateSyntax.Kind) -> PredicateSyntax.Kind {
        switch kind {
        case .constant: return kind
        case .and(let ops): return .and(operands: ops.map { PredicateSyntax(predicate($0.kind), range: $0.range) })
        case .or(let ops): return .or(operands: ops.map { PredicateSyntax(predicate($0.kind), range: $0.range) })
        case .not(let op): return .not(operand: PredicateSyntax(predicate(op.kind), range: op.range))
        case .comparison(let q, let lhs, let op, let options, let rhs):
            return .comparison(
                quantifier: q, lhs: expression(lhs), operator: op, options: options, rhs: expression(rhs))
        }
    }

    func expression(_ e: ExpressionSyntax) -> ExpressionSyntax {
        StackGuard.ensure { expressionBody(e) }
    }

    private func expressionBody(_ e: ExpressionSyntax) -> ExpressionSyntax {
        var out = e
        switch e.kind {
        case .constant(let v):
            if let lifter, lifter.lift(v) { out.kind = .variable(name: lifter.name(for: v)) }
        case .evaluatedObject: return e
        case .variable(let name):
            if let v = variables[name] { out.kind = .constant(value: v) }
        case .keyPath(let base, let components):
            out.kind = .keyPath(base: base.map(expression), components: components)
        case .dynamicKey(let base, let key):
            out.kind = .dynamicKey(base: expression(base), key: expression(key))
        case .aggregate(let elements):
            return Parser.aggregate(elements.map(expression), range: e.range)
        case .index(let base, let index):
            if case .expression(let x) = index {
                out.kind = .index(base: expression(base), index: .expression(expression(x)))
            } else {
                out.kind = .index(base: expression(base), index: index)
            }
        case .binary(let op, let lhs, let rhs):
            out.kind = .binary(operator: op, lhs: expression(lhs), rhs: expression(rhs))
        case .unary(let op, let operand):
            out.kind = .unary(operator: op, operand: expression(operand))
        case .function(let name, let args):
            out.kind = .function(name: name, arguments: args.map(expression))
        case .customFunction(let target, let selector, let args):
            out.kind = .customFunction(target: expression(target), selector: selector, arguments: args.map(expression))
        case .subquery(let collection, let variable, let p):
            var inner = self
            inner.variables[variable] = nil
            out.kind = .subquery(
                collection: expression(collection), variable: variable,
                predicate: PredicateSyntax(inner.predicate(p.kind), range: p.range))
        case .ternary(let c, let a, let b):
            out.kind = .ternary(
                condition: PredicateSyntax(predicate(c.kind), range: c.range), then: expression(a), else: expression(b))
        case .cast(let value, let type):
            let v = expression(value)
            let t = expression(type)
            if let folded = Parser.typedLiteral(v, t) {
                out.kind = .constant(value: folded)
            } else {
                out.kind = .cast(value: v, type: t)
            }
        case .assignment(let variable, let value):
            out.kind = .assignment(variable: variable, value: expression(value))
        }
        return out
    }

    static func collect(_ p: PredicateSyntax, bound: Set<String>, targets: Bool, into names: inout Set<String>) {
        StackGuard.ensure { collectBody(p, bound: bound, targets: targets, into: &names) }
    }

    private static func collectBody(
        _ p: PredicateSyntax, bound: Set<String>, targets: Bool, into names: inout Set<String>
    ) {
        switch p.kind {
        case .constant: break
        case .and(let ops), .or(let ops): for o in ops { collect(o, bound: bound, targets: targets, into: &names) }
        case .not(let o): collect(o, bound: bound, targets: targets, into: &names)
        case .comparison(_, let l, _, _, let r):
            collect(l, bound: bound, targets: targets, into: &names)
            collect(r, bound: bound, targets: targets, into: &names)
        }
    }

    static func collect(_ e: ExpressionSyntax, bound: Set<String>, targets: Bool, into names: inout Set<String>) {
        StackGuard.ensure { collectBody(e, bound: bound, targets: targets, into: &names) }
    }

    private static func collectBody(
        _ e: ExpressionSyntax, bound: Set<String>, targets: Bool, into names: inout Set<String>
    ) {
        switch e.kind {
        case .constant, .evaluatedObject: break
        case .variable(let n): if !targets, !bound.contains(n) { names.insert(n) }
        case .keyPath(let b, _): if let b { collect(b, bound: bound, targets: targets, into: &names) }
        case .dynamicKey(let b, let k):
            collect(b, bound: bound, targets: targets, into: &names)
            collect(k, bound: bound, targets: targets, into: &names)
        case .aggregate(let xs), .function(_, let xs):
            for x in xs { collect(x, bound: bound, targets: targets, into: &names) }
        case .index(let b, let i):
            collect(b, bound: bound, targets: targets, into: &names)
            if case .expression(let x) = i { collect(x, bound: bound, targets: targets, into: &names) }
        case .binary(_, let l, let r), .cast(let l, let r):
            collect(l, bound: bound, targets: targets, into: &names)
            collect(r, bound: bound, targets: targets, into: &names)
        case .unary(_, let x): collect(x, bound: bound, targets: targets, into: &names)
        case .customFunction(let t, _, let xs):
            collect(t, bound: bound, targets: targets, into: &names)
            for x in xs { collect(x, bound: bound, targets: targets, into: &names) }
        case .subquery(let c, let v, let p):
            collect(c, bound: bound, targets: targets, into: &names)
            collect(p, bound: bound.union([v]), targets: targets, into: &names)
        case .ternary(let c, let a, let b):
            collect(c, bound: bound, targets: targets, into: &names)
            collect(a, bound: bound, targets: targets, into: &names)
            collect(b, bound: bound, targets: targets, into: &names)
        case .assignment(let v, let x):
            if !bound.contains(v) { names.insert(v) }
            collect(x, bound: bound, targets: targets, into: &names)
        }
    }
}
