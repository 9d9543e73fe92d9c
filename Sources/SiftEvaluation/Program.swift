// The top level of a predicate compiled for a root type: a comparison, or an AND/OR of
// comparisons, each either a typed check made in the root type's own module (see `KeyReader`) or a
// compiled closure; deeper structure (NOT, nested groups, quantifiers over paths…) is compiled
// closures. A program runs two ways. `run` tests one object, for `evaluate`. `select` tests a run
// of objects step by step, narrowing a selection of their indices, for `count` and `filter`: a
// typed step then costs one call per run of objects instead of one per object, and its loop,
// compiled where the root type is declared, is as tight as a hand-written one. Both give the same
// answers; the selection form may raise a different error than the object-by-object order would,
// so on an error the caller re-runs the objects one by one to raise the first one.

import Foundation

/// One comparison, ready to test a root object.
@usableFromInline
enum Step<Root>: Sendable {
    case closure(Test<Root>)
    case integer(KeyReader<Root>.Checks<IntegerCondition>, IntegerCondition, ifNil: Bool)
    case double(KeyReader<Root>.Checks<DoubleCondition>, DoubleCondition, ifNil: Bool)
    case bool(KeyReader<Root>.Checks<BoolCondition>, BoolCondition, ifNil: Bool)
    case string(KeyReader<Root>.Checks<StringCondition>, StringCondition, ifNil: Bool)
    case strings(KeyReader<Root>.Checks<QuantifiedStringCondition>, QuantifiedStringCondition, ifNil: Bool)

    @inlinable @inline(__always)
    func run(_ root: inout Root, _ scope: inout Scope) throws(EvaluationError) -> Bool {
        switch self {
        case .closure(let test): return try test(&root, &scope)
        case .integer(let t, let c, let ifNil): return t.check(&root, c) ?? ifNil
        case .double(let t, let c, let ifNil): return t.check(&root, c) ?? ifNil
        case .bool(let t, let c, let ifNil): return t.check(&root, c) ?? ifNil
        case .string(let t, let c, let ifNil): return t.check(&root, c) ?? ifNil
        case .strings(let t, let c, let ifNil): return t.check(&root, c) ?? ifNil
        }
    }

