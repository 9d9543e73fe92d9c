// Typed key readers: how a `KeyValueCoding` type hands the compiler a reader for one key, resolved
// once when a predicate is compiled for that type, instead of answering `value(forKey:)` by name for
// every object. A reader that says what Swift type it returns (an integer, a string, an array of
// strings…) lets the compiler test that value directly, without building a `Value` and without a
// string switch per object; that is where most of the time of evaluating over structs went.

import Foundation

/// Reads one key of a `Root` value; returned by ``KeyValueCoding/reader(forKey:)``.
///
/// Pick the case that matches the property's type: the typed cases let compiled predicates test
/// the value without converting it; ``value(_:)`` takes any ``Value``.
///
/// ```swift
/// struct Person: KeyValueCoding {
///     var name: String, age: Int?, tags: [String]
///     static func reader(forKey key: String) -> KeyReader<Person>? {
///         switch key {
///         case "name": .string { $0.name }
///         case "age": .integer { $0.age }          // nil reads as nil
///         case "tags": .strings { $0.tags }
///         default: nil                              // an unknown key: an error when evaluated
///         }
///     }
/// }
/// let adults = try SiftPredicate("age >= 18").compiled(for: Person.self)
/// try adults.evaluate(with: Person(name: "Ann", age: 41, tags: []))   // true
/// ```
public struct KeyReader<Root>: Sendable {
    /// A test of a condition on the read value, or nil when the value is nil.
    @usableFromInline typealias Check<Condition> = @Sendable (inout Root, Condition) -> Bool?
    /// The same test over the selected elements of a run of objects: keeps in `selection` those
    /// whose answer (`ifNil` for a nil value) equals `keep`.
    @usableFromInline typealias Refine<Condition> =
        @Sendable (
            UnsafePointer<Root>, inout Selection, Condition, _ ifNil: Bool, _ keep: Bool
        ) -> Void

    /// How a typed reader tests a condition: on one object, and over a run of objects. Both are made
    /// in inlinable code, so they are compiled in the module that declares `Root`, where the reader
    /// closure is known and inlined: the property is tested in place, without copying (and
    /// retaining) it. `refine` also switches on the condition once per run rather than per object,
    /// so each of its loops is a field load and a machine comparison.
    @usableFromInline
    struct Checks<Condition>: Sendable {
        @usableFromInline let check: Check<Condition>
        @usableFromInline let refine: Refine<Condition>

        @inlinable
        init(check: @escaping Check<Condition>, refine: @escaping Refine<Condition>) {
            self.check = check
            self.refine = refine
        }
    }

    @usableFromInline
    enum Storage: Sendable {
        case value(@Sendable (Root) throws -> Value)
        case bool(@Sendable (Root) -> Bool?, Checks<BoolCondition>)
        case integer(@Sendable (Root) -> Int64?, Checks<IntegerCondition>)
        case double(@Sendable (Root) -> Double?, Checks<DoubleCondition>)
        case string(@Sendable (Root) -> String?, Checks<StringCondition>)
        case date(@Sendable (Root) -> Date?)
        case strings(@Sendable (Root) -> [String]?, Checks<QuantifiedStringCondition>)
        /// A value of unknown type, as dictionaries hold them (`[String: Any]`).
        case any(@Sendable (Root) -> Any?)
    }

    @usableFromInline
    let storage: Storage

    @usableFromInline
    init(_ storage: Storage) { self.storage = storage }

    /// A key whose value is any ``Value`` (nested objects, mixed arrays, decimals, data…).
    /// Throwing ``KeyValueCodingError`` reports the key as unknown.
    @inlinable
    public static func value(_ read: @escaping @Sendable (Root) throws -> Value) -> KeyReader {
        KeyReader(.value(read))
    }

    /// A Boolean key (nil reads as nil). Booleans compare with numbers as 0 and 1, as NSNumber does.
    @inlinable
    public static func bool(_ read: @escaping @Sendable (Root) -> Bool?) -> KeyReader {
        KeyReader(
            .bool(
                read,
                Checks(
                    check: { root, c in read(root).map { $0 ? c.ifTrue : c.ifFalse } },
                    refine: { base, selection, c, ifNil, keep in
                        let (t, f) = (c.ifTrue, c.ifFalse)
                        selection.refine(base, keep: keep) {
                            let b = read($0)
                            return b == nil ? ifNil : (b == true ? t : f)
                        }
                    })))
    }

