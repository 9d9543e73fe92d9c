// Which parts of each record a predicate can read, so that `sift filter` builds only those and
// skips the rest of the record's bytes. A key path read from the record (`address.city`) needs
// that path and everything under its last key; `SELF`, or a key path that starts with a collection
// operator, needs the whole record. Anything the analysis cannot follow is read whole, so a
// projection only ever leaves out members no expression of the predicate can reach.

import SiftSyntax

enum RecordProjection {
    /// The projection of the records `predicate` reads.
    ///
    /// ```swift
    /// RecordProjection.of(try PredicateSyntax.parse("age > 3 AND address.city == 'Oslo'"))
    /// // .members([age: .whole, address: .members([city: .whole])])
    /// ```
    static func of(_ predicate: PredicateSyntax) -> Projection {
        var result = Projection.members([])
        visit(predicate, &result)
        return result
    }

    private static func visit(_ p: PredicateSyntax, _ result: inout Projection) {
        switch p.kind {
        case .constant: break
        case .and(let operands), .or(let operands): for o in operands { visit(o, &result) }
        case .not(let operand): visit(operand, &result)
        case .comparison(_, let lhs, _, _, let rhs):
            visit(lhs, &result)
            visit(rhs, &result)
        }
    }

    private static func visit(_ e: ExpressionSyntax, _ result: inout Projection) {
        guard result != .whole else { return }
        switch e.kind {
        case .constant, .variable:
            break
        case .evaluatedObject:
            result = .whole
        case .keyPath(let base?, _):
            visit(base, &result)
        case .keyPath(nil, let components):
            // Keys up to the first collection operator; what follows reads inside the last value.
            let keys = components.prefix { !KeyPathComponent.isCollectionOperator($0) }
            guard !keys.isEmpty else {
                result = .whole
                return
            }
            var path = Projection.whole
            for key in keys.reversed() { path = .members([ProjectedKey(key, path)]) }
            result = result.merged(with: path)
        case .dynamicKey(let base, let key):
            visit(base, &result)
            visit(key, &result)
        case .aggregate(let elements):
            for x in elements { visit(x, &result) }
        case .index(let base, let index):
            visit(base, &result)
            if case .expression(let x) = index { visit(x, &result) }
        case .binary(_, let l, let r):
            visit(l, &result)
            visit(r, &result)
        case .unary(_, let x):
            visit(x, &result)
        case .function(_, let arguments):
            for x in arguments { visit(x, &result) }
        case .customFunction(let target, _, let arguments):
            visit(target, &result)
            for x in arguments { visit(x, &result) }
        case .subquery(let collection, _, let body):
            visit(collection, &result)
            visit(body, &result)
        case .ternary(let condition, let then, let otherwise):
            visit(condition, &result)
            visit(then, &result)
            visit(otherwise, &result)
        case .cast(let value, let type):
            visit(value, &result)
            visit(type, &result)
        case .assignment(_, let value):
            visit(value, &result)
        }
    }
}
