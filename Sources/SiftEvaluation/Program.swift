// The top level of a predicate compiled for a root type: a comparison, or an AND/OR of
// comparisons, each either a typed check made in the root type's own module (one call per object,
// see `KeyReader`) or a compiled closure. `CompiledPredicate.evaluate` walks this in inlinable
// code, so the walk itself is specialised for the root type where it is called and adds no call of
// its own; deeper structure (NOT, nested groups, quantifiers over paths…) is compiled closures.

import Foundation

/// One comparison, ready to test a root object.
@usableFromInline
enum Step<Root>: Sendable {
    case closure(Test<Root>)
    case integer(KeyReader<Root>.Check<IntegerCondition>, IntegerCondition, ifNil: Bool)
    case double(KeyReader<Root>.Check<DoubleCondition>, DoubleCondition, ifNil: Bool)
    case bool(KeyReader<Root>.Check<BoolCondition>, BoolCondition, ifNil: Bool)
    case string(KeyReader<Root>.Check<StringCondition>, StringCondition, ifNil: Bool)
    case strings(@Sendable (inout Root, StringCondition, Bool) -> Bool?, StringCondition, all: Bool, ifNil: Bool)

    @inlinable @inline(__always)
    func run(_ root: inout Root, _ scope: inout Scope) throws(EvaluationError) -> Bool {
        switch self {
        case .closure(let test): return try test(&root, &scope)
        case .integer(let check, let c, let ifNil): return check(&root, c) ?? ifNil
        case .double(let check, let c, let ifNil): return check(&root, c) ?? ifNil
        case .bool(let check, let c, let ifNil): return check(&root, c) ?? ifNil
        case .string(let check, let c, let ifNil): return check(&root, c) ?? ifNil
        case .strings(let check, let c, let all, let ifNil): return check(&root, c, all) ?? ifNil
        }
    }

    /// The step as a closure, for use inside other compiled code.
    var test: Test<Root> {
        if case .closure(let test) = self { return test }
        return { root, scope throws(EvaluationError) in try self.run(&root, &scope) }
    }
}

/// A whole predicate compiled for a root type.
@usableFromInline
enum Program<Root>: Sendable {
    case single(Step<Root>)
    /// AND of the steps, left to right.
    case all([Step<Root>])
    /// OR of the steps, left to right.
    case any([Step<Root>])

    @inlinable @inline(__always)
    func run(_ root: inout Root, _ scope: inout Scope) throws(EvaluationError) -> Bool {
        switch self {
        case .single(let step):
            return try step.run(&root, &scope)
        case .all(let steps):
            // Indexing borrows each step; `for step in steps` would copy (and retain) it.
            for i in steps.indices where !(try steps[i].run(&root, &scope)) { return false }
            return true
        case .any(let steps):
            for i in steps.indices where try steps[i].run(&root, &scope) { return true }
            return false
        }
    }
}
