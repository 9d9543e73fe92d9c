// The evaluation API users call first: build a predicate once from a format string (or a parsed
// tree), then evaluate it against any number of objects, or filter and sort collections with it.
// Named `SiftPredicate` so it never clashes with Foundation's `Predicate` macro type.

import Foundation
import SiftSyntax

/// A compiled predicate, ready to evaluate against many objects.
///
/// ```swift
/// let p = try SiftPredicate("age > %@ AND name BEGINSWITH[cd] %@", 30, "jo")
/// try p.evaluate(with: ["name": "José", "age": 41])          // true
/// let adults = try people.filter(p)                           // [[String: Any]] in, same out
/// let q = try SiftPredicate("score >= $min")
/// try q.evaluate(with: ["score": 12], variables: ["min": 10])  // true
/// ```
///
/// Compiling parses the format, then turns the tree into closures once: key paths are split,
/// constants converted, string constants folded for `[c]`/`[d]`, LIKE and MATCHES patterns
/// compiled, constant IN lists hashed. A `SiftPredicate` is immutable and safe to share between
/// threads.
public struct SiftPredicate: Sendable, CustomStringConvertible {
    /// The parsed predicate.
    public let syntax: PredicateSyntax
    /// The options it was compiled with.
    public let options: EvaluationOptions
    /// The text the predicate was parsed from, for error positions.
    public let source: String?
    private let test: PredicateFn

    /// Parses `format`, substituting `arguments` for `%@`, `%K`, `%d`… left to right, and compiles it.
    public init(_ format: String, _ arguments: Any?..., options: EvaluationOptions = EvaluationOptions())
        throws(SyntaxError)
    {
        try self.init(format: format, arguments: arguments, options: options)
    }

    /// Parses `format` with an argument array and compiles it.
    public init(format: String, arguments: [Any?], options: EvaluationOptions = EvaluationOptions()) throws(SyntaxError)
    {
        let syntax = try PredicateSyntax.parse(format, arguments: arguments)
        self.init(syntax, source: format, options: options)
    }

    /// Compiles an already parsed predicate. `source`, when given, is the text the tree was parsed
    /// from, so evaluation errors can report `line:column`.
    public init(_ syntax: PredicateSyntax, source: String? = nil, options: EvaluationOptions = EvaluationOptions()) {
        self.syntax = syntax
        self.options = options
        self.source = source
        self.test = Compiler(options: options, source: source, access: .value).predicate(syntax)
    }

    /// The canonical form of the predicate.
    public var description: String { syntax.description }

    /// Evaluates the predicate with `object` as `SELF`; `variables` bind `$name`s.
    public func evaluate(with object: Any?, variables: [String: Any] = [:]) throws(EvaluationError) -> Bool {
        try evaluate(with: Value(any: object), variables: variables.mapValues { Value(any: $0) })
    }

    /// Evaluates the predicate against a type that answers keys itself (no conversion needed).
    public func evaluate(with object: some KeyValueReading, variables: [String: Value] = [:]) throws(EvaluationError)
        -> Bool
    {
        try evaluate(with: .object(object), variables: variables)
    }

    /// Evaluates the predicate against a ``Value``.
    public func evaluate(with value: Value, variables: [String: Value] = [:]) throws(EvaluationError) -> Bool {
        var scope = Scope(variables: variables)
        var value = value
        return try test(&value, &scope)
    }
}

extension SiftPredicate {
    /// This predicate compiled for objects of one type, to evaluate against many of them: the
    /// type's ``KeyValueCoding/reader(forKey:)`` readers are resolved once, here, and objects are
    /// never boxed. This is the fast way to test many values of a type; `filter` uses it.
    ///
    /// ```swift
    /// let adults = try SiftPredicate("age >= 18").compiled(for: Person.self)
    /// let count = people.count { (try? adults.evaluate(with: $0)) == true }
    /// ```
    public func compiled<Root: KeyValueReading>(for type: Root.Type = Root.self) -> CompiledPredicate<Root> {
        // `[String: Any]` (JSON, dynamic data) is compiled by code specialised for it here, where
        // its type is known; other types run the compiler's generic code with their own readers.
        if Root.self == [String: Any].self, let c = compiledForDictionaries() as? CompiledPredicate<Root> { return c }
        return CompiledPredicate(self, Compiler(options: options, source: source, access: .object).program(syntax))
    }

    private func compiledForDictionaries() -> CompiledPredicate<[String: Any]> {
        let access = RootAccess<[String: Any]>(
            box: { .object($0) },
            reader: { key in KeyReader(.any { d in d[key] }) },
            typeName: String(describing: [String: Any].self))
        return CompiledPredicate(self, Compiler(options: options, source: source, access: access).program(syntax))
    }
}

/// A ``SiftPredicate`` compiled for objects of type `Root`; see ``SiftPredicate/compiled(for:)``.
public struct CompiledPredicate<Root: KeyValueReading>: Sendable, CustomStringConvertible {
    /// The predicate this was compiled from.
    public let predicate: SiftPredicate
    @usableFromInline
    let program: Program<Root>

    init(_ predicate: SiftPredicate, _ program: Program<Root>) {
        self.predicate = predicate
        self.program = program
    }

    /// The canonical form of the predicate.
    public var description: String { predicate.description }