    /// An integer key (nil reads as nil).
    @inlinable
    public static func integer(_ read: @escaping @Sendable (Root) -> Int64?) -> KeyReader {
        KeyReader(
            .integer(
                read,
                Checks(
                    check: { root, c in read(root).map { c.test($0) } },
                    refine: { base, selection, c, ifNil, keep in
                        // One loop per kind of condition, each with its constants known inside the loop.
                        @inline(__always) func run(_ c: IntegerCondition) {
                            // The condition is also tested on a stand-in for nil, so that choosing the
                            // answer is a select rather than a branch that mispredicts on data.
                            selection.refine(base, keep: keep) {
                                let x = read($0)
                                return x == nil ? ifNil : c.test(x ?? 0)
                            }
                        }
                        switch c {
                        case .equal(let k): run(.equal(k))
                        case .notEqual(let k): run(.notEqual(k))
                        case .less(let k): run(.less(k))
                        case .lessOrEqual(let k): run(.lessOrEqual(k))
                        case .greater(let k): run(.greater(k))
                        case .greaterOrEqual(let k): run(.greaterOrEqual(k))
                        case .between(let lo, let hi): run(.between(lo, hi))
                        case .member: run(c)
                        }
                    })))
    }

    /// An `Int` key (nil reads as nil).
    @inlinable
    public static func integer(_ read: @escaping @Sendable (Root) -> Int?) -> KeyReader {
        integer { (root: Root) -> Int64? in read(root).map { Int64($0) } }
    }

    /// A floating-point key (nil reads as nil).
    @inlinable
    public static func double(_ read: @escaping @Sendable (Root) -> Double?) -> KeyReader {
        KeyReader(
            .double(
                read,
                Checks(
                    check: { root, c in read(root).map { c.test($0) } },
                    refine: { base, selection, c, ifNil, keep in
                        @inline(__always) func run(_ c: DoubleCondition) {
                            selection.refine(base, keep: keep) {
                                let x = read($0)
                                return x == nil ? ifNil : c.test(x ?? 0)
                            }
                        }
                        switch c {
                        case .less(let k): run(.less(k))
                        case .lessOrEqual(let k): run(.lessOrEqual(k))
                        case .greater(let k): run(.greater(k))
                        case .greaterOrEqual(let k): run(.greaterOrEqual(k))
                        case .between(let lo, let hi): run(.between(lo, hi))
                        }
                    })))
    }

    /// A string key (nil reads as nil).
    @inlinable
    public static func string(_ read: @escaping @Sendable (Root) -> String?) -> KeyReader {
        KeyReader(
            .string(
                read,
                Checks(
                    check: { root, c in read(root).map { c.test($0) } },
                    refine: { base, selection, c, ifNil, keep in
                        @inline(__always) func run(_ c: StringCondition) {
                            selection.refine(base, keep: keep) { read($0).map { c.test($0) } ?? ifNil }
                        }
                        switch c {
                        case .equal(let k): run(.equal(k))
                        case .notEqual(let k): run(.notEqual(k))
                        case .member: run(c)
                        }
                    })))
    }

    /// A date key (nil reads as nil).
    @inlinable
    public static func date(_ read: @escaping @Sendable (Root) -> Date?) -> KeyReader { KeyReader(.date(read)) }

    /// An array-of-strings key (nil reads as nil); `ANY tags == "x"` tests the strings directly.
    @inlinable
    public static func strings(_ read: @escaping @Sendable (Root) -> [String]?) -> KeyReader {
        KeyReader(
            .strings(
                read,
                Checks(
                    check: { root, c in read(root).map { c.test($0) } },
                    refine: { base, selection, c, ifNil, keep in
                        @inline(__always) func run(_ c: QuantifiedStringCondition) {
                            selection.refine(base, keep: keep) { read($0).map { c.test($0) } ?? ifNil }
                        }
                        switch (c.element, c.all) {
                        case (.equal(let k), false): run(QuantifiedStringCondition(.equal(k), all: false))
                        case (.equal(let k), true): run(QuantifiedStringCondition(.equal(k), all: true))
                        case (.notEqual(let k), false): run(QuantifiedStringCondition(.notEqual(k), all: false))
                        case (.notEqual(let k), true): run(QuantifiedStringCondition(.notEqual(k), all: true))
                        case (.member, _): run(c)
                        }
                    })))
    }

