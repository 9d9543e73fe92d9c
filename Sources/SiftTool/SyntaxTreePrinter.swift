// Renders a syntax tree as an indented outline for `sift parse --tree`.

import SiftSyntax

enum SyntaxTreePrinter {
    static func render(_ p: PredicateSyntax) -> String {
        var lines: [String] = []
        predicate(p, 0, &lines)
        return lines.joined(separator: "\n")
    }

    private static func pad(_ depth: Int) -> String { String(repeating: "  ", count: depth) }

    // Both walks check the stack at their recursion point (see `StackGuard`).
    private static func predicate(_ p: PredicateSyntax, _ d: Int, _ out: inout [String]) {
        StackGuard.ensure { predicateBody(p, d, &out) }
    }

    private static func predicateBody(_ p: PredicateSyntax, _ d: Int, _ out: inout [String]) {
        let r = " @\(p.range)"
        switch p.kind {
        case .constant(let v): out.append(pad(d) + (v ? "TRUEPREDICATE" : "FALSEPREDICATE") + r)
        case .and(let ops):
            out.append(pad(d) + "AND" + r)
            for o in ops { predicate(o, d + 1, &out) }
        case .or(let ops):
            out.append(pad(d) + "OR" + r)
            for o in ops { predicate(o, d + 1, &out) }
        case .not(let o):
            out.append(pad(d) + "NOT" + r)
            predicate(o, d + 1, &out)
        case .comparison(let q, let l, let op, let options, let rhs):
            var head = "comparison " + op.symbol
            if !options.isEmpty { head += "[\(options.letters)]" }
            if let q { head = q.rawValue + " " + head }
            out.append(pad(d) + head + r)
            expression(l, d + 1, &out)
            expression(rhs, d + 1, &out)
        }
    }

    private static func expression(_ e: ExpressionSyntax, _ d: Int, _ out: inout [String]) {
        StackGuard.ensure { expressionBody(e, d, &out) }
    }

    private static func expressionBody(_ e: ExpressionSyntax, _ d: Int, _ out: inout [String]) {
        let r = " @\(e.range)"
        switch e.kind {
        case .constant(let v): out.append(pad(d) + "constant " + ExpressionSyntax(.constant(value: v)).description + r)
        case .evaluatedObject: out.append(pad(d) + "SELF" + r)
        case .keyPath(let base, let components):
            // Spelled as in a predicate, so that "a.b" (one key) and a.b (two) stay apart.
            out.append(pad(d) + "keyPath " + components.map(KeyPathComponent.spelling).joined(separator: ".") + r)
            if let base { expression(base, d + 1, &out) }
        case .dynamicKey(let base, let key):
            out.append(pad(d) + "dynamicKey" + r)
            expression(base, d + 1, &out)
            expression(key, d + 1, &out)
        case .variable(let n): out.append(pad(d) + "variable $" + n + r)
        case .aggregate(let xs):
            out.append(pad(d) + "aggregate" + r)
            for x in xs { expression(x, d + 1, &out) }
        case .index(let base, let index):
            switch index {
            case .first: out.append(pad(d) + "index FIRST" + r)
            case .last: out.append(pad(d) + "index LAST" + r)
            case .size: out.append(pad(d) + "index SIZE" + r)
            case .expression: out.append(pad(d) + "index" + r)
            }
            expression(base, d + 1, &out)
            if case .expression(let x) = index { expression(x, d + 1, &out) }
        case .binary(let op, let l, let rhs):
            out.append(pad(d) + "binary " + op.rawValue + r)
            expression(l, d + 1, &out)
            expression(rhs, d + 1, &out)
        case .unary(let op, let x):
            out.append(pad(d) + "unary " + op.rawValue + r)
            expression(x, d + 1, &out)
        case .function(let name, let xs):
            out.append(pad(d) + "function " + name + r)
            for x in xs { expression(x, d + 1, &out) }
        case .customFunction(let t, let sel, let xs):
            out.append(pad(d) + "FUNCTION " + sel + r)
            expression(t, d + 1, &out)
            for x in xs { expression(x, d + 1, &out) }
        case .subquery(let c, let v, let p):
            out.append(pad(d) + "SUBQUERY $" + v + r)
            expression(c, d + 1, &out)
            predicate(p, d + 1, &out)
        case .ternary(let c, let a, let b):
            out.append(pad(d) + "TERNARY" + r)
            predicate(c, d + 1, &out)
            expression(a, d + 1, &out)
            expression(b, d + 1, &out)
        case .cast(let v, let t):
            out.append(pad(d) + "CAST" + r)
            expression(v, d + 1, &out)
            expression(t, d + 1, &out)
        case .assignment(let v, let x):
            out.append(pad(d) + "assignment $" + v + r)
            expression(x, d + 1, &out)
        }
    }
}
