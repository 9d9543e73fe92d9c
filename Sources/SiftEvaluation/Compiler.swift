// Compiles a syntax tree once into a tree of closures, so evaluating a predicate against many
// objects does no tree walking, no key-path splitting and no pattern compilation per object.
// Constants are converted once; comparisons against constants get specialised closures (numbers
// compared without boxing, strings pre-folded for [c]/[d], LIKE and MATCHES patterns compiled once,
// constant IN lists hashed). The specialised paths must agree with `PrimitiveComparison`, which the
// general path uses; tests compare the two.

import Foundation
import SiftSyntax
import SiftText

/// The mutable state of one evaluation: the variable bindings (SUBQUERY and `:=` change them).
@usableFromInline
struct Scope {
    @usableFromInline
    var variables: [String: Value]

    @usableFromInline
    init(variables: [String: Value]) { self.variables = variables }
}

/// A compiled expression over a root object of type `Root` (`SELF`). The root is passed `inout`
/// although nothing writes to it: that is the one convention that passes its address without a
/// copy, and a copy of a struct retains every reference it holds (most of the cost of a leaf).
/// (`borrowing` was measured too: Swift still copies a value read through a pointer before lending
/// it to an opaque closure, and adds reabstraction thunks for loadable roots.) Compiled code must
/// never write to the root: callers lend it from a thread-private slot (`lend(_:into:)`), never
/// from the caller's own storage, which other threads may be reading.
@usableFromInline
typealias Expr<Root> = @Sendable (inout Root, inout Scope) throws(EvaluationError) -> Value
/// A compiled predicate over a root object of type `Root`.
@usableFromInline
typealias Test<Root> = @Sendable (inout Root, inout Scope) throws(EvaluationError) -> Bool
/// A lenient-mode predicate: nil is SQL's UNKNOWN.
typealias LenientTest<Root> = @Sendable (inout Root, inout Scope) throws(EvaluationError) -> Bool?

typealias ExpressionFn = Expr<Value>
typealias PredicateFn = Test<Value>

/// How compiled code reaches the root object: as a ``Value`` (`SELF`), and key by key. A root of a
/// `KeyValueCoding` type is read through its typed readers and only boxed into a `Value` where an
/// expression needs `SELF` itself.
struct RootAccess<Root>: Sendable {
    let box: @Sendable (Root) -> Value
    /// The reader for a key, resolved at compile time; nil reads through `box` and `KeyPaths.step`.
    let reader: @Sendable (String) -> KeyReader<Root>?
    /// The root's type, for error messages.
    let typeName: String
}

extension RootAccess where Root == Value {
    static var value: RootAccess<Value> { RootAccess(box: { $0 }, reader: { _ in nil }, typeName: "Value") }
}

extension RootAccess where Root: KeyValueReading {
    static var object: RootAccess<Root> {
        RootAccess(
            box: { .object($0) },
            reader: { key in typedReader(key) ?? .value { try $0.value(forKey: key) } },
            typeName: String(describing: Root.self))
    }

    /// `Root`'s own reader for `key` when it is ``KeyValueCoding`` (asked once per key, when a
    /// predicate is compiled).
    private static func typedReader(_ key: String) -> KeyReader<Root>? {
        guard let coding = Root.self as? any KeyValueCoding.Type else { return nil }
        return reader(of: coding, key) as? KeyReader<Root>
    }

    private static func reader<C: KeyValueCoding>(of type: C.Type, _ key: String) -> Any? {
        C.reader(forKey: key).map { $0 as Any }
    }
}

/// Options fixed when a predicate is compiled.
public struct EvaluationOptions: Sendable {
    /// When true, a comparison that would raise a data error (values that cannot be ordered, a
    /// string operator on a non-string, ANY over a non-collection, arithmetic on nil…) is
    /// *unknown* instead, for filtering messy data: NOT keeps it unknown, AND and OR follow SQL's
    /// three-valued logic, and an unknown result does not match. Errors in the predicate itself
    /// (an unbound variable, an invalid LIKE or regular-expression pattern, an unknown FUNCTION)
    /// still throw.
    public var lenient: Bool
    /// Functions callable through `FUNCTION(target, "selector", …)`.
    public var functions: FunctionRegistry
    /// The type table for UTI-CONFORMS-TO.
    public var utis: UTITable