    /// The value for `root`, as ``KeyValueCoding/value(forKey:)`` answers it.
    public func value(of root: Root) throws -> Value { try valueReader(root) }

    /// Reads the key as a ``Value``, decided once per reader rather than per object.
    var valueReader: @Sendable (Root) throws -> Value {
        switch storage {
        case .value(let read): read
        case .bool(let read, _): { read($0).map { .bool($0) } ?? .null }
        case .integer(let read, _): { read($0).map { .integer($0) } ?? .null }
        case .double(let read, _): { read($0).map { .double($0) } ?? .null }
        case .string(let read, _): { read($0).map { .string($0) } ?? .null }
        case .date(let read): { read($0).map { .date($0) } ?? .null }
        case .strings(let read, _): { read($0).map { .array($0.map { .string($0) }) } ?? .null }
        case .any(let read): { Value(any: read($0)) }
        }
    }
}

// MARK: - Conditions a typed leaf tests

/// `x op constant` on an integer, for integer constants.
@usableFromInline
enum IntegerCondition: Sendable {
    case equal(Int64)
    case notEqual(Int64)
    case less(Int64)
    case lessOrEqual(Int64)
    case greater(Int64)
    case greaterOrEqual(Int64)
    case between(Int64, Int64)
    case member(Set<Int64>)

    @inlinable @inline(__always)
    func test(_ x: Int64) -> Bool {
        switch self {
        case .equal(let k): x == k
        case .notEqual(let k): x != k
        case .less(let k): x < k
        case .lessOrEqual(let k): x <= k
        case .greater(let k): x > k
        case .greaterOrEqual(let k): x >= k
        // One unsigned comparison, no branch: `lo <= hi` always (bounds are sorted when built),
        // and `x - lo` wraps to a large unsigned value exactly when `x < lo`.
        case .between(let lo, let hi): UInt64(bitPattern: x &- lo) <= UInt64(bitPattern: hi &- lo)
        case .member(let set): set.contains(x)
        }
    }
}

/// `x op constant` on a double, for constants that are exact, non-NaN doubles.
@usableFromInline
enum DoubleCondition: Sendable {
    case less(Double)
    case lessOrEqual(Double)
    case greater(Double)
    case greaterOrEqual(Double)
    case between(Double, Double)

    @inlinable @inline(__always)
    func test(_ x: Double) -> Bool {
        switch self {
        case .less(let k): x < k || x.isNaN
        case .lessOrEqual(let k): x <= k || x.isNaN
        case .greater(let k): x > k
        case .greaterOrEqual(let k): x >= k
        case .between(let lo, let hi): lo <= x && x <= hi
        }
    }
}

/// `b == constant` / `b != constant` on a Boolean: the answers for true and for false.
@usableFromInline
struct BoolCondition: Sendable {
    @usableFromInline let ifTrue: Bool
    @usableFromInline let ifFalse: Bool
}

/// `s == k`, `s != k` or `s IN {…}` on a string, without options.
@usableFromInline
enum StringCondition: Sendable {
    case equal(String)
    case notEqual(String)
    case member(Set<String>)

    @inlinable @inline(__always)
    func test(_ s: String) -> Bool {
        switch self {
        case .equal(let k): s == k
        case .notEqual(let k): s != k
        case .member(let set): set.contains(s)
        }
    }
}

/// `ANY s op k` (or `ALL`, when `all`) over an array of strings, for a `StringCondition`.
@usableFromInline
struct QuantifiedStringCondition: Sendable {
    @usableFromInline let element: StringCondition
    @usableFromInline let all: Bool

    @inlinable
    init(_ element: StringCondition, all: Bool) {
        self.element = element
        self.all = all
    }

    @inlinable @inline(__always)
    func test(_ strings: [String]) -> Bool {
        quantify(strings, all: all) { element.test($0) }
    }
}