    /// Keeps in `selection` the objects of `base` for which the step's answer is `keep`.
    @inlinable
    func refine(
        _ base: UnsafePointer<Root>, _ selection: inout Selection, keep: Bool,
        _ scope: inout Scope
    ) throws(EvaluationError) {
        switch self {
        case .closure(let test):
            try selection.refine(base, keep: keep) { root throws(EvaluationError) in try test(&root, &scope) }
        case .integer(let t, let c, let ifNil): t.refine(base, &selection, c, ifNil, keep)
        case .double(let t, let c, let ifNil): t.refine(base, &selection, c, ifNil, keep)
        case .bool(let t, let c, let ifNil): t.refine(base, &selection, c, ifNil, keep)
        case .string(let t, let c, let ifNil): t.refine(base, &selection, c, ifNil, keep)
        case .strings(let t, let c, let ifNil): t.refine(base, &selection, c, ifNil, keep)
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

    /// Narrows `selection`, which must hold every index of a run of objects at `base`, to the
    /// indices of those that match, in ascending order. An error leaves `selection` unspecified.
    @inlinable
    func select(_ base: UnsafePointer<Root>, _ selection: inout Selection, _ scope: inout Scope) throws(EvaluationError)
    {
        switch self {
        case .single(let step):
            try step.refine(base, &selection, keep: true, &scope)
        case .all(let steps):
            // Each step only sees the objects every earlier step passed, as AND short-circuits.
            for i in steps.indices where selection.count > 0 {
                try steps[i].refine(base, &selection, keep: true, &scope)
            }
        case .any(let steps):
            // Keep the objects no step has matched yet (OR short-circuits on the first true);
            // the matches are the others.
            let all = selection.count
            for i in steps.indices where selection.count > 0 {
                try steps[i].refine(base, &selection, keep: false, &scope)
            }
            selection.complement(upTo: all)
        }
    }
}

/// Indices (ascending) of the objects of a run still in play while a program is selected over it;
/// its storage is owned by whoever makes it (see `CompiledPredicate.forEachMatch`).
@usableFromInline
struct Selection {
    /// The selected indices, `count` of them, then room for the run's length more (for `complement`).
    @usableFromInline let indices: UnsafeMutablePointer<Int32>
    @usableFromInline var count: Int
    /// The selection is all of `0..<count` and `indices` is not written yet: the first step reads
    /// objects in order, without an index to load per object.
    @usableFromInline var isAll: Bool

    /// Selects all of `0..<count`; `indices` must have room for twice `count`.
    @inlinable
    init(all count: Int, in indices: UnsafeMutablePointer<Int32>) {
        self.indices = indices
        self.count = count
        self.isAll = true
    }

    /// Writes out the indices of an `isAll` selection.
    @usableFromInline
    mutating func materialize() {
        guard isAll else { return }
        for i in 0..<count { indices[i] = Int32(truncatingIfNeeded: i) }
        isAll = false
    }

    /// Keeps the selected objects whose `answer` is `keep`, in order. Each object is lent to
    /// `answer` from a slot of this thread's (`lend(_:into:)`). The index is written before it is
    /// known to stay, and the output position advanced by 0 or 1, so the loop has no branch of its own.
    @inlinable @inline(__always)
    mutating func refine<Root, E: Error>(
        _ base: UnsafePointer<Root>, keep: Bool,
        _ answer: (inout Root) throws(E) -> Bool
    ) throws(E) {
        try withLendingSlot(for: Root.self) { (slot) throws(E) in
            var kept = 0
            if isAll {
                for i in 0..<count {
                    indices[kept] = Int32(truncatingIfNeeded: i)
                    lend(base + i, into: slot)
                    kept &+= try answer(&slot.pointee) == keep ? 1 : 0
                }
                isAll = false
            } else {
                for k in 0..<count {
                    let i = indices[k]
                    indices[kept] = i
                    lend(base + Int(i), into: slot)
                    kept &+= try answer(&slot.pointee) == keep ? 1 : 0
                }
            }
            count = kept
        }
    }

    /// Replaces the selection by the indices of `0..<all` it does not hold.
    @usableFromInline
    mutating func complement(upTo all: Int) {
        materialize()
        let out = indices + all
        var n = 0
        var k = 0
        for i in 0..<all {
            if k < count, Int(indices[k]) == i {
                k += 1
                continue
            }
            out[n] = Int32(truncatingIfNeeded: i)
            n += 1
        }
        indices.update(from: out, count: n)
        count = n
    }
}

/// Lends the object at `source` to compiled code: copies its bits, without retaining anything it
/// holds, into `slot`, a thread-private location the code can take `inout`. That is the one way to
/// hand an opaque closure a value without copying it (retains, and for shared objects atomic
/// traffic between cores) and without a modifying access to the caller's storage, which Swift's
/// exclusivity rules forbid while other threads read the same objects. The slot only aliases the
/// object: it is never deinitialized, and compiled code never writes to its root.
@inlinable @inline(__always)
func lend<Root>(_ source: UnsafePointer<Root>, into slot: UnsafeMutablePointer<Root>) {
    UnsafeMutableRawPointer(slot).copyMemory(from: source, byteCount: MemoryLayout<Root>.size)
}

/// Runs `body` with a slot for `lend(_:into:)` on this thread's stack; the slot is never
/// initialized or deinitialized, only lent into.
@inlinable @inline(__always)
func withLendingSlot<Root, R, E: Error>(
    for type: Root.Type,
    _ body: (UnsafeMutablePointer<Root>) throws(E) -> R
) throws(E) -> R {
    try withUnsafeTemporaryAllocation(of: Root.self, capacity: 1) { (slot) throws(E) -> R in
        try body(slot.baseAddress.unsafelyUnwrapped)
    }
}