    /// Options for evaluation; the defaults are strict, with no registered functions and the standard type table.
    ///
    /// ```swift
    /// let options = EvaluationOptions(lenient: true)
    /// let p = try SiftPredicate("age > 3", options: options)
    /// ```
    public init(lenient: Bool = false, functions: FunctionRegistry = FunctionRegistry(), utis: UTITable = .standard) {
        self.lenient = lenient
        self.functions = functions
        self.utis = utis
    }
}

/// The compiled code below a stack check. Releasing compiled code recurses through every closure
/// it captured, as deeply as the tree, so the release too continues on a large stack when the
/// thread runs low (see `StackGuard`).
final class GuardedClosure<F>: @unchecked Sendable {
    private(set) var closure: F?
    init(_ closure: F) { self.closure = closure }
    deinit {
        guard !StackGuard.hasRoom(below: StackGuard.lowWater) else { return }
        var moved = closure
        closure = nil
        StackGuard.onLargeStack { moved = nil }
        _ = moved
    }
}

struct Compiler<Root> {
    let options: EvaluationOptions
    let source: String?
    let access: RootAccess<Root>
    /// How deeply the compiler has recursed, to place the evaluation-time stack checks.
    let nesting = Nesting()

    /// A counter shared by the calls of one compilation (which runs on one thread at a time).
    final class Nesting: @unchecked Sendable {
        var depth = 0
    }

    /// Compiled code nests one call per level of the tree, like the compiler itself. Every
    /// `guardInterval` levels of compilation, the compiled closure checks the stack before
    /// calling further down (see `StackGuard`), so deep predicates evaluate on small stacks while
    /// shallow ones never check.
    static var guardInterval: Int { 16 }

    /// Counts one level of compilation around `body`, itself run where the stack has room.
    @inline(__always)
    private func nested<T>(_ body: () -> T) -> (T, checks: Bool) {
        nesting.depth += 1
        defer { nesting.depth -= 1 }
        return (StackGuard.ensure(body), nesting.depth % Self.guardInterval == 0)
    }

    /// The compiler for code rooted at a value inside the object (collection elements).
    var values: Compiler<Value> { Compiler<Value>(options: options, source: source, access: .value) }

    func fail(_ kind: EvaluationErrorKind, _ range: SourceRange) -> EvaluationError {
        EvaluationError(kind, range: range, source: source)
    }

    // MARK: Predicates

    func predicate(_ p: PredicateSyntax) -> Test<Root> {
        guard options.lenient else { return strictPredicate(p) }
        let t = lenientPredicate(p)
        return { root, scope throws(EvaluationError) in try t(&root, &scope) == true }
    }

    private func strictPredicate(_ p: PredicateSyntax) -> Test<Root> {
        let (test, checks) = nested { strictPredicateBody(p) }
        guard checks else { return test }
        let box = GuardedClosure(test)
        return { root, scope throws(EvaluationError) in
            try StackGuard.ensure { () throws(EvaluationError) in try box.closure!(&root, &scope) }
        }
    }

    private func strictPredicateBody(_ p: PredicateSyntax) -> Test<Root> {
        switch p.kind {
        case .constant(let b):
            return { _, _ in b }
        case .and(let operands):
            return chain(operands[...], stopOn: false)
        case .or(let operands):
            return chain(operands[...], stopOn: true)
        case .not(let operand):
            let inner = strictPredicate(operand)
            return { root, scope throws(EvaluationError) in !(try inner(&root, &scope)) }
        case .comparison(let quantifier, let lhs, let op, let opts, let rhs):
            return comparison(quantifier, lhs, op, TextOptions(opts), rhs, p.range).test
        }
    }