    /// Evaluates the predicate with `object` as `SELF`; `variables` bind `$name`s.
    ///
    /// ```swift
    /// let older = try SiftPredicate("age > $limit").compiled(for: Person.self)
    /// try older.evaluate(with: Person(name: "Ann", age: 41), variables: ["limit": .integer(30)])   // true
    /// ```
    @inlinable
    public func evaluate(with object: Root, variables: [String: Value] = [:]) throws(EvaluationError) -> Bool {
        var scope = Scope(variables: variables)
        // Lent from a slot of this thread's, not the caller's storage (see `lend(_:into:)`).
        return try withLendingSlot(for: Root.self) { (slot) throws(EvaluationError) -> Bool in
            withUnsafePointer(to: object) { lend($0, into: slot) }
            return try program.run(&slot.pointee, &scope)
        }
    }

    /// How many elements of `objects` match. Elements are read in place, never copied.
    ///
    /// ```swift
    /// let adults = try SiftPredicate("age >= 18").compiled(for: Person.self).count(in: people)
    /// ```
    @inlinable
    public func count<C: Sequence>(in objects: C, variables: [String: Value] = [:]) throws(EvaluationError) -> Int
    where C.Element == Root {
        var n = 0
        try forEachMatch(in: objects, variables: variables) { _ in n += 1 }
        return n
    }

    /// The elements of `objects` that match, in order.
    @inlinable
    public func filter<C: Sequence>(_ objects: C, variables: [String: Value] = [:]) throws(EvaluationError) -> [Root]
    where C.Element == Root {
        var out: [Root] = []
        try forEachMatch(in: objects, variables: variables) { out.append($0) }
        return out
    }

    /// Calls `body` with each matching element, in order; contiguous storage is read in place. The
    /// element is lent `inout` from a thread-private slot (see `lend(_:into:)`), and must not be
    /// written, so that a body that ignores it, like counting, costs no copy, which would retain
    /// what the element holds.
    /// Inlinable so that it is specialised for the element type where it is called: generic code
    /// would copy every element (retaining its references) to pass it on.
    @inlinable
    func forEachMatch<C: Sequence>(
        in objects: C, variables: [String: Value],
        _ body: (inout Root) -> Void
    ) throws(EvaluationError) where C.Element == Root {
        let program = self.program
        let done: Result<Void, EvaluationError>? = objects.withContiguousStorageIfAvailable { buffer in
            guard let base = buffer.baseAddress else { return .success(()) }
            do throws(EvaluationError) {
                try Self.forEachMatch(program, in: base, count: buffer.count, variables: variables, body)
                return .success(())
            } catch { return .failure(error) }
        }
        switch done {
        case .success?: return
        case .failure(let error)?: throw error
        case nil:
            var scope = Scope(variables: variables)
            for var object in objects where try program.run(&object, &scope) { body(&object) }
        }
    }

    /// Objects per run when a program is selected over contiguous storage: enough that the calls
    /// per run cost nothing per object, few enough that a run's objects stay in cache between steps.
    @usableFromInline static var runLength: Int { 256 }

    /// `forEachMatch` over `count` objects at `base`, a run of objects at a time (`Program.select`).
    @inlinable
    static func forEachMatch(
        _ program: Program<Root>, in base: UnsafePointer<Root>, count: Int,
        variables: [String: Value], _ body: (inout Root) -> Void
    ) throws(EvaluationError) {
        let indices = UnsafeMutablePointer<Int32>.allocate(capacity: 2 * runLength)
        defer { indices.deallocate() }
        // Where objects are lent to the compiled code and to `body` (see `lend(_:into:)`).
        try withLendingSlot(for: Root.self) { (slot) throws(EvaluationError) in
            var scope = Scope(variables: variables)
            var start = 0
            while start < count {
                let n = min(runLength, count - start)
                let run = base + start
                var selection = Selection(all: n, in: indices)
                do throws(EvaluationError) {
                    try program.select(run, &selection, &scope)
                } catch {
                    // Steps test the run one after the other, so the error raised may not be the one
                    // of the first failing object; testing object by object raises that one.
                    var scope = Scope(variables: variables)
                    for i in 0..<n {
                        lend(run + i, into: slot)
                        _ = try program.run(&slot.pointee, &scope)
                    }
                    throw error
                }
                selection.materialize()
                for k in 0..<selection.count {
                    lend(run + Int(indices[k]), into: slot)
                    body(&slot.pointee)
                }
                start += n
            }
        }
    }
}

/// Filtering any sequence with a predicate.
extension Sequence {
    /// The elements for which `predicate` is true, in order.
    ///
    /// ```swift
    /// let people: [[String: Any]] = [["name": "Ann", "age": 41], ["name": "Bo", "age": 7]]
    /// try people.filter(SiftPredicate("age >= 18"))   // [["name": "Ann", "age": 41]]
    /// ```
    public func filter(_ predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element]
    {
        let bound = variables.mapValues { Value(any: $0) }
        var out: [Element] = []
        for element in self where try predicate.evaluate(with: Value(any: element), variables: bound) {
            out.append(element)
        }
        return out
    }

    /// Same as `filter(_:variables:)`, under Foundation's name.
    public func filtered(using predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError)
        -> [Element]
    {
        try filter(predicate, variables: variables)
    }
}

/// Filtering sequences of ``KeyValueCoding`` elements through a predicate compiled for their type.
extension Sequence where Element: KeyValueReading {
    /// The elements for which `predicate` is true; elements answer keys directly.
    public func filter(_ predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError) -> [Element]
    {
        let compiled = predicate.compiled(for: Element.self)
        return try compiled.filter(self, variables: variables.mapValues { Value(any: $0) })
    }

    /// Same as `filter(_:variables:)`, under Foundation's name.
    public func filtered(using predicate: SiftPredicate, variables: [String: Any] = [:]) throws(EvaluationError)
        -> [Element]
    {
        try filter(predicate, variables: variables)
    }
}