    /// AND (`stopOn` false) or OR (`stopOn` true) of `operands`, left to right, stopping at the
    /// first that answers `stopOn`. The compiled operands are captured one by one, up to four per
    /// closure, never stored in an array: in code generic over the root, closures kept in an array
    /// are converted to and from the array's representation by a thunk on every call.
    private func chain(_ operands: ArraySlice<PredicateSyntax>, stopOn: Bool) -> Test<Root> {
        let i = operands.startIndex
        switch operands.count {
        case 0:
            return { _, _ in !stopOn }
        case 1:
            return strictPredicate(operands[i])
        case 2:
            let a = strictPredicate(operands[i])
            let b = strictPredicate(operands[i + 1])
            return { root, scope throws(EvaluationError) in
                if try a(&root, &scope) == stopOn { return stopOn }
                return try b(&root, &scope)
            }
        case 3:
            let a = strictPredicate(operands[i])
            let b = strictPredicate(operands[i + 1])
            let c = strictPredicate(operands[i + 2])
            return { root, scope throws(EvaluationError) in
                if try a(&root, &scope) == stopOn { return stopOn }
                if try b(&root, &scope) == stopOn { return stopOn }
                return try c(&root, &scope)
            }
        default:
            let a = strictPredicate(operands[i])
            let b = strictPredicate(operands[i + 1])
            let c = strictPredicate(operands[i + 2])
            let d = chain(operands.dropFirst(3), stopOn: stopOn)
            return { root, scope throws(EvaluationError) in
                if try a(&root, &scope) == stopOn { return stopOn }
                if try b(&root, &scope) == stopOn { return stopOn }
                if try c(&root, &scope) == stopOn { return stopOn }
                return try d(&root, &scope)
            }
        }
    }

    /// Lenient mode uses three-valued logic, as SQL does with NULL: a comparison that raises a
    /// data error is unknown (nil), NOT of unknown is unknown, AND is false if any part is false,
    /// OR is true if any part is true, and only a definite true matches. So `NOT name < 5` does
    /// not match a record whose name is a string, while `name < 5 OR age > 3` still can.
    private func lenientPredicate(_ p: PredicateSyntax) -> LenientTest<Root> {
        let (test, checks) = nested { lenientPredicateBody(p) }
        guard checks else { return test }
        let box = GuardedClosure(test)
        return { root, scope throws(EvaluationError) in
            try StackGuard.ensure { () throws(EvaluationError) in try box.closure!(&root, &scope) }
        }
    }

    private func lenientPredicateBody(_ p: PredicateSyntax) -> LenientTest<Root> {
        switch p.kind {
        case .constant(let b):
            return { _, _ in b }
        case .and(let operands):
            let parts = operands.map(lenientPredicate)
            return { root, scope throws(EvaluationError) in
                var unknown = false
                for part in parts {
                    switch try part(&root, &scope) {
                    case false?: return false
                    case nil: unknown = true
                    case true?: break
                    }
                }
                return unknown ? nil : true
            }
        case .or(let operands):
            let parts = operands.map(lenientPredicate)
            return { root, scope throws(EvaluationError) in
                var unknown = false
                for part in parts {
                    switch try part(&root, &scope) {
                    case true?: return true
                    case nil: unknown = true
                    case false?: break
                    }
                }
                return unknown ? nil : false
            }
        case .not(let operand):
            let inner = lenientPredicate(operand)
            return { root, scope throws(EvaluationError) in try inner(&root, &scope).map { !$0 } }
        case .comparison(let quantifier, let lhs, let op, let opts, let rhs):
            let compiled = comparison(quantifier, lhs, op, TextOptions(opts), rhs, p.range).test
            return { root, scope throws(EvaluationError) in
                do throws(EvaluationError) { return try compiled(&root, &scope) } catch  where error.kind.isDataError {
                    return nil
                }
            }
        }
    }

    /// The whole predicate as a program: its top-level AND/OR operands become steps, and
    /// comparisons of a root key against a constant become typed checks where the root type's
    /// reader allows.
    func program(_ p: PredicateSyntax) -> Program<Root> {
        guard !options.lenient else { return .single(.closure(predicate(p))) }
        switch p.kind {
        case .and(let operands): return .all(operands.map(step))
        case .or(let operands): return .any(operands.map(step))
        default: return .single(step(p))
        }
    }

    private func step(_ p: PredicateSyntax) -> Step<Root> {
        if case .comparison(let quantifier, let lhs, let op, let opts, let rhs) = p.kind {
            return comparison(quantifier, lhs, op, TextOptions(opts), rhs, p.range)
        }
        return .closure(strictPredicate(p))
    }

    /// A comparison: a typed check when a root key read by a typed reader meets a constant,
    /// else a closure over the two compiled sides.
    private func comparison(
        _ quantifier: Quantifier?, _ lhs: ExpressionSyntax, _ op: ComparisonOperator,
        _ opts: TextOptions, _ rhs: ExpressionSyntax, _ range: SourceRange
    ) -> Step<Root> {
        let primitive = PrimitiveComparison(op: op, options: opts, utis: options.utis)
        // A constant right-hand side gets a specialised test, decided once.
        let test: ValueTest
        let r: Expr<Root>
        if case .constant(let literal) = rhs.kind {
            let constant = Value(literal)
            r = { _, _ in constant }
            test = ConstantComparison.make(primitive, constant)
        } else {
            r = expression(rhs)
            // A computed LIKE or MATCHES pattern is compiled per evaluation (MATCHES through the
            // pattern cache).
            test = { a, b throws(EvaluationErrorKind) in try primitive.evaluate(a, b) }
        }
        let source = self.source
        if case .constant(let literal) = rhs.kind, case .keyPath(nil, let components) = lhs.kind, components.count == 1,
            !components[0].hasPrefix("@"), let reader = access.reader(components[0]),
            let step = TypedLeaf.make(
                reader, quantifier: quantifier, primitive, Value(literal), test,
                range: range, lhsRange: lhs.range, source: source)
        {
            return step
        }
        let l = expression(lhs)
        guard let quantifier else {
            return .closure { root, scope throws(EvaluationError) in
                let a = try l(&root, &scope)
                let b = try r(&root, &scope)
                do throws(EvaluationErrorKind) { return try test(a, b) } catch {
                    throw EvaluationError(error, range: range, source: source)
                }
            }
        }
        let all = quantifier == .all
        let lhsRange = lhs.range
        return .closure { root, scope throws(EvaluationError) in
            let a = try l(&root, &scope)
            let b = try r(&root, &scope)
            let elements: [Value]
            switch a {
            case .null: return all
            case .array(let e), .set(let e): elements = e
            default:
                throw EvaluationError(
                    .notACollection(operation: all ? "ALL" : "ANY", value: a.description), range: lhsRange,
                    source: source)
            }
            do throws(EvaluationErrorKind) {
                return try quantify(elements, all: all) { e throws(EvaluationErrorKind) in try test(e, b) }
            } catch {
                throw EvaluationError(error, range: range, source: source)
            }
        }
    }

    // MARK: Expressions

    func expression(_ e: ExpressionSyntax) -> Expr<Root> {
        let (compiled, checks) = nested { expressionBody(e) }
        guard checks else { return compiled }
        let box = GuardedClosure(compiled)
        return { root, scope throws(EvaluationError) in
            try StackGuard.ensure { () throws(EvaluationError) in try box.closure!(&root, &scope) }
        }
    }

    private func expressionBody(_ e: ExpressionSyntax) -> Expr<Root> {
        let range = e.range
        let source = self.source
        switch e.kind {
        case .constant(let literal):
            let v = Value(literal)
            return { _, _ in v }
        case .evaluatedObject:
            let box = access.box
            return { root, _ in box(root) }
        case .keyPath(let base, let components):
            let b = base.map(expression)
            return keyPath(components[...], range, from: b)
        case .dynamicKey(let base, let key):
            return dynamicKey(expression(base), expression(key), range)
        case .variable(let name):
            return { _, scope throws(EvaluationError) in
                guard let v = scope.variables[name] else {
                    throw EvaluationError(.unboundVariable(name), range: range, source: source)
                }
                return v
            }
        case .aggregate(let elements):
            return aggregate(elements.map(expression))
        case .index(let base, let index):
            return self.index(expression(base), index, range)
        case .binary(let op, let lhs, let rhs):
            let l = expression(lhs)
            let r = expression(rhs)
            let call: Expr<Root> = { root, scope throws(EvaluationError) in
                let a = try l(&root, &scope)
                let b = try r(&root, &scope)
                do throws(EvaluationErrorKind) { return try Arithmetic.binary(op, a, b) } catch {
                    throw EvaluationError(error, range: range, source: source)
                }
            }
            return fold(e, call) ?? call
        case .unary(let op, let operand):
            let inner = expression(operand)
            let call: Expr<Root> = { root, scope throws(EvaluationError) in
                let v = try inner(&root, &scope)
                do throws(EvaluationErrorKind) { return try Arithmetic.unary(op, v) } catch {
                    throw EvaluationError(error, range: range, source: source)
                }
            }
            return fold(e, call) ?? call
        case .function(let name, let arguments):
            return function(e, name, arguments.map(expression))
        case .customFunction(let target, let selector, let arguments):
            return customFunction(expression(target), selector, arguments.map(expression), range)
        case .subquery(let collection, let variable, let body):
            return subquery(expression(collection), variable, predicate(body), collection.range)
        case .ternary(let condition, let then, let otherwise):
            let c = predicate(condition)
            let a = expression(then)
            let b = expression(otherwise)
            return { root, scope throws(EvaluationError) in try c(&root, &scope) ? a(&root, &scope) : b(&root, &scope) }
        case .cast(let value, let type):
            return cast(e, expression(value), expression(type))
        case .assignment(let variable, let value):
            let v = expression(value)
            return { root, scope throws(EvaluationError) in
                let x = try v(&root, &scope)
                scope.variables[variable] = x
                return x
            }
        }
    }

    /// `base[key]` with a computed key: a string key is one key-path step, nil gives nil.
    private func dynamicKey(_ b: @escaping Expr<Root>, _ k: @escaping Expr<Root>, _ range: SourceRange) -> Expr<Root> {
        let source = self.source
        return { root, scope throws(EvaluationError) in
            let target = try b(&root, &scope)
            let name = try k(&root, &scope)
            guard case .string(let s) = name else {
                if name.isNull { return .null }
                throw EvaluationError(
                    .notAString(operation: "key", value: name.description), range: range, source: source)
            }
            return try KeyPaths.step(target, s, range, source)
        }
    }

    /// `{a, b, …}` with computed elements: an array of their values.
    private func aggregate(_ parts: [Expr<Root>]) -> Expr<Root> {
        return { root, scope throws(EvaluationError) in
            var out: [Value] = []
            out.reserveCapacity(parts.count)
            for p in parts { out.append(try p(&root, &scope)) }
            return .array(out)
        }
    }

    /// A built-in function call, folded at compile time unless it reads the clock or a random source.
    private func function(_ e: ExpressionSyntax, _ name: String, _ args: [Expr<Root>]) -> Expr<Root> {
        let range = e.range
        let source = self.source
        let call: Expr<Root> = { root, scope throws(EvaluationError) in
            var values: [Value] = []
            values.reserveCapacity(args.count)
            for a in args { values.append(try a(&root, &scope)) }
            do throws(EvaluationErrorKind) { return try BuiltinFunctions.call(name, values) } catch {
                throw EvaluationError(error, range: range, source: source)
            }
        }
        if name == "now" || name == "random" || name == "randomn:" { return call }
        return fold(e, call) ?? call
    }

    /// `FUNCTION(target, 'selector', …)`: the application's registered function, its errors
    /// reported as invalid arguments of that selector.
    private func customFunction(
        _ t: @escaping Expr<Root>, _ selector: String, _ args: [Expr<Root>], _ range: SourceRange
    ) -> Expr<Root> {
        let source = self.source
        let function = options.functions.function(for: selector)
        return { root, scope throws(EvaluationError) in
            let tv = try t(&root, &scope)
            var values: [Value] = []
            for a in args { values.append(try a(&root, &scope)) }
            guard let function else { throw EvaluationError(.unknownFunction(selector), range: range, source: source) }
            do { return try function(tv, values) } catch let error as FunctionError {
                throw EvaluationError(
                    .invalidArgument(function: selector, message: error.message), range: range, source: source)
            } catch let error as EvaluationError {
                throw error
            } catch {
                throw EvaluationError(
                    .invalidArgument(function: selector, message: "\(error)"), range: range, source: source)
            }
        }
    }

    /// `SUBQUERY(collection, $variable, test)`: the elements the test holds for, in order (nil
    /// for a nil collection), with `$variable` restored afterwards.
    private func subquery(
        _ c: @escaping Expr<Root>, _ variable: String, _ test: @escaping Test<Root>,
        _ collectionRange: SourceRange
    ) -> Expr<Root> {
        let source = self.source
        return { root, scope throws(EvaluationError) in
            let cv = try c(&root, &scope)
            let elements: [Value]
            switch cv {
            case .null: return .null
            case .array(let a), .set(let a): elements = a
            default:
                throw EvaluationError(
                    .notACollection(operation: "SUBQUERY", value: cv.description), range: collectionRange,
                    source: source)
            }
            let saved = scope.variables[variable]
            defer { scope.variables[variable] = saved }
            var out: [Value] = []
            for element in elements {
                scope.variables[variable] = element
                if try test(&root, &scope) { out.append(element) }
            }
            return .array(out)
        }
    }

    /// `CAST(value, type)`, folded at compile time when it reads nothing.
    private func cast(_ e: ExpressionSyntax, _ v: @escaping Expr<Root>, _ t: @escaping Expr<Root>) -> Expr<Root> {
        let range = e.range
        let source = self.source
        let call: Expr<Root> = { root, scope throws(EvaluationError) in
            let x = try v(&root, &scope)
            let name = try t(&root, &scope)
            do throws(EvaluationErrorKind) { return try Cast.cast(x, to: name) } catch {
                throw EvaluationError(error, range: range, source: source)
            }
        }
        return fold(e, call) ?? call
    }

    /// Evaluates a subtree that reads neither the object nor variables once, at compile time,
    /// when that succeeds; a subtree that would raise keeps its closure so the error surfaces at
    /// evaluation, where Apple raises it.
    private func fold(_ e: ExpressionSyntax, _ fn: @escaping Expr<Root>) -> Expr<Root>? {
        guard e.isConstantFoldable else { return nil }
        // The subtree reads no object, so it is computed once with nil as SELF: by `fn` when the
        // root is a Value, else by the Value-rooted compiler (which folds it the same way).
        var scope = Scope(variables: [:])
        let v: Value?
        if var null = Value.null as? Root {
            v = try? fn(&null, &scope)
        } else {
            var null = Value.null
            v = try? values.expression(e)(&null, &scope)
        }
        guard let v else { return nil }
        return { _, _ in v }
    }

    // MARK: Key paths

    func keyPath(_ components: ArraySlice<String>, _ range: SourceRange, from base: Expr<Root>?) -> Expr<Root> {
        let source = self.source
        let box = access.box
        let start: Expr<Root> = base ?? { root, _ in box(root) }
        // Plain keys up to the first collection operator are read one after another.
        let plainCount = components.prefix { !KeyPathComponent.isCollectionOperator($0) }.count
        let plain = Array(components.prefix(plainCount))
        let readPlain: Expr<Root>
        if base == nil, let first = plain.first, let reader = access.reader(first) {
            // The first key is read by the root type's own reader; the rest from the values.
            let read = rootRead(reader, key: first, range)
            let rest = plain.dropFirst()
            if rest.isEmpty {
                readPlain = read
            } else {
                readPlain = { root, scope throws(EvaluationError) in
                    var v = try read(&root, &scope)
                    for key in rest { v = try KeyPaths.step(v, key, range, source) }
                    return v
                }
            }
        } else {
            switch plain.count {
            case 0:
                readPlain = start
            case 1 where base == nil:
                let key = plain[0]
                readPlain = { root, _ throws(EvaluationError) in try KeyPaths.step(box(root), key, range, source) }
            default:
                readPlain = { root, scope throws(EvaluationError) in
                    var v = try start(&root, &scope)
                    for key in plain { v = try KeyPaths.step(v, key, range, source) }
                    return v
                }
            }
        }
        let rest = components.dropFirst(plainCount)
        guard let op = rest.first else { return readPlain }
        // A collection operator applies the rest of the path to each element, then combines.
        let tail = rest.dropFirst()
        let element: ExpressionFn? =
            op == "@count" || tail.isEmpty ? nil : values.keyPath(tail, range, from: { v, _ in v })
        let afterCount: ExpressionFn? =
            op == "@count" && !tail.isEmpty ? values.keyPath(tail, range, from: { v, _ in v }) : nil
        return { root, scope throws(EvaluationError) in
            let collection = try readPlain(&root, &scope)
            var result = try KeyPaths.collectionOperator(op, collection, element, &scope, range, source)
            if let afterCount { return try afterCount(&result, &scope) }
            return result
        }
    }

    /// Reads a key of the root through its reader, as a `Value`; a thrown error names the key.
    func rootRead(_ reader: KeyReader<Root>, key: String, _ range: SourceRange) -> Expr<Root> {
        let source = self.source
        let typeName = access.typeName
        let read = reader.valueReader
        return { root, _ throws(EvaluationError) in
            do { return try read(root) } catch {
                throw KeyPaths.readError(error, key: key, typeName: typeName, range, source)
            }
        }
    }

    // MARK: Index

    private func index(_ base: @escaping Expr<Root>, _ index: IndexSyntax, _ range: SourceRange) -> Expr<Root> {
        let source = self.source
        let subscriptFn: Expr<Root>?
        if case .expression(let e) = index { subscriptFn = expression(e) } else { subscriptFn = nil }
        return { root, scope throws(EvaluationError) in
            let b = try base(&root, &scope)
            let i = try subscriptFn?(&root, &scope)
            do throws(EvaluationErrorKind) { return try KeyPaths.index(b, index, i) } catch {
                throw EvaluationError(error, range: range, source: source)
            }
        }
    }
}

/// ANY (`all` false) or ALL of `test` over `elements`: ANY is true at the first element that
/// passes, ALL false at the first that fails; over no elements ANY is false and ALL true.
@inlinable @inline(__always)
func quantify<S: Sequence, E: Error>(_ elements: S, all: Bool, _ test: (S.Element) throws(E) -> Bool) throws(E) -> Bool
{
    for e in elements where try test(e) != all { return !all }
    return all
}

extension EvaluationErrorKind {
    /// Errors caused by the data rather than by the predicate; lenient mode turns them into false.
    var isDataError: Bool {
        switch self {
        case .incomparableValues, .notAString, .notACollection, .invalidBetweenBounds, .notANumber,
            .indexOutOfRange, .unknownKey, .emptyCollection, .invalidCast, .regexLimit:
            true
        case .unboundVariable, .invalidLikePattern, .invalidRegex, .unknownFunction, .invalidArgument:
            false
        }
    }
}

extension ExpressionSyntax {
    /// Whether the expression reads nothing but constants (no key path, SELF, variable,
    /// subquery, assignment or application function), so it can be computed once.
    var isConstantFoldable: Bool {
        // Recursive over the whole subtree: it checks the stack like the compiler (`StackGuard`).
        StackGuard.ensure { isConstantFoldableHere }
    }

    private var isConstantFoldableHere: Bool {
        switch kind {
        case .constant: true
        case .evaluatedObject, .keyPath, .dynamicKey, .variable, .customFunction, .subquery, .assignment, .ternary:
            false
        case .aggregate(let elements): elements.allSatisfy(\.isConstantFoldable)
        case .index(let base, let index):
            if case .expression(let i) = index {
                base.isConstantFoldable && i.isConstantFoldable
            } else {
                base.isConstantFoldable
            }
        case .binary(_, let l, let r): l.isConstantFoldable && r.isConstantFoldable
        case .unary(_, let o): o.isConstantFoldable
        case .function(let name, let args):
            name != "now" && name != "random" && name != "randomn:" && args.allSatisfy(\.isConstantFoldable)
        case .cast(let v, let t): v.isConstantFoldable && t.isConstantFoldable
        }
    }
}
